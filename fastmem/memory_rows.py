"""Part of :class:`fastmem.Memory`: pending derivation, edits of one memory, export and import,
re-embedding and re-encoding, and reads of single rows. Mixed into ``Memory``; every method
uses its lock, file and indexes."""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np

from . import transfer as T
from . import vectors as V
from . import writes as W
from .errors import InvalidInput
from .text import check_str, check_text, to_epoch
from .pending import BATCH
from .args import check_id as _check_id
from .args import check_int as _check_int
from .args import check_scope as _check_scope


class RowsMixin:
    """The row-level verbs of :class:`fastmem.Memory` (see the module docstring)."""

    def pending_count(self, *, scope: str | None = None) -> int:
        """Memories committed without their derived parts yet (see ``remember_many(wait=False)``)."""
        self._check_open()
        _check_scope(scope)
        with self._lock:
            if scope is None:
                return int(self.db.execute("SELECT count(*) FROM pending").fetchone()[0])
            return int(self.db.execute("SELECT count(*) FROM pending p JOIN memories m ON m.id=p.memory_id "
                                       "WHERE m.scope=?", (scope,)).fetchone()[0])

    def derive_pending(self, *, wait: bool = True, timeout: float | None = None) -> int | None:
        """Finish the pending memories (this process's and any another left behind): their
        embeddings, facts, events and codes, a batch per transaction.

        ``wait=True`` does it now and returns how many this call finished; ``wait=False`` hands it
        to the background thread and returns None at once (and turns background derivation on
        for later ``wait=False`` writes, see ``derive_in_background``). ``timeout`` (with ``wait=True``)
        bounds a wait for the background thread's own work first."""
        self._check_open()
        if not wait:
            self._background = True
            self._finisher.poke()
            return None
        self._finisher.wait(timeout)
        return self._derive_until(None)

    def wait_pending(self, timeout: float | None = None) -> bool:
        """Block until the background thread has derived what was handed to it; False when
        ``timeout`` seconds passed first."""
        return self._finisher.wait(timeout)

    def _derive_until(self, stop) -> int:
        """Derive pending memories, :data:`fastmem.pending.BATCH` at a time, until none is left
        (or ``stop`` is set); the models run outside the lock."""
        done, last = 0, 0
        while stop is None or not stop.is_set():
            with self._lock:
                if self._closed:
                    break
                self._sync()
                rows = W.pending_rows(self.db, BATCH, after=last)
            if not rows:
                break
            last = rows[-1][0]
            prep = W.prepare([r[1] for r in rows], [r[2] for r in rows], self.embedder, self.extractor, False)
            with self._lock:
                if self._closed:
                    break
                with self.transaction() as tx:
                    ids, vecs, pending = W.commit_pending(self.store, [r[0] for r in rows], prep,
                                                          model_id=self.embedder.model_id, structures=self.structure)
                    tx.structure(pending)
                    tx.revectored(ids, vecs)
            done += len(ids)
        return done

    def with_meta(self, key: str, value, *, scope: str | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        """Memories whose metadata has ``key`` equal to ``value`` (a JSON scalar), oldest first:
        ``(id, text, meta)``. For hosts that keep their own ids in ``meta``."""
        self._check_open()
        _check_scope(scope)
        check_str(key, "key")
        if not (value is None or isinstance(value, (str, int, float, bool))):
            raise InvalidInput("value must be a str, number, bool or None")
        sql = ("SELECT id, text, meta FROM memories WHERE json_extract(meta, '$.' || json_quote(?)) IS ?"
               + (" AND scope=?" if scope is not None else "") + " ORDER BY id")
        with self._lock:
            self._sync()
            rows = self.db.execute(sql, (key, value) + ((scope,) if scope is not None else ())).fetchall()
        return [(mid, text, json.loads(meta)) for mid, text, meta in rows]

    def export_jsonl(self, path: str | os.PathLike | None = None, *, scope: str | None = None,
                     vectors: bool = False) -> int:
        """Write everything needed to rebuild this store (or one scope) as JSON lines to
        ``path`` (None: standard output); see :mod:`fastmem.transfer`. ``vectors`` includes
        the embeddings (base64), so an import with the same model needs no model run.
        Returns the number of lines written."""
        self._check_open()
        _check_scope(scope)
        with self._lock:
            self._sync()
            return T.write_lines(T.export_lines(self, scope=scope, vectors=vectors), path)

    def import_jsonl(self, path: str | os.PathLike, *, progress: bool | None = None) -> int:
        """Rebuild memories from an export (see :meth:`export_jsonl`); ids are kept when this
        store is empty. Returns the number of memories imported."""
        self._check_open()
        try:
            with open(path, encoding="utf-8") as fh:
                header, mems, aliases, cats = T.parse_export(fh)
        except OSError as exc:
            raise InvalidInput(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from exc
        return T.restore(self, header, mems, aliases, cats, progress=progress)

    def forget(self, memory_id: int) -> None:
        """Delete one memory with its vector, facts (orphaned entities too), code and usage.

        Raises :class:`~fastmem.errors.NotFound` when no such memory exists.
        """
        self._check_open()
        mid = _check_id(memory_id)
        with self.transaction() as tx:
            tx.structure(W.forget(self.store, mid, self.structure))
            tx.unvectored([mid])
            tx.forgotten(mid)

    def update(self, memory_id: int, *, text: str | None = None, meta: Mapping[str, Any] | None = None,
               at: datetime | str | None | object = W.KEEP, speaker: str | None | object = W.KEEP,
               wait: bool = True) -> None:
        """Change a memory in place (its id, scope, source and usage stay).

        A new ``text`` is embedded and parsed again (vector, facts, events, code and FTS row
        follow it in the same transaction); ``meta`` replaces the metadata; ``at`` the time
        and ``speaker`` the speaker (``None`` clears either). ``wait=False`` commits a new text
        without running a model (the memory is pending until derived, as with
        ``remember_many(wait=False)``). Raises :class:`~fastmem.errors.NotFound` for an unknown id.
        """
        self._check_open()
        mid = _check_id(memory_id)
        if not isinstance(wait, bool):
            raise InvalidInput("wait must be True or False")
        meta_json = None if meta is None else W.encode_meta(meta)
        when = at if at is W.KEEP else to_epoch(at)
        who = speaker if speaker is W.KEEP else W.check_speaker(speaker)
        prep = None
        if text is not None:
            check_text(text, "text")
            if wait:
                prep = W.prepare([text], [None], self.embedder, self.extractor, False)
        with self.transaction() as tx:
            tx.structure(W.update(self.store, mid, text=text, prep=prep, meta_json=meta_json, at=when,
                                  model_id=self.embedder.model_id, structures=self.structure, speaker=who))
            if prep is not None:
                tx.revectored([mid], prep.vecs)
            elif text is not None:
                tx.unvectored([mid])
        if text is not None and not wait and self._background:
            self._finisher.poke()

    def reembed(self, *, progress: bool | None = None) -> None:
        """Recompute every vector with the current embedder and rebuild the index."""
        self._check_open()
        with self._lock:
            V.reembed_rows(self.store, self.embedder, progress)
            self.rebuild_index(progress=progress)

    def rebuild_structure(self, *, reparse: bool = False, progress: bool | None = None) -> int:
        """Recompute every memory's structural code and the word counts from its events.

        Parameters
        ----------
        reparse : bool
            Re-extract events from every memory's text with the current extractor (also for
            memories whose facts were given as ``triples=``: their text is parsed too).
            Default: use stored events, or derive them from stored facts when a memory has
            none.

        Returns the number of memories that have a structural code afterwards.
        """
        self._check_open()
        with self._lock:
            return self.structure.rebuild(self.store, self._parser(), reparse=reparse, progress=progress)

    # -- for hosts and integrations --------------------------------------------------------
    def prepare(self, texts: Sequence[str], *, triples=None, progress: bool | None = None) -> W.Prepared:
        """The models' half of :meth:`remember_many`, without touching the store: each text's
        embedding, facts and events (a :class:`fastmem.writes.Prepared`). For hosts that derive
        elsewhere (Ray workers) or outside their own locks; write it with
        :meth:`commit_prepared`. ``triples`` as in :meth:`remember_many`."""
        self._check_open()
        given, _, _ = W.check_batch(texts, scope="", meta=None, triples=triples, extractor=self.extractor)
        return W.prepare(texts, given, self.embedder, self.extractor, progress)

    def commit_prepared(self, prep: W.Prepared, *, scope: str | Sequence[str] = "",
                        source: str | None | Sequence[str | None] = None, meta=None, at=None, speaker=None,
                        mark: tuple[str, int] | None = None,
                        usage: Sequence[tuple[int, int]] | None = None) -> list[int] | None:
        """Write prepared memories (:meth:`prepare`, :func:`fastmem.distributed.derive_batch`)
        in one transaction; returns their ids.

        ``scope``, ``source``, ``speaker`` and ``at`` (unix seconds, datetimes or ISO 8601) are
        one value for all or one per memory; ``meta`` a mapping for all, or one mapping (or
        JSON object text) per memory. ``mark=(job, batch)`` records that this batch of a job
        is written, in the same transaction: when it was recorded before, nothing is written
        and None is returned (a resumed import writes nothing twice; see
        :meth:`batches_done`). ``usage``: per memory ``(engaged, ignored)`` counts carried
        over from another system. The in-process index, codes, scopes and weights follow
        after COMMIT only."""
        self._check_open()
        if not isinstance(prep, W.Prepared):
            raise InvalidInput("prep must be a Prepared (from prepare() or distributed.derive_batch)")
        n = len(prep.texts)
        for name, v in (("scope", scope), ("source", source), ("speaker", speaker)):
            if not (v is None or isinstance(v, str)) and len(v) != n:
                raise InvalidInput(f"{name} must be one value or one per memory ({n})")
        if isinstance(scope, str):
            _check_scope(scope)
        metas = W.encode_metas(meta, n)
        when = [to_epoch(x) if not isinstance(x, (int, float)) or isinstance(x, bool) else float(x)
                for x in (at if isinstance(at, (list, tuple)) else [at] * n)]
        if len(when) != n:
            raise InvalidInput(f"at must be one value or one per memory ({n})")
        if usage is not None and (len(usage) != n or not all(
                len(u) == 2 and all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in u)
                for u in usage)):
            raise InvalidInput(f"usage must hold one (engaged, ignored) pair of counts >= 0 per memory ({n})")
        if mark is not None:
            mark = W.check_mark(mark)
        with self.transaction() as tx:
            if mark is not None and W.marked(tx.db, *mark):
                return None
            ids = self._commit(prep, scope=scope, source=source, meta_json=metas, at=when,
                               speaker=speaker)
            if usage is not None:
                self.ledger.carry_over(tx.db, ids, usage)
                tx.usage_changed()
            if mark is not None:
                W.mark(tx.db, *mark, rows=len(ids))
        return ids

    def batches_done(self, job: str) -> set[int]:
        """The batches of ``job`` written with ``commit_prepared(mark=(job, batch))``."""
        self._check_open()
        check_str(job, "job")
        with self._lock:
            self._sync()
            return W.batches_done(self.db, job)

    def write_vectors(self, ids: Sequence[int], vecs: np.ndarray) -> None:
        """Store new vectors of the current model for existing memories (a re-embedding
        computed elsewhere), in one transaction; the index follows after COMMIT."""
        self._check_open()
        ids = [_check_id(i) for i in ids]
        vecs = np.asarray(vecs, np.float32)
        if vecs.shape != (len(ids), self.embedder.dim):
            raise InvalidInput(f"vecs must be {len(ids)} x {self.embedder.dim}, got {vecs.shape}")
        with self.transaction() as tx:
            V.write_vectors(tx.db, ids, vecs, self.embedder.model_id)
            tx.revectored(ids, vecs)

    def texts(self, *, scope: str | None = None, after: int = 0, limit: int | None = None) -> list[tuple[int, str]]:
        """``(id, text)`` of the memories (of one scope when given) with ids above ``after``,
        in id order, at most ``limit`` of them."""
        self._check_open()
        _check_scope(scope)
        with self._lock:
            self._sync()
            return W.texts(self.db, scope=scope, after=int(after), limit=limit)

    def ids_with_text(self, text: str, *, scope: str | None = None) -> list[int]:
        """Ids of the memories whose text is exactly ``text`` (of one scope when given)."""
        self._check_open()
        check_str(text, "text")
        _check_scope(scope)
        with self._lock:
            self._sync()
            return W.ids_with_text(self.db, text, scope)

    def most_used(self, *, scope: str | None = None, limit: int = 100) -> list[int]:
        """Ids of the memories by use weight, highest first (newest first among equals)."""
        self._check_open()
        _check_scope(scope)
        limit = _check_int(limit, "limit", 1, 1_000_000)
        with self._lock:
            self._sync()
            return self.ledger.most_used(scope, limit)

    def with_meta_key(self, key: str, *, scopes: Collection[str] | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        """Memories whose metadata has ``key`` (any value), of the given scopes when given,
        most recently updated first: ``(id, scope, meta)``."""
        self._check_open()
        check_str(key, "key")
        with self._lock:
            self._sync()
            return W.with_meta_key(self.db, key, None if scopes is None else sorted(scopes))

    def scopes_in_use(self) -> list[str]:
        """Every scope that holds a memory, sorted."""
        self._check_open()
        with self._lock:
            self._sync()
            return W.scopes(self.db)

    def stats(self) -> dict[str, Any]:
        """What the store holds: memories, scopes, pending, entities, facts, codes, chunks,
        categories per status, the model and its dimensions, ``hrr_dim`` and the schema
        version (``fastmem stats`` prints it)."""
        self._check_open()
        with self._lock:
            self._sync()
            out = self.store.counts()
        out.update(pending=self.pending_count(), model=self.embedder.model_id, dimensions=self.embedder.dim,
                   hrr_dim=self.hrr_dim)
        return out

    @contextmanager
    def locked(self):
        """Hold this memory for a short look-up-then-write step: other threads of this
        process wait (other processes are not stopped; each write is still its own
        transaction). Verbs may be called inside."""
        self._check_open()
        with self._lock:
            self._sync()
            yield self

    # -- reading rows ----------------------------------------------------------------------
    def get(self, memory_id: int) -> dict[str, Any]:
        """A memory's row: ``id, text, scope, source, created, updated, meta, at, speaker``."""
        self._check_open()
        return W.row(self.db, _check_id(memory_id))

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM memories").fetchone()[0])

    def count(self, *, scope: str | None = None, source: str | None = None) -> int:
        """Number of memories (of one scope, and from one source, when given)."""
        if scope is None and source is None:
            return len(self)
        _check_scope(scope)
        if source is not None:
            check_str(source, "source")
        return W.count(self.db, scope, source)

    def events(self, memory_id: int) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        """The stored narrative events of a memory (what its structural code encodes):
        ``(verb, subject fillers, object fillers)`` in text order."""
        self._check_open()
        mid = _check_id(memory_id)
        with self._lock:
            self._sync()
            W.row(self.db, mid)  # NotFound
            return [(v, tuple(s), tuple(o)) for v, s, o in self.structure.events(mid)]

    def idf(self, word: str) -> float:
        """Inverse document frequency of a verb or filler among the memories with events:
        ``ln(1 + N / (df + 0.5))`` (always positive; rare words weigh more)."""
        return self.structure.idf(word)
