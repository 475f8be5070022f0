"""LoCoMo evidence recall.

Protocol: every turn of one conversation is a memory ("Speaker: text", plus the shared photo's
caption when there is one, with the session's date as ``at``, the conversation as ``source``
and the turn's speaker as ``speaker``); every question of categories 1-4 is asked; a hit counts when an evidence
``dia_id`` is in the top k (any@k) / all evidence ids are (all@k), k = 1, 5, 10. Reported per
channel (keyword, vector, graph, context), fused, and fused without the speaker, the context or the graph.

``writes`` chooses what the writer passes besides the text: ``"full"`` (``source``, ``at`` and
``speaker``, the default), ``"context"`` (``source`` and ``at``), ``"plain"`` (the text only,
in one ``remember_many`` call per conversation) or ``"single"`` (the text only, one
``remember`` call per turn, as an agent that writes each turn when it happens does).
"""

from __future__ import annotations

import glob
import json
import os
import re
import tempfile
from datetime import datetime

__all__ = ["CHANNEL_SETS", "KS", "WRITES", "conversation_files", "turns", "evaluate", "evaluate_all", "table"]

#: What a writer passes besides the text (see the module docstring).
WRITES = ("full", "context", "plain", "single")

CHANNEL_SETS = {
    "keyword": ("keyword",),
    "vector": ("vector",),
    "graph": ("graph",),
    "context": ("context",),
    "fused": ("keyword", "vector", "graph", "context", "speaker"),
    "fused-kvgc": ("keyword", "vector", "graph", "context"),
    "fused-kvg": ("keyword", "vector", "graph"),
    "fused-kv": ("keyword", "vector"),
}
KS = (1, 5, 10)


def conversation_files(path: str) -> list[str]:
    """The conversation files at ``path`` (a JSON file, or a folder of them)."""
    if os.path.isdir(path):
        return sorted(glob.glob(os.path.join(path, "*.json")))
    return [path] if os.path.exists(path) else []


def session_date(text: str) -> str | None:
    """LoCoMo's "1:56 pm on 8 May, 2023" as ISO 8601 (None when it does not parse)."""
    m = re.match(r"\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", text or "", re.I)
    if not m:
        return None
    hh, mm, ap, day, month, year = m.groups()
    try:
        d = datetime.strptime(f"{day} {month} {year} {int(hh) % 12 + (12 if ap.lower() == 'pm' else 0)}:{mm}",
                              "%d %B %Y %H:%M")
    except ValueError:
        return None
    return d.isoformat()


def turns(conv: dict):
    """(dia_id, text, session date string, speaker) of every turn, in order."""
    c = conv.get("conversation", conv)
    n = 1
    while f"session_{n}" in c or f"session_{n}_date_time" in c:
        for t in c.get(f"session_{n}", []) or []:
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            yield t["dia_id"], text, c.get(f"session_{n}_date_time", ""), t.get("speaker")
        n += 1


def evaluate(path: str, *, fusion: str | None = None, channel_sets=CHANNEL_SETS, memory_kw=None,
             writes: str = "full") -> dict[str, dict[str, float]]:
    """Scores of one conversation file: ``{channel set: {"any@k", "all@k", "questions"}}``."""
    import fastmem
    from ..recall.fusion import DEFAULT_FUSION

    if writes not in WRITES:
        raise ValueError(f"writes must be one of {WRITES}, not {writes!r}")
    with open(path) as f:
        conv = json.load(f)
    rows = list(turns(conv))
    qa = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "locomo.db"), fusion=fusion or DEFAULT_FUSION,
                                                            **(memory_kw or {})) as m:
        kw = {} if writes in ("plain", "single") else {"at": [session_date(r[2]) for r in rows], "source": os.path.basename(path)}
        if writes == "full":
            kw["speaker"] = [r[3] for r in rows]
        if writes == "single":
            ids = [m.remember(r[1]) for r in rows]
        else:
            ids = m.remember_many([r[1] for r in rows], progress=False, **kw)
        dia = dict(zip(ids, (r[0] for r in rows)))
        out = {}
        for name, chans in channel_sets.items():
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


def evaluate_all(path: str, *, fusion: str | None = None, memory_kw=None, writes: str = "full") -> dict[str, dict]:
    """:func:`evaluate` for every conversation at ``path``, plus ``"all"`` (question-weighted)."""
    per = {os.path.basename(f): evaluate(f, fusion=fusion, memory_kw=memory_kw, writes=writes)
           for f in conversation_files(path)}
    if per:
        total = {}
        for name in CHANNEL_SETS:
            n = sum(r[name]["questions"] for r in per.values())
            total[name] = {k: sum(r[name][k] * r[name]["questions"] for r in per.values()) / n
                           for k in per[next(iter(per))][name] if k != "questions"} | {"questions": n}
        per["all"] = total
    return per


def table(res: dict[str, dict[str, float]]) -> str:
    cols = [f"any@{k}" for k in KS] + [f"all@{k}" for k in KS]
    lines = [f"{'channel':10s} " + " ".join(f"{c:>7s}" for c in cols)]
    for name, sc in res.items():
        lines.append(f"{name:10s} " + " ".join(f"{sc[c]:7.3f}" for c in cols))
    return "\n".join(lines)
