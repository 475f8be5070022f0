"""The engine of one open store: the one object that owns its state.

:class:`Engine` owns the file (:class:`fastmem.storage.store.Store`), the models (embedder and
extractor), the derived in-process state (the hnswlib index, the structural statistics and
term index, the usage ledger, the scope sets, the recall pipeline and the analogy slot), the
lock and catching up with other processes' commits. It has two doors:

* :meth:`Engine.reading` - every read verb: the store must be open, the lock is held and the
  process has caught up with other processes' commits;
* :meth:`Engine.transaction` - every write verb, after the store was opened: one SQLite
  transaction whose in-process changes are applied after COMMIT
  (:mod:`fastmem.core.transaction`). Passes that commit in several steps take
  :meth:`Engine.writing`, the same door one step at a time.

:class:`fastmem.Memory` is the front: argument checks and flat verbs, handed to the services
:class:`fastmem.core.reading.Reading` and :class:`fastmem.core.writing.Writing`, which hold this
engine and nothing else. ``Memory.admin.engine`` is this engine, for fastmem's own checks,
evaluations and tests.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager

from ..analogy.code_store import StructureIndex
from ..analogy.codes import StructureEncoder
from ..analogy.plots import plot_vectors
from ..analogy.slot import SURFACE_SAMPLE, AnalogySettings, AnalogySlot
from ..derived import vectors as V
from ..derived.ann import BULK_THREADS_MIN, VectorIndex
from ..derived.standing import StandingIndex
from ..derived.usage import Ledger
from ..errors import InvalidInput
from ..models.combine import Combiner
from ..models.embedder import Embedder, resolve_embedder
from ..reader.extract import Extractor, parse_texts
from ..recall.fusion import FUSIONS
from ..recall.pipeline import RecallPipeline
from ..recall.scopes import Scopes
from ..storage.store import Store
from ..write import commit as C
from ..write import guard
from ..util.progress import bar
from ..write.pending import BATCH, Finisher
from ..write.prepare import Prepared, prepare
from .transaction import Transaction

__all__ = ["Engine", "LOG_KEEP"]

#: Change-log rows kept (a connection further behind catches up on every row; ~30 bytes each).
LOG_KEEP = 200_000


class Engine:
    """Everything one open store holds in this process (see the module docstring). Built by
    :class:`fastmem.Memory`, whose parameters these are."""

    def __init__(self, path: str, *, embedder: Embedder | str | None, extractor: Extractor | None, hrr_dim: int,
                 slot: AnalogySettings, reembed: bool, progress: bool | None, fusion: str, durable: bool,
                 derive_in_background: bool) -> None:
        self.path = path
        self.extractor = extractor
        self.lock = threading.RLock()
        self.tx: Transaction | None = None
        self.closed = False
        self.finisher = Finisher(self.derive_until)
        self.background = bool(derive_in_background)
        #: the turns that recalls from several threads hand the analogy slot, parsed together
        #: and outside the lock (:mod:`fastmem.models.combine`)
        self.turn_parse = Combiner(lambda texts: guard.turns(self.extractor, list(texts)))
        self.store = Store(self.path, durable=durable, progress=progress)
        self.db = self.store.db
        try:
            self.embedder: Embedder = resolve_embedder(embedder, self.db)
            self.hrr_dim = self._stored_dim(hrr_dim)
            self.structure = StructureIndex(self.db, StructureEncoder(self.hrr_dim, embed=self.embedder.encode),
                                            terms_path=None if self.path.startswith(":") else self.path + ".terms",
                                            plot_dim=self.embedder.dim)
            self.slot = AnalogySlot(self.db, self.structure, slot, verb_vectors=self.embedder.encode,
                                    sample_vectors=lambda: self.index.sample(SURFACE_SAMPLE))
            self.index = self._open_vectors(reembed, progress)
            self.structure.seq = self.seq
            self.structure.load()
            self.structure.ensure_version(self.store, self.parser(), progress)
            self.ledger = Ledger(self.db)
            self.ledger.load()
            self.scopes = Scopes(self.db)
            self.standing = StandingIndex(self.db)
            self.pipeline = RecallPipeline(self.db, self.index, self.scopes, self.ledger, self.slot, FUSIONS[fusion],
                                           self.standing)
            self.dv = self.store.data_version()
        except BaseException:
            self.store.close()  # a failed open (model mismatch, bad dim...) leaves no handle behind
            raise

    # -- opening -----------------------------------------------------------------------------
    def _stored_dim(self, hrr_dim: int) -> int:
        """The store's structural code dimension (a new store records ``hrr_dim``)."""
        stored = self.store.get_setting("hrr_dim")
        if stored is None:
            with self.store.atomic():
                self.store.set_setting("hrr_dim", str(int(hrr_dim)))
            stored = hrr_dim
        return int(stored)

    def _open_vectors(self, reembed: bool, progress) -> VectorIndex:
        """The vector index, loaded (or rebuilt) and caught up with the change log; the
        store's vectors re-embedded first when ``reembed`` and they came from another model."""
        other = V.other_models(self.db, self.embedder)
        if other and not reembed:
            raise V.model_mismatch(self.path, self.embedder, other)
        if other:  # opening: before any verb, each step its own transaction
            V.reembed_rows(self.store.atomic, self.db, self.embedder, progress)
        index = self._new_index()
        how = V.open_index(self.db, index, progress)
        # what changed in place since the index was saved (a rebuilt one is current), this
        # open's own re-embedding included
        self.store.own.clear()
        self.seq, changed = self.store.changes_since(index.seq if how == "loaded" else self.store.log_seq())
        V.catch_up(self.db, index, changed["vec"])
        index.seq = self.seq
        return index

    def _new_index(self) -> VectorIndex:
        # a store's identity: its index file must be its own
        return VectorIndex(None if self.path.startswith(":") else self.path + ".hnsw", dim=self.embedder.dim,
                           model_id=self.embedder.model_id, store_id=self.store.identity())

    def rebuild_index(self, progress: bool | None) -> None:
        """Rebuild the vector index (hnswlib) from the stored vectors (it is only a cache of them)."""
        self.check_open()
        with self.lock:
            if self.index.path:
                for p in (self.index.path, self.index.path + ".json"):
                    if os.path.exists(p):
                        os.remove(p)
            self.index = self._new_index()
            V.open_index(self.db, self.index, progress)
            self.pipeline.index = self.index

    # -- life cycle ------------------------------------------------------------------------
    def close(self, timeout: float) -> None:
        """See :meth:`fastmem.Memory.close`."""
        if self.closed:
            return
        t0 = time.monotonic()
        if self.models_ready():  # finishing what is pending costs no model load: use the time
            self.finisher.wait(timeout)
        self.finisher.stop(max(0.0, timeout - (time.monotonic() - t0)))
        with self.lock:
            self.flush()
            self.store.close()
            self.closed = True

    def flush(self) -> None:
        """See :meth:`fastmem.Memory.admin.flush`."""
        self.check_open()
        with self.lock:  # not beside a verb's transaction on the shared connection
            self.sync()  # the saved index and sums then say which log position they include
            self.index.save()
            if self.structure.terms_save_due():  # fold and sort them before taking the write lock
                self.structure.terms.postings_of_live()
            staged = None
            try:
                with self.writing() as db:
                    self.sync()  # no other commit can land now: what is saved is the store's at its seq
                    # sums unchanged since they were read or saved: not rewritten (a read-only
                    # command saved 8 MB at close), unless the log trim would outdate the stored row
                    if not self.structure.stats_stored(self.store.log_seq() - LOG_KEEP):
                        self.structure.save_stats(db)
                    if self.structure.terms_save_due():  # a large store's postings, named in the same commit
                        staged, token = self.structure.stage_terms()
                        self.store.set_setting("terms_file", token)
                    self.store.trim_log(db, LOG_KEEP)
                if staged:
                    self.structure.publish_terms(staged)
            finally:
                if staged and os.path.exists(staged):  # the commit failed: the store does not name it
                    os.remove(staged)

    def save_stats_if_due(self) -> None:
        """Persist the structural statistics every so many changes (in a transaction of their
        own, after the write that made them due)."""
        if self.structure.save_due():
            with self.writing() as db:
                self.structure.save_stats(db)

    def check_open(self) -> None:
        if self.closed:
            raise InvalidInput("this Memory is closed; open a new one")

    def models_ready(self) -> bool:
        """Whether the embedder and the parser are loaded (a recall or write pays no load)."""
        return all(getattr(x, "loaded", True) for x in (self.embedder, self.extractor) if x is not None)

    def parser(self):
        """Texts -> events with the store's extractor (None without one)."""
        return (lambda texts: parse_texts(self.extractor, texts)) if self.extractor is not None else None

    # -- the read door -----------------------------------------------------------------------
    @contextmanager
    def reading(self):
        """The door of every read verb: raises :class:`InvalidInput` once closed, holds the lock
        (reads on this connection never interleave with a write of another thread) and has
        caught up with other processes' commits; yields the connection."""
        self.check_open()
        with self.lock:
            self.sync()
            yield self.db

    synced = reading  # the name the passes use: "hold the lock, caught up"

    # -- other processes -----------------------------------------------------------------------

    def sync(self) -> None:
        """Catch up with commits made by other connections (other processes)."""
        dv = self.store.data_version()
        if dv == self.dv:
            if self.store.own:  # only this connection wrote since: its changes are applied
                self.seq = self.index.seq = self.structure.seq = self.store.log_seq()
                self.store.own.clear()
            return
        self.dv = dv
        # content, not counts: an update elsewhere keeps every count and changes the rows
        self.seq, changed = self.store.changes_since(self.seq)
        V.catch_up(self.db, self.index, changed["vec"])
        self.index.seq = self.seq
        # new memories' codes are added; anything else is read again. Every change of a code
        # is in the log (by trigger), so a commit that logged none (a recall's usage rows, a
        # feedback) changed none: no count of the codes table (a scan of every code) is needed
        code = changed["code"]
        if code is None or (code and not self.structure.catch_up(code)):
            self.structure.load()
        self.structure.seq = self.seq
        self.ledger.catch_up(changed["use"])  # the weights other processes changed (None: all)
        self.scopes.reset()
        self.pipeline.reset()

    # -- the write door ----------------------------------------------------------------------
    @contextmanager
    def writing(self):
        """:meth:`transaction` for a pass that writes in several steps and keeps its own
        in-process state: yields the transaction's connection."""
        with self.transaction() as tx:
            yield tx.db

    @contextmanager
    def transaction(self):
        """See :meth:`fastmem.Memory.host.transaction`."""
        self.check_open()
        with self.lock:
            if self.tx is not None:  # nested (this thread holds the lock): one COMMIT for both
                yield self.tx
                return
            self.sync()
            tx = None
            try:
                with self.store.atomic() as db:
                    tx = self.tx = Transaction(self, db)
                    try:
                        yield tx
                    finally:
                        self.tx = None
            except BaseException:
                if tx is not None:
                    tx.discard()  # rolled back: what began early is withdrawn
                raise
            tx.apply()

    def commit(self, prep: Prepared, *, scope, source, meta_json, at, ids=None, speaker=None) -> list[int]:
        """Write a prepared batch (one transaction); the in-process index, codes and scopes
        follow it after COMMIT."""
        bulk = len(prep.texts) >= BULK_THREADS_MIN  # the index is built while the rows are written
        with self.transaction() as tx:
            ids, changes = C.commit(tx.db, prep, scope=scope, source=source, meta_json=meta_json,
                                    model_id=self.embedder.model_id, structure=self.structure, at=at, ids=ids,
                                    speaker=speaker,
                                    on_ids=(lambda got: tx.added_early(got, prep.vecs, scope)) if bulk else None)
            tx.structure(changes)
            if not bulk:
                tx.added(ids, prep.vecs, scope)
        return ids

    # -- maintenance ---------------------------------------------------------------------------
    def reembed(self, progress: bool | None) -> None:
        """Recompute every vector with the current embedder, then rebuild the index."""
        self.check_open()
        with self.lock:
            V.reembed_rows(self.writing, self.db, self.embedder, progress)
            self.rebuild_index(progress=progress)

    def rebuild_structure(self, reparse: bool, progress: bool | None) -> int:
        """Recompute every structural code and the word counts (see :meth:`fastmem.Memory.analogy.rebuild`);
        with ``reparse``, memories whose derivation failed are derived again first."""
        self.check_open()
        if reparse:
            self.rederive_failed()
        with self.lock:
            n = self.structure.rebuild(self.writing, self.parser(), reparse=reparse, progress=progress)
        if reparse and self.extractor is not None:
            self._rebuild_plots(progress)
        return n

    def _rebuild_plots(self, progress: bool | None) -> None:
        """Every memory's plot read and embedded again (:mod:`fastmem.analogy.plots`), a batch of
        :data:`fastmem.write.pending.BATCH` texts per transaction."""
        with self.lock:
            rows = C.texts_to_read(self.db)
        b = bar(len(rows), "reading plots again", progress)
        for start in range(0, len(rows), BATCH):
            part = rows[start : start + BATCH]
            got = plot_vectors(self.embedder, [p for _, _, p in guard.turns_read(self.extractor, [t for _, t in part])])
            with self.lock, self.transaction() as tx:
                tx.structure(C.replace_plots(tx.db, [mid for mid, _ in part], [t for _, t in part], got,
                                             self.structure))
            if b:
                b.update(len(part))
        if b:
            b.close()

    def derive_pending(self, *, wait: bool = True, timeout: float | None = None) -> int | None:
        """See :meth:`fastmem.Memory.pending.derive`."""
        self.check_open()
        if not wait:
            self.background = True
            self.finisher.poke()
            return None
        self.finisher.wait(timeout)
        done = self.derive_until(None)
        self.rederive_failed()
        return done

    def derive_until(self, stop) -> int:
        """Derive pending memories, :data:`fastmem.write.pending.BATCH` at a time, until none is left
        (or ``stop`` is set); the models run outside the lock. No memory blocks the others: a
        batch that fails is halved until the memory that fails is alone, and that one leaves
        pending with its failure recorded (:func:`fastmem.write.commit.give_up`)."""
        done, last = 0, 0
        while stop is None or not stop.is_set():
            with self.lock:
                if self.closed:
                    break
                self.sync()
                rows = C.pending_rows(self.db, BATCH, after=last)
            if not rows:
                break
            last = rows[-1][0]
            done += self._derive_rows(rows)
        return done

    def _derive_rows(self, rows) -> int:
        """Derive these pending rows ``(id, text, triples)``; see :meth:`derive_until`."""
        def run(part):
            prep = prepare([r[1] for r in part], [r[2] for r in part], self.embedder, self.extractor, False)
            with self.lock:
                if self.closed:
                    return 0
                with self.transaction() as tx:
                    ids, vecs, changes = C.commit_pending(tx.db, [r[0] for r in part], prep,
                                                          model_id=self.embedder.model_id, structure=self.structure)
                    tx.structure(changes)
                    tx.revectored(ids, vecs)
            return len(ids)

        def alone(row, exc):
            failure = guard.caught(guard.PART_ALL, exc)
            with self.lock:
                if not self.closed:
                    with self.transaction() as tx:
                        C.give_up(tx.db, row[0], row[1], failure)
            guard.warn(guard.Failures({0: [failure]}), 1)

        return _in_halves(rows, run, alone)

    def rederive_failed(self, ids=None) -> int:
        """Derive again the memories whose derivation failed (of ``ids`` when given; pending
        ones are left to :meth:`derive_until`), :data:`fastmem.write.pending.BATCH` at a time;
        returns how many are now whole. One that fails again keeps its record."""
        with self.lock:
            self.check_open()
            self.sync()
            rows = C.failed_rows(self.db, ids)

        def run(part):
            texts = [t for _, t in part]
            prep = prepare(texts, [None] * len(part), self.embedder, self.extractor, False)
            with self.lock:
                if self.closed:
                    return 0
                with self.transaction() as tx:
                    got, vecs, changes = C.rederive(tx.db, [mid for mid, _ in part], texts, prep,
                                                    model_id=self.embedder.model_id, structure=self.structure)
                    tx.structure(changes)
                    tx.revectored(got, vecs)
            return len(got)

        for start in range(0, len(rows), BATCH):
            _in_halves(rows[start : start + BATCH], run, lambda row, exc: None)
        with self.lock:
            self.sync()
            return len(rows) - len(C.failed_rows(self.db, [mid for mid, _ in rows]))


def _in_halves(rows: list, run, alone) -> int:
    """``run(rows)`` (returns how many it did); when it raises, each half the same way, down to
    one row, for which ``alone(row, exc)`` is called instead. Errors of the file or the machine
    (:data:`fastmem.storage.store.FATAL`) are raised."""
    try:
        return run(rows)
    except guard.FATAL:
        raise
    except Exception as exc:
        if len(rows) == 1:
            alone(rows[0], exc)
            return 0
    half = len(rows) // 2
    return _in_halves(rows[:half], run, alone) + _in_halves(rows[half:], run, alone)
