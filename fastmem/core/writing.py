"""Part of :class:`fastmem.Memory`: every verb that writes. The verbs' logic; their
documentation is on ``Memory``, which hands over to :class:`Writing`.

Each verb checks its arguments, runs the models with no lock held (parse and embed), then
writes through the engine's write door (:meth:`fastmem.core.engine.Engine.transaction`): the
rows through the modules that own their tables, and what the process must follow (vectors,
codes, scopes, weights, caches) recorded on the transaction, applied after COMMIT.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ..derived import graph as G
from ..derived import vectors as V
from ..errors import InvalidInput, NotFound
from ..passes import categories as CAT
from ..passes import chunks as CH
from ..passes.categories import Namer
from ..passes.summarize import Extractive, Summarizer
from ..recall.channels import CHANNELS
from ..results import Category, ConsolidationReport, Recall
from ..storage import marks as MK
from ..util import gcpause
from ..util.text import check_str, check_text, to_epoch
from ..write import commit as C
from ..write.checks import check_batch, check_kinds, check_speaker, check_speakers, encode_meta, encode_metas, kinds_for
from ..write.prepare import Prepared, prepare
from . import transfer as T
from .args import check_id, check_int, check_scope

__all__ = ["Writing"]


class Writing:
    """The write verbs of :class:`fastmem.Memory` (documented there, with their defaults: the
    front passes every argument). Holds the engine only."""

    def __init__(self, engine) -> None:
        self.e = engine

    # -- memories --------------------------------------------------------------------------
    def remember_many(self, texts: Sequence[str], *, scope, source, meta, triples, at, speaker, progress,
                      wait, kind) -> list[int]:
        self.e.check_open()
        if not isinstance(wait, bool):
            raise InvalidInput("wait must be True or False")
        given, meta_json, when = check_batch(texts, scope=scope, meta=meta, triples=triples,
                                             extractor=self.e.extractor, source=source, at=at)
        speakers = check_speakers(speaker, len(texts))
        kinds = kinds_for(check_kinds(kind, len(texts)), speakers)
        if not texts:
            return []
        if not wait:
            with self.e.transaction() as tx:
                ids = C.commit_rows(tx.db, list(texts), given, scope=scope, source=source, meta_json=meta_json,
                                    at=when, speaker=speakers, kinds=kinds)
                tx.added(ids, None, scope)
            if self.e.background:
                self.e.finisher.poke()
            return ids
        prep = prepare(texts, given, self.e.embedder, self.e.extractor, progress, kinds)  # no lock held meanwhile
        return self.e.commit(prep, scope=scope, source=source, meta_json=meta_json, at=when, speaker=speakers)

    def forget(self, memory_id: int) -> None:
        mid = check_id(memory_id)
        with self.e.transaction() as tx:
            tx.structure(C.forget(tx.db, mid, self.e.structure))
            tx.unvectored([mid])
            tx.forgotten(mid)

    def update(self, memory_id: int, *, text: str | None, meta: Mapping[str, Any] | None,
               at: datetime | str | None | object, speaker: str | None | object, wait: bool) -> None:
        self.e.check_open()
        mid = check_id(memory_id)
        if not isinstance(wait, bool):
            raise InvalidInput("wait must be True or False")
        meta_json = None if meta is None else encode_meta(meta)
        when = at if at is C.KEEP else to_epoch(at)
        who = speaker if speaker is C.KEEP else check_speaker(speaker)
        prep = None
        if text is not None:
            check_text(text, "text")
            if wait:
                prep = prepare([text], [None], self.e.embedder, self.e.extractor, False)
        with self.e.transaction() as tx:
            tx.structure(C.update(tx.db, mid, text=text, prep=prep, meta_json=meta_json, at=when,
                                  model_id=self.e.embedder.model_id, structure=self.e.structure, speaker=who))
            if prep is not None:
                tx.revectored([mid], prep.vecs)
            elif text is not None:
                tx.unvectored([mid])
        if text is not None and not wait and self.e.background:
            self.e.finisher.poke()

    def import_jsonl(self, path: str | os.PathLike, *, progress: bool | None = None) -> int:
        self.e.check_open()
        with gcpause.paused():  # a bulk load frees what it allocates by reference count
            try:
                with open(path, encoding="utf-8") as fh:
                    header, mems, aliases, cats = T.parse_export(fh)
            except OSError as exc:
                raise InvalidInput(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from exc
            return T.restore(self.e, header, mems, aliases, cats, progress=progress,
                             graph=T.graph_beside(header, path))

    # -- for hosts that run the models elsewhere --------------------------------------------
    def prepare(self, texts: Sequence[str], *, triples=None, progress: bool | None = None) -> Prepared:
        self.e.check_open()
        given, _, _ = check_batch(texts, scope="", meta=None, triples=triples, extractor=self.e.extractor)
        return prepare(texts, given, self.e.embedder, self.e.extractor, progress)

    def commit_prepared(self, prep: Prepared, *, scope: str | Sequence[str] = "",
                        source: str | None | Sequence[str | None] = None, meta=None, at=None, speaker=None,
                        mark: tuple[str, int] | None = None,
                        usage: Sequence[tuple[int, int]] | None = None) -> list[int] | None:
        self.e.check_open()
        if not isinstance(prep, Prepared):
            raise InvalidInput("prep must be a Prepared (from prepare() or distributed.derive_batch)")
        n = len(prep.texts)
        for name, v in (("scope", scope), ("source", source), ("speaker", speaker)):
            if not (v is None or isinstance(v, str)) and len(v) != n:
                raise InvalidInput(f"{name} must be one value or one per memory ({n})")
        if isinstance(scope, str):
            check_scope(scope)
        metas = encode_metas(meta, n)
        when = [to_epoch(x) if not isinstance(x, (int, float)) or isinstance(x, bool) else float(x)
                for x in (at if isinstance(at, (list, tuple)) else [at] * n)]
        if len(when) != n:
            raise InvalidInput(f"at must be one value or one per memory ({n})")
        if usage is not None and (len(usage) != n or not all(
                len(u) == 2 and all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in u)
                for u in usage)):
            raise InvalidInput(f"usage must hold one (engaged, ignored) pair of counts >= 0 per memory ({n})")
        if mark is not None:
            mark = MK.check_mark(mark)
        with self.e.transaction() as tx:
            if mark is not None and MK.marked(tx.db, *mark):
                return None
            ids = self.e.commit(prep, scope=scope, source=source, meta_json=metas, at=when, speaker=speaker)
            if usage is not None:
                self.e.ledger.carry_over(tx.db, ids, usage)
                tx.usage_changed()
            if mark is not None:
                MK.mark(tx.db, *mark, rows=len(ids))
        return ids

    def write_vectors(self, ids: Sequence[int], vecs: np.ndarray) -> None:
        self.e.check_open()
        ids = [check_id(i) for i in ids]
        vecs = np.asarray(vecs, np.float32)
        if vecs.shape != (len(ids), self.e.embedder.dim):
            raise InvalidInput(f"vecs must be {len(ids)} x {self.e.embedder.dim}, got {vecs.shape}")
        with self.e.transaction() as tx:
            V.write_vectors(tx.db, ids, vecs, self.e.embedder.model_id)
            tx.revectored(ids, vecs)

    # -- chunks and categories -------------------------------------------------------------
    def consolidate(self, *, scope: str | None = None, summarizer: Summarizer | None = None,
                    progress: bool | None = None, budget: int = 600) -> ConsolidationReport:
        self.e.check_open()
        check_scope(scope)
        summ = summarizer if summarizer is not None else Extractive()
        if not callable(getattr(summ, "summarize", None)):
            raise InvalidInput("summarizer must have a summarize(texts, *, names, budget) method")
        self.e.derive_pending()  # clusters are found from every memory's facts
        return CH.run(self.e.db, self.e.store, self.e.reading, self.e.transaction, embedder=self.e.embedder,
                      extractor=self.e.extractor, structure=self.e.structure, scope=scope,
                      summarizer=summ, progress=progress, budget=budget)

    def dissolve(self, chunk_id: int) -> None:
        cid = check_id(chunk_id)
        with self.e.transaction() as tx:
            if CH.members(tx.db, cid) is None:
                raise NotFound(f"no chunk with id {cid}")
            self.forget(cid)

    def propose_categories(self, *, namer: Namer | None = None, scope: str | None = None,
                           min_members: int = 3) -> list[Category]:
        self.e.check_open()
        check_scope(scope)
        min_members = check_int(min_members, "min_members", 2, 1_000_000)
        self.e.derive_pending()  # roles are read from every memory's facts
        with self.e.transaction() as tx:
            return CAT.propose(tx.db, namer=namer, scope=scope, min_members=min_members)

    def review_category(self, category_id: int, decision: str) -> Category:
        cid = check_id(category_id, "category")
        with self.e.transaction() as tx:
            tx.graph_changed()
            return {"approve": CAT.approve, "reject": CAT.reject, "revert": CAT.revert}[decision](tx.db, cid)

    def review_alias(self, candidate_id: int, *, accept: bool) -> None:
        cid = check_id(candidate_id, "alias candidate")
        if not isinstance(accept, bool):
            raise InvalidInput("accept must be True or False")
        with self.e.transaction() as tx:
            G.review_alias(tx.db, cid, accept)
            tx.graph_changed()

    # -- use -------------------------------------------------------------------------------
    def feedback(self, memory_id: int, *, engaged: bool = True) -> float:
        mid = check_id(memory_id)
        if not isinstance(engaged, bool):
            raise InvalidInput("engaged must be True or False")
        with self.e.transaction() as tx:
            got = self.e.ledger.apply_outcome(tx.db, mid, engaged)
            tx.weighed({mid: got})
        return got[0]

    def record(self, result: Recall, *, session: str | None = None) -> None:
        if not isinstance(result, Recall):
            raise InvalidInput("result must be a Recall returned by recall()")
        if session is not None:
            check_str(session, "session")
        with self.e.transaction() as tx:
            self.e.ledger.record(tx.db, result.hits, result.analogy, session,
                                 [c for c, spec in CHANNELS.items() if spec.surfaces])

    def observe(self, text: str, *, session: str) -> dict[str, list[int]]:
        self.e.check_open()
        check_text(text, "text")
        if not isinstance(session, str) or not session:
            raise InvalidInput("session must be a non-empty str")
        with self.e.reading():
            return self.e.ledger.observe(self.e.transaction, text, session, self.e.embedder.encode)
