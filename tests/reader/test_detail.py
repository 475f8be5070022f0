"""What completes a fact (fastmem.reader.objects.detail): the rest of its clause, kept beside the
triple and shown with it, so that a reader of (Melanie, take, kids) learns where they went."""

import json

import pytest

import fastmem
from fastmem.reader.extract import SpacyExtractor


@pytest.fixture(scope="module")
def reader():
    return SpacyExtractor()


def _details(reader, text):
    return {(t.subject, t.relation, t.object): t.detail for t in reader.extract(text)}


@pytest.mark.parametrize("text, fact, detail", [
    ("Yesterday I took the kids to the museum.", ("I", "take", "kids"), "to the museum"),
    ("Still following my passion for dance.", ("I", "follow", "my passion"), "for dance"),
    ("Now, I'm aiming to turn my dancing passion into a business.", ("I", "turn", "my dancing passion"),
     "into a business"),
    ("I talked about my journey and encouraged students to get involved in the LGBTQ community.",
     ("I", "encourage", "students"), "to get involved in the LGBTQ community"),
    ("I moved from Sweden to Porto last year.", ("I", "move from", "Sweden"), "to Porto"),
    ("I moved from Sweden to Porto last year.", ("I", "move to", "Porto"), "from Sweden"),
    ("I wanted to blend my love for dance and fashion.", ("I", "blend", "my love"), "for dance and fashion"),
    # the object of a preposition with what the verb did to its direct object
    ("I have acquired some new unique pieces for my store.", ("I", "acquire for", "my store"), "new unique pieces"),
    ("I'm tweaking my pitch to investors.", ("I", "tweak to", "investors"), "my pitch"),
    # what a relative pronoun stands for, and the one something is given to
    ("I took a break from pottery, which I use for self-expression.", ("I", "use for", "self-expression"),
     "pottery"),
    ("Dance gives me an escape.", ("Dance", "give", "escape"), "to me"),
    # an object told by a relative clause keeps the clause's phrases
    ("The cake we baked for Ana's birthday was huge.", ("we", "bake", "cake"), "for Ana's birthday"),
])
def test_a_fact_keeps_what_completes_it(reader, text, fact, detail):
    got = _details(reader, text)
    assert got.get(fact) == detail, got


@pytest.mark.parametrize("text, fact", [
    ("I took the kids to the park on Saturday.", ("I", "take", "kids")),  # a time is not part of it
    ("We've got some cool projects in the works.", None),  # an adverbial phrase
    ("Creativity and family keep me at peace.", None),  # a state the relation holds already
    ("I baked a cake with them.", ("I", "bake", "cake")),  # "them" of nobody named
    ("I froze gorgeous moments, like a bouquet of flowers.", None),  # an example, not a part
    ("We do all kinds of dances.", ("We", "do", "dances")),  # what the object's name holds already
])
def test_nothing_is_added_that_does_not_complete_the_fact(reader, text, fact):
    got = _details(reader, text)
    checked = [fact] if fact is not None else list(got)
    for f in checked:
        assert f in got, got
        assert "Saturday" not in got[f] and "works" not in got[f] and "peace" not in got[f], got
        assert "them" not in got[f] and "like" not in got[f] and "of dances" not in got[f], got
    if fact is not None:
        assert got[fact] == ("to the park" if fact[1] == "take" else ""), got


def test_a_gerund_cut_from_its_complement_is_left_out(reader):
    """"your help with staying motivated", "motivated" parsed under the main verb: "with
    staying" alone would garble the fact (a reader marked it so)."""
    got = _details(reader, "Thanks, I'm really grateful for your help with staying motivated.")
    assert got and all(d == "" for d in got.values()), got


def test_an_infinitive_that_needs_its_own_clause_is_left_out(reader):
    """"inspires me to keep doing what I do every single day of the week" is too long to show
    as written, and "to keep" alone says nothing."""
    got = _details(reader, "My work inspires me to keep doing what I do every single day of the week.")
    assert got and not any(d.startswith("to keep") for d in got.values()), got


def test_a_phrase_parsed_apart_is_shown_by_its_names(reader):
    """"a floor with enough bounce for me & my students to dance": the parser hangs what the
    bounce is for elsewhere; the detail never ends in a dangling "for"."""
    got = _details(reader, "We need a good dance floor with enough bounce for me & my students to dance safely.")
    assert got[("We", "need", "good dance floor")] == "with enough bounce", got


def test_the_detail_is_stored_shown_and_exported(tmp_path, capsys):
    path = tmp_path / "m.db"
    with fastmem.Memory(path) as m:
        mid = m.remember("Melanie: Yesterday I took the kids to the museum - they loved it.", speaker="Melanie")
        got = {(f.subject, f.relation, f.object): f.detail for f in m.graph.facts(mid)}
        assert got[("Melanie", "take", "kids")] == "to the museum", got
        assert got[("Melanie", "take_to", "museum")] == "kids", got
        m.admin.export_jsonl(str(tmp_path / "m.jsonl"))
    row = json.loads(open(tmp_path / "m.jsonl", encoding="utf-8").read().splitlines()[1])
    assert ["Melanie", "take", "kids", "person", "person", "asserted", "to the museum"] in row["facts"], row["facts"]
    with fastmem.Memory(tmp_path / "b.db") as b:
        b.admin.import_jsonl(str(tmp_path / "m.jsonl"))
        again = {(f.relation, f.object): f.detail for f in b.graph.facts_about("Melanie")}
        assert again[("take", "kids")] == "to the museum", again
    from fastmem.cli.main import main
    assert main(["graph", "entity", "Melanie", "--db", str(path)]) == 0
    assert "Melanie -take-> kids to the museum" in capsys.readouterr().out


def test_the_parties_of_a_detail_are_named(tmp_path):
    """"with your family" said to Melanie is with Melanie's family; "to always pursue my
    dreams" of Caroline's turn is Caroline's dreams: a fact read out of its turn still says whose."""
    with fastmem.Memory(tmp_path / "p.db") as m:
        m.remember("Melanie: We went camping by the lake.", speaker="Melanie", source="chat")
        mid = m.remember("Caroline: It's great that you get to spend quality time with your family.",
                         speaker="Caroline", source="chat")
        got = {(f.subject, f.relation, f.object): f.detail for f in m.graph.facts(mid)}
    assert got.get(("Melanie", "spend", "quality time")) == "with Melanie's family", got
    with fastmem.Memory(tmp_path / "q.db") as m:
        mid = m.remember("Jon: Dance gives me an escape.", speaker="Jon")
        got = {(f.subject, f.relation, f.object): f.detail for f in m.graph.facts(mid)}
    assert got.get(("Dance", "give", "escape")) == "to Jon", got
