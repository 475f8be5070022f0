"""The hermes provider next to hermes' bundled holographic provider, in the same run, on the
same real conversation turns (LoCoMo dev, ../shared/data; skipped without it) at 1k, 2k and
4k memories (4k: FASTMEM_BENCH_HERMES_4K=1; the holographic store grows one fact at a time,
which takes minutes).

Per size, each provider's store is grown to the size by its own write path one turn at a time
(holographic: ``fact_store add``; fastmem: ``sync_turn`` with ``sync_turn: user``, one memory
per turn), then measured:

* ``add``      - holographic ``fact_store add`` / fastmem ``sync_turn`` of the next turn;
* ``prefetch`` - holographic ``prefetch`` (a synchronous search) / fastmem ``prefetch`` of a
  query whose recall ``queue_prefetch`` has computed (the cached read hermes makes per turn);
* ``recall``   - fastmem's ``queue_prefetch`` work: the full recall (embedding, channels,
  fusion, use weights, analogy slot) that runs on its worker thread.

LoCoMo dev has 788 turns; beyond them the turns repeat with a ``[copy k]`` prefix (holographic
refuses duplicate texts). Queries are LoCoMo's questions.

    pytest bench/test_bench_hermes.py --benchmark-only --benchmark-columns=median,iqr,rounds
"""

import itertools
import json
import os
import sys

import pytest

pytest.importorskip("agent.memory_provider")
sys.path.insert(0, os.path.dirname(__file__))
from locomo import conversation_files, turns  # noqa: E402

SIZES = [1000, 2000] + ([4000] if os.environ.get("FASTMEM_BENCH_HERMES_4K") else [])
OPS = ["holographic add", "fastmem add", "holographic prefetch", "fastmem prefetch", "fastmem recall"]


def _texts():
    base = [t for f in conversation_files() for _, t, *_ in turns(json.load(open(f)))]
    for k in itertools.count():
        for t in base:
            yield t if k == 0 else f"[copy {k}] {t}"


def _questions():
    return [q["question"] for f in conversation_files() for q in json.load(open(f))["qa"] if q.get("question")]


class Stores:
    """Both providers over their own store files, grown together."""

    def __init__(self, tmp):
        from plugins.memory.holographic import HolographicMemoryProvider

        from fastmem.hermes.provider import FastmemProvider

        home = str(tmp)
        os.environ["HERMES_HOME"] = home
        self.holo = HolographicMemoryProvider(config={"db_path": os.path.join(home, "holo.db")})
        self.holo.initialize("bench", hermes_home=home)
        self.fast = FastmemProvider(config={"db_path": os.path.join(home, "fast.db"), "sync_turn": "user"})
        self.fast.initialize("bench", hermes_home=home, agent_context="primary")
        self.fast._pool.submit(lambda: None).result()  # warm-up finished
        self.texts = _texts()
        self.n = 0

    def add_holo(self, text):
        out = json.loads(self.holo.handle_tool_call("fact_store", {"action": "add", "content": text}))
        assert "fact_id" in out, out

    def add_fast(self, text):
        self.fast.sync_turn(text, "", session_id="bench")

    def grow_to(self, n):
        while self.n < n:
            t = next(self.texts)
            self.add_holo(t)
            self.add_fast(t)
            self.n += 1


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    if not conversation_files():
        pytest.skip("LoCoMo dev data not found (set FASTMEM_DATA)")
    s = Stores(tmp_path_factory.mktemp("hermes"))
    yield s
    s.fast.shutdown()
    s.holo.shutdown()


@pytest.mark.parametrize("size,op", [(n, op) for n in SIZES for op in OPS], ids=lambda x: str(x))
def test_provider(benchmark, stores, size, op):
    benchmark.group = f"hermes provider, {size} memories"
    stores.grow_to(size)
    qs = itertools.cycle(_questions())
    if op == "holographic add":
        benchmark.pedantic(lambda: stores.add_holo(next(stores.texts)), rounds=20, warmup_rounds=1)
    elif op == "fastmem add":
        benchmark.pedantic(lambda: stores.add_fast(next(stores.texts)), rounds=20, warmup_rounds=1)
    elif op == "holographic prefetch":
        benchmark.pedantic(lambda: stores.holo.prefetch(next(qs)), rounds=40, warmup_rounds=2)
    elif op == "fastmem prefetch":
        def setup():
            q = next(qs)
            stores.fast._compute(q, "bench")  # what queue_prefetch runs on the worker
            return (q,), {}

        benchmark.pedantic(lambda q: stores.fast.prefetch(q, session_id="bench"), setup=setup, rounds=40)
    else:
        benchmark.pedantic(lambda: stores.fast._compute(next(qs) + " ", "bench"), rounds=40, warmup_rounds=2)
    benchmark.extra_info["memories"] = stores.n
