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

from dataclasses import replace

from ..results import Triple
from .refer import referent
from .words import ANYONE, PERSON_NOUNS, given_name

__all__ = ["roles", "renamed"]

_OWNERS = frozenset(("my", "your", "our", "his", "her", "their"))


def roles(doc, person_nouns) -> list[Triple]:
    """``(name, "be", role)`` for every name given a role in ``doc`` (a spaCy doc);
    ``person_nouns``: the lemmas whose role makes the name a person."""
    out = []
    for tok in doc:
        if tok.pos_ != "NOUN" and not (tok.dep_ == "amod" and tok.lemma_.lower() in person_nouns):
            continue  # ("my aunt Khadija": "aunt" tagged an adjective of the name)
        out += _named(tok, person_nouns) + _called_so(tok, person_nouns)
        before_name = tok.dep_ in ("compound", "amod") and tok.head.pos_ == "PROPN" and tok.head.i > tok.i
        owner = next((c for w in ((tok, tok.head) if before_name else (tok,)) for c in w.children
                      if c.dep_ == "poss"), None)
        if owner is None or not (owner.lower_ in _OWNERS or owner.pos_ == "PROPN") or owner.i > tok.i:
            continue  # ("my aunt Khadija" parsed with the name owned and the role its modifier)
        names = [c for c in tok.children if c.dep_ == "appos" and c.pos_ == "PROPN"]
        if tok.dep_ in ("compound", "appos", "amod") and tok.head.pos_ == "PROPN":
            names.append(tok.head)  # "my cousin Meera", "Sol, my boyfriend"
        elif _stray_name(tok, person_nouns):
            names.append(tok.doc[tok.i + 1])  # "with my cousin Anjali for a few months", the name parsed apart
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


def _stray_name(tok, person_nouns) -> bool:
    """A name right after a person's role that the parse hung elsewhere ("rent a flat with my
    cousin *Anjali* for a few months": a loose dependent of the main verb): the role's name."""
    if tok.lemma_.lower() not in person_nouns or tok.i + 1 >= len(tok.doc):
        return False
    nxt = tok.doc[tok.i + 1]
    return (nxt.pos_ in ("PROPN", "ADJ", "NOUN") and nxt.text[:1].isupper() and nxt.text[1:].islower()
            and nxt.dep_ in ("dep", "npadvmod", "appos")  # (a name the tagger took for an adjective)
            and nxt.head.i != tok.i and not any(c.dep_ in ("nsubj", "dobj") for c in nxt.children))


def renamed(triples: list[Triple], named: list[Triple]) -> list[Triple]:
    """``triples`` with a person's role replaced by the person's name where the text gives both
    ("with my cousin Anjali": Anjali, not "my cousin"; "my cousin Meera" parsed as one name:
    Meera), then ``named`` and the names given in a passive (:func:`_is_called`): the graph's
    node for the person is the name, and who the name is to the speaker is the role fact. A
    role given two names keeps its words. A person's bare number is an age (:func:`_aged`)."""
    named = list(named) + [Triple(t.object, "be", t.subject, t.object_type or t.subject_type, t.subject_type,
                                  t.object_raw, t.subject_raw, "asserted") for t in triples if _is_called(t)]
    triples = [t for t in triples if not _is_called(t)]
    by_role: dict[str, set] = {}
    for t in named:
        whose, _, noun = t.object.partition(" ")
        for key in (t.object, f"{noun} {t.subject}", f"{t.object} {t.subject}"):
            by_role.setdefault(key.lower(), set()).add(t.subject)
    out = []
    for t in map(_aged, triples):
        s, o = (next(iter(by_role[e.lower()])) if len(by_role.get(e.lower(), ())) == 1 else e
                for e in (t.subject, t.object))
        if (s, o) != (t.subject, t.object):
            t = replace(t, subject=s, object=o, subject_raw=t.subject_raw or (t.subject if s != t.subject else None),
                        object_raw=t.object_raw or (t.object if o != t.object else None),
                        subject_type="person" if s != t.subject else t.subject_type,
                        object_type="person" if o != t.object else t.object_type)
        out.append(t)
    return out + named


_NOT_AGED = frozenset("it this that these those there what which".split())


def _aged(t: Triple) -> Triple:
    """A person said to be a bare number is that many years old ("Kenji is 4", "she's 62")."""
    named = t.subject_type == "person" or len(t.subject.split()) == 1 and t.subject[:1].isupper() \
        and t.subject.lower() not in _NOT_AGED  # ("Kenji" typed a place by the recogniser; not "It's 5")
    if t.relation == "be" and named and t.object.isdigit() and 0 < int(t.object) <= 120:
        return replace(t, object=f"{t.object} years old", object_raw=t.object_raw or t.object)
    return t


def _is_called(t: Triple) -> bool:
    """A name given in a passive ("my aunt, she's called Khadija", "my starter is called
    Doughbi-Wan"): who or what the name is, read as the role fact (Khadija, be, my aunt)."""
    return t.relation in ("be call", "be name") and t.mood == "asserted" and t.object[:1].isupper() \
        and not t.detail


def _called(tok) -> bool:
    """Whether a name is set off by commas (or a comma and the sentence's end), or ends a
    clause right after what is "your": the person spoken to, when the role is "your"
    something ("Your support, Gina, means a lot", "Sorry about your job Jon, but ...")."""
    doc = tok.doc
    before = tok.i > 0 and doc[tok.i - 1].text == ","
    after = tok.i + 1 >= len(doc) or doc[tok.i + 1].is_punct
    return after and (before or tok.i > 1 and doc[tok.i - 2].lower_ == "your"
                      and doc[tok.i - 1].lemma_.lower() not in PERSON_NOUNS)  # ("I met your sister Ana.")


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
    name of someone's someone (a name of the speaker's own, "my name is Tom", is who.py's); "her
    name is Pirozhok" after "I adopted a cat": (Pirozhok, be, cat)."""
    if tok.lemma_.lower() != "name" or tok.dep_ != "nsubj" or tok.head.lemma_ != "be":
        return []
    whom = next((c for c in tok.children if c.dep_ == "poss" and c.pos_ == "NOUN"), None)
    owner = whom is not None and next((c for c in whom.children if c.dep_ == "poss"), None)
    pron = next((c for c in tok.children if c.dep_ == "poss" and c.lower_ in ("her", "his", "its")), None)
    if pron is not None and whom is None:  # "I adopted a cat, her name is Pirozhok": (Pirozhok, be, cat)
        whom = referent(pron, person_nouns)
        mods = [c.text for c in whom.lefts if c.dep_ in ("amod", "compound") and c.pos_ != "PROPN"]
        return [Triple(_name(n, whom), "be", " ".join([*mods, whom.text]), None, "thing", None, None, "asserted")
                for n in tok.head.children if n.dep_ == "attr" and (n.pos_ == "PROPN" or n.text[:1].isupper())
                ] if whom.pos_ == "NOUN" else []
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
