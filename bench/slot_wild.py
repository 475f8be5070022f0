"""The analogy slot in an agent's store, every chat turn as the turn, per slot setting.

    python bench/slot_wild.py [--data ../shared/data] '{"plot_margin": 2.0}' '{"plot_margin": 3.0}' ...

The store: every turn of the LoCoMo dev conversations (``Speaker: text``, one source per
session, with speakers) and the ProPara-Logy silver targets and distractors among them (as
``../shared/acceptance/analogy-wild.sh`` builds it, which recalls 150 of the turns). For each
setting (a JSON object of :class:`fastmem.AnalogySettings` fields, applied to the live
settings): how many of the chat turns make the slot speak, and by which view; the silver
sources' fire, precision (a target of the same process) and distractor rate, by view.
"""

from __future__ import annotations

import argparse
import collections
import csv
import glob
import json
import os
import re
import sys
import tempfile
from pathlib import Path


def remember_chat(m, files) -> list[str]:
    """Write every session of the LoCoMo conversations ``files`` into ``m`` ("Speaker: text",
    one source per session, with speakers); the turns, in order."""
    chat = []
    for f in files:
        conv = json.load(open(f))
        for k, v in conv.items():
            if re.fullmatch(r"session_\d+", k) and isinstance(v, list) and v:
                texts = [f"{t['speaker']}: {t['text']}" for t in v]
                m.remember_many(texts, source=f"{os.path.basename(f)}/{k}", speaker=[t["speaker"] for t in v],
                                progress=False)
                chat += texts
    return chat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("settings", nargs="*", default=["{}"], help="JSON objects of AnalogySettings fields")
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    a = ap.parse_args()
    silver = os.path.join(a.data, "proparalogy-silver", "silver_set_analogies_w_challenging_distractors.csv")
    files = sorted(glob.glob(os.path.join(a.data, "locomo-dev", "*.json")))
    if not files or not os.path.exists(silver):
        print(f"no LoCoMo conversations or silver paragraphs under {a.data}")
        return
    import fastmem

    rows = list(csv.DictReader(open(silver)))
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "wild.db")) as m:
        chat = remember_chat(m, files)
        texts = [x for r in rows for x in (r["target_paragraph"], r["distractor_target_paragraph"])]
        meta = [(kind, r["source_subject"]) for r in rows for kind in ("target", "distractor")]
        kind = dict(zip(m.remember_many(texts, progress=False), meta))
        for n, setting in enumerate(a.settings):
            for key, value in json.loads(setting).items():
                setattr(m.analogy.settings, key, value)
            views: collections.Counter = collections.Counter()
            for i, t in enumerate(chat):
                an = m.recall(t, k=5, session=f"chat{n}-{i}", record=False).analogy
                if an is not None:
                    views[an.why.get("view", "mapping")] += 1
            fired, got = 0, collections.Counter()
            for i, r in enumerate(rows):
                an = m.recall(r["source_paragraph"], k=5, session=f"silver{n}-{i}", record=False).analogy
                if an is None:
                    continue
                fired += 1
                what, subject = kind.get(an.id, (None, None))
                verdict = ("right" if what == "target" and subject == r["source_subject"]
                           else "distractor" if what == "distractor" else "other")
                got[verdict] += 1
                got[(an.why.get("view", "mapping"), verdict)] += 1
            print(f"{setting}: chat fire {sum(views.values())}/{len(chat)} {dict(views)}; silver fire "
                  f"{fired / len(rows):.3f} precision {got['right'] / max(fired, 1):.3f} distractor "
                  f"{got['distractor'] / max(fired, 1):.3f}; by view "
                  f"{ {f'{v} {x}': c for (v, x), c in ((k, c) for k, c in got.items() if isinstance(k, tuple))} }",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
