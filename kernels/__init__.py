"""Kernels for phase-vector HRR (FHRR), imported as ``fastmem.kernels``: plain NumPy for atoms
and for everything a single write or a recall runs (:mod:`.plain`: encoding, quantising,
statistics, similarities, postings scores), so that neither imports Numba; Numba (:mod:`.hrr`)
for the algebra and for the term scores' faster twin, used once a process has loaded it
(:func:`fastmem.warmup`, a long-running backend).

Kernels take and return arrays; no I/O, no classes, no mutable globals. Every kernel has a
plain NumPy reference in :mod:`fastmem.kernels.reference`, used by the tests.

A code is D phases in [0, 2pi). Its stored form is int8
``[round(127 cos v); round(127 sin v)]`` (2D bytes, a quarter of float64 phases' 8D), and
``sim(a, b) = mean(cos(a - b)) = (cos a . cos b + sin a . sin b) / D`` becomes one dot
product with the float query ``[cos q; sin q]``.
"""

#: Not a release number: this package ships inside fastmem (as ``fastmem.kernels``). Run from a
#: checkout's root, its folder is also found as a top-level ``kernels``, which transformers
#: takes for the Hub's ``kernels`` package and asks for its version; this one is below any of
#: the Hub's, so transformers leaves it alone (``sentence_transformers`` imports there too).
__version__ = "0+fastmem"

__all__ = [
    "Q8_SCALE",
    "atom",
    "atoms",
    "bind",
    "bundle",
    "bundle_weighted",
    "compiled_loaded",
    "dequantize",
    "permute",
    "postings_of",
    "quantize",
    "sim",
    "sim_many",
    "sims_q8_many",
    "stats_add",
    "stats_remove",
    "term_scores",
    "term_scores_bincount",
    "to_unit",
    "unbind",
    "warmup",
    "z_stats",
]


_PLAIN = frozenset({"Q8_SCALE", "atom", "atoms", "bundle", "bundle_weighted", "dequantize", "permute",
                    "postings_of", "quantize", "sims_q8_many", "stats_add", "stats_remove",
                    "term_scores_bincount", "to_unit", "z_stats"})


def compiled_loaded() -> bool:
    """Whether this process has loaded the Numba kernels (it wrote, or warmed up). Kernels
    with a NumPy twin (the term scores) use the compiled one then, and
    the NumPy one in a process that only reads (a command-line recall), where loading Numba
    would cost more than the work."""
    import sys

    return __name__ + ".hrr" in sys.modules


def __getattr__(name: str):
    # Numba (~0.5 s to import, ~0.6 s for its first dispatch) loads with the first kernel a
    # process uses, not with ``import fastmem``: listing or exporting a store compiles nothing.
    if name in _PLAIN:  # atoms and what a recall runs: NumPy, no Numba import
        from . import plain

        return getattr(plain, name)
    if name in __all__:
        from . import hrr

        return getattr(hrr, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
