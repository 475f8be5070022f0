"""The stored embeddings and their hnswlib index: open, catch up, re-embed.

The ``embeddings`` table is the truth; :class:`~fastmem.derived.ann.VectorIndex` is a cache of it.
These functions move vectors between the two: build or reconcile the index on open, pick up
rows that other processes committed or deleted, and recompute every vector with a new model.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterable

import apsw
import numpy as np

from ..errors import ModelMismatch
from ..models.embedder import Embedder, encode_with_windows
from ..util.progress import bar
from . import standing as ST
from . import windows as X
from .ann import VectorIndex

__all__ = ["ids_json", "stored_vectors", "write_vectors", "open_index", "refresh", "catch_up", "other_models", "model_mismatch", "reembed_rows"]


def ids_json(ids: Iterable[int]) -> str:
    """Ids as a JSON array, for ``IN (SELECT value FROM json_each(?))``."""
    return json.dumps([int(i) for i in ids])


def stored_vectors(db: apsw.Connection, ids: np.ndarray, dim: int) -> np.ndarray:
    """(len(ids), dim) float32 stored vectors, in the order of ``ids``."""
    rows = db.execute(
        "SELECT memory_id, vec FROM embeddings WHERE memory_id IN (SELECT value FROM json_each(?))",
        (ids_json(ids),),
    ).fetchall()
    got = {mid: np.frombuffer(v, np.float32) for mid, v in rows}
    return np.stack([got[int(i)] for i in ids]) if len(ids) else np.zeros((0, dim), np.float32)


def open_index(db: apsw.Connection, index: VectorIndex, progress: bool | None) -> str:
    """Load ``index`` and reconcile it with the table, or build it (with a progress bar).
    Returns ``'loaded'`` or ``'rebuilt'``."""
    # from the (model, id) index, not the table (whose rows carry the vectors), sorted here
    ids = np.sort(np.fromiter(itertools.chain.from_iterable(
        db.execute("SELECT memory_id FROM embeddings")), np.int64))
    b = None
    if not (index.path and os.path.exists(index.path)):
        b = bar(len(ids), "building vector index", progress)
    how = index.open(ids, lambda part: stored_vectors(db, part, index.dim), progress=b.update if b else None)
    if b:
        b.close()
    return how


def refresh(db: apsw.Connection, index: VectorIndex, ids) -> None:
    """Take the stored vectors of ``ids`` again (added, replaced, or deleted when gone)."""
    ids = np.fromiter(sorted(int(i) for i in ids), np.int64)
    for start in range(0, len(ids), 4096):
        part = ids[start : start + 4096]
        rows = db.execute("SELECT memory_id, vec FROM embeddings WHERE memory_id IN (SELECT value FROM json_each(?))",
                          (ids_json(part),)).fetchall()
        if rows:
            index.update(np.asarray([r[0] for r in rows], np.int64),
                         np.stack([np.frombuffer(v, np.float32) for _, v in rows]))
        gone = set(part.tolist()) - {r[0] for r in rows}
        if gone:
            index.delete(sorted(gone))


def catch_up(db: apsw.Connection, index: VectorIndex, changed=()) -> None:
    """Take what other connections committed: the vectors of ``changed`` ids (from the change
    log, which the tables' triggers fill on every connection: added, replaced or deleted),
    and any row above the index's largest id. ``changed=None`` (a connection further behind
    than the log keeps) reconciles with every row. No count of the table: at 1M memories that
    scan alone took ~0.4 s of every catch-up."""
    fetch = lambda part: stored_vectors(db, part, index.dim)  # noqa: E731
    if changed is None:
        changed = [r[0] for r in db.execute("SELECT memory_id FROM embeddings")]
        index.reconcile(np.asarray(changed, np.int64), fetch)
        return
    if changed:
        refresh(db, index, changed)
    ids = np.fromiter((r[0] for r in db.execute("SELECT memory_id FROM embeddings WHERE memory_id>?", (index.max_id,))), np.int64)
    if len(ids):  # ids only grow (AUTOINCREMENT): new rows are the ones above our max
        index.add(ids, fetch(ids))


def other_models(db: apsw.Connection, embedder: Embedder) -> list[str]:
    """Models other than ``embedder``'s that made some of the stored vectors (one index seek
    each: a DISTINCT over the table read every vector)."""
    return [m for m, in db.execute(_MODELS) if m != embedder.model_id]


_MODELS = """
WITH RECURSIVE s(v) AS (
    SELECT (SELECT min(model) FROM embeddings)
    UNION ALL SELECT (SELECT min(model) FROM embeddings WHERE model > s.v) FROM s WHERE s.v IS NOT NULL)
SELECT v FROM s WHERE v IS NOT NULL"""


def model_mismatch(path: str, embedder: Embedder, other: list[str]) -> ModelMismatch:
    """The error for a store whose vectors came from other models."""
    return ModelMismatch(
        f"{path!r} holds vectors from {', '.join(other)!s}, not {embedder.model_id}; open it with "
        "that model, or pass reembed=True to recompute every vector with this one"
    )


def reembed_rows(atomic, db: apsw.Connection, embedder: Embedder, progress: bool | None) -> None:
    """Recompute every stored vector with ``embedder`` (with the long memories' windows and
    the standing statements' sentences), 256 memories per transaction (``atomic()``: the
    caller's door, yielding the transaction's connection)."""
    total = db.execute("SELECT count(*) FROM memories").fetchone()[0]
    b = bar(total, "re-embedding", True if progress is None else progress)
    last = 0
    while True:
        rows = db.execute("SELECT id, text FROM memories WHERE id>? ORDER BY id LIMIT 256", (last,)).fetchall()
        if not rows:
            break
        vecs, wins = encode_with_windows(embedder, [t for _, t in rows])
        with atomic() as tx:
            put(tx, [mid for mid, _ in rows], vecs, embedder.model_id)
            for (mid, _), w in zip(rows, wins):  # the windows and statements follow the model
                X.drop(tx, mid)
            X.write(tx, [(mid, w) for (mid, _), w in zip(rows, wins) if w is not None])
            ST.reembed(tx, [mid for mid, _ in rows], embedder)
        last = rows[-1][0]
        if b:
            b.update(len(rows))
    if b:
        b.close()


def write_vectors(db: apsw.Connection, ids: list[int], vecs: np.ndarray, model_id: str) -> None:
    """Store ``vecs`` as the vectors of existing memories ``ids`` (inside the caller's
    transaction); :class:`~fastmem.errors.NotFound` names the first id with no memory."""
    have = {r[0] for r in db.execute("SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                                     (ids_json(ids),))}
    missing = [i for i in ids if i not in have]
    if missing:
        from ..errors import NotFound

        raise NotFound(f"no memory with id {missing[0]}")
    put(db, ids, vecs, model_id)


def put(db: apsw.Connection, ids, vecs: np.ndarray, model_id: str) -> None:
    """Store (or replace) the vectors of memories ``ids`` (rows of ``vecs``), inside the
    caller's transaction; the one writer of the ``embeddings`` table."""
    db.executemany("INSERT OR REPLACE INTO embeddings(memory_id, model, dim, vec) VALUES (?,?,?,?)",
                   [(int(i), model_id, int(v.shape[0]), np.ascontiguousarray(v, np.float32).tobytes())
                    for i, v in zip(ids, vecs)])


def drop(db: apsw.Connection, mid: int) -> None:
    """Delete a memory's vector (its text changed and is derived later)."""
    db.execute("DELETE FROM embeddings WHERE memory_id=?", (mid,))
