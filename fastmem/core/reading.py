"""Part of :class:`fastmem.Memory`: every verb that reads. The verbs' logic; their documentation
is on ``Memory``, which hands over to :class:`Reading`.

Each verb checks its arguments, then goes through the engine's read door
(:meth:`fastmem.core.engine.Engine.reading`: the store is open, the lock is held, other
processes' commits are caught up with) and asks the module that owns the rows. A recall that
records what it surfaced writes that record through the write door.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from ..derived import graph as G
from ..derived import usage as U
from ..errors import InvalidInput, NotFound
from ..models.embedder import encode_queries, encode_query
from ..passes import categories as CAT
from ..passes import chunks as CH
from ..analogy.plots import plot_vectors
from ..reader.extract import parse_turn
from ..recall.arrange import ORDERS
from ..recall.channels import CHANNELS
from ..results import Analogy, Category, Entity, Fact, Recall, Record
from ..storage import marks as MK
from ..storage import memories as R
from ..util.text import check_query, check_str, check_text
from ..write import guard
from . import transfer as T
from .args import check_id, check_int, check_scope

__all__ = ["Reading", "MAX_K"]

#: Most hits one recall returns.
MAX_K = 10_000


def _event(e) -> tuple:
    """An event as the verbs return it: ``(verb, subjects, objects)``, and its higher-order
    links ``((kind, event index), ...)`` when it has any."""
    base = (e[0], tuple(e[1]), tuple(e[2]))
    return base + (tuple((k, j) for k, j in e[3]),) if len(e) > 3 and e[3] else base


class Reading:
    """The read verbs of :class:`fastmem.Memory` (documented there, with their defaults: the
    front passes every argument). Holds the engine only."""

    def __init__(self, engine) -> None:
        self.e = engine

    # -- recall ----------------------------------------------------------------------------
    def recall_many(self, queries: Sequence[str], *, k, scope, session, analogy, z_min, record, channels, exclude,
                    floor, standing, order) -> list[Recall]:
        self.e.check_open()
        if isinstance(queries, str) or not isinstance(queries, Sequence):
            raise InvalidInput("queries must be a sequence of str (use recall() for one)")
        for q in queries:
            check_query(q)
        k = check_int(k, "k", 1, MAX_K)
        check_scope(scope)
        use = self._channels(channels)
        if not isinstance(analogy, bool) or not isinstance(record, bool) or not isinstance(floor, bool):
            raise InvalidInput("analogy, record and floor must be True or False")
        if z_min is not None and (isinstance(z_min, bool) or not isinstance(z_min, (int, float)) or not math.isfinite(z_min)):
            raise InvalidInput(f"z_min must be a finite number or None, got {z_min!r}")
        if session is not None and (check_str(session, "session") == ""):
            raise InvalidInput("session must be a non-empty str or None")
        if isinstance(exclude, (str, bytes)) or not isinstance(exclude, Collection):
            raise InvalidInput("exclude must be a collection of memory ids")
        skip = frozenset(check_id(i) for i in exclude)
        standing = check_int(standing, "standing", 0, MAX_K)
        if order not in ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(ORDERS)}; got {order!r}")
        gate = self.e.slot.settings.z_min if z_min is None else z_min
        # the turns' embeddings and the slot's parse first, without the lock (so that recalls of
        # several threads overlap there and are combined: fastmem.models.combine); the parse on a
        # thread beside the model was measured no faster (a short turn's spaCy parse holds the GIL)
        t0 = time.perf_counter()
        slot = analogy and self.e.extractor is not None and self.e.slot.can_fire()
        preload = getattr(self.e.extractor, "load_in_background", None)
        if slot and preload is not None and not getattr(self.e.extractor, "loaded", True):
            preload()  # a new process: the parser loads while the turn is embedded
        if not any(CHANNELS[c].needs_model for c in use) and not analogy and not standing:
            vecs = [None] * len(queries)  # keyword and graph alone never need the model
        elif len(queries) > 1:
            vecs = encode_queries(self.e.embedder, list(queries))
        else:
            vecs = [encode_query(self.e.embedder, queries[0])]
        embed_ms = (time.perf_counter() - t0) * 1e3 / max(len(queries), 1)
        # the slot's parse of the turns, before the lock: several turns in one batch, one turn
        # with the turns of other threads' recalls that arrive meanwhile
        t1 = time.perf_counter()
        parsed = None if not slot else (guard.turns(self.e.extractor, list(queries)) if len(queries) > 1
                                        else [self.e.turn_parse(queries[0])])
        if parsed is not None and self.e.structure.plots.n >= self.e.slot.settings.min_store:
            parsed = self._plot_vectors(parsed)  # the plots' clauses, embedded (a turn with a plot only)
        parse_ms = (time.perf_counter() - t1) * 1e3 / max(len(queries), 1)
        out = []
        surfacing = [c for c, spec in CHANNELS.items() if spec.surfaces]
        with self.e.reading():
            for qi, (query, vec) in enumerate(zip(queries, vecs)):
                got = None
                if parsed is not None:  # parsed above
                    got = (lambda qi=qi: (parsed[qi], parse_ms))
                res = self.e.pipeline.run(query, vec, extractor=self.e.extractor, k=int(k), scope=scope,
                                          session=session, use=use, analogy=analogy, z_min=gate, parsed=got,
                                          exclude=skip, floor=floor, standing=standing, order=order)
                res.timings_ms["embed"] = embed_ms
                if record and (res.hits or res.analogy is not None):
                    with self.e.transaction() as tx:
                        self.e.ledger.record(tx.db, res.hits, res.analogy, session, surfacing)
                out.append(res)
        return out

    def _plot_vectors(self, parsed: list) -> list:
        """The turns' parses with each plot's clauses embedded (one batch for all turns); a turn
        whose clauses cannot be embedded has no plot."""
        plots = [p[2] if isinstance(p, tuple) else None for p in parsed]
        try:
            vecs = plot_vectors(self.e.embedder, plots)
        except guard.FATAL:
            raise
        except Exception:
            vecs = None
        return [(p[0], p[1], None if vecs is None else vecs[i]) if isinstance(p, tuple) else p
                for i, p in enumerate(parsed)]

    @staticmethod
    def _channels(channels) -> frozenset[str]:
        ok = isinstance(channels, (list, tuple, set, frozenset)) and all(isinstance(c, str) for c in channels)
        use = frozenset(channels) if ok else frozenset()
        if not use or use - set(CHANNELS):
            raise InvalidInput(f"channels must be a non-empty subset of {', '.join(CHANNELS)}; got {channels!r}")
        return use

    def analogies(self, text: str, k: int = 5, *, scope: str | None = None, z_min: float = 0.0) -> list[Analogy]:
        self.e.check_open()
        check_query(text, "text")
        check_scope(scope)
        k = check_int(k, "k", 1, MAX_K)
        if isinstance(z_min, bool) or not isinstance(z_min, (int, float)) or not math.isfinite(z_min):
            raise InvalidInput(f"z_min must be a finite number, got {z_min!r}")
        with self.e.reading():
            return self.e.slot.explore(text, lambda t: encode_query(self.e.embedder, t), self.e.extractor,
                                       k=k, scope=scope, z_min=z_min, members=self.e.scopes.allowed(scope))

    def events_in(self, text: str) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        self.e.check_open()
        check_query(text, "text")
        if self.e.extractor is None:
            return []
        return [_event(e) for e in parse_turn(self.e.extractor, text)[0]]

    # -- rows ------------------------------------------------------------------------------
    def get(self, memory_id: int) -> dict[str, Any]:
        mid = check_id(memory_id)
        with self.e.reading() as db:
            return R.row(db, mid)

    def count(self, *, scope: str | None = None, source: str | None = None) -> int:
        check_scope(scope)
        if source is not None:
            check_str(source, "source")
        with self.e.reading() as db:
            return R.count(db, scope, source)

    def newest(self, *, scope: str | None = None, offset: int = 0, limit: int = 50) -> list[int]:
        check_scope(scope)
        offset, limit = check_int(offset, "offset", 0, 2**62), check_int(limit, "limit", 1, 100_000)
        with self.e.reading() as db:
            return R.newest(db, scope, offset, limit)

    def events(self, memory_id: int) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        mid = check_id(memory_id)
        with self.e.reading() as db:
            R.require(db, mid)
            return [_event(e) for e in self.e.structure.events(mid)]

    def idf(self, word: str) -> float:
        check_str(word, "word")
        with self.e.reading():
            return self.e.structure.idf(word)

    def pending_count(self, *, scope: str | None = None) -> int:
        check_scope(scope)
        with self.e.reading() as db:
            return R.pending_count(db, scope)

    def with_meta(self, key: str, value, *, scope: str | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        check_scope(scope)
        check_str(key, "key")
        if not (value is None or isinstance(value, (str, int, float, bool))):
            raise InvalidInput("value must be a str, number, bool or None")
        with self.e.reading() as db:
            return R.with_meta(db, key, value, scope)

    def texts(self, *, scope: str | None = None, after: int = 0, limit: int | None = None) -> list[tuple[int, str]]:
        check_scope(scope)
        after = check_int(after, "after", 0, 2**63 - 1)
        limit = None if limit is None else check_int(limit, "limit", 0, 2**62)
        with self.e.reading() as db:
            return R.texts(db, scope=scope, after=after, limit=limit)

    def ids_with_text(self, text: str, *, scope: str | None = None) -> list[int]:
        check_str(text, "text")
        check_scope(scope)
        with self.e.reading() as db:
            return R.ids_with_text(db, text, scope)

    def most_used(self, *, scope: str | None = None, limit: int = 100) -> list[int]:
        check_scope(scope)
        limit = check_int(limit, "limit", 1, 1_000_000)
        with self.e.reading():
            return self.e.ledger.most_used(scope, limit)

    def with_meta_key(self, key: str, *, scopes: Collection[str] | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        check_str(key, "key")
        if scopes is not None:
            if isinstance(scopes, str) or not isinstance(scopes, Collection):
                raise InvalidInput("scopes must be a collection of str or None")
            for s in scopes:
                check_str(s, "scope")
        with self.e.reading() as db:
            return R.with_meta_key(db, key, None if scopes is None else sorted(scopes))

    def scopes_in_use(self) -> list[str]:
        with self.e.reading() as db:
            return R.scopes(db)

    def stats(self) -> dict[str, Any]:
        with self.e.reading() as db:
            out = self.e.store.counts()
            out.update(pending=R.pending_count(db, None), model=self.e.embedder.model_id,
                       dimensions=self.e.embedder.dim, hrr_dim=self.e.hrr_dim)
        return out

    def batches_done(self, job: str) -> set[int]:
        check_str(job, "job")
        with self.e.reading() as db:
            return MK.batches_done(db, job)

    def export_jsonl(self, path: str | os.PathLike | None = None, *, scope: str | None = None,
                     vectors: bool = False) -> int:
        check_scope(scope)
        with self.e.reading():
            to_file = path not in (None, "-")
            graph = f"{os.fspath(path)}.hnsw" if to_file and vectors and scope is None else None
            return T.write_lines(T.export_lines(self.e, scope=scope, vectors=vectors, graph_path=graph), path)

    # -- chunks and categories -------------------------------------------------------------
    def expand(self, chunk_id: int) -> list[Record]:
        cid = check_id(chunk_id)
        with self.e.reading() as db:
            got = CH.members(db, cid)
            if got is None:
                raise NotFound(f"no chunk with id {cid}")
            return [Record(**R.row(db, m)) for m in got]

    def chunks(self, *, scope: str | None = None) -> list[int]:
        check_scope(scope)
        with self.e.reading() as db:
            return CH.chunk_ids(db, scope)

    def chunks_of(self, memory_id: int) -> list[int]:
        mid = check_id(memory_id)
        with self.e.reading() as db:
            R.require(db, mid)
            return CH.containing(db, mid)

    def categories(self, status: str | None = None, *, scope: str | None | object = CAT.ANY) -> list[Category]:
        if scope is not CAT.ANY:
            check_scope(scope)
        with self.e.reading() as db:
            return CAT.listing(db, status, scope=scope)

    # -- use -------------------------------------------------------------------------------
    def usage(self, memory_id: int) -> dict[str, Any]:
        mid = check_id(memory_id)
        with self.e.reading():
            return self.e.ledger.counters(mid)

    def use_history(self, memory_id: int, limit: int = 50) -> list[dict[str, Any]]:
        mid = check_id(memory_id)
        limit = check_int(limit, "limit", 1, 1_000_000)
        with self.e.reading() as db:
            R.require(db, mid)
            return U.history(db, mid, limit)

    def use_extremes(self, *, scope: str | None = None, limit: int = 20) -> tuple[list[tuple], list[tuple]]:
        check_scope(scope)
        limit = check_int(limit, "limit", 1, 1_000_000)
        with self.e.reading() as db:
            return U.extremes(db, scope, limit)

    def use_timeline(self, *, scope: str | None = None, bins: int = 60) -> tuple[str, list[tuple]]:
        check_scope(scope)
        bins = check_int(bins, "bins", 1, 10_000)
        with self.e.reading() as db:
            return U.timeline(db, scope, bins)

    # -- the knowledge graph (with ``scope``, only the facts of that scope's memories) -----
    def entity(self, name: str, *, scope: str | None = None) -> list[Entity]:
        check_text(name, "name")
        check_scope(scope)
        with self.e.reading() as db:
            return G.lookup(db, name, scope)

    def entity_by_id(self, entity_id: int) -> Entity:
        nid = check_id(entity_id, "entity")
        with self.e.reading() as db:
            got = G.entity(db, nid)
        if got is None:
            raise NotFound(f"no entity with id {nid}")
        return got

    @staticmethod
    def _checked_node(name_or_id):
        """An entity id (an int) or a name (checked as text), before anything is looked up."""
        if isinstance(name_or_id, (int, np.integer)) and not isinstance(name_or_id, bool):
            return name_or_id
        return check_text(name_or_id, "name")

    def _node(self, db, name_or_id, scope: str | None) -> int:
        if isinstance(name_or_id, (int, np.integer)) and not isinstance(name_or_id, bool):
            return check_id(name_or_id, "entity")
        ents = G.lookup(db, name_or_id, scope)
        if not ents:
            raise NotFound(f"no entity named {name_or_id!r}")
        return ents[0].id

    def neighbours(self, name_or_id, *, depth: int = 1, scope: str | None = None) -> list[tuple[Entity, int]]:
        depth = check_int(depth, "depth", 1, 2)
        check_scope(scope)
        self._checked_node(name_or_id)
        with self.e.reading() as db:
            found = G.neighbours(db, self._node(db, name_or_id, scope), depth, scope)
            return [(G.entity(db, n), d) for n, d in sorted(found.items(), key=lambda x: (x[1], x[0]))]

    def relation_path(self, a, b, *, max_depth: int = 4, scope: str | None = None) -> list[Fact] | None:
        max_depth = check_int(max_depth, "max_depth", 1, 8)
        check_scope(scope)
        self._checked_node(a), self._checked_node(b)
        with self.e.reading() as db:
            return G.shortest_path(db, self._node(db, a, scope), self._node(db, b, scope), max_depth, scope)

    def facts(self, memory_id: int) -> list[Fact]:
        mid = check_id(memory_id)
        with self.e.reading() as db:
            R.require(db, mid)
            return G.facts_of_memory(db, mid)

    def entity_facts(self, name_or_id, *, limit: int = 100, scope: str | None = None) -> list[Fact]:
        limit = check_int(limit, "limit", 1, 1_000_000)
        check_scope(scope)
        self._checked_node(name_or_id)
        with self.e.reading() as db:
            return G.facts_of_node(db, self._node(db, name_or_id, scope), limit, scope)

    def conflicting_facts(self, relations, *, scope: str | None = None,
                          limit: int = 100) -> list[tuple[int, int, str, str, str, str]]:
        check_scope(scope)
        limit = check_int(limit, "limit", 1, 1_000_000)
        rels = sorted({check_text(r, "relation") for r in relations}) if not isinstance(relations, str) else None
        if not rels:
            raise InvalidInput("relations must be a non-empty collection of relation names")
        with self.e.reading() as db:
            return G.conflicts(db, rels, scope, limit)

    def alias_candidates(self) -> list[dict[str, Any]]:
        with self.e.reading() as db:
            return G.alias_candidates(db)
