"""Scope membership for filters that cannot join on the memories table (the vector index)."""

from __future__ import annotations

import apsw

__all__ = ["Scopes"]

#: The distinct scopes, one index seek each on ``memories_scope`` (a plain DISTINCT walks the
#: whole index: 3.2 ms at 100k memories, paid after every other process's commit; this 0.01)
_SCOPES = """
WITH RECURSIVE s(v) AS (
    SELECT (SELECT min(scope) FROM memories)
    UNION ALL SELECT (SELECT min(scope) FROM memories WHERE scope > s.v) FROM s WHERE s.v IS NOT NULL)
SELECT v FROM s WHERE v IS NOT NULL"""


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
        self._known = {r[0] for r in self.db.execute(_SCOPES)}

    def allowed(self, scope: str | None) -> set[int] | None:
        """The ids of ``scope`` (a set the vector index can count and test), or None when no
        filter is needed."""
        if scope is None:
            return None
        if len(self._known) <= 1 and (not self._known or scope in self._known):
            return None  # every memory is in this scope (or there are none)
        ids = self._cache.get(scope)
        if ids is None:
            ids = {r[0] for r in self.db.execute("SELECT id FROM memories WHERE scope=?", (scope,))}
            self._cache[scope] = ids
        return ids

    def added(self, scope: str, ids) -> None:
        self._known.add(scope)
        if scope in self._cache:
            self._cache[scope].update(ids)

    def removed(self, mid: int) -> None:
        for s in self._cache.values():
            s.discard(mid)
