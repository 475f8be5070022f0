"""The schema: migrations in order, each once; a store written by the previous release opens,
upgrades and keeps every memory, mark, use count and answer."""

import gzip
import shutil

import apsw

import fastmem
from fastmem.storage.schema import MIGRATIONS
from tests.shared import TESTDATA

#: Written by fastmem at schema 16 (the release before ``ingest_log`` was a migration): five
#: memories of one source with speakers, a resumable import's mark (job-1, batch 0), a feedback.
OLD = TESTDATA / "store-written-by-schema-16.db.gz"


def _old_store(tmp_path) -> str:
    path = tmp_path / "old.db"
    with gzip.open(OLD) as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return str(path)


def test_a_store_written_by_the_previous_release_opens_and_keeps_everything(tmp_path):
    path = _old_store(tmp_path)
    con = apsw.Connection(path)
    assert max(r[0] for r in con.execute("SELECT version FROM _fastmem_migrations")) == 16
    con.close()
    assert fastmem.probe(path) is None
    with fastmem.Memory(path) as m:  # its own hrr_dim (64) is kept, whatever the default
        st = m.admin.stats()
        assert st["schema_version"] == fastmem.SCHEMA_VERSION == len(MIGRATIONS) and st["memories"] == 5
        assert m.analogy.dim == 64 and m.admin.check().ok
        assert m.host.batches_done("job-1") == {0}  # the mark written before the table was a migration
        assert m.use.counts(1)["engaged"] == 1
        assert m.recall("Where does Alice live?", k=1).hits[0].text == "Alice moved to Berlin in May."
        assert [s.sentence for s in m.recall("Format your answers.", k=1).standing] == [
            "Always answer me in short bullet points from now on."]
        m.host.commit_prepared(m.host.prepare(["Another batch."]), mark=("job-1", 1))
        assert m.host.batches_done("job-1") == {0, 1}
    with fastmem.Memory(path) as m:  # and again, with nothing left to migrate
        assert m.count() == 6 and m.admin.check().ok


def test_each_migration_runs_once_in_order(tmp_path):
    path = str(tmp_path / "new.db")
    with fastmem.Memory(path, extractor=None) as m:
        m.remember("x")
    con = apsw.Connection(path)
    rows = con.execute("SELECT version, name FROM _fastmem_migrations ORDER BY version").fetchall()
    con.close()
    assert rows == [(i + 1, name) for i, (name, _) in enumerate(MIGRATIONS)]


def test_an_upgrade_shows_its_progress_when_asked(tmp_path, capsys, monkeypatch):
    """Opening a store written by an older release with ``progress=True`` shows the upgrade's bar
    on stderr, one step a migration, named after the one running and ticked while it runs (every
    UPGRADE_TICK SQLite steps: set low here); a fresh store and ``progress=False`` show none."""
    from fastmem.storage.store import Store

    monkeypatch.setattr(Store, "UPGRADE_TICK", 50)
    path = _old_store(tmp_path)
    with fastmem.Memory(path, progress=True, extractor=None):
        pass
    err = capsys.readouterr().err
    assert "upgrading the store: ingest_log" in err and f"/{len(MIGRATIONS) - 16} [" in err
    with fastmem.Memory(tmp_path / "fresh.db", progress=True, extractor=None):
        pass
    (tmp_path / "again").mkdir()
    with fastmem.Memory(_old_store(tmp_path / "again"), progress=False, extractor=None):
        pass
    assert "upgrading" not in capsys.readouterr().err


def test_an_open_lists_the_vectors_ids_and_models_without_reading_the_vectors(tmp_path):
    """Opening a store lists every vector's id (to check the saved index against the table)
    and the models that made them; both come from the (model, id) index, one seek a model,
    not from a scan of the table whose rows carry the 1.5 KB vectors (1.5 GB at a million
    memories, read from disk on a cold open: 100k memories opened cold in 1.3-1.6 s before,
    1.05-1.1 s after, same hour). A second model's vectors are still found."""
    from fastmem.derived import vectors as V

    db_path = str(tmp_path / "m.db")
    with fastmem.Memory(db_path, analogy=fastmem.AnalogySettings(min_store=2)) as m:
        m.remember_many(["Alice moved to Berlin.", "Bob sold his boat.", "Carol paints."])
        emb = m.admin.engine.embedder
    db = apsw.Connection(db_path)
    for q in ("SELECT memory_id FROM embeddings", V._MODELS):
        plan = " | ".join(r[3] for r in db.execute("EXPLAIN QUERY PLAN " + q))
        assert "embeddings" in plan and all("COVERING INDEX embeddings_model" in step for step in plan.split(" | ")
                                            if "embeddings" in step), plan
    assert V.other_models(db, emb) == []
    db.execute("UPDATE embeddings SET model='another/model' WHERE memory_id=2")
    assert V.other_models(db, emb) == ["another/model"]
    db.close()
