"""Concurrent recall on one open ``Memory``: calls a second, p50/p99 and answers against serial.

    python bench/concurrent_recall.py [--threads 1 2 4 8 16] [--rounds 2]

The store: every turn of the LoCoMo dev conversations (../shared/data/locomo-dev); the calls:
every question of categories 1-4, split over the threads, each a ``recall(k=10,
record=False)`` with every channel and the analogy slot. The query cache is emptied before
each run, so every call embeds its question. Each thread count runs twice, once with queries
combined (``MiniLM(combine=True)``, the default: :mod:`fastmem.models.combine`) and once
without, alternating, in the same process; the answers (ids of the 10 hits and the analogy)
are compared with a serial run of the same embedder setting.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(__file__))
from conftest import DATA  # noqa: E402

import fastmem  # noqa: E402
from fastmem.evaluate import locomo as L  # noqa: E402
from fastmem.models.embedder import MiniLM  # noqa: E402


ANALOGY = True


def run(m, qs: list[str], threads: int) -> tuple[float, list[float], list[tuple]]:
    m.admin.embedder._cache.clear()
    lat: list[float] = [0.0] * len(qs)
    ans: list[tuple] = [()] * len(qs)

    def one(i: int) -> None:
        t = time.perf_counter()
        r = m.recall(qs[i], k=10, record=False, analogy=ANALOGY)
        lat[i] = (time.perf_counter() - t) * 1e3
        ans[i] = (tuple(h.id for h in r.hits), r.analogy.id if r.analogy is not None else None)

    t0 = time.perf_counter()
    if threads == 1:
        for i in range(len(qs)):
            one(i)
    else:
        with ThreadPoolExecutor(threads) as ex:
            list(ex.map(one, range(len(qs))))
    return time.perf_counter() - t0, lat, ans


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument("--rounds", type=int, default=1, help="runs of each setting (the median is reported)")
    ap.add_argument("--json", help="write the figures here as JSON")
    ap.add_argument("--no-analogy", action="store_true", help="recall without the analogy slot (no parse)")
    a = ap.parse_args()
    global ANALOGY
    ANALOGY = not a.no_analogy
    files = L.conversation_files(os.path.join(DATA, "locomo-dev"))
    if not files:
        print(f"no LoCoMo data under {DATA}; skipping")
        return 0
    rows, qs = [], []
    for f in files:
        conv = json.load(open(f))
        rows += [(r[1], r[3]) for r in L.turns(conv)]
        qs += [q["question"] for q in conv["qa"] if q.get("category") in (1, 2, 3, 4)]
    out = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.db")
        with fastmem.Memory(path) as m:
            m.remember_many([t for t, _ in rows], speaker=[s for _, s in rows], progress=False)
        embedders = {True: MiniLM(combine=True), False: MiniLM(combine=False)}
        mems = {c: fastmem.Memory(path, embedder=e) for c, e in embedders.items()}
        try:
            for m in mems.values():
                fastmem.warmup(models=True)
                m.recall("warm up", k=10, record=False)
            serial = {c: run(m, qs, 1)[2] for c, m in mems.items()}
            for n in a.threads:
                for c in (False, True):
                    runs = [run(mems[c], qs, n) for _ in range(a.rounds)]
                    wall = statistics.median(r[0] for r in runs)
                    lat = sorted(x for r in runs for x in r[1])
                    same = sum(x == y for x, y in zip(runs[-1][2], serial[c])) / len(qs)
                    comb = mems[c].embedder.combiner
                    parse = mems[c].admin.engine.turn_parse
                    row = {"threads": n, "combine": c, "calls_per_s": round(len(qs) / wall, 1),
                           "p50_ms": round(lat[len(lat) // 2], 2), "p99_ms": round(lat[int(len(lat) * 0.99)], 2),
                           "same_as_serial": round(same, 4),
                           "texts_per_pass": round(comb.texts / max(comb.passes, 1), 2) if comb else 1.0,
                           "parses_per_pass": round(parse.texts / max(parse.passes, 1), 2) if parse else None}
                    for x in (comb, parse):
                        if x is not None:
                            x.passes = x.texts = 0
                    out.append(row)
                    print(json.dumps(row), flush=True)
        finally:
            for m in mems.values():
                m.close()
    base = {r["combine"]: r["calls_per_s"] for r in out if r["threads"] == 1}
    for r in out:
        r["speedup_vs_1_thread"] = round(r["calls_per_s"] / base[r["combine"]], 2)
    print(f"{'threads':>7} {'combine':>7} {'calls/s':>8} {'x1':>5} {'p50 ms':>7} {'p99 ms':>7} {'same':>5} {'per pass':>8}")
    for r in out:
        print(f"{r['threads']:>7} {str(r['combine']):>7} {r['calls_per_s']:>8} {r['speedup_vs_1_thread']:>5} "
              f"{r['p50_ms']:>7} {r['p99_ms']:>7} {r['same_as_serial']:>5} {r['texts_per_pass']:>8}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
