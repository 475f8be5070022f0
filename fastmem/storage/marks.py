"""Marks of batches written: a resumable import (a Ray job, a host's one-time import) records
each batch it wrote in ``ingest_log``, in the same transaction as the batch, so a rerun
writes nothing twice."""

from __future__ import annotations

import os
import time

import apsw

from ..errors import InvalidInput
from ..util.text import check_str

__all__ = ["check_mark", "marked", "mark", "batches_done", "batches_done_in_file"]


def check_mark(mark) -> tuple[str, int]:
    """``commit_prepared``'s ``mark``: a ``(job, batch)`` pair, checked; raises :class:`InvalidInput`."""
    if (not isinstance(mark, tuple) or len(mark) != 2 or not isinstance(mark[1], int) or isinstance(mark[1], bool)
            or mark[1] < 0):
        raise InvalidInput(f"mark must be a (job, batch) pair: a str and an int >= 0, got {mark!r}")
    return check_str(mark[0], "mark's job"), int(mark[1])


def _legacy(db, job: str) -> bool:
    """fastmem 0.x recorded a host's one-time import as a setting named after the job (batch 0)."""
    return db.execute("SELECT 1 FROM settings WHERE key=?", (job,)).fetchone() is not None


def _has_marks(db) -> bool:
    """Whether the file has the table (a file read without migrating may predate it)."""
    return db.execute("SELECT 1 FROM sqlite_master WHERE name='ingest_log'").fetchone() is not None


def marked(db, job: str, batch: int) -> bool:
    """Whether ``(job, batch)`` was written (inside the caller's transaction)."""
    if batch == 0 and _legacy(db, job):
        return True
    return db.execute("SELECT 1 FROM ingest_log WHERE job=? AND batch=?", (job, batch)).fetchone() is not None


def mark(db, job: str, batch: int, *, rows: int) -> None:
    """Record ``(job, batch)`` as written (inside the caller's transaction)."""
    db.execute("INSERT INTO ingest_log(job, batch, rows, at) VALUES (?,?,?,?)", (job, batch, rows, time.time()))


def batches_done(db, job: str) -> set[int]:
    """The batches of ``job`` recorded by :func:`mark`."""
    got = {0} if _legacy(db, job) else set()
    if _has_marks(db):
        got.update(b for (b,) in db.execute("SELECT batch FROM ingest_log WHERE job=?", (job,)))
    return got


def batches_done_in_file(path: str, job: str) -> set[int]:
    """:func:`batches_done` read from a store file without opening it as a memory (read-only;
    an absent file has none)."""
    if not os.path.exists(path):
        return set()
    con = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        con.setbusytimeout(30_000)
        return batches_done(con, job)
    finally:
        con.close()
