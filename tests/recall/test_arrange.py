"""How hits are arranged for a question about what the asker said across conversations."""

import json
import os
from datetime import datetime, timedelta, timezone

import pytest

from fastmem.recall import arrange as A

HERE = os.path.dirname(os.path.dirname(__file__))


@pytest.mark.parametrize("q, own", [
    ("In what order did I bring up the garden, the shed and the grant across our conversations?", True),
    ("Can you summarise everything I've discussed with you about the renovation?", True),
    ("What have we talked about regarding the survey so far?", True),
    ("What did I ask you about grout?", True),
    ("Thinking back over our chats about the boat, in what order did these come up: my plan for the paint, "
     "the rigging and the mast?", True),
    ("Which came first across our conversations: me choosing the tiles or me hiring the plumber?", True),
    ("In our chats, what did you recommend for my back pain?", False),
    ("Across our conversations, list everything you suggested for my knee.", False),
    ("Who is my manager?", False),
    ("Which hobbies did Melanie mention?", False),
    ("Give me a list of packing items.", False),
])
def test_a_question_about_the_askers_own_words(q, own):
    assert A.own_words(q) is own


def _chat(cid):
    with open(os.path.join(HERE, "data", "order_chats.json"), encoding="utf-8") as f:
        return next(c for c in json.load(f)["chats"] if c["id"] == cid)


def test_the_aspects_of_a_project_named_once_come_back_in_the_order_they_were_brought_up(mem):
    # a development chat written blind (tests/data/order_chats.json): the project is named in
    # session 1; its later aspects, each in a session of its own, never name it, and one is a
    # question (the asker's question is the evidence here, not the reply to it)
    chat = _chat("o0")
    msgs = chat["messages"]
    ids = mem.remember_many([m["text"] for m in msgs], speaker=[m["role"] for m in msgs],
                            at=[datetime.fromtimestamp(m["at"], timezone.utc) for m in msgs], progress=False)
    of = dict(zip(ids, (m["id"] for m in msgs)))
    q = next(q for q in chat["questions"] if q["kind"] == "order")
    got = [of[h.id] for h in mem.recall(q["question"], k=10, record=False, analogy=False, order="auto").hits]
    assert [g for g in got if g in q["evidence"]] == q["evidence"]  # "auto": the question asks in what order
    assert [h.at for h in mem.recall(q["question"], k=10, record=False, analogy=False, order="auto").hits] == sorted(
        h.at for h in mem.recall(q["question"], k=10, record=False, analogy=False).hits)
    role = {m["id"]: m["role"] for m in msgs}
    assert sum(role[g] == "user" for g in got) > len(got) / 2  # what the asker said, not the replies


def test_a_summary_of_a_project_named_once_finds_every_aspect_the_asker_brought_up(mem):
    # the same blind chat: the summary question names the project; its later aspects never do
    chat = _chat("o0")
    msgs = chat["messages"]
    ids = mem.remember_many([m["text"] for m in msgs], speaker=[m["role"] for m in msgs],
                            at=[datetime.fromtimestamp(m["at"], timezone.utc) for m in msgs], progress=False)
    of = dict(zip(ids, (m["id"] for m in msgs)))
    q = next(q for q in chat["questions"] if q["kind"] == "summary")
    got = {of[h.id] for h in mem.recall(q["question"], k=10, record=False, analogy=False).hits}
    assert set(q["evidence"]) <= got


def test_a_summary_question_finds_the_topic_not_its_framing_words(mem):
    t0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
    turns = [
        ("user", "I'm organising the Alder Court bike shelter for our building: twelve bikes, a roof and a proper lock."),
        ("assistant", "Start by measuring the spot and asking the landlord who pays for what."),
        ("user", "Everything I told my sister across our conversations last week, she repeated to my mum."),
        ("assistant", "That sounds frustrating; maybe tell her which things are private."),
        ("user", "The landlord agreed to pay for half of the roof panels."),
        ("assistant", "Great, get that in writing before you order anything."),
        ("user", "Can you recap the plot of the film we talked about across our chats?"),
        ("assistant", "It follows two sisters who reopen their late father's bakery."),
        ("user", "Found a rack that holds the bikes vertically, it saves half the floor space."),
        ("assistant", "Vertical racks are a good fit for a tight shelter."),
        ("user", "I summarised everything from the conversations with my accountant in one note."),
        ("assistant", "Handy to have it all in one place."),
        ("user", "Two neighbours offered to help dig the footings on Saturday."),
        ("assistant", "Make sure they bring gloves and a spirit level."),
    ]
    ids = mem.remember_many([t for _, t in turns], speaker=[s for s, _ in turns],
                            at=[t0 + timedelta(days=3 * i) for i in range(len(turns))], progress=False)
    aspects = {ids[i] for i in (0, 4, 8, 12)}
    hits = mem.recall("Can you recap everything I've told you about the Alder Court bike shelter across our conversations?",
                      k=6, record=False, analogy=False).hits
    assert aspects <= {h.id for h in hits}  # the framing words ("everything", "across our conversations") do not crowd them out


@pytest.mark.parametrize("q, asks", [
    ("In what order did I bring up the garden and the shed?", True),
    ("Which came first, the move or the new job?", True),
    ("Give me a timeline of the renovation.", True),
    ("In what sequence did I mention the payload box and the launch?", True),
    ("Can you put these in the order I raised them: the scan time, the database and the name?", True),
    ("I need it in order to file the taxes.", False),
    ("Which sequence alignment tool should I use?", False),
    ("What did I order for dinner?", False),
])
def test_a_question_that_asks_for_an_order(q, asks):
    assert A.asks_order(q) is asks


def test_a_hosts_labelled_transcript_turns_count_as_the_assistants_replies(mem):
    ids = mem.remember_many(["User: For the shed I want a green roof.", "Assistant: A sedum mat on a shallow tray works."],
                            progress=False)
    fused = {ids[0]: 1.0, ids[1]: 1.0}
    A.asker_first(mem.admin.engine.db, fused)
    assert fused == {ids[0]: 1.0, ids[1]: A.REPLY_WEIGHT}


@pytest.mark.parametrize("q, work", [
    ("Make me a weekly training plan for a 10k.", True),
    ("Here's my retry decorator, can you review it?", True),
    ("What should I use for the front end of the habit tracker?", True),
    ("Which database should the bookmark manager use?", True),
    ("How should I get from Paris to Amsterdam?", True),
    ("Is it safe to put the user's id straight into the redirect URL?", True),
    ("Redis or Memcached for the session cache?", True),
    ("What's my sister's name?", False),
    ("When did I move to Leeds?", False),
    ("Where do I work these days?", False),
    ("What did Caroline paint last summer?", False),
    ("Would Melanie go to the pride parade again?", False),
])
def test_a_request_for_new_work(q, work):
    assert A.asks_for_work(q) is work


def test_a_request_is_not_answered_by_the_replies_to_earlier_questions(mem):
    # the replies to the user's earlier running questions share the request's topic; the
    # context channel credited each as the answer of a question near the request, and they
    # filled the hits ahead of what the user said they like
    turns = [("user", "I like morning runs much better than evening workouts."), ("assistant", "Noted.")]
    for q, a in [("What should I eat before a long run?", "Eat something light and familiar two hours before a long run."),
                 ("How do I stop my knees hurting when I run?", "Knee pain often comes from adding distance too fast."),
                 ("How many rest days do runners need?", "Most runners do well with one or two rest days a week."),
                 ("Should I stretch before running?", "Dynamic movements before a run, longer stretches after it."),
                 ("How do I get faster at running?", "Intervals once a week and an easy long run build speed."),
                 ("What shoes are good for running?", "Get fitted at a running shop; comfort beats the brand.")]:
        turns += [("user", q), ("assistant", a)]
    ids = mem.remember_many([t for _, t in turns], speaker=[s for s, _ in turns], progress=False)
    hits = mem.recall("Make me a weekly training plan for a 10k.", k=5, record=False, analogy=False).hits
    assert ids[0] in [h.id for h in hits], [h.text for h in hits]
