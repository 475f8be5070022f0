"""Structural codes: what a memory's facts look like with the names taken out.

A memory's triples become one FHRR code (D phases), computed at write time:

* ``ROLE_R * rel``                  - which relations occur;
* ``ROLE_R * rel * ROLE_S * type``  - which kind of thing does it (subject type);
* ``ROLE_R * rel * ROLE_O * type``  - to which kind of thing (object type);
* ``NEXT * rel_i * P(rel_j)``       - narrative order: relation i followed by relation j (P is a
  fixed permutation, so order matters), for the next ``order_window`` triples;
* ``LINK * rel_i*role_a * P(rel_j*role_b)`` - how triples connect: the same entity plays
  role a in triple i and role b in a later triple j.

Entity identity never enters (only types and shared-entity links), so "Acme owns Widget" and
"Bob owns a car" share the ``own`` terms without sharing a word. Relation atoms are derived
from the embedding of the relation's words through a fixed random complex projection raised to
``sharpen`` (a fractional-power encoding), so near-synonymous relations get near atoms while
unrelated ones stay near orthogonal.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from . import kernels as K

__all__ = ["StructureEncoder", "CodeStore", "TermWeights", "query_facts"]


def query_facts(triples):
    """Encoder input for triples not stored in the graph: entity keys are folded names."""
    from .canon import canon_relation, fold_name

    out = []
    for t in triples:
        rel, flip = canon_relation(t.relation)
        s, o, st, ot = fold_name(t.subject), fold_name(t.object), t.subject_type, t.object_type
        if flip:
            s, o, st, ot = o, s, ot, st
        out.append((st, rel, ot, s, o))
    return out

_ROLE_R, _ROLE_S, _ROLE_O, _NEXT, _LINK = "role:rel", "role:subj", "role:obj", "role:next", "role:link"


class TermWeights:
    """Relative weights of the term families.

    Chosen on ProPara-Logy silver with bench/analogy_tune.py (precision 0.20 at z >= 2 with the
    surface exclusion, against 0.18 for equal type/link weights and 0.15 for relations alone);
    order terms separate a paragraph from its shuffled distractor (target beats distractor
    in 66% of rows with order terms, 56% without).
    """

    rel = 1.0
    subj = 0.3
    obj = 0.3
    order = 1.5
    link = 0.3
    sconc = 1.0
    oconc = 1.0


class StructureEncoder:
    """Encode lists of ``(subject_type, relation, object_type, subject_key, object_key)``.

    Parameters
    ----------
    dim : int
        Code dimension D.
    embed : callable or None
        ``embed(list[str]) -> (n, e) float32`` for relation atoms; None uses random atoms
        (synonyms then only meet through the relation vocabulary).
    sharpen : int
        Integer power applied to projected relation phases; higher keeps unrelated relations
        further apart.
    order_window : int
        How many following triples each triple is ordered against.
    """

    def __init__(self, dim: int = 512, *, embed=None, sharpen: int = 1, order_window: int = 2,
                 weights: type[TermWeights] | TermWeights = TermWeights, seed: int = 7) -> None:
        self.dim = dim
        self.embed = embed
        self.sharpen = sharpen
        self.order_window = order_window
        self.w = weights
        self._rel: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._proj = None
        self._seed = seed
        self.roles = {name: K.atom(name, dim) for name in (_ROLE_R, _ROLE_S, _ROLE_O, _NEXT, _LINK)}

    # -- atoms -----------------------------------------------------------------------------
    def _projection(self, e_dim: int) -> np.ndarray:
        if self._proj is None or self._proj.shape[1] != e_dim:
            rng = np.random.Generator(np.random.PCG64(self._seed))
            self._proj = (rng.standard_normal((self.dim, e_dim)) + 1j * rng.standard_normal((self.dim, e_dim)))
        return self._proj

    def relation_atoms(self, rels: list[str]) -> list[np.ndarray]:
        """Phase atoms of relation names (cached per encoder)."""
        with self._lock:
            new = sorted({r for r in rels if r not in self._rel})
            if new:
                if self.embed is None:
                    for r in new:
                        self._rel[r] = K.atom("rel:" + r, self.dim)
                else:
                    vecs = np.asarray(self.embed([r.replace("_", " ") for r in new]), np.float64)
                    z = vecs @ self._projection(vecs.shape[1]).T
                    ph = np.mod(np.angle(z) * self.sharpen, 2 * math.pi)
                    for r, p in zip(new, ph):
                        self._rel[r] = p
            return [self._rel[r] for r in rels]

    def concept_atoms(self, facts) -> dict:
        """Atoms of common-noun fillers (type 'thing'): categories, not identities. Named
        entities (people, organisations, places...) never get one: only their type counts."""
        keys = []
        for st, _, ot, sk, ok in facts:
            if st == "thing" and isinstance(sk, str) and sk:
                keys.append(sk)
            if ot == "thing" and isinstance(ok, str) and ok:
                keys.append(ok)
        if not keys:
            return {}
        return dict(zip(keys, self.relation_atoms(keys)))

    def type_atom(self, t: str | None) -> np.ndarray:
        return K.atom("type:" + (t or "entity"), self.dim)

    # -- encoding --------------------------------------------------------------------------
    def terms(self, facts) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """All bound terms of one memory: (T, D) phases, (T,) weights and term labels."""
        T, fam, labels = self.family_terms(facts)
        w = self.w
        weights = {"rel": w.rel, "subj": w.subj, "obj": w.obj, "order": w.order, "link": w.link,
                   "sconc": w.sconc, "oconc": w.oconc}
        wts = np.asarray([weights[f[0]] / f[1] for f in fam], np.float64)
        return T, wts, labels

    def family_terms(self, facts) -> tuple[np.ndarray, list[tuple[str, int, int, int]], list[str]]:
        """Bound terms with (family, distance, fact i, fact j); families are "rel", "subj",
        "obj", "sconc", "oconc", "order" and "link"."""
        if not facts:
            return np.zeros((0, self.dim)), [], []
        R = self.roles
        rels = self.relation_atoms([f[1] for f in facts])
        rr = [K.bind(R[_ROLE_R], r) for r in rels]
        out, fam, labels = [], [], []
        concepts = self.concept_atoms(facts)
        for i, (st, rel, ot, sk, ok) in enumerate(facts):
            for role, fam_name, key in ((_ROLE_S, "sconc", sk), (_ROLE_O, "oconc", ok)):
                c = concepts.get(key)
                if c is not None:
                    out.append(K.bind(K.bind(rr[i], R[role]), c)); fam.append((fam_name, 1, i, i))
                    labels.append(f"-{rel}-> {key}" if role == _ROLE_O else f"{key} -{rel}->")
            out.append(rr[i]); fam.append(("rel", 1, i, i)); labels.append(f"{rel}")
            out.append(K.bind(K.bind(rr[i], R[_ROLE_S]), self.type_atom(st))); fam.append(("subj", 1, i, i))
            labels.append(f"{st or 'entity'} -{rel}->")
            out.append(K.bind(K.bind(rr[i], R[_ROLE_O]), self.type_atom(ot))); fam.append(("obj", 1, i, i))
            labels.append(f"-{rel}-> {ot or 'entity'}")
        n = len(facts)
        for i in range(n):
            for j in range(i + 1, min(n, i + 1 + self.order_window)):
                out.append(K.bind(K.bind(R[_NEXT], rels[i]), K.permute(rels[j])))
                fam.append(("order", j - i, i, j))
                labels.append(f"{facts[i][1]} then {facts[j][1]}")
        for i in range(n):
            for j in range(i + 1, min(n, i + 4)):
                for a, ka in (("s", facts[i][3]), ("o", facts[i][4])):
                    for b, kb in (("s", facts[j][3]), ("o", facts[j][4])):
                        if ka is not None and ka == kb:
                            ra = K.bind(rels[i], R[_ROLE_S] if a == "s" else R[_ROLE_O])
                            rb = K.bind(rels[j], R[_ROLE_S] if b == "s" else R[_ROLE_O])
                            out.append(K.bind(K.bind(R[_LINK], ra), K.permute(rb)))
                            fam.append(("link", 1, i, j))
                            labels.append(f"{a}:{facts[i][1]} = {b}:{facts[j][1]}")
        return np.stack(out), fam, labels

    def encode(self, facts) -> np.ndarray | None:
        """One memory's code (D,) phases, or None when it has no facts."""
        T, wts, _ = self.terms(facts)
        if len(T) == 0:
            return None
        return K.bundle_weighted(np.ascontiguousarray(T), wts)

    def unit_terms(self, facts) -> np.ndarray:
        """(T, 2D) unit forms of a memory's terms (for repeated :meth:`explain` calls)."""
        T, _, _ = self.terms(facts)
        return K.to_unit(np.ascontiguousarray(T)) if len(T) else np.zeros((0, 2 * self.dim))

    def explain(self, facts_a, facts_b, top: int = 5, ua: np.ndarray | None = None) -> list[str]:
        """Term labels of ``facts_b`` that match ``facts_a`` best (why two memories rhyme).

        ``ua`` may carry ``unit_terms(facts_a)`` computed once for many ``facts_b``."""
        if ua is None:
            ua = self.unit_terms(facts_a)
        Tb, _, lb = self.terms(facts_b)
        if len(ua) == 0 or len(Tb) == 0:
            return []
        ub = K.to_unit(np.ascontiguousarray(Tb))
        best = (ub @ ua.T).max(axis=1)
        order = np.argsort(-best)
        out = []
        for i in order:
            if best[i] < 0.5:
                break
            if lb[i] not in out:
                out.append(lb[i])
            if len(out) >= top:
                break
        return out


class CodeStore:
    """In-memory int8 codes of every memory with facts, plus exact running statistics.

    Rows: ``ids`` (N,) int64 and ``codes`` (N, 2D) int8. ``s`` (2D,) and ``m`` (2D, 2D) are
    the float64 sums of the dequantised unit rows, so ``kernels.z_stats`` gives the store's
    exact mean and std of similarity for any query.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._codes = np.zeros((0, 2 * dim), np.int8)
        self._ids = np.zeros(0, np.int64)
        self.n = 0
        self.row: dict[int, int] = {}
        self.s = np.zeros(2 * dim)
        self.m = np.zeros((2 * dim, 2 * dim))
        self.id_sum = 0

    @property
    def codes(self) -> np.ndarray:
        return self._codes[: self.n]

    @property
    def ids(self) -> np.ndarray:
        return self._ids[: self.n]

    def _grow(self, need: int) -> None:
        if need > len(self._ids):
            cap = max(need, int(len(self._ids) * 1.5) + 64)
            c = np.zeros((cap, 2 * self.dim), np.int8)
            c[: self.n] = self._codes[: self.n]
            i = np.zeros(cap, np.int64)
            i[: self.n] = self._ids[: self.n]
            self._codes, self._ids = c, i

    def add(self, ids: np.ndarray, q8: np.ndarray, *, update_stats: bool = True) -> None:
        if len(ids) == 0:
            return
        self._grow(self.n + len(ids))
        self._codes[self.n : self.n + len(ids)] = q8
        self._ids[self.n : self.n + len(ids)] = ids
        for j, mid in enumerate(ids):
            self.row[int(mid)] = self.n + j
        self.n += len(ids)
        self.id_sum += int(np.sum(ids))
        if update_stats:
            K.stats_add(self.s, self.m, K.dequantize(np.ascontiguousarray(q8)))

    def remove(self, ids) -> None:
        gone = [int(i) for i in ids if int(i) in self.row]
        if not gone:
            return
        rows = np.asarray([self.row[i] for i in gone])
        K.stats_remove(self.s, self.m, K.dequantize(np.ascontiguousarray(self._codes[rows])))
        for mid in gone:
            r = self.row.pop(mid)
            last = self.n - 1
            if r != last:
                self._codes[r] = self._codes[last]
                moved = int(self._ids[last])
                self._ids[r] = moved
                self.row[moved] = r
            self.n -= 1
            self.id_sum -= mid

    def recompute_stats(self) -> None:
        """Rebuild the sums from the codes (used when the persisted sums are stale)."""
        self.s = np.zeros(2 * self.dim)
        self.m = np.zeros((2 * self.dim, 2 * self.dim))
        for start in range(0, self.n, 8192):
            K.stats_add(self.s, self.m, K.dequantize(np.ascontiguousarray(self._codes[start : min(start + 8192, self.n)])))

    def z_stats(self, qu: np.ndarray) -> tuple[float, float]:
        return K.z_stats(np.asarray(qu, np.float64), self.s, self.m, self.n)
