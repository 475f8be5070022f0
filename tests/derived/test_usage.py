"""Use-driven ranking: engaged rises, ignored sinks but stays findable, nothing pruned by age."""

import os

import pytest

import fastmem
from fastmem.derived import usage as U
from tests.shared import noise_texts


def test_weight_is_bounded_and_monotone():
    assert U.weight(0, 0) == 1.0
    assert U.weight(6, 0) > U.weight(1, 0) > 1.0 > U.weight(0, 3) > U.weight(0, 30)
    assert 1 / U.BASE <= U.weight(0, 10_000) and U.weight(10_000, 0) <= U.BASE


def test_engaged_memory_rises_above_equal_competitor(mem):
    mem.remember_many([f"Unrelated memory {i} about gardening and tomatoes." for i in range(100)])
    a = mem.remember("The team lunch is on Friday at the Thai place.")
    b = mem.remember("The team lunch is on Friday at the Thai restaurant.")
    first = [h.id for h in mem.recall("when is the team lunch", k=5).hits]
    low, high = (b, a) if first.index(a) < first.index(b) else (a, b)
    for _ in range(6):
        mem.feedback(low, engaged=True)
    after = mem.recall("when is the team lunch", k=5).hits
    ids = [h.id for h in after]
    assert ids.index(low) < ids.index(high)
    assert after[ids.index(low)].why["use"]["engaged"] == 6


def test_ignored_memory_sinks_but_is_still_found_by_name(mem):
    mem.remember_many([f"Unrelated memory {i} about gardening and tomatoes." for i in range(100)])
    c = mem.remember("The boiler service code is 7741-K.")
    d = mem.remember("The boiler service is booked for October.")
    for _ in range(40):
        mem.feedback(c, engaged=False)
    hits = mem.recall("boiler service", k=5).hits
    assert [h.id for h in hits].index(d) < [h.id for h in hits].index(c)  # it sank
    top = {h.id: h for h in mem.recall("boiler service code 7741-K", k=3).hits}
    assert c in top and top[c].why["use"]["weight"] < 1.0


def test_feedback_survives_reopen(db_path):
    with fastmem.Memory(db_path) as m:
        a = m.remember("The gate code is 1234.")
        m.feedback(a, engaged=True)
        m.feedback(a, engaged=True)
        m.feedback(a, engaged=False)
    with fastmem.Memory(db_path) as m:
        u = m.use.counts(a)
        assert (u["engaged"], u["ignored"]) == (2, 1)
        assert m.recall("gate code", k=1).hits[0].why["use"]["weight"] == pytest.approx(U.weight(2, 1))
        with pytest.raises(fastmem.NotFound):
            m.feedback(10_000)


def test_inferred_engagement_in_a_scripted_conversation(mem):
    mem.remember_many(noise_texts(30))
    hike = mem.remember("Alice loves hiking in the Dolomites every summer.")
    cake = mem.remember("Alice's favourite dessert is lemon cheesecake.")
    s = mem.session("chat-1")
    res = s.recall("what should Alice and I do this summer?", k=3)
    surfaced = {h.id for h in res.hits}
    assert hike in surfaced
    # next turn uses the hiking memory, not the others
    out = s.observe("Great idea, let's plan a hiking trip to the Dolomites in July.")
    assert hike in out["engaged"]
    assert cake not in out["engaged"]
    # the rest of what was surfaced is ignored once the window passes without reuse
    out2 = s.observe("Also remind me to water the plants.")
    ignored = set(out2["ignored"])
    assert ignored == surfaced - {hike}
    assert mem.use.counts(hike)["engaged"] == 1
    assert all(mem.use.counts(i)["ignored"] == 1 for i in ignored)


def test_ledger_stays_bounded_after_many_recalls(mem, monkeypatch):
    """10k recalls (100k with FASTMEM_STRESS=1): the ledger stays within its bound and the
    aggregated counters lose none."""
    rounds = 1000 if os.environ.get("FASTMEM_STRESS") == "1" else 100
    monkeypatch.setattr(U, "MAX_EVENTS", 50 * rounds)
    ids = mem.remember_many(noise_texts(20))
    queries = ["apple river note", "violin garden", "silver winter doctor", "market stone"] * 25
    for _ in range(rounds):  # 100 queries a round
        mem.recall_many(queries, k=1, analogy=False)
    n_events = mem.admin.engine.db.execute("SELECT count(*) FROM usage_events").fetchone()[0]
    assert n_events <= 50 * rounds + U.TRIM_SLACK
    total = mem.admin.engine.db.execute("SELECT sum(surfaced) FROM usage").fetchone()[0]
    assert total == 100 * rounds  # aggregated counters never lose a recall
    assert len(mem) == len(ids)  # nothing deleted


def test_ledger_is_trimmed_whichever_processes_write_it(db_path, monkeypatch):
    """Regression: the trim ran on every 1,000th recall *of one process*, so short-lived
    processes (a CLI call, a hermes session) never trimmed and the ledger grew without bound.
    Now the store's own row count decides."""
    monkeypatch.setattr(U, "MAX_EVENTS", 40)
    monkeypatch.setattr(U, "TRIM_SLACK", 10)
    with fastmem.Memory(db_path) as m:
        m.remember_many(noise_texts(20))
    for _ in range(30):  # thirty short-lived users of the store, five recalls each
        with fastmem.Memory(db_path) as m:
            for q in ("apple river note", "violin garden", "silver winter", "market stone", "copper lamp"):
                m.recall(q, k=3, analogy=False)
    with fastmem.Memory(db_path) as m:
        n_events = m.admin.engine.db.execute("SELECT count(*) FROM usage_events").fetchone()[0]
        assert n_events <= 40 + 10
        assert m.admin.engine.db.execute("SELECT sum(surfaced) FROM usage").fetchone()[0] == 30 * 5 * 3


def test_per_session_state_is_bounded(db_path, monkeypatch):
    """Regression: a long-lived backend kept a turn counter and an analogy repeat window for
    every session it ever saw. Both keep the last SESSIONS sessions; an evicted session's
    turn continues from the ledger."""
    from fastmem.analogy import slot as analogy

    monkeypatch.setattr(U, "SESSIONS", 5)
    monkeypatch.setattr(analogy, "SESSIONS", 5)
    with fastmem.Memory(db_path) as m:
        m.remember_many(noise_texts(20) + ["Acme Corporation owns Widget Inc, a small subsidiary in Ohio."])
        m.recall("apple river note", session="s0")
        turn = m.admin.engine.ledger.turn("s0")
        for i in range(1, 50):
            m.recall("My friend Bob owns a red car.", session=f"s{i}")
            m.host.observe("apple river violin", session=f"s{i}")
        assert len(m.admin.engine.ledger._turns) <= 5 and len(m.admin.engine.slot._recent) <= 5
        assert "s0" not in m.admin.engine.ledger._turns and m.admin.engine.ledger.turn("s0") == turn


def test_a_turn_too_short_to_show_reuse_ignores_nothing(mem):
    """A reply such as "7 May 2023" shares no distinctive word with anything: it cannot tell
    that what was surfaced went unused, so it neither ignores it nor counts in the window."""
    mem.remember_many(noise_texts(30))
    hike = mem.remember("Alice loves hiking in the Dolomites every summer.")
    s = mem.session("chat-1")
    surfaced = {h.id for h in s.recall("what does Alice do in summer?", k=3, analogy=False).hits}
    assert hike in surfaced
    for short in ("7 May 2023", "ok", "Sure!"):
        assert s.observe(short)["ignored"] == []
    assert all(mem.use.counts(i)["ignored"] == 0 for i in surfaced)
    out = s.observe("Also remind me to water the plants on the balcony.")  # a telling turn: first of the window
    assert out["ignored"] == []
    assert set(s.observe("The weather report promises rain tomorrow afternoon.")["ignored"]) == surfaced


def test_one_conversation_counts_once_per_memory(mem):
    """A conversation that keeps surfacing the same memory and moving on sinks it as much as
    one turn doing so: weights move with the conversations that used or ignored a memory."""
    mem.remember_many(noise_texts(30))
    cake = mem.remember("Alice's favourite dessert is lemon cheesecake.")
    s = mem.session("chat-1")
    for i in range(6):
        assert cake in {h.id for h in s.recall("Alice dessert cheesecake", k=3, analogy=False).hits}
        s.observe(f"Let us talk about the train timetable for platform number {i} instead.")
    s.observe("The weather report promises rain tomorrow afternoon.")
    s.observe("Another unrelated remark about the parking garage downtown.")
    assert mem.use.counts(cake)["ignored"] == 1
    t = mem.session("chat-2")  # another conversation counts again
    t.recall("Alice dessert cheesecake", k=3, analogy=False)
    t.observe("Let us talk about the train timetable instead.")
    t.observe("The weather report promises rain tomorrow afternoon.")
    assert mem.use.counts(cake)["ignored"] == 2


def test_speaker_labels_are_not_shared_words(mem):
    """ "User: Caroline: ..." and a reply "Caroline: ..." share who spoke, not what was said."""
    mem.remember_many(noise_texts(30))
    mid = mem.remember("User: Caroline: I adopted a grey kitten from the shelter last week.")
    s = mem.session("chat-1")
    assert mid in {h.id for h in s.recall("Caroline kitten shelter", k=3, analogy=False).hits}
    assert s.observe("User: Caroline: The train timetable changed for platform three.")["engaged"] == []


def test_a_conversations_verdicts_rank_the_next_conversations_not_its_own(mem):
    """Inferred engagement ranks later conversations; within the conversation that judged, a
    memory engaged once would lead each of its later turns (the loop the host flow showed)."""
    mem.remember_many(noise_texts(30))
    place = {mem.remember("The team lunch is on Friday at the Thai place near the harbour."): "harbour pier boats",
             mem.remember("The team lunch is on Friday at the Thai restaurant beside the cathedral."): "cathedral beside spires"}
    a, b = place
    s = mem.session("chat-1")
    order = [h.id for h in s.recall("when is the team lunch", k=5, analogy=False).hits]
    low = b if order.index(a) < order.index(b) else a
    high = a if low == b else b
    for i in range(4):  # the turns that follow keep reusing the lower one
        s.recall(f"team lunch plans number {i}", k=5, analogy=False)
        s.observe(f"Booked it, {place[low]}, for {i + 4} people.")
    assert mem.use.counts(low)["engaged"] == 1 and mem.use.counts(high)["engaged"] == 0  # once per conversation
    again = s.recall("when is the team lunch", k=5, analogy=False, record=False)
    assert [h.id for h in again.hits] == order
    assert next(h for h in again.hits if h.id == low).why["use"]["weight"] == 1.0
    for sid in ("chat-3", "chat-4", "chat-5"):  # more conversations reuse it
        t = mem.session(sid)
        t.recall("team lunch plans", k=5, analogy=False)
        t.observe(f"Booked it, {place[low]}, for six people.")
    assert mem.use.counts(low)["engaged"] == 4
    other = [h for h in mem.recall("when is the team lunch", k=5, analogy=False, record=False, session="chat-2").hits]
    o = [h.id for h in other]
    assert o.index(low) < o.index(high)
    assert next(h for h in other if h.id == low).why["use"]["weight"] > 1.0
