"""How a recall's hits are arranged once ranked: spread over near-duplicates for a question
that asks for a list or an order, and in time order on request.

A question such as "in what order did I bring up X, Y and Z?" or "what activities has
Melanie done?" needs every relevant memory, not the five best phrasings of one: for those
(:func:`listy`) the fused list is re-ranked by maximal marginal relevance (:func:`spread`),
each next hit the one whose fused score, less :data:`MMR_REDUNDANCY` times its highest
embedding cosine to a hit already chosen, is best. ``recall(order="time")`` then returns
the chosen hits oldest first (memories without a time last, by rank).
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["ORDERS", "MMR_REDUNDANCY", "SPREAD_POOL", "listy", "spread", "by_time"]

#: What ``recall(order=...)`` accepts: "rank" (best first, the default) or "time" (oldest first).
ORDERS = ("rank", "time")
#: The weight of a candidate's similarity to the hits already chosen (against its fused score,
#: both on the scale of the best candidate).
MMR_REDUNDANCY = 0.5
#: Candidates re-ranked, as a multiple of ``k``.
SPREAD_POOL = 3

_LISTY = re.compile(
    r"\b(in what order|what order|which order|order did|in order|list|all (?:the|of)|every|each time|"
    r"how many (?:times|different)|what (?:are|were) (?:all|the)|over time|timeline|sequence|"
    r"across (?:our|the|all|my)|which \w+s\b|what \w+s (?:has|have|did|does|do))\b", re.I)


def listy(query: str) -> bool:
    """Whether a question asks for a list or an order (several memories, each needed)."""
    return _LISTY.search(query) is not None


def spread(hits: list, vecs: np.ndarray, k: int) -> list:
    """The ``k`` hits maximal marginal relevance picks from ``hits`` (best first, with their
    unit vectors ``vecs``, rows in the same order)."""
    if len(hits) <= 1:
        return hits[:k]
    top = max(h.score for h in hits) or 1.0
    rel = np.array([h.score / top for h in hits])
    sims = vecs @ vecs.T
    chosen = [0]
    worst = sims[0].copy()
    while len(chosen) < min(k, len(hits)):
        gain = rel - MMR_REDUNDANCY * worst
        gain[chosen] = -np.inf
        nxt = int(np.argmax(gain))
        chosen.append(nxt)
        worst = np.maximum(worst, sims[nxt])
    return [hits[i] for i in chosen]


def by_time(hits: list) -> list:
    """Oldest first; hits without a time after them, in rank order."""
    timed = sorted((h for h in hits if h.at is not None), key=lambda h: h.at)
    return timed + [h for h in hits if h.at is None]
