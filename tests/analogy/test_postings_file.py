"""The term postings a large store keeps beside it (``<store>.terms``): read on open instead of
rebuilt from every memory's terms, caught up with what changed since, and never used where
the store's own change log cannot vouch for them."""

import os
import shutil

import pytest

import fastmem
from fastmem.analogy import code_store
from tests.shared import NARRATIVES

TEXTS = NARRATIVES + [
    "The baker Ines moved from Faro to Lyon in April and rented a shop by the station.",
]
TURN = "My cousin Ana moved from Porto to Madrid in June and rented a room by the park."


@pytest.fixture
def saved_when_small(monkeypatch):
    """Every store counts as large enough to keep its postings in a file."""
    monkeypatch.setattr(code_store, "TERMS_FILE_MIN", 1)


def _answers(path):
    with fastmem.Memory(path, progress=False) as m:
        r = m.recall(TURN, k=5)
        got = ([h.id for h in r.hits], r.analogy.id if r.analogy else None, m.analogy.explore(TURN, k=5))
        assert m.admin.check().ok, m.admin.check()
        return m.admin.engine.structure.terms_source, got


def _without_file(path, tmp_path):
    """The same store's answers with its postings built from the table (a copy, no file)."""
    other = str(tmp_path / "copy" / "s.db")
    os.makedirs(os.path.dirname(other))
    for suffix in ("", ".hnsw", ".hnsw.json"):
        shutil.copyfile(path + suffix, other + suffix)
    return _answers(other)


def test_a_large_store_reopens_from_its_saved_postings_with_the_same_answers(tmp_path, saved_when_small):
    path = str(tmp_path / "s.db")
    with fastmem.Memory(path, progress=False) as m:
        m.remember_many(TEXTS)
    assert os.path.getsize(path + ".terms") > 0
    source, got = _answers(path)
    assert source == "file"
    assert _without_file(path, tmp_path) == ("table", got)
    assert got[1] is not None  # the analogy slot found its candidate through the loaded postings


def test_a_small_store_keeps_no_postings_file(tmp_path):
    path = str(tmp_path / "s.db")
    with fastmem.Memory(path, progress=False) as m:
        m.remember_many(TEXTS)
    assert not os.path.exists(path + ".terms") and _answers(path)[0] == "table"


def test_changes_made_after_the_save_are_caught_up_on_open(tmp_path, monkeypatch, saved_when_small):
    path = str(tmp_path / "s.db")
    with fastmem.Memory(path, progress=False) as m:
        ids = m.remember_many(TEXTS)
    monkeypatch.setattr(code_store, "TERMS_FILE_MIN", 10**9)  # this session leaves the file as it was
    with fastmem.Memory(path, progress=False) as m:
        m.forget(ids[0])
        m.update(ids[3], text="Bob mended the rusty scooter and gave it to his nephew in the city.")
        m.remember("Ines moved her bakery from Lyon to Porto and hired two apprentices.")
    monkeypatch.setattr(code_store, "TERMS_FILE_MIN", 1)
    stale = open(path + ".terms", "rb").read()
    source, got = _answers(path)
    assert source == "file"  # caught up, not rebuilt
    assert _without_file(path, tmp_path) == ("table", got)
    assert open(path + ".terms", "rb").read() != stale  # and written again, current, at that close
    assert _answers(path) == ("file", got)


def test_postings_the_store_cannot_vouch_for_are_not_used(tmp_path, monkeypatch, saved_when_small):
    path, other = str(tmp_path / "s.db"), str(tmp_path / "other.db")
    for p, texts in ((path, TEXTS), (other, TEXTS[::-1])):
        with fastmem.Memory(p, progress=False) as m:
            m.remember_many(texts)
    good = open(path + ".terms", "rb").read()

    shutil.copyfile(other + ".terms", path + ".terms")  # another store's file
    assert _answers(path)[0] == "table"
    assert open(path + ".terms", "rb").read() != good  # written again at that close

    assert _answers(path)[0] == "file"  # the store's own again
    current = open(path + ".terms", "rb").read()
    with open(path + ".terms", "wb") as f:  # the store's own, truncated
        f.write(current[:-8])
    assert _answers(path)[0] == "table"

    monkeypatch.setattr(code_store, "TERMS_FILE_MIN", 10**9)
    monkeypatch.setattr("fastmem.core.engine.LOG_KEEP", 1)  # the log keeps less than the file needs
    with fastmem.Memory(path, progress=False) as m:
        m.remember("The orchestra rehearsed the new symphony twice before the premiere.")
    monkeypatch.setattr(code_store, "TERMS_FILE_MIN", 1)
    assert _answers(path)[0] == "table"


def test_two_connections_that_write_and_close_in_turn_leave_current_postings(tmp_path, saved_when_small):
    path = str(tmp_path / "s.db")
    with fastmem.Memory(path, progress=False) as m:
        ids = m.remember_many(TEXTS[:6])
    a, b = fastmem.Memory(path, progress=False), fastmem.Memory(path, progress=False)
    a.remember(TEXTS[6])
    b.remember(TEXTS[7])
    a.forget(ids[1])
    a.close()  # saves what it holds, b's memory included
    b.remember(TEXTS[8])
    b.update(ids[2], text=TEXTS[9])
    b.close()
    source, got = _answers(path)
    assert source == "file" and _without_file(path, tmp_path) == ("table", got)
