"""The analogy slot on ProPara-Logy (silver set, paragraphs).

Protocol: every target, distractor and random paragraph is a memory; each source paragraph is
the current turn. Per turn the slot fires or not; a fire is *correct* when it is a target
whose row has the same ``source_subject`` as the turn's row (the set holds several paragraphs
per source process, and an analog of one is an analog of the others; ``strict``: a target of
the same ``source_id``), a *distractor* when it is any row's distractor (same events, another
order or other links). Reported: fire rate (fires / turns), precision (correct / fires),
distractor rate (distractor fires / fires), hit rate (correct / turns), the share of rows whose
target outscores its own distractor in the slot's exact score (``pairwise``), and next to them
baselines on the same store:

* bag-of-words: the replaced system's gate (content words bound to one role, z >= 2 over the
  store by a full scan, MiniLM cosine <= 0.30), without the ceiling, and with fastmem's surface
  condition instead of the ceiling;
* MiniLM nearest neighbour (always fires).

Multiple choice (:func:`multiple_choice`): each source against four paragraphs - its target,
its distractor, its random paragraph, a target of another ``source_subject`` - scored by
``fastmem.structural_similarity``, next to MiniLM cosine; accuracy = the target scores highest.
"""

from __future__ import annotations

import csv
import os
import random
import tempfile
import time

import numpy as np

__all__ = ["FILE", "load_rows", "build_memories", "score", "run", "multiple_choice", "run_short", "SURFACE_GRID"]

FILE = "silver_set_analogies_w_challenging_distractors_w_random.csv"


def load_rows(path: str) -> list[dict] | None:
    """Rows of the silver CSV at ``path`` (the file, or a folder holding it)."""
    if os.path.isdir(path):
        path = os.path.join(path, FILE)
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def build_memories(rows):
    """Distinct paragraphs to store: texts, their kind and the row they came from."""
    texts, kind, row_of = [], [], []
    seen = set()
    for i, r in enumerate(rows):
        for col, k in (("target_paragraph", "target"), ("distractor_target_paragraph", "distractor"),
                       ("random_target_paragraph", "random")):
            t = (r.get(col) or "").strip()
            if not t or t in seen:
                continue
            seen.add(t)
            texts.append(t)
            kind.append(k)
            row_of.append(i)
    return texts, kind, row_of


def score(picks, rows, kind, row_of) -> dict[str, float]:
    """Fire, precision (same subject), strict precision (same source id), distractor and hit
    rates of one method's picks (memory index per turn, or None)."""
    fires = correct = strict = distractor = 0
    for r, p in zip(rows, picks):
        if p is None:
            continue
        fires += 1
        src = rows[row_of[p]]
        if kind[p] == "target" and src["source_subject"] == r["source_subject"]:
            correct += 1
            strict += src["source_id"] == r["source_id"]
        elif kind[p] == "distractor":
            distractor += 1
    n = len(rows)
    f = max(fires, 1)
    return {"fire": fires / n, "precision": correct / f, "precision_strict": strict / f,
            "distractor": distractor / f, "hit": correct / n, "hit_strict": strict / n}


def _surface_near(qvecs, mvecs, exclude=10, floor=0.5):
    out = []
    for qv in qvecs:
        s = mvecs @ qv
        top = np.argsort(-s)[:exclude]
        out.append(set(top[s[top] >= floor].tolist()))
    return out


def bag_of_words_picks(texts, queries, qvecs, mvecs, dim=1024, ceiling=0.30, near=None):
    """The replaced system's analogy gate (see the module docstring)."""
    from .. import kernels as K
    from ..text import content_words

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


class CachedParse:
    """Wraps an extractor for sweeps: the same turn is parsed once, not per setting."""

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


#: (surface_rule, surface_exclude, surface_floor, surface_names): the first is the default
SURFACE_GRID = [("neighbours", 10, 0.5, True), ("neighbours", 10, 0.5, False), ("neighbours", 10, 0.4, True),
                ("neighbours", 10, 0.6, True), ("neighbours", 20, 0.5, True), ("recall", 10, 0.5, True),
                ("recall", 10, 0.5, False)]


def pairwise(m, rows, texts, ids) -> dict[str, float]:
    """Share of rows whose target outscores (ties apart) its own distractor against the row's
    source: in the slot's exact structural score (``target_beats_distractor``, ``ties``) and
    in :func:`fastmem.structural_similarity` (codes and structure mapping: ``..._similarity``)."""
    import fastmem

    at = {t: i for i, t in enumerate(texts)}
    wins = ties = n = 0
    sim_wins = sim_ties = 0
    for r in rows:
        t, d = (r.get("target_paragraph") or "").strip(), (r.get("distractor_target_paragraph") or "").strip()
        if t not in at or d not in at:
            continue
        st, sd = m.slot.exact_scores(r["source_paragraph"], [ids[at[t]], ids[at[d]]], m.extractor)
        n += 1
        wins += st > sd + 1e-12
        ties += abs(st - sd) <= 1e-12
        a = fastmem.structural_similarity(r["source_paragraph"], t)
        b = fastmem.structural_similarity(r["source_paragraph"], d)
        sim_wins += a > b + 1e-12
        sim_ties += abs(a - b) <= 1e-12
    n1 = max(n, 1)
    return {"target_beats_distractor": wins / n1, "ties": ties / n1, "target_beats_distractor_similarity":
            sim_wins / n1, "ties_similarity": sim_ties / n1, "rows": n}


def run(path: str, *, dim=512, z=2.0, baselines=True, sweep=False, memory_kw=None) -> dict[str, dict] | None:
    """Every figure of the module docstring for the silver set at ``path`` (None without it)."""
    import fastmem

    rows = load_rows(path)
    if rows is None:
        return None
    texts, kind, row_of = build_memories(rows)
    queries = [r["source_paragraph"] for r in rows]
    report: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "s.db"), hrr_dim=dim, z_min=z,
                                                            **(memory_kw or {})) as m:
        t = time.perf_counter()
        ids = m.remember_many(texts, progress=False)
        ingest = time.perf_counter() - t
        pos = {mid: i for i, mid in enumerate(ids)}
        t = time.perf_counter()
        res = [m.recall(q, k=10, record=False) for q in queries]
        per = (time.perf_counter() - t) / len(queries)
        picks = [pos[r.analogy.id] if r.analogy else None for r in res]
        fired = [r for r in res if r.analogy]
        report["fastmem"] = score(picks, rows, kind, row_of) | {
            "ms/recall": per * 1e3, "analogy ms": float(np.median([r.timings_ms["analogy"] for r in res])),
            "ingest s": ingest, "dup": sum(r.analogy.id in {h.id for h in r.hits} for r in fired) / max(len(fired), 1)}
        report["fastmem"] |= pairwise(m, rows, texts, ids)
        if sweep:
            m.extractor = CachedParse(m.extractor)
            for zz in (2.0, 3.0, 4.0, 5.0, 6.0, 8.0):
                res = [m.recall(q, k=10, record=False, z_min=zz) for q in queries]
                report[f"fastmem z>={zz:g}"] = score([pos[r.analogy.id] if r.analogy else None for r in res],
                                                     rows, kind, row_of)
            s = m.slot
            saved = s.surface_rule, s.surface_exclude, s.surface_floor, s.surface_names
            for g in SURFACE_GRID:
                s.surface_rule, s.surface_exclude, s.surface_floor, s.surface_names = g
                res = [m.recall(q, k=10, record=False) for q in queries]
                report["fastmem surface {} {} {} names={}".format(*g)] = score(
                    [pos[r.analogy.id] if r.analogy else None for r in res], rows, kind, row_of)
            s.surface_rule, s.surface_exclude, s.surface_floor, s.surface_names = saved
        if baselines:
            qv = m.embedder.encode(queries)
            mv = m.embedder.encode(texts)
            report["bag-of-words z>=2, cos<=0.30"] = score(bag_of_words_picks(texts, queries, qv, mv), rows, kind, row_of)
            report["bag-of-words z>=2"] = score(bag_of_words_picks(texts, queries, qv, mv, ceiling=None), rows, kind, row_of)
            near = _surface_near(qv, mv, m.slot.surface_exclude, m.slot.surface_floor)
            report["bag-of-words z>=2, fastmem surface rule"] = score(
                bag_of_words_picks(texts, queries, qv, mv, ceiling=None, near=near), rows, kind, row_of)
            report["MiniLM nearest"] = score([int(np.argmax(mv @ v)) for v in qv], rows, kind, row_of)
    return report


def multiple_choice(path: str, *, seed: int = 0) -> dict[str, float] | None:
    """Four-way multiple choice (see the module docstring): accuracy of
    ``structural_similarity`` and of MiniLM cosine, and the share of ties."""
    import fastmem
    from fastmem.embedder import default_embedder

    rows = load_rows(path)
    if rows is None:
        return None
    rnd = random.Random(seed)
    items = []
    for r in rows:
        others = [o for o in rows if o["source_subject"] != r["source_subject"] and o.get("target_paragraph")]
        if not (r.get("target_paragraph") and r.get("distractor_target_paragraph") and r.get("random_target_paragraph")):
            continue
        items.append((r["source_paragraph"], [r["target_paragraph"], r["distractor_target_paragraph"],
                                              r["random_target_paragraph"], rnd.choice(others)["target_paragraph"]]))
    emb = default_embedder()
    right = right_cos = ties = 0
    for src, choices in items:
        s = [fastmem.structural_similarity(src, c) for c in choices]
        right += s[0] > max(s[1:])
        ties += s[0] == max(s[1:])
        v = emb.encode([src] + choices)
        c = v[1:] @ v[0]
        right_cos += c[0] > max(c[1:])
    n = max(len(items), 1)
    return {"structural_similarity": right / n, "MiniLM cosine": right_cos / n, "ties": ties / n,
            "items": len(items), "chance": 0.25}


def run_short(locomo_path: str, grid=SURFACE_GRID) -> dict | None:
    """The slot on LoCoMo questions (short turns): fire rate, *leak* (the analogy is one of the
    question's evidence turns, the same topic by construction), *dup* (it is also one of the
    recall's top 10 hits) and the median surface cosine, per surface setting."""
    import json

    import fastmem

    from .locomo import conversation_files, turns

    files = conversation_files(locomo_path)
    if not files:
        return None
    tally = {g: {"turns": 0, "fires": 0, "leaks": 0, "dups": 0, "surface": []} for g in grid}
    for path in files:
        with open(path) as f:
            conv = json.load(f)
        rows = list(turns(conv))
        qa = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
        with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "l.db")) as m:
            ids = m.remember_many([r[1] for r in rows], progress=False)
            dia = dict(zip(ids, (r[0] for r in rows)))
            m.extractor = CachedParse(m.extractor)
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
                "dup": t["dups"] / max(t["fires"], 1),
                "surface": float(np.median(t["surface"])) if t["surface"] else float("nan")}
            for g, t in tally.items()}
