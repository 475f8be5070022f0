"""The kernels that need no compilation, in NumPy: symbol atoms, what a write runs (the
bundle of a memory's terms, its int8 form, the update of the store statistics) and what a
recall runs (the unit form of a turn's terms, the store-wide z statistics, code
similarities and the term-postings scores). Neither a write nor a recall imports Numba, so
a fresh process (a CLI call, a host's one-shot turn) pays neither Numba's import nor its
first dispatch (~1 s and ~150 MB together on a 2-core machine); their cost is one
vectorised call, one BLAS call or one ``bincount`` each, measured in
``bench/test_bench_kernels.py``.
"""

from __future__ import annotations

import functools
import hashlib
import math

import numpy as np

__all__ = ["Q8_SCALE", "TWO_PI", "atom", "atoms", "bundle", "bundle_weighted", "dequantize", "permute",
           "postings_of", "quantize", "sims_q8_many", "stats_add", "stats_remove", "term_scores_bincount",
           "to_unit", "z_stats"]

TWO_PI = 2.0 * math.pi
Q8_SCALE = 127.0


# -- atoms -----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=8_192)  # 32 MiB at dim 512
def _atom_cached(symbol: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(symbol.encode("utf-8"), digest_size=8).digest(), "little")
    rng = np.random.Generator(np.random.PCG64(seed))
    a = rng.uniform(0.0, TWO_PI, dim)
    a.setflags(write=False)
    return a


def atom(symbol: str, dim: int) -> np.ndarray:
    """Deterministic phase vector of a symbol.

    Derivation (stable across processes, platforms and fastmem versions): the 64-bit seed is
    the little-endian BLAKE2b-64 digest of the UTF-8 symbol; the phases are
    ``numpy.random.Generator(PCG64(seed)).uniform(0, 2pi, dim)`` (NumPy guarantees this
    stream). Cached; the returned array is read-only.

    Returns
    -------
    ndarray, float64, shape (dim,)
    """
    return _atom_cached(str(symbol), int(dim))


def atoms(symbols, dim: int) -> np.ndarray:
    """Stack of :func:`atom` for each symbol, shape (len(symbols), dim)."""
    out = np.empty((len(symbols), dim), np.float64)
    for i, s in enumerate(symbols):
        out[i] = atom(s, dim)
    return out


def permute(v: np.ndarray, shift: int = 1) -> np.ndarray:
    """Cyclic shift of the phases (last axis): a fixed permutation that makes order matter.

    ``bind(a, permute(b))`` differs from ``bind(b, permute(a))``, unlike ``bind(a, b)``.
    """
    return np.roll(v, shift, axis=-1)


# -- a memory's code -------------------------------------------------------------------------
def _angle(c: np.ndarray, s: np.ndarray) -> np.ndarray:
    a = np.arctan2(s, c)  # exactly cancelled sums: atan2(0, 0) = 0
    a[a < 0.0] += TWO_PI
    return a


def bundle(v: np.ndarray) -> np.ndarray:
    """Circular mean of the rows of ``v`` (N, D) -> (D,) phases in [0, 2pi), equal weights:
    ``angle(sum_i exp(i v_i))``; where the sum cancels to exactly zero the phase is 0."""
    v = np.asarray(v, np.float64)
    return _angle(np.cos(v).sum(axis=0), np.sin(v).sum(axis=0))


def bundle_weighted(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted circular mean of the rows of ``v`` (N, D): ``angle(sum_i w_i exp(i v_i))``."""
    v = np.asarray(v, np.float64)
    w = np.asarray(w, np.float64)
    return _angle(w @ np.cos(v), w @ np.sin(v))


def quantize(v: np.ndarray) -> np.ndarray:
    """Phases (N, D) -> int8 (N, 2D): ``round(127 [cos v; sin v])`` (halves to even)."""
    v = np.asarray(v, np.float64)
    return np.rint(Q8_SCALE * np.concatenate([np.cos(v), np.sin(v)], axis=1)).astype(np.int8)


# -- query-time kernels ----------------------------------------------------------------------
def to_unit(v: np.ndarray) -> np.ndarray:
    """Phases (N, D) -> float64 (N, 2D) rows ``[cos v; sin v] / sqrt(D)``."""
    v = np.asarray(v, np.float64)
    d = v.shape[1]
    out = np.concatenate([np.cos(v), np.sin(v)], axis=1)
    if d:
        out /= math.sqrt(d)
    return out


def z_stats(qu, s: np.ndarray, m: np.ndarray, n: int) -> tuple[float, float]:
    """Exact mean and standard deviation of ``sim(q, .)`` over the N codes the sums describe.

    mean = q.s / N; E[sim^2] = q^T M q / N; cost O(D^2) (one matrix-vector product),
    independent of N. Returns (mean, std); (0, 0) for an empty store.

    Parameters
    ----------
    qu : ndarray (2D,)
        Unit form of the query.
    s : ndarray (2D,), m : ndarray (2D, 2D)
        Running sums of the stored unit rows and of their outer products.
    n : int
        Number of stored codes.
    """
    if n <= 0:
        return 0.0, 0.0
    qu = np.asarray(qu, np.float64)
    mean = float(qu @ s) / n
    var = float(qu @ (m @ qu)) / n - mean * mean
    return mean, math.sqrt(var) if var > 0.0 else 0.0


def term_scores_bincount(starts, ends, rows, weights, estarts, eends, erows, eweights, alive,
                         threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fastmem.kernels.hrr.term_scores` by ``bincount`` (no scratch array): the same
    rows and sums (each row's sum adds its segments' weights in segment order), by row
    number. ``threshold`` must be positive. 100k memories: 9.1 ms median against the Numba
    loop's 4.8 ms, for a process that has not loaded Numba (which costs ~1 s to load)."""
    parts = [rows[a:b] for a, b in zip(np.asarray(starts).tolist(), np.asarray(ends).tolist())]
    parts += [erows[a:b] for a, b in zip(np.asarray(estarts).tolist(), np.asarray(eends).tolist())]
    lens = np.fromiter((len(p) for p in parts), np.int64, len(parts))
    if not lens.sum():
        return np.zeros(0, np.int64), np.zeros(0)
    hit = np.concatenate(parts).astype(np.int64, copy=False)
    w = np.repeat(np.concatenate([np.asarray(weights, np.float64), np.asarray(eweights, np.float64)]), lens)
    acc = np.bincount(hit, weights=w)
    keep = np.flatnonzero(acc >= threshold)  # positive: only rows a segment touched
    keep = keep[np.asarray(alive)[keep]]
    return keep.astype(np.int64), acc[keep]


def _query_scale(qu: np.ndarray, d2: int) -> np.ndarray:
    # u rows are q8 / (127 sqrt(D)); fold that constant into the query once
    return (np.asarray(qu, np.float64) / (Q8_SCALE * math.sqrt(max(d2 // 2, 1)))).astype(np.float32)


def sims_q8_many(codes: np.ndarray, qus: np.ndarray) -> np.ndarray:
    """Many unit queries (m, 2D) against int8 codes (N, 2D) -> (m, N) float32 (BLAS)."""
    d2 = codes.shape[1]
    q = np.stack([_query_scale(x, d2) for x in np.atleast_2d(qus)]) if len(qus) else np.zeros((0, d2), np.float32)
    return q @ codes.astype(np.float32).T


def postings_of(hashes: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR postings from ``(term hash, row)`` pairs: the sorted distinct hashes ``keys``,
    ``indptr`` (len(keys) + 1,) and each term's rows in the order given, by one stable sort
    (O(pairs log pairs) whatever the number of distinct terms: 6.9M pairs in about 1.2 s, where
    ``np.unique(..., return_inverse=True)`` and a counting sort took 2.3-3.4 s)."""
    hashes = np.asarray(hashes, np.int64)
    rows = np.asarray(rows, np.int64)
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if len(ordered) else order[:0]
    indptr = np.empty(len(starts) + 1, np.int64)
    indptr[:-1], indptr[-1] = starts, len(ordered)
    return ordered[starts], indptr, rows[order]


# -- store-wide statistics -------------------------------------------------------------------
def dequantize(q: np.ndarray) -> np.ndarray:
    """int8 (N, 2D) -> float64 unit rows (N, 2D), the ``u`` that the statistics sum."""
    q = np.asarray(q)
    d2 = q.shape[1]
    r = 1.0 / (Q8_SCALE * math.sqrt(d2 // 2)) if d2 > 0 else 0.0
    return q.astype(np.float64) * r


def _stats_update(s: np.ndarray, m: np.ndarray, u: np.ndarray, sign: float) -> None:
    if not len(u):
        return
    u = np.ascontiguousarray(u, np.float64)
    s += sign * u.sum(axis=0)
    if len(u) <= 16 and m.flags.c_contiguous:
        # A few rows (one write): BLAS rank-1 updates in place, no temporary D^2 matrix
        # (0.09 ms a row at D = 512 against 1.5 ms for ``m += u.T @ u``). M is symmetric and
        # so is each update, so updating its Fortran-ordered view ``m.T`` updates ``m``.
        from scipy.linalg.blas import dger

        mt = m.T
        for row in u:
            out = dger(sign, row, row, a=mt, overwrite_a=True)
            if out is not mt and not np.shares_memory(out, mt):  # never expected: BLAS copied
                mt[...] = out
    else:  # a batch (an import, a bulk load, a rebuild): one BLAS product
        m += sign * (u.T @ u)


def stats_add(s: np.ndarray, m: np.ndarray, u: np.ndarray) -> None:
    """Add unit rows ``u`` (n, 2D) to the running sums in place: s += sum u, M += u^T u."""
    _stats_update(s, m, u, 1.0)


def stats_remove(s: np.ndarray, m: np.ndarray, u: np.ndarray) -> None:
    """Remove unit rows ``u`` (n, 2D) from the running sums in place."""
    _stats_update(s, m, u, -1.0)
