"""MiniLM (all-MiniLM-L6-v2) through ONNX Runtime (fastmem's default once a process embeds
more than a few texts), its int8 variant (opt-in), NumPy (the default for a process's first
few texts) and sentence-transformers on torch (the reference), and the static embedder
distilled from it (fastmem[static]), same texts, same process:
one query at a time and batches of real conversation turns (LoCoMo dev, ../shared/data;
skipped without it).

    pytest bench/test_bench_embedder.py --benchmark-only --benchmark-columns=median,iqr,rounds
"""

import itertools
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from locomo import conversation_files, turns  # noqa: E402

from fastmem.models.embedder import MiniLM  # noqa: E402

BACKENDS = ["onnx", "int8", "numpy", "torch", "static"]


def embedder(backend):
    if backend == "static":
        pytest.importorskip("model2vec")
        from fastmem.models.model2vec import StaticMiniLM

        return StaticMiniLM()
    if backend == "int8":
        return MiniLM(quantized=True)
    return MiniLM(backend=backend)


@pytest.fixture(scope="module")
def texts():
    got = [t for f in conversation_files() for _, t, *_ in turns(json.load(open(f)))]
    if not got:
        pytest.skip("LoCoMo dev data not found (set FASTMEM_DATA)")
    return got


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_query(benchmark, texts, backend):
    benchmark.group = "embedding: one query"
    e = embedder(backend)
    e.encode(["warm up"])
    it = itertools.cycle(texts[:200])
    benchmark.pedantic(lambda: e.encode([next(it)]), rounds=100, warmup_rounds=3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_of_256(benchmark, texts, backend):
    benchmark.group = "embedding: a batch of 256 turns"
    e = embedder(backend)
    e.encode(["warm up"])
    batches = itertools.cycle([texts[i:i + 256] for i in range(0, len(texts) - 256, 256)])
    benchmark.pedantic(lambda: e.encode(next(batches)), rounds=3, warmup_rounds=1)
    benchmark.extra_info["texts"] = 256
