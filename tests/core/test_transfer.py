"""Export and import: an import is one transaction."""


import pytest

import fastmem
from tests.shared import noise_texts


def test_a_failed_import_writes_nothing_and_a_rerun_writes_each_memory_once(tmp_path, monkeypatch):
    """Regression: import committed 256 memories at a time and its categories one by one, so a
    failure late in the file (here: approving its last category) left a half-imported store,
    and a rerun imported the first part twice. Now one file is one transaction."""
    from fastmem.passes import categories

    texts = noise_texts(300, seed=7) + [f"{x} owns a bakery in Lyon and sells bread to Tom Reed." for x in
                                        ("Anna Weber", "Boris Klein", "Carla Diaz", "Dana Wu")]
    with fastmem.Memory(str(tmp_path / "src.db")) as m:
        m.remember_many(texts, scope="s")
        for c in m.categories.propose(scope="s", min_members=2):
            m.categories.approve(c.id)
        assert m.categories.list(scope="s")
        m.admin.export_jsonl(str(tmp_path / "out.jsonl"))
    real = categories.approve

    def disk_full(store, cid):
        raise OSError("disk full")

    dst = str(tmp_path / "dst.db")
    monkeypatch.setattr(categories, "approve", disk_full)
    with fastmem.Memory(dst) as m:
        with pytest.raises(OSError):
            m.admin.import_jsonl(str(tmp_path / "out.jsonl"))
        assert len(m) == 0 and m.recall("apple river", record=False, analogy=False).hits == ()
    monkeypatch.setattr(categories, "approve", real)
    with fastmem.Memory(dst) as m:
        assert m.admin.import_jsonl(str(tmp_path / "out.jsonl")) == len(texts)
        assert sorted(r[0] for r in m.admin.engine.db.execute("SELECT text FROM memories")) == sorted(texts)
        assert [c.status for c in m.categories.list(scope="s")] == ["approved"] * len(m.categories.list(scope="s"))
        assert m.admin.check().ok


def test_an_export_imported_into_an_empty_store_is_the_same_store(tmp_path):
    src, dst, out = str(tmp_path / "a.db"), str(tmp_path / "b.db"), str(tmp_path / "a.jsonl")
    with fastmem.Memory(src, analogy=fastmem.AnalogySettings(min_store=2)) as a:
        ids = a.remember_many(noise_texts(30) + ["Alice moved to Berlin in May.", "Acme owns Widget Inc."],
                              source="chat", speaker="Alice")
        a.feedback(ids[-1])
        a.admin.export_jsonl(out, vectors=True)
        want = [(h.id, round(h.score, 5)) for h in a.recall("Who owns Widget?", k=5, record=False).hits]
        facts = [(f.subject, f.relation, f.object) for f in a.graph.facts(ids[-2])]
    with fastmem.Memory(dst, analogy=fastmem.AnalogySettings(min_store=2)) as b:
        assert b.admin.import_jsonl(out) == len(ids)
        assert [(h.id, round(h.score, 5)) for h in b.recall("Who owns Widget?", k=5, record=False).hits] == want
        assert [(f.subject, f.relation, f.object) for f in b.graph.facts(ids[-2])] == facts
        assert b.use.counts(ids[-1])["engaged"] == 1 and b.get(ids[0])["speaker"] == "Alice" and b.admin.check().ok
