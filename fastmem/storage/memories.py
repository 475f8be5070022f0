"""The memories table, its FTS rows and the pending table: every statement that writes them,
and the reads of rows that hosts need. The FTS rows follow the text by trigger
(:mod:`fastmem.storage.schema`)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import apsw

from ..errors import NotFound
from ..util.text import from_epoch

__all__ = ["ROW_KEYS", "insert", "exists", "require", "set_fields", "delete", "insert_pending", "pending_rows",
           "pending_texts", "derived_texts", "drop_pending", "make_pending", "row", "texts", "ids_with_text", "with_meta_key",
           "scopes", "count", "newest", "pending_count", "with_meta", "text_index_problem", "rebuild_text_index"]

ROW_KEYS = ("id", "text", "scope", "source", "created", "updated", "meta", "at", "speaker")


def _each(x, n: int) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x] * n


#: A batch of at least this many rows gets its FTS rows in one statement after the rows
#: (:func:`insert`): SQLite's per-row trigger costs about 4x as much as the same FTS rows
#: written at once (3,940 chat turns: 0.13 s against 0.035 s).
FTS_AT_ONCE_MIN = 256


def insert(db: apsw.Connection, texts: Sequence[str], *, scope, source, meta_json, at, speaker, ids, now: float,
           times=None) -> list[int]:
    """The memories' rows (FTS rows by trigger); returns their ids. ``scope``, ``source``,
    ``meta_json`` and ``speaker`` one value for all or one per text; ``ids`` asks for these ids
    (a restore); ``times``: per text ``(created, updated)`` (an import's), else both ``now``.

    A batch of :data:`FTS_AT_ONCE_MIN` rows or more, on a store whose only insert trigger on
    ``memories`` is the FTS one, is written with the connection's triggers off and its FTS
    rows then added in one statement, in the same order: the same keyword index."""
    n = len(texts)
    scopes_, sources, metas, speakers = _each(scope, n), _each(source, n), _each(meta_json, n), _each(speaker, n)
    rows = [(None if ids is None else ids[i], text, scopes_[i], sources[i], *(times[i] if times is not None else (now, now)),
             metas[i], None if at is None else at[i], speakers[i]) for i, text in enumerate(texts)]
    sql = ("INSERT INTO memories(id, text, scope, source, created, updated, meta, at, speaker) "
           "VALUES (?,?,?,?,?,?,?,?,?) RETURNING id")
    if n < FTS_AT_ONCE_MIN or _insert_triggers(db) != ["memories_ai"]:
        return [r[0] for r in db.executemany(sql, rows)]
    db.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
    try:
        got = [r[0] for r in db.executemany(sql, rows)]
    finally:
        db.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 1)
    db.execute("INSERT INTO memories_fts(rowid, text) SELECT m.id, m.text FROM json_each(?) j "
               "JOIN memories m ON m.id=j.value ORDER BY j.key", (json.dumps(got),))
    return got


def _insert_triggers(db: apsw.Connection) -> list[str]:
    """The triggers that fire on an insert into ``memories``."""
    return sorted(name for name, sql in db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type='trigger' AND tbl_name='memories'")
        if " INSERT ON " in " ".join(sql.upper().split()))


def exists(db: apsw.Connection, mid: int) -> bool:
    return db.execute("SELECT 1 FROM memories WHERE id=?", (mid,)).fetchone() is not None


def require(db: apsw.Connection, mid: int) -> None:
    """Raises :class:`NotFound` unless memory ``mid`` exists."""
    if not exists(db, mid):
        raise NotFound(f"no memory with id {mid}")


def set_fields(db: apsw.Connection, mid: int, fields: dict[str, Any]) -> None:
    """Change some of ``text``, ``meta``, ``at``, ``speaker`` of one memory (``updated`` is now)."""
    allowed = ("text", "meta", "at", "speaker")
    sets, args = ["updated=?"], [time.time()]
    for k in allowed:
        if k in fields:
            sets.append(f"{k}=?")
            args.append(fields[k])
    db.execute(f"UPDATE memories SET {', '.join(sets)} WHERE id=?", (*args, mid))


def delete(db: apsw.Connection, mid: int) -> None:
    db.execute("DELETE FROM memories WHERE id=?", (mid,))


# -- pending memories: committed before their derived parts --------------------------------
def insert_pending(db: apsw.Connection, rows: Sequence[tuple[int, str | None]]) -> None:
    """``(memory id, the caller's triples as JSON or None)`` per pending memory."""
    db.executemany("INSERT INTO pending(memory_id, triples) VALUES (?,?)", rows)


def make_pending(db: apsw.Connection, mid: int) -> None:
    """A memory whose derived parts are to be made again (its text changed)."""
    db.execute("INSERT OR REPLACE INTO pending(memory_id, triples) VALUES (?, NULL)", (mid,))


def pending_rows(db: apsw.Connection, limit: int, after: int = 0) -> list[tuple[int, str, list | None]]:
    """Up to ``limit`` pending memories with ids above ``after``: ``(id, text, triples)``,
    ``triples`` a list of ``[subject, relation, object, subject type, object type]`` or None
    where they are to be extracted."""
    return [(mid, text, None if ts is None else json.loads(ts)) for mid, text, ts in db.execute(
        "SELECT p.memory_id, m.text, p.triples FROM pending p JOIN memories m ON m.id=p.memory_id "
        "WHERE p.memory_id>? ORDER BY p.memory_id LIMIT ?", (after, limit))]


def derived_texts(db: apsw.Connection) -> list[tuple[int, str]]:
    """``(id, text)`` of every memory that is not pending, by id."""
    return db.execute("SELECT id, text FROM memories WHERE id NOT IN (SELECT memory_id FROM pending) "
                      "ORDER BY id").fetchall()


def pending_texts(db: apsw.Connection, ids: Sequence[int]) -> dict[int, str]:
    """The texts of those of ``ids`` that are still pending."""
    return dict(db.execute(
        "SELECT p.memory_id, m.text FROM pending p JOIN memories m ON m.id=p.memory_id "
        "WHERE p.memory_id IN (SELECT value FROM json_each(?))", (json.dumps([int(i) for i in ids]),)))


def drop_pending(db: apsw.Connection, ids: Sequence[int]) -> None:
    db.executemany("DELETE FROM pending WHERE memory_id=?", [(int(mid),) for mid in ids])


def pending_count(db: apsw.Connection, scope: str | None) -> int:
    if scope is None:
        return int(db.execute("SELECT count(*) FROM pending").fetchone()[0])
    return int(db.execute("SELECT count(*) FROM pending p JOIN memories m ON m.id=p.memory_id WHERE m.scope=?",
                          (scope,)).fetchone()[0])


# -- the keyword index's integrity ----------------------------------------------------------
def text_index_problem(db) -> str | None:
    """What FTS5's integrity check says of the keyword index against the texts; None: agreed."""
    import apsw

    try:
        db.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")
    except apsw.Error as exc:
        return str(exc)
    return None


def rebuild_text_index(db) -> None:
    """Repair: the keyword index made again from the texts."""
    db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")


def row(db, mid: int) -> dict[str, Any]:
    """A memory's row as a dict (``meta`` decoded, ``at`` a UTC datetime or None); raises
    :class:`NotFound`."""
    r = db.execute("SELECT id, text, scope, source, created, updated, meta, at, speaker FROM memories WHERE id=?",
                   (mid,)).fetchone()
    if r is None:
        raise NotFound(f"no memory with id {mid}")
    d = dict(zip(ROW_KEYS, r))
    d["meta"] = json.loads(d["meta"])
    d["at"] = from_epoch(d["at"])
    return d


# -- reads for hosts ---------------------------------------------------------------------------
def texts(db, *, scope: str | None, after: int, limit: int | None) -> list[tuple[int, str]]:
    sql = "SELECT id, text FROM memories WHERE id>?" + (" AND scope=?" if scope is not None else "") + " ORDER BY id"
    args: tuple = (after,) + ((scope,) if scope is not None else ())
    if limit is not None:
        sql += " LIMIT ?"
        args += (int(limit),)
    return [(int(i), t) for i, t in db.execute(sql, args)]


def ids_with_text(db, text: str, scope: str | None) -> list[int]:
    sql = "SELECT id FROM memories WHERE text=?" + (" AND scope=?" if scope is not None else "") + " ORDER BY id"
    return [r[0] for r in db.execute(sql, (text,) + ((scope,) if scope is not None else ()))]


def with_meta_key(db, key: str, scopes: list[str] | None) -> list[tuple[int, str, dict[str, Any]]]:
    sql = "SELECT id, scope, meta FROM memories WHERE json_extract(meta, '$.' || json_quote(?)) IS NOT NULL"
    args: tuple = (key,)
    if scopes is not None:
        sql += " AND scope IN (SELECT value FROM json_each(?))"
        args += (json.dumps(scopes),)
    return [(mid, sc, json.loads(meta)) for mid, sc, meta in db.execute(sql + " ORDER BY updated DESC, id DESC", args)]


def scopes(db) -> list[str]:
    return [r[0] for r in db.execute("SELECT DISTINCT scope FROM memories ORDER BY scope")]


def count(db, scope: str | None, source: str | None) -> int:
    where = [w for w, v in (("scope=?", scope), ("source=?", source)) if v is not None]
    return int(db.execute("SELECT count(*) FROM memories" + "".join(
        (" WHERE " if i == 0 else " AND ") + w for i, w in enumerate(where)),
                          tuple(v for v in (scope, source) if v is not None)).fetchone()[0])


def newest(db, scope: str | None, offset: int, limit: int) -> list[int]:
    """Ids newest first (highest id first), ``limit`` of them after skipping ``offset``."""
    if scope is None:
        return [r[0] for r in db.execute("SELECT id FROM memories ORDER BY id DESC LIMIT ? OFFSET ?", (limit, offset))]
    return [r[0] for r in db.execute("SELECT id FROM memories WHERE scope=? ORDER BY id DESC LIMIT ? OFFSET ?",
                                     (scope, limit, offset))]


def with_meta(db, key: str, value, scope: str | None) -> list[tuple[int, str, dict[str, Any]]]:
    sql = ("SELECT id, text, meta FROM memories WHERE json_extract(meta, '$.' || json_quote(?)) IS ?"
           + (" AND scope=?" if scope is not None else "") + " ORDER BY id")
    rows = db.execute(sql, (key, value) + ((scope,) if scope is not None else ())).fetchall()
    return [(mid, text, json.loads(meta)) for mid, text, meta in rows]
