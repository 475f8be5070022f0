"""Which texts the entity recogniser reads (fastmem.reader.words.entity_cue): one with a proper
noun, a number or a word of time keeps its names and kinds; one without gets none, so that a
capitalised common noun at a sentence start is never taken for a name (the recogniser's errors
on such texts: "Coal" an organisation, "Bacteria" a place, "Glad" a person)."""

import pytest

from fastmem.reader.extract import SpacyExtractor


@pytest.fixture(scope="module")
def ex():
    return SpacyExtractor()


def _fillers(events):
    return {f for ev in events for part in ev[1:3] for f in part}


@pytest.mark.parametrize("text, noun", [
    ("Coal releases sulfur dioxide into the atmosphere when it is burned.", "coal"),
    ("Bacteria can cause disease in many ways. They can produce toxins which can cause harm to the body.",
     "bacteria"),
    ("Photosynthesis is a process that occurs in plants.", "photosynthesis"),
    ("Hurricanes are formed through a complex process. Warm air rises in the atmosphere.", "hurricane"),
])
def test_a_common_noun_at_a_sentence_start_is_no_name(ex, text, noun):
    assert ex.names(text) == ()
    events = ex.events_many([text])[0]
    assert noun in _fillers(events)  # the thing itself, not a kind the recogniser guessed
    assert not {"@organisation", "@place"} & _fillers(events)


def test_an_interjection_is_no_name(ex):
    assert ex.names("Yeah, awesome! Glad to be part of it.") == ()


@pytest.mark.parametrize("text, names", [
    ("Maya moved to Lisbon with two friends.", ("Maya", "Lisbon")),
    ("After the talk we drove to Denver.", ("Denver",)),
])
def test_names_are_still_read(ex, text, names):
    assert ex.names(text) == names


def test_time_and_number_words_still_get_the_recogniser(ex):
    nlp = ex.nlp
    from fastmem.reader.words import entity_cue

    for text in ("the shop closes at noon on weekends", "she sold thousands of cakes", "we won twice",
                 "it costs $5", "the price rose 5%", "then we went to the Gallery"):
        assert entity_cue(nlp(text, disable=["ner"])), text
    for text in ("Coal is burned in a power station.", "Glad to be part of it!", "cells divide and grow"):
        assert not entity_cue(nlp(text, disable=["ner"])), text
