"""Cost of the analogy slot's store-size-dependent work: exact z statistics plus the
candidate search, at 10k and 100k stored codes (1M opt-in: FASTMEM_BENCH_1M=1).

The codes are real structural codes: event lists parsed by spaCy from varied sentences,
recombined into many distinct memories, encoded by the default encoder. Compared in the same
process: the two-stage search (prefix scan, then exact rescoring; default from 32k rows) and
a full scan of every code. The rest of the slot (fetching and aligning at most
``analogy_rerank`` candidates) does not depend on N and is measured on the real recall path
in test_bench_store.py (``timings_ms["analogy"]``).

    pytest bench/test_bench_analogy.py --benchmark-only --benchmark-columns=median,iqr,rounds
"""

import os
import random

import numpy as np
import pytest

from fastmem import kernels as K
from fastmem.structure import CodeStore, StructureEncoder

SIZES = [10_000, 100_000] + ([1_000_000] if os.environ.get("FASTMEM_BENCH_1M") else [])
DIM = 512
_cache = {}

SENTENCES = [
    "The pump pushes water through the pipes and the valve controls the flow into the tank.",
    "Roots absorb water from the soil and the stem carries it up to the leaves.",
    "The company hired a new manager who reorganised the sales team and cut costs.",
    "Heat melts the ice, the water evaporates and the vapour forms clouds over the sea.",
    "My friend bought a car, repaired the engine and sold it to a neighbour.",
    "The kidneys filter the blood and remove waste, which leaves the body as urine.",
    "Bees collect nectar from flowers and turn it into honey inside the hive.",
    "The server receives a request, queries the database and returns the result to the client.",
    "Wind erodes the rock surface while rain carries the sediment down the river.",
    "The teacher explained the lesson and the students wrote an essay about it.",
    "Sunlight strikes the panel, the cells convert it into electricity and the battery stores it.",
    "The chef chops the onions, heats the oil and fries them until they turn brown.",
]


def codes_for(n):
    if n not in _cache:
        from fastmem.extract import SpacyExtractor

        events = [e for ev in SpacyExtractor().events_many(SENTENCES) for e in ev]
        enc = StructureEncoder(DIM)
        rnd = random.Random(0)
        cs = CodeStore(DIM)
        batch_ids, batch_q8, batch_t = [], [], []
        for i in range(n):  # distinct memories: random narratives of 3-12 real events
            ev = rnd.sample(events, rnd.randint(3, 12))
            code, t = enc.encode(ev)
            batch_ids.append(i + 1)
            batch_q8.append(K.quantize(code.reshape(1, -1))[0])
            batch_t.append(t)
            if len(batch_ids) == 8192 or i == n - 1:
                cs.add(np.asarray(batch_ids), np.stack(batch_q8), enc.scale(np.asarray(batch_t)))
                batch_ids, batch_q8, batch_t = [], [], []
        q = enc.query(rnd.sample(events, 6))
        _cache[n] = (cs, q.vector)
    return _cache[n]


def stage(cs, qu, z_min=2.0, slack=1.0):
    mean, std = cs.z_stats(qu)
    return cs.candidates(qu, mean + (z_min - slack) * std, 256)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("method", ["two-stage", "full scan"])
def test_analogy_stage(benchmark, n, method):
    benchmark.group = f"analogy stage N={n} D={DIM}"
    cs, qu = codes_for(n)
    old = CodeStore.PREFIX_MIN_ROWS
    CodeStore.PREFIX_MIN_ROWS = 0 if method == "two-stage" else 1 << 62
    try:
        stage(cs, qu)  # compile outside the timing
        ids, sims = benchmark.pedantic(stage, args=(cs, qu), rounds=30, warmup_rounds=2)
    finally:
        CodeStore.PREFIX_MIN_ROWS = old
    # what the two-stage search must agree on: the best candidates of the full scan
    CodeStore.PREFIX_MIN_ROWS = 1 << 62
    full_ids, _ = stage(cs, qu)
    CodeStore.PREFIX_MIN_ROWS = old
    top = set(full_ids[:16].tolist())
    benchmark.extra_info["top16_overlap_with_full_scan"] = len(top & set(ids[:16].tolist())) / max(len(top), 1)
