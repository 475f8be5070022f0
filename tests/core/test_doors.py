"""The engine's two doors: every write verb goes through the transaction, every read verb
through the read door (open, locked, caught up with other processes)."""

import re

import numpy as np
import pytest

import fastmem
from fastmem.errors import InvalidInput
from tests.shared import STORIES, background

WRITE = re.compile(r"^\s*(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.I)
#: FTS5's integrity check is spelled as an INSERT of a command; it reads.
FTS_COMMAND = re.compile(r"INSERT INTO memories_fts\(memories_fts, rank\) VALUES \('integrity-check'")


def _watch(m):
    """Record every statement that writes while the engine has no transaction open."""
    e = m.admin.engine
    outside: list[str] = []

    def trace(cursor, sql, bindings):
        if WRITE.match(sql) and not FTS_COMMAND.match(sql) and e.tx is None:
            outside.append(" ".join(sql.split()[:4]))
        return True

    e.db.exec_trace = trace
    return outside


def _every_write_verb(m, tmp_path):
    """Each write verb of Memory once, on a store that has what each needs."""
    ids = m.remember_many([t for v in STORIES.values() for t in v] + background(60), source="s1",
                          speaker="Nadia")
    a = m.remember("Alice moved to Berlin in May.", at="2024-05-02", speaker="user")
    m.remember_many(["Alexandra Kowalski runs the chemistry lab.", "Alexandria Kowalsky joined the chemistry lab."])
    p = m.remember("Pending text about the Lisbon office.", wait=False)
    m.pending.derive()
    m.update(a, text="Alice moved to Munich in June.", meta={"k": 1})
    m.update(p, speaker="Bob", at=None)
    m.feedback(ids[0], engaged=True)
    r = m.recall("Where did Nadia fly for the Acme offsite?", session="s")  # records what it surfaced
    m.host.record(m.recall("Omar's new job", record=False), session="s")
    m.host.observe("Nadia flew to Lisbon for the offsite and stayed at the hotel.", session="s")
    m.host.observe("ok thanks", session="s")
    rep = m.consolidate()
    m.chunks.dissolve(rep.created[0])
    cats = m.categories.propose(min_members=2)
    m.categories.approve(cats[0].id)
    m.categories.revert(cats[0].id)
    m.categories.reject(cats[0].id)
    m.graph.review_alias(m.graph.alias_candidates()[0]["id"], accept=True)
    prep = m.host.prepare(["A prepared memory about kayaks."])
    m.host.commit_prepared(prep, scope="hosts", mark=("job", 0), usage=[(1, 0)])
    m.host.write_vectors([ids[1]], m.admin.embedder.encode(["a new vector"]))
    m.forget(ids[2])
    m.analogy.rebuild()
    m.admin.reembed(progress=False)
    m.admin.rebuild_index()
    with m.admin.engine.transaction() as tx:  # damage, for check to repair
        tx.db.execute("DELETE FROM usage WHERE memory_id=?", (ids[3],))
    assert not m.admin.check().ok and m.admin.check(repair=True).ok
    out = str(tmp_path / "export.jsonl")
    m.admin.export_jsonl(out)
    with fastmem.Memory(str(tmp_path / "copy.db"), analogy=fastmem.AnalogySettings(min_store=2)) as other:
        outside = _watch(other)
        other.admin.import_jsonl(out)
    m.admin.flush()
    assert r.hits
    return outside


def test_every_write_verb_goes_through_the_transaction(tmp_path):
    with fastmem.Memory(str(tmp_path / "w.db"), analogy=fastmem.AnalogySettings(min_store=2)) as m:
        outside = _watch(m)
        in_import = _every_write_verb(m, tmp_path)
        assert outside == [] and in_import == []
        m.admin.engine.db.exec_trace = None


def test_the_watch_sees_a_write_that_bypasses_the_transaction(tmp_path):
    with fastmem.Memory(str(tmp_path / "b.db"), extractor=None) as m:
        outside = _watch(m)
        m.remember("through the door")
        assert outside == []
        with m.admin.engine.store.atomic() as db:  # the store's own transaction, not the engine's
            db.execute("INSERT INTO settings(key, value) VALUES ('planted', 'x')")
        assert outside == ["INSERT INTO settings(key, value)"]


READS = {
    "get": lambda m: m.get(1), "count": lambda m: m.count(), "len": lambda m: len(m), "newest": lambda m: m.rows.newest(),
    "events": lambda m: m.analogy.events(1), "events_in": lambda m: m.analogy.events_in("Alice moved to Berlin."),
    "idf": lambda m: m.analogy.idf("move"), "pending_count": lambda m: m.pending.count(),
    "with_meta": lambda m: m.rows.with_meta("k", 1), "texts": lambda m: m.rows.texts(),
    "ids_with_text": lambda m: m.rows.with_text("x"), "most_used": lambda m: m.use.most_used(),
    "with_meta_key": lambda m: m.rows.with_meta_key("k"), "scopes_in_use": lambda m: m.rows.scopes(),
    "stats": lambda m: m.admin.stats(), "batches_done": lambda m: m.host.batches_done("job"),
    "export_jsonl": lambda m: m.admin.export_jsonl(None), "expand": lambda m: m.expand(1), "chunks": lambda m: m.chunks.list(),
    "chunks_of": lambda m: m.chunks.containing(1), "categories": lambda m: m.categories.list(), "usage": lambda m: m.use.counts(1),
    "use_history": lambda m: m.use.history(1), "use_extremes": lambda m: m.use.extremes(),
    "use_timeline": lambda m: m.use.timeline(), "entity": lambda m: m.graph.entity("Alice"),
    "entity_by_id": lambda m: m.graph.entity_by_id(1), "neighbours": lambda m: m.graph.neighbours("Alice"),
    "relation_path": lambda m: m.graph.path("Alice", "Berlin"), "facts": lambda m: m.graph.facts(1),
    "entity_facts": lambda m: m.graph.facts_about("Alice"), "conflicting_facts": lambda m: m.graph.conflicts(["live_in"]),
    "alias_candidates": lambda m: m.graph.alias_candidates(), "recall": lambda m: m.recall("Alice"),
    "recall_many": lambda m: m.recall_many(["Alice", "Berlin"]), "analogies": lambda m: m.analogy.explore("Bob owns a car."),
    "locked": lambda m: m.host.locked().__enter__(), "check": lambda m: m.admin.check(),
}
WRITES = {
    "remember": lambda m: m.remember("x"), "remember_many": lambda m: m.remember_many(["x"]),
    "update": lambda m: m.update(1, meta={"a": 1}), "forget": lambda m: m.forget(1),
    "feedback": lambda m: m.feedback(1), "observe": lambda m: m.host.observe("x", session="s"),
    "consolidate": lambda m: m.consolidate(), "propose_categories": lambda m: m.categories.propose(),
    "approve_category": lambda m: m.categories.approve(1), "review_alias": lambda m: m.graph.review_alias(1, accept=True),
    "commit_prepared": lambda m: m.host.commit_prepared(None), "write_vectors": lambda m: m.host.write_vectors([], np.zeros((0, 384))),
    "reembed": lambda m: m.admin.reembed(), "rebuild_structure": lambda m: m.analogy.rebuild(),
    "rebuild_index": lambda m: m.admin.rebuild_index(), "derive_pending": lambda m: m.pending.derive(),
    "flush": lambda m: m.admin.flush(), "prepare": lambda m: m.host.prepare(["x"]),
}


@pytest.fixture(scope="module")
def closed(tmp_path_factory):
    m = fastmem.Memory(str(tmp_path_factory.mktemp("closed") / "c.db"))
    m.remember("Alice moved to Berlin in May.")
    m.close()
    return m


@pytest.mark.parametrize("verb", sorted(READS) + sorted(WRITES))
def test_every_verb_of_a_closed_memory_says_so(closed, verb):
    with pytest.raises(InvalidInput, match="closed"):
        (READS.get(verb) or WRITES[verb])(closed)


def test_every_read_verb_sees_another_processs_commit_at_once(tmp_path):
    """The read door catches up before each read: a second connection (another process's)
    writes, and every in-process structure a read uses follows (counts, the ANN index, the word
    statistics, the graph, the scopes)."""
    path = str(tmp_path / "two.db")
    with fastmem.Memory(path, analogy=fastmem.AnalogySettings(min_store=2)) as reader, fastmem.Memory(path, analogy=fastmem.AnalogySettings(min_store=2)) as writer:
        reader.remember_many(background(20))
        before = (reader.count(), reader.analogy.idf("telescope"), reader.rows.scopes())
        mid = writer.remember("Zanele bought a telescope in Durban.", scope="elsewhere")
        assert reader.count() == before[0] + 1 and reader.rows.scopes() == sorted(before[2] + ["elsewhere"])
        assert reader.analogy.idf("telescope") < before[1]  # one more memory holds the word
        assert reader.recall("Zanele's telescope", k=1, scope="elsewhere").hits[0].id == mid
        assert [e.name for e in reader.graph.entity("Zanele")] == ["Zanele"]
