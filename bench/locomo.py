"""LoCoMo evidence recall (dev conversations in ../shared/data/locomo-dev).

Protocol: every turn of one conversation is a memory ("Speaker: text", plus the shared
photo's caption when there is one); every question of categories 1-4 is asked; a hit counts
when an evidence dia_id is in the top k (any@k) / all evidence ids are (all@k), k = 1, 5, 10.
Reported per channel (keyword, vector, graph) and fused.

    python bench/locomo.py [rrf|score ...]   # prints the tables (both fusions by default)
    pytest bench/test_locomo.py -s    # same, skips cleanly without the data
"""

from __future__ import annotations

import glob
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from conftest import DATA  # noqa: E402

CHANNEL_SETS = {
    "keyword": ("keyword",),
    "vector": ("vector",),
    "graph": ("graph",),
    "fused": ("keyword", "vector", "graph"),
    "fused-kv": ("keyword", "vector"),
}
KS = (1, 5, 10)


def conversation_files() -> list[str]:
    return sorted(glob.glob(os.path.join(DATA, "locomo-dev", "*.json")))


def turns(conv: dict):
    c = conv.get("conversation", conv)
    n = 1
    while f"session_{n}" in c or f"session_{n}_date_time" in c:
        for t in c.get(f"session_{n}", []) or []:
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            yield t["dia_id"], text, c.get(f"session_{n}_date_time", "")
        n += 1


def evaluate(path: str, extractor="default", fusion: str = "rrf") -> dict[str, dict[str, float]]:
    import fastmem

    conv = json.load(open(path))
    rows = list(turns(conv))
    kw = {"fusion": fusion} if extractor == "default" else {"extractor": extractor, "fusion": fusion}
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "locomo.db"), **kw) as m:
        ids = m.remember_many([t for _, t, _ in rows], progress=False)
        dia = dict(zip(ids, (r[0] for r in rows)))
        qa = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
        out = {}
        for name, chans in CHANNEL_SETS.items():
            res = m.recall_many([q["question"] for q in qa], k=max(KS), analogy=False, record=False, channels=chans)
            score = {f"any@{k}": 0.0 for k in KS} | {f"all@{k}": 0.0 for k in KS}
            for q, r in zip(qa, res):
                got = [dia[h.id] for h in r.hits]
                ev = set(q["evidence"])
                for k in KS:
                    top = set(got[:k])
                    score[f"any@{k}"] += bool(ev & top)
                    score[f"all@{k}"] += ev <= top
            out[name] = {key: v / len(qa) for key, v in score.items()} | {"questions": len(qa)}
        return out


def main() -> int:
    files = conversation_files()
    if not files:
        print(f"no LoCoMo data under {DATA}; skipping")
        return 0
    fusions = sys.argv[1:] or ["rrf", "score"]
    for f in files:
        for fusion in fusions:
            res = evaluate(f, fusion=fusion)
            print(f"\n{os.path.basename(f)} ({res['fused']['questions']} questions), fusion={fusion}")
            print(f"{'channel':10s} " + " ".join(f"{c:>7s}" for c in [f"any@{k}" for k in KS] + [f"all@{k}" for k in KS]))
            for name, sc in res.items():
                print(f"{name:10s} " + " ".join(f"{sc[c]:7.3f}" for c in [f"any@{k}" for k in KS] + [f"all@{k}" for k in KS]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
