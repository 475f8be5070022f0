"""``fastmem ui``: what each page costs to serve (request to full HTML, through Starlette's test
client, no network) at 10k memories and, opt-in, 100k (``FASTMEM_BENCH_100K=1``), on the
cached scale stores of ``test_bench_scale.py``, models loaded before the clock. The recall
page gets a new query each round (its embedding included); ``extra_info["render_ms"]`` is
the template's own share (the ``Server-Timing`` header).

    pytest bench/test_bench_ui.py --benchmark-only --benchmark-columns=median,iqr,rounds
"""

import itertools
import os
import re

import pytest

pytest.importorskip("starlette", reason="fastmem ui needs fastmem[ui]")

from conftest import cached_store, fresh_copy  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from test_bench_scale import _build  # noqa: E402

import fastmem  # noqa: E402
from fastmem.evaluate import bench as B  # noqa: E402
from fastmem.ui import create_app  # noqa: E402

SIZES = [10_000] + ([100_000] if os.environ.get("FASTMEM_BENCH_100K") else [])


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n // 1000}k")
def client(request, tmp_path_factory):
    n = request.param
    fastmem.warmup(models=True)
    path = fresh_copy(cached_store("scale", n, _build(n)), str(tmp_path_factory.mktemp(f"ui{n}")))
    with fastmem.Memory(path, progress=False) as m:
        c = TestClient(create_app(m))
        yield c, m, n


def _get(c, url, info):
    r = c.get(url)
    assert r.status_code == 200, r.text[-500:]
    info.append(float(re.search(r"dur=([\d.]+)", r.headers["server-timing"]).group(1)))
    return r


@pytest.mark.parametrize("name", ["home", "recall", "memory", "graph", "review", "use", "health"])
def test_page(benchmark, client, name):
    c, m, n = client
    benchmark.group = f"ui {n // 1000}k"
    renders = []
    mid = m.rows.newest(limit=1)[0]
    ent = m.graph.facts(mid)[0].subject if m.graph.facts(mid) else "Porto"
    queries = itertools.cycle(B.queries(200, seed=21))
    url = {"home": lambda: "/", "recall": lambda: "/recall?q=" + next(queries), "memory": lambda: f"/memory/{mid}",
           "graph": lambda: f"/graph?name={ent}", "review": lambda: "/review", "use": lambda: "/use",
           "health": lambda: "/health"}[name]
    _get(c, url(), renders)
    benchmark.pedantic(lambda: _get(c, url(), renders), rounds=20, warmup_rounds=0)
    benchmark.extra_info["render_ms"] = sorted(renders)[len(renders) // 2]
