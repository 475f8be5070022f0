"""Structural codes: what a memory's narrative looks like with the names taken out.

A memory is a sequence of *events* (:data:`fastmem.reader.extract.Event`): each main verb in text
order with its subject and object fillers (common-noun lemmas, or ``@type`` for names). Its
code is one FHRR phase vector bundling these *terms*:

* ``ROLE_R * verb``                       - which relations occur;
* ``ROLE_R * verb * ROLE_S * filler``     - what kind of thing does it (subject role);
* ``ROLE_R * verb * ROLE_O * filler``     - to what kind of thing (object role);
* ``NEXT * verb_i * P(verb_j)``           - narrative order: verb i comes before verb j
  (P is a fixed permutation, so order matters), for every later verb within ``order_window``.

Entity identity never enters (names become types), so "Acme owns Widget" and "Bob owns a car"
share ``own`` without sharing a word, while a paragraph and its shuffled retelling differ in
their order terms. Near-synonymous verbs meet through the canonical relation vocabulary
(:mod:`fastmem.reader.canon`) and, optionally, through ``synonyms`` (a blend with an embedding-derived
atom; measured to cost precision on ProPara-Logy, so off by default).

Memory codes bundle their distinct terms with equal weight (phase only, stored as int8). The
*query* is a weighted sum of unit terms, each weighted by the store's inverse document
frequency of its words (rare verbs and fillers say more than "use" or "be"), and every stored
row is scaled by ``n_terms ** length_power`` so that a long memory matching many terms is not
divided away by its length (0.5 makes the score an unnormalised count of shared terms).
Both keep the store-wide mean and standard deviation exact (see :class:`CodeStats`).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence

import numpy as np

from .. import kernels as K
from ..util.bounded import Bounded

__all__ = ["StructureEncoder", "CodeStats", "TermWeights", "event_words", "event_counts", "label",
           "StructQuery", "VERB_KEY"]


_ROLE_R, _ROLE_S, _ROLE_O, _NEXT = "role:rel", "role:subj", "role:obj", "role:next"


class TermWeights:
    """Relative weights of the term families in the query (each also times the IDF of its
    words). Equal weights measured best on ProPara-Logy silver (``bench/analogy_quality.py``)."""

    rel = 1.0
    subj = 1.0
    obj = 1.0
    order = 1.0


def event_words(events) -> set[str]:
    """Distinct verbs and fillers of an event list (what the store's document counts count)."""
    out = set()
    for e in events:
        out.add(e[0])
        out.update(e[1])
        out.update(e[2])
    return out


#: Prefix of the word counts that count a verb's content events (every occurrence, not
#: memories); the prefix alone counts all content events. No lemma holds a tab.
VERB_KEY = "\t"


def event_counts(events) -> dict[str, int]:
    """What one memory adds to the store's word counts (table ``event_df``): 1 for each
    distinct verb and filler (:func:`event_words`), and for each content verb (not a
    skeleton verb, see :mod:`fastmem.reader.lexicon`) its number of events under
    ``VERB_KEY + verb``, and their total under ``VERB_KEY`` (the analogy slot's
    :class:`~fastmem.analogy.mapping.VerbBits`), and 1 under ``VERB_KEY * 2`` when it has any."""
    from ..reader.lexicon import is_skeleton

    out = dict.fromkeys(event_words(events), 1)
    for e in events:
        v = e[0]
        if not is_skeleton(v):
            out[VERB_KEY + v] = out.get(VERB_KEY + v, 0) + 1
            out[VERB_KEY] = out.get(VERB_KEY, 0) + 1
    if VERB_KEY in out:
        out[VERB_KEY * 2] = 1  # the memories with content events
    return out


def count_events(df: dict[str, int], batch: Sequence) -> None:
    """Add the :func:`event_counts` of every event list of ``batch`` to ``df``: the same
    counts, and new words in the same order, as adding them one memory at a time (one pass
    counted in C: a bulk load's hundred thousand memories)."""
    from collections import Counter

    from ..reader.lexicon import is_skeleton

    def elements(events):
        yield from event_words(events)
        content = False
        for e in events:
            if not is_skeleton(e[0]):
                content = True
                yield VERB_KEY + e[0]
                yield VERB_KEY
        if content:
            yield VERB_KEY * 2

    got = Counter()
    for events in batch:
        got.update(elements(events))
    for w, c in got.items():
        df[w] = df.get(w, 0) + c


class StructureEncoder:
    """Encode event lists (see :data:`fastmem.reader.extract.Event`) into FHRR codes.

    Parameters
    ----------
    dim : int
        Code dimension D.
    order_window : int
        Each verb is ordered against the next ``order_window`` verbs.
    length_power : float
        Stored rows are scaled by ``n_terms ** length_power`` (0: cosine; 0.5: count of shared
        terms). Used by :class:`CodeStats` and the slot, recorded here so codes and scales travel
        together.
    synonyms : float
        Weight of an embedding-derived atom blended into each verb atom (0 = exact atoms);
        needs ``embed``.
    embed : callable or None
        ``embed(list[str]) -> (n, e)`` array, for ``synonyms``.
    weights : TermWeights
        Family weights of the query.
    """

    version = 4  # bump when codes or their stored terms change meaning; stores re-encode on open

    def __init__(self, dim: int = 512, *, order_window: int = 8, length_power: float = 0.5,
                 synonyms: float = 0.0, embed: Callable | None = None,
                 weights: type[TermWeights] | TermWeights = TermWeights, seed: int = 7) -> None:
        self.dim = dim
        self.order_window = order_window
        self.length_power = length_power
        self.synonyms = synonyms
        self.embed = embed
        self.w = weights
        self._seed = seed
        self._verb: dict[str, np.ndarray] = Bounded(20_000)  # verb atoms (8 KB each at dim 512)
        self._lock = threading.Lock()
        self._proj = None
        self._roles: dict[str, np.ndarray] | None = None

    @property
    def roles(self) -> dict[str, np.ndarray]:
        """The role atoms (made on first use: opening a store to list it loads no kernel)."""
        if self._roles is None:
            self._roles = {name: K.atom(name, self.dim) for name in (_ROLE_R, _ROLE_S, _ROLE_O, _NEXT)}
        return self._roles

    # -- atoms -----------------------------------------------------------------------------
    def verb_atoms(self, verbs: Sequence[str]) -> list[np.ndarray]:
        with self._lock:
            new = sorted({v for v in verbs if v not in self._verb})
            if new:
                exact = [K.atom("verb:" + v, self.dim) for v in new]
                if self.synonyms > 0 and self.embed is not None:
                    vecs = np.asarray(self.embed([v.replace("_", " ") for v in new]), np.float64)
                    if self._proj is None:
                        rng = np.random.Generator(np.random.PCG64(self._seed))
                        e = vecs.shape[1]
                        self._proj = rng.standard_normal((self.dim, e)) + 1j * rng.standard_normal((self.dim, e))
                    proj = np.angle(vecs @ self._proj.T)
                    exact = [np.mod(np.angle(np.exp(1j * a) + self.synonyms * np.exp(1j * p)), 2 * math.pi)
                             for a, p in zip(exact, proj)]
                for v, a in zip(new, exact):
                    self._verb[v] = a
            return [self._verb[v] for v in verbs]

    # -- terms -----------------------------------------------------------------------------
    def term_keys(self, events) -> list[tuple]:
        """Distinct term keys of an event list, in first-occurrence order: ``("rel", v)``,
        ``("subj", v, filler)``, ``("obj", v, filler)``, ``("order", v_i, v_j)``."""
        keys: dict[tuple, None] = {}
        verbs = [e[0] for e in events]
        for e in events:
            v, subs, objs = e[0], e[1], e[2]
            keys[("rel", v)] = None
            for f in subs:
                keys[("subj", v, f)] = None
            for f in objs:
                keys[("obj", v, f)] = None
        for i, a in enumerate(verbs):
            for b in verbs[i + 1 : i + 1 + self.order_window]:
                if a != b:
                    keys[("order", a, b)] = None
        return list(keys)

    def term_phases(self, keys: Sequence[tuple]) -> np.ndarray:
        """(T, D) phases of term keys."""
        if not keys:
            return np.zeros((0, self.dim))
        R = self.roles
        verbs = sorted({w for k in keys for w in ((k[1], k[2]) if k[0] == "order" else (k[1],))})
        va = dict(zip(verbs, self.verb_atoms(verbs)))
        out = np.empty((len(keys), self.dim))
        for i, k in enumerate(keys):
            if k[0] == "rel":
                x = R[_ROLE_R] + va[k[1]]
            elif k[0] == "order":
                x = R[_NEXT] + va[k[1]] + K.permute(va[k[2]])
            else:
                x = R[_ROLE_R] + va[k[1]] + R[_ROLE_S if k[0] == "subj" else _ROLE_O] + K.atom("filler:" + k[2], self.dim)
            out[i] = x
        return np.mod(out, 2 * math.pi)

    def term_weights(self, keys: Sequence[tuple], idf: Callable[[str], float] | None = None) -> np.ndarray:
        """Query weight of each term: family weight times the geometric mean of its words' IDF."""
        fam = {"rel": self.w.rel, "subj": self.w.subj, "obj": self.w.obj, "order": self.w.order}
        out = np.empty(len(keys))
        for i, k in enumerate(keys):
            g = 1.0
            if idf is not None:  # the words of a term are its verb(s) and filler: k[1:]
                g = math.prod(idf(w) for w in k[1:]) ** (1.0 / (len(k) - 1))
            out[i] = fam[k[0]] * g
        return out

    # -- codes -----------------------------------------------------------------------------
    def encode(self, events) -> tuple[np.ndarray | None, int]:
        """A memory's code: (D,) phases bundling its distinct terms, and the number of terms;
        ``(None, 0)`` when it has no events."""
        keys = self.term_keys(events)
        if not keys:
            return None, 0
        return K.bundle(np.ascontiguousarray(self.term_phases(keys))), len(keys)

    def scale(self, n_terms) -> np.ndarray | float:
        """Row scale of stored codes with ``n_terms`` terms."""
        return np.power(np.maximum(n_terms, 1), self.length_power, dtype=np.float64)

    def query(self, events, idf: Callable[[str], float] | None = None) -> StructQuery | None:
        """The turn prepared for the store: its term weights (family weight x IDF of the
        words) and a (2D,) unit-norm vector, the weighted sum of the unit forms of its terms
        (not phase-normalised, so each term counts in proportion to its weight). None when
        the turn has no events."""
        keys = self.term_keys(events)
        if not keys:
            return None
        w = self.term_weights(keys, idf)
        q = w @ K.to_unit(np.ascontiguousarray(self.term_phases(keys)))
        n = float(np.linalg.norm(q))
        if n <= 0:
            return None
        return StructQuery(dict(zip(keys, w.tolist())), q / n, n)

    def alignment(self, query: StructQuery, events_b, top: int = 5) -> tuple[float, list[str], int]:
        """Exact structural overlap of a prepared turn with a memory's events: the summed
        weights of the terms they share, labels of the heaviest shared terms (why the two
        rhyme), and the memory's number of terms."""
        keys = self.term_keys(events_b)
        shared = [(query.weights[k], k) for k in keys if k in query.weights]
        if not shared:
            return 0.0, [], len(keys)
        shared.sort(key=lambda x: -x[0])
        return float(sum(w for w, _ in shared)), [label(k) for _, k in shared[:top]], len(keys)

    def expected_score(self, query: StructQuery, align: float, n_terms: int) -> float:
        """What a memory sharing terms of total weight ``align`` scores against ``query`` in
        the store's scaled-score units, without bundling noise: one term of a T-term phase
        bundle keeps a correlation of ~sqrt(pi/4)/sqrt(T) (exactly 1/sqrt(T) for T = 1)."""
        gain = 1.0 if n_terms <= 1 else math.sqrt(math.pi) / 2
        return float(align * gain * n_terms ** (self.length_power - 0.5) / query.norm)


class StructQuery:
    """A turn prepared by :meth:`StructureEncoder.query`: ``weights`` (term key -> weight),
    ``vector`` (2D,) unit norm, ``norm`` (the norm before normalising), and the terms' hashes
    and weights as arrays (for :class:`fastmem.analogy.postings.TermIndex`)."""

    __slots__ = ("weights", "vector", "norm", "hashes", "wts")

    def __init__(self, weights: dict, vector: np.ndarray, norm: float) -> None:
        from .postings import term_hashes

        self.weights, self.vector, self.norm = weights, vector, norm
        keys = list(weights)
        self.hashes = term_hashes(keys)
        self.wts = np.fromiter((weights[k] for k in keys), np.float64, len(keys))


def _show(f: str) -> str:
    return f[1:] if f.startswith("@") else f


def label(key: tuple) -> str:
    """Readable form of a term key: ``own``, ``@person -own->``, ``-own-> car``, ``emit then detect``."""
    if key[0] == "rel":
        return key[1]
    if key[0] == "order":
        return f"{key[1]} then {key[2]}"
    if key[0] == "subj":
        return f"{_show(key[2])} -{key[1]}->"
    return f"-{key[1]}-> {_show(key[2])}"


class CodeStats:
    """Exact running statistics of a store's structural scores, without the codes themselves.

    ``s`` (2D,) and ``m`` (2D, 2D) are the float64 sums of every stored row's
    ``scale x dequantised code`` and of its outer products, so :meth:`z_stats` gives the exact
    mean and std of that score for any query over the whole store (O(D^2), whatever N).
    ``n`` and ``id_sum`` fingerprint the set of rows the sums describe.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.s = np.zeros(2 * dim)
        self.m = np.zeros((2 * dim, 2 * dim))
        self.n = 0
        self.id_sum = 0
        #: how many times :meth:`add` or :meth:`remove` changed the sums (a save can be skipped
        #: when this has not moved since the sums were read or written)
        self.changes = 0

    def _weighted(self, q8: np.ndarray, scale) -> np.ndarray:
        return K.dequantize(np.ascontiguousarray(q8)) * np.asarray(scale, np.float64).reshape(-1, 1)

    #: Rows dequantised at a time (a bulk load's 100k rows would be 800 MB of float64 at once).
    BLOCK = 8192

    def _update(self, q8: np.ndarray, scale, fn) -> None:
        scale = np.broadcast_to(np.asarray(scale, np.float64), (len(q8),))
        for start in range(0, len(q8), self.BLOCK):
            fn(self.s, self.m, self._weighted(q8[start : start + self.BLOCK], scale[start : start + self.BLOCK]))

    def add(self, ids, q8: np.ndarray | None, scale, ahead: "SumsAhead | None" = None) -> None:
        """Count rows ``q8`` (their ``scale``) into the sums; ``ahead``: these rows' sums begun
        on a thread (:meth:`ahead`), taken when nothing changed the sums since it began
        (``q8`` may then be None: :meth:`SumsAhead.usable`)."""
        if len(ids):
            done = ahead.result(self, len(ids)) if ahead is not None else None
            if done is None:
                self._update(q8, scale, K.stats_add)
            else:
                self.s, self.m = done
            self.n += len(ids)
            self.id_sum += int(np.sum(ids))
            self.changes += 1

    def remove(self, ids, q8: np.ndarray, scale) -> None:
        if len(ids):
            self._update(q8, scale, K.stats_remove)
            self.n -= len(ids)
            self.id_sum -= int(np.sum(ids))
            self.changes += 1

    def ahead(self, q8: np.ndarray, scale) -> "SumsAhead":
        """Begin :meth:`add`'s work for a bulk write on a thread, while its transaction goes
        on: the same blocks added in the same order to a copy of the sums (NumPy leaves the
        GIL for the products), so the sums :meth:`add` then takes are the ones it would have
        computed, to the last bit."""
        return SumsAhead(self, q8, scale)

    def z_stats(self, qu: np.ndarray) -> tuple[float, float]:
        """Exact mean and std of the scaled score of ``qu`` over every row."""
        return K.z_stats(np.asarray(qu, np.float64), self.s, self.m, self.n)


class SumsAhead:
    """:meth:`CodeStats.add`'s sums for a batch of rows, computed on a thread from a copy of
    the sums taken when it began (see :meth:`CodeStats.ahead`)."""

    def __init__(self, stats: CodeStats, q8: np.ndarray, scale) -> None:
        self.rows = len(q8)
        self._of, self._base = stats, stats.changes  # the sums it starts from
        self._s, self._m = stats.s.copy(), stats.m.copy()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(stats, np.asarray(q8), scale), daemon=True,
                                        name="fastmem-stats-ahead")
        self._thread.start()

    def _run(self, stats: CodeStats, q8: np.ndarray, scale) -> None:
        try:
            scale = np.broadcast_to(np.asarray(scale, np.float64), (len(q8),))
            for start in range(0, len(q8), stats.BLOCK):
                K.stats_add(self._s, self._m, stats._weighted(q8[start : start + stats.BLOCK],
                                                              scale[start : start + stats.BLOCK]))
        except BaseException as exc:  # the caller computes them itself
            self._error = exc

    def usable(self, stats: CodeStats, rows: int) -> bool:
        """Whether :meth:`CodeStats.add` of ``rows`` rows takes these sums."""
        return self.result(stats, rows) is not None

    def result(self, stats: CodeStats, rows: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The new ``(s, m)``, or None when they do not apply: other rows, sums changed since
        it began, or it failed."""
        self._thread.join()
        if self._error is not None or rows != self.rows or stats is not self._of or stats.changes != self._base:
            return None
        return self._s, self._m
