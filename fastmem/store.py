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
from collections.abc import Callable, Iterator

import apsw

from .errors import StoreBusy, StoreCorrupt

__all__ = ["Store", "SCHEMA_VERSION", "probe"]

_MIGRATIONS_TABLE = "_fastmem_migrations"


def _m1_core(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE memories(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            text TEXT NOT NULL,
            scope TEXT NOT NULL DEFAULT '',
            source TEXT,
            created REAL NOT NULL,
            updated REAL NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX memories_scope ON memories(scope, id);
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            text, content='memories', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER memories_au AFTER UPDATE OF text ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
            INSERT INTO memories_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TABLE embeddings(
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vec BLOB NOT NULL
        );
        CREATE TABLE usage(
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            surfaced INTEGER NOT NULL DEFAULT 0,
            engaged INTEGER NOT NULL DEFAULT 0,
            ignored INTEGER NOT NULL DEFAULT 0,
            last_surfaced REAL
        );
        CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """
    )


def _m2_graph(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE nodes(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            key TEXT NOT NULL UNIQUE,          -- canonical key (folded name)
            name TEXT NOT NULL,                -- display name as first seen
            type TEXT NOT NULL DEFAULT 'thing'
        );
        CREATE TABLE aliases(
            alias TEXT NOT NULL,               -- folded alias
            node_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
            PRIMARY KEY(alias, node_id)
        ) WITHOUT ROWID;
        CREATE INDEX aliases_node ON aliases(node_id);
        CREATE TABLE alias_candidates(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            node_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
            other_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
            score REAL NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            UNIQUE(node_id, other_id)
        );
        CREATE TABLE edges(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            pos INTEGER NOT NULL,
            subj INTEGER NOT NULL REFERENCES nodes(id),
            rel TEXT NOT NULL,
            rel_raw TEXT NOT NULL,
            obj INTEGER NOT NULL REFERENCES nodes(id)
        );
        CREATE INDEX edges_memory ON edges(memory_id);
        CREATE INDEX edges_subj ON edges(subj);
        CREATE INDEX edges_obj ON edges(obj);
        """
    )


def _m3_structure(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE codes(
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            dim INTEGER NOT NULL,
            code BLOB NOT NULL                 -- int8 [round(127 cos v); round(127 sin v)]
        );
        CREATE TABLE hrr_stats(
            dim INTEGER PRIMARY KEY,
            n INTEGER NOT NULL,
            id_sum INTEGER NOT NULL,           -- fingerprint of the code set the sums describe
            s BLOB NOT NULL,
            m BLOB NOT NULL
        );
        """
    )


def _m4_usage_events(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE usage_events(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id INTEGER NOT NULL,
            session TEXT,
            turn INTEGER,
            channel TEXT NOT NULL,
            ts REAL NOT NULL,
            outcome INTEGER                    -- NULL pending, 1 engaged, 0 ignored
        );
        CREATE INDEX usage_events_session ON usage_events(session, turn);
        ALTER TABLE usage ADD COLUMN weight REAL NOT NULL DEFAULT 1.0;
        """
    )


def _m5_events(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE events(
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            events TEXT NOT NULL               -- JSON [[verb, [subject fillers], [object fillers]], ...]
        );
        CREATE TABLE event_df(
            word TEXT PRIMARY KEY,             -- verb or filler
            n INTEGER NOT NULL                 -- memories whose events contain it
        ) WITHOUT ROWID;
        ALTER TABLE codes ADD COLUMN nterms INTEGER NOT NULL DEFAULT 1;
        """
    )


def _m6_time(db: apsw.Connection) -> None:
    db.execute(
        """
        ALTER TABLE memories ADD COLUMN at REAL;   -- when it happened (unix seconds, UTC); NULL: unknown
        CREATE INDEX memories_source ON memories(source, id) WHERE source IS NOT NULL;
        """
    )


def _m7_chunks(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE chunks(
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,  -- the chunk's own memory
            scope TEXT NOT NULL,
            signature TEXT NOT NULL,           -- digest of the sorted member ids
            version INTEGER NOT NULL DEFAULT 1,  -- +1 each time the pass changes it
            summarizer TEXT NOT NULL,
            created REAL NOT NULL,
            updated REAL NOT NULL
        );
        CREATE TABLE chunk_members(
            chunk_id INTEGER NOT NULL REFERENCES chunks(memory_id) ON DELETE CASCADE,
            member_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            PRIMARY KEY(chunk_id, member_id)
        ) WITHOUT ROWID;
        CREATE INDEX chunk_members_member ON chunk_members(member_id);
        """
    )


def _m8_categories(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE categories(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'proposed',   -- proposed, approved, rejected
            fingerprint TEXT NOT NULL UNIQUE,          -- digest of the shared relational fingerprint
            relations TEXT NOT NULL,                   -- JSON [[direction, relation], ...]
            created REAL NOT NULL,
            decided REAL,
            node_id INTEGER REFERENCES nodes(id) ON DELETE SET NULL  -- the graph node, once approved
        );
        CREATE TABLE category_members(
            category_id INTEGER NOT NULL REFERENCES categories(id) ON DELETE CASCADE,
            node_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
            PRIMARY KEY(category_id, node_id)
        ) WITHOUT ROWID;
        CREATE INDEX category_members_node ON category_members(node_id);
        """
    )


def _m9_terms(db: apsw.Connection) -> None:
    db.execute(
        """
        ALTER TABLE codes ADD COLUMN terms BLOB;   -- int64 hashes of the code's distinct terms
        """
    )


def _m10_speaker(db: apsw.Connection) -> None:
    db.execute(
        """
        ALTER TABLE memories ADD COLUMN speaker TEXT;   -- who said or wrote it; NULL: not given
        """
    )


def _m11_pending(db: apsw.Connection) -> None:
    db.execute(
        """
        -- memories committed before their derived parts (embedding, facts, events, code): the
        -- text, FTS row and usage row are written at once, the rest by whoever has the models
        CREATE TABLE pending(
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            triples TEXT    -- the caller's triples as JSON; NULL: extract them from the text
        );
        """
    )


def _m12_change_log(db: apsw.Connection) -> None:
    db.execute(
        """
        -- every change of a derived row, in commit order: other processes catch up on content
        -- (an update keeps the row count), not only on counts
        CREATE TABLE change_log(
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id INTEGER NOT NULL,
            part TEXT NOT NULL              -- 'vec' (embeddings) or 'code' (structural codes)
        );
        {triggers}
        ALTER TABLE hrr_stats ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;  -- the log as of the saved sums
        """.format(triggers="\n".join(
            f"CREATE TRIGGER {table}_log_{op[0].lower()} AFTER {op} ON {table} BEGIN "
            f"INSERT INTO change_log(memory_id, part) VALUES ({row}.memory_id, '{part}'); END;"
            for table, part in (("embeddings", "vec"), ("codes", "code"))
            for op, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old"))))
    )


def _m13_category_scope(db: apsw.Connection) -> None:
    db.execute("ALTER TABLE categories ADD COLUMN scope TEXT;  -- the scope proposed for; NULL: store-wide")


MIGRATIONS: list[tuple[str, Callable[[apsw.Connection], None]]] = [
    ("core", _m1_core),
    ("graph", _m2_graph),
    ("structure", _m3_structure),
    ("usage_events", _m4_usage_events),
    ("events", _m5_events),
    ("time", _m6_time),
    ("chunks", _m7_chunks),
    ("categories", _m8_categories),
    ("terms", _m9_terms),
    ("speaker", _m10_speaker),
    ("pending", _m11_pending),
    ("change_log", _m12_change_log),
    ("category_scope", _m13_category_scope),
]
SCHEMA_VERSION = len(MIGRATIONS)


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
                 durable: bool = False) -> None:
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
            self._migrate()
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
    def _migrate(self) -> None:
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
        for version, (name, fn) in enumerate(MIGRATIONS, start=1):
            if version in done:
                continue
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

    @property
    def schema_version(self) -> int:
        row = self.db.execute(f"SELECT max(version) FROM {_MIGRATIONS_TABLE}").fetchone()
        return int(row[0] or 0)

    def counts(self) -> dict:
        """What the file holds: memories, scopes, entities, facts, codes, chunks, categories
        per status, and the schema version (for :meth:`fastmem.Memory.stats`)."""
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
        (``'vec'``, ``'code'``), and the newest sequence number; this connection's own
        commits (:attr:`own`) are left out and forgotten. With ``seq`` older than what the log
        keeps (see :meth:`trim_log`), the parts come back as None: catch up on everything."""
        last = self.log_seq()
        out: dict[str, set[int]] = {"vec": set(), "code": set()}
        if last <= seq:
            self.own.clear()
            return last, out
        if seq < self.trimmed_to():
            self.own.clear()
            return last, {"vec": None, "code": None}  # type: ignore[dict-item]
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

    def trim_log(self, keep: int) -> None:
        """Keep the newest ``keep`` log rows (a connection further behind catches up fully)."""
        last = self.log_seq()
        if last - keep > self.trimmed_to():
            with self.atomic() as db:
                db.execute("DELETE FROM change_log WHERE seq<=?", (last - keep,))
                self.set_setting("change_log_trimmed", str(last - keep))

    def data_version(self) -> int:
        """Changes whenever another connection commits to the file."""
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    # -- settings --------------------------------------------------------------------------
    def identity(self) -> str:
        """The store's id (made once, kept in the file): what its derived files belong to."""
        with self.atomic():
            self.db.execute("INSERT OR IGNORE INTO settings(key, value) VALUES ('store_id', ?)", (uuid.uuid4().hex,))
        return self.get_setting("store_id")

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
