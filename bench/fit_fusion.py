"""Fit the learned fusion (``fastmem.recall.fusion.learned``) and write its coefficients.

    python bench/fit_fusion.py [--locomo ../shared/data/locomo-dev] [--cache /tmp/fusion.pkl] [--write]

Every question of the development stores is recalled through the real pipeline (a real
store, MiniLM, every channel) with ``fusion="learned"``; the features of each candidate of
the question's first fusion are recorded with the question's evidence: ``tests/data/chats.json``,
the ``dev`` chats of ``tests/data/long_chats.json`` and the LoCoMo conversations at
``--locomo`` (questions of categories 1-4 with evidence). The ``heldout`` long chats are
recorded and only reported. Questions that ask for an order or a summary are left out (they
are ranked by another path).

The fit uses the chats only (``--with-locomo`` adds the LoCoMo conversations): the default
fusion (``auto``) applies the learned one only in stores of chats with long answers, and a
fit that also serves conversations between people served both worse (left-out chats 0.956 ->
0.930). The LoCoMo rows of the report then say what the fit would do there.

The model: ``s = X @ coef``, fitted listwise (the softmax over a question's candidates; the
loss is minus the log of the probability of its evidence) with an L2 penalty ``--l2``.
Printed: for each conversation left out in turn (fitted on the others), the share of
questions with evidence in the top 5 by the ``score`` fusion on the same candidates and by
the learned one, by set and kind; then the fit on every development conversation, which
``--write`` saves to ``fastmem/recall/fusion_weights.py``. Both columns rank before the
pipeline's later steps (use weights, answers first, chunks), so they differ slightly from
``fastmem eval chats``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pickle
import sys
import tempfile
from datetime import datetime, timezone

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WIDE = ("order", "summary")


def collect(locomo: str | None) -> list[dict]:
    """Every question's candidates, features, evidence flags and the ``score`` fusion's scores."""
    import fastmem
    from fastmem.evaluate import locomo as L
    from fastmem.recall import fusion as F

    calls: list = []
    plain = F.learned_features

    def recording(channels, weights, prior, rows, work):
        ids, X = plain(channels, weights, prior, rows, work)
        hand = F.relative_score(channels, weights, prior)
        calls.append((ids, X, np.array([hand.get(m, 0.0) for m in ids])))
        return ids, X

    F.learned_features = recording
    out: list[dict] = []

    def ask(m, group, part, kind, question, evidence, **kw):
        calls.clear()
        m.recall(question, k=10, record=False, analogy=False, **kw)
        if not calls or not calls[0][0]:
            return
        ids, X, hand = calls[0]
        y = np.array([i in evidence for i in ids], float)
        out.append(dict(group=group, part=part, kind=kind, X=X, y=y, hand=hand))

    try:
        with tempfile.TemporaryDirectory() as d:
            for name in ("chats.json", "long_chats.json"):
                with open(os.path.join(ROOT, "tests", "data", name), encoding="utf-8") as f:
                    chats = json.load(f)["chats"]
                with fastmem.Memory(os.path.join(d, name + ".db"), fusion="learned") as m:
                    for chat in chats:
                        msgs = chat["messages"]
                        ids = m.remember_many([x["text"] for x in msgs], scope=chat["id"], speaker=[x["role"] for x in msgs],
                                              at=[datetime.fromtimestamp(x["at"], timezone.utc) for x in msgs], progress=False)
                        of = {x["id"]: i for i, x in zip(ids, msgs)}
                        for q in chat["questions"]:
                            if q["kind"] not in WIDE:
                                ask(m, f"{name}:{chat['id']}", chat.get("part", "dev"), q["kind"], q["question"],
                                    {of[e] for e in q["evidence"]}, scope=chat["id"])
                print(f"{name}: {len(out)} questions so far", file=sys.stderr)
            for path in (L.conversation_files(locomo) if locomo and os.path.isdir(locomo) else []):
                with open(path) as f:
                    conv = json.load(f)
                rows = list(L.turns(conv))
                with fastmem.Memory(os.path.join(d, os.path.basename(path) + ".db"), fusion="learned") as m:
                    ids = m.remember_many([r[1] for r in rows], progress=False, at=[L.session_date(r[2]) for r in rows],
                                          source=os.path.basename(path), speaker=[r[3] for r in rows])
                    of = {r[0]: i for i, r in zip(ids, rows)}
                    for q in conv["qa"]:
                        if q.get("category") in (1, 2, 3, 4) and q.get("evidence"):
                            ask(m, "locomo:" + os.path.basename(path), "dev", f"category {q['category']}", q["question"],
                                {of[e] for e in q["evidence"] if e in of})
                print(f"{path}: {len(out)} questions so far", file=sys.stderr)
    finally:
        F.learned_features = plain
    return out


def loss(coef: np.ndarray, qs: list[dict], l2: float) -> tuple[float, np.ndarray]:
    """Mean listwise loss over questions with evidence among their candidates, and its gradient."""
    total, grad, n = 0.0, np.zeros_like(coef), 0
    for q in qs:
        if not q["y"].any():
            continue
        s = q["X"] @ coef
        p = np.exp(s - s.max())
        p /= p.sum()
        pe = float(p @ q["y"])
        total -= np.log(pe + 1e-12)
        grad -= (q["y"] * p) @ q["X"] / (pe + 1e-12) - p @ q["X"]
        n += 1
    n = max(n, 1)
    return total / n + l2 * float(coef @ coef), grad / n + 2 * l2 * coef


def fit(qs: list[dict], l2: float) -> np.ndarray:
    from scipy.optimize import minimize

    from fastmem.recall.fusion import LEARNED_CHANNELS, LEARNED_FEATURES

    start = np.zeros(len(LEARNED_FEATURES))
    start[: len(LEARNED_CHANNELS)] = 1.0  # the score fusion
    return minimize(loss, start, args=(qs, l2), jac=True, method="L-BFGS-B").x


def in_top(q: dict, s: np.ndarray, k: int = 5) -> float:
    return float(q["y"][np.argsort(-s, kind="stable")[:k]].any())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--locomo", default=os.path.join(ROOT, "..", "shared", "data", "locomo-dev"))
    ap.add_argument("--cache", help="a pickle of the collected features (read when present, else written)")
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument("--write", action="store_true", help="save the fit on every development conversation")
    ap.add_argument("--with-locomo", action="store_true",
                    help="fit on the LoCoMo conversations too (by default they are only reported: the default "
                         "fusion uses the learned one only in stores of chats with long answers)")
    a = ap.parse_args()
    if a.cache and os.path.exists(a.cache):
        with open(a.cache, "rb") as f:
            qs = pickle.load(f)
    else:
        qs = collect(a.locomo)
        if a.cache:
            with open(a.cache, "wb") as f:
                pickle.dump(qs, f)
    dev = [q for q in qs if q["part"] == "dev" and (a.with_locomo or not q["group"].startswith("locomo"))]
    res: dict[str, list] = collections.defaultdict(lambda: [[], []])
    for g in sorted({q["group"] for q in qs}):
        coef = fit([q for q in dev if q["group"] != g], a.l2)
        for q in qs:
            if q["group"] == g:
                key = q["group"].split(":")[0] + "@" + q["part"]
                for k in (key, f"{key} {q['kind']}"):
                    res[k][0].append(in_top(q, q["hand"]))
                    res[k][1].append(in_top(q, q["X"] @ coef))
    print(f"{'left-out conversation, top 5':40s} {'n':>4s} {'score':>6s} {'learned':>8s}")
    for k in sorted(res):
        h, lo = res[k]
        print(f"{k:40s} {len(h):4d} {np.mean(h):6.3f} {np.mean(lo):8.3f}")
    coef = fit(dev, a.l2)
    from fastmem.recall.fusion import LEARNED_FEATURES

    print("coefficients:", ", ".join(f"{n} {c:.3f}" for n, c in zip(LEARNED_FEATURES, coef)))
    if a.write:
        path = os.path.join(ROOT, "fastmem", "recall", "fusion_weights.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write('"""The learned fusion\'s coefficients (:func:`fastmem.recall.fusion.learned`), in the order of\n'
                    ":data:`fastmem.recall.fusion.LEARNED_FEATURES`; fitted on "
                    f"{len(dev)} development questions ({len({q['group'] for q in dev})} conversations),\n"
                    f"L2 {a.l2:g}. Generated by ``bench/fit_fusion.py --write``: edit by refitting, not by hand.\"\"\"\n\n"
                    f"COEF = [{', '.join(f'{c:.6f}' for c in coef)}]\n")
        print("wrote", path)


if __name__ == "__main__":
    main()
