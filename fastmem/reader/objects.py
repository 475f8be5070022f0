"""What a verb's dependents make the other end of its facts: its objects, the objects of its
prepositions ("move *to* Porto": move_to), the state an adjective puts its subject in ("good
*at* chess": be_good_at) and the agent of a passive; used by :mod:`fastmem.reader.extract`."""

from __future__ import annotations

from .sense import how_left, liked_activity, relative_dative, state_phrase
from .words import PRAISE, is_thing, is_when, quoted_title

__all__ = ["MADE", "OBJ", "TRANSFER", "TELLING", "WAYS", "served", "STATE_VERBS", "NO_STATE", "FANS", "fan_of", "objects"]

#: Verbs of making something for a purpose ("made this window to remind myself"): the parser
#: reads what was made as the purpose's subject.
MADE = frozenset(("make create build paint draw write design bake knit sew cook craft buy start open launch "
                  "organize organise record compose").split())
#: Dependencies that are a verb's object.
OBJ = frozenset({"dobj", "attr", "oprd", "dative", "obj"})
#: Adjectives after "be" that say no state of the subject with a preposition's object ("right
#: on time"; "I'm sure with my hard work I can ...": sure of the clause, not with the work; "worth it
#: in the end").
NO_STATE = frozenset(("right", "sure", "certain", "worth"))
#: Verbs whose adjective says what the subject is ("I'm good at chess", "got tired of it"): the
#: adjective's preposition is part of the relation. Any other verb's adjective describes the
#: subject in passing ("stopped, too busy with the new job") and says nothing of the object;
#: "you look great in that dress" is praise, no fact.
STATE_VERBS = frozenset(("be", "become", "get", "feel", "stay", "remain", "grow", "turn", "keep"))
#: Verbs of handing over: with what is handed over named, the one it goes to makes no fact of its own.
TRANSFER = frozenset(("give", "offer", "send", "sell", "lend", "hand", "pass", "show", "teach", "donate", "mail"))


#: Verbs of a thing telling someone something: with what is told said ("showed me how much
#: we've grown", "reminds me of the grit it takes"), the one told makes no fact of their own
#: ("Jon told me he bought a boat" keeps (Jon, tell, me): a person spoke to a person).
TELLING = frozenset(("show", "remind"))


def _told(verb, obj) -> bool:
    """A pronoun told something that the verb also says ("it showed *me* how ...")."""
    return (obj.dep_ in ("dobj", "dative") and obj.pos_ == "PRON" and verb.lemma_.lower() in TELLING
            and any(x.dep_ == "ccomp" or x.dep_ == "prep" and x.lower_ in ("of", "about") for x in verb.children))


#: Nouns that say how someone stands to a thing ("a fan of jazz"): the relation, not a thing.
FANS = frozenset(("fan", "lover", "admirer"))


def fan_of(attr) -> list | None:
    """What someone is "a fan of" ("I'm a big fan of pottery"; a noun the parser hangs on the
    "fan" itself, "a fan of classical, as well as modern music", is one more), or None."""
    if attr.lemma_.lower() not in FANS:
        return None
    got = [q for p in attr.children if p.dep_ == "prep" and p.lower_ == "of" for q in p.children if q.dep_ == "pobj"]
    got += [c for c in attr.children if c.dep_ == "conj" and c.pos_ in ("NOUN", "PROPN")]
    return got or None


#: Nouns that make "X is a way to Y" say what X serves to do.
WAYS = frozenset(("way", "means"))


def served(way, conj) -> list[tuple[str, object]]:
    """What "a (great) way to Y" serves to do, as ``("serve to Y", object)`` pairs: each verb of
    the infinitive on ``way`` with its objects ("a fun way to *express* my feelings": serve to
    express, my feelings); none for a verb with no object ("a great way to relax") or only a
    reflexive one ("to express myself") or one of anyone's ("to clear your head"), nor when the
    subject is a pronoun."""
    out = []
    if any(c.dep_ == "nsubj" and c.pos_ == "PRON" for c in way.head.children):
        return out  # "It's a great way to add to your family": what "it" is, an act said before, is no thing
    for v in way.children:
        if v.dep_ in ("acl", "relcl") and v.pos_ == "VERB" and any(
                a.dep_ == "aux" and a.lower_ == "to" for a in v.children):
            for w in [v] + [c for c in v.children if c.dep_ == "conj" and c.pos_ == "VERB"]:
                out.extend((f"serve to {w.lemma_.lower()}", o) for d in w.children
                           if d.dep_ == "dobj" and not d.lower_.endswith(("self", "selves"))
                           and not any(c.dep_ == "poss" and c.lower_ == "your" for c in d.children)
                           for o in conj(d))  # ("a great way to clear your head": anyone's, not the listener's)
    return out


def objects(verb, lemma: str, base: str, had: str, direct: list, conj) -> tuple[list[tuple[str, object]], object]:
    """``(relation, object)`` pairs of a verb's objects, prepositions and state complements,
    and the agent of a passive (or None). ``lemma``: the verb's relation word; ``base``: the
    relation so far (negation, particles); ``had``: the relation a preposition extends ("have
    lunch" with); ``direct``: its direct objects; ``conj``: a noun and the nouns joined to it."""
    objs: list[tuple[str, object]] = []
    agent = None
    for c in verb.children:
        if c.dep_ in ("xcomp", "ccomp") and c.pos_ in ("VERB", "AUX") and quoted_title(c) is not None:
            objs.append((base, c))  # "I loved 'Becoming Nicole'": the book (its words read as a clause)
        elif c.dep_ == "ccomp" and not direct and lemma in MADE and any(
                a.dep_ == "aux" and a.lower_ == "to" for a in c.children):
            # "I made this window to remind myself ...": what was made, read as the infinitive's subject
            objs.extend((base, o) for s in c.children if s.dep_ == "nsubj" and s.pos_ in ("NOUN", "PROPN")
                        and verb.i < s.i < c.i for o in conj(s))
        elif c.dep_ in ("prep", "dative") and c.lower_ == "to" and direct and lemma in TRANSFER:
            continue  # "offering workshops to schools": what is offered is the fact (and as a dative, below)
        elif c.dep_ == "dative" and c.pos_ == "ADP":  # "painted it for him": a preposition
            objs.extend((f"{base} {c.lower_}", o) for p in c.children if p.dep_ == "pobj" for o in conj(p))
        elif c.dep_ == "dative" and direct:  # "sold me his car": the car is what is sold; "sold to
            continue  # me" alone reads as a fact with nothing in it (a fact has two ends); "gives me joy": none
        elif c.dep_ == "dobj" and c == relative_dative(verb) or _told(verb, c):
            continue  # "the joy that dancing brings me": I get it; "reminds me of the grit": the grit is the fact
        elif c.dep_ == "attr" and lemma == "be" and (fan := fan_of(c)) is not None:
            objs.extend((f"{base} {c.lemma_.lower()} of", o) for o in fan)  # "I'm a big fan of pottery"
        elif c.dep_ == "attr" and lemma == "be" and c.lemma_.lower() in WAYS and base == "be":
            objs.extend(served(c, conj))  # "Painting's a fun way to express my feelings": serve_to_express
        elif (c.dep_ in OBJ or liked_activity(c)) and not how_left(c):
            objs.extend((base, o) for o in conj(c))
        elif c.dep_ == "agent":
            for p in c.children:
                if p.dep_ == "pobj":
                    agent = p
        elif c.dep_ == "prep" and c.lower_ in ("like", "including") and direct:
            # "freeze gorgeous moments, like a bouquet of flowers": an example of what is frozen; of
            # a vague object, what it names ("I've got other stuff with sentimental value, like my bowl")
            if not any(is_thing(d) and d.lemma_.lower() not in ("stuff", "thing", "one") for d in direct):
                objs.extend((base, o) for p in c.children if p.dep_ == "pobj" for o in conj(p))
        elif c.dep_ == "prep" and state_phrase(c) is None:
            if lemma == "be" and any(a.dep_ == "acomp" and a.lower_ in PRAISE | NO_STATE for a in verb.children):
                continue  # "it was amazing up on that stage", "it'll be worth it in the end": praise, no fact
            state = next((a.lower_ for a in verb.children if a.dep_ == "acomp" and a.i < c.i and verb.lemma_
                          in STATE_VERBS and a.lower_ not in PRAISE and a.lower_ not in NO_STATE), None)
            rel = had if state is None else f"{base} {state}"  # "feeling low on confidence"
            for p in c.children:
                if p.dep_ == "pobj" and not (verb.lemma_ == "be" and p.pos_ == "PRON" and (
                        c.lower_ == "to" or c.lower_ == "for" and c.i < verb.i)):  # "For me, adoption is ...": a view
                    objs.extend((f"{rel} {c.lower_}", o) for o in conj(p) if not is_when(o))
            if verb.dep_ == "relcl" and c.i > verb.i and not any(c.children) and verb.head.pos_ == "NOUN":
                objs.append((f"{had} {c.lower_}", verb.head))  # "the class I go to": I go to the class
        elif c.dep_ == "acomp" and verb.lemma_ in STATE_VERBS:
            # "proud of my kids"; "happy and thankful for the support": each adjective with its own
            for a in [c] + [a for a in c.children if a.dep_ == "conj" and a.pos_ == "ADJ"]:
                if a.lower_ in PRAISE | NO_STATE:
                    continue
                for p in a.children:
                    if p.dep_ == "prep":
                        for q in p.children:
                            if q.dep_ == "pobj":
                                objs.extend((f"{base} {a.lemma_.lower()} {p.lower_}", o) for o in conj(q))
    return objs, agent
