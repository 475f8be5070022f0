"""Cost of the analogy slot's store-size-dependent work: exact z statistics plus the
candidate search, at 10k and 100k stored memories (1M opt-in: FASTMEM_BENCH_1M=1).

The codes are real structural codes: event lists parsed by spaCy from varied sentences,
recombined into many distinct memories and encoded by the default encoder's terms (the
bundling is done for many memories at once; a check asserts it equals
``StructureEncoder.encode``). Compared in the same process on the same codes and queries:

* ``term index`` - the default: the postings of each memory's structural terms
  (:mod:`fastmem.term_index`), summing the turn's term weights per memory (exact alignment),
  keeping those that can clear the gate (z >= 2), heaviest first;
* ``two-stage`` - the previous default from 32k codes: a scan of the first quarter of every
  code, then exact rescoring of the best 1,024;
* ``full scan`` - every full code (the default below 32k);
* ``hnsw`` - the 1M plan that was measured and not adopted: an hnswlib inner-product index
  over the scaled float32 prefix rows (so it ranks what the prefix scan ranks), then the same
  exact rescoring. Built outside the timing (build seconds in ``extra_info``).

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
from fastmem.structure import CodeStore, StructureEncoder

SIZES = [10_000, 100_000] + ([1_000_000] if os.environ.get("FASTMEM_BENCH_1M") else [])
DIM = 512
N_QUERIES = 8
_cache = {}
_hnsw = {}
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
        from fastmem.extract import SpacyExtractor

        events = [e for ev in SpacyExtractor().events_many(SENTENCES) for e in ev]
        enc = StructureEncoder(DIM)
        rnd = random.Random(0)
        # distinct memories: random narratives of 3-12 real events
        narratives = [rnd.sample(events, rnd.randint(3, 12)) for _ in range(n)]
        q8, nterms = _bundle_many(enc, narratives)
        for i in (0, n // 2, n - 1):  # the batch bundling is the encoder's code
            ref = K.quantize(enc.encode(narratives[i])[0].reshape(1, -1))[0]
            assert np.abs(ref.astype(int) - q8[i]).max() <= 1, "batch codes differ from StructureEncoder.encode"
        cs = CodeStore(DIM)
        for start in range(0, n, 65_536):
            stop = min(start + 65_536, n)
            cs.add(np.arange(start + 1, stop + 1), q8[start:stop], enc.scale(nterms[start:stop]))
        sqs = [enc.query(rnd.sample(events, rnd.randint(3, 8))) for _ in range(N_QUERIES)]
        queries = [sq.vector.astype(np.float32) for sq in sqs]
        _cache[n] = (cs, queries, sqs, narratives, enc)
    return _cache[n][:2]


def terms_for(n):
    """The term index (the store's default search) over the same narratives as ``codes_for``."""
    if n not in _terms:
        from fastmem.term_index import TermIndex, term_hashes

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


def hnsw_for(n, cs):
    """hnswlib inner-product index over the scaled prefix rows (labels = row numbers)."""
    if n not in _hnsw:
        import hnswlib

        t = time.perf_counter()
        idx = hnswlib.Index(space="ip", dim=2 * cs.prefix)
        idx.init_index(max_elements=cs.n, M=16, ef_construction=100, random_seed=1)
        for start in range(0, cs.n, 65_536):
            stop = min(start + 65_536, cs.n)
            rows = K.dequantize(np.ascontiguousarray(cs._pre[start:stop])).astype(np.float32) * cs.scale[start:stop, None]
            idx.add_items(rows, np.arange(start, stop), num_threads=os.cpu_count() or 1)
        idx.set_num_threads(1)
        _hnsw[n] = (idx, time.perf_counter() - t)
    return _hnsw[n]


def stage(cs, qu, z_min=2.0, slack=1.0):
    mean, std = cs.z_stats(qu)
    return cs.candidates(qu, mean + (z_min - slack) * std, 256)


def stage_hnsw(cs, idx, qu, z_min=2.0, slack=1.0, pool=1024):
    mean, std = cs.z_stats(qu)
    threshold = np.float32(mean + (z_min - slack) * std)
    labels, _ = idx.knn_query(cs._prefix_of(qu).reshape(1, -1), k=pool)
    rows = labels[0].astype(np.int64)
    exact = K.sim_rows_q8(cs._codes, rows, qu) * cs._scale[rows]
    keep = exact >= threshold
    rows, exact = rows[keep], exact[keep]
    order = np.argsort(-exact, kind="stable")[:256]
    return cs._ids[rows[order]], exact[order]


def _full(cs, qu):
    old = CodeStore.PREFIX_MIN_ROWS
    CodeStore.PREFIX_MIN_ROWS = 1 << 62
    try:
        return stage(cs, qu)[0]
    finally:
        CodeStore.PREFIX_MIN_ROWS = old


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("method", ["term index", "two-stage", "full scan", "hnsw"])
def test_analogy_stage(benchmark, n, method):
    benchmark.group = f"analogy stage N={n} D={DIM}"
    cs, queries = codes_for(n)
    if method == "term index":
        ti, sqs, build_s = terms_for(n)
        benchmark.extra_info["build_s"] = round(build_s, 1)
        benchmark.extra_info["postings_per_memory"] = round(ti.postings / n, 1)
        by_vec = {id(q): sq for q, sq in zip(queries, sqs)}
        run = lambda qu: stage_terms(cs, ti, by_vec[id(qu)])  # noqa: E731
    elif method == "hnsw":
        idx, build_s = hnsw_for(n, cs)
        idx.set_ef(1024)
        benchmark.extra_info["build_s"] = round(build_s, 1)
        run = lambda qu: stage_hnsw(cs, idx, qu)  # noqa: E731
    else:

        def run(qu):  # the store's own search, forced to one method whatever N is
            saved = CodeStore.PREFIX_MIN_ROWS
            CodeStore.PREFIX_MIN_ROWS = 0 if method == "two-stage" else 1 << 62
            try:
                return stage(cs, qu)
            finally:
                CodeStore.PREFIX_MIN_ROWS = saved

    for qu in queries:
        run(qu)  # compile and warm outside the timing
    it = iter(range(1 << 30))
    benchmark.pedantic(lambda: run(queries[next(it) % len(queries)]), rounds=8 * len(queries), warmup_rounds=2)
    recall = []
    for qu in queries:
        top = set(_full(cs, qu)[:16].tolist())
        recall.append(len(top & set(run(qu)[0][:16].tolist())) / max(len(top), 1))
    benchmark.extra_info["top16_recall"] = round(float(np.mean(recall)), 4)
