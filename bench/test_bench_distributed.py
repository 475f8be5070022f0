"""Bulk ingest with extraction on real conversation turns (LoCoMo dev, ../shared/data; beyond
its 788 turns they repeat with a ``[copy k]`` prefix), 5k turns (FASTMEM_BENCH_INGEST_N):

* ``single process``: ``remember_many`` in batches of 256 (the path ``fastmem ingest`` takes);
* ``ray 2 workers``: ``fastmem.distributed.ingest`` on a local Ray cluster of 2 CPUs, the
  cluster started before the round (the workers' model load is inside the round: it is what
  an import pays);
* ``commit only``: the commit of precomputed rows (derived once, outside the round) into a
  fresh file, the ceiling of one file's writer. ``extra_info["per_second"]`` has each rate.

One round each (minutes per round); the ratio is the speed-up.

    pytest bench/test_bench_distributed.py --benchmark-only --benchmark-columns=median,rounds
"""

import itertools
import json
import os
import re
import sys

import pytest

ray = pytest.importorskip("ray")
sys.path.insert(0, os.path.dirname(__file__))
from locomo import conversation_files

import fastmem
from fastmem import distributed

N = int(os.environ.get("FASTMEM_BENCH_INGEST_N", "5000"))


def _items(n):
    base = []
    for f in conversation_files():
        d = json.load(open(f))
        for k, v in d.items():
            if re.fullmatch(r"session_\d+", k) and isinstance(v, list):
                base += [(f"{t['speaker']}: {t['text']}", f"{os.path.basename(f)}-{k}") for t in v]
    out = []
    for c in itertools.count():
        for text, src in base:
            out.append({"text": text if c == 0 else f"[copy {c}] {text}", "source": src if c == 0 else f"{src}-{c}"})
            if len(out) == n:
                return out
    return out


@pytest.fixture(scope="module")
def items():
    return _items(N)


def test_single_process(benchmark, items, tmp_path):
    benchmark.group = f"ingest {N // 1000}k turns"
    fastmem.warmup(models=True)
    runs = iter(range(100))

    def one():
        with fastmem.Memory(str(tmp_path / f"single{next(runs)}.db"), progress=False) as m:
            for i in range(0, len(items), 256):
                part = items[i:i + 256]
                m.remember_many([x["text"] for x in part], source=part[0]["source"], progress=False)

    benchmark.pedantic(one, rounds=1, iterations=1)
    benchmark.extra_info["per_second"] = round(N / benchmark.stats.stats.median, 1)


def test_ray_two_workers(benchmark, items, tmp_path):
    benchmark.group = f"ingest {N // 1000}k turns"
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    runs = iter(range(100))
    try:
        benchmark.pedantic(lambda: distributed.ingest(items, str(tmp_path / f"ray{next(runs)}.db"), workers=2),
                           rounds=1, iterations=1)
    finally:
        ray.shutdown()
    benchmark.extra_info["per_second"] = round(N / benchmark.stats.stats.median, 1)


def test_commit_only(benchmark, items, tmp_path):
    benchmark.group = f"ingest {N // 1000}k turns"
    batches = [distributed.derive_batch(distributed._items(items[i:i + 256])) for i in range(0, len(items), 256)]
    runs = iter(range(100))

    def one():
        with fastmem.Memory(str(tmp_path / f"commit{next(runs)}.db"), progress=False) as m:
            for b, (prep, rows) in enumerate(batches):
                distributed.commit_batch(m, "bench", b, prep, rows)

    benchmark.pedantic(one, rounds=1, iterations=1)
    benchmark.extra_info["per_second"] = round(N / benchmark.stats.stats.median, 1)
