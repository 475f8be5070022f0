"""The kernels recall and writes run, at N = 10k, 100k (1M with FASTMEM_BENCH_1M=1), D = 256,
512 (the store's) and 1024: the analogy gate's exact store statistics per query
(:class:`fastmem.analogy.codes.CodeStats`, against the old system's float64 ``mean(cos(a - b))``
scan of every code, measured in the same run), their update per insert, and the kernels'
first call with a cold and a warm cache. The candidate search is in test_bench_analogy.py.
Run: ``pytest bench/test_bench_kernels.py --benchmark-only``.
"""

import os

import numpy as np
import pytest

import fastmem
from fastmem import kernels as K
from fastmem.analogy.codes import CodeStats

SIZES = [10_000, 100_000] + ([1_000_000] if os.environ.get("FASTMEM_BENCH_1M") else [])
DIMS = [256, 512, 1024]
_cache = {}


def data(n, d):
    key = (n, d)
    if key not in _cache:
        rng = np.random.default_rng(0)
        ph = rng.uniform(0, 2 * np.pi, (n, d))
        _cache.clear()
        _cache[key] = (ph, K.quantize(ph), rng.uniform(0, 2 * np.pi, d))
    return _cache[key]


def float64_phases(n, d):
    """Phases and query for the float64 NumPy baselines (skipped where they need > 2.4 GB)."""
    if n * d > 300_000_000:
        pytest.skip("baseline needs more than 2.4 GB")
    ph, _, q = data(n, d)
    return ph, q


@pytest.fixture(scope="module", autouse=True)
def _warm():
    fastmem.warmup()


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("n", SIZES)
def test_z_stats_per_query(benchmark, n, d):
    """Exact mean/std over the store from running sums: should not depend on N."""
    benchmark.group = f"z-stats D={d}"
    _, codes, q = data(n, d)
    cs = CodeStats(d)
    cs.add(np.arange(n), codes[:n], np.ones(n))
    qu = K.to_unit(q[None, :])[0]
    benchmark.pedantic(cs.z_stats, args=(qu,), rounds=50, warmup_rounds=1)


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("n", SIZES)
def test_z_stats_numpy_scan_baseline(benchmark, n, d):
    """The old way: float64 cos scan of every stored code, then mean and std."""
    benchmark.group = f"z-stats D={d}"
    ph, q = float64_phases(n, d)

    def old():
        s = np.mean(np.cos(ph - q), axis=1)
        return s.mean(), s.std()

    benchmark.pedantic(old, rounds=3, warmup_rounds=1)


@pytest.mark.parametrize("d", DIMS)
def test_stats_update_per_insert(benchmark, d):
    benchmark.group = f"insert update D={d}"
    cs = CodeStats(d)
    one = K.quantize(np.random.default_rng(2).uniform(0, 2 * np.pi, (1, d)))
    ids = iter(range(10**9))
    benchmark.pedantic(lambda: cs.add(np.asarray([next(ids)]), one, np.ones(1)), rounds=200, warmup_rounds=1)


def test_warmup_cold_first_call(benchmark, tmp_path):
    """Cold first call: compile in a fresh process with an empty Numba cache."""
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nb"))
    code = "import time,fastmem; t=time.perf_counter(); fastmem.warmup(); print(time.perf_counter()-t)"

    def cold():
        subprocess.run([sys.executable, "-c", code], env=dict(env, NUMBA_CACHE_DIR=str(tmp_path / f"nb{os.urandom(4).hex()}")), check=True, capture_output=True)

    benchmark.group = "warmup"
    benchmark.pedantic(cold, rounds=2, warmup_rounds=0)


def test_warmup_with_warm_cache(benchmark, tmp_path):
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nb"))
    code = "import fastmem; fastmem.warmup()"
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    benchmark.group = "warmup"
    benchmark.pedantic(lambda: subprocess.run([sys.executable, "-c", code], env=env, check=True), rounds=2, warmup_rounds=0)
