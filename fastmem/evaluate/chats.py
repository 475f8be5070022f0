"""Standing instructions, preferences, order and facts in long user-assistant chats.

Protocol (the data: ``tests/data/chats.json``, written by ``tests/data/make_chats.py``):
every message of a chat is a memory (its ``at``, the role as ``speaker``, the chat as
``scope``), written as a host writes them, in order; after the last session every question
is asked with ``recall(k=10, scope=chat)``. Per kind:

- ``instruction`` and ``preference``: *found* when the evidence message is in the top 5 hits
  or among ``Recall.standing`` (``-in-hits`` and ``-standing``: each alone); *stale* when a
  superseded message is among ``Recall.standing``, ``stale-in-hits`` when in the top 5;
- ``fact``: the evidence in the top 5 (any@5); ``long`` questions (evidence in a long
  assistant answer) are also reported alone;
- ``order``: every evidence message in the top 10 (all@10), and, of those, the share whose
  hits come in the order said (``order="time"``);
- ``summary`` (a summary of a topic across sessions): the share of the evidence messages in
  the top 10 (recall@10; ``order="time"``).

Baselines in the same run: each channel alone (``channel:NAME``), and a plain embedding that
reads a message's first window only (what sentence-transformers does with the first 256 word
pieces), ranked by cosine (``truncated``). A chat with a ``part`` (``"dev"`` or ``"heldout"``:
``tests/data/long_chats.json``) is also counted under ``SYSTEM@PART``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import defaultdict
from datetime import datetime, timezone

import numpy as np

__all__ = ["DATA", "load", "evaluate", "table"]

#: The development set in the repository (absent from an installed package).
DATA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "chats.json")

KINDS = ("instruction", "preference", "order", "summary", "fact")


def load(path: str | None = None) -> list[dict] | None:
    p = path or DATA
    if not os.path.exists(p):
        return None
    with open(p, encoding="utf-8") as f:
        return json.load(f)["chats"]


#: The kinds that need several messages, asked for with ``k=10`` and ``order="time"``.
WIDE = ("order", "summary")


def _found(kind: str, evidence: set, got) -> float:
    """What a kind counts as found: every evidence message (``order``), the share of them
    (``summary``), or any (the rest)."""
    got = set(got)
    if kind == "order":
        return float(evidence <= got)
    if kind == "summary":
        return len(evidence & got) / len(evidence)
    return float(bool(evidence & got))


def _truncated(embedder, texts: list[str]) -> np.ndarray:
    """The first window of each text only (a plain embedding that truncates)."""
    w = getattr(embedder, "window_words", 160)
    return embedder.encode([" ".join(t.split()[:w]) for t in texts])


def evaluate(chats: list[dict], *, memory_kw: dict | None = None, baselines: bool = True) -> dict:
    """Per kind and system, the share of questions found (see the module docstring)."""
    import fastmem
    from ..recall.channels import NAMES

    score: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    seen: dict[tuple[str, str], int] = {}
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "chats.db"), **(memory_kw or {})) as m:
        for chat in chats:
            msgs = chat["messages"]
            ids = m.remember_many([x["text"] for x in msgs], scope=chat["id"], at=[datetime.fromtimestamp(x["at"], timezone.utc) for x in msgs],
                                  speaker=[x["role"] for x in msgs],
                                  progress=False)
            of = dict(zip(ids, (x["id"] for x in msgs)))
            at = {x["id"]: x["at"] for x in msgs}
            trunc = _truncated(m.admin.embedder, [x["text"] for x in msgs]) if baselines else None
            for q in chat["questions"]:
                kind, ev = q["kind"], set(q["evidence"])
                if kind in WIDE:
                    r = m.recall(q["question"], k=10, scope=chat["id"], record=False, analogy=False, order="time")
                    got = [of[h.id] for h in r.hits]
                    score["fused"][kind].append(_found(kind, ev, got))
                    if kind == "order":
                        said = [g for g in got if g in ev]
                        score["fused"]["order-in-time"].append(float(ev <= set(got) and said == sorted(ev, key=at.get)))
                else:
                    r = m.recall(q["question"], k=10, scope=chat["id"], record=False, analogy=False)
                    top5 = [of[h.id] for h in r.hits[:5]]
                    standing = [of[s.id] for s in r.standing]
                    score["fused"][kind].append(float(bool(ev & (set(top5) | set(standing)))))
                    if kind in ("instruction", "preference"):
                        score["fused"][kind + "-in-hits"].append(float(bool(ev & set(top5))))
                        score["fused"][kind + "-standing"].append(float(bool(ev & set(standing))))
                    if q.get("superseded"):
                        score["fused"]["stale"].append(float(bool(set(q["superseded"]) & set(standing))))
                        score["fused"]["stale-in-hits"].append(float(bool(set(q["superseded"]) & set(top5))))
                    if q.get("long"):
                        score["fused"]["long"].append(float(bool(ev & set(top5))))
                k = 10 if kind in WIDE else 5
                if not baselines:
                    continue
                for ch in NAMES:
                    v = m.recall(q["question"], k=k, scope=chat["id"], record=False, analogy=False, channels=[ch])
                    got = {of[h.id] for h in v.hits}
                    score["channel:" + ch][kind].append(_found(kind, ev, got))
                    if q.get("long") and ch == "vector":
                        score["channel:vector"]["long"].append(float(bool(ev & got)))
                qv = m.admin.embedder.encode([q["question"]])[0]
                top = [msgs[i]["id"] for i in np.argsort(-(trunc @ qv))[:k]]
                score["truncated"][kind].append(_found(kind, ev, top))
                if q.get("long"):
                    score["truncated"]["long"].append(float(bool(ev & set(top))))
            if chat.get("part"):  # the same figures again, under SYSTEM@PART
                for sys_, kinds in list(score.items()):
                    if "@" in sys_:
                        continue
                    for kd, vals in kinds.items():
                        done = seen.get((sys_, kd), 0)
                        score[f"{sys_}@{chat['part']}"][kd].extend(vals[done:])
            seen.update({(sys_, kd): len(vals) for sys_, kinds in score.items() for kd, vals in kinds.items()})
    out = {sys: {k: (round(float(np.mean(v)), 3), len(v)) for k, v in kinds.items()} for sys, kinds in score.items()}
    for sys, kinds in score.items():
        allq = [x for k in KINDS for x in kinds.get(k, [])]
        out[sys]["all"] = (round(float(np.mean(allq)), 3), len(allq))
    return out


def table(res: dict) -> str:
    """A plain-text table of :func:`evaluate`'s result."""
    cols = sorted({k for v in res.values() for k in v}, key=lambda k: (k not in KINDS + ("all",), k))
    lines = ["system     " + " ".join(f"{c:>20}" for c in cols)]
    for sys, v in res.items():
        lines.append(f"{sys:<10} " + " ".join(f"{(f'{v[c][0]:.3f} (n={v[c][1]})' if c in v else '-'):>20}"
                                              for c in cols))
    return "\n".join(lines)
