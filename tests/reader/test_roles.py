"""Who a name is to someone (fastmem.reader.roles): "my sister Ana" is a fact about Ana, and
the write says whose sister."""

import pytest

import fastmem
from fastmem.reader.extract import SpacyExtractor


@pytest.fixture(scope="module")
def reader():
    return SpacyExtractor()


@pytest.mark.parametrize("text, fact", [
    ("Btw my sister Ana is getting married in June.", ("Ana", "be", "my sister")),
    ("Ooh nice, that's near my cousin Meera.", ("Meera", "be", "my cousin")),
    ("Heading up to the cabin with my brothers Karl and Erik.", ("Erik", "be", "my brother")),
    ("I went to the fair with Sol, my boyfriend.", ("Sol", "be", "my boyfriend")),
    ("Tom's uncle Hugo fixed our lights.", ("Hugo", "be", "Tom's uncle")),
    # the role read as the name's modifier, the name hung apart from its role, a name given in a passive
    ("I stayed with my aunt Khadija in Rabat.", ("Khadija", "be", "my aunt")),
    ("I'm going to rent a flat near the station with my cousin Anjali for a few months.", ("Anjali", "be", "my cousin")),
    ("I can message my aunt, she's called Khadija.", ("Khadija", "be", "my aunt")),
    ("My starter is called Doughbi-Wan.", ("Doughbi-Wan", "be", "my starter")),
    ("I adopted a cat, her name is Pirozhok.", ("Pirozhok", "be", "cat")),
])
def test_a_name_with_a_role_is_a_fact_about_the_name(reader, text, fact):
    assert fact in [(t.subject, t.relation, t.object) for t in reader.extract(text)]


def test_a_role_without_a_possessor_or_a_name_spoken_to_says_nothing(reader):
    assert not [t for t in reader.extract("The plumber Dave came by.") if t.relation == "be"]
    assert not [t for t in reader.extract("Your support, Gina, means the world to me.") if t.relation == "be"]
    assert not [t for t in reader.extract("Sorry about your job Jon, but starting a business sounds awesome!")
                if t.relation == "be"]


def test_the_person_is_named_by_the_name_not_the_role(reader):
    facts = [(t.subject, t.relation, t.object) for t in reader.extract(
        "I'm going to rent a flat near the station with my cousin Anjali for a few months.")]
    assert ("I", "rent with", "Anjali") in facts and ("I", "rent with", "my cousin") not in facts
    facts = [(t.subject, t.relation, t.object) for t in reader.extract("I went to the market with my cousin Meera.")]
    assert ("I", "go with", "Meera") in facts


def test_the_write_says_whose(tmp_path):
    with fastmem.Memory(str(tmp_path / "m.db")) as m:
        mid = m.remember("Btw my sister Ana is getting married in June.", speaker="Tom", source="chat")
        assert ("Ana", "be", "Tom's sister") in [(f.subject, f.relation, f.object) for f in m.graph.facts(mid)]


def test_a_thing_called_by_a_name_is_the_name(reader):
    facts = [(t.subject, t.relation, t.object) for t in reader.extract("We got a kitten, a grey tabby called Pixel.")]
    assert ("Pixel", "be", "grey tabby") in facts
    facts = [(t.subject, t.relation, t.object) for t in reader.extract("I met a guy named Theo at the climbing gym.")]
    assert ("I", "meet", "Theo") in facts and not [f for f in facts if f[1] == "be"]


def test_a_pet_is_a_he_or_a_she(tmp_path):
    """A chat calls its pets "he" and "she": the pronoun stands for the animal, in its own turn
    and in the turns after."""
    turns = [("Olga", "I adopted a cat, her name is Pirozhok."),
             ("Tomasz", "Omg send pics!"),
             ("Olga", "She sleeps on my keyboard during meetings.")]
    with fastmem.Memory(str(tmp_path / "p.db")) as m:
        ids = m.remember_many([t for _, t in turns], speaker=[s for s, _ in turns], source="chat", progress=False)
        assert ("Olga", "adopt", "Pirozhok") in [(f.subject, f.relation, f.object) for f in m.graph.facts(ids[0])]
        assert {f.subject for f in m.graph.facts(ids[2])} == {"Pirozhok"}
    facts = [(t.subject, t.relation, t.object) for t in SpacyExtractor().extract("We got a puppy. She's a beagle.")]
    assert ("puppy", "be", "beagle") in facts
