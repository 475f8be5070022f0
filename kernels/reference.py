"""Plain NumPy references of every kernel (float64, obviously correct, slow). Used by tests."""

from __future__ import annotations

import numpy as np

TWO_PI = 2 * np.pi


def bind(a, b):
    return np.mod(a + b, TWO_PI)


def unbind(m, k):
    return np.mod(m - k, TWO_PI)


def bundle_weighted(v, w):
    z = (np.asarray(w)[:, None] * np.exp(1j * v)).sum(axis=0)
    return np.mod(np.angle(z), TWO_PI)


def to_unit(v):
    d = v.shape[1]
    return np.concatenate([np.cos(v), np.sin(v)], axis=1) / np.sqrt(d) if d else np.zeros((len(v), 0))


def quantize(v):
    return np.round(127 * np.concatenate([np.cos(v), np.sin(v)], axis=1)).astype(np.int8)


def dequantize(q):
    d = q.shape[1] // 2
    return q.astype(np.float64) / (127 * np.sqrt(d))


def sim(a, b):
    return float(np.mean(np.cos(a - b))) if len(a) else 0.0


def sim_many(q, v):
    return np.mean(np.cos(v - q[None, :]), axis=1) if v.shape[1] else np.zeros(len(v))


def z_stats(qu, units):
    if len(units) == 0:
        return 0.0, 0.0
    s = units @ qu
    return float(s.mean()), float(s.std())


def term_scores(segments, alive, threshold):
    """Per row, the summed weights of the segments (rows, weight) that hold it; rows at or above
    ``threshold`` that are alive, as a dict row -> score."""
    acc = {}
    for rows, w in segments:
        for r in rows:
            acc[int(r)] = acc.get(int(r), 0.0) + float(w)
    return {r: v for r, v in acc.items() if alive[r] and v >= threshold}


def bias_gelu(x, b):
    from math import erf

    v = np.asarray(x, np.float64) + b
    return 0.5 * v * (1.0 + np.vectorize(erf, otypes=[float])(v / np.sqrt(2.0)))
