"""The context channel: a memory found through its neighbour in the same source."""

from .conftest import noise_texts

CHAT = ["Melanie: How was the Sunflower Festival concert on Saturday?",
        "Caroline: Yes, it was amazing! We danced until midnight.",
        "Melanie: I repainted the kitchen cabinets last week.",
        "Caroline: The new color looks great in the photos."]


def test_an_answer_is_found_through_the_question_before_it(mem):
    mem.remember_many(noise_texts(200, seed=9), source="notes")
    ids = mem.remember_many(CHAT, source="chat-7")
    hits = mem.recall("How was the Sunflower Festival concert?", k=3, record=False).hits
    got = {h.id: h for h in hits}
    assert ids[1] in got and "context" in got[ids[1]].why  # the answer names nothing it was asked
    assert "keyword" not in got[ids[1]].why
    plain = mem.recall("How was the Sunflower Festival concert?", k=3, record=False,
                       channels=("keyword", "vector", "graph")).hits
    with_ctx, without = [h.id for h in hits], [h.id for h in plain]
    assert ids[1] not in without or without.index(ids[1]) > with_ctx.index(ids[1])  # the channel lifted it


def test_no_source_no_context(mem):
    mem.remember_many(noise_texts(50, seed=2))
    ids = mem.remember_many(CHAT)  # no source: no neighbours
    hits = mem.recall("How was the Sunflower Festival concert?", k=5, record=False).hits
    assert all("context" not in h.why for h in hits)
    assert ids[0] == hits[0].id


def test_neighbours_stay_in_their_scope(mem):
    mem.remember(CHAT[0], source="chat", scope="a")
    answer = mem.remember(CHAT[1], source="chat", scope="b")
    hits = mem.recall("How was the Sunflower Festival concert?", k=5, scope="a", record=False).hits
    assert answer not in [h.id for h in hits]
