"""Evaluation hooks on the analogy slot (``fastmem eval proparalogy``, the ranker's fit, tests):
the slot's features and scores for chosen memories, without its gate or surface condition, and
a trace of every candidate its gate passes during ordinary recalls (:func:`tracing`)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from ..analogy.slot import AnalogySlot
from ..reader.extract import parse_turn

__all__ = ["features_of", "exact_scores", "tracing", "TracingSlot"]


class TracingSlot(AnalogySlot):
    """An analogy slot that records, for each pick, ``(memory id, features, surprise)`` of
    every candidate its gate passes, in :attr:`traced` (what ``fastmem eval proparalogy
    --fit`` learns from). It chooses exactly as :class:`AnalogySlot` does."""

    traced: list

    def choose(self, turn, scored, n, weights, stats):
        scored = list(scored)
        for c, mp, _ in self.gated(scored, n, turn):
            self.traced.append((c.id, self.candidate_features(turn, c, mp, stats), mp.surprise))
        return super().choose(turn, scored, n, weights, stats)


@contextmanager
def tracing(slot: AnalogySlot) -> Iterator[list]:
    """Within the block, ``slot`` (a memory's ``m.admin.engine.slot``) records every gated candidate of
    its picks into the yielded list (see :class:`TracingSlot`); afterwards it is the plain
    slot again."""
    cls = slot.__class__
    slot.__class__ = TracingSlot
    slot.traced = []
    try:
        yield slot.traced
    finally:
        slot.__class__ = cls
        del slot.traced


def features_of(slot: AnalogySlot, text: str, ids: Sequence[int], extractor) -> list[np.ndarray | None]:
    """The ranker's features of each memory against ``text``, without the gate or the
    surface condition; None for a memory nothing maps onto."""
    events = parse_turn(extractor, text)[0]
    sq = slot.structure.query(events)
    if sq is None:
        return [None] * len(ids)
    mean, std, _ = slot.structure.z_stats(sq)
    std = max(std, 1e-9)
    enc = slot.structure.encoder
    out = []
    for mid in ids:
        row = slot.db.execute("SELECT ev.events, c.code, c.nterms FROM events ev JOIN codes c ON "
                              "c.memory_id=ev.memory_id WHERE ev.memory_id=?", (int(mid),)).fetchone()
        if row is None:
            out.append(None)
            continue
        ev, code, nterms = row
        mev = json.loads(ev)
        mp = slot.mapper.map(events, mev)
        if not mp.pairs:
            out.append(None)
            continue
        align, _, n_terms = enc.alignment(sq, mev)
        structural = slot.structure.code_scores(sq, [(int(mid), code, nterms)])[int(mid)]
        out.append(slot.describe(events, mev, mp, z=(enc.expected_score(sq, align, n_terms) - mean) / std,
                                  code_z=(structural - mean) / std))
    return out


def exact_scores(slot: AnalogySlot, text: str, ids: Sequence[int], extractor) -> list[float]:
    """The slot's structural score of each memory against ``text``, what it chooses by among
    mappings that pass its gate: the surprise of the structure mapping plus the plot view's
    evidence (:meth:`~fastmem.analogy.slot.AnalogySlot.plot_evidence`), in bits (0 for a memory
    without events or a text without events)."""
    turn = slot.prepare(text, extractor, 0.0)
    if not turn.events:
        return [0.0] * len(ids)
    plot = slot.plot_evidence(turn, ids)
    out = []
    for mid in ids:
        ev = slot.structure.events(int(mid))
        out.append(slot.mapper.map(list(turn.events), ev).surprise + plot.get(int(mid), 0.0) if ev else 0.0)
    return out
