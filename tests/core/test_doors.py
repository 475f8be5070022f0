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
    e = m.internals
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
    m.derive_pending()
    m.update(a, text="Alice moved to Munich in June.", meta={"k": 1})
    m.update(p, speaker="Bob", at=None)
    m.feedback(ids[0], engaged=True)
    r = m.recall("Where did Nadia fly for the Acme offsite?", session="s")  # records what it surfaced
    m.record(m.recall("Omar's new job", record=False), session="s")
    m.observe("Nadia flew to Lisbon for the offsite and stayed at the hotel.", session="s")
    m.observe("ok thanks", session="s")
    rep = m.consolidate()
    m.dissolve(rep.created[0])
    cats = m.propose_categories(min_members=2)
    m.approve_category(cats[0].id)
    m.revert_category(cats[0].id)
    m.reject_category(cats[0].id)
    m.review_alias(m.alias_candidates()[0]["id"], accept=True)
    prep = m.prepare(["A prepared memory about kayaks."])
    m.commit_prepared(prep, scope="hosts", mark=("job", 0), usage=[(1, 0)])
    m.write_vectors([ids[1]], m.embedder.encode(["a new vector"]))
    m.forget(ids[2])
    m.rebuild_structure()
    m.reembed(progress=False)
    m.rebuild_index()
    with m.internals.transaction() as tx:  # damage, for check to repair
        tx.db.execute("DELETE FROM usage WHERE memory_id=?", (ids[3],))
    assert not m.check().ok and m.check(repair=True).ok
    out = str(tmp_path / "export.jsonl")
    m.export_jsonl(out)
    with fastmem.Memory(str(tmp_path / "copy.db"), min_store=2) as other:
        outside = _watch(other)
        other.import_jsonl(out)
    m.flush()
    assert r.hits
    return outside


def test_every_write_verb_goes_through_the_transaction(tmp_path):
    with fastmem.Memory(str(tmp_path / "w.db"), min_store=2) as m:
        outside = _watch(m)
        in_import = _every_write_verb(m, tmp_path)
        assert outside == [] and in_import == []
        m.internals.db.exec_trace = None


def test_the_watch_sees_a_write_that_bypasses_the_transaction(tmp_path):
    with fastmem.Memory(str(tmp_path / "b.db"), extractor=None) as m:
        outside = _watch(m)
        m.remember("through the door")
        assert outside == []
        with m.internals.store.atomic() as db:  # the store's own transaction, not the engine's
            db.execute("INSERT INTO settings(key, value) VALUES ('planted', 'x')")
        assert outside == ["INSERT INTO settings(key, value)"]


READS = {
    "get": lambda m: m.get(1), "count": lambda m: m.count(), "len": lambda m: len(m), "newest": lambda m: m.newest(),
    "events": lambda m: m.events(1), "events_in": lambda m: m.events_in("Alice moved to Berlin."),
    "idf": lambda m: m.idf("move"), "pending_count": lambda m: m.pending_count(),
    "with_meta": lambda m: m.with_meta("k", 1), "texts": lambda m: m.texts(),
    "ids_with_text": lambda m: m.ids_with_text("x"), "most_used": lambda m: m.most_used(),
    "with_meta_key": lambda m: m.with_meta_key("k"), "scopes_in_use": lambda m: m.scopes_in_use(),
    "stats": lambda m: m.stats(), "batches_done": lambda m: m.batches_done("job"),
    "export_jsonl": lambda m: m.export_jsonl(None), "expand": lambda m: m.expand(1), "chunks": lambda m: m.chunks(),
    "chunks_of": lambda m: m.chunks_of(1), "categories": lambda m: m.categories(), "usage": lambda m: m.usage(1),
    "use_history": lambda m: m.use_history(1), "use_extremes": lambda m: m.use_extremes(),
    "use_timeline": lambda m: m.use_timeline(), "entity": lambda m: m.entity("Alice"),
    "entity_by_id": lambda m: m.entity_by_id(1), "neighbours": lambda m: m.neighbours("Alice"),
    "relation_path": lambda m: m.relation_path("Alice", "Berlin"), "facts": lambda m: m.facts(1),
    "entity_facts": lambda m: m.entity_facts("Alice"), "conflicting_facts": lambda m: m.conflicting_facts(["live_in"]),
    "alias_candidates": lambda m: m.alias_candidates(), "recall": lambda m: m.recall("Alice"),
    "recall_many": lambda m: m.recall_many(["Alice", "Berlin"]), "analogies": lambda m: m.analogies("Bob owns a car."),
    "locked": lambda m: m.locked().__enter__(), "check": lambda m: m.check(),
}
WRITES = {
    "remember": lambda m: m.remember("x"), "remember_many": lambda m: m.remember_many(["x"]),
    "update": lambda m: m.update(1, meta={"a": 1}), "forget": lambda m: m.forget(1),
    "feedback": lambda m: m.feedback(1), "observe": lambda m: m.observe("x", session="s"),
    "consolidate": lambda m: m.consolidate(), "propose_categories": lambda m: m.propose_categories(),
    "approve_category": lambda m: m.approve_category(1), "review_alias": lambda m: m.review_alias(1, accept=True),
    "commit_prepared": lambda m: m.commit_prepared(None), "write_vectors": lambda m: m.write_vectors([], np.zeros((0, 384))),
    "reembed": lambda m: m.reembed(), "rebuild_structure": lambda m: m.rebuild_structure(),
    "rebuild_index": lambda m: m.rebuild_index(), "derive_pending": lambda m: m.derive_pending(),
    "flush": lambda m: m.flush(), "prepare": lambda m: m.prepare(["x"]),
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
    with fastmem.Memory(path, min_store=2) as reader, fastmem.Memory(path, min_store=2) as writer:
        reader.remember_many(background(20))
        before = (reader.count(), reader.idf("telescope"), reader.scopes_in_use())
        mid = writer.remember("Zanele bought a telescope in Durban.", scope="elsewhere")
        assert reader.count() == before[0] + 1 and reader.scopes_in_use() == sorted(before[2] + ["elsewhere"])
        assert reader.idf("telescope") < before[1]  # one more memory holds the word
        assert reader.recall("Zanele's telescope", k=1, scope="elsewhere").hits[0].id == mid
        assert [e.name for e in reader.entity("Zanele")] == ["Zanele"]
