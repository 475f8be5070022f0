"""Part of :class:`fastmem.Memory`: the background passes (chunks, categories), usage and
feedback, and the knowledge graph's reads. Mixed into ``Memory``; every method uses its lock,
file and indexes."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import categories as K
from . import chunks as CH
from . import graph as G
from . import writes as W
from .errors import InvalidInput, NotFound
from .categories import Category, Namer
from .chunks import ConsolidationReport
from .results import Recall, Record
from .summarize import Extractive, Summarizer
from .text import check_text
from .usage import Session
from .args import check_id as _check_id
from .args import check_int as _check_int
from .args import check_scope as _check_scope


class PassesMixin:
    """The passes, usage and graph verbs of :class:`fastmem.Memory` (see the module docstring)."""

    # -- background passes: chunks and categories ------------------------------------------
    def consolidate(self, *, scope: str | None = None, summarizer: Summarizer | None = None,
                    progress: bool | None = None, budget: int = 600) -> ConsolidationReport:
        """Compress memories that keep co-occurring into chunks (see :mod:`fastmem.chunks`).

        Pending memories (``remember_many(wait=False)``) are derived first. Idempotent and
        safe at any time: members are never changed, an unchanged cluster
        leaves its chunk alone, a changed one updates its chunk. Each chunk is written in its
        own transaction. ``scope=None`` runs every scope separately (a chunk never mixes
        scopes); ``summarizer`` defaults to :class:`fastmem.summarize.Extractive`; ``budget``
        is the summary's length in characters.
        """
        self._check_open()
        _check_scope(scope)
        summ = summarizer if summarizer is not None else Extractive()
        if not callable(getattr(summ, "summarize", None)):
            raise InvalidInput("summarizer must have a summarize(texts, *, names, budget) method")
        self.derive_pending()  # clusters are found from every memory's facts
        return CH.run(self.db, self.store, self._synced, self.transaction, embedder=self.embedder,
                      extractor=self.extractor, structures=self.structure, scope=scope,
                      summarizer=summ, progress=progress, budget=budget)

    def expand(self, chunk_id: int) -> list[Record]:
        """The members of a chunk (written order). Raises NotFound when it is not a chunk."""
        self._check_open()
        cid = _check_id(chunk_id)
        with self._lock:
            self._sync()
            got = CH.members(self.db, cid)
            if got is None:
                raise NotFound(f"no chunk with id {cid}")
            return [self._record(m) for m in got]

    def _record(self, mid: int) -> Record:
        return Record(**W.row(self.db, mid))

    def chunks(self, *, scope: str | None = None) -> list[int]:
        """Ids of the chunk memories (of one scope when given)."""
        _check_scope(scope)
        sql = "SELECT memory_id FROM chunks" + (" WHERE scope=?" if scope is not None else "") + " ORDER BY memory_id"
        return [r[0] for r in self.db.execute(sql, (scope,) if scope is not None else ())]

    def dissolve(self, chunk_id: int) -> None:
        """Undo a chunk completely: its memory, copied facts, code, vector and bookkeeping
        go; the members were never changed. Raises NotFound when it is not a chunk."""
        self._check_open()
        cid = _check_id(chunk_id)
        with self._lock:
            self._sync()
            if CH.members(self.db, cid) is None:
                raise NotFound(f"no chunk with id {cid}")
        self.forget(cid)

    def propose_categories(self, *, namer: Namer | None = None, scope: str | None = None,
                           min_members: int = 3) -> list[Category]:
        """Propose categories of entities that play the same roles (see
        :mod:`fastmem.categories`); proposals change nothing else. Returns the open ones."""
        self._check_open()
        _check_scope(scope)
        min_members = _check_int(min_members, "min_members", 2, 1_000_000)
        self.derive_pending()  # roles are read from every memory's facts
        with self._lock:
            self._sync()
            return K.propose(self.store, namer=namer, scope=scope, min_members=min_members)

    def categories(self, status: str | None = None, *, scope: str | None | object = K.ANY) -> list[Category]:
        """Categories, of one status ("proposed", "approved", "rejected") when given, and of one
        scope when given (what ``propose_categories(scope=...)`` made for it; ``None``: the
        store-wide proposals). Default: all of them."""
        if scope is not K.ANY:
            _check_scope(scope)
        with self._lock:
            return K.listing(self.db, status, scope=scope)

    def approve_category(self, category_id: int) -> Category:
        """Make a proposal a graph node its members link to (recall's graph channel uses it)."""
        cid = _check_id(category_id, "category")
        with self.transaction() as tx:
            tx.graph_changed()
            return K.approve(self.store, cid)

    def reject_category(self, category_id: int) -> Category:
        """Reject a proposal (later passes leave it out)."""
        cid = _check_id(category_id, "category")
        with self.transaction() as tx:
            tx.graph_changed()
            return K.reject(self.store, cid)

    def revert_category(self, category_id: int) -> Category:
        """Undo an approval or a rejection: back to proposed, no trace left in the graph."""
        cid = _check_id(category_id, "category")
        with self.transaction() as tx:
            tx.graph_changed()
            return K.revert(self.store, cid)

    # -- usage -----------------------------------------------------------------------------
    def feedback(self, memory_id: int, *, engaged: bool = True) -> float:
        """Explicit engagement: ``engaged=True`` ("this helped") or False ("not useful").

        Returns the memory's new use weight (see :mod:`fastmem.usage`).
        """
        self._check_open()
        mid = _check_id(memory_id)
        if not isinstance(engaged, bool):
            raise InvalidInput("engaged must be True or False")
        with self._lock:
            return self.ledger.feedback(mid, engaged)

    def record(self, result: Recall, *, session: str | None = None) -> None:
        """Count a recall made with ``record=False`` as surfaced now (for hosts that compute
        a recall ahead of time and show it later, or not at all)."""
        self._check_open()
        if not isinstance(result, Recall):
            raise InvalidInput("result must be a Recall returned by recall()")
        with self._lock:
            self.ledger.record(result.hits, result.analogy, session)

    def usage(self, memory_id: int) -> dict[str, Any]:
        """Counters of one memory: surfaced, engaged, ignored, weight, last_surfaced."""
        return self.ledger.counters(_check_id(memory_id))

    def observe(self, text: str, *, session: str) -> dict[str, list[int]]:
        """Tell the store the next turn of a session (user or assistant text).

        Memories surfaced in that session's earlier turns are judged by the rule in
        :mod:`fastmem.usage`: reused -> engaged, unused for ``usage.WINDOW`` turns -> ignored.
        Returns ``{"engaged": [...], "ignored": [...]}`` ids resolved by this turn.
        """
        self._check_open()
        check_text(text, "text")
        if not isinstance(session, str) or not session:
            raise InvalidInput("session must be a non-empty str")
        with self._lock:
            self._sync()
            return self.ledger.observe(text, session, self.embedder.encode)

    def session(self, session_id: str) -> Session:
        """A :class:`Session` bound to this memory."""
        return Session(self, session_id)

    # -- the knowledge graph ---------------------------------------------------------------
    # With ``scope``, every graph call sees only the facts of that scope's memories.
    def entity(self, name: str, *, scope: str | None = None) -> list[G.Entity]:
        """Graph nodes that ``name`` (any alias, any spelling that folds alike) resolves to."""
        check_text(name, "name")
        _check_scope(scope)
        return G.lookup(self.db, name, scope)

    def _node(self, name_or_id, scope: str | None) -> int:
        if isinstance(name_or_id, (int, np.integer)) and not isinstance(name_or_id, bool):
            return _check_id(name_or_id, "entity")
        ents = self.entity(name_or_id, scope=scope)
        if not ents:
            raise NotFound(f"no entity named {name_or_id!r}")
        return ents[0].id

    def neighbours(self, name_or_id, *, depth: int = 1, scope: str | None = None) -> list[tuple[G.Entity, int]]:
        """Entities within ``depth`` (1 or 2) hops, with their distance."""
        depth = _check_int(depth, "depth", 1, 2)
        found = G.neighbours(self.db, self._node(name_or_id, scope), depth, scope)
        return [(G.entity(self.db, n), d) for n, d in sorted(found.items(), key=lambda x: (x[1], x[0]))]

    def relation_path(self, a, b, *, max_depth: int = 4, scope: str | None = None) -> list[G.Fact] | None:
        """Shortest chain of facts linking two entities (None when unconnected)."""
        max_depth = _check_int(max_depth, "max_depth", 1, 8)
        return G.shortest_path(self.db, self._node(a, scope), self._node(b, scope), max_depth, scope)

    def facts(self, memory_id: int) -> list[G.Fact]:
        """The facts (edges) a memory asserted, in text order."""
        mid = _check_id(memory_id)
        W.row(self.db, mid)  # NotFound
        return G.facts_of_memory(self.db, mid)

    def entity_facts(self, name_or_id, *, limit: int = 100, scope: str | None = None) -> list[G.Fact]:
        """Facts in which an entity is subject or object, newest first."""
        limit = _check_int(limit, "limit", 1, 1_000_000)
        return G.facts_of_node(self.db, self._node(name_or_id, scope), limit, scope)

    def conflicting_facts(self, relations, *, scope: str | None = None,
                          limit: int = 100) -> list[tuple[int, int, str, str, str, str]]:
        """Facts that disagree: the same subject with one of ``relations`` (canonical names,
        e.g. ``{"live_in", "work_for"}``: relations a subject has one object of at a time) to
        different objects. Newest pairs first: ``(memory a, memory b, subject, relation,
        object a, object b)``; both memories of ``scope`` when given."""
        self._check_open()
        _check_scope(scope)
        limit = _check_int(limit, "limit", 1, 1_000_000)
        rels = sorted({check_text(r, "relation") for r in relations}) if not isinstance(relations, str) else None
        if not rels:
            raise InvalidInput("relations must be a non-empty collection of relation names")
        with self._lock:
            self._sync()
            return G.conflicts(self.db, rels, scope, limit)

    def alias_candidates(self) -> list[dict[str, Any]]:
        """Borderline name pairs awaiting review: ``id, name, other, score``."""
        return G.alias_candidates(self.db)

    def review_alias(self, candidate_id: int, *, accept: bool) -> None:
        """Accept (merge the two nodes and their edges) or reject a candidate alias."""
        cid = _check_id(candidate_id, "alias candidate")
        if not isinstance(accept, bool):
            raise InvalidInput("accept must be True or False")
        with self.transaction() as tx:
            G.review_alias(self.store, cid, accept)
            tx.graph_changed()
