"""The evidence floor (``recall(..., floor=True)``): chit-chat gets no hits, questions keep
their evidence, and the hosts' surfaces apply it."""

import pytest

import fastmem
from fastmem.reader.lexicon import is_skeleton_word
from fastmem.recall.evidence import chance_z, informative_words
from tests.shared import FACTS

#: Turns with nothing to look up, as they come in conversation.
CHITCHAT = [
    "Let me know how it goes.",
    "Thanks for being there for me. Your help means a lot.",
    "I hope you have a nice weekend!",
    "That sounds great, talk to you soon.",
    "Haha, I know what you mean.",
    "Sure, sounds good to me.",
    "Wow, that is so cool! Keep me posted.",
    "Good night, and thanks again.",
]
#: Questions about FACTS and the fact that answers each.
QUESTIONS = [
    ("When does the museum close?", "The museum closes at six on weekdays."),
    ("What instrument does Kenji play?", "Kenji plays the cello in a community orchestra."),
    ("Where does Tom's sister live?", "Tom's sister lives in Denver with her two cats."),
    ("What is Lena allergic to?", "Lena is allergic to peanuts and shellfish."),
    ("Why is the hiking trail closed?", "The hiking trail is closed because of rockfall."),
]


@pytest.fixture
def store(mem):
    mem.remember_many(FACTS)
    return mem


def test_chit_chat_gets_no_hits_and_questions_keep_their_evidence(store):
    for turn in CHITCHAT:
        plain = store.recall(turn, k=5, record=False, analogy=False)
        floored = store.recall(turn, k=5, record=False, analogy=False, floor=True)
        assert plain.hits and floored.hits == (), (turn, floored.grounding)
        assert floored.grounding["grounded"] is False and floored.grounding["by"] in (None, "small talk")
    for q, answer in QUESTIONS:
        plain = store.recall(q, k=5, record=False, analogy=False)
        floored = store.recall(q, k=5, record=False, analogy=False, floor=True)
        assert [h.id for h in floored.hits] == [h.id for h in plain.hits]  # the recall as ranked
        assert answer in [h.text for h in floored.hits] and floored.grounding["grounded"]


def test_what_grounds_a_recall(store):
    r = store.recall("Has the bakery got sourdough today?", k=3, record=False, analogy=False, floor=True)
    assert r.grounding["grounded"] and r.grounding["by"] in ("words", "graph")
    # a word most of the store has grounds nothing: "note" is in every memory here
    store.remember_many([f"Note {i}: the meeting notes are filed." for i in range(60)])
    n = store.count()
    words = informative_words("a note about it", lambda w: store.admin.engine.pipeline.state["keyword"].exact_df(f'"{w}"', n), n)
    assert words == []
    assert chance_z(1) == 0.0 and chance_z(1000) == pytest.approx(3.717, abs=1e-3)


def test_skeleton_word_forms():
    assert all(is_skeleton_word(w) for w in "hoping knew sounds goes stopping planned thanks loved said".split())
    assert not any(is_skeleton_word(w) for w in "running cello painted museum allergic".split())


def test_floor_must_be_a_bool(store):
    with pytest.raises(fastmem.InvalidInput):
        store.recall("hello", floor="yes")
