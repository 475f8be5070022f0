"""Fit the standing-statement classifier (``fastmem/reader/standing_weights.npz``, read by
:mod:`fastmem.reader.standing_model`) on the repository's labelled sentences: ``tests/data/kinds.tsv``
and the development parts of ``tests/data/standing_blind.tsv``, ``tests/data/standing_more.tsv`` and
``tests/data/standing_third.tsv`` (each written by someone who had not seen the rules; the third
is development only), and ``tests/data/standing_notes.tsv`` (memory notes an agent stores, facts,
events, other people's tastes and one-off tasks, written the same way: all negatives), with the turns of the LoCoMo dev conversations in ``../shared/data`` as
negatives (friends talking to each other: "keep it up!", "I love hiking" are not standing
statements to an assistant; skipped when the data is absent). Held-out parts are never read. Prints the cross-validated recall and precision
on the texts the rules leave without a statement (what the model decides at write time).

    python bench/fit_standing_model.py [--folds 5] [--C 4.0] [--precision 0.85]
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import re
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def labelled() -> list[tuple[str, str]]:
    data = os.path.join(ROOT, "tests", "data")
    out = []
    for line in open(os.path.join(data, "kinds.tsv"), encoding="utf-8").read().splitlines():
        if line.strip() and not line.startswith("#"):
            label, text = line.split("\t", 1)
            out.append((label, text))
    for name in ("standing_blind.tsv", "standing_more.tsv", "standing_third.tsv", "standing_notes.tsv"):
        with open(os.path.join(data, name), encoding="utf-8") as f:
            out += [(r["label"], r["message"]) for r in csv.DictReader(f, delimiter="\t") if r["split"] == "dev"]
    shared = os.environ.get("FASTMEM_DATA") or os.path.join(os.path.dirname(ROOT), "shared", "data")
    for name in sorted(glob.glob(os.path.join(shared, "locomo-dev", "*.json"))):
        d = json.load(open(name, encoding="utf-8"))
        out += [("none", f"{t['speaker']}: {t['text']}") for k, v in d.items()
                if re.fullmatch(r"session_\d+", k) and isinstance(v, list) for t in v if t.get("text")]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--C", type=float, default=4.0)
    ap.add_argument("--precision", type=float, default=0.85)
    ap.add_argument("--out", default=os.path.join(ROOT, "fastmem", "reader", "standing_weights.npz"))
    a = ap.parse_args()
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    from fastmem.models.embedder import default_embedder
    from fastmem.reader.extract import load_spacy
    from fastmem.reader.standing import detect
    from fastmem.reader.standing_model import KINDS, features

    rows = labelled()
    texts, y = [t for _, t in rows], np.array([KINDS.index(lab) for lab, _ in rows])
    found = detect(texts, load_spacy())
    X = features(texts, default_embedder().encode(texts), found)
    free = np.array([f is None for f in found])  # what the model decides: the rules found nothing
    chat = np.array([":" in t[:40] and lab == "none" for lab, t in rows])  # the friends' turns
    prob = np.zeros((len(y), len(KINDS)))
    for tr, te in StratifiedKFold(a.folds, shuffle=True, random_state=0).split(X, y):
        prob[te] = LogisticRegression(C=a.C, max_iter=5000).fit(X[tr], y[tr]).predict_proba(X[te])
    thresholds = np.ones(len(KINDS))
    for k, kind in enumerate(KINDS):
        if kind == "none":
            continue
        for t in np.arange(0.30, 0.96, 0.01):
            pick = free & (prob.argmax(1) == k) & (prob[:, k] >= t)
            if pick.sum() and (y[pick] == k).mean() >= a.precision:
                thresholds[k] = t
                break
        pick = free & (prob.argmax(1) == k) & (prob[:, k] >= thresholds[k])
        want = free & (y == k)
        print(f"{kind}: threshold {thresholds[k]:.2f}; on the {int(want.sum())} the rules miss, cross-validated "
              f"recall {(pick & want).sum() / max(want.sum(), 1):.3f}, precision {(y[pick] == k).mean() if pick.sum() else 0:.3f}; "
              f"friends' turns named {int((pick & chat).sum())} of {int(chat.sum())}")
    model = LogisticRegression(C=a.C, max_iter=5000).fit(X, y)
    np.savez_compressed(a.out, coef=model.coef_.astype(np.float32), intercept=model.intercept_.astype(np.float32),
                        threshold=thresholds.astype(np.float32), classes=np.array(KINDS))
    print(f"{len(rows)} labelled sentences -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
