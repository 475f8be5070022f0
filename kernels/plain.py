"""The kernels that need no compilation, in NumPy: symbol atoms, and what a recall runs (the
unit form of a turn's terms, the store-wide z statistics, code similarities and the
term-postings scores). A recall imports nothing of Numba, so a fresh process
(a CLI call, a host's first turn) pays neither Numba's import nor its first dispatch
(~1 s together on a 2-core machine); their cost is one BLAS call or one ``bincount`` each,
measured in ``bench/test_bench_kernels.py`` against the Numba loops they replaced.
"""

from __future__ import annotations

import functools
import hashlib
import math

import numpy as np

__all__ = ["Q8_SCALE", "TWO_PI", "atom", "atoms", "dequantize", "permute", "postings_csr_sorted", "sims_q8_many",
           "stats_add", "stats_remove", "term_scores_bincount", "to_unit", "z_stats"]

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


def postings_csr_sorted(term_of: np.ndarray, row_of: np.ndarray, n_terms: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fastmem.kernels.hrr.postings_csr` by a stable sort: the same ``indptr`` and rows,
    O(pairs log pairs) (2M pairs: 0.42 s against the counting sort's 0.11 s), for a process
    that has not loaded Numba (which costs ~1 s to load)."""
    term_of = np.asarray(term_of, np.int64)
    indptr = np.zeros(n_terms + 1, np.int64)
    np.cumsum(np.bincount(term_of, minlength=n_terms), out=indptr[1:])
    return indptr, np.asarray(row_of, np.int64)[np.argsort(term_of, kind="stable")]


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
    if len(u) <= 16:  # a few rows (one write): rank updates, no temporary D^2 matrix
        from .hrr import rank_update

        rank_update(s, m, u, sign)
    else:  # a batch (an import, a bulk load, a rebuild): one BLAS product, no Numba
        s += sign * u.sum(axis=0)
        m += sign * (u.T @ u)


def stats_add(s: np.ndarray, m: np.ndarray, u: np.ndarray) -> None:
    """Add unit rows ``u`` (n, 2D) to the running sums in place: s += sum u, M += u^T u."""
    _stats_update(s, m, u, 1.0)


def stats_remove(s: np.ndarray, m: np.ndarray, u: np.ndarray) -> None:
    """Remove unit rows ``u`` (n, 2D) from the running sums in place."""
    _stats_update(s, m, u, -1.0)
