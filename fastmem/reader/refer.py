"""What a pronoun of a fact stands for in its own text: :func:`referent`.

"He" and "she" stand for a person named before them, "it" for a thing, "they" for a plural; a
subject pronoun goes on from the subject before it when one fits. What no mention in the text
fits is left to the write, which reads the turns before (:mod:`fastmem.reader.who`).
"""

from __future__ import annotations

from .sense import EVALUATIVE, dummy_it
from .words import COLLECTIVE, INTERJECTIONS, PET_NOUNS, PRONOUN_SEX, noun_sex, vocative
from .words import is_thing as _thing, is_when as _when, measured as _measured

__all__ = ["referent"]

_SUBJ = {"nsubj", "nsubjpass", "csubj", "expl"}
_PRON_SING = {"it", "its"}
_PRON_PLUR = {"they", "them", "their"}
_HE_SHE = {"he", "him", "his", "she", "her"}
#: Entity kinds a pronoun never stands for (dates, times, amounts).
_NOT_REFERENTS = {"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT"}


def _own_verb(tok):
    """``(verb, role)``: the verb a noun or pronoun is an argument of and its dependency there
    (a preposition's object: the preposition's; a conjunct: its first conjunct's), or None."""
    while tok.dep_ == "conj" and tok.head.i != tok.i:
        tok = tok.head
    if tok.dep_ == "pobj" and tok.head.dep_ in ("prep", "dative", "agent"):
        tok = tok.head
    return (tok.head, tok.dep_) if tok.head.pos_ in ("VERB", "AUX") and tok.head.i != tok.i else None


def _co_argument(cand, own) -> bool:
    """Whether ``cand`` is an argument of the pronoun's own verb that the pronoun cannot stand
    for: any, for a subject or object pronoun ("the kids loved it"); the direct object, for a
    pronoun after a preposition ("you put effort into it"; but "the box has a hole in it")."""
    if own is None:
        return False
    got = _own_verb(cand)
    if got is None or got[0].i != own[0].i:
        return False
    return own[1] not in ("prep", "dative", "agent") or got[1] in ("dobj", "dative")


def _addressed(tok) -> bool:
    """A name spoken to: after a greeting or thanks ("Thanks, Caroline!", "Hey Mel"), or set off
    as the sentence's vocative (:func:`fastmem.reader.words.vocative`)."""
    return tok.pos_ == "PROPN" and (tok.dep_ in ("npadvmod", "intj") or tok.head.lower_ in INTERJECTIONS
                                    or vocative(tok))


def referent(tok, person_nouns):
    """What a third-person pronoun of a fact stands for in its own text: the nearest mention
    before it that it can name (a person for *he* / *she*, a thing for *it*, a plural for
    *they*); the token itself when there is none (the write then looks in the turns before,
    :mod:`fastmem.reader.who`). ``person_nouns``: lemmas of nouns that name a person."""
    tok = _measured(tok)  # "a lot of friends": friends
    low = tok.lower_
    if tok.pos_ != "PRON" or low not in _HE_SHE and low not in _PRON_SING and low not in _PRON_PLUR:
        return tok
    if low == "it" and tok.dep_ in _SUBJ:  # "It taught me patience. It also showed me ...": the same "it"
        before = next((t for t in reversed(tok.doc[: tok.i]) if t.dep_ in _SUBJ), None)
        if before is not None and before.lower_ == "it" and not dummy_it(before):
            ref = referent(before, person_nouns)
            return tok if ref.i == before.i else ref
        ahead = tok.sent[: tok.i - tok.sent.start]  # the sentence before the pronoun
        earlier = next((t for t in reversed(ahead) if t.lower_ == "it" and t.dep_ in ("dobj", "pobj")), None)
        if earlier is not None and not any(t.dep_ in _SUBJ and t.i > earlier.i for t in ahead):
            ref = referent(earlier, person_nouns)  # "I used it all over Norway and it never let me down": the same "it"
            if ref.i != earlier.i:
                return ref
        if before is not None and before.head.i < tok.i and (before.tag_ == "VBG" and before.pos_ == "VERB" or (
                before.pos_ == "NOUN" and any(c.tag_ == "VBG" and c.dep_ == "amod" and c.i == before.i - 1
                                              for c in before.lefts))):  # (read as "taking" modifying "risks")
            return before  # "taking risks is key for success. It's made me grow": the taking, not the success
    if low == "it" and tok.dep_ not in _SUBJ:  # "It took some work, but I'm proud of it": what the subject "it" was
        ahead = tok.sent[: tok.i - tok.sent.start]
        said = next((t for t in ahead if t.lower_ == "it" and t.dep_ in _SUBJ and not dummy_it(t)), None)
        if said is not None:
            ref = referent(said, person_nouns)
            if ref.i != said.i:
                return ref
    fits = []
    own = _own_verb(tok)
    host = tok.head.head if tok.dep_ == "pobj" and tok.head.head.pos_ in ("NOUN", "PROPN") else None
    if own is not None and own[0].dep_ in ("relcl", "acl") and own[0].head.pos_ in ("NOUN", "PROPN"):
        host = own[0].head  # "all the challenges they face": not the challenges
    for cand in reversed(tok.doc[: tok.i]):
        if _co_argument(cand, own) or host is not None and cand.i == host.i:
            continue  # "the kids loved it", "you put effort into it", "a hole in it": never itself
        if _addressed(cand):
            continue  # "Thanks, Caroline! Glad you like it": the one spoken to is "you"
        if cand.dep_ == "compound" or cand.dep_ == "poss" and not (low in _HE_SHE and (
                cand.ent_type_ == "PERSON" or cand.lemma_.lower() in person_nouns)) \
                or cand.pos_ not in ("NOUN", "PROPN") \
                or any(c.dep_ == "det" and c.lower_ == "no" for c in cand.children):
            continue  # (nor "No doubts, Caroline": what there is none of; an owner is no "it", but a
            # person named as one is who "he" or "she" can be: "Oliver's hilarious! He hid ...", "'s" read as
            # a possessive; "my brother's wedding! he's marrying ...")
        if (cand.ent_type_ in _NOT_REFERENTS or not _thing(cand) or _when(cand)
                or cand.dep_ == "attr" and cand.lemma_ in EVALUATIVE):
            continue  # "it" is never "awesome--" nor "a great way", nor "a bummer" ("... but it pushed me")
        person = cand.ent_type_ == "PERSON" or cand.lemma_.lower() in person_nouns \
            or low in _HE_SHE and cand.lemma_.lower() in PET_NOUNS  # "we got a puppy, she chews everything"
        plural = (cand.tag_ in ("NNS", "NNPS") or cand.ent_type_ in ("NORP", "ORG") and low in _PRON_PLUR
                  or low in _PRON_PLUR and cand.lemma_.lower() in COLLECTIVE)  # "my fam's been awesome - they ..."
        if low in _HE_SHE and _sex(cand) not in (None, PRONOUN_SEX[low]):
            continue  # "my wife Lucia booked a carpenter, he's coming": not Lucia
        if ((low in _HE_SHE and person and not plural) or (low in _PRON_SING and not person and not plural)
                or (low in _PRON_PLUR and plural)):
            fits.append(cand)
    if not fits:
        return tok
    if tok.dep_ in _SUBJ:  # a subject pronoun continues the subject before it, when one fits
        here = tok.sent.start  # (of an earlier sentence, or of an earlier clause of its own:
        for cand in fits:      # "my friends are my rocks - they motivate me": the friends)
            if cand.dep_ in _SUBJ and (cand.i < here or cand.head.i < tok.head.i and cand.head is not tok.head):
                return cand
    if low in _PRON_SING and fits[0].sent.start != tok.sent.start:
        # "it" of a sentence that names nothing before it: of the sentence before, what a clause was
        # about (its subject or object) before a place or a time in passing ("I made this bowl in my
        # class. It took some work": the bowl, not the class)
        # (and when that sentence's clause is about someone, not a thing, "Our city held a pride parade!
        # So many people marched ..., celebrating love and diversity. I missed it": what the sentence
        # before that was about, the parade, not a noun in passing)
        core = next((c for c in fits if _core(c)), None)
        fitting = {f.i for f in fits}
        if core is not None and (core.sent.start == fits[0].sent.start or any(
                _core(c) and c.i not in fitting for c in fits[0].sent)):
            return core
    return fits[0]


def _sex(tok) -> str | None:
    """"m" or "f" where a person noun says it ("my sister"), or the role beside a name does
    ("my wife Lucia", "Sol, my boyfriend"); None when nothing does."""
    ties = [tok] + [c for c in tok.children if c.dep_ in ("compound", "amod", "appos")]
    if tok.dep_ == "appos":
        ties.append(tok.head)
    return next((sex for t in ties if (sex := noun_sex(t.lemma_)) is not None), None)


def _core(tok) -> bool:
    """A main clause's subject or object (through the conjuncts of one), not a preposition's
    object, nor an argument of a clause used as a noun ("*Keeping the family tradition* alive in
    my cooking is important to me. I also use it": the cooking) or of a clause that shows
    ("here's a pic")."""
    while tok.dep_ == "conj" and tok.head.i != tok.i:
        tok = tok.head
    verb = tok.head
    while verb.dep_ == "conj" and verb.head.i != verb.i:
        verb = verb.head
    return (tok.dep_ in ("nsubj", "nsubjpass", "dobj", "attr") and verb.dep_ == "ROOT"
            and not any(c.dep_ == "advmod" and c.lower_ in ("here", "there") for c in verb.children))
