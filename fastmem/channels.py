"""Recall channels: each finds candidate memories for a turn its own way.

A channel returns ``{memory_id: (rank, score)}`` (rank 1 best, score larger-is-better) for
at most ``pool`` memories of the requested scope. :mod:`fastmem.fusion` combines them.

* ``keyword`` - FTS5 bm25 over the memory text (every query word quoted, OR-ed);
* ``vector``  - hnswlib inner product with the turn's embedding;
* ``graph``   - memories whose facts mention an entity the turn names (any alias).

A new channel is a function here plus its name in :data:`NAMES` and a line in
:meth:`fastmem.recall.RecallPipeline.run`.
"""

from __future__ import annotations

import json

import apsw
import numpy as np

from .canon import fold_name
from .index import VectorIndex
from .text import STOPWORDS, fts_query, words

__all__ = ["NAMES", "Channel", "vector", "keyword", "graph", "Scopes"]

Channel = dict[int, tuple[int, float]]
#: The channels recall fuses by default, in the order they run.
NAMES = ("keyword", "vector", "graph")


def vector(index: VectorIndex, vec: np.ndarray, pool: int, allowed) -> tuple[Channel, np.ndarray]:
    """Nearest memories by embedding; also returns the labels in rank order (the analogy
    slot's surface condition reads them)."""
    labels, sims = index.query(np.asarray(vec, np.float32), pool, allowed)
    return {int(m): (r + 1, float(s)) for r, (m, s) in enumerate(zip(labels, sims))}, labels


def keyword(db: apsw.Connection, query: str, pool: int, scope: str | None) -> Channel:
    """bm25 over the FTS5 index (user text is quoted, never FTS syntax)."""
    match = fts_query(query)
    if not match:
        return {}
    sql = (
        "SELECT m.id, bm25(memories_fts) FROM memories_fts JOIN memories m ON m.id=memories_fts.rowid "
        "WHERE memories_fts MATCH ?1" + (" AND m.scope=?3" if scope is not None else "") + " ORDER BY 2 LIMIT ?2"
    )
    args = (match, pool, scope) if scope is not None else (match, pool)
    return {mid: (r + 1, float(-s)) for r, (mid, s) in enumerate(db.execute(sql, args))}


def graph(db: apsw.Connection, query: str, pool: int, scope: str | None) -> tuple[Channel, list[str]]:
    """Memories whose facts mention entities named in the turn (1-4 word n-grams looked up
    as folded aliases), ranked by how many of them; also returns the matched names."""
    toks = words(query)
    grams = set()
    for n in (1, 2, 3, 4):
        for i in range(len(toks) - n + 1):
            g = " ".join(toks[i : i + n])
            if n == 1 and (g in STOPWORDS or len(g) < 2):
                continue
            grams.add(fold_name(g) or g)
    if not grams:
        return {}, []
    found = db.execute(
        "SELECT a.alias, a.node_id FROM aliases a WHERE a.alias IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(grams)),),
    ).fetchall()
    if not found:
        return {}, []
    nodes = {n for _, n in found}
    nodes.update(r[0] for r in db.execute(  # an approved category stands for its members
        "SELECT cm.node_id FROM category_members cm JOIN categories c ON c.id=cm.category_id "
        "WHERE c.status='approved' AND c.node_id IN (SELECT value FROM json_each(?))", (json.dumps(sorted(nodes)),)))
    nodes = sorted(nodes)
    names = sorted({a for a, _ in found})
    sql = (
        "SELECT e.memory_id, count(DISTINCT CASE WHEN e.subj IN (SELECT value FROM json_each(?1)) THEN e.subj ELSE e.obj END) c "
        "FROM edges e " + ("JOIN memories m ON m.id=e.memory_id AND m.scope=?3 " if scope is not None else "")
        + "WHERE e.subj IN (SELECT value FROM json_each(?1)) OR e.obj IN (SELECT value FROM json_each(?1)) "
        "GROUP BY e.memory_id ORDER BY c DESC, e.memory_id DESC LIMIT ?2"
    )
    args = (json.dumps(nodes), pool, scope) if scope is not None else (json.dumps(nodes), pool)
    return {mid: (r + 1, float(c)) for r, (mid, c) in enumerate(db.execute(sql, args))}, names


class Scopes:
    """Which memories belong to a scope, for filters that cannot join on the table (the
    vector index). Cached per scope; kept current by the writes of this process and
    cleared when another process commits."""

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db
        self._cache: dict[str, set[int]] = {}
        self.reset()

    def reset(self) -> None:
        self._cache.clear()
        self._n = int(self.db.execute("SELECT count(*) FROM (SELECT DISTINCT scope FROM memories)").fetchone()[0])

    def allowed(self, scope: str | None):
        """A membership test for ``scope``, or None when no filter is needed."""
        if scope is None:
            return None
        if self._n <= 1:
            only = self.db.execute("SELECT scope FROM memories LIMIT 1").fetchone()
            if only is None or only[0] == scope:
                return None
        ids = self._cache.get(scope)
        if ids is None:
            ids = {r[0] for r in self.db.execute("SELECT id FROM memories WHERE scope=?", (scope,))}
            self._cache[scope] = ids
        return ids.__contains__

    def added(self, scope: str, ids) -> None:
        if scope in self._cache:
            self._cache[scope].update(ids)
        if self._n <= 1:
            self._n = int(self.db.execute("SELECT count(*) FROM (SELECT DISTINCT scope FROM memories)").fetchone()[0])

    def removed(self, mid: int) -> None:
        for s in self._cache.values():
            s.discard(mid)
