"""The graph channel: memories whose facts mention entities the turn names (any alias; an
approved category stands for its members), at a bounded cost (see :class:`Graph`)."""

from __future__ import annotations

import json

import apsw
import numpy as np

from ...reader.canon import fold_name
from ...util.text import STOPWORDS, words
from .spec import Channel, TurnQuery, channel

__all__ = ["Graph"]


def _grams(query: str) -> set[str]:
    toks = words(query)
    grams = set()
    for n in (1, 2, 3, 4):
        for i in range(len(toks) - n + 1):
            g = " ".join(toks[i : i + n])
            if n == 1 and (g in STOPWORDS or len(g) < 2):
                continue
            grams.add(fold_name(g) or g)
    return grams


class Graph:
    """Memories whose facts mention entities the turn names (1-4 word n-grams looked up as
    folded aliases; an approved category stands for its members), ranked by how many of them,
    newest first among equals; also returns the matched names.

    Indexed lookups only, at a bounded cost: an entity with more than ``CAP`` facts (a hub:
    "I", the user's own name) only counts for memories that the rarer entities found; when
    every named entity is a hub, the newest ``pool`` memories of the rarest one are ranked.
    """

    CAP = 2_000
    #: An entity in more facts than this share of the store's memories is a hub too (a
    #: conversation's speakers: the turn that names one is the speaker channel's), at least
    #: ``HUB_MIN`` facts
    HUB_SHARE = 0.05
    HUB_MIN = 20

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db
        self._deg: dict[tuple[int, str | None], tuple[int, int]] = {}  # (node, scope) -> (capped degree, size then)
        self._categories: bool | None = None  # whether any category is approved (None: ask)

    def reset(self) -> None:
        """Forget what may have changed: approved categories (degrees refresh on their own)."""
        self._categories = None

    def degree(self, nid: int, n: int, scope: str | None = None) -> int:
        """Facts that mention the entity (those of ``scope``'s memories when given: a scope is
        ranked as a store of its own), counted up to ``CAP + 1`` on each side (cached until
        the store, or the scope, grows by a tenth)."""
        key = (nid, scope)
        got = self._deg.get(key)
        if got is not None and abs(n - got[1]) * 10 <= max(got[1], 1):
            return got[0]
        if scope is None:
            d = sum(self.db.execute(f"SELECT count(*) FROM (SELECT 1 FROM edges WHERE {col}=? LIMIT ?)",
                                    (nid, self.CAP + 1)).fetchone()[0] for col in ("subj", "obj"))
        else:
            d = sum(self.db.execute(f"SELECT count(*) FROM (SELECT 1 FROM edges e JOIN memories m ON m.id=e.memory_id "
                                    f"WHERE e.{col}=? AND m.scope=? LIMIT ?)",
                                    (nid, scope, self.CAP + 1)).fetchone()[0] for col in ("subj", "obj"))
        if len(self._deg) > 100_000:
            self._deg.clear()
        self._deg[key] = (d, n)
        return d

    def memories(self, nid: int) -> np.ndarray:
        """The distinct memories whose facts name the entity, ascending: its postings, read
        from the two ``(entity, memory)`` indexes alone (no table row is visited)."""
        rows = self.db.execute("SELECT memory_id FROM edges WHERE subj=?1 UNION ALL "
                               "SELECT memory_id FROM edges WHERE obj=?1", (nid,)).fetchall()
        return np.unique(np.fromiter((r[0] for r in rows), np.int64, len(rows)))

    def __call__(self, query: str, pool: int, scope: str | None, n: int = 0,
                 members: set[int] | None = None) -> tuple[Channel, list[str]]:
        """Rank the memories for ``query``; ``members`` are the ids of ``scope`` when the store
        also holds other scopes (:meth:`Scopes.allowed`), None when no memory is left out."""
        grams = _grams(query)
        if not grams:
            return {}, []
        db = self.db
        found = db.execute("SELECT alias, node_id FROM aliases WHERE alias IN (SELECT value FROM json_each(?))",
                           (json.dumps(sorted(grams)),)).fetchall()
        if not found:
            return {}, []
        nodes = {nd for _, nd in found}
        if self._categories is None:
            self._categories = db.execute("SELECT 1 FROM categories WHERE status='approved' LIMIT 1").fetchone() is not None
        if self._categories:
            nodes.update(r[0] for r in db.execute(  # an approved category stands for its members
                "SELECT cm.node_id FROM category_members cm JOIN categories c ON c.id=cm.category_id "
                "WHERE c.status='approved' AND c.node_id IN (SELECT value FROM json_each(?))", (json.dumps(sorted(nodes)),)))
        names = sorted({a for a, _ in found})
        if members is not None:
            n = len(members)
        deg = {nd: self.degree(nd, n, scope if members is not None else None) for nd in nodes}
        hub = min(self.CAP, max(self.HUB_MIN, self.HUB_SHARE * n))
        rare = sorted(nd for nd in nodes if deg[nd] <= hub)
        common = sorted((nd for nd in nodes if deg[nd] > hub), key=lambda nd: deg[nd])
        lim = pool if not common else 4 * pool
        if rare:  # distinct named entities per memory, counted over the postings
            ids, counts = np.unique(np.concatenate([self.memories(nd) for nd in rare]), return_counts=True)
            if members is not None:
                keep = np.fromiter((m in members for m in ids.tolist()), np.bool_, len(ids))
                ids, counts = ids[keep], counts[keep]
            top = np.lexsort((-ids, -counts))[:lim]  # most entities first, then newest
            rows = list(zip(ids[top].tolist(), counts[top].tolist()))
        elif common:  # only hubs: the newest memories of the rarest (backwards on its index)
            join = "JOIN memories m ON m.id=e.memory_id AND m.scope=:scope " if members is not None else ""
            newest: set[int] = set()
            for col in ("subj", "obj"):
                newest.update(r[0] for r in db.execute(
                    f"SELECT DISTINCT e.memory_id FROM edges e {join}WHERE e.{col}=:n ORDER BY e.memory_id DESC LIMIT :lim",
                    {"n": common[0], "scope": scope, "lim": lim}))
            rows = [(mid, 1) for mid in sorted(newest, reverse=True)[:lim]]
        else:
            rows = []
        if common and rows:  # what the hubs add to the memories found
            score = {mid: c for mid, c in rows}
            hubs = set(common)
            seen: dict[int, set[int]] = {}
            for mid, a, b in db.execute("SELECT memory_id, subj, obj FROM edges WHERE memory_id IN "
                                        "(SELECT value FROM json_each(?))", (json.dumps(list(score)),)):
                x = a if a in hubs else b if b in hubs else None
                if x is not None and (rare or x != common[0]):
                    seen.setdefault(mid, set()).add(x)
            rows = sorted(((mid, c + len(seen.get(mid, ()))) for mid, c in score.items()), key=lambda x: (-x[1], -x[0]))
        return {mid: (r + 1, float(c)) for r, (mid, c) in enumerate(rows[:pool])}, names


@channel("graph", weight=0.5, state=Graph, explain=lambda t: {"entities": t.entities})
def run(p, t: TurnQuery) -> Channel:
    found, t.entities = p.state["graph"](t.query, t.fetch, t.scope, p.index.live, t.members)
    return found
