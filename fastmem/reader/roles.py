"""Who a name is to someone, as a chat says it in passing: "my sister Ana is getting married"
-> (Ana, be, my sister); "near my cousin Meera", "with my brothers Karl and Erik", "I went with
Sol, my boyfriend", "my cousin's name is Lucia". The role is a common noun with a possessor
beside the name (an apposition, or the noun before the name); the possessor is kept as written
("my", "Tom's") and the write says whose (:mod:`fastmem.reader.who`). A role without a
possessor ("the plumber Dave") says nothing about anyone, and is left out. What a name is
given to is a fact about the name too: "a little beagle called Biscuit" -> (Biscuit, be,
little beagle).
"""

from __future__ import annotations

from ..results import Triple
from .words import ANYONE, given_name

__all__ = ["roles"]

_OWNERS = frozenset(("my", "your", "our", "his", "her", "their"))


def roles(doc, person_nouns) -> list[Triple]:
    """``(name, "be", role)`` for every name given a role in ``doc`` (a spaCy doc);
    ``person_nouns``: the lemmas whose role makes the name a person."""
    out = []
    for tok in doc:
        if tok.pos_ != "NOUN":
            continue
        out += _named(tok, person_nouns) + _called_so(tok, person_nouns)
        owner = next((c for c in tok.children if c.dep_ == "poss"), None)
        if owner is None or not (owner.lower_ in _OWNERS or owner.pos_ == "PROPN"):
            continue
        names = [c for c in tok.children if c.dep_ == "appos" and c.pos_ == "PROPN"]
        if tok.dep_ in ("compound", "appos") and tok.head.pos_ == "PROPN":
            names.append(tok.head)  # "my cousin Meera", "Sol, my boyfriend"
        names += [c for n in names for c in n.children if c.dep_ == "conj" and c.pos_ == "PROPN"]
        if owner.lower_ == "your":
            names = [n for n in names if not _called(n)]  # "Your support, Gina, means a lot": Gina is spoken to
        if not names:
            continue
        whose = owner.lower_ if owner.lower_ in _OWNERS else f"{_name(owner, tok)}'s"
        mods = [c.text for c in tok.lefts if c.dep_ in ("amod", "compound") and c.pos_ != "PROPN"]
        noun = tok.lemma_ if tok.tag_ == "NNS" and len(names) > 1 else tok.text  # "my brothers Karl and Erik"
        role = " ".join([whose, *mods, noun])
        kind = "person" if tok.lemma_.lower() in person_nouns else None
        out += [Triple(_name(n, tok), "be", role, kind, kind or "thing", None, None, "asserted") for n in names]
    return out


def _called(tok) -> bool:
    """Whether a name is set off by commas (or a comma and the sentence's end): the person
    spoken to, when the role is "your" something."""
    doc = tok.doc
    before = tok.i > 0 and doc[tok.i - 1].text == ","
    after = tok.i + 1 >= len(doc) or doc[tok.i + 1].is_punct
    return before and after


def _name(tok, role) -> str:
    """A name as written: its entity's words (without the role noun a parse may put in it:
    "cousin Meera"), else the token with the proper nouns before it."""
    for e in tok.doc.ents:
        if e.start <= tok.i < e.end:
            return " ".join(w.text for w in e if w.i != role.i and w.pos_ == "PROPN") or tok.text
    words = [c for c in tok.lefts if c.dep_ == "compound" and c.pos_ == "PROPN"]
    return " ".join([w.text for w in words] + [tok.text])


def _named(tok, person_nouns) -> list[Triple]:
    """"my cousin's name is Lucia", "Tom's dog's name is Rex" -> (Lucia, be, my cousin): the
    name of someone's someone (a name of the speaker's own, "my name is Tom", is who.py's)."""
    if tok.lemma_.lower() != "name" or tok.dep_ != "nsubj" or tok.head.lemma_ != "be":
        return []
    whom = next((c for c in tok.children if c.dep_ == "poss" and c.pos_ == "NOUN"), None)
    owner = whom is not None and next((c for c in whom.children if c.dep_ == "poss"), None)
    if not owner or not (owner.lower_ in _OWNERS or owner.pos_ == "PROPN"):
        return []
    whose = owner.lower_ if owner.lower_ in _OWNERS else f"{_name(owner, whom)}'s"
    kind = "person" if whom.lemma_.lower() in person_nouns else None
    return [Triple(_name(n, whom), "be", f"{whose} {whom.text}", kind, kind or "thing", None, None, "asserted")
            for n in tok.head.children if n.dep_ == "attr" and n.pos_ == "PROPN"]


def _called_so(tok, person_nouns) -> list[Triple]:
    """"a little beagle called Biscuit" -> (Biscuit, be, little beagle): a name given to what a
    noun names is a fact about the name ("a woman named Sara" says only that she is Sara)."""
    name = given_name(tok)
    if name is None or tok.lemma_.lower() in ANYONE:
        return []
    mods = [c.text for c in tok.lefts if c.dep_ in ("amod", "compound") and c.pos_ != "PROPN"]
    kind = "person" if tok.lemma_.lower() in person_nouns else None
    return [Triple(_name(name, tok), "be", " ".join([*mods, tok.text]), kind, kind or "thing", None, None, "asserted")]
