"""``Memory.host.transaction()``: one SQLite transaction and the process's own state brought up after
its COMMIT only: never after a rollback, every part even when one fails."""

import pytest

import fastmem
from tests.shared import noise_texts


@pytest.fixture
def m(tmp_path):
    with fastmem.Memory(str(tmp_path / "t.db"), extractor=None) as mem:
        mem.remember_many(noise_texts(30))
        yield mem


def test_a_callers_transaction_commits_rows_and_the_index_follows(m):
    vec = m.admin.embedder.encode(["The boathouse key hangs behind the door."])
    with m.host.transaction() as tx:
        mid = m.remember("The boathouse key hangs behind the door.")  # a verb inside joins it
        tx.db.execute("UPDATE memories SET meta=? WHERE id=?", ('{"by": "caller"}', mid))
        assert m.admin.engine.tx is tx
    assert m.admin.engine.tx is None
    assert m.get(mid)["meta"] == {"by": "caller"}
    hit = m.recall("where is the boathouse key", k=1, record=False).hits[0]
    assert hit.id == mid and hit.why["vector"]["rank"] == 1 and float(m.admin.engine.index.get([mid])[0] @ vec[0]) > 0.99


def test_a_body_that_raises_leaves_neither_rows_nor_index_entries(m):
    n, live = m.count(), m.admin.engine.index.live
    with pytest.raises(RuntimeError, match="caller"):
        with m.host.transaction():
            a = m.remember("A memory that is rolled back.")
            m.remember_many(["Two more.", "Rolled back too."], scope="other")
            raise RuntimeError("the caller's own failure after fastmem's rows")
    assert m.count() == n and m.admin.engine.index.live == live and m.rows.scopes() == [""]
    with pytest.raises(fastmem.NotFound):
        m.get(a)
    assert all(h.id != a for h in m.recall("a memory that is rolled back", record=False).hits)


def test_what_follows_a_commit_runs_after_it_and_never_after_a_rollback(m):
    ran = []
    with m.host.transaction() as tx:
        tx.after(lambda: ran.append("committed"))
        assert ran == []
    assert ran == ["committed"]
    with pytest.raises(ValueError):
        with m.host.transaction() as tx:
            tx.after(lambda: ran.append("rolled back"))
            raise ValueError
    assert ran == ["committed"]


def test_every_part_follows_the_file_even_when_one_step_fails(m):
    def fail():
        raise RuntimeError("a step of the process's state failed")

    with pytest.raises(RuntimeError, match="a step"):
        with m.host.transaction() as tx:
            tx.after(fail)  # the first step to run after COMMIT fails...
            mid = m.remember("Written before a failing step.")
            m.feedback(2)
    assert m.get(mid)["text"] == "Written before a failing step."  # committed
    assert mid in set(m.admin.engine.index.labels().tolist())  # ...and the index still followed
    assert m.admin.engine.ledger.weights[2][0] > 1.0  # and so did the use weights


def test_a_nested_transaction_joins_the_outer_one(m):
    n = m.count()
    with pytest.raises(KeyError):
        with m.host.transaction() as outer:
            with m.host.transaction() as inner:
                assert inner is outer
                m.remember("inner")
            m.feedback(1)
            raise KeyError("outer")
    assert m.count() == n and m.use.counts(1)["engaged"] == 0
