"""Facts a person would accept: the reader's facts against a person's (``fastmem eval reading PATH``).

The file (``tests/data/reading.json``) holds chat turns, each with its speaker, the person
spoken to, the turn before, and the facts a careful person would store from it (subject,
relation, object as the person wrote them, with the mood: asserted, planned, negated); many
turns have none (greetings, questions, wishes, generic remarks). The turns are written into a
store in conversation order, one source per conversation, with their speakers, as a chat
host writes them; each turn's stored facts are compared with the person's.

A stored fact matches a person's when it is about the same things: the subjects name the same
thing (the same words once articles and possessives are dropped), the objects share their head
word or half their content words, and the relations share their verb or are alike by MiniLM
(cosine >= :data:`RELATION_COSINE`). Precision: the share of stored facts that match one of
the person's; recall: the share of the person's facts matched. Reported per split (``dev``,
``heldout``).

Three such files, each written by someone who had not seen the reader's rules:
``tests/data/reading.json`` (220 turns dev, 120 held out: the held-out part is the figure of
record, read only at the end of a piece of work), ``tests/data/reading_dev2.json`` (300 turns,
dev) and ``tests/data/reading_dev3.json`` (263 turns, dev). The first set's dev part has been
read turn by turn for many rounds of rules; the others show how those rules carry to text
they were not made on.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence

import numpy as np

from . import json_file

__all__ = ["load", "evaluate", "matches", "RELATION_COSINE"]

#: Two relations with different verbs still match at this MiniLM cosine of their phrases.
RELATION_COSINE = 0.75
_DROP = frozenset("a an the my your his her our their its some this that these those".split())
_WORD = re.compile(r"[a-z0-9]+")


def load(path: str | os.PathLike) -> dict | None:
    """The reading set at ``path`` (a JSON file, or a folder holding ``reading.json``); None
    when there is none."""
    return json_file(path, "reading.json")


def _words(text: str) -> list[str]:
    out = []
    for w in _WORD.findall(text.lower()):
        if w in _DROP:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


def _same_thing(a: str, b: str) -> bool:
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return False
    if wa[-1] == wb[-1]:
        return True
    sa, sb = set(wa), set(wb)
    return len(sa & sb) / min(len(sa), len(sb)) >= 0.5


def _verb(rel: str) -> str:
    words = [w for w in re.split(r"[_\s]+", rel.lower()) if w and w not in ("not", "be")]
    return words[0] if words else rel.lower()


def matches(pred: Sequence[str], gold: dict, rel_sim) -> bool:
    """Whether a stored fact ``(subject, relation, object[, relation as written])`` is the
    person's ``gold`` (the relation as written counts too: "buy" is stored as "acquire")."""
    s, o = pred[0], pred[2]
    if not (_same_thing(s, gold["s"]) and _same_thing(o, gold["o"])):
        return False
    return any(_verb(r) == _verb(gold["r"]) or rel_sim(r, gold["r"]) >= RELATION_COSINE for r in {pred[1], *pred[3:]} if r)


def _conversations(items: Sequence[dict]) -> list[list[dict]]:
    out: list[list[dict]] = []
    for it in items:
        if not it.get("previous") or not out:
            out.append([])
        out[-1].append(it)
    return out


def evaluate(data: dict, *, memory_kw: dict | None = None) -> dict:
    """Precision and recall of the stored facts per split, and every turn's facts (``turns``)."""
    import fastmem
    from fastmem.models.embedder import default_embedder

    emb = default_embedder()
    cache: dict[str, np.ndarray] = {}

    def rel_sim(a: str, b: str) -> float:
        phrases = [x.replace("_", " ") for x in (a, b)]
        todo = [p for p in phrases if p not in cache]
        if todo:
            cache.update(zip(todo, emb.encode(todo)))
        return float(np.dot(cache[phrases[0]], cache[phrases[1]]))

    turns = []
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "reading.db"), **(memory_kw or {})) as m:
        for n, conv in enumerate(_conversations(data["items"])):
            ids = m.remember_many([it["text"] for it in conv], source=f"conversation-{n}",
                                  speaker=[it["speaker"] for it in conv], progress=False)
            for it, mid in zip(conv, ids):
                got = [(f.subject, f.relation, f.object, f.relation_raw or "") for f in m.graph.facts(mid)]
                turns.append({"id": it["id"], "split": it.get("split", "dev"), "text": it["text"],
                              "speaker": it["speaker"], "facts": got, "gold": it["facts"]})
    report: dict = {"turns": turns}
    for split in ("dev", "heldout", "all"):
        chosen = [t for t in turns if split == "all" or t["split"] == split]
        if not chosen:
            continue
        pred = sum(len(t["facts"]) for t in chosen)
        gold = sum(len(t["gold"]) for t in chosen)
        right = sum(any(matches(f, g, rel_sim) for g in t["gold"]) for t in chosen for f in t["facts"])
        found = sum(any(matches(f, g, rel_sim) for f in t["facts"]) for t in chosen for g in t["gold"])
        empty = [t for t in chosen if not t["gold"]]
        report[split] = {"turns": len(chosen), "facts stored": pred, "facts of the person": gold,
                         "precision": right / pred if pred else 0.0, "recall": found / gold if gold else 0.0,
                         "facts from turns with none": sum(len(t["facts"]) for t in empty)}
    return report
