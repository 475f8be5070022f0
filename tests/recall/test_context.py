"""The context channel: a memory found through its neighbour in the same source."""

from tests.shared import noise_texts

CHAT = ["Melanie: Welcome back. How was the Sunflower Festival concert on Saturday?",  # not only a question:
        # the context channel alone lifts the answer (a memory that only asks gives way to its
        # answer whatever the channels: fastmem.recall.arrange.answers_first)
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


def test_without_a_source_the_turns_of_a_transcript_are_neighbours(mem):
    """No source: turns of a transcript ("Name: ..." each) written one after another, in one
    call or a call each, are neighbours (LoCoMo dev, text only: fused any@5 0.641 -> 0.732);
    turns written more than TURN_GAP apart are not, and neither are list items."""
    from fastmem.recall.channels.context import TURN_GAP

    q = "How was the Sunflower Festival concert?"
    mem.remember_many(noise_texts(50, seed=2))
    apart = [mem.remember(t) for t in CHAT[:2]]
    mem.admin.engine.db.execute("UPDATE memories SET created=created-? WHERE id=?", (TURN_GAP + 60, apart[0]))  # an hour earlier
    hits = mem.recall(q, k=5, record=False).hits
    assert all("context" not in h.why for h in hits)
    together = mem.remember_many(CHAT)
    got = {h.id: h for h in mem.recall(q, k=5, record=False).hits}
    assert together[1] in got and "context" in got[together[1]].why
    assert apart[1] not in got or "context" not in got[apart[1]].why
    singly = [mem.remember(t, scope="later") for t in CHAT]  # a call per turn, as they happen
    got = {h.id: h for h in mem.recall(q, k=5, scope="later", record=False).hits}
    assert singly[1] in got and "context" in got[singly[1]].why


def test_a_unique_token_finds_its_memory_among_list_items_written_together(mem):
    """Regression (../shared/acceptance/crash.sh): when every memory written in one call was
    its neighbours' context, near-identical list items credited each other past the one
    memory that holds the token asked for."""
    for b in (0, 1, 100000, 100001, 400000, 400001):
        mem.remember_many([f"Batch {b} item {j}: the courier left parcel kq{b}x{j}z at the depot." for j in range(20)])
    for token in ("kq400001x0z", "kq1x7z", "kq100000x19z"):
        hits = mem.recall(token, k=3, record=False).hits
        assert token in hits[0].text and all("context" not in h.why for h in hits)


def test_neighbours_stay_in_their_scope(mem):
    mem.remember(CHAT[0], source="chat", scope="a")
    answer = mem.remember(CHAT[1], source="chat", scope="b")
    hits = mem.recall("How was the Sunflower Festival concert?", k=5, scope="a", record=False).hits
    assert answer not in [h.id for h in hits]


def test_only_asks_reads_past_a_hosts_two_labels_and_an_exclamation():
    from fastmem.recall.arrange import only_asks

    assert only_asks("Assistant: Melanie: How did it make you feel?")  # a host's role and speaker labels
    assert only_asks("Assistant: Melanie: Wow, what an experience! How did it make you feel?", exclaims=True)
    assert only_asks("Oh no! Is he ok?", exclaims=True)
    assert not only_asks("Wow, what an experience! How did it make you feel?")  # the learned fusion's feature
    for says in ("We won! How are you?", "Oops, sorry about the accident! How is he?", "Wow!",
                 "Caroline: Wow, that parade sounds amazing. Did you march?"):
        assert not only_asks(says, exclaims=True), says


def test_a_question_after_an_exclamation_gives_way_to_its_answer(mem):
    """In a host's store ("User: Caroline: ...") a turn that exclaims and asks is no answer."""
    mem.remember_many(noise_texts(200, seed=4), source="notes")
    turns = ["User: Caroline: I marched in the pride parade downtown on Saturday.",
             "Assistant: Melanie: Wow, what an experience! How did the pride parade make you feel?",
             "User: Caroline: Honestly liberated. Seeing so many people cheer made me proud of who I am."]
    ids = mem.remember_many(turns, source="chat-9")
    hits = [h.id for h in mem.recall("How did Caroline feel at the pride parade?", k=5, record=False).hits]
    assert ids[2] in hits
    assert ids[1] not in hits or hits.index(ids[2]) < hits.index(ids[1])
