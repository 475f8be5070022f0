"""How hits are arranged for a question about what the asker said across conversations."""

import json
import os
from datetime import datetime, timezone

import pytest

from fastmem.recall import arrange as A

HERE = os.path.dirname(os.path.dirname(__file__))


@pytest.mark.parametrize("q, own", [
    ("In what order did I bring up the garden, the shed and the grant across our conversations?", True),
    ("Can you summarise everything I've discussed with you about the renovation?", True),
    ("What have we talked about regarding the survey so far?", True),
    ("What did I ask you about grout?", True),
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


@pytest.mark.parametrize("q, asks", [
    ("In what order did I bring up the garden and the shed?", True),
    ("Which came first, the move or the new job?", True),
    ("Give me a timeline of the renovation.", True),
    ("I need it in order to file the taxes.", False),
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
