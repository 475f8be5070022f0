"""Who: a fact's pronouns are the people and things the turn means, resolved at write time from
what the host gives (speaker, source); what nothing resolves is not a node."""

import pytest

import fastmem
from fastmem.reader.who import Turn, never_a_node, resolve
from fastmem.results import Triple

T = Turn("Caroline", "Melanie", (("Sweden", "place", False), ("Jon", "person", False), ("Melanie's kids", None, True)),
         frozenset({"Caroline", "Melanie"}))


def _ends(triples):
    return [(t.subject, t.object) for t in resolve(triples, T)]


def test_first_second_and_group_pronouns_are_the_two_parties():
    got = resolve([Triple("I", "research", "adoption agencies", "person", "thing"),
                   Triple("you", "paint", "lake sunrise", "person", "thing"),
                   Triple("we", "visit", "museum", "person", "thing"),
                   Triple("support group", "give", "me", "organisation", "person")], T)
    assert [(t.subject, t.object) for t in got] == [("Caroline", "adoption agencies"), ("Melanie", "lake sunrise"),
                                                    ("Caroline", "museum"), ("support group", "Caroline")]
    assert (got[0].subject_raw, got[0].subject_type, got[3].object_raw) == ("I", "person", "me")


def test_possessives_say_whose():
    assert _ends([Triple("my grandma", "give", "necklace"), Triple("Caroline", "admire", "your painting"),
                  Triple("their love", "matter_to", "me")]) == [
        ("Caroline's grandma", "necklace"), ("Caroline", "Melanie's painting"), ("Melanie's kids' love", "Caroline")]


def test_third_person_pronouns_take_the_nearest_name_they_can_stand_for():
    assert _ends([Triple("she", "give", "book"), Triple("Caroline", "love", "it"), Triple("they", "play", "games")]) == [
        ("Jon", "book"), ("Caroline", "Sweden"), ("Melanie's kids", "games")]
    alone = Turn("Caroline", "Melanie")  # nothing said before: nothing to stand for
    assert resolve([Triple("she", "give", "book"), Triple("it", "be", "fun")], alone) == []


def test_an_it_left_open_stands_for_a_thing_of_the_last_exchange_only(tmp_path):
    """People stay in a talk; things pass: four turns after a trip to Rome, "it" is not Rome."""
    turns = [("Jon", "I went to Rome last week to clear my mind."),
             ("Gina", "Nice! I hope the trip was relaxing."),
             ("Jon", "It was. Now I'm looking at spots for my studio."),
             ("Gina", "Cool, send me pics of the spots!"),
             ("Jon", "It's got the right amount of light and space.")]
    with fastmem.Memory(str(tmp_path / "r.db")) as m:
        ids = m.remember_many([f"{s}: {t}" for s, t in turns], speaker=[s for s, _ in turns], source="chat")
        assert ("Jon", "visit", "Rome") in [(f.subject, f.relation, f.object) for f in m.graph.facts(ids[0])]
        assert not [f for f in m.graph.facts(ids[4]) if "Rome" in (f.subject, f.object)]
    near = Turn("Jon", "Gina", (("Rome", "place", False),), frozenset({"Jon", "Gina"}), (("Rome", "place", False),))
    assert [(t.subject, t.object) for t in resolve([Triple("it", "be", "lovely city")], near)] == [("Rome", "lovely city")]


@pytest.mark.parametrize("end", ["what", "something", "that", "one", "lot", "for", "-", "2", "'s", "the thing"])
def test_question_words_placeholders_and_grammar_are_never_nodes(end):
    assert never_a_node(end)
    assert resolve([Triple("I", "like", end), Triple(end, "be", "cool")], T) == []


def test_a_fact_that_links_something_to_itself_or_repeats_is_left_out():
    assert _ends([Triple("I", "tell", "myself"), Triple("I", "love", "art"), Triple("I", "love", "art")]) == [
        ("Caroline", "art")]


def test_a_conversation_written_with_speakers_names_them_in_the_graph(tmp_path):
    turns = [("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
             ("Melanie", "Wow, that's cool! I painted a lake sunrise last year."),
             ("Caroline", "Your painting is lovely. My grandma gave me a necklace from Sweden.")]
    with fastmem.Memory(str(tmp_path / "c.db")) as m:
        ids = m.remember_many([f"{s}: {t}" for s, t in turns], speaker=[s for s, _ in turns], source="chat")
        facts = {i: [(f.subject, f.relation, f.object) for f in m.graph.facts(i)] for i in ids}
        assert ("Caroline", "visit", "LGBTQ support group") in facts[ids[0]]  # "go to" is canonically "visit"
        assert ("Melanie", "paint", "lake sunrise") in facts[ids[1]]
        assert ("Caroline's grandma", "give", "Caroline") in facts[ids[2]] or \
            ("Caroline's grandma", "give", "necklace") in facts[ids[2]]
        raw = [(f.subject_raw, f.subject) for f in m.graph.facts(ids[0])]
        assert ("I", "Caroline") in raw
        assert m.graph.entity("Caroline") and m.graph.entity("Melanie")  # both speakers are entities
        assert not any(e.lower() in ("i", "you", "it", "me", "that", "what")
                       for fs in facts.values() for s, _, o in fs for e in (s, o))


def test_a_turn_that_leaves_out_I_is_the_speakers_and_an_order_is_no_fact():
    """A transcript's "Name:" label is not read as part of the turn; a clause that leaves out
    "I" ("Gonna continue my studies") is the speaker's; an order ("Keep going!") states no fact."""
    from fastmem.reader.extract import SpacyExtractor

    ex = SpacyExtractor()
    said = ex.extract("Caroline: Gonna continue my studies and check out career options.")
    assert {(t.subject, t.subject_raw) for t in said} == {("I", "(I, understood)")}
    assert ex.extract("Gina: Believe in yourself. Keep going!") == []
    assert ex.extract("Caroline: I researched adoption agencies.")[0].subject == "I"  # not "Caroline:" parsed


def test_a_user_turn_without_a_speaker_is_the_users(tmp_path):
    with fastmem.Memory(str(tmp_path / "u.db")) as m:
        mid = m.remember("I moved to Lisbon last spring for a new job.")
        assert [(f.subject, f.relation, f.object) for f in m.graph.facts(mid)][:1] == [("user", "live_in", "Lisbon")]
        hermes = m.remember_many(["User: My sister Anna has a cat called Pixel.", "Assistant: Pixel is a great name."],
                                 source="s1")
        facts = [(f.subject, f.relation, f.object) for f in m.graph.facts(hermes[0])]
        assert ("Anna", "have", "Pixel") in facts and ("Pixel", "be", "cat") in facts
        mine = m.remember("User: My brother plays the cello.", source="s1")
        assert [(f.subject, f.subject_raw) for f in m.graph.facts(mine)] == [("User's brother", "my brother")]


def test_a_store_reads_the_same_however_its_writes_were_batched(tmp_path):
    """What a pronoun stands for depends only on what was said before it in its source, never
    on which turns shared its write: one turn at a time (a host), one call, or batches that
    cut a conversation anywhere give the same graph. A named speaker who opens a conversation
    has no one to call "you" yet (not the assistant)."""
    turns = [("Caroline", "Did you see my painting of Sweden? I finished it last night."),
             ("Melanie", "I loved it! My kids took their bikes to the lake near Oslo."),
             ("Caroline", "They must love it there. Jon told me he bought a boat."),
             ("Melanie", "He did! It is red and he sails it every weekend."),
             ("Caroline", "You painted it for him."),
             ("Melanie", "I will, and Jon says Oslo is lovely in June, so we might visit it.")]
    texts = [f"{s}: {t}" for s, t in turns]
    got = []
    for name, cuts in (("one", [1] * 6), ("all", [6]), ("pairs", [2, 2, 2]), ("odd", [1, 3, 2])):
        with fastmem.Memory(str(tmp_path / f"{name}.db")) as m:
            ids, at = [], 0
            for n in cuts:
                ids += m.remember_many(texts[at:at + n], source="chat")
                at += n
            got.append([sorted((f.subject, f.relation, f.object) for f in m.graph.facts(i)) for i in ids])
    assert got[0] == got[1] == got[2] == got[3]
    assert not any("assistant" in (s, o) for s, _, o in got[0][0]), got[0][0]
    assert ("Melanie", "paint_for", "Jon") in got[0][4], got[0][4]  # you / him: turns 4 and 3 before it


def test_he_and_she_stand_for_whom_they_can_and_a_question_names_people(tmp_path):
    """A "he" is never one the source showed to be a she ("my sister Ana"), and the people a
    turn names by a tie count even where the turn states no fact ("does your dad know?")."""
    turns = [("Luis", "My dad had knee surgery last week."),
             ("Grace", "Oh no! My sister Ana had the same operation in May."),
             ("Luis", "He's home now and already complaining about the hospital food."),
             ("Efua", "Does your mum know about the new flat?"),
             ("Luis", "Not yet, I'm going to tell her at sunday lunch."),
             ("Luis", "Dad bought me a drill for the move.")]
    with fastmem.Memory(str(tmp_path / "g.db")) as m:
        ids = m.remember_many([t for _, t in turns], speaker=[s for s, _ in turns], source="chat", progress=False)
        facts = {i: [(f.subject, f.relation, f.object) for f in m.graph.facts(i)] for i in ids}
        assert ("Ana", "be", "Grace's sister") in facts[ids[1]]
        assert [s for s, _, _ in facts[ids[2]]] and all(s == "Luis's dad" for s, _, _ in facts[ids[2]])
        assert any(o == "Luis's mum" for _, _, o in facts[ids[4]])
        assert facts[ids[5]] and all(s == "Luis's dad" for s, _, _ in facts[ids[5]])  # kin without "my": the speaker's
        one = fastmem.Memory(str(tmp_path / "one.db"))  # the same, one turn at a time
        with one:
            single = [one.remember(t, speaker=s, source="chat") for s, t in turns]
            assert [(f.subject, f.relation, f.object) for f in one.graph.facts(single[4])] == facts[ids[4]]


def test_who_a_tie_names_reads_the_same_however_the_writes_were_batched(tmp_path):
    """A person named by a tie ("your dad") at the far end of the turns a pronoun looks back
    over is whom the pronoun stands for whether the turns came in one write, one at a time or
    cut anywhere: the tie's owner is read from the same turns before it each time."""
    turns = [("Kwame", "Hey Efua!"), ("Efua", "Does your dad know about the new flat?")]
    turns += [("Kwame" if i % 2 else "Efua", w) for i, w in enumerate(["lol", "ok", "haha", "yep", "so", "hmm", "right"])]
    turns += [("Kwame", "Not yet, I'm going to tell him on Sunday.")]
    got = []
    for name, cuts in (("one", [1] * len(turns)), ("all", [len(turns)]), ("split", [len(turns) - 1, 1])):
        with fastmem.Memory(str(tmp_path / f"{name}.db")) as m:
            ids, at = [], 0
            for n in cuts:
                part = turns[at:at + n]
                ids += m.remember_many([t for _, t in part], speaker=[s for s, _ in part], source="chat",
                                       progress=False)
                at += n
            got.append(sorted((f.subject, f.relation, f.object) for f in m.graph.facts(ids[-1])))
    assert got[0] == got[1] == got[2]
    assert ("Kwame", "tell", "Kwame's dad") in got[0], got[0]
