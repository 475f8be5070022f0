"""The SQLite file: what is not a store is refused, a failed commit leaves no transaction open,
a reader sees a writer process's commits."""

import os
import subprocess
import sys
import textwrap

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
    import apsw

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
