"""Postings of the structural terms of every memory: the analogy slot's candidate search.

A memory's structural code bundles its distinct *terms* (:meth:`StructureEncoder.term_keys`);
the slot's exact alignment with a turn is the summed weight of the terms they share. This
index maps each term (by a stable 64-bit hash of its key) to the memories that have it, so
the memories whose alignment clears the gate are found by adding weights along the turn's
terms' postings (:func:`fastmem.kernels.term_scores`) instead of scanning every code: the
cost follows the postings of the turn's terms, and the scores are the exact alignments, not a
noisy estimate from the codes.

Layout: a CSR *base* (sorted unique hashes, ``indptr``, rows) built in one pass, plus a
*delta* of memories added since (per-term growable arrays), merged into a new base when it
holds more than a tenth of the postings. Forgotten memories are masked (``alive``) and
dropped at the next merge.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import numpy as np

from .. import kernels as K

__all__ = ["TermIndex", "term_hash", "term_hashes"]

_HASHES: dict[tuple, int] = {}


def term_hash(key: tuple) -> int:
    """Stable signed 64-bit hash of a term key (BLAKE2b of its JSON form)."""
    h = _HASHES.get(key)
    if h is None:
        h = int.from_bytes(hashlib.blake2b(json.dumps(key).encode(), digest_size=8).digest(), "little", signed=True)
        if len(_HASHES) > 500_000:
            _HASHES.clear()
        _HASHES[key] = h
    return h


def term_hashes(keys: Sequence[tuple]) -> np.ndarray:
    """(T,) int64 hashes of term keys."""
    return np.fromiter((term_hash(k) for k in keys), np.int64, len(keys))


class TermIndex:
    """Term hash -> memory ids, with exact weighted overlap queries (see the module docstring).

    Postings hold *slots*, not memory ids: each addition takes a new slot (an updated memory's
    old slot just dies), and a merge renumbers the live ones."""

    MERGE_SHARE = 0.1
    MERGE_MIN = 50_000

    def __init__(self) -> None:
        # the base: sorted unique hashes, CSR pointers and slots, built on first use from the
        # (hash, slot) pairs (a store that is opened only to be listed never compiles a kernel)
        self._csr: tuple[np.ndarray, np.ndarray, np.ndarray] | None = (
            np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64))
        self._raw: tuple[np.ndarray, np.ndarray] | None = None
        self._base_n = 0
        self._delta: dict[int, list] = {}  # hash -> [array of slots, size]
        self._delta_n = 0
        self.alive = np.zeros(0, np.bool_)  # per slot
        self._mid = np.zeros(0, np.int64)  # slot -> memory id
        self._slot: dict[int, int] = {}  # memory id -> its live slot
        self._next = 0
        self._acc = np.zeros(0)  # scratch of the Numba term_scores
        #: Counts every change of the contents (what a saved copy is compared with).
        self.version = 0

    @property
    def n(self) -> int:
        """Memories in the index."""
        return len(self._slot)

    def count_of(self, ids) -> int:
        """How many of ``ids`` are in the index."""
        return sum(1 for i in ids if i in self._slot)

    @property
    def postings(self) -> int:
        return self._base_n + self._delta_n

    def _room(self, slot: int) -> None:
        if slot >= len(self.alive):
            cap = max(slot + 1, int(len(self.alive) * 1.5) + 1024)
            for name, dtype in (("alive", np.bool_), ("_mid", np.int64)):
                new = np.zeros(cap, dtype)
                new[: len(getattr(self, name))] = getattr(self, name)
                setattr(self, name, new)
            self._acc = np.zeros(cap)

    def build(self, ids: np.ndarray, hashes: Sequence[np.ndarray]) -> None:
        """Replace the index with these memories' terms (one pass, no per-term Python)."""
        counts = np.fromiter((len(h) for h in hashes), np.int64, len(hashes))
        flat = np.concatenate(list(hashes)) if len(hashes) else np.zeros(0, np.int64)
        self.build_flat(ids, flat, counts)

    def build_flat(self, ids: np.ndarray, flat: np.ndarray, counts: np.ndarray) -> None:
        """:meth:`build` from every memory's hashes one after the other (``flat``) and how many
        each has (``counts``, in the order of ``ids``)."""
        ids = np.asarray(ids, np.int64)
        slots = np.arange(len(ids), dtype=np.int64)
        self._set_base(np.asarray(flat, np.int64), np.repeat(slots, counts))
        self._fill(ids)

    def _fill(self, ids: np.ndarray) -> None:
        """Slots ``0..len(ids)-1`` hold ``ids``, all alive; no delta."""
        self._delta, self._delta_n = {}, 0
        self.alive = np.zeros(0, np.bool_)
        self._mid = np.zeros(0, np.int64)
        self._room(len(ids))
        self.alive[: len(ids)] = True
        self._mid[: len(ids)] = ids
        self._slot = dict(zip(ids.tolist(), range(len(ids))))
        self._next = len(ids)
        self.version += 1

    @classmethod
    def from_postings(cls, keys: np.ndarray, indptr: np.ndarray, rows: np.ndarray, ids: np.ndarray) -> TermIndex:
        """An index of the postings :meth:`postings_of_live` gave (slot ``i`` is ``ids[i]``)."""
        ti = cls()
        ti._csr, ti._raw, ti._base_n = (keys, indptr, rows), None, len(rows)
        ti._fill(np.asarray(ids, np.int64))
        return ti

    def postings_of_live(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(keys, indptr, rows, ids)``: the live memories' postings as one CSR base whose slot
        ``i`` is memory ``ids[i]`` (the delta and forgotten slots folded in first)."""
        if self._delta_n or not self.alive[: self._next].all():
            self.merge()
        keys, indptr, rows = self._base()
        return keys, indptr, rows, self._mid[: self._next].copy()

    def live_ids(self) -> np.ndarray:
        """The memories in the index (in no particular order)."""
        return self._mid[: self._next][self.alive[: self._next]]

    def _set_base(self, flat: np.ndarray, rows: np.ndarray) -> None:
        self._raw, self._csr, self._base_n = (flat, rows), None, len(flat)

    def _base(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The base postings ``(keys, indptr, rows)``, built now if they are not yet."""
        if self._csr is None:
            self._csr, self._raw = K.postings_of(*self._raw), None
        return self._csr

    def add(self, mid: int, hashes: np.ndarray) -> None:
        """A memory's terms (new, or replacing its earlier ones); merged into the base now and then."""
        mid = int(mid)
        self.remove([mid])
        slot = self._next
        self._next += 1
        self._room(slot)
        hs = np.unique(hashes).tolist()
        for h in hs:
            entry = self._delta.get(h)
            if entry is None:
                entry = self._delta[h] = [np.empty(4, np.int64), 0]
            arr, size = entry
            if size == len(arr):
                arr = np.resize(arr, 2 * size)
                entry[0] = arr
            arr[size] = slot
            entry[1] = size + 1
        self._delta_n += len(hs)
        self.alive[slot] = True
        self._mid[slot] = mid
        self._slot[mid] = slot
        self.version += 1
        if self._delta_n > max(self.MERGE_MIN, self.MERGE_SHARE * self._base_n):
            self.merge()

    def add_many(self, ids, hashes: Sequence[np.ndarray]) -> None:
        """:meth:`add` for a batch: one large next to the base (a bulk load) is folded into
        the base at once, in one pass over arrays; a small one goes to the delta."""
        ids = [int(m) for m in ids]
        new = sum(len(h) for h in hashes)
        if new < self.MERGE_SHARE * self._base_n or len(ids) < 64 or len(set(ids)) != len(ids):
            for mid, hs in zip(ids, hashes):
                self.add(mid, hs)
            return
        self.remove(ids)
        first = self._next
        slots = np.arange(first, first + len(ids), dtype=np.int64)
        self._room(first + len(ids) - 1)
        self.alive[slots] = True
        self._mid[slots] = ids
        self._slot.update(zip(ids, slots.tolist()))
        self._next += len(ids)
        uniq = [np.unique(h) for h in hashes]
        counts = np.fromiter((len(u) for u in uniq), np.int64, len(uniq))
        self.merge(extra=(np.concatenate(uniq).astype(np.int64), np.repeat(slots, counts)))

    def remove(self, mids) -> None:
        for mid in mids:
            slot = self._slot.pop(int(mid), None)
            if slot is not None:
                self.alive[slot] = False
                self.version += 1

    def merge(self, extra: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Fold the delta (and ``extra`` ``(hashes, slots)`` pairs) into a new base, dropping
        dead slots and renumbering the live ones."""
        if self._csr is None:  # never queried: the pairs are still at hand
            flat, rows = [self._raw[0]], [self._raw[1]]
        else:
            keys, indptr, base_rows = self._csr
            flat, rows = [np.repeat(keys, np.diff(indptr))], [base_rows]
        for h, (arr, size) in self._delta.items():
            flat.append(np.full(size, h, np.int64))
            rows.append(arr[:size])
        if extra is not None:
            flat.append(extra[0])
            rows.append(extra[1])
        flat, rows = np.concatenate(flat), np.concatenate(rows)
        keep = self.alive[rows]
        live = np.flatnonzero(self.alive[: self._next])
        renumber = np.full(self._next, -1, np.int64)
        renumber[live] = np.arange(len(live))
        self._set_base(flat[keep], renumber[rows[keep]])
        self._fill(self._mid[live])

    def query(self, hashes: np.ndarray, weights: np.ndarray, threshold: float, limit: int,
              allowed: set[int] | frozenset[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Memories whose shared terms weigh at least ``threshold``, heaviest first, at most
        ``limit``: (ids, summed weights). ``allowed``: only these ids (filtered before the
        ``limit`` cut, so a small scope keeps all of its candidates whatever others hold)."""
        hashes = np.asarray(hashes, np.int64)
        weights = np.asarray(weights, np.float64)
        keys, indptr, base_rows = self._base()
        pos = np.searchsorted(keys, hashes)
        hit = (pos < len(keys)) & (keys[np.minimum(pos, len(keys) - 1)] == hashes) \
            if len(keys) else np.zeros(len(hashes), bool)
        starts = indptr[pos[hit]]
        ends = indptr[pos[hit] + 1]
        w = weights[hit]
        extra = [(self._delta[h][0][: self._delta[h][1]], wt) for h, wt in zip(hashes.tolist(), weights.tolist())
                 if h in self._delta]
        if extra:  # recent additions: more segments over one small array
            erows = np.concatenate([a for a, _ in extra])
            lens = np.fromiter((len(a) for a, _ in extra), np.int64, len(extra))
            estarts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
            eends = estarts + lens
            ew = np.fromiter((wt for _, wt in extra), np.float64, len(extra))
        else:
            erows = estarts = eends = np.zeros(0, np.int64)
            ew = np.zeros(0)
        if not len(starts) and not len(estarts):
            return np.zeros(0, np.int64), np.zeros(0)
        if K.compiled_loaded():
            slots, sc = K.term_scores(starts, ends, base_rows, w, estarts, eends, erows, ew, self.alive, self._acc,
                                      float(threshold))
        else:  # a process that only reads (a CLI recall): NumPy, no Numba load
            slots, sc = K.term_scores_bincount(starts, ends, base_rows, w, estarts, eends, erows, ew, self.alive,
                                               max(float(threshold), 1e-12))
        ids = self._mid[slots]
        if allowed is not None:
            keep = np.fromiter((i in allowed for i in ids.tolist()), bool, len(ids))
            ids, sc = ids[keep], sc[keep]
        if len(ids) > limit:
            top = np.argpartition(-sc, limit - 1)[:limit]
            ids, sc = ids[top], sc[top]
        order = np.lexsort((ids, -sc))
        return ids[order], sc[order]
