"""Scale: recall and writes on stores written with extraction (MiniLM, spaCy, SQLite, hnswlib),
at 10k memories and, opt-in, 100k (FASTMEM_BENCH_100K=1) and 1M (FASTMEM_BENCH_1M=1). The
stores are built once from ``fastmem.evaluate.bench.texts`` and cached (conftest.cached_store,
keyed by fastmem's schema and structure versions and the model); the 1M store replicates the
100k one through the bulk load (``bench/million.py`` says exactly how).

Groups (medians; compile time excluded; baselines run in the same process):

* ``recall N``: fastmem's own work (:func:`test_recall_own_work`: a cached embedding, the
  turn's parse subtracted; p50 and p99 in ``extra_info``); a recall with a new query each
  round (embedding included; p99 in ``extra_info``), next to MiniLM's
  own query embedding (the baseline: the target is recall <= 1.5x it), the same recall with
  ONNX Runtime's threads spinning between runs (its default, off in fastmem), and the same
  recall with the embedding cached (everything but the embedding); ``extra_info`` has the
  median of each stage of ``Recall.timings_ms``;
* ``slot N``: the analogy slot alone on prepared turns (:func:`test_slot_stage`);
* ``write N``: ``remember`` of one new text, next to embedding plus parse of the same text (the
  target: at most 3 ms more), and ``remember_many`` of 256 texts (memories per second in
  ``extra_info``);
* ``open N``: opening the store (index reconciled, codes and statistics loaded);
* ``extra_info["bytes_per_memory"]`` on the open bench: file and index bytes per memory, by
  table (``dbstat``), text excluded.

    pytest bench/test_bench_scale.py --benchmark-only --benchmark-columns=median,iqr,rounds
"""

import itertools
import os
import time

import pytest
from conftest import cached_store, fresh_copy

import fastmem
from fastmem.evaluate import bench as B

SIZES = [10_000] + ([100_000] if os.environ.get("FASTMEM_BENCH_100K") else []) + \
    ([1_000_000] if os.environ.get("FASTMEM_BENCH_1M") else [])


def _build(n):
    def build(path):
        texts = B.texts(n)
        with fastmem.Memory(path, progress=False) as m:
            for start in range(0, n, 2000):
                m.remember_many(texts[start : start + 2000], progress=False)
    return build


@pytest.fixture(scope="module")
def models():
    fastmem.warmup(models=True)


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n // 1000}k")
def store(request, models, tmp_path_factory):
    n = request.param
    if n == 1_000_000:
        from million import million_store

        path = million_store()
    else:
        path = cached_store("scale", n, _build(n))
    work = fresh_copy(path, str(tmp_path_factory.mktemp(f"scale{n}")))
    m = fastmem.Memory(work, progress=False)
    yield m, n, work
    m.close()


def test_recall_new_query(benchmark, store):
    m, n, _ = store
    benchmark.group = f"recall {n // 1000}k"
    qs = iter(B.queries(400, seed=2 + n))  # new to the process's embedding cache at every size
    runs = []

    def one():
        r = m.recall(next(qs), k=10, record=False)
        runs.append(r.timings_ms)

    benchmark.pedantic(one, rounds=60, warmup_rounds=3)
    for key in ("embed", "parse", "keyword", "vector", "graph", "fuse", "analogy"):
        vals = sorted(t.get(key, 0.0) for t in runs)
        benchmark.extra_info[f"{key}_ms"] = round(vals[len(vals) // 2], 3)
    if benchmark.stats is not None:  # None under --benchmark-disable
        benchmark.extra_info["p99_ms"] = round(_pct(benchmark.stats.stats.data, 99) * 1e3, 3)


def _pct(values, q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q / 100 * (len(v) - 1))))]


def test_recall_own_work(benchmark, store):
    """fastmem's own share of a recall: cached embeddings (every round a different cached
    turn), the analogy slot on, the turn's spaCy parse subtracted (its milliseconds are in
    ``timings_ms``). The benchmark's own median includes the parse; ``own_p50_ms`` and
    ``own_p99_ms`` do not."""
    m, n, _ = store
    benchmark.group = f"recall {n // 1000}k"
    qs = B.queries(40, seed=6)
    for q in qs:
        m.recall(q, record=False)
    it = itertools.cycle(qs)
    own, stages = [], []

    def one():
        t0 = time.perf_counter()
        r = m.recall(next(it), k=10, record=False)
        own.append((time.perf_counter() - t0) * 1e3 - r.timings_ms.get("parse", 0.0) - r.timings_ms.get("embed", 0.0))
        stages.append(r.timings_ms)

    benchmark.pedantic(one, rounds=120, warmup_rounds=0)
    benchmark.extra_info["own_p50_ms"] = round(_pct(own, 50), 3)
    benchmark.extra_info["own_p99_ms"] = round(_pct(own, 99), 3)
    for key in ("keyword", "vector", "graph", "fuse", "analogy"):
        benchmark.extra_info[f"{key}_p50_ms"] = round(_pct([t.get(key, 0.0) for t in stages], 50), 3)


def test_recall_new_query_onnx_spinning(benchmark, store):
    """The same recall with ONNX Runtime's worker threads busy-waiting after each forward pass
    (``OnnxBert(spin=True)``, ONNX Runtime's own default; fastmem's is off): the baseline for
    that choice, swapped in for this test only."""
    from fastmem.models import embedder as E
    from fastmem.models.minilm import model_dir
    from fastmem.models.onnx_minilm import OnnxBert

    m, n, _ = store
    benchmark.group = f"recall {n // 1000}k"
    qs = iter(B.queries(400, seed=5 + n))
    if not m.admin.embedder.loaded or False not in E._ONNX:
        pytest.skip("the store's embedder does not run on ONNX Runtime")
    ours = E._ONNX[False]
    E._ONNX[False] = OnnxBert(model_dir(), spin=True)
    try:
        benchmark.pedantic(lambda: m.recall(next(qs), k=10, record=False), rounds=60, warmup_rounds=3)
    finally:
        E._ONNX[False] = ours


def test_minilm_query_alone(benchmark, store):
    m, n, _ = store
    benchmark.group = f"recall {n // 1000}k"
    qs = iter(B.queries(400, seed=3 + n))
    benchmark.pedantic(lambda: m.admin.embedder.encode([next(qs)]), rounds=60, warmup_rounds=3)


def test_recall_embedding_cached(benchmark, store):
    m, n, _ = store
    benchmark.group = f"recall {n // 1000}k"
    qs = B.queries(20, seed=4)
    for q in qs:
        m.recall(q, record=False)  # embeddings cached; every round a different cached turn
    it = itertools.cycle(qs)
    benchmark.pedantic(lambda: m.recall(next(it), k=10, record=False), rounds=60, warmup_rounds=2)


def test_recall_slot_off_embedding_cached(benchmark, store):
    m, n, _ = store
    benchmark.group = f"recall {n // 1000}k"
    qs = B.queries(20, seed=4)
    it = itertools.cycle(qs)
    benchmark.pedantic(lambda: m.recall(next(it), k=10, record=False, analogy=False), rounds=60, warmup_rounds=2)


def test_slot_stage(benchmark, store):
    """The analogy slot alone on prepared turns: stage-1 candidates, surface condition, the
    structure mapping of up to ``analogy_rerank`` candidates and the gate (the channels, the
    embedding and the parse excluded). ``extra_info["fires"]``: the share of turns answered."""
    m, n, _ = store
    benchmark.group = f"slot {n // 1000}k"
    from fastmem.recall.channels.vector import vector

    prepared = []
    for q in B.queries(20, seed=6):
        vec = m.admin.embedder.encode([q])[0]
        _, labels = vector(m.admin.engine.index, vec, 40, None)
        r = m.recall(q, k=10, record=False, analogy=False)
        turn = m.admin.engine.slot.prepare(q, m.admin.extractor, m.analogy.settings.z_min)
        prepared.append((turn, vec, labels, [h.id for h in r.hits]))
    it = itertools.cycle(prepared)
    fired = []

    def one():
        turn, vec, labels, ids = next(it)
        a = m.admin.engine.slot.pick(turn, vec, scope=None, session=None, z_min=m.analogy.settings.z_min, surface_labels=labels,
                        recall_ids=ids, n_live=m.admin.engine.index.live, weights={})
        fired.append(a is not None)

    benchmark.pedantic(one, rounds=100, warmup_rounds=5)
    benchmark.extra_info["fires"] = round(sum(fired) / len(fired), 3)


def test_remember_one(benchmark, store):
    m, n, _ = store
    benchmark.group = f"write {n // 1000}k"
    texts = iter(B.texts(500, seed=7))
    benchmark.pedantic(lambda: m.remember(next(texts)), rounds=40, warmup_rounds=2)


def test_embed_plus_parse_of_one(benchmark, store):
    m, n, _ = store
    benchmark.group = f"write {n // 1000}k"
    texts = iter(B.texts(500, seed=8))

    def one():
        t = next(texts)
        m.admin.embedder.encode([t])
        m.admin.extractor.parse_many([t])

    benchmark.pedantic(one, rounds=40, warmup_rounds=2)


def test_remember_many_256(benchmark, store):
    m, n, _ = store
    benchmark.group = f"write {n // 1000}k"
    batches = iter([B.texts(256, seed=100 + i) for i in range(8)])
    benchmark.pedantic(lambda: m.remember_many(next(batches)), rounds=5, warmup_rounds=1)
    benchmark.extra_info["per_second"] = round(256 / benchmark.stats.stats.median, 1)


def test_open(benchmark, store, tmp_path):
    m, n, work = store
    benchmark.group = f"open {n // 1000}k"
    m.admin.flush()
    opened = []

    def one():
        t0 = time.perf_counter()
        x = fastmem.Memory(work, progress=False)
        opened.append(time.perf_counter() - t0)
        x.close()

    benchmark.pedantic(one, rounds=3, warmup_rounds=0)
    benchmark.extra_info["bytes_per_memory"] = bytes_per_memory(m, work)
    benchmark.extra_info["resident_mb"] = resident(work)


_RESIDENT = """
import sys, fastmem
def mb(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
m = fastmem.Memory(sys.argv[1], progress=False)
opened = mb("VmRSS")
m.recall("Who moved to Berlin last spring?", k=10, record=False)
print(opened, mb("VmRSS"), mb("VmHWM"))
"""


def resident(path) -> dict:
    """Resident memory (MB) of a new process that opens the store, and after one recall (its
    models loaded), and its peak (Linux /proc)."""
    import subprocess
    import sys

    if not os.path.exists("/proc/self/status"):
        return {}
    out = subprocess.run([sys.executable, "-c", _RESIDENT, path], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if out.returncode:
        return {"error": out.stderr[-300:]}
    opened, recalled, peak = (round(float(x), 1) for x in out.stdout.split()[-3:])
    return {"opened": opened, "after_recall": recalled, "peak": peak}


def bytes_per_memory(m, path) -> dict:
    """Bytes per memory on disk by where they go, text excluded (SQLite dbstat + the index)."""
    n = len(m)
    per: dict[str, int] = {}
    for name, size in m.admin.engine.db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        per[name] = size
    text = m.admin.engine.db.execute("SELECT sum(length(CAST(text AS BLOB))) FROM memories").fetchone()[0] or 0
    groups = {
        "vectors (sqlite)": ["embeddings"],
        "codes": ["codes", "hrr_stats"],
        "events": ["events", "event_df"],
        "fts": [k for k in per if k.startswith("memories_fts")],
        "graph": ["nodes", "aliases", "edges", "edges_memory", "edges_subj", "edges_obj", "aliases_node",
                  "alias_candidates", "sqlite_autoindex_nodes_1"],
        "memories (text excluded)": ["memories", "memories_scope", "memories_source"],
        "usage": ["usage", "usage_events", "usage_events_session"],
    }
    out = {}
    for g, names in groups.items():
        total = sum(per.pop(x, 0) for x in names)
        if g.startswith("memories"):
            total -= text
        out[g] = round(total / n)
    out["other sqlite"] = round(sum(per.values()) / n)
    idx = os.path.getsize(path + ".hnsw") if os.path.exists(path + ".hnsw") else 0
    out["vector index (hnsw)"] = round(idx / n)
    out["total"] = sum(out.values())
    return out


def test_analogy_candidates(benchmark, store):
    """The slot's store-dependent work on the store's own terms: exact statistics plus the term
    index's candidate search. At 100k it is also run on the store's terms repeated ten times
    (1M memories with the same term distribution: ``extra_info["x10_*"]``), an estimate of 1M
    for stores written like this one, which cannot be written with extraction here in
    reasonable time."""
    import numpy as np

    from fastmem.analogy.postings import TermIndex
    from fastmem.reader.extract import parse_turn

    m, n, _ = store
    benchmark.group = f"analogy candidates {n // 1000}k"
    st = m.admin.engine.structure
    sqs = [s for s in (st.query(parse_turn(m.admin.extractor, q)[0]) for q in B.queries(200, seed=21)) if s is not None]
    it = itertools.cycle(sqs)
    benchmark.pedantic(lambda: m.admin.engine.slot.candidates(next(it), 2.0), rounds=len(sqs), warmup_rounds=5)
    if n >= 100_000:
        rows = m.admin.engine.db.execute("SELECT terms FROM codes").fetchall()
        big = TermIndex()
        big.build(np.arange(1, 10 * len(rows) + 1), [np.frombuffer(t, np.int64) for t, in rows] * 10)
        ts = []
        for s in sqs:
            t0 = time.perf_counter()
            mean, std = st.stats.z_stats(s.vector)
            big.query(s.hashes, s.wts, max((mean + 2 * std) * s.norm, 1e-9), 256)
            ts.append((time.perf_counter() - t0) * 1e3)
        benchmark.extra_info["x10_memories"] = big.n
        benchmark.extra_info["x10_median_ms"] = round(float(np.median(ts[5:])), 3)
        benchmark.extra_info["x10_p90_ms"] = round(float(np.percentile(ts[5:], 90)), 3)
