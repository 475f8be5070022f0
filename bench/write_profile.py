"""Where a write's milliseconds go, and writes a second, on real chat turns.

    python bench/write_profile.py [--reps 3] [--json out.json]

The turns: every turn of the LoCoMo dev conversations (../shared/data/locomo-dev), written a
session at a time (``remember_many`` with speaker and source, as a host that writes each
session does) into a fresh store, the models loaded first. Printed:

- the models alone on the same turns: spaCy's pipeline (``nlp.pipe``) and MiniLM (batched),
  in ms a turn, and their sum (one after the other) and their max (perfectly overlapped);
  their CPU time a turn, and the bound it sets on every core (MiniLM already runs on several:
  "perfectly overlapped" assumes a free core it does not have);
- ``remember_many``: writes a second (median of ``--reps`` fresh stores);
- a profile of one run: the cumulative milliseconds a turn of the write's stages (the
  models' half: embedding, parse and reading, standing statements; the commit: rows, who,
  facts and names, codes, windows, statistics, the index), from ``cProfile``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from conftest import DATA  # noqa: E402

import fastmem  # noqa: E402

#: (label, function name as cProfile names it: file suffix and function)
STAGES = [
    ("prepare (the models' half)", "write/prepare.py", "prepare"),
    ("  embed (MiniLM, windows)", "models/embedder.py", "encode_with_windows"),
    ("  parse + read (spaCy, facts, events)", "reader/extract.py", "analyse_texts"),
    ("  standing sentences embedded", "write/prepare.py", "_statements"),
    ("commit (one transaction)", "core/engine.py", "commit"),
    ("  rows", "write/commit.py", "_insert_rows"),
    ("  who (pronouns to names)", "reader/who.py", "resolve_facts"),
    ("  derived (facts, names, codes, windows, standing)", "write/commit.py", "_insert_derived"),
    ("  index add (hnswlib)", "derived/ann.py", "add"),
]


def sessions() -> list[tuple[list[str], list[str], str]]:
    out = []
    for f in sorted(os.listdir(os.path.join(DATA, "locomo-dev"))):
        if not f.endswith(".json"):
            continue
        d = json.load(open(os.path.join(DATA, "locomo-dev", f)))
        for k, v in d.items():
            if re.fullmatch(r"session_\d+", k) and isinstance(v, list) and v:
                out.append(([f"{t['speaker']}: {t['text']}" for t in v], [t["speaker"] for t in v], f"{f}-{k}"))
    return out


def write_all(rows, profile: cProfile.Profile | None = None) -> float:
    with fastmem.Memory(os.path.join(tempfile.mkdtemp(), "w.db"), progress=False) as m:
        m.remember("warm up the store", source="x")
        t0 = time.perf_counter()
        if profile is not None:
            profile.enable()
        for texts, sp, src in rows:
            m.remember_many(texts, speaker=sp, source=src)
        if profile is not None:
            profile.disable()
        return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", help="write the figures here as JSON")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(DATA, "locomo-dev")):
        print(f"no LoCoMo data under {DATA}; skipping")
        return 0
    rows = sessions()
    texts = [t for r in rows for t in r[0]]
    n = len(texts)
    fastmem.warmup(models=True, kernels=False)
    from fastmem.models.embedder import default_embedder
    from fastmem.models.parser import load_spacy

    nlp, emb = load_spacy(), default_embedder()
    t0, c0 = time.perf_counter(), time.process_time()
    list(nlp.pipe(texts, batch_size=64))
    spacy_ms, spacy_cpu = (time.perf_counter() - t0) * 1e3 / n, (time.process_time() - c0) * 1e3 / n
    t0, c0 = time.perf_counter(), time.process_time()
    emb.encode(texts)
    embed_ms, embed_cpu = (time.perf_counter() - t0) * 1e3 / n, (time.process_time() - c0) * 1e3 / n
    cores = os.cpu_count() or 1
    print(f"{n} turns; models alone: spaCy {spacy_ms:.2f} ms a turn ({1e3 / spacy_ms:.0f}/s), MiniLM batched "
          f"{embed_ms:.2f} ms ({1e3 / embed_ms:.0f}/s); one after the other {1e3 / (spacy_ms + embed_ms):.0f}/s, "
          f"perfectly overlapped {1e3 / max(spacy_ms, embed_ms):.0f}/s")
    # the bound that holds whatever the overlap: the models' CPU time spread over every core
    print(f"  CPU a turn: spaCy {spacy_cpu:.2f} core-ms, MiniLM {embed_cpu:.2f} core-ms (on "
          f"{embed_cpu / embed_ms:.2f} cores); both over {cores} cores: at most "
          f"{1e3 * cores / (spacy_cpu + embed_cpu):.0f} turns/s before the reading and the commit")
    walls = [write_all(rows) for _ in range(a.reps)]
    wall = statistics.median(walls)
    print(f"remember_many a session at a time: {n / wall:.1f} writes/s (median of {a.reps}: "
          f"{[round(w, 2) for w in walls]} s)")
    prof = cProfile.Profile()
    pwall = write_all(rows, prof)
    st = pstats.Stats(prof)
    stages = {}
    for (file, _, fn), (_, _, _, cum, _) in st.stats.items():  # type: ignore[attr-defined]
        for label, suffix, name in STAGES:
            if fn == name and file.replace(os.sep, "/").endswith(suffix):
                stages[label] = stages.get(label, 0.0) + cum
    print(f"profile of one run ({n / pwall:.1f} writes/s under the profiler), ms a turn, cumulative:")
    for label, _, _ in STAGES:
        print(f"  {label:<52} {stages.get(label, 0.0) * 1e3 / n:7.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"turns": n, "spacy_ms": spacy_ms, "embed_ms": embed_ms, "spacy_cpu_ms": spacy_cpu,
                       "embed_cpu_ms": embed_cpu, "writes_per_s": n / wall,
                       "walls": walls, "stages_ms_per_turn": {k: v * 1e3 / n for k, v in stages.items()}}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
