"""A text parsed a moment ago is not parsed again: a host recalls with a turn, then writes it
("User: ..."), and the write reads the recall's parse, with the same facts and events."""

from fastmem.reader.extract import DOC_CACHE, SpacyExtractor, parse_turn

TURN = "Yesterday I took the kids to the science museum, and they loved the planetarium."


def _counting(ex):
    parsed = []
    piped = ex._piped

    def counted(nlp, texts):
        parsed.extend(texts)
        return piped(nlp, texts)

    ex._piped = counted
    return parsed


def test_a_recalled_turn_is_not_parsed_again_when_written():
    fresh = SpacyExtractor().analyse_many([f"User: {TURN}", "Assistant: Sounds like a great day out!"])
    ex = SpacyExtractor()
    parsed = _counting(ex)
    parse_turn(ex, TURN)  # the recall of the turn
    again = ex.analyse_many([f"User: {TURN}", "Assistant: Sounds like a great day out!"])  # its write
    assert parsed == ["Sounds like a great day out!"]  # only the reply is new
    assert repr(again) == repr(fresh)  # the same facts, events, statement and plot


def test_a_bulk_write_is_not_kept_and_the_kept_are_bounded():
    ex = SpacyExtractor()
    parsed = _counting(ex)
    many = [f"On day {i} the team shipped release {i}." for i in range(DOC_CACHE + 20)]
    ex.extract_many(many)
    ex.extract_many(many[:3])  # a bulk write's parses are not kept: parsed again
    assert parsed == many + many[:3]
    for t in many:
        ex.extract(t)  # one at a time: kept, at most DOC_CACHE of them
    assert len(ex._parsed) == DOC_CACHE
