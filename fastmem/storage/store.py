"""The SQLite file: connection, pragmas, migrations and transactions.

One :class:`Store` owns one apsw connection. Every write in fastmem happens inside
``store.atomic()``, so a memory, its FTS row, its embedding, its facts, its structural code
and its usage row are committed together or not at all.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import threading
import time
import uuid
from collections.abc import Iterator

import apsw

from ..errors import StoreBusy, StoreCorrupt
from ..util.progress import AUTO_MIN, bar
from .schema import MIGRATIONS, SCHEMA_VERSION

__all__ = ["Store", "SCHEMA_VERSION", "probe", "FATAL"]

#: Errors of the file or the machine, which no text causes: a write or a recall that guards
#: against what one text can do (:mod:`fastmem.write.guard`) raises these, never records them.
FATAL = (MemoryError, apsw.FullError, apsw.IOError, apsw.BusyError, apsw.LockedError, apsw.InterruptError,
         apsw.CorruptError, apsw.NoMemError, apsw.ReadOnlyError, apsw.CantOpenError, apsw.ConnectionClosedError)

_MIGRATIONS_TABLE = "_fastmem_migrations"




#: Page size of new store files.
PAGE_SIZE = 8192
#: ``probe`` runs SQLite's page-level ``quick_check`` on files up to this size.
PROBE_CHECK_BYTES = 256 << 20


def _header_problem(path: str) -> str | None:
    """Why the file's SQLite header says it is not a whole database (None: it looks whole,
    or does not exist). Reads 100 bytes."""
    try:
        size = os.path.getsize(path)
        if size == 0:
            return None
        with open(path, "rb") as f:
            head = f.read(100)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read {path!r}: {exc}"
    if len(head) < 100 or head[:16] != b"SQLite format 3\x00":
        return f"{path!r} is not a SQLite file"
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    if head[24:28] == head[92:96] and pages * page > size:
        return f"{path!r} is truncated: its header says {pages * page:,} bytes, the file has {size:,}"
    return None


def probe(path: str | os.PathLike) -> str | None:
    """Why the file at ``path`` cannot be opened as a fastmem store, or None when it can (or
    does not exist yet: it will be created). Reads the header and the schema, never writes:
    cheap enough to call before deciding to use a store (a hermes provider's
    ``is_available``)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        parent = os.path.dirname(os.path.abspath(path))
        while not os.path.exists(parent):
            parent = os.path.dirname(parent)
        return None if os.access(parent, os.W_OK) else f"cannot create {path!r}: {parent!r} is not writable"
    reason = _header_problem(path)
    if reason:
        return reason
    size = os.path.getsize(path)
    if size == 0:
        return None
    try:
        db = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if _MIGRATIONS_TABLE not in tables:
                return None if not tables else f"{path!r} holds tables but no fastmem migrations: it is not a fastmem store"
            version = db.execute(f"SELECT max(version) FROM {_MIGRATIONS_TABLE}").fetchone()[0] or 0
            if version > SCHEMA_VERSION:
                return (f"{path!r} has schema version {version}, newer than this fastmem ({SCHEMA_VERSION}); "
                        "upgrade fastmem to open it")
            if size <= PROBE_CHECK_BYTES:
                ok = db.execute("PRAGMA quick_check(1)").fetchone()[0]
                if ok != "ok":
                    return f"{path!r} is damaged ({ok}); restore a backup"
        finally:
            db.close()
    except apsw.Error as exc:
        return f"{path!r} cannot be read as SQLite ({type(exc).__name__}: {exc})"
    return None


class Store:
    """Owns the apsw connection of one fastmem file.

    Parameters
    ----------
    path : str or os.PathLike
        The SQLite file; created with its parent folder when missing.
    busy_timeout_ms : int
        How long a write waits for another process's lock before failing.
    """

    def __init__(self, path: str | os.PathLike, *, busy_timeout_ms: int = 2_000, lock_wait_s: float = 120.0,
                 durable: bool = False, progress: bool | None = None) -> None:
        self.path = os.fspath(path)
        self.lock_wait_s = lock_wait_s
        self._savepoints = itertools.count()
        self._depth = 0
        # one thread's transaction at a time on the shared connection (re-entered by nested calls)
        self._tx_lock = threading.RLock()
        self._logged = False  # the change log exists (after the migrations)
        #: (first, last] change-log sequence ranges this connection committed, not yet caught up.
        self.own: list[tuple[int, int]] = []
        memory = self.path == ":memory:" or self.path.startswith("file::memory:")
        if not memory:
            parent = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(parent, exist_ok=True)
            reason = _header_problem(self.path)
            if reason:
                raise StoreCorrupt(f"{reason}; restore a backup or choose another path")
        self.db = None
        try:
            self.db = apsw.Connection(self.path)
            self.db.set_busy_timeout(busy_timeout_ms)
            # a new file gets 8 KiB pages: 5 vectors (1.5 KiB) a page instead of 2 in 4 KiB
            # pages (measured 2,053 -> ~1,640 bytes a memory); an existing file keeps its own
            self.db.execute(f"PRAGMA page_size={PAGE_SIZE}")
            self._retry(lambda: self.db.execute("PRAGMA journal_mode=WAL").fetchall())
            self.db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate(progress)
            self._logged = True
        except (apsw.NotADBError, apsw.CorruptError) as exc:
            self.close()
            raise StoreCorrupt(
                f"{self.path!r} is not a readable SQLite file ({exc}); restore a backup or "
                "choose another path"
            ) from exc
        except BaseException:
            self.close()
            raise

    def _retry(self, fn):
        """``fn()``, retried with backoff while another process holds the lock (each try
        already waits ``busy_timeout_ms``), for at most ``lock_wait_s``; then
        :class:`~fastmem.errors.StoreBusy`."""
        deadline = time.monotonic() + self.lock_wait_s
        delay = 0.02
        while True:
            try:
                return fn()
            except apsw.BusyError as exc:
                if time.monotonic() + delay > deadline:
                    raise StoreBusy(
                        f"{self.path!r}: another process held the write lock for over {self.lock_wait_s:g} s; "
                        "nothing was written, try again"
                    ) from exc
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 1.0)

    # -- migrations ------------------------------------------------------------------------
    def _migrate(self, progress: bool | None = None) -> None:
        """Apply the migrations this store lacks. An upgrade (a store written by an older
        fastmem) shows a bar, one step a migration, that keeps ticking while a long one runs
        (``progress=None``: for a store of :data:`fastmem.util.progress.AUTO_MIN` memories or more)."""
        db = self.db
        with self.atomic():  # IMMEDIATE, retried: two processes creating one store take turns
            db.execute(
                f"CREATE TABLE IF NOT EXISTS {_MIGRATIONS_TABLE}("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied REAL NOT NULL)"
            )
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        done = {r[0] for r in db.execute(f"SELECT version FROM {_MIGRATIONS_TABLE}")}
        if not done and tables - {_MIGRATIONS_TABLE}:
            raise StoreCorrupt(
                f"{self.path!r} holds tables but no fastmem migrations: it is not a fastmem store"
            )
        if done and max(done) > SCHEMA_VERSION:
            raise StoreCorrupt(
                f"{self.path!r} has schema version {max(done)}, newer than this fastmem "
                f"({SCHEMA_VERSION}); upgrade fastmem to open it"
            )
        todo = [v for v in range(1, SCHEMA_VERSION + 1) if v not in done]
        b = self._upgrade_bar(len(todo), progress) if done and todo else None
        try:
            for version, (name, fn) in enumerate(MIGRATIONS, start=1):
                if version in done:
                    continue
                if b is not None:
                    b.set_description(f"upgrading the store: {name}")
                with self.atomic():  # one transaction per migration
                    again = db.execute(
                        f"SELECT 1 FROM {_MIGRATIONS_TABLE} WHERE version=?", (version,)
                    ).fetchone()
                    if again:  # another process migrated meanwhile
                        continue
                    fn(db)
                    db.execute(
                        f"INSERT INTO {_MIGRATIONS_TABLE}(version, name, applied) VALUES (?,?,?)",
                        (version, name, time.time()),
                    )
                if b is not None:
                    b.update(1)
        finally:
            if b is not None:
                db.set_progress_handler(None)
                b.close()

    #: SQLite virtual-machine steps between two refreshes of the upgrade bar.
    UPGRADE_TICK = 2_000_000

    def _upgrade_bar(self, steps: int, progress: bool | None):
        """The upgrade's bar (None when not wanted); SQLite's progress handler refreshes it
        while one migration runs (an index over a million facts takes a minute)."""
        if progress is None:
            try:
                n = self.db.execute("SELECT count(*) FROM memories").fetchone()[0]
            except apsw.SQLError:  # no memories table yet
                n = 0
            progress = n >= AUTO_MIN
        b = bar(steps, "upgrading the store", progress, unit="step")
        if b is not None:
            def tick() -> bool:
                b.refresh()
                return False  # go on

            self.db.set_progress_handler(tick, self.UPGRADE_TICK)
        return b

    @property
    def schema_version(self) -> int:
        row = self.db.execute(f"SELECT max(version) FROM {_MIGRATIONS_TABLE}").fetchone()
        return int(row[0] or 0)

    def counts(self) -> dict:
        """What the file holds: memories, scopes, entities, facts, codes, chunks, categories
        per status, and the schema version (for :meth:`fastmem.Memory.admin.stats`)."""
        db = self.db
        one = lambda sql: db.execute(sql).fetchone()[0]  # noqa: E731
        return {"memories": one("SELECT count(*) FROM memories"),
                "scopes": one("SELECT count(DISTINCT scope) FROM memories"),
                "entities": one("SELECT count(*) FROM nodes"), "facts": one("SELECT count(*) FROM edges"),
                "codes": one("SELECT count(*) FROM codes"), "chunks": one("SELECT count(*) FROM chunks"),
                "categories": dict(db.execute("SELECT status, count(*) FROM categories GROUP BY status").fetchall()),
                "schema_version": self.schema_version}

    # -- transactions ----------------------------------------------------------------------
    @contextlib.contextmanager
    def atomic(self) -> Iterator[apsw.Connection]:
        """A transaction; nested calls become savepoints. Rolls back on any exception. Threads
        sharing the store take turns (a thread's transaction holds a re-entrant lock)."""
        with self._tx_lock:
            with self._atomic() as db:
                yield db

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[apsw.Connection]:
        """Reads that see one state of the file (a deferred read transaction): what another
        process commits between two of them is not seen. For reads only; inside a transaction,
        that transaction's view."""
        with self._tx_lock:
            if self._depth > 0 or self.db.in_transaction:
                yield self.db
                return
            self.db.execute("BEGIN")
            try:
                yield self.db
            finally:
                if self.db.in_transaction:
                    self.db.execute("COMMIT")

    @contextlib.contextmanager
    def _atomic(self) -> Iterator[apsw.Connection]:
        if self._depth == 0:
            self._retry(lambda: self.db.execute("BEGIN IMMEDIATE"))
            self._depth = 1
            try:
                first = self.log_seq() if self._logged else 0
                yield self.db
                last = self.log_seq() if self._logged else 0
                self.db.execute("COMMIT")
                if last > first:
                    self.own.append((first, last))
            except BaseException:
                if self.db.in_transaction:  # the body failed, or COMMIT did and left it open
                    self.db.execute("ROLLBACK")
                raise
            finally:
                self._depth = 0
        else:
            name = f"sp{next(self._savepoints)}"
            self.db.execute(f"SAVEPOINT {name}")
            self._depth += 1
            try:
                yield self.db
            except BaseException:
                self._depth -= 1
                self.db.execute(f"ROLLBACK TO {name}")
                self.db.execute(f"RELEASE {name}")
                raise
            self._depth -= 1
            self.db.execute(f"RELEASE {name}")

    def log_seq(self) -> int:
        """The newest change-log sequence number (0 when empty)."""
        return int(self.db.execute("SELECT coalesce(max(seq), 0) FROM change_log").fetchone()[0])

    def changes_since(self, seq: int) -> tuple[int, dict[str, set[int]]]:
        """Memories whose derived rows other connections changed after ``seq``, by part
        (``'vec'``, ``'code'``, ``'use'``: use weights), and the newest sequence number; this
        connection's own commits (:attr:`own`) are left out and forgotten. With ``seq`` older than what the log
        keeps (see :meth:`trim_log`), the parts come back as None: catch up on everything."""
        last = self.log_seq()
        out: dict[str, set[int]] = {"vec": set(), "code": set(), "use": set()}
        if last <= seq:
            self.own.clear()
            return last, out
        if seq < self.trimmed_to():
            self.own.clear()
            return last, {"vec": None, "code": None, "use": None}  # type: ignore[dict-item]
        own = sorted(self.own)
        for q, mid, part in self.db.execute("SELECT seq, memory_id, part FROM change_log WHERE seq>? AND seq<=?",
                                            (seq, last)):
            if not any(a < q <= b for a, b in own):
                out[part].add(mid)
        self.own.clear()
        return last, out

    def trimmed_to(self) -> int:
        """The change log holds every change after this sequence number."""
        return int(self.get_setting("change_log_trimmed", "0") or 0)

    def trim_log(self, db: apsw.Connection, keep: int) -> None:
        """Keep the newest ``keep`` log rows (a connection further behind catches up fully),
        inside the caller's transaction."""
        last = self.log_seq()
        if last - keep > self.trimmed_to():
            db.execute("DELETE FROM change_log WHERE seq<=?", (last - keep,))
            self.set_setting("change_log_trimmed", str(last - keep))

    def data_version(self) -> int:
        """Changes whenever another connection commits to the file."""
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    # -- settings --------------------------------------------------------------------------
    def identity(self) -> str:
        """The store's id (made on the first open, kept in the file): what its derived files
        belong to."""
        got = self.get_setting("store_id")
        if got is None:
            with self.atomic():
                self.db.execute("INSERT OR IGNORE INTO settings(key, value) VALUES ('store_id', ?)", (uuid.uuid4().hex,))
            got = self.get_setting("store_id")
        return got

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM settings WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_setting(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO settings(key, value) VALUES (?,?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
