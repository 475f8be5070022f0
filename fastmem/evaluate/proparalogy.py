"""The analogy slot on ProPara-Logy (silver set, paragraphs).

Protocol: every target, distractor and random paragraph is a memory (written in a shuffled
order, see :func:`build_memories`); each source paragraph is the current turn. Per turn the
slot fires or not; a fire is *correct* when it is a target whose row has the same
``source_subject`` as the turn's row (the set holds several paragraphs
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
import math
import os
import random
import re
import tempfile
import time

import numpy as np

from .slot import exact_scores, features_of, tracing

__all__ = ["FILE", "load_rows", "build_memories", "score", "run", "multiple_choice", "run_short", "SURFACE_GRID",
           "strip_connectives", "fold_of", "CONNECTIVES"]

#: Where ``fastmem eval proparalogy PATH --fit`` writes the ranker it fits: the shipped one
#: (:mod:`fastmem.analogy.ranker_weights`).
SHIPPED_WEIGHTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "analogy", "ranker_weights.py")

FILE = "silver_set_analogies_w_challenging_distractors_w_random.csv"


#: Sequence connectives that nearly every distractor of the set carries and its targets rarely
#: do (an artifact of how the distractors were written): ``connectives=False`` removes them
#: from every paragraph and turn, so no figure can rest on them.
CONNECTIVES = ("after", "afterwards", "following", "finally", "subsequently", "then")
_CONNECTIVE = re.compile(r"\b(?:(?:after|following)\s+(?:this|that)|" + "|".join(CONNECTIVES) + r")\b,?\s*",
                         re.IGNORECASE)


def strip_connectives(text: str) -> str:
    """``text`` without :data:`CONNECTIVES` (and "after this", "following that"), each sentence
    starting with a capital again."""
    out = _CONNECTIVE.sub("", text)
    out = re.sub(r"\s+([,.;])", r"\1", re.sub(r"\s{2,}", " ", out)).strip()
    return re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), out)


def load_rows(path: str, *, connectives: bool = True) -> list[dict] | None:
    """Rows of the silver CSV at ``path`` (the file, or a folder holding it); with
    ``connectives=False`` every paragraph without :data:`CONNECTIVES`."""
    if os.path.isdir(path):
        path = os.path.join(path, FILE)
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not connectives:
        cols = ("source_paragraph", "target_paragraph", "distractor_target_paragraph", "random_target_paragraph")
        rows = [{k: strip_connectives(v) if k in cols and v else v for k, v in r.items()} for r in rows]
    return rows


def fold_of(rows, folds: int) -> list[int]:
    """Each row's fold, grouped by source process (``source_subject``): no process in two
    folds; processes dealt to folds in order of first appearance, round robin."""
    order = list(dict.fromkeys(r["source_subject"] for r in rows))
    fold = {sub: i % folds for i, sub in enumerate(order)}
    return [fold[r["source_subject"]] for r in rows]


def build_memories(rows, *, seed: int | None = 0):
    """Distinct paragraphs to store: texts, their kind and the row they came from, in an order
    shuffled with ``seed`` (None: row order, each target before its own distractor). The
    shuffle keeps write order out of the figures: the slot breaks exact ties between
    candidates by the store's order, and in row order that favoured every target over its own
    distractor (22% of the rows tie in the slot's alignment)."""
    items = []
    seen = set()
    for i, r in enumerate(rows):
        for col, k in (("target_paragraph", "target"), ("distractor_target_paragraph", "distractor"),
                       ("random_target_paragraph", "random")):
            t = (r.get(col) or "").strip()
            if not t or t in seen:
                continue
            seen.add(t)
            items.append((t, k, i))
    if seed is not None:
        random.Random(seed).shuffle(items)
    return [t for t, _, _ in items], [k for _, k, _ in items], [i for _, _, i in items]


def score(picks, rows, kind, row_of, all_rows=None) -> dict[str, float]:
    """Fire, precision (same subject), strict precision (same source id), distractor and hit
    rates of one method's picks (memory index per turn of ``rows``, or None); ``all_rows``: the
    rows ``row_of`` indexes, when ``rows`` is a part of them."""
    all_rows = rows if all_rows is None else all_rows
    fires = correct = strict = distractor = 0
    for r, p in zip(rows, picks):
        if p is None:
            continue
        fires += 1
        src = all_rows[row_of[p]]
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
    from ..util.text import content_words

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
SURFACE_GRID = [("neighbourhood", 10, 0.5, True), ("neighbourhood", 10, 0.5, False), ("band", 10, 0.5, True),
                ("band", 10, 0.5, False), ("recall", 10, 0.5, True),
                ("neighbours", 10, 0.5, True), ("neighbours", 10, 0.5, False), ("neighbours", 10, 0.4, True),
                ("neighbours", 10, 0.6, True), ("neighbours", 20, 0.5, True), ("recall", 10, 0.5, True),
                ("recall", 10, 0.5, False)]


def pairwise(m, rows, texts, ids) -> dict[str, float]:
    """The share of rows whose target outscores its own distractor against the row's source:
    in the slot's score (what it chooses by: the structure mapping's surprise plus the plot
    view's evidence, :func:`fastmem.evaluate.slot.exact_scores`; an exact tie goes, as in the slot,
    to the larger stage-1 alignment; ``ties`` counts the exact ties of the surprise,
    ``ties_left`` those the alignment leaves) and in ``structural_similarity``."""
    import fastmem
    from fastmem.reader.extract import parse_turn

    at = {t: i for i, t in enumerate(texts)}
    wins = ties = left = n = 0
    sim_wins = sim_ties = 0
    for r in rows:
        t, d = (r.get("target_paragraph") or "").strip(), (r.get("distractor_target_paragraph") or "").strip()
        if t not in at or d not in at:
            continue
        pair = [ids[at[t]], ids[at[d]]]
        st, sd = exact_scores(m.admin.engine.slot, r["source_paragraph"], pair, m.admin.extractor)
        n += 1
        if abs(st - sd) <= 1e-12:
            ties += 1
            events = parse_turn(m.admin.extractor, r["source_paragraph"])[0]
            sq = m.admin.engine.structure.query(events)
            at_, ad = (m.admin.engine.structure.encoder.alignment(sq, m.admin.engine.structure.events(x))[0] if sq else 0.0 for x in pair)
            wins += at_ > ad + 1e-12
            left += abs(at_ - ad) <= 1e-12
        else:
            wins += st > sd
        a = fastmem.structural_similarity(r["source_paragraph"], t)
        b = fastmem.structural_similarity(r["source_paragraph"], d)
        sim_wins += a > b + 1e-12
        sim_ties += abs(a - b) <= 1e-12
    n1 = max(n, 1)
    return {"target_beats_distractor": wins / n1, "ties": ties / n1, "ties_left": left / n1,
            "target_beats_distractor_similarity":
            sim_wins / n1, "ties_similarity": sim_ties / n1, "rows": n}


def run(path: str, *, dim=512, z=2.0, baselines=True, sweep=False, memory_kw=None, connectives: bool = True,
        folds: int | None = None) -> dict[str, dict] | None:
    """Every figure of the module docstring for the silver set at ``path`` (None without it);
    ``connectives=False``: on paragraphs and turns without :data:`CONNECTIVES`; ``folds``:
    also the slot's figures per fold of source processes (:func:`fold_of`) and their means
    (``"fastmem (fold means)"``; the slot is hand-set, so a fold is only a part of the turns)."""
    import fastmem

    rows = load_rows(path, connectives=connectives)
    if rows is None:
        return None
    texts, kind, row_of = build_memories(rows)
    queries = [r["source_paragraph"] for r in rows]
    report: dict[str, dict] = {}
    kw = dict(memory_kw or {})
    slot = kw.pop("analogy", None) or fastmem.AnalogySettings()
    slot.z_min = z
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "s.db"), hrr_dim=dim, analogy=slot, **kw) as m:
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
        if folds:
            report["fastmem (fold means)"] = _fold_means(picks, rows, kind, row_of, folds)
        if sweep:
            m.admin.extractor = CachedParse(m.admin.extractor)
            saved_alpha = m.analogy.settings.analogy_alpha
            for aa in (0.2, 0.1, 0.05, 0.02, 0.01, 0.001):
                m.analogy.settings.analogy_alpha = aa
                res = [m.recall(q, k=10, record=False) for q in queries]
                report[f"fastmem alpha={aa:g}"] = score([pos[r.analogy.id] if r.analogy else None for r in res],
                                                        rows, kind, row_of)
            m.analogy.settings.analogy_alpha = saved_alpha
            s = m.analogy.settings
            saved = s.surface_rule, s.surface_exclude, s.surface_floor, s.surface_names
            for g in SURFACE_GRID:
                s.surface_rule, s.surface_exclude, s.surface_floor, s.surface_names = g
                res = [m.recall(q, k=10, record=False) for q in queries]
                report["fastmem surface {} {} {} names={}".format(*g)] = score(
                    [pos[r.analogy.id] if r.analogy else None for r in res], rows, kind, row_of)
            s.surface_rule, s.surface_exclude, s.surface_floor, s.surface_names = saved
        if baselines:
            qv = m.admin.embedder.encode(queries)
            mv = m.admin.embedder.encode(texts)
            report["bag-of-words z>=2, cos<=0.30"] = score(bag_of_words_picks(texts, queries, qv, mv), rows, kind, row_of)
            report["bag-of-words z>=2"] = score(bag_of_words_picks(texts, queries, qv, mv, ceiling=None), rows, kind, row_of)
            near = _surface_near(qv, mv, m.analogy.settings.surface_exclude, m.analogy.settings.surface_floor)
            report["bag-of-words z>=2, fastmem surface rule"] = score(
                bag_of_words_picks(texts, queries, qv, mv, ceiling=None, near=near), rows, kind, row_of)
            report["MiniLM nearest"] = score([int(np.argmax(mv @ v)) for v in qv], rows, kind, row_of)
    return report


def _fold_means(picks, rows, kind, row_of, folds: int) -> dict[str, float]:
    fold = fold_of(rows, folds)
    per = [score([p for p, f in zip(picks, fold) if f == k], [r for r, f in zip(rows, fold) if f == k], kind, row_of,
                 rows) for k in range(folds)]
    return {key: float(np.mean([x[key] for x in per])) for key in per[0]} | {"folds": folds}


def multiple_choice(path: str, *, seed: int = 0) -> dict[str, float] | None:
    """Four-way multiple choice (see the module docstring): accuracy of
    ``structural_similarity`` and of MiniLM cosine, and the share of ties."""
    import fastmem
    from fastmem.models.embedder import default_embedder

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


def run_short(locomo_path: str, grid=SURFACE_GRID, memory_kw=None) -> dict | None:
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
        with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "l.db"), **(memory_kw or {})) as m:
            ids = m.remember_many([r[1] for r in rows], progress=False)
            dia = dict(zip(ids, (r[0] for r in rows)))
            m.admin.extractor = CachedParse(m.admin.extractor)
            for g in grid:
                s = m.analogy.settings
                s.surface_rule, s.surface_exclude, s.surface_floor, s.surface_names = g
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


def collect(path: str, *, memory_kw=None) -> dict | None:
    """What :func:`fit` learns from, for the silver split at ``path``: every candidate the
    slot's exact stage reaches and its gate passes under the hand-set rule (traced), with its
    features, per turn; and each row's target and distractor features against its source."""
    import fastmem

    rows = load_rows(path)
    if rows is None:
        return None
    texts, kind, row_of = build_memories(rows)
    at = {t: i for i, t in enumerate(texts)}
    queries = [r["source_paragraph"] for r in rows]
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "s.db"), **(memory_kw or {})) as m:
        ids = m.remember_many(texts, progress=False)
        pos = {mid: i for i, mid in enumerate(ids)}
        m.admin.engine.slot.settings.ranker = False  # trace the hand-set rule's candidates
        cands = []  # per turn: [(memory index, features, surprise)]
        for q in queries:
            with tracing(m.admin.engine.slot) as traced:
                m.recall(q, k=10, record=False)
            cands.append([(pos[mid], f, a) for mid, f, a in traced])
        pair_f = []  # per row: (target features, distractor features) or None
        for r in rows:
            t, dd = (r.get("target_paragraph") or "").strip(), (r.get("distractor_target_paragraph") or "").strip()
            pair_f.append(features_of(m.admin.engine.slot, r["source_paragraph"], [ids[at[t]], ids[at[dd]]], m.admin.extractor)
                          if t in at and dd in at else None)
    return {"rows": rows, "kind": kind, "row_of": row_of, "cands": cands, "pairs": pair_f}


def fit(path_or_data, *, folds: int = 5, cost: float = 1.0, out: str | None = None, C: float = 1.0,
        memory_kw=None) -> dict | None:
    """Fit the slot's ranker (:mod:`fastmem.analogy.ranker`) on the silver split (a path, or what
    :func:`collect` returned for it).

    Every candidate the slot's exact stage reaches and its gate passes (the hand-set rule's
    candidates, traced) is a training example: positive when it is a target of the turn's
    source process. Cross-validated over ``folds`` folds grouped by source process (no process
    in train and test): per fold, a logistic model on the standardised features, whose
    probability is the chance that the candidate is right; the slot fires from the probability
    at which a shown analog pays, a right one counting 1 and a wrong one ``cost``
    (``cost / (1 + cost)``: 0.5 by default, more likely right than wrong); on the test turns, the slot's figures (:func:`score`) with the learned choice
    and with the hand-set one (largest alignment, no threshold), and the share of rows whose
    target outscores its own distractor in the ranker's probability. Then one model on every
    turn; ``out`` (a .py path) receives it as :mod:`fastmem.analogy.ranker_weights`.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    from fastmem.analogy.ranker import FEATURES, Ranker

    data = collect(path_or_data, memory_kw=memory_kw) if isinstance(path_or_data, str) else path_or_data
    if data is None:
        return None
    rows, kind, row_of, cands, pair_f = data["rows"], data["kind"], data["row_of"], data["cands"], data["pairs"]
    queries = list(range(len(rows)))
    groups = np.array([r["source_subject"] for r in rows])

    def good(qi, p):
        return kind[p] == "target" and rows[row_of[p]]["source_subject"] == rows[qi]["source_subject"]

    def design(qs):
        X = [f for qi in qs for _, f, _ in cands[qi]]
        y = [good(qi, p) for qi in qs for p, _, _ in cands[qi]]
        return np.array(X).reshape(-1, len(FEATURES)), np.array(y, bool)

    def train(qs):
        X, y = design(qs)
        mu, sd = X.mean(0), X.std(0)
        sd[sd < 1e-9] = 1.0
        if len(set(y.tolist())) < 2:  # a fold whose examples are all right (or all wrong): their rate
            rate = min(max(float(y.mean()) if len(y) else 0.5, 0.01), 0.99)
            return Ranker(mu, sd, np.zeros(X.shape[1]), math.log(rate / (1.0 - rate)), cost / (1.0 + cost))
        lr = LogisticRegression(C=C, max_iter=2000).fit((X - mu) / sd, y)
        return Ranker(mu, sd, lr.coef_[0], lr.intercept_[0], cost / (1.0 + cost))

    def evaluate(model, qs):
        learned, choice, handset = [], [], []
        for qi in qs:
            c = cands[qi]
            top = max(((model.prob(f), p) for p, f, _ in c), default=None)
            learned.append(top[1] if top and top[0] >= model.threshold else None)
            choice.append(top[1] if top else None)
            # the slot's own order: the structure mapping's surprise
            handset.append(max(((a, p) for p, f, a in c), default=(0, None))[1])
        sub = [rows[qi] for qi in qs]
        wins = n = 0
        for qi in qs:
            if pair_f[qi] is None:
                continue
            ft, fd = pair_f[qi]
            pt = model.prob(ft) if ft is not None else 0.0
            pd = model.prob(fd) if fd is not None else 0.0
            n += 1
            wins += pt > pd + 1e-12
        return (score(learned, sub, kind, row_of, rows) | {"target_beats_distractor": wins / max(n, 1),
                                                     "threshold": model.threshold},
                score(handset, sub, kind, row_of, rows), score(choice, sub, kind, row_of, rows))

    per_fold = []
    for tr, te in GroupKFold(n_splits=folds).split(queries, groups=groups):
        model = train(list(tr))
        per_fold.append(evaluate(model, list(te)))
    keys = ("fire", "precision", "precision_strict", "distractor", "hit")
    report = {
        "learned (cv)": {k: float(np.mean([f[0][k] for f in per_fold])) for k in keys + ("target_beats_distractor",
                                                                                             "threshold")},
        "learned choice, no threshold (cv)": {k: float(np.mean([f[2][k] for f in per_fold])) for k in keys},
        "hand-set (cv folds)": {k: float(np.mean([f[1][k] for f in per_fold])) for k in keys},
        "folds": folds, "turns": len(rows), "examples": int(sum(len(c) for c in cands)),
        "positives": int(sum(good(qi, p) for qi in range(len(rows)) for p, _, _ in cands[qi])),
    }
    final = train(list(range(len(rows))))
    report["final"] = {"threshold": final.threshold, "coef": dict(zip(FEATURES, final.coef.round(4).tolist()))}
    if out:
        _write_weights(out, final, report)
    return report


def _write_weights(out: str, model, report: dict) -> None:
    cv = report["learned (cv)"]
    lines = [
        '"""The analogy slot\'s ranker, fitted by ``fastmem eval proparalogy PATH --fit`` on ProPara-Logy\'s',
        f'silver split ({report["turns"]} turns, {report["examples"]} candidates, {report["positives"]} positive).',
        "",
        f'{report["folds"]}-fold cross-validation by source process, fold means: fire {cv["fire"]:.3f}, precision '
        f'{cv["precision"]:.3f},',
        f'strict {cv["precision_strict"]:.3f}, distractor {cv["distractor"]:.3f}, hit {cv["hit"]:.3f}, target above its '
        f'own distractor {cv["target_beats_distractor"]:.3f}.',
        'Generated: edit by refitting, not by hand."""',
        "",
        "MEAN = " + repr([round(float(x), 6) for x in model.mean]),
        "SCALE = " + repr([round(float(x), 6) for x in model.scale]),
        "COEF = " + repr([round(float(x), 6) for x in model.coef]),
        f"INTERCEPT = {float(model.intercept)!r}",
        f"THRESHOLD = {float(model.threshold)!r}",
        "",
    ]
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
