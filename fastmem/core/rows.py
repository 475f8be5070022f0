"""Part of :class:`fastmem.Memory`: the rows of one memory (pending derivation, edits, export
and import, re-embedding and re-encoding, single reads) and what hosts and integrations need.
The verbs' logic; their documentation is on ``Memory``, which hands over to :class:`Rows` and
:class:`Hosts`."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np

from ..derived import vectors as V
from ..errors import InvalidInput
from ..storage import marks as MK
from ..storage import memories as R
from ..util.text import check_str, check_text, to_epoch
from ..write import commit as C
from ..write.checks import check_batch, check_speaker, encode_meta, encode_metas
from ..write.prepare import Prepared, prepare
from . import transfer as T
from .args import check_id as _check_id
from .args import check_int as _check_int
from .args import check_scope as _check_scope

__all__ = ["Rows", "Hosts"]


class Rows:
    """Rows of one memory: pending derivation, edits, export and import, re-embedding and
    re-encoding, single reads (the verbs are documented on :class:`fastmem.Memory`)."""

    def __init__(self, engine, front) -> None:
        self.e = engine
        self.front = front

    def pending_count(self, *, scope: str | None = None) -> int:
        self.e.check_open()
        _check_scope(scope)
        with self.e.lock:
            return R.pending_count(self.e.db, scope)

    def derive_pending(self, *, wait: bool = True, timeout: float | None = None) -> int | None:
        self.e.check_open()
        if not wait:
            self.e.background = True
            self.e.finisher.poke()
            return None
        self.e.finisher.wait(timeout)
        return self.e.derive_until(None)

    def wait_pending(self, timeout: float | None = None) -> bool:
        return self.e.finisher.wait(timeout)

    def with_meta(self, key: str, value, *, scope: str | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        self.e.check_open()
        _check_scope(scope)
        check_str(key, "key")
        if not (value is None or isinstance(value, (str, int, float, bool))):
            raise InvalidInput("value must be a str, number, bool or None")
        with self.e.lock:
            self.e.sync()
            return R.with_meta(self.e.db, key, value, scope)

    def export_jsonl(self, path: str | os.PathLike | None = None, *, scope: str | None = None,
                     vectors: bool = False) -> int:
        self.e.check_open()
        _check_scope(scope)
        with self.e.lock:
            self.e.sync()
            return T.write_lines(T.export_lines(self.front, scope=scope, vectors=vectors), path)

    def import_jsonl(self, path: str | os.PathLike, *, progress: bool | None = None) -> int:
        self.e.check_open()
        try:
            with open(path, encoding="utf-8") as fh:
                header, mems, aliases, cats = T.parse_export(fh)
        except OSError as exc:
            raise InvalidInput(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from exc
        return T.restore(self.front, header, mems, aliases, cats, progress=progress)

    def forget(self, memory_id: int) -> None:
        self.e.check_open()
        mid = _check_id(memory_id)
        with self.e.transaction() as tx:
            tx.structure(C.forget(tx.db, mid, self.e.structure))
            tx.unvectored([mid])
            tx.forgotten(mid)

    def update(self, memory_id: int, *, text: str | None = None, meta: Mapping[str, Any] | None = None,
               at: datetime | str | None | object = C.KEEP, speaker: str | None | object = C.KEEP,
               wait: bool = True) -> None:
        self.e.check_open()
        mid = _check_id(memory_id)
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

    def reembed(self, *, progress: bool | None = None) -> None:
        self.e.check_open()
        with self.e.lock:
            V.reembed_rows(self.e.store, self.e.embedder, progress)
            self.e.rebuild_index(progress=progress)

    def rebuild_structure(self, *, reparse: bool = False, progress: bool | None = None) -> int:
        self.e.check_open()
        with self.e.lock:
            return self.e.structure.rebuild(self.e.store, self.e.parser(), reparse=reparse, progress=progress)

    # -- reading rows ----------------------------------------------------------------------
    def get(self, memory_id: int) -> dict[str, Any]:
        self.e.check_open()
        return R.row(self.e.db, _check_id(memory_id))

    def count(self, *, scope: str | None = None, source: str | None = None) -> int:
        _check_scope(scope)
        if source is not None:
            check_str(source, "source")
        return R.count(self.e.db, scope, source)

    def newest(self, *, scope: str | None = None, offset: int = 0, limit: int = 50) -> list[int]:
        self.e.check_open()
        _check_scope(scope)
        return R.newest(self.e.db, scope, _check_int(offset, "offset", 0, 2**62), _check_int(limit, "limit", 1, 100_000))

    def events(self, memory_id: int) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        self.e.check_open()
        mid = _check_id(memory_id)
        with self.e.lock:
            self.e.sync()
            R.row(self.e.db, mid)  # NotFound
            return [(v, tuple(s), tuple(o)) for v, s, o in self.e.structure.events(mid)]

    def idf(self, word: str) -> float:
        return self.e.structure.idf(word)


class Hosts:
    """What hosts and integrations need (documented on :class:`fastmem.Memory`): the two
    halves of a write, marks of batches, reads by text, metadata key and use, stats."""

    def __init__(self, engine, front) -> None:
        self.e = engine
        self.front = front

    # -- for hosts and integrations --------------------------------------------------------
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
            _check_scope(scope)
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
            ids = self.e.commit(prep, scope=scope, source=source, meta_json=metas, at=when,
                               speaker=speaker)
            if usage is not None:
                self.e.ledger.carry_over(tx.db, ids, usage)
                tx.usage_changed()
            if mark is not None:
                MK.mark(tx.db, *mark, rows=len(ids))
        return ids

    def batches_done(self, job: str) -> set[int]:
        self.e.check_open()
        check_str(job, "job")
        with self.e.lock:
            self.e.sync()
            return MK.batches_done(self.e.db, job)

    def write_vectors(self, ids: Sequence[int], vecs: np.ndarray) -> None:
        self.e.check_open()
        ids = [_check_id(i) for i in ids]
        vecs = np.asarray(vecs, np.float32)
        if vecs.shape != (len(ids), self.e.embedder.dim):
            raise InvalidInput(f"vecs must be {len(ids)} x {self.e.embedder.dim}, got {vecs.shape}")
        with self.e.transaction() as tx:
            V.write_vectors(tx.db, ids, vecs, self.e.embedder.model_id)
            tx.revectored(ids, vecs)

    def texts(self, *, scope: str | None = None, after: int = 0, limit: int | None = None) -> list[tuple[int, str]]:
        self.e.check_open()
        _check_scope(scope)
        with self.e.lock:
            self.e.sync()
            return R.texts(self.e.db, scope=scope, after=int(after), limit=limit)

    def ids_with_text(self, text: str, *, scope: str | None = None) -> list[int]:
        self.e.check_open()
        check_str(text, "text")
        _check_scope(scope)
        with self.e.lock:
            self.e.sync()
            return R.ids_with_text(self.e.db, text, scope)

    def most_used(self, *, scope: str | None = None, limit: int = 100) -> list[int]:
        self.e.check_open()
        _check_scope(scope)
        limit = _check_int(limit, "limit", 1, 1_000_000)
        with self.e.lock:
            self.e.sync()
            return self.e.ledger.most_used(scope, limit)

    def with_meta_key(self, key: str, *, scopes: Collection[str] | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        self.e.check_open()
        check_str(key, "key")
        with self.e.lock:
            self.e.sync()
            return R.with_meta_key(self.e.db, key, None if scopes is None else sorted(scopes))

    def scopes_in_use(self) -> list[str]:
        self.e.check_open()
        with self.e.lock:
            self.e.sync()
            return R.scopes(self.e.db)

    def stats(self) -> dict[str, Any]:
        self.e.check_open()
        with self.e.lock:
            self.e.sync()
            out = self.e.store.counts()
        out.update(pending=self.front.pending_count(), model=self.e.embedder.model_id, dimensions=self.e.embedder.dim,
                   hrr_dim=self.e.hrr_dim)
        return out

    @contextmanager
    def locked(self):
        self.e.check_open()
        with self.e.lock:
            self.e.sync()
            yield self
