"""Analogy-slot quality on ProPara-Logy silver (../shared/data/proparalogy-silver).

Protocol: every target, distractor and random paragraph is a memory; each source paragraph is
the current turn. Per turn the slot fires or not; a fire is *correct* when it is that row's
target or another target with the same source_id, a *distractor* when it is any row's
distractor. Reported: fire rate (fires/turns), precision (correct/fires), distractor rate
(distractor fires/fires), hit rate (correct/turns). Two baselines run on the same store:

* bag-of-words: the replaced system's gate (content words bound to one role, z >= 2 over
  the store by a full scan, MiniLM cosine <= 0.30), the same without the ceiling, and the same
  with fastmem's default surface condition instead of the ceiling (the fair comparison: true
  analogs among the turn's nearest surface neighbours are out of reach for both);
* nearest: MiniLM nearest neighbour (always fires).

Short texts (``--short``): the same slot on LoCoMo dev conversations (../shared/data/locomo-dev,
every turn a memory, every question of categories 1-4 a turn). There is no analogy ground truth
there, but the evidence turns of a question are same-topic memories by construction, so a
fire on one is a *leak* of the surface condition; also reported: how often the analogy
repeats one of the recall's own top 10 hits, and the median surface cosine of the analogies.
Swept over the surface rule (``Memory(surface_rule=, surface_names=)``), floor and neighbour count, next to the
silver figures for the same settings (with ``--sweep``).

    python bench/analogy_quality.py [--dim 1024] [--z 2.0] [--sweep] [--no-baselines] [--short]
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from conftest import DATA  # noqa: E402

FILE = "silver_set_analogies_w_challenging_distractors_w_random.csv"


def load_rows():
    path = os.path.join(DATA, "proparalogy-silver", FILE)
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def build_memories(rows):
    texts, kind, src = [], [], []
    seen = {}
    for r in rows:
        for col, k in (("target_paragraph", "target"), ("distractor_target_paragraph", "distractor"),
                       ("random_target_paragraph", "random")):
            t = (r.get(col) or "").strip()
            if not t or t in seen:
                continue
            seen[t] = len(texts)
            texts.append(t)
            kind.append(k)
            src.append(r["source_id"])
    return texts, kind, src


def score(picks, rows, kind, src):
    fires = correct = distractor = 0
    for r, p in zip(rows, picks):
        if p is None:
            continue
        fires += 1
        if kind[p] == "target" and src[p] == r["source_id"]:
            correct += 1
        elif kind[p] == "distractor":
            distractor += 1
    n = len(rows)
    return {"fire": fires / n, "precision": correct / max(fires, 1), "distractor": distractor / max(fires, 1),
            "hit": correct / n}


def surface_near(qvecs, mvecs, exclude=10, floor=0.4):
    """Per turn, the memories the slot's default surface condition rules out (its nearest
    ``exclude`` surface neighbours with cosine >= ``floor``)."""
    out = []
    for qv in qvecs:
        s = mvecs @ qv
        top = np.argsort(-s)[:exclude]
        out.append(set(top[s[top] >= floor].tolist()))
    return out


def bag_of_words_picks(texts, queries, qvecs, mvecs, dim=1024, ceiling=0.30, near=None):
    from fastmem import kernels as K
    from fastmem.text import content_words

    role = K.atom("role:content", dim)

    def code(t):
        ws = content_words(t)
        if not ws:
            return np.zeros(dim)
        return K.bundle(np.stack([K.bind(role, K.atom("w:" + w, dim)) for w in ws]))

    U = K.to_unit(np.stack([code(t) for t in texts]))
    out = []
    for i, (q, qv) in enumerate(zip(queries, qvecs)):
        s = U @ K.to_unit(code(q)[None, :])[0]
        z = (s - s.mean()) / max(s.std(), 1e-12)
        surf = mvecs @ qv
        ok = (z >= 2.0) & ((surf <= ceiling) if ceiling is not None else True)
        if near is not None:
            ok[list(near[i])] = False
        out.append(int(np.argmax(np.where(ok, z, -np.inf))) if ok.any() else None)
    return out


class _CachedParse:
    """Wraps the store's extractor for sweeps: the same turn is parsed once, not per setting."""

    def __init__(self, inner):
        self.inner, self.cache = inner, {}

    def parse_many(self, texts):
        return self.inner.parse_many(texts)

    def extract_many(self, texts):
        return self.inner.extract_many(texts)

    def events_and_names_many(self, texts):
        miss = [t for t in texts if t not in self.cache]
        if miss:
            self.cache.update(zip(miss, self.inner.events_and_names_many(miss)))
        return [self.cache[t] for t in texts]

    def events_many(self, texts):
        return [ev for ev, _ in self.events_and_names_many(texts)]


#: (surface_rule, surface_exclude, surface_floor, surface_names) compared on paragraphs (silver) and short
#: texts (LoCoMo); the first is the default
SURFACE_GRID = [("neighbours", 10, 0.5, True), ("neighbours", 10, 0.5, False), ("neighbours", 10, 0.4, True),
                ("neighbours", 10, 0.6, True), ("neighbours", 20, 0.5, True), ("recall", 10, 0.5, True),
                ("recall", 10, 0.5, False)]


def run(dim=512, z=2.0, baselines=True, sweep=False, **mem_kw):
    import fastmem

    rows = load_rows()
    if rows is None:
        return None
    texts, kind, src = build_memories(rows)
    queries = [r["source_paragraph"] for r in rows]
    report = {}
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "s.db"), hrr_dim=dim, z_min=z, **mem_kw) as m:
        t = time.perf_counter()
        ids = m.remember_many(texts, progress=False)
        ingest = time.perf_counter() - t
        pos = {mid: i for i, mid in enumerate(ids)}
        t = time.perf_counter()
        res = [m.recall(q, k=10, record=False) for q in queries]
        per = (time.perf_counter() - t) / len(queries)
        picks = [pos[r.analogy.id] if r.analogy else None for r in res]
        report["fastmem"] = score(picks, rows, kind, src)
        report["fastmem"]["ms/recall"] = per * 1e3
        report["fastmem"]["analogy ms"] = float(np.median([r.timings_ms["analogy"] for r in res]))
        report["fastmem"]["ingest s"] = ingest
        fired = [r for r in res if r.analogy]
        report["fastmem"]["dup"] = sum(r.analogy.id in {h.id for h in r.hits} for r in fired) / max(len(fired), 1)
        if sweep:
            m.extractor = _CachedParse(m.extractor)
            for rerank in (1, 16):
                m.slot.rerank = rerank
                for zz in (2.0, 3.0, 4.0, 5.0, 6.0, 8.0):
                    res = [m.recall(q, k=10, record=False, z_min=zz) for q in queries]
                    picks = [pos[r.analogy.id] if r.analogy else None for r in res]
                    report[f"fastmem z>={zz:g} rerank={rerank}"] = score(picks, rows, kind, src)
            m.slot.rerank = 16
            saved = m.slot.surface_rule, m.slot.surface_exclude, m.slot.surface_floor, m.slot.surface_names
            for g in SURFACE_GRID:  # the surface condition, as on LoCoMo (--short)
                m.slot.surface_rule, m.slot.surface_exclude, m.slot.surface_floor, m.slot.surface_names = g
                res = [m.recall(q, k=10, record=False) for q in queries]
                picks = [pos[r.analogy.id] if r.analogy else None for r in res]
                report["fastmem surface {} {} {} names={}".format(*g)] = score(picks, rows, kind, src)
            m.slot.surface_rule, m.slot.surface_exclude, m.slot.surface_floor, m.slot.surface_names = saved
        if baselines:
            qv = m.embedder.encode(queries)
            mv = m.embedder.encode(texts)
            report["bag-of-words z>=2, cos<=0.30"] = score(bag_of_words_picks(texts, queries, qv, mv), rows, kind, src)
            report["bag-of-words z>=2"] = score(bag_of_words_picks(texts, queries, qv, mv, ceiling=None), rows, kind, src)
            near = surface_near(qv, mv, m.slot.surface_exclude, m.slot.surface_floor)
            report["bag-of-words z>=2, fastmem surface rule"] = score(
                bag_of_words_picks(texts, queries, qv, mv, ceiling=None, near=near), rows, kind, src)
            nn = [int(np.argmax(mv @ v)) for v in qv]
            report["MiniLM nearest"] = score(nn, rows, kind, src)
    return report


def run_short(grid=SURFACE_GRID):
    """Surface-condition figures on LoCoMo questions, per SURFACE_GRID setting."""
    import json

    import fastmem
    from locomo import conversation_files, turns

    files = conversation_files()
    if not files:
        return None
    tally = {g: {"turns": 0, "fires": 0, "leaks": 0, "dups": 0, "surface": []} for g in grid}
    for path in files:
        conv = json.load(open(path))
        rows = list(turns(conv))
        qa = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
        with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "l.db")) as m:
            ids = m.remember_many([t for _, t, _ in rows], progress=False)
            dia = dict(zip(ids, (r[0] for r in rows)))
            m.extractor = _CachedParse(m.extractor)
            for g in grid:
                m.slot.surface_rule, m.slot.surface_exclude, m.slot.surface_floor, m.slot.surface_names = g
                t = tally[g]
                for q in qa:
                    r = m.recall(q["question"], k=10, record=False)
                    t["turns"] += 1
                    if r.analogy is None:
                        continue
                    t["fires"] += 1
                    t["leaks"] += dia[r.analogy.id] in q["evidence"]
                    t["dups"] += r.analogy.id in {h.id for h in r.hits}
                    t["surface"].append(r.analogy.why["surface"])
    return {g: {"fire": t["fires"] / max(t["turns"], 1), "leak": t["leaks"] / max(t["fires"], 1),
                "dup": t["dups"] / max(t["fires"], 1), "surface": float(np.median(t["surface"])) if t["surface"] else float("nan")}
            for g, t in tally.items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--z", type=float, default=2.0)
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--sweep", action="store_true", help="also z_min 2..8 with and without reranking")
    ap.add_argument("--short", action="store_true", help="also the surface condition on LoCoMo questions (short texts)")
    a = ap.parse_args()
    if a.short:
        short = run_short()
        if short is None:
            print("no LoCoMo dev data; skipping the short-text figures")
        else:
            print(f"{'LoCoMo questions: surface rule, exclude, floor, names':56s} {'fire':>6s} {'leak':>6s} {'dup':>6s} {'surf':>6s}")
            for g, s in short.items():
                print(f"{'{} {} {} names={}'.format(*g):56s} {s['fire']:6.3f} {s['leak']:6.3f} {s['dup']:6.3f} {s['surface']:6.3f}")
    rep = run(a.dim, a.z, baselines=not a.no_baselines, sweep=a.sweep)
    if rep is None:
        print("no ProPara-Logy silver data; skipping")
        return 0
    print(f"{'method':48s} {'fire':>6s} {'prec':>6s} {'distr':>6s} {'hit':>6s}")
    for name, s in rep.items():
        print(f"{name:48s} {s['fire']:6.3f} {s['precision']:6.3f} {s['distractor']:6.3f} {s['hit']:6.3f}"
              + (f"   {s['ms/recall']:.1f} ms/recall, repeats a hit on {s['dup']:.3f} of fires" if "ms/recall" in s else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
