"""``mem.graph``: the knowledge graph of a memory's facts (see :mod:`fastmem.derived.graph`).

With ``scope``, every call sees only the facts of that scope's memories.
"""

from __future__ import annotations

from ..derived import graph as G
from .base import Part

__all__ = ["Graph"]


class Graph(Part):
    """The knowledge graph: entities with canonical names and aliases, facts as edges."""

    __slots__ = ()

    def entity(self, name: str, *, scope: str | None = None) -> list[G.Entity]:
        """Graph nodes that ``name`` (any alias, any spelling that folds alike) resolves to."""
        return self._read.entity(name, scope=scope)

    def entity_by_id(self, entity_id: int) -> G.Entity:
        """The graph node with this id (its name, type and aliases); raises NotFound."""
        return self._read.entity_by_id(entity_id)

    def neighbours(self, name_or_id, *, depth: int = 1, scope: str | None = None) -> list[tuple[G.Entity, int]]:
        """Entities within ``depth`` (1 or 2) hops, with their distance."""
        return self._read.neighbours(name_or_id, depth=depth, scope=scope)

    def path(self, a, b, *, max_depth: int = 4, scope: str | None = None) -> list[G.Fact] | None:
        """Shortest chain of facts linking two entities (None when unconnected)."""
        return self._read.relation_path(a, b, max_depth=max_depth, scope=scope)

    def facts(self, memory_id: int) -> list[G.Fact]:
        """The facts (edges) a memory asserted, in text order."""
        return self._read.facts(memory_id)

    def facts_about(self, name_or_id, *, limit: int = 100, scope: str | None = None) -> list[G.Fact]:
        """Facts in which an entity is subject or object, newest first."""
        return self._read.entity_facts(name_or_id, limit=limit, scope=scope)

    def conflicts(self, relations, *, scope: str | None = None,
                  limit: int = 100) -> list[tuple[int, int, str, str, str, str]]:
        """Facts that disagree: the same subject with one of ``relations`` (canonical names,
        e.g. ``{"live_in", "work_for"}``: relations a subject has one object of at a time) to
        different objects. Newest pairs first: ``(memory a, memory b, subject, relation,
        object a, object b)``; both memories of ``scope`` when given."""
        return self._read.conflicting_facts(relations, scope=scope, limit=limit)

    def alias_candidates(self) -> list[dict]:
        """Borderline name pairs awaiting review: ``id, name, other, score``."""
        return self._read.alias_candidates()

    def review_alias(self, candidate_id: int, *, accept: bool) -> None:
        """Accept (merge the two nodes and their edges) or reject a candidate alias."""
        return self._write.review_alias(candidate_id, accept=accept)
