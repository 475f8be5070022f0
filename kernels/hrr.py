"""FHRR kernels compiled by Numba: bind/unbind, phase similarity and the term postings'
candidate scores (which have a NumPy twin in :mod:`.plain` for processes that have not loaded
Numba; the postings' build is one NumPy sort there). What a single write runs (bundle, quantize, the statistics update) is
in :mod:`.plain`, so that a one-shot process never loads Numba.

Shapes: D is the code dimension (phases), N the number of stored codes. ``u`` denotes the
unit form ``[cos v; sin v] / sqrt(D)`` of shape (2D,), so that ``sim(a, b) = u_a . u_b``.
"""

from __future__ import annotations

import math
import os
import sys


def cache_dir() -> str:
    """Where compiled kernels are kept across processes: ``$NUMBA_CACHE_DIR`` when set, else
    ``$FASTMEM_CACHE_DIR/numba``, else ``$XDG_CACHE_HOME/fastmem/numba`` (``~/.cache/...``).
    One compile per install and user, not per process (``fastmem warmup`` fills it)."""
    from ..util.paths import user_cache

    return os.environ.get("NUMBA_CACHE_DIR") or user_cache("numba")


if "numba" not in sys.modules:  # numba reads its cache folder once, on import
    os.environ["NUMBA_CACHE_DIR"] = cache_dir()

import numba as nb  # noqa: E402
import numpy as np  # noqa: E402

if not nb.config.CACHE_DIR:  # imported earlier by someone else: tell it now, before our kernels
    nb.config.CACHE_DIR = cache_dir()

# what needs no compilation (atoms, a write's kernels, the query-time kernels) is NumPy, in .plain
from .plain import TWO_PI, atom  # noqa: E402


# -- atoms -----------------------------------------------------------------------------------
# -- algebra ---------------------------------------------------------------------------------
@nb.njit(cache=True)
def _wrap(x):
    y = np.empty_like(x)
    yf = y.reshape(-1)
    xf = x.reshape(-1)
    for i in range(xf.size):
        v = xf[i] % TWO_PI
        yf[i] = v if v >= 0.0 else v + TWO_PI
    return y


@nb.njit(cache=True)
def bind(a, b):
    """(a + b) mod 2pi; works on (D,) or (N, D) arrays (broadcasting as NumPy)."""
    return _wrap(a + b)


@nb.njit(cache=True)
def unbind(m, k):
    """(m - k) mod 2pi: exact inverse of :func:`bind`."""
    return _wrap(m - k)


# -- similarity ------------------------------------------------------------------------------
@nb.njit(cache=True)
def sim(a, b):
    """mean(cos(a - b)) of two phase vectors (D,), via the cos/sin identity."""
    d = a.shape[0]
    if d == 0:
        return 0.0
    acc = 0.0
    for j in range(d):
        acc += math.cos(a[j]) * math.cos(b[j]) + math.sin(a[j]) * math.sin(b[j])
    return acc / d


@nb.njit(cache=True)
def sim_many(q, v):
    """sim of one phase query (D,) against phase rows (N, D) -> (N,) float64."""
    n, d = v.shape
    out = np.zeros(n)
    if d == 0:
        return out
    cq = np.cos(q)
    sq = np.sin(q)
    for i in range(n):
        acc = 0.0
        for j in range(d):
            acc += cq[j] * math.cos(v[i, j]) + sq[j] * math.sin(v[i, j])
        out[i] = acc / d
    return out


# -- term postings ---------------------------------------------------------------------------
@nb.njit(cache=True, nogil=True)
def _accumulate(starts, ends, rows, weights, acc, touched, n):
    for i in range(starts.shape[0]):
        w = weights[i]
        for j in range(starts[i], ends[i]):
            r = rows[j]
            if acc[r] == 0.0:
                touched[n] = r
                n += 1
            acc[r] += w
    return n


@nb.njit(cache=True, nogil=True)
def term_scores(starts, ends, rows, weights, estarts, eends, erows, eweights, alive, acc, threshold):
    """Sum of the weights of the query terms each row has, over term postings.

    Term segment i holds the rows ``rows[starts[i]:ends[i]]`` (row numbers, no repeats within a
    segment) and weighs ``weights[i]``; the ``e*`` arguments are more segments over a second
    rows array (the index's recent additions). ``acc`` is a zeroed float64 scratch array
    longer than any row number (left zeroed on return); ``alive[r]`` says whether row r
    counts. Returns the alive rows whose sum is at least ``threshold`` and their sums, in no
    particular order. O(total segment length).
    """
    total = 0
    for i in range(starts.shape[0]):
        total += ends[i] - starts[i]
    for i in range(estarts.shape[0]):
        total += eends[i] - estarts[i]
    touched = np.empty(total, np.int64)
    n = _accumulate(starts, ends, rows, weights, acc, touched, 0)
    n = _accumulate(estarts, eends, erows, eweights, acc, touched, n)
    k = 0
    for t in range(n):
        r = touched[t]
        if alive[r] and acc[r] >= threshold:
            k += 1
    out_rows = np.empty(k, np.int64)
    out_scores = np.empty(k, np.float64)
    k = 0
    for t in range(n):
        r = touched[t]
        if alive[r] and acc[r] >= threshold:
            out_rows[k] = r
            out_scores[k] = acc[r]
            k += 1
        acc[r] = 0.0
    return out_rows, out_scores


def warmup(*, parallel: bool = False) -> None:
    """Compile every kernel on tiny inputs (Numba caches them on disk: a later process only
    loads them). ``parallel`` is accepted for compatibility: no kernel is multi-threaded now
    (the full structural scan it compiled is gone; the term index replaced it)."""
    d = 4
    v = np.zeros((2, d))
    a = atom("warmup", d)
    bind(a, a)
    unbind(v, v)
    sim(a, a)
    sim_many(a, v)
    indptr, rows = np.asarray([0, 2], np.int64), np.arange(2, dtype=np.int64)
    e = np.zeros(0, np.int64)
    term_scores(indptr[:-1], indptr[1:], rows, np.ones(1), e, e, e, np.zeros(0), np.ones(2, np.bool_), np.zeros(2), 0.5)
    from .nn import bias_gelu_  # the embedder's large-batch activation

    bias_gelu_(np.zeros((1, 2), np.float32), np.zeros(2, np.float32))
