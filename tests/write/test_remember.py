"""Writes: persistence, forget, bad input, all-or-nothing batches, times, updates, models."""


import pytest

import fastmem
from fastmem.errors import InvalidInput, ModelMismatch, NotFound
from fastmem.models.embedder import MiniLM
from fastmem.util.text import MAX_TEXT_CHARS
from tests.shared import noise_texts


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


class _OtherModel(MiniLM):
    model_id = "test/minilm-variant"


def test_model_mismatch_and_reembed(db_path):
    with fastmem.Memory(db_path) as m:
        a = m.remember("Kenji plays the cello in a community orchestra.")
    with pytest.raises(ModelMismatch, match="reembed"):
        fastmem.Memory(db_path, embedder=_OtherModel())
    with fastmem.Memory(db_path, embedder=_OtherModel(), reembed=True) as m:
        assert m.recall("who plays cello", k=1).hits[0].id == a
        models = {r[0] for r in m.admin.engine.db.execute("SELECT model FROM embeddings")}
        assert models == {"test/minilm-variant"}
