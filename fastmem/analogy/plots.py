"""The slot's domain-blind structure view: each memory's plot, clause by clause.

A memory whose text tells a plot (:mod:`fastmem.reader.plot`: two clauses or more with a
content verb) keeps the embeddings of its clauses, rendered without their clothes ("someone
ride south to the something"), in ``plots`` (this module owns the table). Two plots are
compared clause by clause in story order: the kernel

    k(A, B) = sum_ij exp(-(p_i - q_j)^2 / 2 sigma^2) <a_i, b_j>  /  sqrt(k(A, A) k(B, B))

over the clauses' relative positions p, q in [0, 1] and their *whitened* embeddings: every
clause vector is centred on the store's mean plot and scaled by the inverse square root of the
store's covariance of plots (shrunk towards :data:`PRIOR` for a small store, and by
:data:`EPS`), so what every story of the store shares ("someone do something for something")
weighs little and what this plot does weighs much. The same events told in another order
(a process's broken-order distractor) meet off the diagonal and weigh less.

:class:`PlotIndex` holds, in the process, each plot's mean vector (a first stage: the
candidates nearest the turn's mean under the whitening) and the running sums of those means
(their count, sum and sum of outer products: the whitening is exact for the store as it is,
updated by every write and delete, like the structural codes' statistics), and a sample of the
store's plots against which a turn's kernel score is put in standard deviations (z): the gate
asks a plot to stand above the best of N by chance (``sqrt(2 ln N)``) by a margin.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Plot", "Batch", "plot_vectors", "kernel", "kernels", "pairs", "prior_whiten", "PlotIndex", "PlotChanges", "write", "drop", "read", "SIGMA", "EPS"]

#: The positional kernel's width, as a fraction of a story (clauses this far apart in
#: relative position still correspond at exp(-1/2)).
SIGMA = 0.15
#: Regularisation of the whitening: eigenvalues under this weigh as this (unit-length
#: clause vectors spread their variance over 384 directions, about 0.0026 each).
EPS = 0.01
#: The pseudo-count of plots a small store's mean and covariance are shrunk towards the prior
#: with (a store of 50 plots whitens mostly as development text does; ``plot_prior.npz``).
PRIOR = 256
#: How many first-stage candidates the exact kernel reranks.
FIRST = 48
#: The plots of the store a turn's kernel scores are compared with for its z.
SAMPLE = 256


def plot_vectors(embedder, plots: Sequence[list[str] | None]) -> list[Plot | None] | None:
    """Each text's :class:`Plot` from its rendered clauses (None where a text has none), all
    clauses embedded in one batch; None when no text has one."""
    flat = [c for p in plots if p for c in p]
    if not flat:
        return None
    encode = getattr(embedder, "encode", embedder)  # an Embedder, or its encode
    vecs = np.asarray(encode(flat), np.float32)
    out, k = [], 0
    for p in plots:
        if p:
            out.append(Plot(list(p), vecs[k : k + len(p)]))
            k += len(p)
        else:
            out.append(None)
    return out


def _positions(n: int) -> np.ndarray:
    return (np.arange(n, dtype=np.float64) + 0.5) / n


def _gram(n: int, m: int, sigma: float) -> np.ndarray:
    d = _positions(n)[:, None] - _positions(m)[None, :]
    return np.exp(-(d * d) / (2.0 * sigma * sigma))


def kernel(a: np.ndarray, b: np.ndarray, sigma: float = SIGMA) -> float:
    """The plot kernel of two whitened, row-normalised clause matrices (see the module docstring)."""
    num = float((_gram(len(a), len(b), sigma) * (a @ b.T)).sum())
    na = float((_gram(len(a), len(a), sigma) * (a @ a.T)).sum())
    nb = float((_gram(len(b), len(b), sigma) * (b @ b.T)).sum())
    return num / math.sqrt(na * nb) if na > 0 and nb > 0 else 0.0


@dataclass
class Batch:
    """Whitened plots stacked for :func:`kernels`: their clauses one after the other, each
    clause's relative position, where each plot starts, and each plot's own kernel."""

    ids: list[int]
    clauses: np.ndarray
    positions: np.ndarray
    starts: np.ndarray
    own: np.ndarray

    @classmethod
    def of(cls, ids: Sequence[int], whitened: Sequence[np.ndarray], sigma: float = SIGMA) -> Batch:
        if not whitened:
            dim = 0
            return cls([], np.zeros((0, dim), np.float32), np.zeros(0), np.zeros(0, np.int64), np.zeros(0))
        lens = [len(w) for w in whitened]
        own = np.array([float((_gram(len(w), len(w), sigma) * (w @ w.T)).sum()) for w in whitened])
        return cls(list(ids), np.concatenate(whitened), np.concatenate([_positions(n) for n in lens]),
                   np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64), own)


def kernels(a: np.ndarray, batch: Batch, sigma: float = SIGMA) -> np.ndarray:
    """:func:`kernel` of one whitened plot against every plot of ``batch`` (one product)."""
    if not batch.ids:
        return np.zeros(0)
    d = _positions(len(a))[:, None] - batch.positions[None, :]
    weighted = np.exp(-(d * d) / (2.0 * sigma * sigma)) * (a @ batch.clauses.T)
    num = np.add.reduceat(weighted.sum(0), batch.starts)
    na = float((_gram(len(a), len(a), sigma) * (a @ a.T)).sum())
    return num / np.sqrt(np.maximum(na * batch.own, 1e-18))


def pairs(a: np.ndarray, b: np.ndarray, sigma: float = SIGMA) -> list[tuple[int, int, float]]:
    """The clause pairs that carry the kernel of two whitened plots: for each clause of ``a``
    its best counterpart in ``b`` (by weighted similarity), ``(i, j, weight)``, heaviest first."""
    w = _gram(len(a), len(b), sigma) * (a @ b.T)
    out = [(i, int(np.argmax(w[i])), float(w[i].max())) for i in range(len(a))]
    return sorted(out, key=lambda x: -x[2])


_PRIOR: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _prior(dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The mean and covariance of plot vectors over development text (``plot_prior.npz``, made
    by ``bench/fit_plot_prior.py``); for another embedder's dimension, zero and ``I / dim``."""
    if dim not in _PRIOR:
        path = os.path.join(os.path.dirname(__file__), "plot_prior.npz")
        got = None
        if os.path.exists(path):
            with np.load(path) as f:
                if f["mean"].shape == (dim,):
                    got = (f["mean"].astype(np.float64), f["cov"].astype(np.float64))
        _PRIOR[dim] = got or (np.zeros(dim), np.eye(dim) / dim)
    return _PRIOR[dim]


def _inverse_sqrt(cov: np.ndarray) -> np.ndarray:
    vals, vecs = np.linalg.eigh(cov)
    return ((vecs * (1.0 / np.sqrt(np.maximum(vals, 0.0) + EPS))) @ vecs.T).astype(np.float32)


def prior_whiten(vecs: np.ndarray) -> np.ndarray:
    """Clause vectors whitened with the prior alone (no store: ``fastmem.structural_similarity``)."""
    key = ("white", vecs.shape[1])
    if key not in _PRIOR:
        mean, cov = _prior(vecs.shape[1])
        _PRIOR[key] = (mean.astype(np.float32), _inverse_sqrt(cov))
    mean, white = _PRIOR[key]
    x = (np.asarray(vecs, np.float32) - mean) @ white
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-9)


# -- the table ----------------------------------------------------------------------------------
@dataclass
class Plot:
    """A text's plot: its rendered clauses and their embeddings (``(n, dim)`` float32)."""

    clauses: list[str]
    vecs: np.ndarray


def write(db, rows: Iterable[tuple[int, Plot]]) -> list[tuple[int, np.ndarray]]:
    """Store plots ``(memory id, plot)`` inside the caller's transaction; returns ``(id, mean
    vector)`` of each, for :class:`PlotChanges`."""
    out, params = [], []
    for mid, plot in rows:
        v = np.asarray(plot.vecs, np.float32)
        mean = v.mean(0).astype(np.float16)
        params.append((int(mid), len(v), mean.tobytes(), v.astype(np.float16).tobytes(), json.dumps(plot.clauses)))
        out.append((int(mid), mean.astype(np.float32)))
    db.executemany("INSERT OR REPLACE INTO plots(memory_id, n, centroid, vecs, clauses) VALUES (?,?,?,?,?)", params)
    return out


def drop(db, mid: int) -> bool:
    """Delete a memory's plot (its text changes); whether it had one."""
    had = db.execute("SELECT 1 FROM plots WHERE memory_id=?", (int(mid),)).fetchone() is not None
    if had:
        db.execute("DELETE FROM plots WHERE memory_id=?", (int(mid),))
    return had


def read(db, ids: Sequence[int], dim: int) -> dict[int, Plot]:
    """The plots of those of ``ids`` that have one."""
    return {mid: Plot(json.loads(c), np.frombuffer(v, np.float16).astype(np.float32).reshape(n, dim))
            for mid, n, v, c in db.execute(
                "SELECT memory_id, n, vecs, clauses FROM plots WHERE memory_id IN (SELECT value FROM json_each(?))",
                (json.dumps([int(i) for i in ids]),))}


@dataclass
class PlotChanges:
    """Plots written and removed in a transaction, applied to the :class:`PlotIndex` after it commits."""

    added: list[tuple[int, np.ndarray]] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)


class PlotIndex:
    """The store's plots in the process: their mean vectors, the running sums that whiten them,
    and a sample for the z of a turn's score (see the module docstring)."""

    def __init__(self, db, dim: int) -> None:
        self.db = db
        self.dim = dim
        self._lock = threading.Lock()
        self._clear()

    def _clear(self) -> None:
        self.ids = np.zeros(0, np.int64)
        self.means = np.zeros((0, self.dim), np.float32)
        self._row: dict[int, int] = {}
        self.n = 0
        self.s = np.zeros(self.dim)
        self.m = np.zeros((self.dim, self.dim))
        self._white: tuple | None = None
        self._white_n = -1
        self._norms: np.ndarray | None = None  # whitened norms of the means, row by row
        self._norms_for = None
        self._sample: Batch | None = None

    # -- keeping up with the table ---------------------------------------------------------
    def load(self) -> None:
        """Read every plot's mean vector from the table."""
        with self._lock:
            self._clear()
            rows = self.db.execute("SELECT memory_id, centroid FROM plots ORDER BY memory_id").fetchall()
            if rows:
                self._add([r[0] for r in rows],
                          np.frombuffer(b"".join(r[1] for r in rows), np.float16).astype(np.float32).reshape(len(rows), -1))

    def apply(self, changes: PlotChanges) -> None:
        """After commit: the plots removed, then the ones written."""
        with self._lock:
            if changes.removed:
                self._remove(changes.removed)
            if changes.added:
                self._remove([mid for mid, _ in changes.added])  # written again (an update)
                self._add([mid for mid, _ in changes.added], np.stack([v for _, v in changes.added]))

    def catch_up(self, mids: Sequence[int]) -> None:
        """Another connection changed these memories' plots (or codes): read them again."""
        mids = [int(m) for m in mids]
        if not mids:
            return
        rows = self.db.execute("SELECT memory_id, centroid FROM plots WHERE memory_id IN (SELECT value FROM json_each(?))",
                               (json.dumps(mids),)).fetchall()
        with self._lock:
            self._remove(mids)
            if rows:
                self._add([r[0] for r in rows],
                          np.frombuffer(b"".join(r[1] for r in rows), np.float16).astype(np.float32).reshape(len(rows), -1))

    def _add(self, mids: list[int], means: np.ndarray) -> None:
        base = len(self.ids)
        self.ids = np.concatenate([self.ids, np.asarray(mids, np.int64)])
        self.means = np.concatenate([self.means, means.astype(np.float32)])
        for i, mid in enumerate(mids):
            self._row[int(mid)] = base + i
        x = means.astype(np.float64)
        self.n += len(mids)
        self.s += x.sum(0)
        self.m += x.T @ x

    def _remove(self, mids: Sequence[int]) -> None:
        gone = [self._row[m] for m in mids if m in self._row]
        if not gone:
            return
        x = self.means[gone].astype(np.float64)
        self.n -= len(gone)
        self.s -= x.sum(0)
        self.m -= x.T @ x
        keep = np.ones(len(self.ids), bool)
        keep[gone] = False
        self.ids, self.means = self.ids[keep], self.means[keep]
        if self._norms is not None:
            self._norms = self._norms[keep[: len(self._norms)]]
        self._row = {int(m): i for i, m in enumerate(self.ids)}
        self._sample = None

    # -- the whitening -----------------------------------------------------------------------
    def whitening(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mean, W)``: clause vectors are whitened as ``(v - mean) @ W``. The covariance of the
        plots' means, shrunk towards ``EPS``-scaled identity with :data:`PRIOR` pseudo-plots,
        recomputed when the store's plots grew or shrank by a twentieth."""
        with self._lock:
            n = self.n
            if self._white is not None and abs(n - self._white_n) <= max(8, self._white_n // 20):
                return self._white
            prior = _prior(self.dim)
            w = n / (n + PRIOR)
            if n:
                own = self.s / n
                mean = w * own + (1 - w) * prior[0]
                cov = w * (self.m / n - np.outer(own, own)) + (1 - w) * prior[1]
            else:
                mean, cov = prior
            self._white = (mean.astype(np.float32), _inverse_sqrt(cov))
            self._white_n = n
            self._sample = None
            return self._white

    def whiten(self, vecs: np.ndarray) -> np.ndarray:
        """Clause vectors whitened and row-normalised."""
        mean, white = self.whitening()
        x = (np.asarray(vecs, np.float32) - mean) @ white
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-9)

    # -- a turn's plot against the store ---------------------------------------------------
    def nearest(self, turn: np.ndarray, k: int, allowed=None, skip=frozenset()) -> list[int]:
        """The ``k`` plots whose whitened mean is nearest the mean of the turn's clause vectors
        (``turn``), of ``allowed`` when given, never one of ``skip``: one product with the
        store's means (``(m - mean) . W W^T (t - mean)``), over their whitened norms (kept
        with the whitening)."""
        if not len(self.ids):
            return []
        mean, white = self.whitening()
        q = white @ ((np.asarray(turn, np.float32).mean(0) - mean) @ white)
        with self._lock:
            ids, means, norms = self.ids, self.means, self._whitened_norms(mean, white)
        score = ((means @ q) - float(mean @ q)) / np.maximum(norms, 1e-9)
        order = np.argsort(-score)
        out = []
        for i in order:
            mid = int(ids[i])
            if mid in skip or (allowed is not None and mid not in allowed):
                continue
            out.append(mid)
            if len(out) >= k:
                break
        return out

    def _whitened_norms(self, mean: np.ndarray, white: np.ndarray) -> np.ndarray:
        """``|(m - mean) W|`` of every plot's mean (under the lock), computed for the rows added
        since the whitening last changed."""
        have = self._norms
        if have is None or self._norms_for is not white:
            have = np.zeros(0, np.float32)
        if len(have) < len(self.ids):
            tail = (self.means[len(have):] - mean) @ white
            have = np.concatenate([have, np.linalg.norm(tail, axis=1).astype(np.float32)])
        self._norms, self._norms_for = have, white
        return have

    def chance(self, turn_white: np.ndarray) -> tuple[float, float]:
        """Mean and std of the kernel between the turn's (whitened) plot and a sample of the
        store's plots: the scale its candidates' scores are read on."""
        sample = self._sample_plots()
        if len(sample.ids) < 2:
            return 0.0, 1.0
        got = kernels(turn_white, sample)
        return float(got.mean()), max(float(got.std()), 1e-6)

    def batch(self, plots: dict[int, Plot]) -> Batch:
        """Stored plots (:func:`read`), whitened and stacked for :func:`kernels`."""
        return Batch.of(list(plots), [self.whiten(p.vecs) for p in plots.values()])

    def _sample_plots(self) -> Batch:
        with self._lock:
            if self._sample is not None:
                return self._sample
            ids = self.ids
        if len(ids) > SAMPLE:
            ids = np.random.default_rng(len(ids)).choice(ids, SAMPLE, replace=False)
        sample = self.batch(read(self.db, ids.tolist(), self.dim))
        with self._lock:
            self._sample = sample
        return sample
