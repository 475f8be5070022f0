"""``fastmem bench``: ingest throughput and the latency of every recall stage against store
size, on the real path (MiniLM, spaCy, SQLite, hnswlib), with an optional plot.

Stores are written with extraction from :func:`texts` (synthetic agent memories: people,
organisations, places and everyday events in varied sentences) and kept in ``cache`` when
given, keyed by size and fastmem's schema and structure versions. Each size reports the
ingest rate of its last batch (``remember_many``, 1,000 memories) and, over ``queries``
turns, the median milliseconds of each stage of ``Recall.timings_ms`` (``embed`` is the
query embedding; ``parse`` the turn's parse; ``total`` the wall-clock of everything but the
embedding) and of the whole recall. The pytest-benchmark
suite in the repository's ``bench/`` measures the same paths with more control.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time

import numpy as np

__all__ = ["texts", "queries", "parse_size", "run", "table", "plot", "STAGES"]

STAGES = ("embed", "parse", "keyword", "vector", "graph", "fuse", "analogy", "total")

_FIRST = ("Alma Bruno Chen Dara Emil Fatima Goran Hana Ivo Jana Kofi Lena Milo Nia Omar Pavel Quinn Rosa Sami Tove "
          "Umar Vera Wim Xena Yusuf Zoe Anil Bea Cato Dina").split()
_LAST = "Reyes Novak Tanaka Berg Costa Diaz Eriksen Fox Gupta Haas Ito Jensen Khan Lund Moreau Nagy Okafor Park".split()
_ORGS = [f"{a} {b}" for a in "Acme Blue Nord Sun Iron Oak Delta Pine".split()
         for b in "Labs Bank Foods Media Motors Health Energy Studio Partners Systems".split()]
_PLACES = ("Lisbon Oslo Denver Krakow Osaka Lyon Basel Toledo Porto Quito Nairobi Perth Boston Tallinn Cork Bergen "
           "Seville Utrecht Ghent Malmo").split()
_THINGS = ["a bicycle", "the garden", "a violin", "a kayak", "the old car", "a telescope", "the roof", "a laptop",
           "a sourdough starter", "the quarterly report", "a wedding cake", "the apartment", "a tent", "the boat"]
_TEMPLATES = [
    "{p} moved to {pl} in {m} and started working for {o}.",
    "{p} bought {t} from a shop near {pl} last {m}.",
    "{o} hired {p} to lead a new team in {pl}.",
    "{p} said the meeting with {o} went well and they will sign in {m}.",
    "I think {p} repaired {t} because it broke during the storm.",
    "{p} and {q} are planning a trip to {pl} after {m}.",
    "The deadline for {t} is the end of {m}, according to {p}.",
    "{p} prefers tea in the morning but drinks coffee at {o}.",
    "{q} asked {p} to look after {t} while she visits {pl}.",
    "{o} opened an office in {pl}, and {p} will manage it.",
    "{p} painted {t} blue and gave it to {q} as a present.",
    "After the concert in {pl}, {p} told {q} about the new job at {o}.",
    "{p} lost the keys to {t} somewhere in {pl}.",
    "Last {m}, {p} ran a half marathon in {pl} with {q}.",
    "{p} is allergic to peanuts, so {o} changed the catering.",
]
_MONTHS = "January February March April May June July August September October November December".split()


def texts(n: int, seed: int = 0) -> list[str]:
    """``n`` synthetic agent memories (deterministic for a seed)."""
    rnd = random.Random(seed)
    people = [f"{f} {l}" for f in _FIRST for l in _LAST]
    out = []
    for i in range(n):
        p, q = rnd.sample(people, 2)
        out.append(rnd.choice(_TEMPLATES).format(p=p, q=q, o=rnd.choice(_ORGS), pl=rnd.choice(_PLACES),
                                                 t=rnd.choice(_THINGS), m=rnd.choice(_MONTHS)))
    return out


def queries(n: int, seed: int = 1) -> list[str]:
    """Turns to recall with: questions about the same world, and statements."""
    rnd = random.Random(seed)
    people = [f"{f} {l}" for f in _FIRST for l in _LAST]
    forms = ["Where did {p} move?", "What did {p} buy in {pl}?", "Who works for {o}?", "When is {t} due?",
             "My friend {p} owns {t}.", "Is {p} allergic to anything?", "Who is planning a trip to {pl}?"]
    return [rnd.choice(forms).format(p=rnd.choice(people), o=rnd.choice(_ORGS), pl=rnd.choice(_PLACES),
                                     t=rnd.choice(_THINGS)) for _ in range(n)]


def parse_size(s: str) -> int:
    """``"10k"`` -> 10000, ``"1m"`` -> 1000000."""
    s = s.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(s[-1:], 1)
    return int(float(s[:-1] if mult > 1 else s) * mult)


def _store(n: int, folder: str) -> tuple[str, float]:
    """A store of ``n`` memories in ``folder`` (reused when complete); the ingest rate of its
    last batch of 1,000 (memories per second, 0 when reused)."""
    import fastmem

    from ..analogy.codes import StructureEncoder
    from ..storage.store import SCHEMA_VERSION

    path = os.path.join(folder, f"bench-{n}-schema{SCHEMA_VERSION}-struct{StructureEncoder.version}.db")
    if os.path.exists(path + ".done"):
        return path, 0.0
    for s in ("", ".hnsw", ".hnsw.json", ".terms", "-wal", "-shm"):
        if os.path.exists(path + s):
            os.remove(path + s)
    all_texts = texts(n)
    rate = 0.0
    with fastmem.Memory(path, progress=False) as m:
        for start in range(0, n, 1000):
            t0 = time.perf_counter()
            part = all_texts[start : start + 1000]
            m.remember_many(part, progress=False)
            rate = len(part) / (time.perf_counter() - t0)
    open(path + ".done", "w").close()
    return path, rate


def _distinct_queries():
    """Turns from :func:`queries`, none repeated (so each one is new to the embedding cache)."""
    seen: set[str] = set()
    seed = 1
    while True:
        for q in queries(1000, seed=seed):
            if q not in seen:
                seen.add(q)
                yield q
        seed += 1


def run(sizes, *, queries: int = 50, cache: str | None = None) -> dict:
    """Measure each size (see the module docstring); returns ``{"sizes": [...], "results":
    {size: {"ingest_per_s", "<stage>_ms", "recall_ms", "recall_with_embed_ms"}}}``."""
    import fastmem

    fastmem.warmup(models=True)
    folder = cache or tempfile.mkdtemp(prefix="fastmem-bench-")
    os.makedirs(folder, exist_ok=True)
    results = {}
    fresh = _distinct_queries()
    try:
        for n in sizes:
            path, rate = _store(n, folder)
            qs = [next(fresh) for _ in range(queries + 3)]  # each new to the embedding cache
            with fastmem.Memory(path, progress=False) as m:
                for q in qs[:3]:
                    m.recall(q, record=False)
                stages = {s: [] for s in STAGES}
                whole = []
                for q in qs[3:]:  # the real path: the turn is embedded
                    t0 = time.perf_counter()
                    r = m.recall(q, record=False)
                    whole.append((time.perf_counter() - t0) * 1e3)
                    t = r.timings_ms
                    for s in STAGES[:-1]:
                        stages[s].append(t.get(s, 0.0))
                    stages["total"].append(whole[-1] - t["embed"])  # wall-clock, all but the embedding
            results[n] = {"ingest_per_s": rate} | {f"{s}_ms": float(np.median(v)) for s, v in stages.items()} | {
                "recall_with_embed_ms": float(np.median(whole))}
    finally:
        if cache is None:
            shutil.rmtree(folder, ignore_errors=True)
    return {"sizes": list(sizes), "queries": queries, "results": results}


def table(res: dict) -> str:
    cols = [f"{s}_ms" for s in STAGES] + ["recall_with_embed_ms", "ingest_per_s"]
    lines = [f"{'size':>9s} " + " ".join(f"{c.replace('_ms', ''):>9s}" for c in cols)]
    for n, r in res["results"].items():
        lines.append(f"{int(n):9d} " + " ".join(f"{r[c]:9.2f}" for c in cols))
    return "\n".join(lines) + "\n(milliseconds, medians; ingest in memories per second, 0 when the store was reused)"


def plot(res: dict, path: str, *, width: float = 8.0, height: float = 5.0, dpi: int = 100) -> str:
    """Latency of each stage against store size (log-log) as a PNG of ``width x height``
    inches at ``dpi``. Needs matplotlib (``pip install fastmem[plot]``)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # an optional extra
        raise RuntimeError("plotting needs matplotlib: pip install 'fastmem[plot]'") from exc
    sizes = sorted(int(n) for n in res["results"])
    fig, ax = plt.subplots(figsize=(width, height), dpi=dpi)
    for s in list(STAGES) + ["recall_with_embed"]:
        ys = [max(res["results"][n if n in res["results"] else str(n)][f"{s}_ms"], 1e-3) for n in sizes]
        ax.plot(sizes, ys, marker="o", label=s, linewidth=2.2 if s in ("total", "recall_with_embed") else 1.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories in the store")
    ax.set_ylabel("median latency (ms)")
    ax.set_title("fastmem recall, per stage")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
