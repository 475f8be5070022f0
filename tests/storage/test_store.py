"""The SQLite file: what is not a store is refused, a failed commit leaves no transaction open,
a reader sees a writer process's commits."""

import os
import subprocess
import sys
import textwrap

import apsw
import pytest

import fastmem
from fastmem.errors import StoreCorrupt


def test_not_a_store_is_reported(tmp_path):
    p = tmp_path / "junk.db"
    p.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreCorrupt):
        fastmem.Memory(str(p))


def test_a_failed_commit_leaves_no_transaction_open(tmp_path):
    """Regression: the transaction depth went back to 0 before COMMIT, so a COMMIT that failed
    (here a deferred foreign key) left the transaction open and every later write failed."""
    from fastmem.storage.store import Store

    store = Store(str(tmp_path / "s.db"))
    with pytest.raises(apsw.ConstraintError):
        with store.atomic() as db:
            db.execute("PRAGMA defer_foreign_keys=ON")
            db.execute("INSERT INTO usage(memory_id) VALUES (424242)")  # no such memory: fails at COMMIT
    assert not store.db.in_transaction
    with store.atomic():
        store.set_setting("after", "ok")
    assert store.get_setting("after") == "ok"
    store.close()


WRITER = textwrap.dedent(
    """
    import sys, fastmem
    with fastmem.Memory(sys.argv[1], extractor=None) as m:
        for i in range(10):
            m.remember_many([f"writer batch {i} item {j} about lighthouses" for j in range(20)])
            print(i, flush=True)  # committed; the reader reads before the next batch
            sys.stdin.readline()
        m.remember("The lighthouse keeper's name is Ingrid Solberg.")
    """
)


def test_writer_process_while_this_process_reads(db_path):
    with fastmem.Memory(db_path) as reader:
        reader.remember("A first memory so the store exists.")
        env = dict(os.environ)
        proc = subprocess.Popen([sys.executable, "-c", WRITER, db_path], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        for i in range(10):  # between the other process's commits, each batch is seen at once
            assert proc.stdout.readline().strip() == str(i)
            assert len(reader) == 1 + 20 * (i + 1)
            hits = reader.recall(f"writer batch {i} item 7 about lighthouses", k=3, channels=("keyword", "vector"),
                                 record=False, analogy=False).hits
            assert hits and hits[0].text == f"writer batch {i} item 7 about lighthouses"
            proc.stdin.write("\n")
            proc.stdin.flush()
        assert proc.wait(timeout=300) == 0
        hits = reader.recall("who keeps the lighthouse", k=3, record=False).hits
        assert any("Ingrid" in h.text for h in hits)
        assert len(reader) == 202


def test_a_large_batch_gets_the_same_keyword_index_as_rows_written_a_few_at_a_time(tmp_path):
    """A batch of FTS_AT_ONCE_MIN rows or more writes its FTS rows in one statement after the
    rows (the per-row trigger off): the keyword index answers exactly as the trigger's, and a
    later row, update and delete still go through the triggers."""
    from fastmem.storage import memories as R
    from fastmem.storage.store import Store

    words = "harbour lantern keeper storm ferry gull tide rope anchor fog bell cliff".split()
    texts = [f"{words[i % 12]} {words[(i * 5) % 12]} note {i} about the {words[(i * 7) % 12]}s" for i in range(300)]
    assert len(texts) >= R.FTS_AT_ONCE_MIN
    rows = dict(scope="", source=None, meta_json="{}", at=None, speaker=None, ids=None, now=1.0)
    stores = [Store(str(tmp_path / "once.db")), Store(str(tmp_path / "few.db"))]
    with stores[0].atomic() as db:
        ids_once = R.insert(db, texts, **rows)
    ids_few = []
    for start in range(0, len(texts), 10):
        with stores[1].atomic() as db:
            ids_few += R.insert(db, texts[start : start + 10], **rows)
    assert ids_once == ids_few == list(range(1, 301))
    for st in stores:
        with st.atomic() as db:
            db.execute("UPDATE memories SET text='a storm over the lighthouse' WHERE id=7")
            db.execute("DELETE FROM memories WHERE id=8")
            R.insert(db, ["one more gull by the lighthouse"], **rows)

    def hits(st, q):
        return st.db.execute("SELECT rowid, bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ? "
                             "ORDER BY rank, rowid", (q,)).fetchall()

    for q in ("storm", "lantern OR keeper", "gull AND lighthouse", "note", "anchors", "lighthouse"):
        assert hits(stores[0], q) == hits(stores[1], q), q
    assert [r for r, _ in hits(stores[0], "lighthouse")] == [7, 301]
    for st in stores:
        assert R.text_index_problem(st.db) is None
        assert st.db.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, -1) == 1  # triggers on again
        st.close()
