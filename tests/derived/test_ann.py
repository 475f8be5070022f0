"""The hnswlib index: a cache of the stored vectors, rebuilt when damaged, reconciled on open,
compacted on save, checked against its rows."""

import os

import pytest

import fastmem
from tests.shared import noise_texts


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
    m1.admin.flush()  # index saved with 50
    late = m1.remember("The emergency generator fuel is in shed B.")  # committed, index not saved
    # m1 "crashes": never closed, its index never saved again
    with fastmem.Memory(db_path) as m2:
        hits = m2.recall("where is the generator fuel", k=3, record=False).hits
        assert late in [h.id for h in hits]
        assert hits[0].why.get("vector", {}).get("rank") == 1
    m1.admin.engine.store.close()


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


def test_check_finds_an_index_vector_that_differs_from_its_row(mem):
    import numpy as np

    ids = mem.remember_many(noise_texts(10))
    mem.admin.engine.index.update(np.asarray([ids[3]]), np.ones((1, mem.admin.engine.index.dim), np.float32) / np.sqrt(mem.admin.engine.index.dim))
    rep = mem.admin.check()
    assert any("differ from their stored rows" in p.detail for p in rep.problems)
    assert mem.admin.check(repair=True).ok and mem.admin.check().ok
