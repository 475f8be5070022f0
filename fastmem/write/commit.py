"""The store's half of a write: one transaction that writes the memories with their FTS rows
(by trigger), usage rows, embeddings, graph facts, events, structural codes, word counts,
windows and standing statements, all or nothing.

Each table is written by its owner (:mod:`fastmem.storage.memories`,
:mod:`fastmem.derived.vectors`, :mod:`fastmem.derived.graph`,
:mod:`fastmem.analogy.code_store`, ...); here they are called in order. :func:`forget` is the
only deletion. A write that must not wait for the models (:func:`commit_rows`) commits the
rows first and marks them pending; :func:`commit_pending` adds their derived parts later.
Each function returns what the process must follow (the structural changes, applied by the
engine's transaction after COMMIT), so a failed transaction leaves nothing behind.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

import numpy as np

from ..analogy import plots as P
from ..analogy.code_store import StructuralChanges, StructureIndex
from ..derived import graph as G
from ..derived import standing as ST
from ..derived import usage as U
from ..derived import vectors as V
from ..derived import windows as X
from ..reader import standing as S
from ..reader.who import resolve_facts
from ..results import Triple
from ..storage import failures as F
from ..storage import memories as R
from . import guard
from .prepare import Prepared

__all__ = ["commit", "commit_rows", "commit_pending", "pending_rows", "forget", "update", "KEEP", "failed_rows",
           "rederive", "give_up", "texts_to_read", "replace_plots"]


def _insert_rows(db, texts: Sequence[str], *, scope, source, meta_json, at, speaker, ids, now: float,
                 times=None) -> list[int]:
    """The memories' rows (FTS rows by trigger) and usage rows; returns their ids."""
    new_ids = R.insert(db, texts, scope=scope, source=source, meta_json=meta_json, at=at, speaker=speaker, ids=ids,
                       now=now, times=times)
    U.add_rows(db, new_ids)
    return new_ids


def _insert_derived(db, ids: Sequence[int], prep: Prepared, model_id: str, structure: StructureIndex,
                    pending: StructuralChanges, sums=None) -> None:
    """Embeddings, then the rest of each memory's derived parts (:func:`_derive_parts`) for
    memories whose rows exist."""
    V.put(db, ids, prep.vecs, model_id)
    _derive_parts(db, ids, prep, structure, pending, sums)
    structure.write_df(db, pending.df)


def _derive_parts(db, ids: Sequence[int], prep: Prepared, structure: StructureIndex, pending: StructuralChanges,
                  sums=None, *, announce: bool = True) -> None:
    """Graph facts (their pronouns resolved with what the store knows of each turn:
    :mod:`fastmem.reader.who`), events, codes, word counts, windows and standing statements of
    memories whose rows exist (the word counts are left in ``pending.df`` for the caller to
    write). A memory whose facts or code cannot be made is written without them
    (:mod:`fastmem.write.guard`); every failure, the read's included, is recorded with it and
    (with ``announce``) logged."""
    failed = guard.Failures(prep.failures)
    known: dict = {}  # (name, type) -> node, for the whole batch

    def batch(_):
        resolve_facts(db, ids, prep.facts, write=lambda mids, got: G.add_facts_many(db, mids, got, names=known))

    def one(j):  # after a failed batch: its own savepoint, no node of the rolled-back batch
        resolve_facts(db, [ids[j]], [prep.facts[j]], write=lambda mids, got: G.add_facts_many(db, mids, got))

    if any(prep.facts):
        guard.each(sorted(range(len(ids)), key=ids.__getitem__), batch, one, failed, guard.PART_FACTS, db)
    structure.stage_many(db, ids, prep.events, pending, prep.codes, ahead=sums,
                         failed=lambda j, exc: failed.add(j, guard.PART_STRUCTURE, exc), plots=prep.plots)
    if prep.windows is not None:
        X.write(db, [(mid, w) for mid, w in zip(ids, prep.windows) if w is not None])
    if prep.standing is not None:  # a host's kind= (written with the row) is kept
        ST.write(db, [(mid, *st) for mid, st in zip(ids, prep.standing) if st is not None and st[0] is not None],
                 replace=False)
    if failed:
        F.record(db, failed.rows(ids))
        if announce:
            guard.warn(failed, len(ids))


def commit(db, prep: Prepared, *, scope, source, meta_json, model_id: str, structure: StructureIndex,
           at: Sequence[float | None] | None = None, ids: Sequence[int] | None = None,
           speaker=None, times=None, on_ids=None, sums=None) -> tuple[list[int], StructuralChanges]:
    """Write a prepared batch inside the caller's transaction (``db``); returns the new ids and
    the structural changes to apply (:meth:`StructureIndex.apply`) once it has committed.

    ``scope``, ``source``, ``meta_json`` and ``speaker`` are one value for all or a list (one
    per text); ``ids`` asks for these ids (a restore), otherwise the store assigns them;
    ``times`` gives each text's ``(created, updated)`` (a restore), otherwise now.
    ``on_ids(ids)`` is called as soon as the ids are known (a bulk load starts its index
    build); ``sums``: the codes' statistics begun before the transaction
    (:meth:`StructureIndex.begin_sums`)."""
    pending = StructuralChanges()
    ids = _insert_rows(db, prep.texts, scope=scope, source=source, meta_json=meta_json, at=at, speaker=speaker,
                       ids=ids, now=time.time(), times=times)
    if on_ids is not None:
        on_ids(ids)
    _insert_derived(db, ids, prep, model_id, structure, pending, sums)
    return ids, pending


def _triples_json(ts: list[Triple] | None) -> str | None:
    return None if ts is None else json.dumps([[t.subject, t.relation, t.object, t.subject_type, t.object_type]
                                               for t in ts])


def commit_rows(db, texts: Sequence[str], given: list, *, scope, source, meta_json,
                at: Sequence[float | None] | None = None, speaker=None, kinds=None) -> list[int]:
    """Write memories *before* their derived parts, inside the caller's transaction, needing no
    model: the rows, their FTS rows (keyword recall finds them at once) and usage rows, and a
    pending row each (with the caller's triples) for :func:`commit_pending` to finish; a host's
    ``kinds`` (its statements take the memory's vector once it is derived). Returns the ids."""
    ids = _insert_rows(db, texts, scope=scope, source=source, meta_json=meta_json, at=at, speaker=speaker,
                       ids=None, now=time.time())
    R.insert_pending(db, [(mid, _triples_json(g)) for mid, g in zip(ids, given)])
    if kinds is not None:
        ST.write(db, [(mid, S.PLAIN if k in ("plain", S.SKIP) else S.explicit(k, t, None), None)
                      for mid, t, k in zip(ids, texts, kinds) if k is not None])
    return ids


def pending_rows(db, limit: int, after: int = 0) -> list[tuple[int, str, list[Triple] | None]]:
    """Up to ``limit`` pending memories with ids above ``after``: ``(id, text, triples)``,
    ``triples`` None where they are to be extracted."""
    return [(mid, text, None if ts is None else [Triple(*t) for t in ts])
            for mid, text, ts in R.pending_rows(db, limit, after)]


def texts_to_read(db) -> list[tuple[int, str]]:
    """``(id, text)`` of every memory that is not pending, by id (what a reader upgrade reads)."""
    return R.derived_texts(db)


def replace_plots(db, ids: Sequence[int], texts: Sequence[str], plots, structure: StructureIndex) -> StructuralChanges:
    """Replace the plots of ``ids`` (whose text is still ``texts``) with ``plots`` (None, or one
    :class:`fastmem.analogy.plots.Plot` or None per memory), inside the caller's transaction."""
    pending = StructuralChanges()
    now = {mid: R.row(db, mid)["text"] for mid in ids if R.exists(db, mid)}
    keep = [j for j, mid in enumerate(ids) if now.get(mid) == texts[j]]
    for j in keep:
        if P.drop(db, ids[j]):
            pending.plots.removed.append(int(ids[j]))
    if plots is not None:
        pending.plots.added += P.write(db, [(ids[j], plots[j]) for j in keep if plots[j] is not None])
    return pending


def give_up(db, mid: int, text: str, failure: guard.Failure) -> None:
    """A pending memory that cannot be derived at all leaves pending, its failure recorded: it
    keeps its text and keyword row; deriving it again (``derive_pending``) retries it. Nothing
    happens when it is no longer pending with ``text`` (another process finished or changed it)."""
    if R.pending_texts(db, [mid]).get(mid) != text:
        return
    R.drop_pending(db, [mid])
    F.record(db, [(mid, failure.part, failure.error, failure.message, failure.reader)])


def commit_pending(db, ids: Sequence[int], prep: Prepared, *, model_id: str,
                   structure: StructureIndex) -> tuple[list[int], np.ndarray, StructuralChanges]:
    """Finish pending memories inside the caller's transaction: those of ``ids`` that are still
    pending with the text ``prep`` was made from (another process may have finished, changed
    or forgotten one meanwhile) get their embedding, facts, events and code, and leave
    pending. Returns the ids finished, their vectors and the structural changes."""
    pending = StructuralChanges()
    now = R.pending_texts(db, ids)
    keep = [j for j, mid in enumerate(ids) if now.get(mid) == prep.texts[j]]
    done = [int(ids[j]) for j in keep]
    part = prep.subset(keep)
    if done:
        _insert_derived(db, done, part, model_id, structure, pending)
        R.drop_pending(db, done)
    return done, part.vecs, pending


def forget(db, mid: int, structure: StructureIndex) -> StructuralChanges:
    """Delete one memory with its vector, facts (orphaned entities too), code and usage inside
    the caller's transaction; raises :class:`~fastmem.errors.NotFound`. Returns the structural
    changes to apply."""
    pending = StructuralChanges()
    R.require(db, mid)
    structure.stage_forget(db, mid, pending)
    structure.write_df(db, pending.df)
    nodes = G.drop_facts(db, mid)
    R.delete(db, mid)
    U.drop_events(db, mid)
    G.drop_orphans(db, nodes)
    return pending


#: ``update(at=KEEP)`` leaves the time as it is (the same for ``speaker``).
KEEP = object()


def update(db, mid: int, *, text: str | None, prep: Prepared | None, meta_json: str | None,
           at: float | None | object, model_id: str, structure: StructureIndex,
           speaker: str | None | object = KEEP) -> StructuralChanges:
    """Change a memory in place, inside the caller's transaction: a new ``text`` (with
    ``prep``, its embedding and parse) replaces the FTS row, vector, facts, events and code
    (with ``prep`` None, the old derived parts go and the memory is pending again);
    ``meta_json`` replaces the metadata; ``at`` (``KEEP`` to leave it) the time; ``speaker``
    likewise (None clears it). Raises NotFound."""
    pending = StructuralChanges()
    R.require(db, mid)
    fields: dict = {}
    if meta_json is not None:
        fields["meta"] = meta_json
    if at is not KEEP:
        fields["at"] = at
    if speaker is not KEEP:
        fields["speaker"] = speaker
    if text is not None:
        fields["text"] = text
        nodes = _drop_derived(db, mid, structure, pending)
    R.set_fields(db, mid, fields)
    if text is not None and prep is None:  # derived later: the memory is pending again
        V.drop(db, mid)
        R.make_pending(db, mid)
        G.drop_orphans(db, nodes)
    elif text is not None:
        V.put(db, [mid], prep.vecs[:1], model_id)
        R.drop_pending(db, [mid])  # derived now, from the new text
        G.drop_orphans(db, nodes)
        _derive_parts(db, [mid], prep.subset([0]), structure, pending)
    structure.write_df(db, pending.df)
    return pending


def _drop_derived(db, mid: int, structure: StructureIndex, pending: StructuralChanges, *,
                  standing: bool = True) -> list[int]:
    """Take away a memory's facts, standing statement (unless ``standing`` is False), windows,
    events, code and failure records (its text is read again); returns the nodes its facts
    named (orphans to drop once the new facts are in)."""
    nodes = G.drop_facts(db, mid)
    if standing:
        ST.drop(db, mid)
    X.drop(db, mid)
    F.clear(db, [mid])
    structure.stage_forget(db, mid, pending, delete=True)
    return nodes


def failed_rows(db, ids: Sequence[int] | None = None) -> list[tuple[int, str]]:
    """``(id, text)`` of memories with a recorded failure that are not pending (of ``ids`` when
    given), by id: what :func:`rederive` reads again."""
    want = F.failed_ids(db)
    if ids is not None:
        keep = {int(i) for i in ids}
        want = [i for i in want if i in keep]
    pending = set(R.pending_texts(db, want)) if want else set()
    return [(mid, R.row(db, mid)["text"]) for mid in want if mid not in pending]


def rederive(db, ids: Sequence[int], texts: Sequence[str], prep: Prepared, *, model_id: str,
             structure: StructureIndex) -> tuple[list[int], np.ndarray, StructuralChanges]:
    """Derive again memories whose derivation failed, inside the caller's transaction: those of
    ``ids`` whose text is still ``texts`` get new vectors, facts, events, codes and statements
    from ``prep`` (their failure records cleared, new ones recorded; a standing statement
    already stored, a host's ``kind=`` among them, is kept). Returns the ids done, their vectors
    and the structural changes."""
    pending = StructuralChanges()
    now = {mid: R.row(db, mid)["text"] for mid in ids if R.exists(db, mid)}
    keep = [j for j, mid in enumerate(ids) if now.get(mid) == texts[j]]
    done = [int(ids[j]) for j in keep]
    if not done:
        return [], prep.vecs[:0], pending
    part = prep.subset(keep)
    nodes = [n for mid in done for n in _drop_derived(db, mid, structure, pending, standing=False)]
    V.put(db, done, part.vecs, model_id)
    _derive_parts(db, done, part, structure, pending, announce=False)  # logged when it first failed
    structure.write_df(db, pending.df)
    G.drop_orphans(db, nodes)
    return done, part.vecs, pending
