"""Structure mapping: the analogy slot's second stage, which compares *structures*, not bags.

For two event lists (a turn's and a candidate memory's; see :data:`fastmem.extract.Event`),
:meth:`Mapper.map` finds the best one-to-one, order-preserving correspondence between their
events (a weighted longest common subsequence by dynamic programming) and scores it by the
principles of structure-mapping theory:

* *relational match*: corresponding events share their relation (the canonical verb), or a
  near-synonymous one (graded by the cosine of the verbs' embeddings above ``synonym_floor``);
  an event pair without a related relation never corresponds. Each match weighs its verb's
  IDF, plus the IDF of the role fillers the two events share;
* *one-to-one and order*: each event maps at most once and the mapping keeps the order of
  both narratives, so the same events told in another order ("distractors") map fewer events;
* *parallel connectivity / systematicity*: the roles of corresponding events bind their
  fillers (subject to subject, object to object); a filler of the turn that maps to the same
  filler of the candidate in several corresponding events adds ``connect`` per repeat (the
  stories are about corresponding things throughout), one that maps inconsistently costs it;
  corresponding events that follow each other in both stories add ``adjacent``.

``units`` counts the matched structure: per corresponding pair, 1 for the relation and 1 for
each role (subject, object) both events fill. A lone shared verb is 1-2 units; one full triple
("Bob owns a car" / "Acme owns Widget") is 3.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .bounded import Bounded

__all__ = ["Mapping", "Mapper"]


@dataclass(frozen=True)
class Mapping:
    """A structure mapping: ``score`` (see the module docstring), ``units`` of matched
    structure, the corresponding event index pairs and their readable form."""

    score: float
    units: int
    pairs: tuple[tuple[int, int], ...]
    labels: tuple[str, ...]


class Mapper:
    """Structure mapping between event lists (see the module docstring).

    Parameters
    ----------
    idf : callable, optional
        ``word -> weight`` (the store's inverse document frequency); default 1 for every word.
    verb_vectors : callable, optional
        ``list[str] -> (n, e)`` unit vectors of verbs, for graded relation similarity; default
        exact relations only.
    synonym_floor : float
        Cosine below which two different verbs do not correspond.
    connect, adjacent : float
        Bonus per consistent repeated filler mapping, and per pair of corresponding events
        adjacent in both stories (in units of an average verb weight).
    """

    def __init__(self, idf: Callable[[str], float] | None = None, verb_vectors: Callable | None = None, *,
                 synonym_floor: float = 0.6, connect: float = 0.5, adjacent: float = 0.25) -> None:
        self.idf = idf or (lambda w: 1.0)
        self.verb_vectors = verb_vectors
        self.synonym_floor = synonym_floor
        self.connect = connect
        self.adjacent = adjacent
        self._vec: dict[str, np.ndarray] = Bounded(20_000)  # verb vectors

    def _verb_sim(self, a: str, b: str) -> float:
        if a == b:
            return 1.0
        if self.verb_vectors is None or a.startswith("not_") != b.startswith("not_"):
            return 0.0
        missing = [v for v in (a, b) if v not in self._vec]
        if missing:
            for v, vec in zip(missing, self.verb_vectors([m.replace("_", " ") for m in missing])):
                self._vec[v] = np.asarray(vec, np.float64)
        c = float(self._vec[a] @ self._vec[b])
        return 0.0 if c < self.synonym_floor else (c - self.synonym_floor) / (1.0 - self.synonym_floor)

    def _pair(self, e, f) -> tuple[float, int]:
        """(weight, units) of two events as a correspondence; (0, 0) when they cannot be one."""
        rel = self._verb_sim(e[0], f[0])
        if rel <= 0.0:
            return 0.0, 0
        w = rel * math.sqrt(self.idf(e[0]) * self.idf(f[0]))
        units = 1
        for a, b in ((e[1], f[1]), (e[2], f[2])):
            if a and b:
                units += 1
                shared = set(a) & set(b)
                w += sum(self.idf(x) for x in shared) / max(len(set(a) | set(b)), 1)
        return w, units

    def map(self, turn: Sequence, cand: Sequence) -> Mapping:
        """The best order-preserving one-to-one mapping of ``turn``'s events onto ``cand``'s."""
        n, m = len(turn), len(cand)
        if not n or not m:
            return Mapping(0.0, 0, (), ())
        w = np.zeros((n, m))
        u = np.zeros((n, m), np.int64)
        for i, e in enumerate(turn):
            for j, f in enumerate(cand):
                w[i, j], u[i, j] = self._pair(e, f)
        # weighted LCS: best[i, j] = best mapping of turn[:i] onto cand[:j]
        best = np.zeros((n + 1, m + 1))
        for i in range(1, n + 1):
            row, prev = best[i], best[i - 1]
            wi = w[i - 1]
            for j in range(1, m + 1):
                take = prev[j - 1] + wi[j - 1] if wi[j - 1] > 0 else -1.0
                row[j] = max(prev[j], row[j - 1], take)
        pairs = []
        i, j = n, m
        while i > 0 and j > 0:
            if w[i - 1, j - 1] > 0 and abs(best[i, j] - (best[i - 1, j - 1] + w[i - 1, j - 1])) < 1e-12:
                pairs.append((i - 1, j - 1))
                i, j = i - 1, j - 1
            elif best[i, j] == best[i - 1, j]:
                i -= 1
            else:
                j -= 1
        pairs.reverse()
        score = float(best[n, m])
        units = int(sum(u[i, j] for i, j in pairs))
        if len(pairs) > 1:
            score += self._connectivity(turn, cand, pairs, score / len(pairs))
        labels = tuple(f"{turn[i][0]}={cand[j][0]}" if turn[i][0] != cand[j][0] else turn[i][0] for i, j in pairs)
        return Mapping(score, units, tuple(pairs), labels)

    def similarity(self, turn: Sequence, cand: Sequence) -> tuple[float, Mapping]:
        """The mapping's score normalised by the two stories' self-mappings (1.0 for the same
        structure, whatever its size), and the mapping."""
        mp = self.map(turn, cand)
        if mp.score <= 0:
            return 0.0, mp
        return mp.score / math.sqrt(self.map(turn, turn).score * self.map(cand, cand).score), mp

    def _connectivity(self, turn, cand, pairs, unit: float) -> float:
        maps: dict[tuple[int, str], dict[str, int]] = {}
        for i, j in pairs:
            for role in (1, 2):
                for a in turn[i][role]:
                    for b in cand[j][role]:
                        maps.setdefault((role, a), {}).setdefault(b, 0)
                        maps[(role, a)][b] += 1
        bonus = 0.0
        for targets in maps.values():
            top = max(targets.values())
            bonus += self.connect * (top - 1)  # the same correspondence, repeated
            if len(targets) > 1 and top > 1:
                bonus -= self.connect * (sum(targets.values()) - top) * 0.5  # and its contradictions
        bonus += self.adjacent * sum(1 for (i1, j1), (i2, j2) in zip(pairs, pairs[1:]) if i2 == i1 + 1 and j2 == j1 + 1)
        return unit * bonus
