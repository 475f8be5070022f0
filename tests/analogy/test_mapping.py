"""Structure mapping (the analogy slot's second stage), its significance, and event order from
temporal markers."""

import math

import fastmem
from fastmem.analogy.mapping import Mapper, VerbBits, log2_choose
from fastmem.reader.extract import SpacyExtractor

PUMP = [("pull", ("pump",), ("water",)), ("clean", ("filter",), ("water",)), ("store", ("tank",), ("water",))]


def test_mapping_is_one_to_one_and_keeps_order():
    m = Mapper()
    same = m.map(PUMP, [("pull", ("server",), ("record",)), ("clean", ("parser",), ("record",)),
                        ("store", ("database",), ("record",))])
    shuffled = m.map(PUMP, [("store", ("database",), ("record",)), ("clean", ("parser",), ("record",)),
                            ("pull", ("server",), ("record",))])
    assert same.pairs == ((0, 0), (1, 1), (2, 2)) and len(shuffled.pairs) == 1
    assert same.score > shuffled.score and same.units == 9
    repeated = m.map(PUMP, [("pull", ("a",), ("b",))] * 3)  # one turn event maps once
    assert len(repeated.pairs) == 1


def test_consistent_role_bindings_add_connectivity():
    m = Mapper()
    connected = m.map(PUMP, [("pull", ("pump",), ("oil",)), ("clean", ("filter",), ("oil",)), ("store", ("tank",), ("oil",))])
    scattered = m.map(PUMP, [("pull", ("pump",), ("oil",)), ("clean", ("filter",), ("sand",)), ("store", ("tank",), ("gas",))])
    assert connected.score > scattered.score


def test_units_tell_a_lone_verb_from_a_structure():
    m = Mapper()
    assert m.map([("hike", ("@person",), ())], [("hike", ("@person",), ("park",))]).units == 2
    assert m.map([("own", ("@person",), ("car",))], [("own", ("@organisation",), ("@organisation",))]).units == 3
    assert m.map([("own", ("@person",), ("car",))], [("sell", ("@person",), ("car",))]).units == 0


def test_skeleton_verbs_never_correspond():
    m = Mapper()
    chat = [("let", (), ("@person",)), ("know", ("@person",), ()), ("hope", ("@person",), ()), ("have", ("@person",), ("weekend",))]
    assert m.map(chat, list(chat)).pairs == () and m.map(chat, list(chat)).score == 0.0
    assert VerbBits()("know") == 0.0 and VerbBits()("not_like") == 0.0 and VerbBits()("absorb") > 0


def test_a_verb_is_weighed_by_how_often_other_memories_have_it():
    counts = {"absorb": 40, "evaporate": 1}
    bits = VerbBits(lambda v: counts.get(v, 0), lambda: 1000)
    assert bits("evaporate") > bits("absorb") > 0
    # the candidate's own occurrence is left out: a verb only it has is as rare as an unseen one
    assert bits("evaporate", own=1, own_total=3) == VerbBits(lambda v: 0, lambda: 997)("evaporate")


def test_the_expected_chance_matches_grow_with_the_store_and_fall_with_the_evidence():
    m = Mapper()
    two = m.map(PUMP[:2], PUMP[:2])
    three = m.map(PUMP, PUMP)
    assert three.surprise > two.surprise
    assert three.log2_expected(10_000) - three.log2_expected(100) == math.log2(100)
    assert 0.0 < three.p_value(100) < three.p_value(10_000) <= 1.0
    # the choice of which events correspond is paid for: one pair among many is worth less
    long_cand = PUMP[:1] + [("sort", ("x",), ("y",)), ("label", ("x",), ("y",)), ("ship", ("x",), ("y",))]
    one_of_many = m.map(PUMP[:1], long_cand)
    assert one_of_many.surprise == one_of_many.score - log2_choose(4, 1)


def test_the_same_things_doing_the_same_is_literal_similarity():
    m = Mapper()
    retold = m.map(PUMP, [("pull", ("pump",), ("water",)), ("clean", ("filter",), ("water",)), ("store", ("tank",), ("water",))])
    analog = m.map(PUMP, [("pull", ("server",), ("record",)), ("clean", ("parser",), ("record",)),
                          ("store", ("database",), ("record",))])
    assert retold.literal == 1.0 and analog.literal == 0.0
    assert "water->record" in analog.fillers


def test_synonymous_relations_correspond_partly():
    vecs = {"emit": [1.0, 0.0], "send": [0.9, 0.43589], "eat": [0.0, 1.0]}
    m = Mapper(verb_vectors=lambda vs: [vecs[v] for v in vs])
    assert 0 < m.map([("emit", (), ("wave",))], [("send", (), ("wave",))]).score < m.map(
        [("emit", (), ("wave",))], [("emit", (), ("wave",))]).score
    assert m.map([("emit", (), ("wave",))], [("eat", (), ("wave",))]).score == 0


def test_temporal_markers_order_events():
    ex = SpacyExtractor()
    for text in ("After causing disease, the viruses infect the host.", "The viruses infect the host after they cause disease."):
        verbs = [e[0] for e in ex.events_many([text])[0]]
        assert verbs.index("cause") < verbs.index("infect"), (text, verbs)
    verbs = [e[0] for e in ex.events_many(["Before he left the house, he locked the door."])[0]]
    assert verbs.index("lock") < verbs.index("leave")


def test_the_slot_does_not_fire_on_a_lone_shared_everyday_verb(mem):
    mem.remember_many([f"Filler note {i} about the garden and tomatoes." for i in range(20)]
                      + ["Melanie went to the park with her kids.", "Jon went to a dance class in town."])
    res = mem.recall("Where did Caroline go last week?", k=5, record=False)
    assert res.analogy is None
    mem.analogy.settings.analogy_min_units = 1  # not the units: "go" carries no structure at all
    mem.analogy.settings.analogy_alpha = 1.0
    assert mem.recall("Where did Caroline go last week?", k=5, record=False).analogy is None


def test_one_shared_relation_is_chance_in_a_store_where_many_have_it(tmp_path):
    """The gate is relative to the store: the ownership rhyme fires among unrelated facts, and
    stays silent once a hundred other memories own things too (the best of N by chance)."""
    turn = "My friend Bob owns a red car."
    target = "Acme Corporation owns Widget Inc, a small subsidiary in Ohio."
    facts = [f"Filler note {i}: the {w} was repaired on Tuesday." for i, w in enumerate(("roof", "bike", "sink") * 7)]
    owners = [f"{n} owns a {t} near the {p}." for n, t, p in zip(
        ("Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hal", "Ivy", "Jo") * 12,
        ("boat", "shop", "farm", "van", "cafe", "dog", "house", "field", "kiln", "loom", "barn", "mill") * 10,
        ("lake", "river", "hill", "market", "station", "school", "bridge", "square", "harbor", "forest") * 12)]
    with fastmem.Memory(str(tmp_path / "few.db")) as m:
        m.remember_many(facts)
        tid = m.remember(target)
        a = m.recall(turn, k=5, record=False).analogy
        assert a is not None and a.id == tid and a.why["p"] <= m.analogy.settings.analogy_alpha
    with fastmem.Memory(str(tmp_path / "many.db")) as m:
        m.remember_many(facts + owners)
        m.remember(target)
        assert m.recall(turn, k=5, record=False).analogy is None


def test_structural_similarity_prefers_the_story_told_in_order():
    turn = "Heat melts the ice, the water evaporates and then the vapour forms clouds."
    analog = "Pressure crushes the ore, the metal separates and then the dust forms piles."
    shuffled = "The dust forms piles, the metal separates and then pressure crushes the ore."
    assert fastmem.structural_similarity(turn, analog) > fastmem.structural_similarity(turn, shuffled)
