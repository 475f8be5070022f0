"""Store benchmarks on the real path (MiniLM, SQLite, hnswlib, spaCy).

* ingest: ``remember_many`` next to the raw embedding model on the same texts (the store's
  overhead should be < 15% over embedding alone, without extraction), and with extraction
  and graph maintenance (the default) for the write-cost ratio;
* recall latency at 10k memories, query embedding excluded (cached query) and included
  (a new query every round), analogy slot on and off;
* feedback cost;
* the write rate of chat messages with the standing-statement detection on and off.

    pytest bench/test_bench_store.py --benchmark-only --benchmark-columns=median,iqr,rounds
"""

import itertools
import random

import pytest

import fastmem
from fastmem.models.embedder import default_embedder
from fastmem.reader.extract import SpacyExtractor

SUBJ = "Alice Bob Carol Dan Erin Frank Gina Hugo Ivy Jack Maria Kenji Priya Olga Ravi".split()
VERB = "owns likes visited manages teaches sells repairs paints builds studies bought rents".split()
OBJ = ("a boat,the bakery,a violin,the garden,a laptop,the museum,a bicycle,the farm,a kite,the bridge,"
       "a red car,the old library,a small cafe,the harbour crane").split(",")
PLACES = "Berlin Lisbon Denver Krakow Osaka Lyon Basel Toledo Porto Quito".split()


def texts(n, seed=0):
    rnd = random.Random(seed)
    return [f"{rnd.choice(SUBJ)} {rnd.choice(VERB)} {rnd.choice(OBJ)} in {rnd.choice(PLACES)} "
            f"during week {i % 52} of the project." for i in range(n)]


@pytest.fixture(scope="module")
def model():
    e = default_embedder()
    e.encode(["warm"])
    fastmem.warmup()
    return e


N_INGEST = [256, 1024]


@pytest.mark.parametrize("n", N_INGEST)
def test_ingest_embedding_only_baseline(benchmark, model, n):
    benchmark.group = f"ingest {n}"
    t = texts(n)
    benchmark.pedantic(model.encode, args=(t,), rounds=3, warmup_rounds=1)


def _ingest(benchmark, tmp_path, n, **mem_kw):
    """``remember_many`` of n texts into a fresh store per round (stores closed afterwards)."""
    benchmark.group = f"ingest {n}"
    t = texts(n)
    stores = []

    def setup():
        stores.append(fastmem.Memory(str(tmp_path / f"s{len(stores)}.db"), **mem_kw))
        return (stores[-1],), {}

    try:
        benchmark.pedantic(lambda m: m.remember_many(t), setup=setup, rounds=3, warmup_rounds=1)
    finally:
        for m in stores:
            m.close()


@pytest.mark.parametrize("n", N_INGEST)
def test_ingest_remember_many_no_extraction(benchmark, model, tmp_path, n):
    _ingest(benchmark, tmp_path, n, extractor=None)


@pytest.mark.parametrize("n", N_INGEST)
def test_ingest_remember_many_with_graph(benchmark, model, tmp_path, n):
    _ingest(benchmark, tmp_path, n)


class _NoStanding(SpacyExtractor):
    """The default extractor without standing-statement detection (the baseline)."""

    analyse_many = None


@pytest.mark.parametrize("detect", [False, True])
def test_ingest_chat_messages_kind_detection(benchmark, model, tmp_path, detect):
    """512 messages of the development chats (user and assistant, long markdown answers),
    written as a host writes them (speaker per message), with the standing-statement
    detection on and off: its cost on the write rate (target: at most 5%)."""
    from fastmem.evaluate import chats as CH

    data = CH.load()
    if data is None:
        pytest.skip("tests/data/chats.json is missing")
    msgs = [x for c in data for x in c["messages"]][:512]
    t, who = [x["text"] for x in msgs], [x["role"] for x in msgs]
    benchmark.group = "ingest 512 chat messages"
    stores = []

    def setup():
        stores.append(fastmem.Memory(str(tmp_path / f"k{len(stores)}.db"),
                                     extractor=SpacyExtractor() if detect else _NoStanding()))
        return (stores[-1],), {}

    try:
        benchmark.pedantic(lambda m: m.remember_many(t, speaker=who, progress=False), setup=setup, rounds=3,
                           warmup_rounds=1)
    finally:
        for m in stores:
            m.close()


@pytest.fixture(scope="module")
def store10k(tmp_path_factory, model):
    path = str(tmp_path_factory.mktemp("b") / "10k.db")
    m = fastmem.Memory(path)
    m.remember_many(texts(10_000, seed=1), progress=False)
    yield m
    m.close()


QUERIES = [f"what does {s} own in {p}?" for s in SUBJ for p in PLACES]


@pytest.mark.parametrize("analogy", [False, True])
def test_recall_10k_query_embedding_excluded(benchmark, store10k, analogy):
    benchmark.group = "recall 10k, embedding excluded"
    q = "My friend Bob owns a red car."
    store10k.recall(q, record=False)
    res = benchmark.pedantic(lambda: store10k.recall(q, k=10, analogy=analogy, record=False), rounds=50, warmup_rounds=2)
    if analogy:  # the slot's own share: parsing the turn, and everything after it
        runs = [store10k.recall(q, k=10, record=False).timings_ms for _ in range(30)]
        for key in ("parse", "analogy"):
            benchmark.extra_info[f"{key}_ms_median"] = sorted(r[key] for r in runs)[len(runs) // 2]
        assert res.analogy is None or res.analogy.why["matched"]


@pytest.mark.parametrize("analogy", [False, True])
def test_recall_10k_query_embedding_included(benchmark, store10k, analogy):
    benchmark.group = "recall 10k, embedding included"
    qs = iter(QUERIES * 4)
    benchmark.pedantic(lambda: store10k.recall(next(qs) + f" #{analogy}", k=10, analogy=analogy, record=False),
                       rounds=60, warmup_rounds=2)


def test_query_embedding_alone(benchmark, store10k):
    benchmark.group = "recall 10k, embedding included"
    qs = iter(QUERIES * 4)
    benchmark.pedantic(lambda: store10k.admin.embedder.encode([next(qs) + " x"]), rounds=60, warmup_rounds=2)


def test_recall_10k_recording_usage(benchmark, store10k):
    benchmark.group = "recall 10k, embedding excluded"
    q = "My friend Bob owns a red car."
    benchmark.pedantic(lambda: store10k.recall(q, k=10, analogy=False, record=True), rounds=50, warmup_rounds=2)


def test_feedback(benchmark, store10k):
    benchmark.group = "feedback"
    ids = itertools.cycle(range(1, 1000))
    benchmark.pedantic(lambda: store10k.feedback(next(ids), engaged=True), rounds=200, warmup_rounds=2)


def test_observe_turn(benchmark, store10k):
    benchmark.group = "feedback"
    s = store10k.session("bench")
    turns = itertools.count()

    def one():
        s.recall("what does Alice own in Berlin?", k=10, analogy=False)
        s.observe(f"Alice's boat in Berlin sounds great, turn {next(turns)}")

    benchmark.pedantic(one, rounds=30, warmup_rounds=1)


@pytest.mark.parametrize("n_windows", [2_000, 20_000, 100_000])
def test_best_window_scan(benchmark, tmp_path, n_windows):
    """The vector channel's exact scan over the long memories' window vectors
    (fastmem.derived.windows.WindowIndex.best), per recall: random unit vectors, 5 windows a memory."""
    import numpy as np

    from fastmem.derived.windows import WindowIndex

    benchmark.group = "best window scan"
    rng = np.random.default_rng(0)
    v = rng.standard_normal((n_windows, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    with fastmem.Memory(str(tmp_path / "w.db"), extractor=None) as m:
        ids = m.remember_many([f"memory {i}" for i in range(n_windows // 5)], progress=False)
        with m.host.transaction():
            m.admin.engine.db.executemany("INSERT INTO windows(memory_id, n, vecs) VALUES (?,?,?)",
                             [(mid, 5, v[5 * i : 5 * i + 5].tobytes()) for i, mid in enumerate(ids)])
        w = WindowIndex(m.admin.engine.db, 384)
        q = v[0]
        w.best(q, 50)  # loaded once
        benchmark.pedantic(lambda: w.best(q, 50), rounds=30, warmup_rounds=2)


@pytest.mark.parametrize("fusion", ["score", "auto", "learned"])
def test_recall_10k_fusion(benchmark, store10k, fusion):
    """A recall of the 10k store (embedding excluded, no slot) with each fusion, in the same
    process: the learned fusion also reads each candidate's speaker, length and head; the default
    (auto) first counts the store's long memories (none here: it fuses by score)."""
    from fastmem.recall.fusion import FUSIONS

    benchmark.group = "recall 10k by fusion, embedding excluded"
    pipeline = store10k._engine.pipeline
    saved = pipeline.fuse
    pipeline.fuse = FUSIONS[fusion]
    try:
        q = "My friend Bob owns a red car."
        store10k.recall(q, record=False, analogy=False)
        benchmark.pedantic(lambda: store10k.recall(q, k=10, analogy=False, record=False), rounds=50, warmup_rounds=2)
        runs = [store10k.recall(q, k=10, analogy=False, record=False).timings_ms["fuse"] for _ in range(30)]
        benchmark.extra_info["fuse_ms_median"] = sorted(runs)[len(runs) // 2]
    finally:
        pipeline.fuse = saved
