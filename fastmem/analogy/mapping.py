"""Structure mapping: the analogy slot's second stage, which scores *structures*, not bags.

For two event lists (a turn's and a candidate memory's; see :data:`fastmem.reader.extract.Event`),
:meth:`Mapper.map` finds the best one-to-one, order-preserving correspondence between their
*content* events (verbs outside :data:`fastmem.reader.lexicon.SKELETON`) and scores it in bits:

* *information*: a pair of corresponding events is worth the information of its relation,
  ``-log2`` of how often that verb occurs among the store's events (see :class:`VerbBits`),
  times how close the two verbs are (1 for the same canonical relation; graded by the
  cosine of the verbs' embeddings above ``synonym_floor`` otherwise). Skeleton verbs carry no
  information, so "let", "know", "hope" never make a structure;
* *one-to-one and order*: each event maps at most once and the mapping keeps the order of
  both narratives (a weighted longest common subsequence), and events correspond better the
  closer their relative positions in the two stories (``diagonal``; a story of one event has
  no position): the same steps told in another order map fewer and weaker pairs;
* *systematicity*: a filler of the turn that corresponds to the same filler of the candidate
  in several corresponding events (the stories are about corresponding things throughout)
  adds ``log2`` of the candidate's number of distinct fillers per repeat, the information of
  that choice.

:attr:`Mapping.surprise` subtracts what choosing *which* events correspond is worth
(``log2 C(n, K) + log2 C(m, K)`` for K pairs among n and m content events), so that
``N * 2 ** -surprise`` is the expected number of memories in a store of N that would map at
least this well by chance (an E-value, as in sequence alignment): the analogy slot's gate
(:meth:`Mapping.log2_expected`).

:attr:`Mapping.literal` is the share of corresponding roles filled by the same common noun
on both sides: high for a retelling of the same story, low for an analogy, whose objects
differ while its relations correspond.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..reader.lexicon import is_skeleton
from ..util.bounded import Bounded

__all__ = ["Mapping", "Mapper", "VerbBits", "log2_choose", "content_events", "LINK_KINDS"]


def log2_choose(n: int, k: int) -> float:
    """``log2`` of the binomial coefficient C(n, k)."""
    if k < 0 or k > n:
        return math.inf
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(2)


def content_events(events: Sequence) -> list[int]:
    """Positions of the events whose verb is not a skeleton verb."""
    return [i for i, e in enumerate(events) if not is_skeleton(e[0])]


class VerbBits:
    """Information of a verb among a store's events, in bits.

    ``f(v) = (count(v) + PRIOR_EVENTS / PRIOR_VERBS) / (total + PRIOR_EVENTS)`` and
    ``bits(v) = -log2 f(v)``: the store's own event counts, smoothed by a prior in which a
    content verb is one of :data:`PRIOR_VERBS` equally likely ones, worth :data:`PRIOR_EVENTS`
    events (so a small store does not call every verb it has seen once common). A
    candidate's own events are left out of the counts its verbs are weighed by (the question
    is how often *other* memories have them). Skeleton verbs have 0 bits.

    Parameters
    ----------
    counts : callable
        ``verb -> number of content events with that verb`` in the store.
    total : callable
        ``() -> number of content events`` in the store.
    memories : callable
        ``() -> number of memories with content events`` (the population a chance match can
        come from).
    """

    #: The prior's vocabulary of content verbs.
    PRIOR_VERBS = 2000
    #: The prior's weight, in events.
    PRIOR_EVENTS = 1000.0

    def __init__(self, counts: Callable[[str], int] | None = None, total: Callable[[], int] | None = None,
                 memories: Callable[[], int] | None = None) -> None:
        self.counts = counts or (lambda v: 0)
        self.total = total or (lambda: 0)
        self.memories = memories or (lambda: 0)

    def __call__(self, verb: str, own: int = 0, own_total: int = 0) -> float:
        if is_skeleton(verb):
            return 0.0
        c = max(self.counts(verb) - own, 0)
        e = max(self.total() - own_total, 0)
        return -math.log2((c + self.PRIOR_EVENTS / self.PRIOR_VERBS) / (e + self.PRIOR_EVENTS))


@dataclass(frozen=True)
class Mapping:
    """A structure mapping (see the module docstring).

    Attributes
    ----------
    score : float
        Bits of the corresponding events plus systematicity.
    pairs : tuple of (int, int)
        Corresponding event positions (turn, candidate), in story order.
    labels : tuple of str
        Each pair's relations: ``"absorb"``, or ``"pump=push"`` when they differ.
    n, m : int
        Content events of the turn and of the candidate.
    fillers : tuple of str
        Consistent correspondences of fillers, ``"water->electricity"``, most repeated first.
    literal : float
        Share of corresponding roles filled by the same common noun on both sides.
    units : int
        Matched structure: per pair, 1 for the relation and 1 per role both events fill.
    """

    score: float
    pairs: tuple[tuple[int, int], ...]
    labels: tuple[str, ...]
    n: int = 0
    m: int = 0
    fillers: tuple[str, ...] = ()
    literal: float = 0.0
    units: int = 0
    #: corresponding higher-order relations, ``"cause: stay->grow = keep->grow"``, and how many
    #: of the two stories' relations between corresponding events do not correspond
    links: tuple[str, ...] = ()
    missed_links: int = 0

    @property
    def surprise(self) -> float:
        """Bits left after paying for the choice of corresponding events."""
        k = len(self.pairs)
        return self.score - log2_choose(self.n, k) - log2_choose(self.m, k) if k else 0.0

    def log2_expected(self, n_store: int) -> float:
        """``log2`` of the E-value: how many of ``n_store`` memories would map at least this
        well by chance (events drawn independently at the store's verb frequencies)."""
        return math.log2(max(n_store, 1)) - self.surprise

    def p_value(self, n_store: int) -> float:
        """Chance that the best of ``n_store`` memories maps at least this well
        (``1 - exp(-E)``)."""
        e = 2.0 ** min(self.log2_expected(n_store), 60.0)
        return float(-math.expm1(-e))


_EMPTY = Mapping(0.0, (), ())


class Mapper:
    """Structure mapping between event lists (see the module docstring).

    Parameters
    ----------
    bits : callable, optional
        ``(verb, own, own_total) -> bits`` (:class:`VerbBits`); default 1 bit per content verb.
    verb_vectors : callable, optional
        ``list[str] -> (n, e)`` unit vectors of verbs, for graded relation similarity; default
        the same canonical relation only.
    synonym_floor : float
        Cosine below which two different verbs do not correspond.
    diagonal : float
        How much a pair loses per unit of difference between its events' relative positions
        in the two stories (0: order only; 1: a step at the start never maps one at the end).
    systematicity : float
        Weight of the bits of consistent filler correspondences.
    missed_link : float
        Bits a mapping loses for each higher-order relation (cause, condition, purpose,
        contrast, time) that holds between two corresponding events on one side only: the same
        events for other reasons, a false analogy. 1.0: at 2.0 ProPara-Logy silver's slot
        precision fell from 0.686 to 0.683 and its fire from 0.419 to 0.407; the reader misses
        many stated links, so a missed one is weak evidence.
    """

    def __init__(self, bits: Callable[..., float] | None = None, verb_vectors: Callable | None = None, *,
                 synonym_floor: float = 0.5, diagonal: float = 1.0, systematicity: float = 0.5,
                 missed_link: float = 1.0) -> None:
        self.bits = bits or (lambda v, own=0, own_total=0: 0.0 if is_skeleton(v) else 1.0)
        self.verb_vectors = verb_vectors
        self.synonym_floor = synonym_floor
        self.diagonal = diagonal
        self.systematicity = systematicity
        self.missed_link = missed_link
        self._vec: dict[str, np.ndarray] = Bounded(20_000)  # verb vectors
        self._sim: dict[tuple[str, str], float] = Bounded(200_000)

    def using(self, bits: Callable[..., float]) -> Mapper:
        """A mapper with these settings and verb caches, weighing verbs by ``bits`` (a scope's
        counts, the store's as they are now)."""
        other = Mapper(bits, self.verb_vectors, synonym_floor=self.synonym_floor, diagonal=self.diagonal,
                       systematicity=self.systematicity, missed_link=self.missed_link)
        other._vec, other._sim = self._vec, self._sim
        return other

    def _embed(self, keys) -> None:
        """Cache the vectors of ``keys`` not cached yet, in one model call (a verb is its own
        key, a noun ``"n:" + noun``): a pass over many pairs calls the model once."""
        if self.verb_vectors is None:
            return
        missing = sorted({k for k in keys if k not in self._vec})
        if missing:
            words = [k[2:] if k.startswith("n:") else k.replace("_", " ") for k in missing]
            for k, vec in zip(missing, self.verb_vectors(words)):
                self._vec[k] = np.asarray(vec, np.float64)

    def prime(self, stories: Sequence[Sequence]) -> None:
        """Embed the relations of the content events of all ``stories`` (a turn and its
        candidates) in one model call before they are mapped: what :meth:`map` compares."""
        self._embed(evs[i][0] for evs in stories for i in content_events(evs))

    def verb_sim(self, a: str, b: str) -> float:
        """How far two relations correspond: 1 when equal, the cosine of their embeddings
        rescaled above ``synonym_floor``, else 0 (never across a negation)."""
        if a == b:
            return 1.0
        if self.verb_vectors is None or a.startswith("not_") != b.startswith("not_"):
            return 0.0
        key = (a, b) if a < b else (b, a)
        got = self._sim.get(key)
        if got is None:
            self._embed(key)
            c = float(self._vec[a] @ self._vec[b])
            got = 0.0 if c < self.synonym_floor else (c - self.synonym_floor) / (1.0 - self.synonym_floor)
            self._sim[key] = got
        return got

    def _weights(self, turn, cand, ti: list[int], ci: list[int]) -> list[list[float]]:
        own: dict[str, int] = {}
        for j in ci:
            own[cand[j][0]] = own.get(cand[j][0], 0) + 1
        # both sides weighed by how often *other* memories have the verb (the candidate's own
        # events left out: a store where only the candidate has it makes it rare, not common)
        tb = {v: self.bits(v, own.get(v, 0), len(ci)) for v in {turn[i][0] for i in ti}}
        cb = {v: self.bits(v, own[v], len(ci)) for v in own}
        n, m = len(ti), len(ci)
        placed = n > 1 and m > 1  # a story of one event has no position in it
        rows = []
        for a, i in enumerate(ti):
            v, pa = turn[i][0], (a + 0.5) / n
            row = []
            for b, j in enumerate(ci):
                s = self.verb_sim(v, cand[j][0])
                w = 0.0
                if s > 0.0:
                    w = s * min(tb[v], cb[cand[j][0]])
                    if placed:
                        w *= max(0.0, 1.0 - self.diagonal * abs(pa - (b + 0.5) / m))
                row.append(w)
            rows.append(row)
        return rows

    def map(self, turn: Sequence, cand: Sequence) -> Mapping:
        """The best order-preserving one-to-one mapping of ``turn``'s content events onto
        ``cand``'s (positions in :attr:`Mapping.pairs` index the full event lists)."""
        ti, ci = content_events(turn), content_events(cand)
        if not ti or not ci:
            return Mapping(0.0, (), (), len(ti), len(ci))
        self._embed([turn[i][0] for i in ti] + [cand[j][0] for j in ci])
        w = self._weights(turn, cand, ti, ci)
        score, local = _align(w)
        if not local:
            return Mapping(0.0, (), (), len(ti), len(ci))
        pairs = tuple((ti[a], ci[b]) for a, b in local)
        fillers, repeats, literal, units = _roles(turn, cand, pairs)
        distinct = len({f for j in ci for r in (1, 2) for f in cand[j][r]})
        score += self.systematicity * repeats * math.log2(max(distinct, 2))
        links, missed = _links(turn, cand, pairs)
        # a corresponding relation between corresponding events is worth the choice of that
        # relation among the candidate's pairs of events and the kinds of relation; one that
        # the other story lacks (the same events, other reasons: a false analogy) costs
        score += len(links) * math.log2(max(len(ci) * (len(ci) - 1) / 2, 2) * len(LINK_KINDS))
        score -= self.missed_link * missed
        labels = tuple(turn[i][0] if turn[i][0] == cand[j][0] else f"{turn[i][0]}={cand[j][0]}" for i, j in pairs)
        return Mapping(float(score), pairs, labels, len(ti), len(ci), fillers, literal, units + len(links), links,
                       missed)

    def noun_sim(self, a: str, b: str) -> float:
        """How alike two objects (common-noun fillers) are: 1 for the same noun, else the cosine
        of their embeddings (0 without embeddings)."""
        if a == b:
            return 1.0
        if self.verb_vectors is None:
            return 0.0
        key = (f"n:{a}", f"n:{b}") if a < b else (f"n:{b}", f"n:{a}")
        got = self._sim.get(key)
        if got is None:
            self._embed(key)
            got = self._sim[key] = max(0.0, float(self._vec[key[0]] @ self._vec[key[1]]))
        return got

    def objects(self, turn: Sequence, cand: Sequence, mp: Mapping) -> tuple[float, tuple[str, ...]]:
        """How alike the objects of a mapping's corresponding roles are: the mean, over the
        roles both corresponding events fill with common nouns, of the best likeness between
        their nouns (:meth:`noun_sim`); high for a retelling (a flat for an apartment, a
        physician for a doctor), low for an analogy (a beam of light for an army). Also the
        object correspondences, ``"apartment~flat 0.81"``, most alike first."""
        sims, shown = [], {}
        self._embed(f"n:{x}" for i, j in mp.pairs for r in (1, 2) for x in (*turn[i][r], *cand[j][r])
                    if not x.startswith("@"))
        for i, j in mp.pairs:
            for r in (1, 2):
                a = [x for x in turn[i][r] if not x.startswith("@")]
                b = [y for y in cand[j][r] if not y.startswith("@")]
                if not a or not b:
                    continue
                s, x, y = max((self.noun_sim(x, y), x, y) for x in a for y in b)
                sims.append(s)
                shown.setdefault(f"{x}~{y}", s)
        pairs = tuple(f"{k} {v:.2f}" for k, v in sorted(shown.items(), key=lambda kv: -kv[1]))
        return (sum(sims) / len(sims) if sims else 0.0), pairs

    def clothes(self, turn: Sequence, cand: Sequence) -> float:
        """How alike two stories' objects are, whatever happens to them: each side's common
        nouns matched to the other side's most alike (:meth:`noun_sim`), averaged both ways.
        High for the same story in other words (an apartment and a flat) and for the same
        things in another plot; low for an analogy, whose objects belong to another domain."""
        a = sorted({f for e in turn for r in (1, 2) for f in e[r] if not f.startswith("@")})
        b = sorted({f for e in cand for r in (1, 2) for f in e[r] if not f.startswith("@")})
        if not a or not b:
            return 0.0
        self._embed(f"n:{x}" for x in a + b)
        s = [[self.noun_sim(x, y) for y in b] for x in a]
        there = sum(max(row) for row in s) / len(a)
        back = sum(max(s[i][j] for i in range(len(a))) for j in range(len(b))) / len(b)
        return (there + back) / 2

    def similarity(self, turn: Sequence, cand: Sequence) -> tuple[float, Mapping]:
        """The mapping's score normalised by the two stories' self-mappings (1.0 for the same
        structure, whatever its size), and the mapping."""
        mp = self.map(turn, cand)
        if mp.score <= 0:
            return 0.0, mp
        own = math.sqrt(self.map(turn, turn).score * self.map(cand, cand).score)
        return (mp.score / own if own > 0 else 0.0), mp


def _align(w: list[list[float]]) -> tuple[float, list[tuple[int, int]]]:
    """Weighted longest common subsequence of a (n, m) weight table: the best total weight
    of pairs (i, j) increasing in both, and the pairs (zero weights never pair)."""
    n, m = len(w), len(w[0])
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        prev, row, wi = best[i - 1], best[i], w[i - 1]
        for j in range(1, m + 1):
            x = prev[j] if prev[j] >= row[j - 1] else row[j - 1]
            if wi[j - 1] > 0.0 and prev[j - 1] + wi[j - 1] > x:
                x = prev[j - 1] + wi[j - 1]
            row[j] = x
    pairs = []
    i, j = n, m
    while i > 0 and j > 0:
        wij = w[i - 1][j - 1]
        if wij > 0.0 and abs(best[i][j] - (best[i - 1][j - 1] + wij)) < 1e-12:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif best[i][j] == best[i - 1][j]:
            i -= 1
        else:
            j -= 1
    pairs.reverse()
    return best[n][m], pairs


#: The kinds of higher-order relations the reader finds between events
#: (:func:`fastmem.reader.extract.SpacyExtractor.events_many`).
LINK_KINDS = ("cause", "condition", "purpose", "contrast", "time")


def _event_links(events) -> dict[tuple[int, int], str]:
    return {(i, j): kind for i, e in enumerate(events) if len(e) > 3 for kind, j in e[3]}


def _links(turn, cand, pairs) -> tuple[tuple[str, ...], int]:
    """The higher-order relations (cause, condition, purpose, contrast, time) that hold
    between corresponding events on both sides, as labels, and how many hold between
    corresponding events on one side only (or as another kind)."""
    lt, lc = _event_links(turn), _event_links(cand)
    if not lt and not lc:
        return (), 0
    to = dict(pairs)
    back = {j: i for i, j in pairs}
    matched, missed = [], 0
    for (i, i2), kind in lt.items():
        if i in to and i2 in to:
            other = lc.get((to[i], to[i2]))
            if other == kind:
                matched.append(f"{kind}: {turn[i][0]}->{turn[i2][0]} = {cand[to[i]][0]}->{cand[to[i2]][0]}")
            else:
                missed += 1
    for (j, j2), kind in lc.items():
        if j in back and j2 in back and lt.get((back[j], back[j2])) is None:
            missed += 1
    return tuple(matched), missed


def _roles(turn, cand, pairs) -> tuple[tuple[str, ...], int, float, int]:
    """Filler correspondences of corresponding events: the consistent ones (most repeated
    first), how many repeats they add, the literal share and the matched units."""
    maps: dict[tuple[int, str], dict[str, int]] = {}
    same = filled = 0
    units = 0
    for i, j in pairs:
        units += 1
        for r in (1, 2):
            a, b = turn[i][r], cand[j][r]
            if a and b:
                units += 1
            for x in a:
                for y in b:
                    maps.setdefault((r, x), {}).setdefault(y, 0)
                    maps[(r, x)][y] += 1
            nouns_a = {x for x in a if not x.startswith("@")}
            nouns_b = {y for y in b if not y.startswith("@")}
            if nouns_a and nouns_b:
                filled += 1
                same += bool(nouns_a & nouns_b)
    repeats = 0
    shown = []
    for (r, x), targets in maps.items():
        y, top = max(targets.items(), key=lambda t: t[1])
        repeats += top - 1
        if top > 1 or len(pairs) == 1:
            shown.append((-top, f"{x.lstrip('@')}->{y.lstrip('@')}"))
    fillers = tuple(dict.fromkeys(s for _, s in sorted(shown)))
    return fillers, repeats, (same / filled if filled else 0.0), units
