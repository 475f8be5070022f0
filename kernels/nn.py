"""Numba kernels for the embedder's forward pass on large batches (:mod:`fastmem.models.minilm`).

NumPy evaluates GELU's erf as a dozen whole-array passes with temporaries; for a batch of a few
thousand word pieces the activation (B*L, 1536) is tens of MB, so those passes, not the matrix
products, were over a third of an encode. One fused loop does it in cache. Single-threaded and
``nogil``: the embedder runs beside the parser's thread, and Numba's default threading layer
must not be entered from two threads at once.
"""

from __future__ import annotations

import numpy as np

from .hrr import nb  # the cache folder is set there, before any kernel is defined

__all__ = ["bias_gelu_"]


# Abramowitz & Stegun 7.1.26, as fastmem.models.minilm.erf (|error| < 1.5e-7): in float32 with one
# exp, the loop vectorises (~4x the speed of a libm erf per element)
_P = np.float32(0.3275911)
_A1, _A2, _A3, _A4, _A5 = (np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027,
                                                   1.061405429))
_HALF, _ONE, _RSQRT2 = np.float32(0.5), np.float32(1.0), np.float32(0.7071067811865476)


@nb.njit(cache=True, nogil=True, error_model="numpy")
def bias_gelu_(x, b):
    """``x = gelu(x + b)`` in place, with the exact (erf) GELU; x (n, d) float32 C-contiguous, b (d,)."""
    n, d = x.shape
    for i in range(n):
        for j in range(d):
            v = x[i, j] + b[j]
            z = v * _RSQRT2
            a = abs(z)
            t = _ONE / (_ONE + _P * a)
            y = _ONE - ((((_A5 * t + _A4) * t + _A3) * t + _A2) * t + _A1) * t * np.exp(-a * a)
            x[i, j] = _HALF * v * (_ONE + (y if z >= 0 else -y))
    return x
