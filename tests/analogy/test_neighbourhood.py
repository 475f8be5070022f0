"""The slot's default surface rule: the turn's own surface neighbourhood is never the analogy."""

import json
import math
from pathlib import Path

import pytest

import fastmem
import fastmem.analogy.slot as slot_module
from tests.shared import FACTS

KINDS = ("analogy", "literal", "false", "appearance")


@pytest.fixture(scope="module")
def story_store(tmp_path_factory):
    """Every set of tests/data/stories.json but its base, in one store: ``(memory, sets, kind of id)``."""
    sets = json.loads((Path(__file__).resolve().parents[1] / "data" / "stories.json").read_text())["sets"]
    texts = [(s["id"], k, s[k]) for s in sets for k in KINDS]
    m = fastmem.Memory(str(tmp_path_factory.mktemp("stories") / "s.db"))
    ids = m.remember_many([t for _, _, t in texts], progress=False)
    yield m, sets, {i: (sid, kind) for i, (sid, kind, _) in zip(ids, texts)}
    m.close()


def _picks(m, sets, kind_of, session):
    out = []
    for s, r in zip(sets, m.recall_many([s["base"] for s in sets], k=5, record=False, session=session)):
        if r.analogy is not None:
            sid, kind = kind_of[r.analogy.id]
            out.append(kind if sid == s["id"] else "other")
    return out


def test_a_retelling_among_the_turns_nearest_is_never_the_analogy(story_store):
    m, sets, kind_of = story_store
    assert m.analogy.settings.surface_rule == "neighbourhood"
    picks = _picks(m, sets, kind_of, "default")
    assert "literal" not in picks and "appearance" not in picks
    assert picks.count("analogy") >= 3  # the rule leaves the true analogies to the slot
    m.analogy.settings.surface_rule = "band"  # the rule before: a retelling in a store this small passes
    try:
        loose = _picks(m, sets, kind_of, "band")
    finally:
        m.analogy.settings.surface_rule = "neighbourhood"
    assert "literal" in loose or "appearance" in loose


def test_a_plot_whose_events_also_correspond_speaks_below_the_plot_views_own_gate(story_store):
    m, sets, kind_of = story_store
    assert m.analogy.settings.plot_mapped_margin == 1.0
    both = _picks(m, sets, kind_of, "both views")
    m.analogy.settings.plot_mapped_margin = math.inf  # the plot view alone, at sqrt(2 ln N) + 3
    try:
        alone = _picks(m, sets, kind_of, "plot alone")
    finally:
        m.analogy.settings.plot_mapped_margin = 1.0
    assert both.count("analogy") > alone.count("analogy")
    assert set(both) == {"analogy"}  # what the second view lets through is each set's own true analogy


def test_a_memory_that_retells_an_excluded_neighbour_is_excluded_with_it(mem, monkeypatch):
    mem.remember_many(FACTS * 3)
    near = mem.remember("The pump pulls water out of the well; the filter cleans that water; the tank then stores it.")
    again = mem.remember("First the pump pulls the water out of the well, next the filter cleans it, "
                         "and at last the tank stores it.")
    turn = "The pump pulls water from the well, the filter cleans the water and the tank stores it."
    s = mem.analogy.settings
    s.analogy_literal_max, s.surface_objects, s.surface_max, s.surface_z = 1.0, 1.0, None, 99.0
    s.surface_exclude = 1  # the turn's one nearest memory is its neighbourhood
    first = mem.recall(turn, k=5, record=False, session="a")
    assert first.hits[0].id == near
    assert first.analogy is None or first.analogy.id not in (near, again)
    monkeypatch.setattr(slot_module, "RETOLD", 2.0)  # no memory retells another
    an = mem.recall(turn, k=5, record=False, session="b").analogy
    assert an is not None and an.id == again
