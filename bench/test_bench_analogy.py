"""Cost of the analogy slot's store-size-dependent work: exact z statistics plus the
candidate search, at 10k and 100k stored memories (1M opt-in: FASTMEM_BENCH_1M=1).

The codes are real structural codes: event lists parsed by spaCy from varied sentences,
recombined into many distinct memories and encoded by the default encoder's terms (the
bundling is done for many memories at once; a check asserts it equals
``StructureEncoder.encode``). Compared in the same process on the same codes and queries:

* ``term index`` - the default: the postings of each memory's structural terms
  (:mod:`fastmem.analogy.postings`), summing the turn's term weights per memory (exact alignment),
  keeping those that can clear the gate (z >= 2), heaviest first;
* ``full scan`` - the baseline: every stored code scored against the turn (one BLAS product
  over the int8 codes, :func:`fastmem.kernels.sims_q8_many`, as the slot scores its few
  candidates), kept above the same gate, best 256 (the design the term index replaced).

``extra_info["top16_recall"]`` is the share of the full scan's 16 best rows (by code score)
each method returns (averaged over the queries); the term index ranks by exact alignment
instead, so its share measures agreement with the codes' noisy ranking, not loss. The rest of the slot (fetching and aligning at most
``analogy_rerank`` candidates) does not depend on N and is measured on the real recall path
in test_bench_store.py (``timings_ms["analogy"]``).

    pytest bench/test_bench_analogy.py --benchmark-only --benchmark-columns=median,iqr,rounds
"""

import os
import random
import time

import numpy as np
import pytest

from fastmem import kernels as K
from fastmem.analogy.codes import CodeStats, StructureEncoder

SIZES = [10_000, 100_000] + ([1_000_000] if os.environ.get("FASTMEM_BENCH_1M") else [])
DIM = 512
N_QUERIES = 8
_cache = {}
_terms = {}

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


def _bundle_many(enc, narratives, chunk=2048):
    """int8 codes and term counts of many event lists: the encoder's distinct terms, bundled
    with equal weight (what ``enc.encode`` does one memory at a time), quantised."""
    index: dict[tuple, int] = {}
    term_rows, counts = [], []
    for ev in narratives:
        keys = enc.term_keys(ev)
        term_rows.append([index.setdefault(k, len(index)) for k in keys])
        counts.append(len(keys))
    unit = np.exp(1j * enc.term_phases(list(index))).astype(np.complex64)
    out = np.empty((len(narratives), 2 * enc.dim), np.int8)
    for start in range(0, len(narratives), chunk):
        part = term_rows[start : start + chunk]
        flat = np.fromiter((t for r in part for t in r), np.int64)
        bounds = np.cumsum([0] + [len(r) for r in part[:-1]])
        sums = np.add.reduceat(unit[flat], bounds, axis=0)
        out[start : start + len(part)] = K.quantize(np.mod(np.angle(sums), 2 * np.pi).astype(np.float64))
    return out, np.asarray(counts)


def codes_for(n):
    if n not in _cache:
        from fastmem.reader.extract import SpacyExtractor

        events = [e for ev in SpacyExtractor().events_many(SENTENCES) for e in ev]
        enc = StructureEncoder(DIM)
        rnd = random.Random(0)
        # distinct memories: random narratives of 3-12 real events
        narratives = [rnd.sample(events, rnd.randint(3, 12)) for _ in range(n)]
        q8, nterms = _bundle_many(enc, narratives)
        for i in (0, n // 2, n - 1):  # the batch bundling is the encoder's code
            ref = K.quantize(enc.encode(narratives[i])[0].reshape(1, -1))[0]
            assert np.abs(ref.astype(int) - q8[i]).max() <= 1, "batch codes differ from StructureEncoder.encode"
        cs = CodeStats(DIM)
        scale = enc.scale(nterms)
        for start in range(0, n, 65_536):
            stop = min(start + 65_536, n)
            cs.add(np.arange(start + 1, stop + 1), q8[start:stop], scale[start:stop])
        cs.q8, cs.scale = q8, np.asarray(scale, np.float32)  # for the full-scan baseline
        sqs = [enc.query(rnd.sample(events, rnd.randint(3, 8))) for _ in range(N_QUERIES)]
        queries = [sq.vector.astype(np.float32) for sq in sqs]
        _cache[n] = (cs, queries, sqs, narratives, enc)
    return _cache[n][:2]


def terms_for(n):
    """The term index (the store's default search) over the same narratives as ``codes_for``."""
    if n not in _terms:
        from fastmem.analogy.postings import TermIndex, term_hashes

        cs, queries, sqs, narratives, enc = _cache[n]
        t = time.perf_counter()
        hashes = [term_hashes(enc.term_keys(ev)) for ev in narratives]
        ti = TermIndex()
        ti.build(np.arange(1, n + 1), hashes)
        _terms[n] = (ti, sqs, time.perf_counter() - t)
    return _terms[n]


def stage_terms(cs, ti, sq, z_min=2.0):
    """The store's search: exact statistics, then the memories whose exact alignment can clear
    the gate, from the term postings (as StructureIndex.candidates)."""
    mean, std = cs.z_stats(sq.vector)
    return ti.query(sq.hashes, sq.wts, max((mean + z_min * std) * sq.norm, 1e-9), 256)


def stage_full(cs, sq, z_min=2.0):
    """The baseline: every code scored (BLAS), kept above the gate, best 256."""
    mean, std = cs.z_stats(sq.vector)
    sc = K.sims_q8_many(cs.q8, sq.vector.astype(np.float32)[None, :])[0] * cs.scale
    keep = np.nonzero(sc >= mean + z_min * std)[0]
    top = keep[np.argsort(-sc[keep], kind="stable")[:256]]
    return top + 1, sc[top]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("method", ["term index", "full scan"])
def test_analogy_stage(benchmark, n, method):
    benchmark.group = f"analogy stage N={n} D={DIM}"
    cs, queries = codes_for(n)
    ti, sqs, build_s = terms_for(n)
    if method == "term index":
        benchmark.extra_info["build_s"] = round(build_s, 1)
        benchmark.extra_info["postings_per_memory"] = round(ti.postings / n, 1)
        run = lambda sq: stage_terms(cs, ti, sq)  # noqa: E731
    else:
        run = lambda sq: stage_full(cs, sq)  # noqa: E731
    for sq in sqs:
        run(sq)  # compile and warm outside the timing
    it = iter(range(1 << 30))
    benchmark.pedantic(lambda: run(sqs[next(it) % len(sqs)]), rounds=8 * len(sqs), warmup_rounds=2)
    recall = []
    for sq in sqs:
        top = set(stage_full(cs, sq)[0][:16].tolist())
        recall.append(len(top & set(run(sq)[0][:16].tolist())) / max(len(top), 1))
    benchmark.extra_info["top16_recall"] = round(float(np.mean(recall)), 4)
