"""What a verb's dependents make the other end of its facts: its objects, the objects of its
prepositions ("move *to* Porto": move_to), the state an adjective puts its subject in ("good
*at* chess": be_good_at) and the agent of a passive; and what completes a fact beside its object
(:func:`detail`); used by :mod:`fastmem.reader.extract`."""

from __future__ import annotations

from collections.abc import Callable

from .sense import how_left, liked_activity, relative_dative, state_phrase
from .who import never_a_node
from .words import PRAISE, adverbial, is_thing, is_when, quoted_title

__all__ = ["MADE", "OBJ", "TRANSFER", "GIVING", "TELLING", "WAYS", "served", "STATE_VERBS", "NO_STATE", "FANS", "fan_of", "objects",
           "partitive", "detail", "DETAIL_WORDS", "DETAIL_PHRASES"]

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


#: Verbs whose second object is who receives the first ("gave me a boost": to me).
GIVING = TRANSFER | frozenset(("bring", "feed", "pay", "promise", "leave", "write", "read", "throw", "award"))


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


#: Adjectives whose "to" always takes a noun ("allergic to shellfish"), which the parser can
#: read as an infinitive ("to" + a verb "shellfish").
TO_A_NOUN = frozenset("allergic addicted immune married engaged sensitive".split())


def _to_a_noun(verb, base: str, conj) -> list[tuple[str, object]]:
    """``(be allergic to, shellfish)`` where "to shellfish" after an adjective of
    :data:`TO_A_NOUN` was parsed as an infinitive."""
    return [(f"{base} {a.lower_} to", o) for a in verb.children if a.dep_ == "acomp" and a.lower_ in TO_A_NOUN
            for x in list(a.children) + list(verb.children) if x.dep_ == "xcomp" and x.tag_ == "VB" and x.i > a.i
            and any(t.dep_ == "aux" and t.lower_ == "to" and t.i == a.i + 1 for t in x.children) for o in conj(x)]


def objects(verb, lemma: str, base: str, had: str, direct: list, conj) -> tuple[list[tuple[str, object]], object]:
    """``(relation, object)`` pairs of a verb's objects, prepositions and state complements,
    and the agent of a passive (or None). ``lemma``: the verb's relation word; ``base``: the
    relation so far (negation, particles); ``had``: the relation a preposition extends ("have
    lunch" with); ``direct``: its direct objects; ``conj``: a noun and the nouns joined to it."""
    objs: list[tuple[str, object]] = _to_a_noun(verb, base, conj)
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
        elif c.dep_ == "dobj" and verb.lemma_.lower() in ("come", "go") and c.i == verb.i + 1 and not any(c.children):
            continue  # "I'll come cheer", "we'll come visit": a bare verb after "come" or "go", not a thing
        elif c.dep_ == "dobj" and lemma in ("take", "last", "spend", "wait") and is_when(c):
            continue  # "it took like 4 months", "she spent the first two days under the sofa": how long, no thing
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
        elif c.dep_ == "prep" and c.lower_ == "besides" and direct:  # "Besides the classes, I'm offering
            objs.extend((base, o) for p in c.children if p.dep_ == "pobj" for o in conj(p))  # mentoring": both offered
        elif c.dep_ == "prep" and c.i < verb.i and _framing(c):
            continue  # "In my defense I'd just done a shift", "in my opinion": how it is said, no place
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


#: The words a phrase is shown with as written; a longer one is shown by the names it holds
#: ("for the ideal spot for my dance studio" as written, a longer one as "for ideal spot").
DETAIL_WORDS = 8
#: Phrases at most in one fact's detail (the first ones, in the text's order).
DETAIL_PHRASES = 3
#: Prepositions that give an example or a framing, not a part of the fact.
_EXAMPLES = frozenset(("like", "including", "as", "than", "despite", "unlike", "except"))


def detail(verb, obj, span: Callable, referent: Callable, conj: Callable, direct=()) -> str:
    """What completes the fact of ``verb`` whose object is the token ``obj``: the rest of its
    clause as the text says it, phrases joined by spaces ("" for none).

    A triple holds one object; a clause often says more of it. "I took the kids to the museum"
    stores (I, take, kids) and (I, take_to, museum): a reader shown the first alone misses where
    they went; "still following my passion for dance" stores (I, follow, passion) and loses what
    the passion is for. In the text's order: the object's own prepositional phrase ("for dance",
    "of joy"), the verb's other complements after it ("to the museum", "into a business"),
    after a direct object an infinitive of what it was for or was told to do ("encouraged
    students *to get involved*", "saved money *to buy a car*") and, for the object of a
    preposition, the verb's direct objects (``direct``, by name: "acquired new unique pieces
    for my store" gives (Gina, acquire_for, Gina's store) "new unique pieces"). Times, phrases
    the relation holds already ("keeps me *at peace*"), adverbial phrases ("in the works"),
    examples ("like a bouquet"), vague amounts ("a lot") and a phrase the parse cut short are
    left out; a phrase whose object is a pronoun shows what the pronoun stands for, and is left
    out when nothing does. The graph's nodes and relations do not change with it
    (:attr:`fastmem.results.Fact.detail`).

    ``span(tok)`` gives a token's entity text, ``referent(tok)`` what a pronoun stands for (the
    token itself when nothing), ``conj(tok)`` a noun with the nouns joined to it."""
    if not hasattr(obj, "children") or not hasattr(verb, "children"):
        return ""
    inside = set(t.i for t in obj.subtree)
    if verb.i in inside:  # "the help *I got from friends*": the clause is the object's, its phrases the fact's
        inside -= set(t.i for t in verb.subtree) - {obj.i}
    named = referent(obj)  # "all kinds of dances": dances
    shown = span(named)[0].lower()
    parts: list[tuple[int, str]] = []
    for p in obj.children:  # the object's own phrase: "my passion *for dance*", "a source *of joy*"
        if p.dep_ == "prep" and p.i > obj.i and not any(  # not what the object's name holds ("kinds of dances": dances)
                q.i == named.i or span(q)[0].lower() in shown for q in p.children if q.dep_ == "pobj"):
            text = _prep_phrase(p, span, referent, conj)
            if text:
                parts.append((p.i, text))
    if any(c.dep_ in ("prep", "dative") and obj.i in set(t.i for t in c.subtree) for c in verb.children):
        for d in direct:  # what was acquired for the store, tweaked for the investors
            relative = d.tag_ in ("WDT", "WP")  # "pottery, *which* I use for self-expression": the pottery
            name = referent(d)
            names = [span(referent(x))[0] for x in conj(d)]
            if d.i not in inside and d.pos_ in ("NOUN", "PROPN", "PRON") and (relative or is_thing(d) and not (
                    name.i == d.i and d.pos_ == "PRON")) and not any(never_a_node(n) for n in names):
                parts.append((d.i, _listed(names)))  # not "much", "a lot", "a blast", "it" of nothing
    for c in verb.children:  # the clause's other complements, after the verb
        if c.i < verb.i or c.i in inside or obj.i in set(t.i for t in c.subtree):
            continue
        if c.dep_ == "prep" or c.dep_ == "dative" and c.pos_ == "ADP":
            text = _prep_phrase(c, span, referent, conj)
        elif c.dep_ == "dative" and obj.dep_ == "dobj" and obj.head.i == verb.i and verb.lemma_.lower() in GIVING:
            # "Dance gives *me* an escape": to Jon; a recipient "them" is left to the hits (often misread)
            text = None if c.pos_ == "PRON" and c.lower_ not in _PARTY_WORDS else _party("to", c, span, referent)
        elif c.dep_ in ("xcomp", "advcl") and obj.dep_ in ("dobj", "dative") and obj.head.i == verb.i and _infinitive(c):
            text = _as_written(c) or _infinitive_named(c, span)  # "encouraged students *to get involved*"
        else:
            continue
        if text:
            parts.append((c.i, text))
    return " ".join(t for _, t in sorted(parts)[:DETAIL_PHRASES])


#: Nouns of an "in my ..." that frames what is said ("in my defense", "in my opinion").
_FRAMES = frozenset(("defense", "defence", "opinion", "view", "experience", "mind", "eyes", "book", "honesty",
                     "fairness", "case", "words"))


def _framing(prep) -> bool:
    """An "in my opinion" before the verb: the speaker's framing of the clause, not where it was."""
    return prep.lower_ == "in" and any(p.dep_ == "pobj" and p.lemma_.lower() in _FRAMES
                                       and any(d.dep_ == "poss" for d in p.children) for p in prep.children)


def partitive(tok):
    """The whole a number object is part of ("debuting two *of our songs*", "bought three of his
    paintings": the songs, the paintings), or None."""
    if tok.dep_ != "dobj" or tok.pos_ != "NUM":
        return None
    return next((p for c in tok.children if c.dep_ == "prep" and c.lower_ == "of" for p in c.children
                 if p.dep_ == "pobj"), None)


def _listed(names: list[str]) -> str:
    """Names as a list is written: "friends, family and people"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _infinitive_named(verb, span: Callable) -> str | None:
    """An infinitive too long to show as written, by its words and its object's name ("reminds
    me to never give up, however hard things get": to never give up); None when a clause of
    its own completes it ("inspires me to keep doing what I do": no "to keep")."""
    if any(c.dep_ in ("xcomp", "ccomp") for c in verb.children):
        return None
    words = sorted([c for c in verb.children if c.dep_ in ("aux", "neg", "prt") or c.lower_ == "never"] + [verb],
                   key=lambda t: t.i)
    obj = [span(d)[0] for d in verb.children if d.dep_ == "dobj"][:1]
    return " ".join([w.lower_ for w in words] + obj)


def _infinitive(verb) -> bool:
    return verb.pos_ in ("VERB", "AUX") and any(a.dep_ == "aux" and a.lower_ == "to" for a in verb.children)


def _prep_phrase(prep, span: Callable, referent: Callable, conj: Callable) -> str | None:
    """``prep`` and its object as the text says it, or None (a time, an adverbial phrase, a
    state the relation holds, an example, a pronoun standing for nothing)."""
    if prep.lower_ in _EXAMPLES or state_phrase(prep) is not None:
        return None
    objs = [q for q in prep.children if q.dep_ == "pobj"]
    if len(objs) != 1 or is_when(objs[0]) or adverbial(objs[0]):
        return None
    q = objs[0]
    if q.pos_ == "PRON":
        return _party(prep.lower_, q, span, referent)
    if _cut(q):
        return None  # "your help with *staying* motivated", "motivated" parsed away: no half phrase
    written = _as_written(q)
    if written is None:
        written = _listed([span(x)[0] for x in conj(q)])
    return f"{prep.lower_} {written}"


#: Pronouns of the two parties, which the write names (:func:`fastmem.reader.who.resolve`).
_PARTY_WORDS = frozenset(("me", "you", "us", "myself", "yourself"))


def _party(prep: str, q, span: Callable, referent: Callable) -> str | None:
    """A pronoun after a preposition (or a recipient, ``prep`` "to") as a detail shows it: what
    it stands for; "me", "you", "us" as written, for the write to name; None for a pronoun
    standing for nobody ("with them" of nobody named says nothing a reader can use)."""
    if q.pos_ != "PRON":
        return f"{prep} {span(referent(q))[0]}"
    ref = referent(q)
    if ref.i != q.i:
        return f"{prep} {span(ref)[0]}"
    return f"{prep} {q.lower_}" if q.lower_ in _PARTY_WORDS else None


def _cut(head) -> bool:
    """Whether a gerund's phrase stops short of what completes it: the word after it is a verb
    or adjective the parse hung elsewhere ("help with staying | motivated")."""
    if not (head.tag_ == "VBG" or head.lower_.endswith("ing")):
        return False
    end = max(t.i for t in head.subtree)
    nxt = head.doc[end + 1] if end + 1 < len(head.doc) else None
    return (nxt is not None and nxt.sent == head.sent and nxt.pos_ in ("VERB", "ADJ")
            and nxt.head.i not in set(t.i for t in head.subtree))


def _as_written(head) -> str | None:
    """A head's whole phrase as the text writes it, when it is one run of at most
    :data:`DETAIL_WORDS` words with no punctuation inside; else None."""
    toks = sorted(head.subtree, key=lambda t: t.i)
    if len(toks) > DETAIL_WORDS or toks[-1].i - toks[0].i + 1 != len(toks):
        return None
    if any(t.is_punct for t in toks) or toks[-1].pos_ in ("ADP", "DET", "CCONJ", "PART", "SCONJ"):
        return None  # "enough bounce for" (what it is for parsed elsewhere): the names instead
    return head.doc[toks[0].i : toks[-1].i + 1].text
