"""Structure mapping (the analogy slot's second stage) and event order from temporal markers."""

import fastmem
from fastmem.extract import SpacyExtractor
from fastmem.mapping import Mapper

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
    assert m.map([("go", ("@person",), ())], [("go", ("@person",), ("park",))]).units == 2
    assert m.map([("own", ("@person",), ("car",))], [("own", ("@organisation",), ("@organisation",))]).units == 3
    assert m.map([("own", ("@person",), ("car",))], [("sell", ("@person",), ("car",))]).units == 0


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


def test_the_slot_does_not_fire_on_a_lone_shared_verb(mem):
    mem.remember_many([f"Filler note {i} about the garden and tomatoes." for i in range(20)]
                      + ["Melanie went to the park with her kids.", "Jon went to a dance class in town."])
    res = mem.recall("Where did Caroline go last week?", k=5, record=False)
    assert res.analogy is None
    mem.slot.min_units = 1  # without the mapping's requirement the same verb alone would do
    assert mem.recall("Where did Caroline go last week?", k=5, record=False).analogy is not None


def test_structural_similarity_prefers_the_story_told_in_order():
    turn = "Heat melts the ice, the water evaporates and then the vapour forms clouds."
    analog = "Pressure crushes the ore, the metal separates and then the dust forms piles."
    shuffled = "The dust forms piles, the metal separates and then pressure crushes the ore."
    assert fastmem.structural_similarity(turn, analog) > fastmem.structural_similarity(turn, shuffled)
