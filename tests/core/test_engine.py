"""The engine: the one owner of an open store's state; another process's writes are caught up
with by content; maintenance keeps every answer."""

import pytest

import fastmem
from tests.shared import noise_texts


def test_another_connections_update_is_seen_in_every_derived_part(tmp_path):
    """Regression: processes caught up on new rows and changed counts only, so an update()
    elsewhere (same count, same ids) left the old vector and structural sums in place, and
    the next save wrote that stale index back."""
    db = str(tmp_path / "m.db")
    with fastmem.Memory(db, analogy=fastmem.AnalogySettings(min_store=2)) as a, fastmem.Memory(db, analogy=fastmem.AnalogySettings(min_store=2)) as b:
        ids = a.remember_many(noise_texts(20) + ["Alice moved to Berlin in May."])
        assert b.recall("Alice", k=1, analogy=False).hits[0].id == ids[-1]  # b is caught up
        a.update(ids[-1], text="The violinist sold her old bicycle to a neighbour.")
        hit = b.recall("a musician selling a bike", k=1, channels=("vector",), analogy=False).hits[0]
        assert hit.id == ids[-1] and hit.text.startswith("The violinist")
        rep = b.admin.check()
        assert rep.ok, rep.problems  # index vectors and structural sums equal the rows
    with fastmem.Memory(db, analogy=fastmem.AnalogySettings(min_store=2)) as c:  # and what b saved on close is current too
        rep = c.admin.check(repair=False)
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
    with fastmem.Memory(db, analogy=fastmem.AnalogySettings(min_store=2)) as a, fastmem.Memory(db, analogy=fastmem.AnalogySettings(min_store=2)) as b:
        a.remember_many(noise_texts(20))
        b.recall("apple", k=1, analogy=False)
        before = len(loads)
        new = a.remember_many(["Alice moved from Lisbon to Berlin in May.", "Bob sold his boat to a fisherman."])
        hits = b.recall("Who sold a boat?", k=3, analogy=False).hits
        assert new[1] in [h.id for h in hits]
        assert len(loads) == before  # added, not read again
        assert b.admin.engine.structure.stats.n == a.admin.engine.structure.stats.n and b.admin.engine.structure.terms.n == a.admin.engine.structure.terms.n
        rep = b.admin.check()
        assert rep.ok, rep.problems  # the sums equal a recount of every code
        a.forget(new[0])
        b.recall("Alice", k=1, analogy=False)
        assert len(loads) == before + 1  # its old code is gone here: read again
        rep = b.admin.check()
        assert rep.ok, rep.problems


def test_another_connections_recall_and_feedback_read_no_code_again(tmp_path, monkeypatch):
    """A commit elsewhere that changed no code (a recall's usage rows, a feedback) costs this
    process no pass over the codes or the usage rows: every change of a code or of a use
    weight is in the change log by trigger, so none logged means none made, and the weights
    logged are read alone. (It counted and summed every code and read every usage row after
    each such commit: 27 + 4.6 ms at 100k memories, paid by every call of a server worker
    while the others recalled.) What the other process changed is still seen, exactly."""
    from fastmem.analogy.code_store import StructureIndex
    from fastmem.derived.usage import Ledger

    db = str(tmp_path / "m.db")
    checks, loads, weights = [], [], []
    real_sync, real_load, real_weights = StructureIndex.in_sync, StructureIndex.load, Ledger.load
    monkeypatch.setattr(StructureIndex, "in_sync", lambda self: (checks.append(1), real_sync(self))[1])
    monkeypatch.setattr(StructureIndex, "load", lambda self: (loads.append(1), real_load(self))[1])
    monkeypatch.setattr(Ledger, "load", lambda self: (weights.append(1), real_weights(self))[1])
    with fastmem.Memory(db, analogy=fastmem.AnalogySettings(min_store=2)) as a, fastmem.Memory(db, analogy=fastmem.AnalogySettings(min_store=2)) as b:
        ids = a.remember_many(noise_texts(20) + ["Bob sold his boat to a fisherman in June."])
        b.recall("apple", k=1, analogy=False)
        before = (len(checks), len(loads), len(weights))
        a.recall("Who sold a boat?", k=3)  # usage rows
        b.recall("a fisherman", k=3, analogy=False)
        a.feedback(ids[-1], engaged=True)
        a.feedback(ids[0], engaged=False)
        hits = b.recall("Who sold a boat?", k=3, analogy=False).hits
        assert (len(checks), len(loads), len(weights)) == before  # nothing read whole again
        assert hits[0].id == ids[-1] and b.use.counts(ids[-1])["engaged"] == 1
        seen = dict(b.admin.engine.ledger.weights)
        b.admin.engine.ledger.load()
        assert seen == b.admin.engine.ledger.weights and set(seen) == {ids[0], ids[-1]}  # a's feedback, exactly
        a.forget(ids[0])
        b.recall("apple", k=1, analogy=False)
        assert set(b.admin.engine.ledger.weights) == {ids[-1]}  # a forgotten memory's weight is gone
        rep = b.admin.check()
        assert rep.ok, rep.problems


def test_the_engine_is_the_one_owner_of_a_stores_state(tmp_path):
    """Memory.admin.engine is the engine; the slot's settings are one object under the names of
    Memory's keywords, checked on every change (a bad value changes nothing)."""
    with fastmem.Memory(str(tmp_path / "e.db"), extractor=None, analogy=fastmem.AnalogySettings(analogy_alpha=0.01, surface_rule="recall")) as m:
        e = m.admin.engine
        assert e.pipeline.index is e.index and e.pipeline.ledger is e.ledger and e.slot.structure is e.structure
        s = m.analogy.settings
        assert s is e.slot.settings and (s.analogy_alpha, s.surface_rule) == (0.01, "recall")
        s.analogy_alpha = 0.2
        assert e.slot.settings.analogy_alpha == 0.2
        with pytest.raises(fastmem.InvalidInput, match="analogy_alpha"):
            s.analogy_alpha = -1
        with pytest.raises(fastmem.InvalidInput, match="surface_rule"):
            s.surface_rule = "cosine"
        with pytest.raises(fastmem.InvalidInput, match="no analogy setting 'alpha'"):
            s.alpha = 0.1
        assert (s.analogy_alpha, s.surface_rule) == (0.2, "recall")


def test_reembedding_and_rebuilding_keep_every_answer(tmp_path):
    with fastmem.Memory(str(tmp_path / "r.db"), analogy=fastmem.AnalogySettings(min_store=2)) as m:
        m.remember_many(noise_texts(40) + ["Alice moved to Berlin in May.", "Acme owns Widget Inc."])
        before = [[h.id for h in m.recall(q, k=5, record=False).hits] for q in ("Alice Berlin", "who owns Widget")]
        codes = m.admin.stats()["codes"]
        m.admin.reembed(progress=False)
        assert m.analogy.rebuild() == codes
        m.admin.rebuild_index()
        after = [[h.id for h in m.recall(q, k=5, record=False).hits] for q in ("Alice Berlin", "who owns Widget")]
        assert after == before and m.admin.check().ok
