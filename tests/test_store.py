"""Foundation: persistence, recall among many, scopes, index rebuild, bad input, processes."""

import os
import subprocess
import sys
import textwrap

import pytest

import fastmem
from fastmem.errors import InvalidInput, ModelMismatch, NotFound, StoreCorrupt
from fastmem.models.embedder import MiniLM
from fastmem.util.text import MAX_TEXT_CHARS
from tests.conftest import noise_texts

PLANTED = {
    "The wifi password at the Lisbon office is blue-heron-42.": "what is the wifi password in Lisbon",
    "Dr. Okafor prescribed amoxicillin for Maya's ear infection.": "which antibiotic did Maya get",
    "Our team standup moved to 9:45 on Tuesdays.": "when is the standup meeting",
    "Grandma's apple pie recipe needs two cups of brown sugar.": "how much sugar goes in the pie",
}


@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("big") / "big.db")
    with fastmem.Memory(path) as m:
        m.remember_many(noise_texts(1200), scope="u1")
        ids = {t: m.remember(t, scope="u1") for t in PLANTED}
        m.remember("The wifi password at the Porto office is red-fox-7.", scope="u2")
    return path, ids


def test_planted_memories_found_among_1000_after_reopen(big_store):
    path, ids = big_store
    with fastmem.Memory(path) as m:
        assert m.count() == 1200 + len(PLANTED) + 1
        for text, q in PLANTED.items():
            hits = m.recall(q, k=5, scope="u1").hits
            assert ids[text] in [h.id for h in hits], q
            top = next(h for h in hits if h.id == ids[text])
            assert top.text == text
            assert set(top.why) & {"keyword", "vector"}


def test_scope_isolation(big_store):
    path, _ = big_store
    with fastmem.Memory(path) as m:
        u1 = m.recall("wifi password office", k=10, scope="u1").hits
        u2 = m.recall("wifi password office", k=10, scope="u2").hits
        everyone = m.recall("wifi password office", k=10).hits
    assert all(h.scope == "u1" for h in u1) and not any("Porto" in h.text for h in u1)
    assert [h.text for h in u2] == ["The wifi password at the Porto office is red-fox-7."]
    assert any("Porto" in h.text for h in everyone) and any("Lisbon" in h.text for h in everyone)


def test_hit_explains_channels(mem):
    mid = mem.remember("Alice moved to Berlin in May.", scope="user:alice")
    hit = mem.recall("where does Alice live?", k=3, scope="user:alice").hits[0]
    assert hit.id == mid and hit.score > 0
    assert hit.why["vector"]["rank"] == 1 and "score" in hit.why["vector"]
    assert hit.why["keyword"]["rank"] == 1


def test_persistence_and_forget(db_path):
    with fastmem.Memory(db_path) as m:
        a = m.remember("The spare key is under the blue flowerpot.", meta={"src": "chat"}, source="msg-1")
        b = m.remember("Parking permits renew every March.")
    with fastmem.Memory(db_path) as m:
        got = m.get(a)
        assert got["text"] == "The spare key is under the blue flowerpot."
        assert got["meta"] == {"src": "chat"} and got["source"] == "msg-1"
        m.forget(a)
        with pytest.raises(NotFound):
            m.forget(a)
        with pytest.raises(NotFound):
            m.get(a)
    with fastmem.Memory(db_path) as m:
        ids = [h.id for h in m.recall("where is the spare key", k=5).hits]
        assert a not in ids and b in ids and len(m) == 1


@pytest.mark.parametrize("damage", ["delete", "truncate", "garbage"])
def test_index_rebuilds_when_damaged(db_path, damage):
    texts = noise_texts(300, seed=3) + ["The boiler service code is 7741-K."]
    with fastmem.Memory(db_path) as m:
        m.remember_many(texts)
        before = [(h.id, round(h.score, 6)) for h in m.recall("boiler service code", k=5, record=False).hits]
    idx = db_path + ".hnsw"
    assert os.path.exists(idx)
    if damage == "delete":
        os.remove(idx)
    elif damage == "truncate":
        with open(idx, "r+b") as f:
            f.truncate(os.path.getsize(idx) // 2)
    else:
        with open(idx, "wb") as f:
            f.write(b"not an index" * 100)
    with fastmem.Memory(db_path) as m:
        after = [(h.id, round(h.score, 6)) for h in m.recall("boiler service code", k=5, record=False).hits]
    assert after == before


def test_crash_between_commit_and_index_save_loses_nothing(db_path):
    m1 = fastmem.Memory(db_path)
    m1.remember_many(noise_texts(50, seed=4))
    m1.flush()  # index saved with 50
    late = m1.remember("The emergency generator fuel is in shed B.")  # committed, index not saved
    # m1 "crashes": never closed, its index never saved again
    with fastmem.Memory(db_path) as m2:
        hits = m2.recall("where is the generator fuel", k=3, record=False).hits
        assert late in [h.id for h in hits]
        assert hits[0].why.get("vector", {}).get("rank") == 1
    m1.internals.store.close()


def test_bad_inputs_raise_clear_errors(mem):
    for bad in ("", "   \n\t", None, 42, b"bytes"):
        with pytest.raises((InvalidInput, TypeError, ValueError)):
            mem.remember(bad)
    with pytest.raises(InvalidInput, match="maximum"):
        mem.remember("x" * (MAX_TEXT_CHARS + 1))
    mem.remember("y" * MAX_TEXT_CHARS)  # the maximum itself is accepted, stored whole
    assert len(mem.recall("yyyy", k=1).hits[0].text) == MAX_TEXT_CHARS
    for k in (0, -1, 1.5, True):
        with pytest.raises(InvalidInput):
            mem.recall("anything", k=k)
    with pytest.raises(InvalidInput):
        mem.recall("   ")
    with pytest.raises(NotFound):
        mem.forget(999_999)
    with pytest.raises(InvalidInput):
        mem.forget("1")
    with pytest.raises(InvalidInput):
        mem.remember_many("not a list")


def test_failed_remember_many_writes_nothing(mem):
    mem.remember("existing memory about tea")
    n = len(mem)
    with pytest.raises(InvalidInput):
        mem.remember_many(["good text", "", "another good text"])
    with pytest.raises(InvalidInput):
        mem.remember_many(["good", "also good"], triples=[[("a", "b")], None])
    with pytest.raises(InvalidInput):
        mem.remember_many(["good"], meta={"x": object()})
    assert len(mem) == n
    assert [h.text for h in mem.recall("good text", k=5).hits] == ["existing memory about tea"]


FTS_NASTIES = ['"', 'NEAR(a b', "a OR", "-x", "col:val", "((", ")", "\x00\x01", "'; drop table memories; --",
               "*", "a AND NOT b", '"unterminated', "ünïcödé 東京 🙂", "^start", "text:*", "{a b}", "a\\b"]


@pytest.mark.parametrize("q", FTS_NASTIES)
def test_fts_syntax_never_raises_or_changes_store(mem, q):
    mem.remember_many(["plain memory one about a drop table", "second memory near the text"])
    snapshot = mem.internals.db.execute("SELECT group_concat(id || text, '|') FROM memories").fetchone()
    if q.strip():
        mem.recall(q, k=3)
    else:
        with pytest.raises(InvalidInput):
            mem.recall(q, k=3)
    assert mem.internals.db.execute("SELECT group_concat(id || text, '|') FROM memories").fetchone() == snapshot
    assert len(mem) == 2


class _OtherModel(MiniLM):
    model_id = "test/minilm-variant"


def test_model_mismatch_and_reembed(db_path):
    with fastmem.Memory(db_path) as m:
        a = m.remember("Kenji plays the cello in a community orchestra.")
    with pytest.raises(ModelMismatch, match="reembed"):
        fastmem.Memory(db_path, embedder=_OtherModel())
    with fastmem.Memory(db_path, embedder=_OtherModel(), reembed=True) as m:
        assert m.recall("who plays cello", k=1).hits[0].id == a
        models = {r[0] for r in m.internals.db.execute("SELECT model FROM embeddings")}
        assert models == {"test/minilm-variant"}


def test_not_a_store_is_reported(tmp_path):
    p = tmp_path / "junk.db"
    p.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreCorrupt):
        fastmem.Memory(str(p))


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


def test_at_is_stored_and_shown_in_hits(mem):
    from datetime import datetime, timezone

    a = mem.remember("Melanie painted a sunrise over the lake.", at="2023-05-08T13:56:00+02:00", source="chat-1")
    b, c = mem.remember_many(["Caroline went to a support group.", "Jon opened a dance studio."],
                             at=[datetime(2023, 5, 7, 9, 0), None], source="chat-1")
    hits = {h.id: h for h in mem.recall("when did Melanie paint a sunrise", k=3).hits}
    assert hits[a].at == datetime(2023, 5, 8, 11, 56, tzinfo=timezone.utc)
    assert mem.get(b)["at"] == datetime(2023, 5, 7, 9, 0, tzinfo=timezone.utc)  # naive: taken as UTC
    assert mem.get(c)["at"] is None and mem.get(c)["source"] == "chat-1"
    n = len(mem)
    for bad in ("yesterday", 20230508, float("nan")):
        with pytest.raises(InvalidInput):
            mem.remember("a memory with a bad time", at=bad)
    with pytest.raises(InvalidInput, match="entries"):
        mem.remember_many(["one", "two"], at=["2023-05-08"])
    assert len(mem) == n


def test_update_changes_every_channel(mem):
    mem.remember_many(noise_texts(50, seed=5))
    mid = mem.remember("The spare key is under the blue flowerpot.", meta={"v": 1})
    mem.update(mid, text="The spare key is now in the kitchen drawer.", meta={"v": 2})
    assert mem.get(mid)["text"] == "The spare key is now in the kitchen drawer." and mem.get(mid)["meta"] == {"v": 2}
    hits = mem.recall("kitchen drawer", k=3, record=False).hits
    assert hits[0].id == mid and {"keyword", "vector"} <= set(hits[0].why)
    assert mid not in [h.id for h in mem.recall("flowerpot", k=3, record=False, channels=("keyword",)).hits]
    assert len(mem) == 51
    with pytest.raises(NotFound):
        mem.update(10**6, text="nothing here")
    with pytest.raises(InvalidInput):
        mem.update(mid, text="")


def test_a_word_asked_before_it_was_written_is_found_after(mem):
    """Regression: the keyword channel cached a word's count of 0 and kept it until the store
    grew by a tenth, so what was written after a miss stayed unfound."""
    mem.remember_many(noise_texts(30))
    assert not mem.recall("my locker code", channels=("keyword",), analogy=False).hits
    mid = mem.remember("My locker code is 4417.")
    assert [h.id for h in mem.recall("my locker code", channels=("keyword",), analogy=False).hits] == [mid]


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


def test_another_connections_update_is_seen_in_every_derived_part(tmp_path):
    """Regression: processes caught up on new rows and changed counts only, so an update()
    elsewhere (same count, same ids) left the old vector and structural sums in place, and
    the next save wrote that stale index back."""
    db = str(tmp_path / "m.db")
    with fastmem.Memory(db, min_store=2) as a, fastmem.Memory(db, min_store=2) as b:
        ids = a.remember_many(noise_texts(20) + ["Alice moved to Berlin in May."])
        assert b.recall("Alice", k=1, analogy=False).hits[0].id == ids[-1]  # b is caught up
        a.update(ids[-1], text="The violinist sold her old bicycle to a neighbour.")
        hit = b.recall("a musician selling a bike", k=1, channels=("vector",), analogy=False).hits[0]
        assert hit.id == ids[-1] and hit.text.startswith("The violinist")
        rep = b.check()
        assert rep.ok, rep.problems  # index vectors and structural sums equal the rows
    with fastmem.Memory(db, min_store=2) as c:  # and what b saved on close is current too
        rep = c.check(repair=False)
        assert rep.ok, rep.problems


def test_another_connections_new_memories_are_added_not_reloaded(tmp_path, monkeypatch):
    """Regression: any code written by another process made this one read every code again
    (the statistics and the term index: 2.8 s a recall at 100k memories while another
    process wrote). New memories elsewhere are now added from the change log; an update or
    a forget elsewhere (whose old code is gone) still reloads. The sums stay exact."""
    from fastmem.analogy.code_store import StructureIndex

    db = str(tmp_path / "m.db")
    loads = []
    real = StructureIndex.load
    monkeypatch.setattr(StructureIndex, "load", lambda self: (loads.append(1), real(self))[1])
    with fastmem.Memory(db, min_store=2) as a, fastmem.Memory(db, min_store=2) as b:
        a.remember_many(noise_texts(20))
        b.recall("apple", k=1, analogy=False)
        before = len(loads)
        new = a.remember_many(["Alice moved from Lisbon to Berlin in May.", "Bob sold his boat to a fisherman."])
        hits = b.recall("Who sold a boat?", k=3, analogy=False).hits
        assert new[1] in [h.id for h in hits]
        assert len(loads) == before  # added, not read again
        assert b.internals.structure.stats.n == a.internals.structure.stats.n and b.internals.structure.terms.n == a.internals.structure.terms.n
        rep = b.check()
        assert rep.ok, rep.problems  # the sums equal a recount of every code
        a.forget(new[0])
        b.recall("Alice", k=1, analogy=False)
        assert len(loads) == before + 1  # its old code is gone here: read again
        rep = b.check()
        assert rep.ok, rep.problems


def test_check_finds_an_index_vector_that_differs_from_its_row(mem):
    import numpy as np

    ids = mem.remember_many(noise_texts(10))
    mem.internals.index.update(np.asarray([ids[3]]), np.ones((1, mem.internals.index.dim), np.float32) / np.sqrt(mem.internals.index.dim))
    rep = mem.check()
    assert any("differ from their stored rows" in p.detail for p in rep.problems)
    assert mem.check(repair=True).ok and mem.check().ok


def test_a_failed_import_writes_nothing_and_a_rerun_writes_each_memory_once(tmp_path, monkeypatch):
    """Regression: import committed 256 memories at a time and its categories one by one, so a
    failure late in the file (here: approving its last category) left a half-imported store,
    and a rerun imported the first part twice. Now one file is one transaction."""
    from fastmem.passes import categories

    texts = noise_texts(300, seed=7) + [f"{x} owns a bakery in Lyon and sells bread to Tom Reed." for x in
                                        ("Anna Weber", "Boris Klein", "Carla Diaz", "Dana Wu")]
    with fastmem.Memory(str(tmp_path / "src.db")) as m:
        m.remember_many(texts, scope="s")
        for c in m.propose_categories(scope="s", min_members=2):
            m.approve_category(c.id)
        assert m.categories(scope="s")
        m.export_jsonl(str(tmp_path / "out.jsonl"))
    real = categories.approve

    def disk_full(store, cid):
        raise OSError("disk full")

    dst = str(tmp_path / "dst.db")
    monkeypatch.setattr(categories, "approve", disk_full)
    with fastmem.Memory(dst) as m:
        with pytest.raises(OSError):
            m.import_jsonl(str(tmp_path / "out.jsonl"))
        assert len(m) == 0 and m.recall("apple river", record=False, analogy=False).hits == ()
    monkeypatch.setattr(categories, "approve", real)
    with fastmem.Memory(dst) as m:
        assert m.import_jsonl(str(tmp_path / "out.jsonl")) == len(texts)
        assert sorted(r[0] for r in m.internals.db.execute("SELECT text FROM memories")) == sorted(texts)
        assert [c.status for c in m.categories(scope="s")] == ["approved"] * len(m.categories(scope="s"))
        assert m.check().ok


def test_deleted_labels_are_reclaimed_on_save(tmp_path):
    """Regression: hnswlib keeps a deleted label's vector and node for ever, so a store with
    churn grew its index file without bound. A save compacts once more than a quarter of the
    labels are deleted; recall is unchanged."""
    import numpy as np

    from fastmem.derived.ann import COMPACT_MIN, VectorIndex

    rng = np.random.default_rng(0)
    n = 4 * COMPACT_MIN
    vecs = rng.standard_normal((n, 32)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    path = str(tmp_path / "i.hnsw")
    ix = VectorIndex(path, dim=32, model_id="m")
    ix.open(np.zeros(0, np.int64), lambda ids: vecs[ids - 1])
    ix.add(np.arange(1, n + 1), vecs)
    ix.save()
    full = os.path.getsize(path)
    gone = np.arange(1, 3 * COMPACT_MIN + 2)
    ix.delete(gone)
    before = ix.query(vecs[-1], 5)[0].tolist()
    ix.save()
    assert os.path.getsize(path) < full / 2
    again = VectorIndex(path, dim=32, model_id="m")
    assert again.open(np.arange(3 * COMPACT_MIN + 2, n + 1), lambda ids: vecs[ids - 1]) == "loaded"
    assert again.query(vecs[-1], 5)[0].tolist() == before and before[0] == n
    assert set(again.labels().tolist()) == set(range(3 * COMPACT_MIN + 2, n + 1))


def test_processes_closing_one_store_at_once_each_save_the_index(tmp_path):
    """Regression (../shared/acceptance/concurrency.sh): every writer saved the vector index
    through one temporary name, so two closing at the same moment renamed it away from under
    each other (FileNotFoundError at close). Four threads save two indexes of one file at once."""
    import threading

    import numpy as np

    from fastmem.derived.ann import VectorIndex

    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((300, 32)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    path = str(tmp_path / "shared.hnsw")
    errors, start = [], threading.Barrier(4)

    def save(part):
        ix = VectorIndex(path, dim=32, model_id="m")
        ix.open(np.zeros(0, np.int64), lambda ids: vecs[ids - 1])
        ix.add(np.arange(1, 301), vecs)
        start.wait()
        try:
            for _ in range(15):
                ix.save()
        except Exception as exc:  # noqa: BLE001 - the test reports what any thread hit
            errors.append(repr(exc))

    threads = [threading.Thread(target=save, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]  # no temporary file left behind
    again = VectorIndex(path, dim=32, model_id="m")
    assert again.open(np.arange(1, 301), lambda ids: vecs[ids - 1]) == "loaded"


def test_reconcile_makes_the_live_labels_the_tables_ids():
    """The index follows the table on open: stale labels hidden, missing ones added, a label
    deleted here but present in the table revived, and nothing done when they agree."""
    import numpy as np

    from fastmem.derived.ann import VectorIndex

    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((20, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    fetch = lambda ids: vecs[np.asarray(ids) - 1]  # noqa: E731
    ix = VectorIndex(None, dim=16, model_id="m")
    ix.open(np.zeros(0, np.int64), fetch)
    ix.add(np.arange(1, 11), vecs[:10])
    ix.delete([3])
    table = np.asarray([11, 5, 1, 2, 3, 4, 12], np.int64)  # 6-10 gone, 3 back, 11-12 new (any order)
    assert ix.reconcile(table, fetch) is True
    assert sorted(ix.labels().tolist()) == [1, 2, 3, 4, 5, 11, 12] and ix.live == 7 and ix.max_id == 12
    assert ix.query(vecs[2], 1)[0].tolist() == [3] and ix.query(vecs[11], 1)[0].tolist() == [12]
    assert ix.reconcile(table, fetch) is False
