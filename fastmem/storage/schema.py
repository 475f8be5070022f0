"""The store's schema: its versioned migrations, in order (applied by
:class:`fastmem.storage.store.Store` on open, each in its own transaction, recorded in
``_fastmem_migrations``). A new table is a new migration at the end; none is ever edited
after a release."""

from __future__ import annotations

from collections.abc import Callable

import apsw

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]


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
            part TEXT NOT NULL              -- 'vec' (embeddings) or 'code' (structural codes); 'use' since m19
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


def _m14_standing(db: apsw.Connection) -> None:
    db.execute(
        """
        -- standing instructions and preferences (fastmem.reader.standing): one statement per memory
        CREATE TABLE standing(
            rev INTEGER PRIMARY KEY AUTOINCREMENT,  -- grows with every write: readers see a change
            memory_id INTEGER NOT NULL UNIQUE REFERENCES memories(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,         -- 'instruction' or 'preference'
            polarity INTEGER NOT NULL,  -- +1 do / like, -1 don't / dislike
            sentence TEXT NOT NULL,     -- the statement
            topic TEXT NOT NULL,        -- its topic words, space-separated
            focus TEXT NOT NULL DEFAULT '',  -- its condition clause ("when I ask for ..."), or ''
            vec BLOB                    -- the sentence's embedding; NULL: the memory's own
        );
        """
    )


def _m15_windows(db: apsw.Connection) -> None:
    db.execute(
        """
        -- the window vectors of memories longer than the model's window (fastmem.derived.windows)
        CREATE TABLE windows(
            rev INTEGER PRIMARY KEY AUTOINCREMENT,  -- grows with every write: readers see a change
            memory_id INTEGER NOT NULL UNIQUE REFERENCES memories(id) ON DELETE CASCADE,
            n INTEGER NOT NULL,         -- windows
            vecs BLOB NOT NULL          -- n float32 unit vectors, one after the other
        );
        """
    )


def _m16_edge_postings(db: apsw.Connection) -> None:
    db.execute(
        """
        -- an entity's memories read from the index alone (the graph channel's postings): the
        -- (entity, memory) pairs in order, no table row visited
        CREATE INDEX edges_subj_memory ON edges(subj, memory_id);
        CREATE INDEX edges_obj_memory ON edges(obj, memory_id);
        DROP INDEX edges_subj;
        DROP INDEX edges_obj;
        """
    )


def _m17_ingest_log(db: apsw.Connection) -> None:
    db.execute(
        """
        -- batches of resumable imports written (fastmem.storage.marks); earlier releases made
        -- the table on a first mark, so a store may have it already
        CREATE TABLE IF NOT EXISTS ingest_log(
            job TEXT NOT NULL,
            batch INTEGER NOT NULL,
            rows INTEGER NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY(job, batch)
        ) WITHOUT ROWID;
        """
    )


def _m18_raw_ends(db: apsw.Connection) -> None:
    db.execute(
        """
        -- a fact's subject and object as the text wrote them where the reader resolved them
        -- ("I" -> the speaker: fastmem.reader.who); NULL: as the nodes name them
        ALTER TABLE edges ADD COLUMN subj_raw TEXT;
        ALTER TABLE edges ADD COLUMN obj_raw TEXT;
        """
    )


def _m19_use_log(db: apsw.Connection) -> None:  # and the embeddings' (model, id) index
    db.execute(
        """
        -- a change of a memory's use weight (feedback, an outcome, a repair) or of its usage
        -- row's existence goes into the change log as part 'use': other processes read only
        -- those weights again (a recall's surfaced counts change no weight and log nothing)
        CREATE TRIGGER usage_log_u AFTER UPDATE OF engaged, ignored, weight ON usage BEGIN
            INSERT INTO change_log(memory_id, part) VALUES (new.memory_id, 'use'); END;
        CREATE TRIGGER usage_log_d AFTER DELETE ON usage BEGIN
            INSERT INTO change_log(memory_id, part) VALUES (old.memory_id, 'use'); END;
        -- the vectors' models and ids without reading the vectors (an open lists both: a scan
        -- of the table read every 1.5 KB vector, 1.5 GB at a million memories)
        CREATE INDEX embeddings_model ON embeddings(model, memory_id);
        """
    )


def _m20_derive_failures(db: apsw.Connection) -> None:
    db.execute(
        """
        -- the parts of memories that could not be derived (fastmem.storage.failures): the memory
        -- is stored with the rest; deriving it again clears its rows
        CREATE TABLE derive_failures(
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            part TEXT NOT NULL,         -- 'reading' (facts, events, standing), 'facts', 'structure', 'all'
            error TEXT NOT NULL,        -- the exception's name
            message TEXT NOT NULL,
            reader TEXT NOT NULL,       -- the reader's version that failed
            at REAL NOT NULL,
            PRIMARY KEY(memory_id, part)
        ) WITHOUT ROWID;
        """
    )


def _m21_plots(db: apsw.Connection) -> None:
    db.execute(
        """
        -- each memory's plot (fastmem.analogy.plots): its clauses rendered without their clothes,
        -- embedded; only memories whose text tells one (two clauses or more with a content verb)
        CREATE TABLE plots(
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            n INTEGER NOT NULL,         -- clauses
            centroid BLOB NOT NULL,     -- their mean vector, float16
            vecs BLOB NOT NULL,         -- n float16 vectors, one after the other
            clauses TEXT NOT NULL       -- the n rendered clauses, a JSON list (what the slot shows)
        );
        {triggers}
        """.format(triggers="\n".join(
            f"CREATE TRIGGER plots_log_{op[0].lower()} AFTER {op} ON plots BEGIN "
            f"INSERT INTO change_log(memory_id, part) VALUES ({row}.memory_id, 'code'); END;"
            for op, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old"))))
    )


def _m22_fact_mood(db: apsw.Connection) -> None:
    db.execute(
        """
        -- what the text says of a fact (fastmem.reader.mood): 'asserted', 'planned' ("I'll book
        -- the tapas place") or 'negated'; questions, wishes and conditions are not stored
        ALTER TABLE edges ADD COLUMN mood TEXT NOT NULL DEFAULT 'asserted';
        """
    )


def _m23_fact_detail(db: apsw.Connection) -> None:
    db.execute(
        """
        -- what completes a fact, as its text says it (fastmem.results.Fact.detail): "to the
        -- museum" of (Melanie, take, kids); '' for none and for facts written before
        ALTER TABLE edges ADD COLUMN detail TEXT NOT NULL DEFAULT '';
        """
    )


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
    ("standing", _m14_standing),
    ("windows", _m15_windows),
    ("edge_postings", _m16_edge_postings),
    ("ingest_log", _m17_ingest_log),
    ("raw_ends", _m18_raw_ends),
    ("use_log", _m19_use_log),
    ("derive_failures", _m20_derive_failures),
    ("plots", _m21_plots),
    ("fact_mood", _m22_fact_mood),
    ("fact_detail", _m23_fact_detail),
]
SCHEMA_VERSION = len(MIGRATIONS)
