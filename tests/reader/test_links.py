"""Why: the reader links a text's events by the higher-order relations its clauses state
(cause, condition, purpose, contrast, time), which the structure mapping then rewards."""

import pytest

from fastmem.analogy.mapping import Mapper
from fastmem.reader.extract import SpacyExtractor


@pytest.fixture(scope="module")
def ex():
    return SpacyExtractor()


@pytest.mark.parametrize("text, link", [
    ("Because the soil stayed moist, the wheat grew tall.", ("cause", "stay", "grow")),
    ("The roads were mined, so the army could not pass.", ("cause", "mine", "not_pass")),
    ("If the apprentice runs the shift alone, the baker will raise his pay.", ("condition", "manage", "raise")),
    ("The general split the army to surround the fortress.", ("purpose", "split", "surround")),
    ("She sang all night although her throat hurt.", ("contrast", "hurt", "sing")),
    ("The farmer dug a channel. As a result, the water reached the field.", ("cause", "dig", "reach")),
    ("After the storm passed, the ship sailed on.", ("time", "pass", "sail")),
])
def test_clauses_give_their_events_higher_order_links(ex, text, link):
    events = ex.events_many([text])[0]
    got = {(kind, events[i][0], events[j][0]) for i, e in enumerate(events) if len(e) > 3 for kind, j in e[3]}
    assert link in got, events


def test_a_mapping_rewards_corresponding_links_and_charges_missing_ones():
    base = [("dig", ("farmer",), ("channel",), (("cause", 1),)), ("grow", ("wheat",), ())]
    analogy = [("dig", ("librarian",), ("corner",), (("cause", 1),)), ("grow", ("vocabulary",), ())]
    unlinked = [("dig", ("librarian",), ("corner",)), ("grow", ("vocabulary",), ())]
    m = Mapper()
    true, false = m.map(base, analogy), m.map(base, unlinked)
    assert true.links == ("cause: dig->grow = dig->grow",) and true.missed_links == 0
    assert false.links == () and false.missed_links == 1 and true.score > false.score + 2


def test_objects_alike_are_a_retelling_and_objects_apart_an_analogy():
    from fastmem.models.embedder import default_embedder

    m = Mapper(verb_vectors=default_embedder().encode)
    base = [("drive", ("doctor",), ("car",)), ("repair", ("mechanic",), ("car",))]
    retold = [("drive", ("physician",), ("automobile",)), ("repair", ("mechanic",), ("automobile",))]
    analogy = [("drive", ("shepherd",), ("flock",)), ("repair", ("weaver",), ("flock",))]
    assert m.clothes(base, retold) > m.clothes(base, analogy) + 0.05
    assert m.objects(base, retold, m.map(base, retold))[0] > m.objects(base, analogy, m.map(base, analogy))[0]


def test_opt_in_repairs_read_nominalisations_and_merge_restatements():
    """``repairs={"nominal"}``: "the separation of the strands" is an event on the strands (and a
    *by*-object its agent); ``{"restated"}``: an event that names nothing new is said once."""
    plain = SpacyExtractor()
    reads = SpacyExtractor(repairs={"copula", "nominal", "restated"})
    text = "The separation of the strands allows copying. Water evaporates in the sun. The evaporation of water cools the leaf."
    assert ("separate", (), ("strand",)) not in plain.events_many([text])[0]
    events = reads.events_many([text])[0]
    assert ("separate", (), ("strand",)) in events
    assert [e[0] for e in events].count("evaporate") == 1, events
    with pytest.raises(ValueError, match="unknown parse repairs"):
        SpacyExtractor(repairs={"nominalise"})
