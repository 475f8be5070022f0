"""A text's plot: its sentences told without their clothes, for the analogy slot's structure view.

An analogy keeps the relations and changes the things: an army that splits up and converges on
a fortress and rays that converge on a tumour from many sides tell the same plot about
different things. :func:`clauses` renders each sentence of a parse with its things replaced by
what role they play, not what they are: people and organisations become "someone", places
"somewhere", times "sometime", quantities "some", other things "something", possessives
"their"; the adjectives and compound words that dress a noun are left out; verbs are kept
(content verbs lemmatised, auxiliaries as written) with the function words and connectives that
link the clauses ("because", "so", "until", "instead"). "A courier's bridge was closed after a
truck crashed into it, so she rode south to the ferry" becomes "a someone 's something was close
after a something crash into something , so someone ride south to the something .".

The analogy slot embeds each clause with the sentence model and compares two plots clause by
clause in story order (:mod:`fastmem.analogy.plots`). A sentence whose only verbs are skeleton
verbs ("that sounds great", :mod:`fastmem.reader.lexicon`) is kept in the plot but does not
count towards :data:`MIN_CONTENT`: chat made of such sentences has no plot to compare.
"""

from __future__ import annotations

from .lexicon import is_skeleton

__all__ = ["clauses", "has_plot", "MIN_CLAUSES", "MIN_CONTENT", "PLOT_VERSION", "PEOPLE"]

#: A plot has at least this many clauses ...
MIN_CLAUSES = 2
#: ... of which at least this many have a content verb (not a skeleton verb).
MIN_CONTENT = 2
#: The version of the rendering (bump when it changes what a text's clauses are).
PLOT_VERSION = 1
#: The fewest words a rendered sentence keeps to be a clause of the plot.
MIN_WORDS = 3

#: Common nouns that name a person by kin, role or trade (rendered "someone", as names are).
PEOPLE = frozenset("""
person people man woman men women boy girl child children kid baby adult teen teenager family parent mother father
mom dad son daughter brother sister sibling aunt uncle cousin grandmother grandfather grandma grandpa wife husband
partner friend neighbour neighbor stranger guest host visitor owner member leader boss manager employee employer
worker staff colleague assistant apprentice trainee intern student pupil teacher professor tutor coach trainer
player athlete captain team crew doctor nurse surgeon patient physician dentist vet lawyer judge officer police
detective thief guard soldier general commander king queen prince princess ruler president minister mayor
citizen voter customer client buyer seller shopkeeper merchant vendor dealer farmer baker cook chef waiter driver
pilot sailor fisherman hunter engineer scientist researcher inventor artist painter musician singer writer author
editor reporter journalist actor director producer designer architect builder carpenter plumber mechanic
electrician gardener cleaner landlord tenant climber surfer runner swimmer rider courier messenger spy agent
rival enemy opponent ally volunteer resident villager tourist traveller traveler passenger audience fan crowd
""".split())

_PERSON_ENTS = frozenset({"PERSON", "NORP", "ORG"})
_PLACE_ENTS = frozenset({"GPE", "LOC", "FAC"})
_TIME_ENTS = frozenset({"DATE", "TIME"})
_KEEP = frozenset({"VERB", "AUX", "ADP", "SCONJ", "CCONJ", "PART", "DET", "PUNCT", "ADV", "ADJ"})
_PERSON_PRON = frozenset({"i", "me", "you", "he", "him", "she", "her", "we", "us", "they", "them", "myself", "yourself",
                          "himself", "herself", "ourselves", "themselves", "who", "whom", "someone", "somebody",
                          "everyone", "everybody", "nobody", "anyone", "anybody"})
_POSSESSIVE = frozenset({"my", "your", "his", "her", "our", "their", "its", "whose"})


def _role(tok, people: frozenset) -> str | None:
    """The role word a token stands for, or None when it is not a thing (a verb, a function word)."""
    ent = tok.ent_type_
    if ent in _PERSON_ENTS:
        return "someone"
    if ent in _PLACE_ENTS:
        return "somewhere"
    if ent in _TIME_ENTS:
        return "sometime"
    if tok.like_num or tok.pos_ == "NUM":
        return "some"
    low = tok.lower_
    if tok.pos_ == "PRON":
        if low in _POSSESSIVE or tok.tag_ == "PRP$":
            return "their"
        return "someone" if low in _PERSON_PRON else "something"
    if tok.pos_ == "PROPN":
        return "someone"
    if tok.pos_ == "NOUN":
        return "someone" if tok.lemma_.lower() in people else "something"
    return None


def _sentence(sent, people: frozenset) -> tuple[str, bool]:
    """One sentence rendered (see the module docstring), and whether it has a content verb."""
    out: list[str] = []
    content = False
    for tok in sent:
        if tok.dep_ == "compound" and tok.head.pos_ in ("NOUN", "PROPN"):
            continue  # "oak tree", "New York Times": the head says what it is
        if tok.pos_ == "ADJ" and tok.dep_ == "amod":
            continue  # what dresses a noun
        role = _role(tok, people)
        if role is not None:
            if not out or out[-1] != role:
                out.append(role)
        elif tok.pos_ == "VERB":
            lemma = tok.lemma_.lower()
            out.append(lemma)
            content = content or not is_skeleton(lemma)
        elif tok.pos_ in _KEEP:
            out.append(tok.lower_)
    return " ".join(out), content


def clauses(doc, people: frozenset = PEOPLE) -> tuple[list[str], int]:
    """A parsed text's plot: each sentence rendered without its clothes (of at least
    :data:`MIN_WORDS` words), in text order, and how many of them have a content verb.
    ``people``: common nouns that name a person ("farmer", "coach"), rendered "someone"."""
    out, content = [], 0
    for sent in doc.sents:
        text, has = _sentence(sent, people)
        if len(text.split()) >= MIN_WORDS:
            out.append(text)
            content += has
    return out, content


def has_plot(rendered: tuple[list[str], int] | None) -> bool:
    """Whether a rendering (:func:`clauses`) is a plot the slot compares."""
    return rendered is not None and len(rendered[0]) >= MIN_CLAUSES and rendered[1] >= MIN_CONTENT
