"""Detection of standing instructions and preferences on the blind labelled messages.

    python bench/standing_detection.py [--split dev|heldout|all] [--file tests/data/standing_more.tsv]

The messages: ``tests/data/standing_blind.tsv`` and ``tests/data/standing_more.tsv`` (each written
by a helper who had not seen the rules; each message labelled instruction, preference or none,
with its split; the second file was written a round later, again blind). Printed per kind, for the rules
alone (:func:`fastmem.reader.standing.detect`) and for the rules with the classifier that names
what they miss (:func:`fastmem.reader.standing_model.refine`, as a write does): recall, precision
and the counts. The held-out part is for reporting, never for fitting or tuning.
"""

from __future__ import annotations

import argparse
import collections
import csv
from pathlib import Path

from fastmem.models.embedder import default_embedder
from fastmem.models.parser import load_spacy
from fastmem.reader.standing import detect
from fastmem.reader.standing_model import refine

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "standing_blind.tsv"
MORE = DATA.with_name("standing_more.tsv")
KINDS = ("instruction", "preference")


def report(name: str, labels: list[str], found) -> None:
    """One line per kind: recall, precision and the counts."""
    conf: collections.Counter = collections.Counter()
    for label, st in zip(labels, found):
        conf[(label, st.kind if st is not None and st.kind in KINDS else "none")] += 1
    for k in KINDS:
        tp = conf[(k, k)]
        fn = sum(v for (lab, got), v in conf.items() if lab == k and got != k)
        fp = sum(v for (lab, got), v in conf.items() if got == k and lab != k)
        print(f"{name:12s} {k:11s} recall {tp / max(tp + fn, 1):.3f}  precision {tp / max(tp + fp, 1):.3f}"
              f"  (tp {tp}, fn {fn}, fp {fp})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=("dev", "heldout", "all"), default="dev")
    ap.add_argument("--file", action="append", type=Path,
                    help=f"a labelled file (repeatable; default: {DATA.name} and {MORE.name}, each reported alone and together)")
    a = ap.parse_args()
    files = a.file or [DATA, MORE]
    for path in files + ([None] if len(files) > 1 else []):
        chosen = [path] if path is not None else files
        rows = [r for f in chosen for r in csv.DictReader(f.open(encoding="utf-8"), delimiter="\t")
                if a.split == "all" or r["split"] == a.split]
        print(f"{' + '.join(f.name for f in chosen)}: {len(rows)} messages ({a.split})")
        measure([r["message"] for r in rows], [r["label"] for r in rows])
    return 0


def measure(texts: list[str], labels: list[str]) -> None:
    """The rules alone, then the rules with the classifier, on the labelled messages."""
    rules = detect(texts, load_spacy())
    report("rules", labels, rules)
    report("rules+model", labels, refine(texts, default_embedder().encode(texts), list(rules)))


if __name__ == "__main__":
    raise SystemExit(main())
