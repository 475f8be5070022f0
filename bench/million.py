"""The 1M bench store, and how it is made (``FASTMEM_BENCH_1M=1`` benches use it; run this file
to build it ahead: ``python bench/million.py``).

Deriving a million memories with the models takes hours on 2 cores (64-133 writes a second
with extraction), so the store is made from real derived rows, replicated:

1. the cached 100k scale store (``fastmem.evaluate.bench.texts(100_000)`` written with
   ``remember_many``: MiniLM, spaCy, codes; see ``test_bench_scale.py``) is exported with
   everything derived (``export --vectors``), once, and cached beside it;
2. ten copies of its rows are bulk-loaded (``import_jsonl``, 100k rows a transaction) into a
   new store. Copy 0 is the export as it is; copy k >= 1 has fresh ids (assigned by the
   store), the text with `` [copy k]`` appended, its vector perturbed (Gaussian noise of
   standard deviation :data:`NOISE` per dimension, renormalised: cosine about 0.96 to the
   original) and its facts, events and structural code as they were (the same structure, so
   the slot's statistics and candidate search see ten memories per structure).

What this store is not: a million distinct conversations. Keyword and graph postings are ten
times as long per term as in a store of a million different texts of this vocabulary, which
makes the keyword and graph channels' work here an upper bound rather than typical.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

#: Per-dimension standard deviation of the noise added to a copy's vector.
NOISE = 0.015
COPIES = 10
BASE = 100_000


def _export(base_path: str) -> str:
    import fastmem

    out = base_path + ".export.jsonl"
    if not os.path.exists(out + ".done") or not _carries_graph(out):  # an export of before the graph travelled
        with fastmem.Memory(base_path, progress=False) as m:
            m.admin.export_jsonl(out, vectors=True)
        open(out + ".done", "w").close()
    return out


def _carries_graph(export: str) -> bool:
    with open(export, encoding="utf-8") as fh:
        return "index_graph" in json.loads(fh.readline())


def _copy(export: str, k: int, dest: str, seed: int) -> int:
    """Write copy ``k`` of the export to ``dest``; returns its memory count."""
    rng = np.random.default_rng(seed + k)
    n = 0
    with open(export, encoding="utf-8") as fh, open(dest, "w", encoding="utf-8") as out:
        out.write(fh.readline())  # the header
        for line in fh:
            r = json.loads(line)
            if "text" not in r:
                if k == 0:  # aliases and categories, once
                    out.write(line)
                continue
            n += 1
            if k:
                r["text"] = f"{r['text']} [copy {k}]"
                r.pop("chunk", None)
                if r.get("vector"):
                    v = np.frombuffer(base64.b64decode(r["vector"]), np.float32).astype(np.float64)
                    v = v + rng.normal(0.0, NOISE, v.shape)
                    r["vector"] = base64.b64encode((v / np.linalg.norm(v)).astype(np.float32).tobytes()).decode()
                r.pop("windows", None)  # a copy's text is not what its windows were read from
            out.write(json.dumps(r) + "\n")
    return n


def build(path: str, base_path: str, *, copies: int = COPIES, log=print) -> None:
    """Make the replicated store at ``path`` from the closed store at ``base_path``."""
    import fastmem

    export = _export(base_path)
    part = path + ".part.jsonl"
    with fastmem.Memory(path, progress=False) as m:
        for k in range(copies):
            t0 = time.perf_counter()
            n = _copy(export, k, part, seed=7)
            t1 = time.perf_counter()
            m.admin.import_jsonl(part, progress=False)
            t2 = time.perf_counter()
            log(f"copy {k}: {n} rows, written in {t1 - t0:.1f} s, loaded in {t2 - t1:.1f} s "
                f"({n / (t2 - t1):.0f} rows/s); store {len(m)}")
    os.remove(part)


def million_store() -> str:
    """The cached 1M store (built when missing; ~10-20 minutes on 2 cores after the 100k one)."""
    from conftest import cached_store
    from test_bench_scale import _build

    base = cached_store("scale", BASE, _build(BASE))
    return cached_store("million", BASE * COPIES, lambda p: build(p, base))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(million_store())
