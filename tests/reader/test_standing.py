"""Standing instructions and preferences (fastmem.reader.standing), order="time" and the spread of
hits for list questions (fastmem.recall.arrange), with the real parser and model."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import fastmem
from fastmem.errors import InvalidInput
from fastmem.evaluate import chats as dev
from fastmem.models.parser import load_spacy
from fastmem.reader.standing import detect
from tests.shared import TESTDATA

T0 = datetime(2025, 3, 1, tzinfo=timezone.utc)


def _labelled(name: str) -> list[tuple[str, str]]:
    with open(TESTDATA / name, encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if line.strip() and not line.startswith("#")]


def _scores(rows) -> dict[str, tuple[float, float]]:
    got = detect([s for _, s in rows], load_spacy())
    pred = [g.kind if g is not None else "none" for g in got]
    out = {}
    for kind in ("instruction", "preference"):
        tp = sum(p == kind and lab == kind for (lab, _), p in zip(rows, pred))
        fp = sum(p == kind and lab != kind for (lab, _), p in zip(rows, pred))
        fn = sum(p != kind and lab == kind for (lab, _), p in zip(rows, pred))
        out[kind] = (tp / max(tp + fp, 1), tp / max(tp + fn, 1))
    return out


def test_the_labelled_sentences_are_told_apart():
    """Instructions, preferences and look-alikes that are neither (one-off requests, others'
    tastes, reactions to the conversation, questions): the rule set's precision and recall on
    the 125 sentences it was written against, and on 56 written after it, never tuned on."""
    rows = _labelled("kinds.tsv")
    assert len(rows) >= 100
    s = _scores(rows)
    assert s["instruction"][0] >= 0.95 and s["instruction"][1] >= 0.9, s
    assert s["preference"][0] >= 0.95 and s["preference"][1] >= 0.9, s
    held = _scores(_labelled("kinds_heldout.tsv"))
    assert held["instruction"][0] >= 0.85 and held["instruction"][1] >= 0.85, held
    assert held["preference"][0] >= 0.8 and held["preference"][1] >= 0.85, held


def test_a_request_is_not_an_instruction_and_a_question_is_neither():
    got = detect(["Write me a function that parses the upload CSV.", "Do you always add type hints?",
                  "My brother prefers tea.", "I'd like to book a table for two.",
                  "Always add type hints when you show me Python.", "I prefer PostgreSQL over MySQL."], load_spacy())
    assert [g.kind if g else None for g in got] == [None, None, None, None, "instruction", "preference"]
    assert detect(["Never use jQuery in my front-end examples."], load_spacy())[0].polarity == -1


def test_chat_pleasantries_are_neither():
    """What friends say in chat: encouragement, reactions, past tastes, things loved in a
    relative clause, an offer. None of it is a standing instruction or preference."""
    said = ["Never stop believing!", "Keep chasing your goals and don't give up!",
            "Everybody we care about came to the party.", "I loved riding horses when I was a kid.",
            "I love that you picked the blue one.", "Sure, I love to.", "Call me when you can!",
            "Also make sure to thank your customers.", "I used to love skating.",
            "Don't forget to take breaks and dance it out when you need to destress!"]
    assert [(t, g) for t, g in zip(said, detect(said, load_spacy())) if g is not None] == []


def test_a_reaction_to_what_was_shown_and_an_offer_are_neither():
    """A like of the thing just shown ("the yellow leaves" of a photo) and an offer for a day
    that may come are what a turn says, not what holds: with the profile they would reach every
    later turn. The same words about a kind of thing, or about the user's own asking, stay."""
    said = ["I love all the yellow leaves, it looks so cozy.", "I like the second option.",
            "If you ever do it, let me know, I'd love to help in any way I can."]
    assert [(t, g) for t, g in zip(said, detect(said, load_spacy())) if g is not None] == []
    kept = detect(["I love the smell of fresh bread.", "If I ever ask for a regex, explain each part of it.",
                   "I love yellow leaves in autumn."], load_spacy())
    assert [g.kind if g else None for g in kept] == ["preference", "instruction", "preference"]


def _chat(m, scope="u"):
    """A few sessions of a coding chat: two instructions, a preference, filler."""
    said = [
        ("user", "How do I read a large file line by line without loading it all?"),
        ("assistant", "Iterate over the file object: each line is read when you need it. Use a context manager."),
        ("user", "Always add type hints when you show me Python code."),
        ("assistant", "Understood, I'll do that from now on."),
        ("user", "Please use pytest, not unittest, whenever you write tests for me."),
        ("assistant", "Noted."),
        ("user", "I prefer PostgreSQL over MySQL, mostly for its JSON support."),
        ("assistant", "Good choice for JSON-heavy data."),
        ("user", "What does git rebase do compared to merge?"),
        ("assistant", "Rebase rewrites your commits on top of the other branch; merge keeps both histories."),
        ("user", "My dog Biscuit has to be walked at seven."),
        ("assistant", "Enjoy the walk!"),
    ]
    return m.remember_many([t for _, t in said], scope=scope, speaker=[r for r, _ in said],
                           at=[T0 + timedelta(hours=i) for i in range(len(said))], progress=False)


def test_standing_recall_brings_the_instruction_that_applies(tmp_path):
    with fastmem.Memory(str(tmp_path / "s.db")) as m:
        ids = _chat(m)
        r = m.recall("Write me a Python function that parses the upload CSV into a list of dicts.", scope="u")
        assert ids[2] in [s.id for s in r.standing]
        top = r.standing[0]
        assert top.kind == "instruction" and top.sentence.startswith("Always add type hints")
        r = m.recall("Help me design the database schema for my blog.", scope="u")
        assert ids[6] in [s.id for s in r.standing]
        assert [s.kind for s in r.standing if s.id == ids[6]] == ["preference"]
        # a profile: a question about the dog gets the scope's statements too (the host's model
        # judges what applies), at most ``standing`` of them, none of another scope
        dog = m.recall("What's my dog's name?", scope="u").standing
        assert 0 < len(dog) <= 5 and {s.id for s in dog} <= set(ids)
        # another scope sees none of it; standing=0 asks for none
        assert m.recall("Write me a Python function.", scope="other").standing == ()
        assert m.recall("Write me a Python function.", scope="u", standing=0).standing == ()


def test_a_later_instruction_on_the_same_topic_supersedes_the_earlier(tmp_path):
    with fastmem.Memory(str(tmp_path / "s.db")) as m:
        ids = _chat(m)
        new = m.remember("From now on, use unittest instead of pytest whenever you write tests for me.",
                         scope="u", speaker="user", at=T0 + timedelta(days=30))
        r = m.recall("Write tests for the date parsing function.", scope="u")
        shown = [s.id for s in r.standing]
        assert new in shown and ids[4] not in shown
        assert ids[4] in next(s for s in r.standing if s.id == new).supersedes
        # the type-hint instruction is another topic: not superseded
        assert ids[2] in [s.id for s in m.recall("Show me a Python function that adds two numbers.", scope="u").standing]


def test_the_assistant_is_never_the_user(tmp_path):
    """The assistant's own advice is full of imperatives: not standing instructions."""
    with fastmem.Memory(str(tmp_path / "s.db")) as m:
        m.remember("Always use a slow, salted hash for passwords in every project.", speaker="assistant")
        assert m.recall("How should I store passwords?").standing == ()
        mid = m.remember("Always use a slow, salted hash for passwords in every project.", speaker="assistant",
                         kind="instruction")  # the host knows better
        assert [s.id for s in m.recall("How should I store passwords?").standing] == [mid]


def test_kind_given_by_the_host(tmp_path):
    with fastmem.Memory(str(tmp_path / "s.db")) as m:
        a = m.remember("Answers in haiku form.", kind="instruction")
        b = m.remember("Always add type hints when you show me Python.", kind="plain")
        got = m.recall("Write a haiku about Python answers.", standing=5).standing
        assert a in [s.id for s in got] and b not in [s.id for s in got]
        c, d = m.remember_many(["Green tea over coffee.", "Just a note."], kind=["preference", None], wait=False)
        m.pending.derive()
        assert c in [s.id for s in m.recall("What should I drink, tea or coffee?").standing]
        for bad in ("rule", 3, ["instruction"]):
            with pytest.raises(InvalidInput):
                m.remember_many(["x", "y"], kind=bad)
        assert m.count() == 4  # the refused writes wrote nothing


def test_forget_and_update_keep_standing_in_step(tmp_path):
    with fastmem.Memory(str(tmp_path / "s.db")) as m:
        ids = _chat(m)
        q = "Write me a Python function that parses the upload CSV."
        assert ids[2] in [s.id for s in m.recall(q, scope="u").standing]
        m.update(ids[2], text="I went to the market on Saturday.")
        assert ids[2] not in [s.id for s in m.recall(q, scope="u").standing]
        m.update(ids[2], text="From now on, always add docstrings to every Python function you write for me.")
        assert [s.sentence for s in m.recall(q, scope="u").standing if s.id == ids[2]]
        # one statement replaced by another in place: the recall sees the new one
        m.update(ids[2], text="From now on, always add type hints to every Python function you write for me.")
        assert [s.sentence for s in m.recall(q, scope="u").standing if s.id == ids[2]] == [
            "From now on, always add type hints to every Python function you write for me."]
        m.forget(ids[2])
        assert ids[2] not in [s.id for s in m.recall(q, scope="u").standing]


def test_order_time_and_the_spread_of_a_list_question(tmp_path):
    with fastmem.Memory(str(tmp_path / "s.db")) as m:
        texts = ["I've started to think about learning Rust this year.",
                 "We got a quote for solar panels on the roof today.",
                 "I keep reading about GraphQL, is it worth a look for our API?"]
        ids = m.remember_many(texts, at=[T0, T0 + timedelta(days=9), T0 + timedelta(days=20)])
        # near-duplicates of two of them crowd the ranking without the spread
        m.remember_many([f"Learning Rust this year: I brought up Rust again, Rust ({i})." for i in range(6)] +
                        [f"Solar panels on the roof: I brought up the solar panels again ({i})." for i in range(6)],
                        at=T0 + timedelta(days=30))
        q = "In what order did I bring up solar panels, Rust and GraphQL across our conversations?"
        r = m.recall(q, k=4, order="time", analogy=False)
        got = [h.text for h in r.hits]
        # each topic comes back (one memory of a kind stands for its near-duplicates)
        assert all(any(w in t for t in got) for w in ("Rust", "solar", "GraphQL")), got
        assert ids[2] in [h.id for h in r.hits]
        ats = [h.at for h in r.hits]
        assert ats == sorted(ats)
        with pytest.raises(InvalidInput):
            m.recall(q, order="newest")


@pytest.mark.skipif(dev.load() is None, reason="tests/data/chats.json is missing")
def test_the_development_chats():
    """Three of the development chats (tests/data/chats.json): an instruction or preference
    question is answered when its message is a top-5 hit or standing; an order question
    when every message it asks about comes back, oldest first. The full set's figures:
    ``python -m fastmem eval chats``."""
    res = dev.evaluate(dev.load()[:3], baselines=False)["fused"]
    assert res["instruction"][0] >= 0.6 and res["preference"][0] >= 0.7, res
    assert res["order-in-time"][0] == 1.0, res
    assert res["fact"][0] >= 0.6, res


def test_export_and_import_keep_the_statements(tmp_path):
    with fastmem.Memory(str(tmp_path / "a.db")) as m:
        ids = _chat(m)
        path = str(tmp_path / "a.jsonl")
        m.admin.export_jsonl(path)
        q = "Write me a Python function that parses the upload CSV."
        want = [(s.sentence, s.kind) for s in m.recall(q, scope="u").standing]
    assert want
    with fastmem.Memory(str(tmp_path / "b.db")) as b:
        b.admin.import_jsonl(path)
        assert [(s.sentence, s.kind) for s in b.recall(q, scope="u").standing] == want
        assert len(ids) == b.count()


def test_an_instruction_without_a_topic_reaches_every_turn_until_it_is_superseded(tmp_path):
    """A format, length or tone with no condition is global: it is shown on every later turn,
    first, however unrelated; one about Python code stays with turns about Python code; a
    later global one on the same form replaces the earlier everywhere."""
    unrelated = ["Summarise the history of Rome.", "What should I cook tonight?", "Plan a weekend in Porto for me."]
    with fastmem.Memory(str(tmp_path / "g.db")) as m:
        bullets, hints = m.remember_many(["Always answer me in short bullet points from now on.",
                                          "Always add type hints when you write Python code."],
                                         speaker="user", source="c1", at=[T0, T0 + timedelta(minutes=1)])
        for t in unrelated:  # the global one first; the topical one after it (a profile, no bar)
            got = m.recall(t, record=False).standing
            assert got and (got[0].id, got[0].reach) == (bullets, "global"), (t, got)
            assert [s.id for s in got] == [bullets, hints] and got[1].reach == "topical", (t, got)
        python = m.recall("Write me a Python function that parses a CSV file.", record=False).standing
        assert [s.id for s in python][:2] == [bullets, hints] and python[1].reach == "topical"
        paragraphs = m.remember("From now on, answer me in full paragraphs instead of bullet points.",
                                speaker="user", source="c2", at=T0 + timedelta(days=2))
        for t in unrelated:
            shown = [s.id for s in m.recall(t, record=False).standing]
            assert paragraphs in shown and bullets not in shown, (t, shown)


def test_a_question_asked_again_gets_its_answer_not_its_echo(tmp_path):
    """A memory that only asks is no evidence for the same question: the answer that followed it
    comes first, and where nothing answered it, what the store knows does."""
    with fastmem.Memory(str(tmp_path / "q.db")) as m:
        m.remember_many(["User: What is the name of Anna's cat?", "Assistant: Anna's cat is called Pixel."],
                        speaker=["user", "assistant"], source="s1")
        m.remember_many(["User: Where does Tom keep the spare key?", "Assistant: I don't know, where?"],
                        speaker=["user", "assistant"], source="s2")
        key = m.remember("User: Tom keeps the spare key under the blue flowerpot.", speaker="user", source="s3")
        m.remember_many(["User: What is the name of Anna's cat?", "Assistant: Sorry, remind me?"],
                        speaker=["user", "assistant"], source="s4")
        first = m.recall("What is the name of Anna's cat?", k=5, record=False).hits[0]
        assert first.text == "Assistant: Anna's cat is called Pixel.", first.text
        assert m.recall("Where does Tom keep the spare key?", k=5, record=False).hits[0].id == key


def test_instructions_put_as_wishes_or_after_a_heading_and_conditions_about_the_question():
    """Long technical chats (issue: recall on long technical chats): an order put as a wish
    ("it would help me if ... you ..."), after a heading that the parser takes for its subject
    ("Quick request for the future: ..."), with a condition about the user's question or topic,
    or with a base-form verb the small parser tags as past ("put"); each with its condition."""
    said = ["It would help me a lot if every time I ask about security you mention the relevant OWASP item.",
            "I think it'd be better if, when you suggest refactors, you keep the public interface unchanged.",
            "Quick request for the future: if I ask for a regex, explain each part of it on its own line.",
            "Whenever my question is about testing, mention how to run the test in CI too.",
            "When the topic is accessibility, cite the WCAG success criterion you're relying on.",
            "When I ask you to compare two options, put the comparison in a table."]
    got = detect(said, load_spacy())
    assert [g.kind if g else None for g in got] == ["instruction"] * len(said), got
    assert [g.focus for g in got] == ["every time I ask about security", "when you suggest refactors",
                                      "if I ask for a regex", "Whenever my question is about testing",
                                      "When the topic is accessibility", "When I ask you to compare two options,"]
    # a wish for this turn only, and a wish about nothing lasting, are not
    assert detect(["It would help if you sent me the file.", "I'd appreciate it if you could check my CV."],
                  load_spacy()) == [None, None]


def test_lasting_requests_put_as_questions_or_for_next_time():
    """A request of the assistant's put as a question, when it holds for good ("could you ...
    from now on?", "would you mind ... every single time?"), and one "for next time" or "for
    future X" is an instruction; a question that asks for this turn, or asks the friend about
    their habits, is not."""
    said = ["Could you reply in Spanish from now on?",
            "Would you mind leaving out the emojis every single time?",
            "Can you stop adding disclaimers to anything you write for me?",
            "Thanks, that works. For next time: put the SQL in a code block.",
            "For future reports, list the sources at the end please."]
    got = detect(said, load_spacy())
    assert [g.kind if g else None for g in got] == ["instruction"] * len(said), got
    assert detect(["Could you send me the file?", "Do you always run before work?", "Can you believe it?",
                   "Would you ever go back there?"], load_spacy()) == [None] * 4


def test_tastes_said_as_choices():
    """A preference without a verb of liking: one thing over another, a thing that suits the
    user better, the user at ease with a thing, a thing the user does not want. Not: a past
    outing ("I went for a walk over the bridge"), a phrasal verb ("picked up ... over the
    weekend"), a reaction ("that works better for me"), or not wanting the assistant to do something."""
    said = ["Vendor lock-in worries me, so where I can I'd pick open standards over a cloud provider's services.",
            "Our team is mostly junior, so I lean towards boring, well-documented tools over clever ones.",
            "I tend to go for typed languages when a project will live for years.",
            "Since I'm on a tight budget, free tiers and self-hosting suit me better than paid services.",
            "I'm much more comfortable in Python than JavaScript.",
            "I'm happiest with plain CSS; utility frameworks make the markup unreadable for me.",
            "I care a lot about privacy and I don't want user data leaving our servers."]
    got = detect(said, load_spacy())
    assert [(g.kind, g.polarity) if g else None for g in got] == [("preference", 1)] * 6 + [("preference", -1)], got
    assert detect(["I went for a walk over the bridge.", "I picked up the kids over the weekend.",
                   "That works better for me, thanks.", "I don't want you to worry.", "I'm happy with that."],
                  load_spacy()) == [None] * 5


def test_a_taste_is_shown_without_its_frame_and_a_told_occasion_is_none():
    """The statement shown is the clause that says the taste, not the sentence that frames it
    ("it reminds me why ...", "you know ..."); a verb of liking that is one step of a told
    occasion is no lasting taste."""
    got = detect(["Baking bread with my niece reminds me why I love teaching kids.",
                  "You know I really hate crowded beaches.",
                  "On Saturdays we hike up the ridge, grill sausages and just enjoy the quiet."], load_spacy())
    assert [(g.kind, g.polarity, g.sentence) if g else None for g in got] == [
        ("preference", 1, "I love teaching kids."), ("preference", -1, "I really hate crowded beaches."), None], got


def test_statements_said_in_ways_no_rule_foresaw_are_found(tmp_path):
    """A situation, a complaint, a hedge: the classifier beside the rules names them, never
    someone else's taste, a one-off request or the assistant's advice; and every recall of the
    scope shows them, the global ones first, at most ``standing``."""
    said = ["I'm on a tight budget these days.", "My team only knows Python.",
            "That answer was way too long, I don't need all that detail."]
    other = ["My boss prefers Java for everything.", "Write a function that sorts this list.",
             "I went to Rome last year."]
    with fastmem.Memory(str(tmp_path / "c.db")) as m:
        ids = m.remember_many(said + other, speaker="user", scope="u")
        advice = m.remember("You should always keep a spare key with a neighbour.", speaker="assistant", scope="u")
        shown = m.recall("Which laptop should I buy for work?", scope="u", record=False, standing=10).standing
        assert ids[0] in {s.id for s in shown}  # a situation: no rule reads it
        assert not {s.id for s in shown} & {ids[3], ids[4], ids[5], advice}
        m.remember_many(["Always answer me in British English.", "I prefer short answers with examples."],
                        speaker="user", scope="u")
        three = m.recall("Which laptop should I buy?", scope="u", record=False, standing=2).standing
        assert len(three) == 2 and three[0].reach == "global"  # at most ``standing``, the global one first


def test_detection_on_messages_written_blind_held_out():
    """The rules with the classifier, as a write runs them, on the held-out parts of the two
    sets of labelled messages written by helpers who had not seen the rules (never fitted on:
    ``bench/fit_standing_model.py`` reads the development parts only). Measured when fitted:
    instruction recall 0.876, precision 0.934; preference 0.860, 0.914 (280 messages)."""
    import csv

    from fastmem.models.embedder import default_embedder
    from fastmem.reader.standing_model import refine

    rows = []
    for name in ("standing_blind.tsv", "standing_more.tsv"):
        with open(TESTDATA / name, encoding="utf-8") as f:
            rows += [(r["label"], r["message"]) for r in csv.DictReader(f, delimiter="\t") if r["split"] == "heldout"]
    texts = [t for _, t in rows]
    found = refine(texts, default_embedder().encode(texts), detect(texts, load_spacy()))
    for kind in ("instruction", "preference"):
        tp = sum(f is not None and f.kind == kind and lab == kind for (lab, _), f in zip(rows, found))
        named = sum(f is not None and f.kind == kind for f in found)
        told = sum(lab == kind for lab, _ in rows)
        assert tp / told >= 0.8 and tp / named >= 0.88, (kind, tp, named, told)
