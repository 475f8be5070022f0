"""The models' half of a write: each text's embedding, facts, events, standing statement and
window vectors, computed without touching the store (no lock held). :func:`prepare` is what
``Memory.remember_many`` runs before its transaction and what a Ray worker runs elsewhere
(:mod:`fastmem.distributed`); its result, a :class:`Prepared`, is written by
:mod:`fastmem.write.commit` (``Memory.host.commit_prepared``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..analogy.code_store import StoredCode, stored_code
from ..analogy.codes import StructureEncoder
from ..models.embedder import Embedder, checked, encode_with_windows
from ..reader import standing as S
from ..reader.standing_model import refine
from ..analogy.plots import plot_vectors
from ..reader.extract import Extractor, Triple, events_from_triples
from ..util.progress import bar
from . import guard, workers
from .checks import check_batch, check_kinds, check_speaker, check_speakers, encode_meta, kinds_for

__all__ = ["Prepared", "prepare", "prepare_items", "CodeEncoder", "OVERLAP_MIN", "check_batch", "check_kinds", "check_speaker", "check_speakers",
           "encode_meta", "kinds_for"]


@dataclass
class Prepared:
    """What a batch of texts becomes before it is written."""

    texts: list[str]
    vecs: np.ndarray  # (n, dim) float32, L2-normalised
    facts: list[list[Triple]]
    events: list[list]
    #: per text, its standing statement and the statement's own vector (None: the text's),
    #: or None (see :mod:`fastmem.reader.standing`); None for the whole batch: none detected
    standing: list | None = None
    #: per text, its window vectors when it is longer than one window (:mod:`fastmem.derived.windows`),
    #: else None; None for the whole batch: none
    windows: list | None = None
    #: per text, its structural code as stored (:class:`fastmem.analogy.code_store.StoredCode`,
    #: an import's: nothing to encode), or None to encode it from its events; None: all encoded
    codes: list | None = None
    #: the parts that could not be derived, by position (:class:`fastmem.write.guard.Failures`;
    #: the commit adds its own and records them with the memories)
    failures: guard.Failures = field(default_factory=guard.Failures)
    #: per text, its plot's clause vectors (``(n, dim)`` float32, :mod:`fastmem.analogy.plots`) or
    #: None (no plot); None for the whole batch: none
    plots: list | None = None

    def subset(self, keep: Sequence[int]) -> "Prepared":
        """The texts at positions ``keep``, with everything derived from them."""
        return Prepared([self.texts[j] for j in keep], self.vecs[list(keep)], [self.facts[j] for j in keep],
                        [self.events[j] for j in keep],
                        None if self.standing is None else [self.standing[j] for j in keep],
                        None if self.windows is None else [self.windows[j] for j in keep],
                        None if self.codes is None else [self.codes[j] for j in keep],
                        self.failures.shifted(keep), None if self.plots is None else [self.plots[j] for j in keep])


#: From this many texts on, the parse runs on the parse thread while the model embeds (below
#: it one after the other is faster; figures in ``docs/defaults.md``).
OVERLAP_MIN = 16


def prepare(texts: Sequence[str], given: list, embedder: Embedder, extractor: Extractor | None,
            progress: bool | None, kinds: Sequence[str | None] | None = None) -> Prepared:
    """Embed and parse ``texts`` (parts of 512 when a progress bar is shown, else one), with
    each text's standing statement (``kinds``: a host's ``kind=`` per text, None to detect);
    see :data:`OVERLAP_MIN`."""
    b = bar(len(texts), "remembering", progress)
    step = 512 if b else max(len(texts), 1)
    vecs = np.empty((len(texts), embedder.dim), np.float32)
    facts: list[list[Triple]] = []
    events: list[list] = []
    found: list = []
    wins: list = []
    plots: list = []
    failures = guard.Failures()
    for start in range(0, len(texts), step):
        part = list(texts[start : start + step])
        need = [j for j in range(len(part)) if given[start + j] is None]
        todo = [part[j] for j in need] if (need and extractor) else []
        parsing = workers.submit(guard.analyse, extractor, todo) if len(todo) >= OVERLAP_MIN else None
        part_vecs, part_wins = encode_with_windows(embedder, part)
        vecs[start : start + len(part)] = part_vecs
        wins.extend(part_wins)
        got, failed = (parsing.result() if parsing is not None else guard.analyse(extractor, todo) if todo
                       else ([], guard.Failures()))
        failures.update({start + need[k]: v for k, v in failed.items()})
        ex = dict(zip(need, got))
        for j in range(len(part)):
            g = given[start + j]
            fs, ev, st, pl = (g, events_from_triples(g), None, None) if g is not None else ex.get(j, ([], [], None, None))
            facts.append(fs)
            events.append(ev)
            found.append(st)
            plots.append(pl)
        if b:
            b.update(len(part))
    if b:
        b.close()
    if extractor is not None:  # what the rules missed, the classifier may name (never the assistant's)
        found = refine(list(texts), vecs, found, skip={i for i, k in enumerate(kinds or ()) if k is not None})
    return Prepared(list(texts), vecs, facts, events, _statements(texts, vecs, found, kinds, embedder),
                    wins if any(w is not None for w in wins) else None, failures=failures,
                    plots=plot_vectors(embedder, plots))


def _statements(texts, vecs, found: list, kinds, embedder: Embedder) -> list | None:
    """``(statement, its sentence's vector or None)`` per text (None: none), a host's kind
    first; the sentences that are not their whole text embedded in one batch."""
    sts = [None if kinds is not None and kinds[i] == S.SKIP else
           S.explicit(kinds[i], texts[i], f) if kinds is not None and kinds[i] is not None else f
           for i, f in enumerate(found)]
    if not any(st is not None for st in sts):
        return None if kinds is None else [(S.PLAIN, None) if k == "plain" else None for k in kinds]
    own = [i for i, st in enumerate(sts) if st is not None and st.sentence != texts[i].strip()]
    sv = dict(zip(own, checked(embedder.encode([sts[i].sentence for i in own]), len(own), embedder.dim))) if own else {}
    out = [None if st is None else (st, sv.get(i)) for i, st in enumerate(sts)]
    if kinds is not None:
        out = [(S.PLAIN, None) if k == "plain" else o for k, o in zip(kinds, out)]
    return out


class CodeEncoder:
    """Structural codes of prepared events, computed where the models run (a Ray worker), so
    the commit encodes nothing: ``hrr_dim`` must be the store's (a code of another dimension
    is encoded again at the commit)."""

    def __init__(self, hrr_dim: int, embedder: Embedder) -> None:
        self.encoder = StructureEncoder(int(hrr_dim), embed=embedder.encode)

    def codes(self, events: Sequence[list]) -> list[StoredCode | None]:
        return [stored_code(self.encoder, ev) for ev in events]


def prepare_items(items: Sequence[dict], embedder: Embedder, extractor: Extractor | None,
                  encoder: CodeEncoder | None = None) -> tuple[Prepared, list[float | None]]:
    """:func:`prepare` for validated items (:func:`fastmem.write.items.checked_items`): their
    texts, triples, times and speakers as ``remember_many`` takes them; with ``encoder``, the
    structural codes too. Returns the prepared batch and each item's time (unix seconds or
    None)."""
    texts = [it["text"] for it in items]
    triples = [it.get("triples") for it in items] if any(it.get("triples") is not None for it in items) else None
    given, _, when = check_batch(texts, scope="", meta=None, triples=triples, extractor=extractor,
                                 at=[it.get("at") for it in items])
    speakers = check_speakers([it.get("speaker") for it in items], len(items))
    prep = prepare(texts, given, embedder, extractor, False, kinds_for(None, speakers))
    if encoder is not None:
        prep.codes = encoder.codes(prep.events)
    return prep, when
