"""Canonical names and relations: the folding rules applied at write time.

Entity names fold by Unicode NFKC, case, punctuation and whitespace, a leading article and
trailing corporate suffixes, so "Acme Inc.", "ACME" and "the Acme Corporation" share the key
``acme``. Relations map to a small documented vocabulary (:data:`RELATIONS`); inverse forms
flip subject and object; unknown relations are kept as their lemma.

A fact's relation is also judged by what it links (:data:`TYPED`): an everyday verb is a
synonym only where its object's type supports it ("Olga runs a bakery" manages an
organisation, "Olga runs a marathon" runs), else the verb's own lemma stays. Measured on 70
labelled sentences from everyday agent conversations (``tests/test_relations.py``).
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["fold_name", "canon_relation", "RELATIONS", "TYPED", "ENTITY_TYPES", "normalise_type", "ANY"]

#: ``canon_relation``'s types when none are known to matter (the narrative events of the
#: analogy slot, whose codes use the vocabulary without type conditions).
ANY = object()

_CORP_SUFFIXES = {
    "inc", "incorporated", "llc", "ltd", "limited", "corp", "corporation", "co", "company",
    "gmbh", "plc", "ag", "sa", "srl", "bv", "nv", "pty", "lp", "llp", "kg",
}
_ARTICLES = {"the", "a", "an"}
_PUNCT = re.compile(r"[^\w\s&+#@]+", re.UNICODE)
_SPACE = re.compile(r"\s+")


def fold_name(name: str) -> str:
    """Canonical key of an entity name ('' when nothing is left).

    >>> fold_name("The Acme Corporation"), fold_name("Acme Inc."), fold_name("ACME")
    ('acme', 'acme', 'acme')
    """
    s = unicodedata.normalize("NFKC", name).casefold()
    s = s.replace("'s ", " ").replace("’s ", " ")
    s = _SPACE.sub(" ", _PUNCT.sub(" ", s)).strip()
    words = s.split(" ") if s else []
    while len(words) > 1 and words[0] in _ARTICLES:
        words.pop(0)
    while len(words) > 1 and words[-1] in _CORP_SUFFIXES:
        words.pop()
    return " ".join(words)


#: Entity types stored on nodes. ``None``/'' from a caller means "unknown".
ENTITY_TYPES = ("person", "organisation", "place", "thing", "event", "time", "quantity", "group", "concept")

_TYPE_ALIASES = {
    "per": "person", "person": "person", "people": "person", "human": "person",
    "org": "organisation", "organization": "organisation", "organisation": "organisation",
    "company": "organisation", "gpe": "place", "loc": "place", "fac": "place",
    "location": "place", "place": "place", "event": "event", "date": "time", "time": "time",
    "money": "quantity", "quantity": "quantity", "cardinal": "quantity", "percent": "quantity",
    "ordinal": "quantity", "norp": "group", "group": "group", "product": "thing",
    "work_of_art": "thing", "law": "concept", "language": "concept", "thing": "thing",
    "concept": "concept", "object": "thing",
}


def normalise_type(t: str | None) -> str | None:
    """Map a NER label or a caller's type to :data:`ENTITY_TYPES` (None when unknown)."""
    if not t:
        return None
    return _TYPE_ALIASES.get(t.strip().casefold(), "thing")


# canonical relation -> lemma phrases that mean it
_SYNONYMS: dict[str, tuple[str, ...]] = {
    "own": ("own", "have", "possess", "hold", "keep"),
    "acquire": ("acquire", "buy", "purchase", "take over", "obtain"),
    "sell": ("sell",),  # "sell to" names the buyer, not what is sold: its own relation
    "work_for": ("work for", "work at", "work with", "be employee of", "be employ by", "join"),
    "manage": ("manage", "lead", "run", "head", "supervise", "direct", "oversee"),
    "live_in": ("live in", "reside in", "stay in", "move to", "relocate to", "be from"),
    "located_in": ("be in", "be locate in", "be base in", "be headquarter in", "be at", "sit in"),
    "like": ("like", "love", "enjoy", "prefer", "adore", "be fond of"),
    "dislike": ("dislike", "hate", "detest", "be allergic to", "avoid"),
    "create": ("create", "build", "make", "found", "develop", "write", "design", "invent", "establish", "start"),
    "teach": ("teach", "instruct", "tutor"),
    "study": ("study", "learn", "research"),
    "visit": ("visit", "travel to", "go to", "fly to", "tour"),
    "marry": ("marry", "be marry to", "wed"),
    "born_in": ("be bear in", "bear in"),
    "use": ("use", "utilize", "employ to", "rely on"),
    "cause": ("cause", "lead to", "result in", "produce", "trigger"),
    "contain": ("contain", "include", "comprise", "consist of"),
    "send": ("send", "emit", "transmit", "release", "give off"),
    "detect": ("detect", "sense", "perceive", "notice", "find"),
}
# lemma phrases whose subject and object swap: X <phrase> Y == Y <canonical> X
_INVERSES: dict[str, str] = {
    "belong to": "own",
    "be own by": "own",
    "employ": "work_for",
    "hire": "work_for",
    "report to": "manage",
    "be manage by": "manage",
    "be acquire by": "acquire",
    "be buy by": "acquire",
    "be create by": "create",
    "be found by": "create",
    "be teach by": "teach",
    "be cause by": "cause",
    "be part of": "contain",
    "be home to": "located_in",
}
_PLACE = frozenset({"place", None})
_ORG = frozenset({"organisation", "group"})
#: Synonyms that hold only for some (subject type, object type) of a fact: phrase -> test. A
#: type of None is unknown (a name the parser could not type). Elsewhere the verb's lemma.
TYPED = {
    # possession: "has a cold", "holds a meeting", "keeps bees" are not ownership
    "have": lambda st, ot: False,
    "hold": lambda st, ot: False,
    "keep": lambda st, ot: False,
    # leading an organisation or a group; "runs a marathon", "led the parade" are not
    "run": lambda st, ot: ot in _ORG,
    "lead": lambda st, ot: ot in _ORG,
    "head": lambda st, ot: ot in _ORG,
    "direct": lambda st, ot: ot in _ORG,
    # employment: joining an organisation; "joined a gym", "works with Peter" are not
    "join": lambda st, ot: ot == "organisation",
    "work with": lambda st, ot: False,
    # residence: moving or staying somewhere is living there only for a place
    "move to": lambda st, ot: ot in _PLACE,
    "relocate to": lambda st, ot: ot in _PLACE,
    "stay in": lambda st, ot: ot in _PLACE,
    "be from": lambda st, ot: False,  # origin, not residence
    # location: a person "in a meeting" is in a state; a thing in a thing is located there
    "be in": lambda st, ot: ot in _PLACE or ot == "organisation" or (st != "person" and ot == "thing"),
    "be at": lambda st, ot: ot in _PLACE or ot == "organisation" or (st != "person" and ot == "thing"),
    "sit in": lambda st, ot: ot in _PLACE,
    # a dislike is a person's: "dance floors help avoid injuries" is no dislike
    "avoid": lambda st, ot: st in ("person", None),
    # perception verbs of everyday speech: "found his keys", "noticed a typo"
    "find": lambda st, ot: False,
    "notice": lambda st, ot: False,
}
_LOOKUP = {phrase: (canon, False) for canon, phrases in _SYNONYMS.items() for phrase in phrases}
_LOOKUP.update({phrase: (canon, True) for phrase, canon in _INVERSES.items()})
#: The documented vocabulary: canonical relation -> synonyms (inverse forms in ``INVERSES``).
RELATIONS = {k: v for k, v in _SYNONYMS.items()}
INVERSES = dict(_INVERSES)


@functools.lru_cache(maxsize=65_536)  # a pure function of its arguments; a bulk load repeats them
def canon_relation(lemma_phrase: str, subject_type=ANY, object_type=ANY) -> tuple[str, bool]:
    """Canonical relation of a lemmatised phrase and whether subject/object must flip.

    Unknown phrases come back as themselves (spaces become '_'), never as a catch-all. With
    the fact's types (:data:`ENTITY_TYPES` or None for unknown), a synonym of :data:`TYPED`
    holds only where its test passes; left as :data:`ANY`, every synonym holds.

    >>> canon_relation("be own by")
    ('own', True)
    >>> canon_relation("run", "person", "thing"), canon_relation("run", "person", "organisation")
    (('run', False), ('manage', False))
    """
    p = _SPACE.sub(" ", unicodedata.normalize("NFKC", lemma_phrase).casefold()).strip()
    p = re.sub(r"^(be |get )(?=\w+ by$)", "be ", p)
    hit = _LOOKUP.get(p)
    if hit is None and p.startswith("not "):
        base, flip = canon_relation(p[4:], subject_type, object_type)
        return f"not_{base}", flip
    test = TYPED.get(p) if object_type is not ANY else None
    if hit is not None and test is not None and not test(subject_type, object_type):
        return p.replace(" ", "_"), False
    if hit is None:
        return p.replace(" ", "_"), False
    return hit
