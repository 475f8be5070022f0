"""The analogy slot: at most one memory with the turn's structure in other clothes.

For each turn (:meth:`AnalogySlot.prepare`, then :meth:`AnalogySlot.pick`):

1. Candidates: the memories whose exact alignment with the turn (the IDF-weighted terms they
   share) can clear the gate, found on the term index (:mod:`fastmem.term_index`), heaviest
   first; the store's mean and std for the turn are exact from the running sums.
2. In alignment order, drop those that fail the surface condition (``surface_rule``,
   ``surface_names``, ``surface_max``), the scope or the session's repeat window; align the
   first ``rerank`` survivors exactly with the turn (the IDF-weighted terms they share).
3. The gate: a survivor qualifies when its exact alignment, on the store's score scale
   (:meth:`~fastmem.structure.StructureEncoder.expected_score`), stands ``z_min`` standard
   deviations above the store's mean. The analogy is the qualifier with the largest
   alignment x use weight; ``Analogy.score`` is that product, ``Analogy.why`` explains it.

:meth:`AnalogySlot.explore` is ``Memory.analogies``: the structurally closest memories
without the surface condition or the session rules.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import apsw
import numpy as np

from .errors import InvalidInput
from .extract import parse_turn
from .bounded import Bounded
from .mapping import Mapper
from .ranker import features
from .results import Analogy
from .structure import StructQuery
from .structure_index import StructureIndex
from .vectors import ids_json

__all__ = ["AnalogySlot", "Turn", "SURFACE_RULES"]

#: Sessions whose repeat window a process keeps.
SESSIONS = 10_000
#: Values of ``Memory(surface_rule=...)``.
SURFACE_RULES = ("neighbours", "recall")


def _mentions(names: Sequence[str]):
    """A pattern that finds any of ``names`` as a whole word (as written), or None."""
    names = sorted({n for n in names if n}, key=len, reverse=True)
    if not names:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, names)) + r")(?!\w)")


@dataclass
class Turn:
    """A turn prepared for the slot: its structural query, the names and events it has."""

    query: StructQuery | None
    names: tuple[str, ...]
    events: tuple = ()
    parse_ms: float = 0.0
    prep_ms: float = 0.0


class AnalogySlot:
    """The slot's settings and state (the repeat window per session); see the module
    docstring for the algorithm and :class:`fastmem.Memory` for each setting."""

    #: At most this many candidates (heaviest alignment first) are considered per turn.
    CANDIDATES = 256

    def __init__(self, db: apsw.Connection, structures: StructureIndex, *, z_min: float = 2.0,
                 surface_exclude: int = 10, surface_fraction: float = 0.05, surface_max: float | None = None,
                 surface_floor: float = 0.5, surface_rule: str = "neighbours", surface_names: bool = True,
                 repeat_window: int = 20, rerank: int = 16, min_store: int = 8, mapping: bool = True,
                 min_units: int = 3, verb_vectors=None, ranker=None) -> None:
        if surface_rule not in SURFACE_RULES:
            raise InvalidInput(f"surface_rule must be one of {SURFACE_RULES}, not {surface_rule!r}")
        if isinstance(rerank, bool) or not isinstance(rerank, int) or rerank < 1:
            raise InvalidInput(f"analogy_rerank must be an int >= 1, got {rerank!r}")
        self.db = db
        self.structures = structures
        self.z_min = z_min
        self.surface_exclude = surface_exclude
        self.surface_fraction = surface_fraction
        self.surface_max = surface_max
        self.surface_floor = surface_floor
        self.surface_rule = surface_rule
        self.surface_names = bool(surface_names)
        self.repeat_window = repeat_window
        self.rerank = rerank
        self.min_store = min_store
        self.mapping = bool(mapping)
        self.min_units = min_units
        self.mapper = Mapper(lambda w: self.structures.idf(w), verb_vectors)
        #: the learned ranker (:mod:`fastmem.ranker`); None: the largest alignment x use, no threshold
        self.ranker = ranker
        #: when a list, each pick appends ``(memory id, features, alignment)`` of every candidate
        #: that passes the gate (what ``fastmem eval proparalogy --fit`` learns from)
        self.trace: list | None = None
        #: the last analogies of each session (at most SESSIONS sessions; an evicted one starts afresh)
        self._recent: dict[str, deque] = Bounded(SESSIONS)

    def can_fire(self) -> bool:
        """Whether any turn could get an analogy now: the store holds at least ``min_store``
        memories with a structural code (a scope's population is part of the store's, so none
        can have more). When it does not, a recall skips the turn's parse (spaCy's load is
        about a second of a new process)."""
        return self.structures.n >= self.min_store

    # -- step 1: the turn and its candidates -----------------------------------------------
    def prepare(self, text: str, extractor, z_min: float, parsed=None, members=None) -> Turn:
        """The turn's structural query (parsed here unless ``parsed`` gives its events and
        names), weighted by the word counts of the store or of the scope's ``members``."""
        t0 = time.perf_counter()
        events, names = parsed if parsed is not None else parse_turn(extractor, text)
        t1 = time.perf_counter()
        sq = self.structures.query(events, members)
        parse_ms = (t1 - t0) * 1e3 if parsed is None else 0.0
        return Turn(sq, tuple(names), tuple(events), parse_ms, (time.perf_counter() - t1) * 1e3)

    def candidates(self, sq: StructQuery, z_min: float, members=None):
        """``(mean, std, ids, alignments)``: the exact statistics for the query over the store
        (over the scope's ``members`` when given: see :meth:`StructureIndex.z_stats`), and the
        memories (of the scope) whose exact alignment can clear the gate, heaviest first (the
        term index: the cost follows the turn's terms' postings, not the store's size)."""
        st = self.structures
        mean, std, n = st.z_stats(sq, members)
        if n < self.min_store or std <= 1e-9:
            return mean, std, np.zeros(0, np.int64), np.zeros(0)
        ids, align = st.candidates(sq, mean + z_min * std, self.CANDIDATES, members)
        return mean, std, ids, align

    # -- steps 2 and 3: surface condition, alignment, gate ---------------------------------
    def pick(self, turn: Turn, vec: np.ndarray, *, scope: str | None, session: str | None, z_min: float,
             surface_labels: np.ndarray, recall_ids: Sequence[int], n_live: int, weights,
             members=None) -> Analogy | None:
        """The analogy for a prepared turn, or None.

        ``members``: the ids of ``scope`` when the store holds other scopes (candidates and
        statistics come from the scope alone); None when every memory is in it.
        ``surface_labels``: the turn's nearest memories by embedding (the vector channel's
        labels); ``recall_ids``: ordinary recall's ranking; ``n_live``: memories in the store;
        ``weights``: the usage ledger's ``{id: (weight, engaged, ignored)}``.
        """
        sq = turn.query
        if sq is None:
            return None
        mean, std, cids, aligns = self.candidates(sq, z_min, members)
        if len(cids) == 0:
            return None
        n_surface = min(self.surface_exclude, math.ceil(self.surface_fraction * max(n_live, 1)))
        too_close = {int(x): r + 1 for r, x in enumerate(surface_labels)}
        in_recall = {int(x): r + 1 for r, x in enumerate(recall_ids)}
        by_recall = self.surface_rule == "recall"
        same_names = _mentions(turn.names) if self.surface_names else None
        recent = self._recent.get(session, ()) if session else ()
        info: dict[int, tuple] = {}
        fetched = 0

        def fetch_more() -> None:  # candidate rows in code-score order, a few at a time
            nonlocal fetched
            part = [int(m) for m in cids[fetched : fetched + 16]]  # cids are highest first
            fetched += len(part)
            for r in self.db.execute(
                "SELECT m.id, m.text, m.scope, e.vec, ev.events, c.code, c.nterms FROM memories m "
                "JOIN embeddings e ON e.memory_id=m.id JOIN events ev ON ev.memory_id=m.id "
                "JOIN codes c ON c.memory_id=m.id WHERE m.id IN (SELECT value FROM json_each(?))",
                (ids_json(part),),
            ):
                info[r[0]] = r[1:]

        encoder = self.structures.encoder
        best = None
        seen = 0
        self_turn = None  # the turn's self-mapping score, once a candidate needs it
        learned = self.ranker is not None and self.mapping
        for pos in range(len(cids)):
            if pos >= fetched:
                fetch_more()
            mid = int(cids[pos])
            if mid not in info or mid in recent:
                continue
            text, mscope, v, ev, code, nterms = info[mid]
            if scope is not None and mscope != scope:
                continue
            surface = float(np.dot(np.frombuffer(v, np.float32), vec))
            srank = too_close.get(mid)
            if srank is not None and srank <= n_surface and surface >= self.surface_floor:
                continue  # among the turn's nearest surface neighbours: same topic, not an analogy
            rrank = in_recall.get(mid)
            if by_recall and rrank is not None and rrank <= n_surface:
                continue  # ordinary recall already ranks it first for this turn
            if self.surface_max is not None and surface > self.surface_max:
                continue
            if same_names is not None and same_names.search(text):
                continue  # mentions what the turn is about by name: the same story, not an analogy
            mev = json.loads(ev)
            align, matched, n_terms = encoder.alignment(sq, mev)
            seen += 1
            z = (encoder.expected_score(sq, align, n_terms) - mean) / std
            use = weights.get(mid, (1.0, 0, 0))[0]
            if matched and z >= z_min and (learned or self.trace is not None or best is None or align * use >= best[0]):
                # a lone shared verb is not a structure: the mapping must cover min_units
                mp = self.mapper.map(turn.events, mev) if self.mapping else None
                if mp is None or mp.units >= self.min_units:
                    structural = self.structures.code_scores(sq, [(mid, code, nterms)])[mid]
                    why = {"z": z, "structural": structural, "store_mean": mean, "store_std": std,
                           "alignment": align, "surface": surface, "surface_rank": srank, "recall_rank": rrank,
                           "matched": matched, "use": use}
                    key = align * use
                    if mp is not None:
                        why |= {"mapping": list(mp.labels), "units": mp.units}
                        if learned or self.trace is not None:
                            if self_turn is None:
                                self_turn = self.mapper.map(turn.events, turn.events).score
                            f = self._describe(turn.events, mev, mp, self_turn, z=z, code_z=(structural - mean) / std)
                            if self.trace is not None:
                                self.trace.append((mid, f, align))
                            if learned:
                                p = self.ranker.prob(f)
                                why["p"] = p
                                key = p * use if p >= self.ranker.threshold else None
                    if key is None:
                        pass
                    elif best is None or key > best[0]:
                        best = [key, mid, text, mscope, why, mp, mev, None]
                    elif key == best[0] and mp is not None and best[5] is not None:
                        if best[7] is None:  # the fit of the best so far, once per pick
                            best[7] = self.mapping_fit(best[5], best[6])
                        fit = self.mapping_fit(mp, mev)
                        if fit > best[7]:
                            best = [key, mid, text, mscope, why, mp, mev, fit]
            if seen >= self.rerank:
                break
        if best is None:
            return None
        score, mid, text, mscope, why = best[:5]
        if session:
            self._recent.setdefault(session, deque(maxlen=self.repeat_window)).append(mid)
        return Analogy(mid, text, score, why, mscope)

    def mapping_fit(self, mp, mev) -> float:
        """How much of a candidate's own structure the turn's mapping ``mp`` onto its events
        ``mev`` covers (its score over the candidate's self-mapping, the turn's share being the
        same for every candidate). Breaks exact ties of the slot's score: between two candidates
        the turn's terms align with equally, the one whose events correspond in order wins,
        not the one written first."""
        own = self.mapper.map(mev, mev).score
        return mp.score / math.sqrt(own) if own > 0 else 0.0

    def _describe(self, events, mev, mp, self_turn: float, *, z: float, code_z: float) -> np.ndarray:
        """:func:`fastmem.ranker.features` of a turn's events and a candidate's, given their mapping."""
        self_cand = self.mapper.map(mev, mev).score
        norm = mp.score / math.sqrt(self_turn * self_cand) if self_turn * self_cand > 0 else 0.0
        return features(z=z, code_z=code_z, mapping=norm, n_turn=len(events), n_cand=len(mev), pairs=mp.pairs,
                        labels=mp.labels)

    def features_of(self, text: str, ids: Sequence[int], extractor) -> list[np.ndarray | None]:
        """The ranker's features of each memory against ``text``, without the gate or the
        surface condition; None for a memory nothing maps onto."""
        events = parse_turn(extractor, text)[0]
        sq = self.structures.query(events)
        if sq is None:
            return [None] * len(ids)
        mean, std, _ = self.structures.z_stats(sq)
        std = max(std, 1e-9)
        self_turn = self.mapper.map(events, events).score
        enc = self.structures.encoder
        out = []
        for mid in ids:
            row = self.db.execute("SELECT ev.events, c.code, c.nterms FROM events ev JOIN codes c ON "
                                  "c.memory_id=ev.memory_id WHERE ev.memory_id=?", (int(mid),)).fetchone()
            if row is None:
                out.append(None)
                continue
            ev, code, nterms = row
            mev = json.loads(ev)
            mp = self.mapper.map(events, mev)
            if not mp.pairs:
                out.append(None)
                continue
            align, _, n_terms = enc.alignment(sq, mev)
            structural = self.structures.code_scores(sq, [(int(mid), code, nterms)])[int(mid)]
            out.append(self._describe(events, mev, mp, self_turn, z=(enc.expected_score(sq, align, n_terms) - mean) / std,
                                      code_z=(structural - mean) / std))
        return out

    def exact_scores(self, text: str, ids: Sequence[int], extractor) -> list[float]:
        """The slot's exact structural score of each memory against ``text`` (on the store's
        score scale; 0 for a memory without events or a text without events)."""
        sq = self.structures.query(parse_turn(extractor, text)[0])
        if sq is None:
            return [0.0] * len(ids)
        enc = self.structures.encoder
        out = []
        for mid in ids:
            ev = self.structures.events(int(mid))
            if not ev:
                out.append(0.0)
                continue
            align, _, n_terms = enc.alignment(sq, ev)
            out.append(enc.expected_score(sq, align, n_terms))
        return out

    # -- exploration -----------------------------------------------------------------------
    def explore(self, text: str, embed_query, extractor, *, k: int, scope: str | None,
                z_min: float, members=None) -> list[Analogy]:
        """The ``k`` memories structurally closest to ``text`` by the slot's exact z (see
        ``Memory.analogies``); ``embed_query(text)`` gives ``why["surface"]``; ``members`` as
        in :meth:`pick`."""
        sq = self.structures.query(parse_turn(extractor, text)[0], members)
        st = self.structures
        if sq is None or st.n == 0:
            return []
        encoder = st.encoder
        mean, std, _ = st.z_stats(sq, members)
        # the memories (of the scope) sharing a term, heaviest first
        ids, _ = st.candidates(sq, -math.inf, k * 4 + 16, members)
        rows = self.db.execute("SELECT memory_id, code, nterms FROM codes WHERE memory_id IN (SELECT value FROM "
                               "json_each(?))", (ids_json(ids),)).fetchall()
        code_score = st.code_scores(sq, rows)
        vec = embed_query(text)
        out = []
        for mid, mtext, mscope, v, ev in self.db.execute(
            "SELECT m.id, m.text, m.scope, e.vec, ev.events FROM memories m JOIN embeddings e ON e.memory_id=m.id "
            "JOIN events ev ON ev.memory_id=m.id WHERE m.id IN (SELECT value FROM json_each(?))",
            (ids_json(list(code_score)),),
        ):
            if scope is not None and mscope != scope:
                continue
            align, matched, n_terms = encoder.alignment(sq, json.loads(ev))
            z = (encoder.expected_score(sq, align, n_terms) - mean) / std if std > 1e-9 else 0.0
            if z < z_min:
                continue
            code_z = (code_score[mid] - mean) / std if std > 1e-9 else 0.0
            why = {"z": z, "code_z": code_z, "structural": code_score[mid], "store_mean": mean, "store_std": std,
                   "alignment": align, "surface": float(np.dot(np.frombuffer(v, np.float32), vec)),
                   "matched": matched}
            out.append(Analogy(mid, mtext, z, why, mscope))
        out.sort(key=lambda a: (-a.score, a.id))
        return out[:k]
