"""The knowledge graph of real chat, as a person would read it: what to mark by hand.

    python bench/graph_quality.py [--data ../shared/data] [--sample 40] [--seed 2026] [--out DIR]

Writes every turn of the LoCoMo dev conversations as a chat host does (one source per session,
the speaker and the session's time), then prints: facts per turn; the most connected nodes (40;
none should be an interjection, a vocative or a vague head); the share of facts read from
questions (their object's head word appears only in sentences that end in "?"); the category
proposals (:meth:`fastmem.parts.Categories.propose`), to mark approvable or not. With
``--out``, ``facts.txt`` (a seeded random sample of facts, each with its turn, who said it and to
whom) and ``categories.txt`` are written there for a reader who has not seen the rules to mark
right / partly / wrong and approve / reject.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import glob
import json
import os
import random
import re
import tempfile
from pathlib import Path

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _when(s: str) -> str | None:
    try:
        return datetime.datetime.strptime(s, "%I:%M %p on %d %B, %Y").replace(tzinfo=datetime.timezone.utc).isoformat()
    except ValueError:
        return None


def _asked_only(obj: str, text: str) -> bool:
    head = obj.split()[-1].lower() if obj.split() else ""
    where = [s for s in _SENTENCE.split(text) if head and head in s.lower()]
    return bool(where) and all(s.rstrip().endswith("?") for s in where)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--sample", type=int, default=40)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--out", help="a folder for facts.txt and categories.txt, to mark by hand")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.data, "locomo-dev", "*.json")))
    if not files:
        print(f"no LoCoMo conversations under {a.data}")
        return
    import fastmem
    from fastmem.results import shown_mood

    facts, turns = [], 0
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "graph.db")) as m:
        for f in files:
            conv = json.load(open(f, encoding="utf-8"))
            for k, v in conv.items():
                if not (re.fullmatch(r"session_\d+", k) and isinstance(v, list) and v):
                    continue
                at = _when(conv.get(k + "_date_time", ""))
                ids = m.remember_many([f"{t['speaker']}: {t['text']}" for t in v], source=f"{os.path.basename(f)}/{k}",
                                      speaker=[t["speaker"] for t in v], progress=False, **({"at": at} if at else {}))
                speakers = {t["speaker"] for t in v}
                for t, mid in zip(v, ids):
                    turns += 1
                    other = next(iter(speakers - {t["speaker"]}), "?")
                    facts += [(x.subject, x.relation, x.object, t["speaker"], other, t["text"], x.mood, x.detail)
                              for x in m.graph.facts(mid)]
        proposals = m.categories.propose()
    degree = collections.Counter()
    for s, _, o, *_ in facts:
        degree[s] += 1
        degree[o] += 1
    asked = sum(_asked_only(o, text) for _, _, o, _, _, text, *_ in facts)
    print(f"{len(facts)} facts from {turns} turns: {len(facts) / max(turns, 1):.2f} a turn; "
          f"read from questions {asked / max(len(facts), 1):.3f}")
    print(f"the {a.top} most connected nodes:", ", ".join(f"{n} ({c})" for n, c in degree.most_common(a.top)))
    print(f"{len(proposals)} category proposals:")
    lines = [f"{i}. name: {c.name}; members: {', '.join(c.members)}" for i, c in enumerate(proposals, 1)]
    print("\n".join("  " + x for x in lines))
    random.seed(a.seed)
    sample = random.sample(facts, min(a.sample, len(facts)))
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "facts.txt"), "w", encoding="utf-8") as out:
            for i, (s, r, o, who, to, text, mood, rest) in enumerate(sample, 1):  # as the CLI shows it
                said = f" ({shown_mood(r, mood)})" if shown_mood(r, mood) else ""
                rest = f" {rest}" if rest else ""
                out.write(f"{i}. {who} (talking to {to}) said: {text}\n   FACT: ({s}, {r}, {o}){rest}{said}\n\n")
        with open(os.path.join(a.out, "categories.txt"), "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
        print(f"{len(sample)} facts and {len(lines)} proposals to mark: {a.out}")


if __name__ == "__main__":
    main()
