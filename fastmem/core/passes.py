"""Part of :class:`fastmem.Memory`: the background passes (chunks, categories), usage and
feedback, and the knowledge graph's reads. The verbs' logic; their documentation is on
``Memory``, which hands over to :class:`Passes`, :class:`UsageVerbs` and :class:`GraphVerbs`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..derived import graph as G
from ..derived import usage as U
from ..errors import InvalidInput, NotFound
from ..passes import categories as CAT
from ..passes import chunks as CH
from ..passes.categories import Category, Namer
from ..passes.chunks import ConsolidationReport
from ..passes.summarize import Extractive, Summarizer
from ..results import Recall, Record
from ..storage import memories as R
from ..util.text import check_text
from .args import check_id as _check_id
from .args import check_int as _check_int
from .args import check_scope as _check_scope

__all__ = ["Passes", "UsageVerbs", "GraphVerbs"]


class Passes:
    """The background passes: chunks and categories (documented on :class:`fastmem.Memory`)."""

    def __init__(self, engine, front) -> None:
        self.e = engine
        self.front = front

    # -- background passes: chunks and categories ------------------------------------------
    def consolidate(self, *, scope: str | None = None, summarizer: Summarizer | None = None,
                    progress: bool | None = None, budget: int = 600) -> ConsolidationReport:
        self.e.check_open()
        _check_scope(scope)
        summ = summarizer if summarizer is not None else Extractive()
        if not callable(getattr(summ, "summarize", None)):
            raise InvalidInput("summarizer must have a summarize(texts, *, names, budget) method")
        self.front.derive_pending()  # clusters are found from every memory's facts
        return CH.run(self.e.db, self.e.store, self.e.synced, self.e.transaction, embedder=self.e.embedder,
                      extractor=self.e.extractor, structure=self.e.structure, scope=scope,
                      summarizer=summ, progress=progress, budget=budget)

    def expand(self, chunk_id: int) -> list[Record]:
        self.e.check_open()
        cid = _check_id(chunk_id)
        with self.e.lock:
            self.e.sync()
            got = CH.members(self.e.db, cid)
            if got is None:
                raise NotFound(f"no chunk with id {cid}")
            return [self._record(m) for m in got]

    def _record(self, mid: int) -> Record:
        return Record(**R.row(self.e.db, mid))

    def chunks(self, *, scope: str | None = None) -> list[int]:
        _check_scope(scope)
        return CH.chunk_ids(self.e.db, scope)

    def chunks_of(self, memory_id: int) -> list[int]:
        mid = _check_id(memory_id)
        R.row(self.e.db, mid)  # NotFound
        return CH.containing(self.e.db, mid)

    def dissolve(self, chunk_id: int) -> None:
        self.e.check_open()
        cid = _check_id(chunk_id)
        with self.e.lock:
            self.e.sync()
            if CH.members(self.e.db, cid) is None:
                raise NotFound(f"no chunk with id {cid}")
        self.front.forget(cid)

    def propose_categories(self, *, namer: Namer | None = None, scope: str | None = None,
                           min_members: int = 3) -> list[Category]:
        self.e.check_open()
        _check_scope(scope)
        min_members = _check_int(min_members, "min_members", 2, 1_000_000)
        self.front.derive_pending()  # roles are read from every memory's facts
        with self.e.lock:
            self.e.sync()
            return CAT.propose(self.e.store, namer=namer, scope=scope, min_members=min_members)

    def categories(self, status: str | None = None, *, scope: str | None | object = CAT.ANY) -> list[Category]:
        if scope is not CAT.ANY:
            _check_scope(scope)
        with self.e.lock:
            return CAT.listing(self.e.db, status, scope=scope)

    def approve_category(self, category_id: int) -> Category:
        cid = _check_id(category_id, "category")
        with self.e.transaction() as tx:
            tx.graph_changed()
            return CAT.approve(self.e.store, cid)

    def reject_category(self, category_id: int) -> Category:
        cid = _check_id(category_id, "category")
        with self.e.transaction() as tx:
            tx.graph_changed()
            return CAT.reject(self.e.store, cid)

    def revert_category(self, category_id: int) -> Category:
        cid = _check_id(category_id, "category")
        with self.e.transaction() as tx:
            tx.graph_changed()
            return CAT.revert(self.e.store, cid)


class UsageVerbs:
    """Usage and feedback (documented on :class:`fastmem.Memory`)."""

    def __init__(self, engine, front) -> None:
        self.e = engine
        self.front = front

    # -- usage -----------------------------------------------------------------------------
    def feedback(self, memory_id: int, *, engaged: bool = True) -> float:
        self.e.check_open()
        mid = _check_id(memory_id)
        if not isinstance(engaged, bool):
            raise InvalidInput("engaged must be True or False")
        with self.e.lock:
            return self.e.ledger.feedback(mid, engaged)

    def record(self, result: Recall, *, session: str | None = None) -> None:
        self.e.check_open()
        if not isinstance(result, Recall):
            raise InvalidInput("result must be a Recall returned by recall()")
        with self.e.lock:
            self.e.ledger.record(result.hits, result.analogy, session)

    def usage(self, memory_id: int) -> dict[str, Any]:
        return self.e.ledger.counters(_check_id(memory_id))

    def use_history(self, memory_id: int, limit: int = 50) -> list[dict[str, Any]]:
        mid = _check_id(memory_id)
        R.row(self.e.db, mid)  # NotFound
        return U.history(self.e.db, mid, _check_int(limit, "limit", 1, 1_000_000))

    def use_extremes(self, *, scope: str | None = None, limit: int = 20) -> tuple[list[tuple], list[tuple]]:
        _check_scope(scope)
        return U.extremes(self.e.db, scope, _check_int(limit, "limit", 1, 1_000_000))

    def use_timeline(self, *, scope: str | None = None, bins: int = 60) -> tuple[str, list[tuple]]:
        _check_scope(scope)
        return U.timeline(self.e.db, scope, _check_int(bins, "bins", 1, 10_000))

    def observe(self, text: str, *, session: str) -> dict[str, list[int]]:
        self.e.check_open()
        check_text(text, "text")
        if not isinstance(session, str) or not session:
            raise InvalidInput("session must be a non-empty str")
        with self.e.lock:
            self.e.sync()
            return self.e.ledger.observe(text, session, self.e.embedder.encode)


class GraphVerbs:
    """The knowledge graph's reads and alias review (documented on :class:`fastmem.Memory`)."""

    def __init__(self, engine, front) -> None:
        self.e = engine
        self.front = front

    # -- the knowledge graph ---------------------------------------------------------------
    # With ``scope``, every graph call sees only the facts of that scope's memories.
    def entity(self, name: str, *, scope: str | None = None) -> list[G.Entity]:
        check_text(name, "name")
        _check_scope(scope)
        return G.lookup(self.e.db, name, scope)

    def entity_by_id(self, entity_id: int) -> G.Entity:
        nid = _check_id(entity_id, "entity")
        got = G.entity(self.e.db, nid)
        if got is None:
            raise NotFound(f"no entity with id {nid}")
        return got

    def _node(self, name_or_id, scope: str | None) -> int:
        if isinstance(name_or_id, (int, np.integer)) and not isinstance(name_or_id, bool):
            return _check_id(name_or_id, "entity")
        ents = self.entity(name_or_id, scope=scope)
        if not ents:
            raise NotFound(f"no entity named {name_or_id!r}")
        return ents[0].id

    def neighbours(self, name_or_id, *, depth: int = 1, scope: str | None = None) -> list[tuple[G.Entity, int]]:
        depth = _check_int(depth, "depth", 1, 2)
        found = G.neighbours(self.e.db, self._node(name_or_id, scope), depth, scope)
        return [(G.entity(self.e.db, n), d) for n, d in sorted(found.items(), key=lambda x: (x[1], x[0]))]

    def relation_path(self, a, b, *, max_depth: int = 4, scope: str | None = None) -> list[G.Fact] | None:
        max_depth = _check_int(max_depth, "max_depth", 1, 8)
        return G.shortest_path(self.e.db, self._node(a, scope), self._node(b, scope), max_depth, scope)

    def facts(self, memory_id: int) -> list[G.Fact]:
        mid = _check_id(memory_id)
        R.row(self.e.db, mid)  # NotFound
        return G.facts_of_memory(self.e.db, mid)

    def entity_facts(self, name_or_id, *, limit: int = 100, scope: str | None = None) -> list[G.Fact]:
        limit = _check_int(limit, "limit", 1, 1_000_000)
        return G.facts_of_node(self.e.db, self._node(name_or_id, scope), limit, scope)

    def conflicting_facts(self, relations, *, scope: str | None = None,
                          limit: int = 100) -> list[tuple[int, int, str, str, str, str]]:
        self.e.check_open()
        _check_scope(scope)
        limit = _check_int(limit, "limit", 1, 1_000_000)
        rels = sorted({check_text(r, "relation") for r in relations}) if not isinstance(relations, str) else None
        if not rels:
            raise InvalidInput("relations must be a non-empty collection of relation names")
        with self.e.lock:
            self.e.sync()
            return G.conflicts(self.e.db, rels, scope, limit)

    def alias_candidates(self) -> list[dict[str, Any]]:
        return G.alias_candidates(self.e.db)

    def review_alias(self, candidate_id: int, *, accept: bool) -> None:
        cid = _check_id(candidate_id, "alias candidate")
        if not isinstance(accept, bool):
            raise InvalidInput("accept must be True or False")
        with self.e.transaction() as tx:
            G.review_alias(self.e.store, cid, accept)
            tx.graph_changed()
