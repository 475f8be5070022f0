"""The evidence floor: whether anything recalled for a turn stands above chance.

Recall always ranks *something* first, so a host that shows the top k of every recall shows a
chit-chat turn ("Let me know how it goes.") the store's best chance matches. With the floor
on (``Memory.recall(..., floor=True)``; hosts turn it on by default), a recall returns no hits
unless at least one of them is grounded in the turn:

* it shares an *informative* word with the turn: a word that is not a stopword, a word of small
  talk ("ok", "haha", "thanks": :data:`fastmem.util.text.CHATTER_WORDS`) nor a form of a
  skeleton verb (:mod:`fastmem.reader.lexicon`), that the store has, and that at most ``share`` of
  its memories contain (a word half the store has says nothing about any one memory);
* the graph channel found it (it names an entity the turn names);
* or its embedding is closer to the turn than the best of N random memories would be: its
  cosine stands at least ``sqrt(2 ln N)`` standard deviations (the expected maximum of N
  draws) above the turn's mean cosine over a sample of the store.

A turn of small talk only (:func:`fastmem.util.text.is_chatter`: "haha ok, thanks so much!") is
never grounded, by=``"small talk"``: a store of conversation holds many thanks whose embeddings
are close to it, and none is evidence of anything.

It is a floor on the turn, not a filter of hits: when one hit is grounded, the recall is
returned as ranked (an answer is often a memory that shares no word with the question,
found through its context), so questions keep their evidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..derived.vectors import ids_json
from ..reader.lexicon import is_skeleton_word
from ..util.text import CHATTER_WORDS, content_words, is_chatter

__all__ = ["grounded", "informative_words", "chance_z", "SHARE"]

#: Default largest share of the store's memories an informative word may occur in.
SHARE = 0.05


def chance_z(n: int) -> float:
    """How many standard deviations above the mean the best of ``n`` random draws lands,
    ``sqrt(2 ln n)`` (0 for n < 2)."""
    return math.sqrt(2.0 * math.log(n)) if n >= 2 else 0.0


def informative_words(query: str, df, n: int, share: float = SHARE) -> list[str]:
    """The turn's words that can ground a hit: not stopwords, small talk or skeleton verb forms, and in at
    least one and at most ``max(1, share * n)`` of the store's ``n`` memories (``df(word)``
    counts them)."""
    top = max(1.0, share * n)
    out = []
    for w in content_words(query):
        if len(w) < 2 or w.isdigit() or w in CHATTER_WORDS or is_skeleton_word(w):
            continue
        c = df(w)
        if 0 < c <= top:
            out.append(w)
    return out


def grounded(db, query: str, hits: Sequence, *, df, n: int, vec, sample, share: float = SHARE) -> dict:
    """Whether any of ``hits`` is grounded in ``query`` (see the module docstring), and why:
    ``{"grounded": bool, "by": "words" | "graph" | "vector" | "small talk" | None, "words": [...],
    "vector_z": float, "chance_z": float}``. ``df(word)`` counts the store's memories with
    the word; ``sample`` is (m, dim) stored vectors; ``vec`` the turn's embedding or None."""
    out = {"grounded": False, "by": None, "words": [], "vector_z": 0.0, "chance_z": chance_z(n)}
    if not hits:
        return out
    if is_chatter(query):
        out["by"] = "small talk"
        return out
    if any("graph" in h.why for h in hits):
        out.update(grounded=True, by="graph")
        return out
    words = informative_words(query, df, n, share)
    out["words"] = words
    if words:
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        row = db.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid IN "
                         "(SELECT value FROM json_each(?)) LIMIT 1", (match, ids_json(h.id for h in hits))).fetchone()
        if row is not None:
            out.update(grounded=True, by="words")
            return out
    if vec is not None and sample is not None and len(sample) >= 2:
        c = sample @ np.asarray(vec, np.float32)
        mu, sd = float(c.mean()), max(float(c.std()), 1e-6)
        best = max((h.why["vector"]["score"] for h in hits if "vector" in h.why), default=None)
        if best is not None:
            out["vector_z"] = (best - mu) / sd
            if out["vector_z"] >= out["chance_z"]:
                out.update(grounded=True, by="vector")
    return out
