"""The MCP server's cost: a ``recall`` through ``fastmem mcp`` over stdio (the SDK's own
client, one session held for every round) next to the same recall in-process, on the 10k
scale store (written with extraction; cached, see conftest.cached_store).

Both sides recall with a query new to their process each round (the embedding included), k=5,
the analogy slot on, nothing recorded (the server runs ``--read-only``). The difference of
the medians is what a client pays for the protocol: JSON-RPC framing, the pipes, the
SDK's argument validation and result serialisation, and the client's thread hop.

    pytest bench/test_bench_mcp.py --benchmark-only --benchmark-columns=median,iqr,rounds
"""

import itertools
import os
import sys

import pytest

pytest.importorskip("mcp")
from anyio.from_thread import start_blocking_portal
from conftest import cached_store, fresh_copy
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from test_bench_scale import _build

import fastmem
from fastmem.evaluate import bench as B

N = 10_000


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    fastmem.warmup(models=True)
    path = fresh_copy(cached_store("scale", N, _build(N)), str(tmp_path_factory.mktemp("mcp")))
    with fastmem.Memory(path, progress=False) as m:
        yield m, path


@pytest.fixture(scope="module")
def client(store):
    _, path = store
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "fastmem", "mcp", "--db", path, "--read-only"],
                                   env=env)
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(stdio_client(params)) as (r, w):
            with portal.wrap_async_context_manager(ClientSession(r, w)) as s:
                portal.call(s.initialize)
                for q in B.queries(3, seed=99):  # the server's models loaded and its kernels dispatched
                    portal.call(s.call_tool, "recall", {"query": q, "k": 5})
                yield lambda q: portal.call(s.call_tool, "recall", {"query": q, "k": 5})


def test_recall_in_process(benchmark, store):
    m, _ = store
    benchmark.group = f"mcp recall {N // 1000}k"
    qs = itertools.cycle(B.queries(300, seed=7))
    m.recall(next(qs), k=5, record=False)
    benchmark.pedantic(lambda: m.recall(next(qs), k=5, record=False), rounds=60, warmup_rounds=3)


def test_recall_over_mcp_stdio(benchmark, client):
    benchmark.group = f"mcp recall {N // 1000}k"
    qs = itertools.cycle(B.queries(300, seed=8))

    def one():
        res = client(next(qs))
        assert not res.isError, res

    benchmark.pedantic(one, rounds=60, warmup_rounds=3)
