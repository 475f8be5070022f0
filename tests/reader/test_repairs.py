"""Repairs of the parse before a text's events are read (the analogy slot's structure)."""

import pytest

from fastmem.reader.extract import ALL_REPAIRS, REPAIRS, SpacyExtractor

NONE = SpacyExtractor(repairs=())


def events(text, *repairs):
    return SpacyExtractor(repairs=repairs).events_many([text])[0]


def test_copula_with_a_predicate_noun_is_an_event_by_default():
    text = "Corrosion is a process that damages metal."
    assert "copula" in REPAIRS
    assert SpacyExtractor().events_many([text])[0][0] == ("be", ("corrosion",), ("process",))
    assert [e[0] for e in NONE.events_many([text])[0]] == ["damage"]
    # an adjective is no predicate noun, and "there is" has no subject
    assert [e[0] for e in events("The lungs are essential for life.", "copula")] == []


def test_a_pronoun_stands_for_the_earlier_noun_of_its_number():
    text = "The bats leave the cave at night. They emit sound waves."
    assert events(text, "pronoun")[1] == ("send", ("bat",), ("wave",))
    assert NONE.events_many([text])[0][1] == ("send", (), ("wave",))
    # "it" is singular: the cave, not the bats; an object pronoun is not its own subject
    assert events("The bats leave the cave. They use it again later.", "pronoun")[1][2] == ("cave",)


def test_a_light_verb_with_an_action_noun_becomes_the_action():
    assert events("The gardener took a walk in the park.", "light") == [("walk", ("gardener",), ("park",))]
    assert events("The factory undergoes a transformation.", "light") == [("transform", ("factory",), ())]
    # a noun that names no action keeps the verb
    assert events("The gardener took water from the well.", "light")[0][0] == "take"


def test_coordinated_verbs_share_the_object():
    text = "Bees collect and carry pollen."
    assert events(text, "conj")[0] == ("collect", ("bee",), ("pollen",))
    assert NONE.events_many([text])[0][0] == ("collect", ("bee",), ())


def test_repairs_are_checked_and_leave_facts_alone():
    with pytest.raises(ValueError, match="unknown parse repairs"):
        SpacyExtractor(repairs=["coref"])
    text = "Corrosion is a process that damages metal. It spreads."
    assert SpacyExtractor(repairs=ALL_REPAIRS).extract_many([text]) == NONE.extract_many([text])
