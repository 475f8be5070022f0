"""Standing instructions and preferences: found at write time from the parse, recalled by topic.

A user tells an assistant once "always add type hints when you show me Python" or "I prefer
PostgreSQL over MySQL"; weeks later "write me a function that parses the upload CSV" needs
it. Ordinary recall looks for memories that *say what the turn says*; a standing statement
says something else that *applies* to it. So a memory that holds one is marked at write time
(its kind, polarity, the sentence and its topic words: the ``standing`` table, owned here)
and every recall matches the turn against the store's standing statements apart from the hits
(``Recall.standing``).

**Detection** (:func:`detect`, no language model: spaCy's dependency parse and the rules
below, per sentence; a memory keeps its strongest statement). A question never is one.

- *Instruction*: a sentence addressed to the assistant (an imperative: a root verb in base
  form without a subject; or "you should / must ..."; or "I want / I'd like you to ...")
  that is meant to hold beyond this turn: it carries a standing word (*always, never, ever,
  whenever, from now on, going forward, in future, every / each / any time*), a condition
  clause about the user or the assistant (*when I ask ..., if you ..., unless I ...*; not a
  chance, *if you ever ...*), or it
  names what it applies to in general (*in all your answers, in my emails, in every
  snippet*: a plural or quantified noun owned by the user or the assistant). "Write me a
  function", "please explain recursion", "don't worry" and "never mind" are not.
  Negative polarity: *never, don't, do not, stop, avoid*.
- *Preference*: the user (*I* or *we*) as subject of *prefer, like, love, enjoy, favour,
  hate, dislike, detest* (also under *tend to*), *would rather*, *can't stand*, *(not) a
  fan of*, *my favourite X is*, or *I use X because ...*. Not a preference: a request ("I'd
  like to book", "I'd love to hear"), a reaction to the conversation (an object that is a
  pronoun, *your ...*, *this / that ...*, *the ...* with nothing after it, or a *how / what*
  clause: "I like your answer", "I love all the yellow leaves" of a photo just shown),
  anyone else's taste ("my brother prefers tea"). Negative polarity: *hate, dislike,
  detest, can't stand, not a fan*, a negated verb.

A host that knows better passes ``kind=`` to ``remember`` (``"instruction"``,
``"preference"``, or ``"plain"`` for never standing).

What is stored and how a turn finds the statements that apply to it: :mod:`fastmem.derived.standing`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InvalidInput
from ..util.text import STOPWORDS

__all__ = ["KINDS", "Statement", "detect", "detect_docs", "cue", "explicit", "imported", "PLAIN", "SKIP",
           "ASSISTANT_SPEAKERS", "FORM_WORDS", "reach_of"]

#: What ``remember(kind=...)`` accepts: the two standing kinds, and "plain" (never standing).
KINDS = ("instruction", "preference", "plain")
# cheap test before the parse: a text without any of these holds no statement
_CUE = re.compile(
    r"\b(always|never|ever|whenever|from now on|going forward|in (the )?future|every (single )?time|each time|any time|"
    r"by default|for future|for next time|"
    r"prefer\w*|rather|like|love|enjoy\w*|hate|dislike|detest|favou?rite|fan of|can'?t stand|cannot stand|"
    r"don'?t|do not|stop|avoid|please|use|when|if|unless|make sure|remember to|you should|you must|"
    r"all|every|each|my|your|suits?|comfortable|happ(?:y|ier|iest)|want|lean\w*|tend|pick|choose|opt|over|"
    r"appreciate|better|best)\b", re.I)
_STANDING = {"always", "never", "ever", "whenever"}
_STANDING_PHRASES = ("from now on", "going forward", "in future", "in the future", "every time", "each time",
                     "any time", "from here on", "every single time", "by default", "for future", "for next time")
_IDIOMS = ("never mind",)
_COND_MARKS = {"when", "whenever", "if", "unless"}
_QUANT = {"all", "every", "each", "any"}
_NEG_VERBS = {"stop", "avoid"}
_PREF_POS = {"prefer", "like", "love", "enjoy", "favour", "favor", "adore"}
_PREF_NEG = {"hate", "dislike", "detest"}
_REQUEST_VERBS = {"like", "love"}  # with "would": a request ("I'd like to book")
_DEICTIC = {"this", "that", "these", "those"}
_FIRST = {"i", "we"}


def cue(text: str) -> bool:
    """Whether ``text`` could hold a statement (worth parsing)."""
    return _CUE.search(text) is not None


@dataclass(frozen=True, slots=True)
class Statement:
    """One standing statement found in a memory: its ``kind`` ("instruction" or
    "preference"), ``polarity`` (+1 do / like, -1 don't / dislike), the ``sentence`` that says
    it, its ``topic`` words (lower-case lemmas of its nouns, names and adjectives) and its
    ``focus``."""

    kind: str
    polarity: int
    sentence: str
    topic: tuple[str, ...]
    #: what it applies to, as text: its condition clause ("when I ask for shell commands"), or ""
    focus: str = ""

    @property
    def reach(self) -> str:
        """``"global"`` (every turn) or ``"topical"`` (turns on its topic): :func:`reach_of`."""
        return reach_of(self.kind, self.topic, self.focus, self.sentence)


#: Speakers whose memories are never searched for statements (the assistant's own advice is
#: full of imperatives: "use a salted hash", "keep a copy of your documents"), compared
#: case-insensitively; a host passes ``kind=`` to say otherwise.
ASSISTANT_SPEAKERS = frozenset({"assistant", "ai", "bot", "model", "system", "tool"})
#: A ``kinds`` entry (internal): do not detect, store nothing.
SKIP = "skip"

#: The statement of a memory written with ``kind="plain"``: stored so that no later
#: derivation detects one in it; never recalled.
PLAIN = Statement("plain", 0, "", ())


# -- detection -------------------------------------------------------------------------------
def _label_end(sent) -> int:
    """The index after a speaker label that opens the sentence ("User: ...", "Dr. Lee:
    ..."): a colon among its first five tokens with only names or nouns before it; else the
    sentence's start."""
    for t in sent[:5]:
        if t.text == ":":
            before = sent.doc[sent.start:t.i]
            if before and all(b.pos_ in ("PROPN", "NOUN") or b.is_punct for b in before):
                return t.i + 1
            break
    return sent.start


def _subjects(tok) -> list:
    """The subjects of ``tok``, less a speaker label the parser took for one and a heading
    before a colon ("Quick request for the future: if I ask ..., explain ...")."""
    start = _label_end(tok.sent)
    colon = max((t.i for t in tok.sent if t.text == ":" and t.i < tok.i), default=-1)
    return [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass", "expl") and c.i >= start and c.i > colon]


def _first_person(tok) -> bool:
    return any(s.lower_ in _FIRST for s in _subjects(tok))


def _own_clause(v) -> list:
    """The tokens of ``v``'s clause: its subtree less the clauses under it that have a subject
    of their own ("remember, I'm always here": the "always" is not the order's)."""
    skip: set[int] = set()
    for c in v.subtree:
        subj = [k for k in c.children if k.dep_ in ("nsubj", "nsubjpass")]
        # a clause of the assistant's ("make sure you always include ...") is the order's content
        if c.i != v.i and c.dep_ in _CLAUSE and subj and not any(k.lower_ == "you" for k in subj):
            skip.update(t.i for t in c.subtree)
    return [t for t in v.subtree if t.i not in skip]


def _has_standing_word(sent, v=None) -> bool:
    """A standing word (or phrase) in the sentence, or, given ``v``, in ``v``'s own clause."""
    low = sent.text.lower()
    if any(p in low for p in _IDIOMS):
        return False
    toks = _own_clause(v) if v is not None else list(sent)
    text = " ".join(t.lower_ for t in toks)
    return any(t.lower_ in _STANDING and not _in_condition(t) for t in toks) or \
        any(p in text for p in _STANDING_PHRASES)


def _in_condition(t) -> bool:
    """``t`` is the "ever" of a condition clause ("if you ever do it": once, some day, not
    always); a condition that holds beyond the turn counts by itself (:func:`_condition`)."""
    if t.lower_ != "ever":
        return False
    h = t.head
    for _ in range(4):
        if h.dep_ in ("advcl", "relcl") and any(m.lower_ in _COND_MARKS for m in h.children if m.dep_ in ("mark", "advmod")):
            return True
        if h.head.i == h.i:
            return False
        h = h.head
    return False


def _about_something(v) -> bool:
    """The order names what it is about: a noun under it, not a pronoun and not the "time" of
    "any time" ("never give up", "keep going" name nothing)."""
    return any(t.pos_ in ("NOUN", "PROPN", "X") and t.lower_ not in ("time", "times") for t in v.subtree)


def _condition(root, *, below: bool = False) -> str | None:
    """A clause under ``root`` introduced by when/if/unless whose subject is the user or the
    assistant ("when I ask for shell commands", "if you review my code"): its text.
    ``below``: not ``root``'s own clause (the "if you ..." of a wish is the order itself)."""
    for c in root.subtree:
        if below and c.i == root.i:
            continue
        if c.dep_ in ("advcl", "relcl") and c.tag_ != "MD" and any(
                m.lower_ in _COND_MARKS for m in c.children if m.dep_ in ("mark", "advmod")):
            subj = _subjects(c)
            if any(s.lower_ == "you" for s in subj) and any(t.lower_ == "ever" for t in c.children):
                continue  # a chance, not a trigger: "if you ever do it, let me know"
            if any(s.lower_ == "you" for s in subj) and c.lemma_.lower() in _LISTENERS_OWN:
                continue  # the listener's own need, not a request: "take breaks when you need to destress"
            if any(s.lower_ in ("i", "you", "we") or _about_the_ask(s) for s in subj):  # not "when you can"
                return "".join(t.text_with_ws for t in c.subtree).strip()
    return None


#: Verbs of a condition that say what the listener needs or feels ("when you need to destress",
#: "if you feel down"): advice to a friend, never a trigger of an assistant's work.
_LISTENERS_OWN = {"need", "feel", "want"}

#: A condition about the user's asking ("whenever my question is about testing", "when the
#: topic is accessibility"), by its subject.
_ASK_NOUNS = {"question", "questions", "topic", "request", "requests", "query", "subject", "task", "conversation",
              "discussion"}


def _about_the_ask(subj) -> bool:
    """A condition's subject is the user's question or topic, or anything of the user's."""
    return subj.lower_ in _ASK_NOUNS or any(k.lower_ in ("my", "our") for k in subj.children if k.dep_ == "poss")


#: Nouns of set phrases that quantify nothing the statement applies to ("in any way I can",
#: "in any case", "at any rate").
_MANNER = {"way", "ways", "case", "rate"}


def _general_scope(sent) -> bool:
    """What the statement applies to, in general, after a preposition: a quantified noun (all /
    every / each / any: "in every snippet", "in all your answers") or a plural owned by the
    user ("in my emails"). Not "every word" or "each day" as an object or an adverb, nor "your
    customers": advice does that ("cut every word that ...", "build relationships with your
    customers"); "anything / everything you ..." after a preposition is every answer."""
    for t in sent:
        if t.lower_ in ("anything", "everything") and t.dep_ == "pobj" and any(
                c.dep_ == "relcl" and any(k.lower_ == "you" for k in c.children if k.dep_ == "nsubj") for c in t.children):
            return True  # "in anything you show me": every answer
        if t.pos_ not in ("NOUN", "PROPN") or t.dep_ != "pobj" or t.lower_ in _MANNER:
            continue
        kids = {c.lower_ for c in t.children if c.dep_ in ("det", "poss", "predet")}
        if kids & _QUANT:
            return True
        if kids & {"my", "our"} and t.tag_ in ("NNS", "NNPS"):
            return True
    return False


def _forbids_in_yours(sent, v) -> bool:
    """A prohibition about the assistant's outputs: ``v`` negative (don't, never, stop, avoid)
    with a plural owned by "your" under it ("don't include links in your summaries"); not
    "your" alone, which advice uses ("build relationships with your customers")."""
    if not _negative(sent, v):
        return False
    return any(t.dep_ == "pobj" and t.tag_ in ("NNS", "NNPS") and any(k.lower_ == "your" for k in t.children)
               for t in v.subtree)


_CLAUSE = {"ROOT", "conj", "ccomp", "advcl", "parataxis", "xcomp", "pcomp"}
_PREF_START = re.compile(r"^\s*(?:honestly,?\s+)?(?:i|we)\s+(?:really\s+|much\s+|do\s+|also\s+|generally\s+)?"
                         r"(like|love|prefer|enjoy|hate|dislike)\b", re.I)


def _clauses(sent) -> list:
    """The heads of the sentence's clauses (its root first)."""
    root = sent.root
    return [root] + [t for t in sent if t.i != root.i and t.dep_ in _CLAUSE and t.pos_ in ("VERB", "AUX")]


def _clause_start(v) -> bool:
    """The clause of ``v`` opens the sentence, or follows a colon or semicolon (where an
    order is given: "change of plan: use unittest from now on")."""
    first = min(t.i for t in v.subtree)
    sent = v.sent
    if first == sent.start:
        return True
    prev = v.doc[first - 1]
    return prev.text in (":", ";") or (first - sent.start <= 2 and all(
        t.lower_ in ("please", "so", "ok", "okay", "also", "and", "now", ",") or t.is_punct
        for t in v.doc[sent.start:first]))


def _imperative(v) -> bool:
    """A verb in base form without a subject heads a clause that opens the sentence (the
    small parser tags many imperatives VBP, or VBN after "never"; "From now on keep ..."
    hangs the verb under "from"; "Do not suggest ..." may make the verb an auxiliary)."""
    sent = v.sent
    words = [t for t in sent if not t.is_punct]
    if v.i == sent.root.i and len(words) >= 2 and words[0].lemma_.lower() == "do" and words[1].dep_ == "neg":
        return True
    moved = False
    if v.i == sent.root.i and v.pos_ not in ("VERB", "AUX"):
        v = next((t for t in sent if t.tag_ == "VB"), None)
        if v is None:
            return False
        moved = True
    if _subjects(v) or (v.dep_ in ("xcomp", "pcomp") and not moved):
        return False
    if any(c.dep_ in ("aux", "auxpass") and c.lower_ in ("would", "could", "can", "ca", "will", "wo", "to", "have",
                                                          "has", "had", "is", "was", "been", "be", "'ve", "'d")
           for c in v.children):
        return False
    if v.lemma_.lower() in _PREF_POS | _PREF_NEG:  # "Love how you ...": a preference, its "I" dropped
        return False
    if not (v.tag_ in ("VB", "VBP") or (v.tag_ == "VBN" and any(c.lower_ == "never" for c in v.children))
            or (v.tag_ == "VBD" and v.lower_ == v.lemma_.lower() and v.i == sent.root.i)):  # "put", "set", "cut"
        return False
    return v.dep_ == "ROOT" or moved or _clause_start(v) or any(c.dep_ == "neg" or c.lower_ in _STANDING for c in v.children
                                                       if c.i < v.i and c.i - sent.start <= 2)


#: The auxiliaries of a request put as a question ("can you stop ...?", "would you mind ...?").
_ASKING = {"can", "ca", "could", "would", "will", "wo"}


def _addressed(v) -> bool:
    """The clause tells the assistant to do something: an imperative, "you should ...", "I
    want / I'd like you to ...", or, in a question, "can / could / would you ..." ("can you
    stop using inplace=True in anything you show me?")."""
    if _imperative(v):
        return True
    subj = _subjects(v)
    if any(s.lower_ == "you" for s in subj) and any(c.dep_ == "aux" and c.lower_ in ("should", "must")
                                                     for c in v.children):
        return True
    if any(s.lower_ == "you" for s in subj) and v.sent.text.rstrip().endswith("?") \
            and any(c.dep_ == "aux" and c.lower_ in _ASKING for c in v.children):
        return True
    if v.lemma_ in ("want", "like", "need") and _first_person(v):
        return any(c.dep_ in ("ccomp", "xcomp") and any(s.lower_ == "you" for s in _subjects(c)) for c in v.children) \
            or any(c.dep_ == "dobj" and c.lower_ == "you" for c in v.children)
    return False


def _negative(sent, v) -> bool:
    return (any(c.dep_ == "neg" for c in v.children) or v.lemma_ in _NEG_VERBS
            or any(t.lower_ == "never" and t.head.i == v.i for t in sent)
            or (v.i == sent.root.i and any(t.dep_ == "neg" for t in sent[:3])))


#: A request put as a wish: "it would help (me) if you ...", "I'd appreciate it if you ...",
#: "it'd be better if ... you ...": what follows "if" is the order when the assistant does it.
_HEDGED = re.compile(r"\b(?:it|i|that)\s*(?:would|'d)\s+(?:really\s+|also\s+)?(?:help(?:\s+me)?(?:\s+a\s+lot)?|"
                     r"appreciate\s+it|be\s+(?:better|great|nice|helpful|good|ideal|easier|best))\s*,?\s+if\b", re.I)


def _hedged(sent) -> tuple[int, str | None] | None:
    """(polarity, condition) of a request put as a wish, when it holds beyond this turn (a
    standing word or a condition clause: "it would help me if every time I ask about security
    you mention ...")."""
    m = _HEDGED.search(sent.text)
    if m is None:
        return None
    after = sent.start_char + m.end()
    you = [t for t in sent if t.idx >= after and t.lower_ == "you" and t.dep_ == "nsubj" and t.head.pos_ in ("VERB", "AUX")]
    if not you:
        return None
    v = you[-1].head  # the assistant's verb (the last "you ...": "if, when you suggest X, you keep Y")
    between = sent.doc.text[after:you[-1].idx]  # what comes between "if" and the order
    cond = _condition(v, below=True) or (re.search(r"\b(?:when|whenever|every time|any time|each time)\b.*", between.strip(" ,"),
                                       re.I) or [None])[0]
    if not (cond or _has_standing_word(sent)) or not _about_something(v):
        return None
    neg = any(c.dep_ == "neg" for c in v.children) or any(t.lower_ == "never" and t.head.i == v.i for t in sent)
    return (-1 if neg else 1), (cond.strip(" ,") if cond else None)


def _instruction(sent) -> tuple[int, str | None] | None:
    """(polarity, the condition clause or None) of an instruction, or None."""
    hedged = _hedged(sent)
    if hedged is not None:
        return hedged
    general = _general_scope(sent)
    for v in _clauses(sent):
        if _addressed(v):
            cond = _condition(v)
            if (general or cond or _has_standing_word(sent, v) or _forbids_in_yours(sent, v)) and \
                    (cond or _about_something(v)):
                return (-1 if _negative(sent, v) else 1), cond
    return None


def _lasting(v) -> bool:
    """A taste that holds now, with an object: not in a relative clause ("everything we
    love"), not past ("I enjoyed the film last night", "I used to love"), not without what
    is liked ("Yeah, I love to.")."""
    if v.dep_ == "relcl" or v.tag_ == "VBD" or (v.head.lemma_ == "use" and v.dep_ == "xcomp"):
        return False
    return any(c.dep_ in ("dobj", "xcomp", "ccomp", "attr", "acomp", "pcomp") or c.pos_ in ("NOUN", "PROPN")
               or (c.dep_ == "prep" and any(k.dep_ in ("pobj", "pcomp") for k in c.children))
               or c.lower_ in ("better", "more", "best", "most") for c in v.children)  # "like X better than Y"


def _conversational(verb) -> bool:
    """The object of a like / love is the conversation itself ("your answer", "that idea",
    "it", "how you explained it", "that you chose pottery")."""
    for c in verb.children:
        if c.dep_ in ("dobj", "ccomp"):
            if c.pos_ == "PRON" or c.lower_ in _DEICTIC:
                return True
            if any(k.lower_ in _DEICTIC | {"your"} for k in c.children if k.dep_ in ("det", "poss")):
                return True
            if c.dep_ == "dobj" and any(k.lower_ == "the" for k in c.children if k.dep_ == "det") \
                    and not any(k.dep_ in ("prep", "acl", "relcl") for k in c.children):
                return True  # "I love the yellow leaves", "I like the second option": what was just shown
            if c.dep_ == "ccomp" and any(k.tag_ in ("WRB", "WP") or (k.dep_ == "mark" and k.lower_ == "that")
                                         or k.dep_ in ("nsubj", "nsubjpass") for k in c.children):
                return True  # "how you explained it", "that you chose pottery"
    return False


def _holder_first_person(v) -> bool:
    """``v``'s subject, or that of the verb it depends on ("I've switched to preferring"),
    is the user."""
    t = v
    for _ in range(3):
        if _subjects(t):
            return _first_person(t)
        if t.head.i == t.i:
            return False
        t = t.head
    return False


#: Verbs of choosing: with the user as subject and "over" / "rather than" / "instead of" /
#: "towards" (or under "tend to"), a taste: "I'd pick open standards over ...", "I lean towards
#: boring tools", "I tend to go for typed languages".
_CHOOSE = {"pick", "choose", "go", "opt", "lean", "stick", "reach", "favour", "favor"}
#: "X suits me better", "X works better for me", "X feels safer to me than Y".
_SUITS = {"suit", "work", "feel", "sit"}
#: "I'm more comfortable with X than Y", "I'm happiest with plain CSS".
_AT_EASE = {"comfortable", "happy", "happier", "happiest", "confident", "productive"}


def _choice(sent) -> int | None:
    """A taste said without a verb of liking: choosing one thing over another, a thing that
    suits the user better, the user at ease with a thing, or the user not wanting a thing."""
    for v in sent:
        if v.pos_ not in ("VERB", "AUX"):
            continue
        lemma = v.lemma_.lower()
        kids = list(v.children)
        neg = any(c.dep_ == "neg" for c in kids)
        if lemma in _CHOOSE and (_first_person(v) or (v.dep_ == "xcomp" and v.head.lemma_ == "tend"
                                                      and _first_person(v.head))):
            if v.tag_ in ("VBD", "VBN") or any(c.dep_ == "prt" for c in kids):  # "I went for", "I picked up"
                continue
            near = kids + [k for c in kids if c.dep_ == "dobj" for k in c.children]
            preps = {c.lower_ for c in near if c.dep_ in ("prep", "advmod")}
            if preps & {"over", "towards", "toward", "instead"} or "rather than" in sent.text.lower() or \
                    (v.dep_ == "xcomp" and preps & {"for", "with"}):
                return -1 if neg else 1
        if lemma in _SUITS and any(c.lower_ == "me" for c in v.subtree) and (
                any(t.tag_ in ("JJR", "RBR") for t in v.subtree) or lemma == "suit"):
            subj = _subjects(v)
            if subj and subj[0].pos_ != "PRON":
                return -1 if neg else 1
        if lemma == "be" and _first_person(v):
            for c in kids:
                if c.dep_ == "acomp" and c.lower_ in _AT_EASE and any(
                        k.dep_ == "prep" and k.lower_ in ("with", "in", "using") and any(
                            o.dep_ == "pobj" and o.pos_ in ("NOUN", "PROPN", "ADJ") for o in k.children)
                        for k in list(c.children) + kids):  # "I'm more comfortable in Python": under either
                    if c.lower_ in ("happiest",) or any(k.lower_ in ("more", "most", "than") for k in c.subtree) \
                            or c.tag_ in ("JJR", "JJS"):
                        return -1 if neg else 1
        if lemma == "want" and neg and _first_person(v) and any(_a_thing(c) for c in kids):
            return -1  # "I don't want user data leaving our servers"
    low = sent.text.lower().lstrip()
    if _SUITS_ME.search(low) and not re.match(r"(?:that|this|it|which|sounds|yes|ok)\b", low):
        return 1  # "free tiers suit me better than paid services"
    return None


_SUITS_ME = re.compile(r"\bsuits?\s+(?:me|us)\s+(?:much\s+|far\s+)?(?:better|best)\b|\b(?:suits?|works?|feels?)\s+"
                       r"(?:much\s+|far\s+|a\s+lot\s+)?(?:better|best)\s+(?:for|to)\s+(?:me|us)\b")


def _a_thing(c) -> bool:
    """An object that is a thing, not a person or the conversation: a noun ("I don't want
    ads"), or a clause about a noun ("I don't want user data leaving our servers")."""
    if c.dep_ == "dobj":
        return c.pos_ in ("NOUN", "PROPN") and not any(k.lower_ in _DEICTIC | {"your"} for k in c.children)
    if c.dep_ == "ccomp" and c.pos_ == "VERB":
        return any(k.dep_ == "nsubj" and k.pos_ in ("NOUN", "PROPN") for k in c.children)
    return False


def _preference_at(sent) -> tuple[int | None, object]:
    """The polarity of the sentence's preference (or None) and the verb that says it (or None
    when no one verb does)."""
    low = sent.text.lower()
    if re.search(r"\bmy (all-time )?favou?rite\b", low):
        return 1, None
    for v in _clauses(sent) + [t for t in sent if t.lemma_.lower() in _PREF_POS | _PREF_NEG and t.pos_ == "VERB"]:
        if _told_event(v):
            continue
        pol = _preference_of(sent, v, low)
        if pol is not None:
            return pol, v
    m = _PREF_START.match(sent.text)
    if m and not re.search(r"\b(would|'d)\b", low[:m.end()]):
        verb = next((t for t in sent if t.lower_ == m.group(1).lower()), None)
        if verb is not None and not _conversational(verb) and _lasting(verb) and not _told_event(verb):
            return (-1 if m.group(1).lower() in _PREF_NEG else 1), verb
    return _choice(sent), None


def _told_event(v) -> bool:
    """A verb of liking that is one step of a told occasion: coordinated with two other verbs
    or more that are not of liking ("we roast marshmallows, tell stories and just enjoy each
    other's company"): what was done, not a lasting taste."""
    first = v
    while first.dep_ == "conj" and first.head is not first:
        first = first.head
    group, todo = [], [first]
    while todo:
        t = todo.pop()
        group.append(t)
        todo.extend(c for c in t.children if c.dep_ == "conj")
    return sum(1 for g in group if g.pos_ == "VERB" and g.lemma_.lower() not in _PREF_POS | _PREF_NEG) >= 2


def _own_clause_text(v, text: str) -> str:
    """The words of the clause of ``v`` when it depends on another ("it reminds me why *I love
    being a mom*", "you know *I love live music*"): the statement without its frame; else
    ``text``."""
    if v is None or v.dep_ not in ("ccomp", "relcl") and not any(c.dep_ == "parataxis" for c in v.children):
        return text
    skip = {t.i for c in v.children if c.dep_ == "parataxis" for t in c.subtree}
    toks = [t for t in v.subtree if t.i not in skip]
    while toks and (toks[0].tag_ in ("WRB", "WDT", "WP", "IN") or toks[0].lower_ in ("how", "much", "that", ",")):
        toks = toks[1:]
    if len(toks) < 3 or not any(t.dep_ in ("nsubj", "nsubjpass") for t in toks):
        return text
    words = v.doc[toks[0].i:toks[-1].i + 1].text.strip(" ,;-")
    words = words[:1].upper() + words[1:]
    return words if words[-1:] in ".!?" else words + (text.rstrip()[-1] if text.rstrip()[-1:] in ".!?" else ".")


def _preference_of(sent, v, low: str) -> int | None:
    root = v
    if v.lemma_ == "tend" and _first_person(v):  # "I tend to prefer ..."
        v = next((c for c in v.children if c.dep_ == "xcomp"), v)
    elif not _holder_first_person(v):
        return None
    lemma = v.lemma_.lower()
    neg = any(c.dep_ == "neg" for c in v.children) or any(c.dep_ == "neg" for c in root.children)
    would = any(c.dep_ == "aux" and c.lower_ in ("would", "'d", "d") for c in root.children)
    if lemma in _PREF_POS or lemma in _PREF_NEG:
        if lemma in _REQUEST_VERBS and would and any(c.dep_ == "xcomp" for c in v.children):
            return None  # "I'd like to book", "I'd love to hear"
        if _conversational(v) or not _lasting(v):
            return None
        return -1 if (lemma in _PREF_NEG) != neg else 1
    if would and any(c.lower_ == "rather" for c in root.children):
        return -1 if neg else 1
    if lemma == "stand" and neg:  # "I can't stand horror movies"
        return -1
    if lemma == "be" and re.search(r"\bfan of\b", low):
        return -1 if neg else 1
    if lemma == "use" and any(c.dep_ == "advcl" and any(m.lower_ == "because" for m in c.children)
                              for c in root.children):
        return 1
    return None


def _topic(sent) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for t in sent.doc[_label_end(sent):sent.end]:
        if t.pos_ in ("NOUN", "PROPN", "ADJ") and not t.is_stop:
            w = t.lemma_.lower()
            if w.isalpha() and w not in STOPWORDS and w not in _STANDING:
                seen[w] = None
    return tuple(seen)


#: Words of form, not of subject matter: an instruction or preference whose topic words are all
#: among them (format, length, tone, language, persona) applies to every turn.
FORM_WORDS = frozenset("""answer answers response responses reply replies message messages output format formatting
style tone voice register language english french spanish german italian portuguese dutch chinese japanese
korean russian arabic hindi bullet bullets point points list lists paragraph paragraphs prose sentence sentences
word words line lines table tables markdown emoji emojis heading headings header headers title titles bold italic
length short shorter brief briefer concise long longer detailed full complete summary summaries step steps
formal informal casual polite friendly warm terse blunt direct plain simple simpler clear jargon technical
british american spelling metric imperial unit units lowercase uppercase capital capitals capitalisation
number numbers numbered first person persona name nickname""".split())
_PERSONA = re.compile(r"\b(?:call|address)\s+me\b|\b(?:refer to|speak to|talk to)\s+me\s+as\b", re.I)


def reach_of(kind: str, topic: Sequence[str], focus: str = "", sentence: str = "") -> str:
    """``"global"`` when a statement applies to every turn of its scope (no condition, and
    its topic words are all words of form: "always answer me in short bullet points", "reply
    in French from now on", "call me Sam"); else ``"topical"``: it applies to turns on its topic
    ("in Python code", "in my emails", "when I ask for shell commands")."""
    if kind not in ("instruction", "preference") or focus:
        return "topical"
    if kind == "instruction" and _PERSONA.search(sentence or ""):
        return "global"
    return "global" if all(w in FORM_WORDS for w in topic) else "topical"


_ASKS_YOU = re.compile(r"^(?:\w+[,!.]\s+)*(?:(?:and|also|oh|so|but)\s*,?\s+)?(?:please\s+)?(?:can|could|would|will|won't)\s+you\b|"
                       r"\bwould you mind\b|\bdo you think you could\b", re.I)


def _asks_for_good(text: str) -> bool:
    """A question that is a request of the assistant's ("can you ...", "would you mind ...",
    "do you think you could ...") with a standing word: the rules below still decide."""
    low = text.lower()
    return bool(_ASKS_YOU.search(text)) and (any(re.search(rf"\b{w}\b", low) for w in _STANDING)
                                            or any(p in low for p in _STANDING_PHRASES)
                                            or bool(re.search(r"\b(?:any|every|all)(?:thing)?\b[^?]*\byou\b", low)))


def detect_docs(docs) -> list[Statement | None]:
    """The strongest statement of each parsed doc (an instruction before a preference; the
    first of a kind), or None."""
    out: list[Statement | None] = []
    for doc in docs:
        best = None
        for sent in doc.sents:
            text = sent.doc[_label_end(sent):sent.end].text.strip()  # the statement, without a speaker label
            if not text or not cue(text) or (text.endswith("?") and not _asks_for_good(text)):
                continue  # a question asks, unless it asks the assistant to do something for good
            got = _instruction(sent)
            if got is not None:
                topic = _topic(sent)
                best = Statement("instruction", got[0], text, topic, got[1] or "")
                break
            if best is None:
                pol, verb = _preference_at(sent)
                if pol is not None:
                    topic = _topic(sent)
                    best = Statement("preference", pol, _own_clause_text(verb, text), topic)
        out.append(best)
    return out


def detect(texts: Sequence[str], nlp) -> list[Statement | None]:
    """:func:`detect_docs` of texts, parsing only those that pass :func:`cue` (``nlp``: a
    spaCy pipeline)."""
    out: list[Statement | None] = [None] * len(texts)
    todo = [i for i, t in enumerate(texts) if cue(t)]
    if todo:
        from ..models.exitgate import native

        with native():
            docs = list(nlp.pipe([texts[i] for i in todo]))
        for i, st in zip(todo, detect_docs(docs)):
            out[i] = st
    return out


def explicit(kind: str, text: str, found: Statement | None) -> Statement | None:
    """The statement a memory written with ``kind=`` holds: "plain" none; otherwise the
    detected one if it is of that kind, else the whole text as a statement of that kind."""
    if kind == "plain":
        return None
    if found is not None and found.kind == kind:
        return found
    words = tuple(dict.fromkeys(w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOPWORDS))
    return Statement(kind, found.polarity if found is not None else 1, text.strip(), words[:32])


def imported(d: dict) -> Statement:
    """A statement from its export (:func:`exported`)."""
    if d.get("kind") not in KINDS:
        raise InvalidInput(f"standing kind must be one of {KINDS}, not {d.get('kind')!r}")
    return Statement(d["kind"], int(d.get("polarity", 1)), str(d.get("sentence", "")),
                     tuple(str(w) for w in d.get("topic", ())), str(d.get("focus", "")))
