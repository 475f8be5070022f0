"""Bulk load: ``import_jsonl`` of an export with everything derived (``export --vectors``: vectors,
structural codes, windows, statement vectors) into a new store, at 4k memories and, opt-in,
100k (FASTMEM_BENCH_100K=1; the cached scale store's export). The models are loaded before
the clock starts; nothing is embedded, parsed or encoded.

Baselines, in the same process: the same export without the index graph it carries (what an
export carried before the graph travelled: the import builds the hnswlib index from the
vectors), and without the graph or the structural codes (what an export carried before codes
travelled: the import also encodes every memory's code again). ``extra_info["rows_per_s"]``
holds the rate of each.

    pytest bench/test_bench_bulk.py --benchmark-only --benchmark-columns=median,min,max,rounds
"""

import json
import os

import pytest
from conftest import cached_store

import fastmem
from fastmem.evaluate import bench as B

SIZES = [4_000] + ([100_000] if os.environ.get("FASTMEM_BENCH_100K") else [])


def _small(path):
    with fastmem.Memory(path, progress=False) as m:
        m.remember_many(B.texts(4_000), progress=False)


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n // 1000}k")
def export(request, tmp_path_factory):
    n = request.param
    from million import _export

    if n == 100_000:
        from test_bench_scale import _build

        full = _export(cached_store("scale", n, _build(n)))
    else:
        full = _export(cached_store("bulk", n, _small))
    here = tmp_path_factory.mktemp("bare")
    nograph, bare = str(here / "nograph.jsonl"), str(here / "bare.jsonl")
    with open(full, encoding="utf-8") as src, open(nograph, "w", encoding="utf-8") as out1, \
            open(bare, "w", encoding="utf-8") as out2:
        for line in src:
            r = json.loads(line)
            r.pop("index_graph", None)  # the header's
            out1.write(json.dumps(r) + "\n")
            r.pop("code", None)
            out2.write(json.dumps(r) + "\n")
    fastmem.warmup(models=True)
    return n, full, nograph, bare


def _load(benchmark, tmp_path, src, n, rounds):
    paths = iter(str(tmp_path / f"s{i}.db") for i in range(rounds + 1))
    mems = []

    def setup():
        m = fastmem.Memory(next(paths), progress=False)
        m.recall("warm up", k=1, record=False)
        mems.append(m)
        return (m,), {}

    benchmark.pedantic(lambda m: m.admin.import_jsonl(src, progress=False), setup=setup, rounds=rounds)
    for m in mems:
        assert len(m) == n
        m.close()
    if benchmark.stats is not None:  # None under --benchmark-disable
        benchmark.extra_info["rows_per_s"] = round(n / benchmark.stats.stats.median)


def test_bulk_load(benchmark, export, tmp_path):
    n, full, _, _ = export
    benchmark.group = f"bulk load {n // 1000}k"
    _load(benchmark, tmp_path, full, n, rounds=3 if n <= 10_000 else 1)


def test_import_building_the_index(benchmark, export, tmp_path):
    n, _, nograph, _ = export
    benchmark.group = f"bulk load {n // 1000}k"
    _load(benchmark, tmp_path, nograph, n, rounds=3 if n <= 10_000 else 1)


def test_import_encoding_codes_again(benchmark, export, tmp_path):
    n, _, _, bare = export
    benchmark.group = f"bulk load {n // 1000}k"
    _load(benchmark, tmp_path, bare, n, rounds=3 if n <= 10_000 else 1)
