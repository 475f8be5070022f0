"""The background passes at 10k and 100k memories (100k: FASTMEM_BENCH_100K=1; the store is
built once and cached, see conftest.cached_store): ``consolidate`` (chunks) and
``propose_categories``, each on a fresh copy of the store per round. Neither may grow
quadratically: compare the medians (``extra_info`` has the clusters and proposals found).

The store: synthetic agent memories about 2,500 people, 300 organisations and 200 places,
written with their facts given as triples (the passes read the graph; parsing would only
slow the build): a story of five memories about the same person, organisation and place every
40 memories, and between them memories that name one person and a thing.

    pytest bench/test_bench_passes.py --benchmark-only --benchmark-columns=median,iqr,rounds
"""

import os
import random

import pytest
from conftest import cached_store, fresh_copy

import fastmem

SIZES = [10_000] + ([100_000] if os.environ.get("FASTMEM_BENCH_100K") else [])
FIRST = ("Alma Bruno Chen Dara Emil Fatima Goran Hana Ivo Jana Kofi Lena Milo Nia Omar Pavel Quinn Rosa Sami Tove "
         "Umar Vera Wim Xena Yusuf Zoe Anil Bea Cato Dina Ezra Femi Gael Hugo Ida Jonas Kai Luz Mara Nils").split()
LAST = ("Reyes Novak Tanaka Berg Costa Diaz Eriksen Fox Gupta Haas Ito Jensen Khan Lund Moreau Nagy Okafor Park "
        "Quist Rossi Silva Toth Ueda Varga Weber Xu Yilmaz Zeller Abe Brandt Cruz Dahl Engel Ferro Gomez Holt "
        "Ibsen Jovic Kato Lopez Mills Nolan Ortiz Pires Quint Rahm Sato Tovar Urban Vidal").split()


THINGS = ["a bicycle", "a violin", "a kayak", "a laptop", "a telescope", "a tent", "a camera", "a lamp"]


def synthetic(n: int, seed: int = 0):
    rnd = random.Random(seed)
    people = [f"{f} {l}" for f in FIRST for l in LAST][:2500]
    orgs = [f"{w} {s}" for w in ("Acme Blue Red Nord Sun Iron Star Oak Pine Delta".split())
            for s in ("Labs Works Bank Foods Media Motors Health Energy Logistics Studio Foundry Partners "
                      "Systems Dynamics Capital Group Retail Textiles Robotics Pharma Games Air Rail Books "
                      "Farms Mining Security Travel Design Legal").split()][:300]
    places = [f"{a}{b}" for a in ("North East West South New Old Port Lake Hill Fort".split())
              for b in ("haven ford field bury ton wick dale moor gate bridge mouth stead ley wood cliff brook "
                        "holm by thorpe sted").split()][:200]
    texts, triples = [], []
    story = None
    for i in range(n):
        if i % 40 == 0:
            story = (rnd.choice(people), rnd.choice(orgs), rnd.choice(places))
        if i % 40 < 5:
            p, o, pl = story
        else:
            p, o, pl = rnd.choice(people), rnd.choice(orgs), rnd.choice(places)
        if i % 40 >= 5:  # background: one named entity and a thing, so that two memories
            # share two names only when they belong together (random pairs would otherwise
            # grow as N^2 and the bench would measure the data, not the pass)
            thing = rnd.choice(THINGS)
            texts.append(f"{p} bought {thing} (note {i}).")
            triples.append([(p, "buy", thing, "person", "thing")])
            continue
        k = rnd.randrange(4)
        if k == 0:
            texts.append(f"{p} works for {o} in {pl} (note {i}).")
            triples.append([(p, "work for", o, "person", "organisation"), (p, "live in", pl, "person", "place")])
        elif k == 1:
            texts.append(f"{p} visited {o} in {pl} (note {i}).")
            triples.append([(p, "visit", o, "person", "organisation"), (o, "be in", pl, "organisation", "place")])
        elif k == 2:
            texts.append(f"{o} hired {p} for a project in {pl} (note {i}).")
            triples.append([(o, "hire", p, "organisation", "person"), (p, "work in", pl, "person", "place")])
        else:
            texts.append(f"{p} moved to {pl} and joined {o} (note {i}).")
            triples.append([(p, "move to", pl, "person", "place"), (p, "join", o, "person", "organisation")])
    return texts, triples


def _build(n):
    def build(path):
        texts, triples = synthetic(n)
        with fastmem.Memory(path, progress=True) as m:
            for start in range(0, n, 5000):
                m.remember_many(texts[start : start + 5000], triples=triples[start : start + 5000], progress=False)
    return build


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n // 1000}k")
def store_path(request):
    return cached_store("passes2", request.param, _build(request.param)), request.param


def _rounds(n):
    return 3 if n <= 10_000 else 1


def test_consolidate(benchmark, store_path, tmp_path):
    path, n = store_path
    benchmark.group = "background passes"
    runs = []

    def setup():
        d = tmp_path / f"c{len(runs)}"
        d.mkdir()
        m = fastmem.Memory(fresh_copy(path, str(d)), progress=False)
        runs.append(m)
        return (m,), {}

    try:
        rep = benchmark.pedantic(lambda m: m.consolidate(progress=False), setup=setup, rounds=_rounds(n))
    finally:
        for m in runs:
            m.close()
    benchmark.extra_info.update(memories=n, clusters=rep.clusters, created=len(rep.created), hubs=len(rep.hubs))


def test_propose_categories(benchmark, store_path, tmp_path):
    path, n = store_path
    benchmark.group = "background passes"
    runs = []

    def setup():
        d = tmp_path / f"p{len(runs)}"
        d.mkdir()
        m = fastmem.Memory(fresh_copy(path, str(d)), progress=False)
        runs.append(m)
        return (m,), {}

    try:
        props = benchmark.pedantic(lambda m: m.categories.propose(), setup=setup, rounds=_rounds(n))
    finally:
        for m in runs:
            m.close()
    benchmark.extra_info.update(memories=n, proposals=len(props), largest=max((len(c.members) for c in props), default=0))
