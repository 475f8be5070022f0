"""The reader never raises, whatever the text: property-based tests over its entry points (the
facts, events and standing statement of a text; a turn's events and names; the resolution of
who a fact is about; ``structural_similarity``) and over a store's write and recall.

Texts come from a small grammar of unusual English (passives, participial and absolute
clauses, titles as subjects, lists, quotes, questions, fragments, emoji, code, markdown, very
long and very short) and from arbitrary Unicode. ``FASTMEM_STRESS=1`` tries thousands of each;
the default suite a few dozen (the corpus sweep, ``test_sweep.py``, reads every real text)."""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastmem
from fastmem.reader.extract import SpacyExtractor, analyse_texts, parse_turns
from fastmem.reader.who import Turn, resolve

STRESS = os.environ.get("FASTMEM_STRESS") == "1"
SETTINGS = settings(max_examples=3000 if STRESS else 40, deadline=None, derandomize=not STRESS,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

WHO = st.sampled_from(["Maya", "Tom", "Dr. Lee", "the committee", "my aunt", "Google", "wolves", "millions",
                       "nobody", "I", "you", "we", "they", "it", "He", "someone", "her", "them", "whom",
                       "my friend Bob", "The Beatles", "NASA", "two androids", "a girl", "the kids", "Yep"])
THING = st.sampled_from(["a song", "a novel", "the house", "his land", "a gift", "the report", "home", "children",
                         "the bridge", "a red car", "it", "that", "this", "the old oak", "42 apples", "May 2024",
                         "the 🎉 party", "C++", "a way to relax", "fun", "luck"])
PARTICIPLE = st.sampled_from(["Loved", "Written", "Raised", "Given", "Told", "Hired", "Bought", "Sold", "Taken",
                              "Broken", "Driven", "Asked", "Having been told", "Being"])
PAST = st.sampled_from(["loved", "wrote", "raised", "gave", "told", "hired", "bought", "sold", "took", "broke",
                        "left", "moved to", "believes in", "gave it a try", "is telling", "hit"])
AUX = st.sampled_from(["Do", "Did", "Was", "Is", "Have", "Can", "Would", "Will"])

SENTENCE = st.one_of(
    st.builds("{} was {} by {}.".format, WHO, PARTICIPLE.map(str.lower), WHO),                 # passive
    st.builds("{} by {} is {} about {} who {} {}.".format, PARTICIPLE, WHO, THING, WHO, PAST, THING),  # participial subject
    st.builds("{} by {}, {} {} {}.".format, PARTICIPLE, WHO, WHO, PAST, THING),              # participial clause
    st.builds("The work done, {} {} {}.".format, WHO, PAST, THING),                         # absolute clause
    st.builds("\"{}\" is {} by {}.".format, THING, THING, WHO),                             # a title as subject
    st.builds("{}, {} and {} {} {}.".format, WHO, WHO, WHO, PAST, THING),                   # a list
    st.builds("{} said \"{} {} {}\".".format, WHO, WHO, PAST, THING),                       # a quote
    st.builds("{} {} {} {}?".format, AUX, WHO, PAST, THING),                                # a question
    st.builds("{} by {}!".format, PARTICIPLE, WHO),                                         # a fragment
    st.builds("{}.".format, PARTICIPLE),
    st.builds("If {} {} {}, {} {} {}.".format, WHO, PAST, THING, WHO, PAST, THING),          # a condition
    st.builds("{}, {}! {} {} {}.".format, st.sampled_from(["Yep", "Haha", "Alright", "Wow"]), WHO, WHO, PAST,
              THING),                                                                       # interjection, vocative
    st.builds("```python\n{} = {}\n```".format, st.sampled_from(["x", "it", "me"]), st.integers()),  # code
    st.builds("**{}** - {} {} _{}_".format, WHO, WHO, PAST, THING),                         # markdown
    st.builds("- {} {}\n- {}".format, WHO, PAST, THING),
    st.sampled_from(["a", "?", "…", "By the way, by and by, by far.", "Was it? Is it! Being been.",
                     "Told. Asked. Given.", "\u200b\u2028 \ufeff x", "🎉🎉🎉", "I I I I", "'s", "--", "((((",
                     "by whom was it written by?", "Who? Whom! Whose.", "Me neither.", "You're telling me!"]),
)
ENGLISH = st.lists(SENTENCE, min_size=1, max_size=6).map(" ".join) | SENTENCE.map(lambda s: " ".join([s] * 40))
UNICODE = st.text(min_size=1, max_size=300).filter(lambda t: t.strip())
ANY_TEXT = ENGLISH | UNICODE


@pytest.fixture(scope="module")
def reader():
    return SpacyExtractor()


def _well_formed(triples, events):
    for t in triples:
        assert all(isinstance(x, str) for x in (t.subject, t.relation, t.object))
    for e in events:
        assert isinstance(e[0], str) and all(isinstance(f, str) for f in e[1]) and all(isinstance(f, str) for f in e[2])


@SETTINGS
@given(texts=st.lists(ANY_TEXT, min_size=1, max_size=4))
def test_a_text_is_read_without_raising(reader, texts):
    got = analyse_texts(reader, texts)
    assert len(got) == len(texts)
    for triples, events, _, _ in got:
        _well_formed(triples, events)
        # who the facts are about, for a turn with speakers and names said before it
        resolve(triples, Turn("Maya", "Tom", (("Lisbon", "place", False), ("Bob", "person", False)),
                              frozenset({"Maya", "Tom"})))
        resolve(triples, Turn("user", None))


@SETTINGS
@given(texts=st.lists(ANY_TEXT, min_size=1, max_size=4))
def test_a_turn_is_read_without_raising(reader, texts):
    got = parse_turns(reader, texts)
    assert len(got) == len(texts)
    for events, names, _ in got:
        _well_formed([], events)
        assert all(isinstance(n, str) for n in names)


@SETTINGS
@given(a=ANY_TEXT, b=ANY_TEXT)
def test_structural_similarity_of_any_two_texts(a, b):
    s = fastmem.structural_similarity(a, b)
    assert -1.0 - 1e-9 <= s <= 1.0 + 1e-9


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with fastmem.Memory(str(tmp_path_factory.mktemp("fuzz") / "f.db")) as m:
        yield m


@settings(SETTINGS, max_examples=600 if STRESS else 15)
@given(texts=st.lists(ANY_TEXT, min_size=1, max_size=8), pending=st.booleans())
def test_every_text_is_stored_derived_and_found(store, texts, pending):
    """Through the store: every memory is written, derived (or its failure recorded), and a turn
    made of the same text is answered (hits, the slot silent or not, never an exception)."""
    before = store.count()
    ids = store.remember_many(texts, source="fuzz", speaker="Maya", wait=not pending)
    if pending:
        store.pending.derive()
    assert store.count() == before + len(texts) and store.pending.count() == 0
    failed = {f.memory_id for f in store.admin.check().failed}
    have = {r[0] for r in store.admin.engine.db.execute("SELECT memory_id FROM embeddings")}
    assert all(i in have or i in failed for i in ids)
    for text, res in zip(texts, store.recall_many(texts, k=3, record=False)):
        assert res.hits or not text.strip(" \t\n.?!")
        assert res.analogy is not None or res.analogy_reason
