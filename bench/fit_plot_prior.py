"""Fit the plot view's prior (``fastmem/analogy/plot_prior.npz``): the mean and covariance of plot
vectors (each plot's mean clause embedding, :mod:`fastmem.analogy.plots`) over development
text: the LoCoMo dev turns and the ProPara-Logy silver paragraphs in ``../shared/data``, and
the development parts of the repository's own story sets. A store shrinks its own covariance
towards it while it holds few plots, and ``fastmem.structural_similarity`` (no store) whitens
with it. Held-out parts are never read.

    python bench/fit_plot_prior.py [--out fastmem/analogy/plot_prior.npz]
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
DATA = os.environ.get("FASTMEM_DATA") or os.path.join(os.path.dirname(ROOT), "shared", "data")


def texts() -> list[str]:
    out = []
    for f in sorted(glob.glob(os.path.join(DATA, "locomo-dev", "*.json"))):
        d = json.load(open(f, encoding="utf-8"))
        for k, v in d.items():
            if re.fullmatch(r"session_\d+", k) and isinstance(v, list):
                out += [f"{t['speaker']}: {t['text']}" for t in v if t.get("text")]
    for f in sorted(glob.glob(os.path.join(DATA, "proparalogy-silver", "*.csv"))):
        for r in csv.DictReader(open(f, encoding="utf-8")):
            out += [r[c] for c in ("source_paragraph", "target_paragraph", "distractor_target_paragraph",
                                   "random_target_paragraph") if r.get(c)]
    tests = os.path.join(ROOT, "tests", "data")
    for name in ("stories.json", "stories_blind.json"):
        for s in json.load(open(os.path.join(tests, name), encoding="utf-8"))["sets"]:
            if s.get("split", "dev") == "dev":
                out += [s[k] for k in ("base", "literal", "analogy", "false", "appearance")]
    return list(dict.fromkeys(out))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "fastmem", "analogy", "plot_prior.npz"))
    a = ap.parse_args()
    from fastmem.analogy.plots import plot_vectors
    from fastmem.models.embedder import default_embedder
    from fastmem.reader.extract import SpacyExtractor

    ex, emb = SpacyExtractor(), default_embedder()
    all_texts = texts()
    plots = [p for _, _, p in ex.turns_many(all_texts)]
    got = [p for p in plot_vectors(emb, plots) or [] if p is not None]
    means = np.stack([p.vecs.mean(0) for p in got]).astype(np.float64)
    mean = means.mean(0)
    cov = np.cov((means - mean).T)
    np.savez_compressed(a.out, mean=mean.astype(np.float32), cov=cov.astype(np.float16), n=np.int64(len(got)))
    print(f"{len(all_texts)} texts, {len(got)} plots -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
