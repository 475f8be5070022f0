"""The speaker channel: the memories the other channels found whose speaker the turn names
("What has Melanie painted?" prefers what Melanie said; see :func:`speaker`)."""

from __future__ import annotations

import json

import apsw

from ...reader.canon import fold_name
from ...util.bounded import Bounded
from ...util.text import prefix_speaker
from .spec import Channel, TurnQuery, channel

__all__ = ["speaker"]


def _speaker_keys(name: str) -> tuple[str, str | None]:
    """A speaker's folded full name, and its folded first word when the name has several
    words and starts with a capital (a given name: "Jon" for "Jon Smith")."""
    parts = name.split()
    first = fold_name(parts[0]) if len(parts) > 1 and parts[0][:1].isupper() else None
    return fold_name(name), first or None


def speaker(db: apsw.Connection, found: dict[str, Channel], query: str, cache: dict | None = None) -> Channel:
    """The memories found by the other channels whose speaker the turn names: the speaker's
    full name as words of the turn (folded as entity names are: case, punctuation,
    possessives), or the first word of a several-word name written with a capital in the turn
    ("Jon" for "Jon Smith"). Every such memory scores 1, so in fusion the channel adds its
    weight to each and orders them only against memories of other speakers. One primary-key
    query over the candidates (its fusion weight and what it was measured to add:
    ``docs/defaults.md``).

    A memory written without ``speaker`` whose text starts with a speaker's name and a colon
    (:func:`prefix_speaker`) counts as that speaker's, named in the turn with a capital (a
    stricter test than a given speaker's: the prefix is a guess).
    """
    cands = {m for ch in found.values() for m in ch}
    if not cands:
        return {}
    folded = f" {fold_name(query)} "
    capitals = {fold_name(w) for w in query.replace("'", " ").split() if w[:1].isupper()}
    cache = {} if cache is None else cache
    hits = []
    for mid, who, head in db.execute(
        "SELECT id, speaker, substr(text, 1, 80) FROM memories WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(cands)),),
    ):
        if who is None:
            guess = prefix_speaker(head)
            if guess is not None and all(fold_name(w) in capitals for w in guess.split()[:1]):
                hits.append(mid)
            continue
        keys = cache.get(who)
        if keys is None:
            keys = cache[who] = _speaker_keys(who)
        full, first = keys
        if (full and f" {full} " in folded) or (first and first in capitals):
            hits.append(mid)
    return {mid: (1, 1.0) for mid in sorted(hits)}


@channel("speaker", derived=True, weight=0.75, cut_ties=False, needs_model=True, surfaces=False,
         state=lambda db: Bounded(10_000))  # folded speaker names
def run(p, t: TurnQuery) -> Channel:
    return speaker(p.db, t.found, t.query, p.state["speaker"])
