"""The context channel: memories credited through their neighbour in the same ``source`` (or
the same transcript), which the keyword or vector channel found: a turn that answers through
its context ("Yes, it was amazing!" after "How was the concert?"). Weighed apart from the
memory's own words (see :func:`context`; its defaults' figures: ``docs/defaults.md``)."""

from __future__ import annotations

import json

import apsw

from ...util.text import prefix_speaker
from ..fusion import normalised
from .spec import Channel, TurnQuery, channel

__all__ = ["context", "TURN_GAP"]


#: Turns of a transcript written without a ``source`` are neighbours when written at most this
#: many seconds apart (a longer pause ends the conversation).
TURN_GAP = 1800.0


def context(db: apsw.Connection, found: dict[str, Channel], pool: int, scope: str | None,
            before: float = 0.3, asked: float = 1.0, after: float = 0.0) -> Channel:
    """Memories credited through their neighbours: each memory the keyword or vector channel
    found (its normalised score as in fusion, the best of the two) passes ``before`` times its
    score to the next memory of its source (``asked`` times when the seed asks something: it
    contains a question mark, and the next memory is likely its answer) and ``after`` times
    it to the previous one. A memory without a ``source`` has as neighbours the memories
    written just before and after it in its scope, at most :data:`TURN_GAP` seconds apart,
    when both are turns of a transcript (each has a speaker, given or as a "Name: " prefix):
    a conversation given to ``remember_many`` at once, or written a turn per ``remember`` call
    as it happens; list items are never each other's neighbours. Two indexed queries over at
    most ``2 pool`` seeds. The defaults' figures: ``docs/defaults.md``.
    """
    seeds: dict[int, float] = {}
    for name in ("keyword", "vector"):
        for mid, v in normalised(found.get(name, {})).items():
            if v > seeds.get(mid, 0.0):
                seeds[mid] = v
    if not seeds or max(before, asked, after) <= 0:
        return {}
    top = sorted(seeds.items(), key=lambda x: -x[1])[: 2 * pool]
    scoped = " AND n.scope=m.scope" + (" AND n.scope=:scope" if scope is not None else "")
    credit: dict[int, float] = {}
    for mid, q, nxt, prv in db.execute(
        "SELECT m.id, instr(m.text, '?') > 0, (SELECT n.id FROM memories n WHERE n.source=m.source AND n.id>m.id" + scoped + " ORDER BY n.id LIMIT 1), "
        "(SELECT n.id FROM memories n WHERE n.source=m.source AND n.id<m.id" + scoped + " ORDER BY n.id DESC LIMIT 1) "
        "FROM memories m WHERE m.id IN (SELECT value FROM json_each(:ids)) AND m.source IS NOT NULL",
        {"ids": json.dumps([m for m, _ in top]), "scope": scope},
    ):
        v = seeds[mid]
        for other, w in ((nxt, asked if q else before), (prv, after)):
            if other is not None and w > 0 and w * v > credit.get(other, 0.0):
                credit[other] = w * v
    for mid, q, head, who, nxt, nhead, nwho, prv, phead, pwho in db.execute(
        "SELECT m.id, instr(m.text, '?') > 0, substr(m.text, 1, 80), m.speaker, n.id, substr(n.text, 1, 80), n.speaker, "
        "p.id, substr(p.text, 1, 80), p.speaker FROM memories m "
        "LEFT JOIN memories n ON n.id=m.id+1 AND n.source IS NULL AND abs(n.created-m.created) <= :gap "
        "AND n.scope=m.scope "
        "LEFT JOIN memories p ON p.id=m.id-1 AND p.source IS NULL AND abs(p.created-m.created) <= :gap "
        "AND p.scope=m.scope "
        "WHERE m.id IN (SELECT value FROM json_each(:ids)) AND m.source IS NULL",
        {"ids": json.dumps([m for m, _ in top]), "gap": TURN_GAP},
    ):
        if not _a_turn(who, head):
            continue
        v = seeds[mid]
        for other, text, by, w in ((nxt, nhead, nwho, asked if q else before), (prv, phead, pwho, after)):
            if other is not None and w > 0 and w * v > credit.get(other, 0.0) and _a_turn(by, text):
                credit[other] = w * v
    ranked = sorted(credit.items(), key=lambda x: (-x[1], -x[0]))[:pool]
    return {mid: (r + 1, sc) for r, (mid, sc) in enumerate(ranked)}


def _a_turn(speaker: str | None, head: str) -> bool:
    """Whether a memory is a turn of a transcript: it has a speaker, given or as a prefix."""
    return speaker is not None or prefix_speaker(head) is not None


@channel("context", derived=True, weight=1.0, needs_model=True, long_prior=True)
def run(p, t: TurnQuery) -> Channel:
    return context(p.db, t.found, t.pool, t.scope)
