"""The memories whose derivation failed: one row per memory and part, in ``derive_failures``.

A write never raises past one memory (:mod:`fastmem.write.guard`): a part of a memory that
could not be derived (its facts, events, structural code, standing statement...) is left out,
the memory is stored with the rest, and the failure is recorded here with the reader's version.
:func:`fastmem.core.check.check` lists them; deriving again (``derive_pending``,
``rebuild_structure(reparse=True)``) clears a memory's rows when it succeeds.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

__all__ = ["record", "clear", "listed", "count", "failed_ids"]


def record(db, rows: Iterable[tuple[int, str, str, str, str]]) -> None:
    """Record ``(memory_id, part, error, message, reader)`` rows (a later failure of the same
    part replaces the earlier one), inside the caller's transaction."""
    now = time.time()
    db.executemany("INSERT OR REPLACE INTO derive_failures(memory_id, part, error, message, reader, at) "
                   "VALUES (?,?,?,?,?,?)", [(*r, now) for r in rows])


def clear(db, ids: Sequence[int]) -> None:
    """Forget the failures of ``ids`` (derived again, now whole)."""
    if ids:
        db.executemany("DELETE FROM derive_failures WHERE memory_id=?", [(int(i),) for i in ids])


def listed(db, limit: int | None = None) -> list[tuple[int, str, str, str, str, float]]:
    """``(memory_id, part, error, message, reader, at)`` by memory id."""
    sql = "SELECT memory_id, part, error, message, reader, at FROM derive_failures ORDER BY memory_id, part"
    if limit is not None:
        return db.execute(sql + " LIMIT ?", (int(limit),)).fetchall()
    return db.execute(sql).fetchall()


def count(db) -> int:
    """Memories with at least one failed part."""
    return db.execute("SELECT count(DISTINCT memory_id) FROM derive_failures").fetchone()[0]


def failed_ids(db, part: str | None = None) -> list[int]:
    """Ids of the memories with a failed part (of ``part`` when given), ascending."""
    if part is None:
        return [r[0] for r in db.execute("SELECT DISTINCT memory_id FROM derive_failures ORDER BY memory_id")]
    return [r[0] for r in db.execute("SELECT memory_id FROM derive_failures WHERE part=? ORDER BY memory_id",
                                     (part,))]
