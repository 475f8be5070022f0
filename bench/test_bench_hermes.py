"""The hermes provider next to hermes' bundled holographic provider, in the same run, on the
same real conversation turns (LoCoMo dev, ../shared/data; skipped without it) at 1k, 2k and
4k memories (4k: FASTMEM_BENCH_HERMES_4K=1; the holographic store grows one fact at a time,
which takes minutes).

Per size, each provider's store is grown to the size by its own write path one turn at a time
(holographic: ``fact_store add``; fastmem: ``sync_turn`` with ``sync_turn: user``, one memory
per turn), then measured:

* ``add``      - holographic ``fact_store add`` / fastmem ``sync_turn`` of the next turn (what the
  host waits for: the commit; fastmem derives the embedding, facts and structure on its
  background thread, measured as ``derive``);
* ``prefetch`` - ``prefetch`` of a new message each round, as hermes asks before every turn:
  holographic's search / fastmem's full recall (embedding, every channel, use weights, the
  analogy slot);
* ``derive``   - fastmem's background work per turn (embed, parse, commit of one turn);
* ``turn``     - one turn in hermes' order: ``prefetch`` of the user's message, ``sync_turn`` of it,
  and the background work its write leaves (the message without its LoCoMo speaker label, as
  a user types it; the write reads the parse the recall made).

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
OPS = ["holographic add", "fastmem add", "holographic prefetch", "fastmem prefetch", "fastmem derive", "fastmem turn"]


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
        assert self.fast.wait(timeout=600)  # warm-up finished: the models are loaded
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
        assert self.fast.wait(timeout=3600)  # every turn derived before measuring


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
        benchmark.pedantic(lambda: stores.fast.prefetch(next(qs) + " ", session_id="bench"), rounds=40,
                           warmup_rounds=2)
    elif op == "fastmem turn":
        from fastmem.util.text import strip_label

        def turn():
            message = strip_label(next(stores.texts))
            stores.fast.prefetch(message, session_id="bench")
            stores.fast.sync_turn(message, "", session_id="bench")
            assert stores.fast.wait(timeout=60)  # its write derived (the background thread's work)

        benchmark.pedantic(turn, rounds=20, warmup_rounds=1)
    else:
        mem = stores.fast._mem

        def setup():
            mem.remember(next(stores.texts), scope=stores.fast._ctx.scope, wait=False)
            return (), {}

        benchmark.pedantic(mem.pending.derive, setup=setup, rounds=20)
    benchmark.extra_info["memories"] = stores.n
