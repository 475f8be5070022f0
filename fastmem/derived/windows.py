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

**A best window is judged against chance.** The best of a long memory's several windows
stands above its mean for any turn (the maximum of several draws): a 600-word markdown answer
about something else outranked a one-line statement that a plain truncating embedding puts
first. So a long memory's best window counts by what it gains over the memory's mean *beyond
what the long memories of the store gain for this turn* (the median gain, :meth:`WindowIndex.best`);
a paragraph that is about the turn stands out of its answer, one that is not gains what they
all gain.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["write", "drop", "clear", "WindowIndex", "CHANCE_GAIN", "MIN_LONG", "GAIN_SAMPLE"]

#: What a long memory's best window gains over its mean by chance, when the store (or scope)
#: holds too few long memories to measure it for the turn (:data:`MIN_LONG`): the median over
#: the development chats' questions and long answers that are not their evidence (0.028).
CHANCE_GAIN = 0.03
#: Long memories needed to measure the chance gain for a turn (their median gain).
MIN_LONG = 8
#: The chance gain is the median over an even sample of at most about this many of them.
GAIN_SAMPLE = 1024


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
        self._ids = np.zeros(0, np.int64)  # each long memory once, in window order
        self._starts = np.zeros(0, np.int64)  # where its windows start in _vecs
        self._means = np.zeros((0, dim), np.float32)  # its mean vector (the index's)

    def _load(self) -> None:
        key = self.db.execute("SELECT max(rev), count(*) FROM windows").fetchone()
        if key == self._key:
            return
        vecs, ids = [], []
        for mid, n, blob in self.db.execute("SELECT memory_id, n, vecs FROM windows"):
            v = np.frombuffer(blob, np.float32)
            if v.size != n * self.dim:  # another model's dimension: not ours to score
                continue
            vecs.append(v.reshape(n, self.dim))
            ids.append(mid)
        self._vecs = np.vstack(vecs) if vecs else np.zeros((0, self.dim), np.float32)
        self._ids = np.array(ids, np.int64)
        self._starts = np.cumsum([0] + [len(v) for v in vecs])[:-1].astype(np.int64)
        means = np.array([v.sum(0) for v in vecs], np.float32).reshape(len(vecs), self.dim)
        self._means = means / np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
        self._key = key

    def count(self, members=None) -> int:
        """How many long memories the store holds (``members``: only these ids; None: all)."""
        self._load()
        if members is None or not len(self._ids):
            return len(self._ids)
        return int(np.isin(self._ids, np.fromiter(members, np.int64, len(members))).sum())

    def best(self, vec: np.ndarray, k: int, members=None) -> dict[int, float]:
        """The ``k`` long memories whose best window scores highest for ``vec``: ``{id: score}``
        (``members``: only these ids; None: all). A memory's score is its best window's cosine
        less the chance gain: the median, over the long memories searched (an even sample of
        about :data:`GAIN_SAMPLE` of them), of how far a memory's best window stands above its
        mean (:data:`CHANCE_GAIN` when fewer than :data:`MIN_LONG` are searched). The vector
        channel keeps the better of that and the memory's mean
        (:func:`fastmem.recall.channels.vector.with_windows`)."""
        self._load()
        if not len(self._ids) or k <= 0:
            return {}
        q = np.asarray(vec, np.float32)
        best = np.maximum.reduceat(self._vecs @ q, self._starts)
        ids = self._ids
        if members is not None:
            keep = np.isin(ids, np.fromiter(members, np.int64, len(members)))
            if not keep.any():
                return {}
            best, ids, means = best[keep], ids[keep], self._means[keep]
        else:
            means = self._means
        if len(ids) >= MIN_LONG:  # the median gain, from an even sample of the memories searched
            step = max(1, len(ids) // GAIN_SAMPLE)
            chance = float(np.median(best[::step] - means[::step] @ q))
        else:
            chance = CHANCE_GAIN
        score = best - chance
        if len(score) > k:
            top = np.argpartition(-score, k - 1)[:k]
            top = top[np.argsort(-score[top], kind="stable")]
        else:
            top = np.argsort(-score, kind="stable")
        return {int(ids[i]): float(score[i]) for i in top}
