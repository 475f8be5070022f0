"""The windows of long memories: a long message is found by its best part.

A memory longer than the model's window (256 word pieces; :class:`fastmem.models.embedder.MiniLM`
splits it into overlapping windows of 160 words) is embedded as the mean of its windows: the
vector index holds that mean. Averaging the windows of a long markdown answer dilutes what
each part is about, so a question about one paragraph of it misses. Each such memory's window
vectors are kept as well (the ``windows`` table, owned here), and the vector channel scores a
long memory by the better of its mean and its best-matching window (:class:`WindowIndex`,
max over the stored window vectors at query time; the figures that chose it are in
``docs/defaults.md``). A memory of one window has no row here (its mean is its window), so
short-turn corpora such as LoCoMo are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["write", "drop", "clear", "WindowIndex"]


def write(db, rows: Sequence[tuple[int, np.ndarray]]) -> None:
    """Store ``(memory id, its window vectors (n, dim))`` (replacing what a memory had)."""
    db.executemany("INSERT OR REPLACE INTO windows(memory_id, n, vecs) VALUES (?,?,?)",
                   [(mid, int(w.shape[0]), np.asarray(w, np.float32).tobytes()) for mid, w in rows])


def drop(db, mid: int) -> None:
    """Forget a memory's windows (its text changed)."""
    db.execute("DELETE FROM windows WHERE memory_id=?", (mid,))


def clear(db) -> None:
    """Forget every memory's windows (the store's vectors came from another model)."""
    db.execute("DELETE FROM windows")


class WindowIndex:
    """The store's window vectors in memory, reloaded when the table changed (its largest
    ``rev``, which every write raises, or its row count). Exact search over the windows of long
    memories only (its cost by window count: ``bench/test_bench_store.py -k best_window``); a
    store with a hundred thousand windows belongs in an approximate index of its own."""

    def __init__(self, db, dim: int) -> None:
        self.db, self.dim = db, dim
        self._key = None
        self._vecs = np.zeros((0, dim), np.float32)
        self._owner = np.zeros(0, np.int64)

    def _load(self) -> None:
        key = self.db.execute("SELECT max(rev), count(*) FROM windows").fetchone()
        if key == self._key:
            return
        vecs, owner = [], []
        for mid, n, blob in self.db.execute("SELECT memory_id, n, vecs FROM windows"):
            v = np.frombuffer(blob, np.float32)
            if v.size != n * self.dim:  # another model's dimension: not ours to score
                continue
            vecs.append(v.reshape(n, self.dim))
            owner.append(np.full(n, mid, np.int64))
        self._vecs = np.vstack(vecs) if vecs else np.zeros((0, self.dim), np.float32)
        self._owner = np.concatenate(owner) if owner else np.zeros(0, np.int64)
        self._key = key

    def best(self, vec: np.ndarray, k: int, members=None) -> dict[int, float]:
        """The ``k`` long memories whose best window is closest to ``vec``: ``{id: cosine}``
        (``members``: only these ids; None: all)."""
        self._load()
        if not len(self._owner) or k <= 0:
            return {}
        sims = self._vecs @ np.asarray(vec, np.float32)
        if members is not None:
            keep = np.isin(self._owner, np.fromiter(members, np.int64, len(members)))
            sims = np.where(keep, sims, -np.inf)
        m = min(len(sims), 8 * k)  # a memory has several windows: room for the k best owners
        top = np.argpartition(-sims, m - 1)[:m] if m < len(sims) else np.arange(len(sims))
        order = top[np.argsort(-sims[top])]
        out: dict[int, float] = {}
        for i in order:
            if not np.isfinite(sims[i]) or len(out) >= k:
                break
            out.setdefault(int(self._owner[i]), float(sims[i]))
        return out
