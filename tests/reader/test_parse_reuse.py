"""A text parsed a moment ago is not parsed again: a host recalls with a turn, then writes it
("User: ..."), and the write reads the recall's parse, with the same facts and events."""

from fastmem.models.parser import DOC_CACHE
from fastmem.reader.extract import SpacyExtractor, parse_turn

TURN = "Yesterday I took the kids to the science museum, and they loved the planetarium."


def _counting(ex):
    parsed = []
    one, piped = ex._one, ex._piped

    def counted_one(text):
        parsed.append(text)
        return one(text)

    def counted(nlp, texts):
        parsed.extend(texts)
        return piped(nlp, texts)

    ex._one, ex._piped = counted_one, counted
    return parsed


def test_a_recalled_turn_is_not_parsed_again_when_written():
    fresh = SpacyExtractor().analyse_many([f"User: {TURN}", "Assistant: Sounds like a great day out!"])
    ex = SpacyExtractor()
    parsed = _counting(ex)
    parse_turn(ex, TURN)  # the recall of the turn
    assert parsed == [TURN]
    again = ex.analyse_many([f"User: {TURN}", "Assistant: Sounds like a great day out!"])  # its write
    assert parsed == [TURN, "Sounds like a great day out!"]  # the write parses only the reply
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
    ex.extract(many[-1])  # kept: not parsed again
    assert parsed.count(many[-1]) == 2  # the bulk write, then once alone
