"""What a clause says of its facts: asserted, planned, negated, or not a fact at all.

A question ("Do you believe in luck?"), a request ("Tell her I sent you"), a wish ("I wish I
could draw"), a condition ("If it rains, we stay home"), a hypothetical ("You should come",
"our neighbours must hate us") or a generic remark ("It's easier when you have good friends
around") states no fact about the people in it: :func:`mood` names it, and the reader keeps
no fact from it. A prediction is no fact either: what someone other than the speaker will
do or be, said as "you'll ...", "she'll ...", "it'll ..." ("you'll smash it", "she'll know all
the good spots", "they'll survive"), and what anyone will "end up" doing. A plan ("I'll book
the tapas place", "I'm going to try pottery"), an intention told in the past ("I wanted to
blend my love for dance and fashion", "my aim was to show warmth": meant, whether or not it
came about), an attempt ("I'm trying to quit smoking": planned; "I tried to call her": meant)
and a negation ("I don't drink coffee") are facts about the person, stored with
their mood. What the speaker once believed ("I thought you were still in Northgate": said when
it turned out otherwise) and a saying quoted as one ("patience gets us there in the end, as my
grandma says") are not facts either.
"""

from __future__ import annotations

from .plot import PEOPLE as _PEOPLE
from .sense import EAGER, FACTIVE
from .words import INTERJECTIONS, after_preposition as _by_doing, chance_of, felt, goal_of

__all__ = ["mood", "STORED", "ASSERTED", "PLANNED", "NEGATED", "INTENDED", "ASKED", "WISHED", "CONDITIONAL", "HYPOTHETICAL",
           "GENERIC", "BELIEVED"]

ASSERTED, PLANNED, NEGATED, INTENDED = "asserted", "planned", "negated", "intended"
ASKED, WISHED, CONDITIONAL, HYPOTHETICAL, GENERIC = "asked", "wished", "conditional", "hypothetical", "generic"
BELIEVED = "believed"
#: The moods whose facts are stored.
STORED = frozenset({ASSERTED, PLANNED, NEGATED, INTENDED})

_HYPOTHETICAL = frozenset({"could", "would", "should", "might", "may", "must", "can", "ca", "shall", "ought", "'d"})
_FUTURE = frozenset({"will", "'ll", "wo"})
_WISH = frozenset({"wish", "hope", "dream", "pray"})
#: The verbs of a plan, and chat's forms of "going to", "want to", "got to" ("wanna", "gonna",
#: "gotta": the parser's lemma of "gon" is "go").
_VERB_PLAN = frozenset({"plan", "intend", "decide", "aim", "mean", "want"})
_PLAN = _VERB_PLAN | {"wanna", "gon", "gonna", "gotta"}
#: Verbs of an attempt: their "to" complement is tried, not done ("I'm trying to quit smoking": a
#: plan in the present; "I tried to call her": meant, in the past; "I had to try to capture it":
#: the tense is another verb's, and it was done).
_ATTEMPT = frozenset({"try", "attempt"})
_CONSIDER = frozenset({"think", "dream", "talk", "consider", "debate"})
_CONDITION = frozenset({"if", "unless", "whether", "assuming", "provided", "suppose", "supposing"})
_GENERIC_MARKS = frozenset({"when", "whenever", "if", "once", "until", "while"})
_GENERIC_SUBJ = frozenset({"you", "we", "one", "everyone", "everybody", "people"})
#: A present "be" of a progressive, and the words of a time to come ("next month", "tomorrow").
_PRESENT_BE = frozenset({"am", "is", "are", "'m", "'re", "'s", "m", "re"})
_TO_COME = frozenset({"tomorrow", "tonight", "next", "soon", "weekend", "monday", "tuesday", "wednesday", "thursday",
                      "friday", "saturday", "sunday"})
#: Pronouns whose future ("will", "'ll") is a prediction ("you'll love it", "it'll be fine"); the
#: speaker's ("I'll", "we'll") and a name's are plans.
_PREDICTED = frozenset({"you", "he", "she", "it", "they", "this", "that", "there", "everyone", "everybody"})
#: Verbs whose complement, in the past tense, is what someone took to be so ("I thought ...").
_BELIEF = frozenset({"think", "assume", "suppose", "guess", "figure", "imagine", "believe", "expect"})
#: Verbs that quote a saying when an "as" clause ("as my grandma says") hangs on a clause.
_SAYING = frozenset({"say", "put", "like"})


def _clause_chain(verb, depth: int = 6):
    """The verb and the verbs above it whose clause it belongs to (conjuncts, complements,
    adverbial clauses), nearest first."""
    out, v = [verb], verb
    while depth and v.head is not v:
        took = chance_of(v)  # "had the chance to volunteer": the clause of "had"
        if not (v.dep_ in ("conj", "xcomp", "ccomp", "advcl", "acomp") or _by_doing(v) or took is not None):
            break
        v = v.head.head if _by_doing(v) or took is not None else v.head  # "by having ...": the clause of "living"
        out.append(v)
        depth -= 1
    return out


#: Words that make a tag of a statement when they end it ("..., right?", "pretty cool, huh?").
_TAGS = frozenset("huh right eh innit yeah no ok okay yes".split())
_TAG_PRONOUNS = frozenset("it that this they he she we i".split())
_TAG_VERBS = frozenset("be do have can will would could should".split())
_HEARD = frozenset("hear heard know knew see seen remember".split())


def _tag_start(words) -> int | None:
    """Where a question's tag starts, when a statement ends in one: the last few words after a
    comma or dash before the "?" ("I started my own store - pretty cool, huh?", "It was great,
    wasn't it?"); None when the question is the sentence's own."""
    end = next((i for i in range(len(words) - 1, -1, -1) if words[i].text.endswith("?")), None)
    sep = next((i for i in range(end - 1, max(end - 6, 0) - 1, -1) if words[i].text in (",", "-", "\u2013", "\u2014")),
               None) if end else None
    if sep is None:
        return None
    tail = [t for t in words[sep + 1 : end] if not t.is_punct]
    low = [t.lower_ for t in tail]
    if low and all(w in _TAGS for w in low):
        return sep
    negated = len(low) > 2 and low[1] in ("n't", "not")
    if len(tail) >= 2 and tail[0].lemma_.lower() in _TAG_VERBS and low[2 if negated else 1] in _TAG_PRONOUNS:
        return sep  # "wasn't it", "isn't that great", "don't they"
    if len(tail) >= 3 and tail[0].lemma_.lower() in _TAG_VERBS and "you" in low[1:3] and _HEARD & set(low):
        return sep  # "Emeka moved to Manchester, did you not hear?": news, asked only whether it was heard
    return None


def _question(verb) -> bool:
    """Whether the clause of ``verb`` is asked: its sentence ends in "?", unless the question is
    only a tag after a statement of the speaker's or of a third party ("I started my own store
    - pretty cool, huh?": the store was started). A statement about the listener with a tag
    ("You went to Porto, right?") is still asked: it asks the listener to confirm."""
    words = [t for t in verb.sent if not t.is_space]
    if not words or not any(t.text.endswith("?") for t in words[-3:]):
        return _inverted(words)
    sep = _tag_start(words)
    if sep is None or verb.i >= words[sep].i:
        return True
    main = verb
    while main.dep_ in ("conj", "xcomp", "ccomp", "advcl") and main.head is not main and main.head.i < words[sep].i:
        main = main.head  # (not into the tag: "Emeka moved to Manchester, did you not hear?")
    subj = [c for c in main.children if c.dep_ in ("nsubj", "nsubjpass", "expl")]
    return (not subj or subj[0].i > main.i or subj[0].lower_ == "you"
            or any(t.tag_ in ("WDT", "WP", "WRB") or t.pos_ == "AUX" for t in verb.sent if t.i < subj[0].i))


def _inverted(words) -> bool:
    """A question chat leaves without its "?": the sentence opens (after interjections and
    "and", "so") with an auxiliary of its main verb and the subject comes after it ("isn't his
    flat tiny", "did you end up going lol"); "Can't wait!" has no subject."""
    first = next((t for t in words if not t.is_punct and t.pos_ != "INTJ" and t.dep_ not in ("intj", "cc")
                  and t.lower_ not in ("so", "and", "but", "wait", "ok", "okay")), None)
    if first is None or first.pos_ != "AUX" or first.dep_ not in ("aux", "ROOT"):
        return False
    main = first if first.dep_ == "ROOT" else first.head
    return main.dep_ == "ROOT" and any(c.dep_ in ("nsubj", "nsubjpass", "expl") and c.i > first.i for c in main.children)


def _for_me(verb) -> bool:
    """A present form that is an order, not the speaker's own doing with "I" left out: its
    object is the speaker ("Mele, thank your mum *for me*", "send *me* the link")."""
    objs = [c for c in verb.children if c.dep_ in ("dobj", "dative")]
    objs += [q for p in verb.children if p.dep_ in ("prep", "dative") for q in p.children if q.dep_ == "pobj"]
    return any(o.lower_ in ("me", "us") for o in objs)


def _imperative(verb) -> bool:
    """A request: the clause's verb in its base form, first in its sentence (after interjections,
    vocatives and discourse words), with no subject and no auxiliary but a "don't" before it."""
    if verb.tag_ != "VB" and not (verb.tag_ == "VBP" and _for_me(verb)) or verb.dep_ not in ("ROOT", "conj", "advcl") \
            or felt(verb):
        return False  # ("Love the colors!": the speaker's, see fastmem.reader.words.felt)
    aux = [c for c in verb.children if c.dep_ in ("aux", "auxpass")]
    dont = len(aux) == 1 and aux[0].lower_ == "do" and any(c.dep_ == "neg" for c in verb.children)
    if any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in verb.children) or aux and not dont:
        return False
    if dont and verb.dep_ == "conj":
        return True  # "It's tough starting a biz, but don't let it get you down"
    if verb.dep_ == "conj" and verb.head.tag_ in ("VBD", "VBN", "VBZ") and not aux and any(
            c.dep_ in ("nsubj", "nsubjpass") for c in verb.head.children):
        return True  # "I've sunk tons of time into the studio, and look at my students": no "have looked"
    first = next((t for t in verb.sent if not t.is_punct and t.pos_ not in ("INTJ", "PROPN")
                  and t.dep_ not in ("intj", "npadvmod", "advmod", "discourse", "cc")), None)
    lead = verb.head if verb.dep_ == "conj" else verb  # "Sit down and relax": the first verb leads
    return first is not None and first.i == (aux[0].i if dont else lead.i)  # "Don't let it get you down"


def mood(verb) -> str:
    """The mood of the clause headed by ``verb`` (a spaCy token): one of :data:`STORED` when its
    facts are facts, else why not."""
    if _question(verb):
        return ASKED
    if verb.lemma_.lower() == "wish" and any(c.dep_ in ("dative", "dobj") and c.pos_ == "PRON" for c in verb.children):
        return WISHED  # "Wishing you many happy years together!", "I wish you luck": a wish for the listener
    chain = _clause_chain(verb)
    for v in chain:
        if _imperative(v):
            return ASKED
        kids = list(v.children)
        if any(c.dep_ == "mark" and c.lower_ in _CONDITION for c in kids):
            return CONDITIONAL
        if any(c.dep_ == "advcl" and any(g.dep_ == "mark" and g.lower_ in _CONDITION for g in c.children) for c in kids):
            return CONDITIONAL  # the consequence of a condition
    if any(c.dep_ == "mark" and c.lower_ in ("like", "though") for v in chain for c in v.children):
        return HYPOTHETICAL  # "I want them to feel like they're in an oasis": as if, not so
    if any(a.lower_ == "to" for a in verb.children if a.dep_ == "aux") and any(
            c.tag_ in ("WRB", "WP", "WDT") and c.i < verb.i for c in verb.children):
        return HYPOTHETICAL  # "gotta figure out how to balance it all": what to do, not done
    for below, v in zip(chain, chain[1:]):
        goal = goal_of(v) if below.dep_ == "xcomp" else None
        if v.lemma_.lower() in _WISH or goal is not None and goal.lemma_.lower() in _WISH or _longed(v, below):
            return WISHED  # "I hope to ...", "my dream is to ...", "I've always wanted to see Japan"
        if (_by_doing(below) and v.lemma_.lower() in _CONSIDER and below.head.lower_ in ("of", "about")
                or v.lemma_.lower() == "consider" and below.tag_ == "VBG" and below.dep_ in ("xcomp", "dobj", "ccomp")):
            return _weighed(v)  # "I'm thinking of moving in with my brother": a plan weighed
    if any(below.dep_ == "ccomp" and v.lemma_.lower() in _WONDER and v.tag_ != "VBD"
           and any(c.tag_ in ("WRB", "WP", "WDT") and c.i < below.i for c in below.children)
           for below, v in zip(chain, chain[1:])):
        return HYPOTHETICAL  # "excited to see where pottery takes me": asked of the future ("I saw how ..." was so)
    for below, v in zip(chain, chain[1:]):
        own = below.i == verb.i or verb.dep_ == "conj" and verb.head.i == below.i  # (not "see where it takes me")
        if (below.dep_ in ("advcl", "xcomp") and (own or v.lemma_.lower() == "wait")
                or own and _by_doing(below)) and _eager(v):
            return PLANNED  # "can't wait 'til my studio opens", "looking forward to reading to them"
    if any(c.lower_ == "hopefully" for v in chain for c in v.children if c.dep_ == "advmod"):
        return WISHED  # "Hopefully, we'll find a place like this": hoped for, not planned
    for below, v in zip(chain, chain[1:]):
        if below.dep_ == "ccomp" and v.lemma_.lower() in _BELIEF and v.tag_ == "VBD":
            return BELIEVED  # "I thought you were still in Northgate"
    if _saying(chain):
        return GENERIC  # "patience gets us there in the end, as my grandma says"
    if any(c.dep_ == "mark" and c.lower_ == "for" for c in verb.children) and any(
            c.dep_ == "aux" and c.lower_ == "to" for c in verb.children):  # "a great chance for me to show my skills"
        mine = any(c.dep_ == "nsubj" and c.lower_ in ("me", "us") for c in verb.children)
        return PLANNED if mine else HYPOTHETICAL  # "perfect for customers to check out the pieces": what it is for
    if any(c.dep_ == "dobj" and c.pos_ == "NOUN" and c.left_edge.lower_ == "how"
           and any(a.lower_ in ("much", "many") for a in c.children) for c in verb.children):
        return HYPOTHETICAL  # "how much work we still have to do": an exclamation of how much, no deed
    if _what_it_takes(chain):
        return GENERIC  # "the grit it takes to stand out and face challenges": anyone's, no one's deed
    if _purpose(chain):
        return HYPOTHETICAL  # "to have our own platform to be ourselves and support rights": what it is for
    if _helped_to(chain):
        return HYPOTHETICAL  # "offering mentoring to help dancers reach their potential": what it is for
    subj = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
    if (subj and subj[0].lower_ in _GENERIC_SUBJ and verb.dep_ == "advcl"
            and any(c.dep_ in ("mark", "advmod") and c.lower_ in _GENERIC_MARKS for c in verb.children)):
        return GENERIC  # "It's easier when you have good friends around"
    if verb.tag_ == "VBP" and subj and subj[0].lower_ == "we" and any(c.lower_ == "all" for c in subj[0].children):
        return GENERIC  # "we all have our own paths", "we all need a push sometimes": everyone ("we all went": us)
    if (verb.tag_ in ("VBP", "VBZ") and subj and _bare(subj[0])
            and any(c.dep_ in ("dobj", "dative") and c.lower_ == "you" for c in verb.children)):
        return GENERIC  # "failures lead you closer to success": anyone, not the listener
    shared = _sharing(verb)
    aux = {c.lower_ for v in shared for c in v.children if c.dep_ in ("aux", "auxpass") and not _had(c)}
    if aux & _HYPOTHETICAL and aux & _HYPOTHETICAL <= {"would", "'d"} and _promised(verb):
        return PLANNED  # "mum said she'd bring jollof": a future told in the past
    if aux & _HYPOTHETICAL and not (aux & _HYPOTHETICAL == {"could"} and _glad_could(shared[-1])):
        return HYPOTHETICAL
    negated = any(c.dep_ == "neg" for c in verb.children) or any(  # "I'm not gonna forget a second of it"
        c.dep_ == "neg" for below, v in zip(shared, shared[1:])
        if below.dep_ == "xcomp" or _caused(below) or chance_of(below) is not None
        for c in v.children) or verb.lemma_ == "be" and any(  # (a conjunct keeps its own: "I'm not alone and ...")
        c.dep_ == "attr" and any(d.dep_ == "det" and d.lower_ == "no" for d in c.children)
        for c in verb.children)  # "this biz is no cakewalk"
    if (aux & _FUTURE or any(map(_going_to, shared))) and _predicted(shared):
        return HYPOTHETICAL  # "you'll smash it", "she'll know the good spots", "I'll end up adopting him"
    return NEGATED if negated else _stance(verb, chain, shared, aux)


def _helped_to(chain) -> bool:
    """What someone is helped or pushed to do where the helping is itself a purpose ("offering
    mentoring *to help* dancers reach their potential") or a forecast ("your mentoring *will push*
    dancers to reach their goals"): not done."""
    for below, v in zip(chain, chain[1:]):
        if v.lemma_.lower() in _CAUSING and below.dep_ in ("ccomp", "xcomp", "advcl") and (
                v.dep_ == "advcl" and any(a.dep_ == "aux" and a.lower_ == "to" for a in v.children)
                or {c.lower_ for c in v.children if c.dep_ == "aux"} & _FUTURE and _predicted([v])):
            return True
    return False


def _weighed(v) -> str:
    """The mood of what a verb of :data:`_CONSIDER` weighs: a plan still being made when it is
    weighed now ("I'm thinking of moving in with my brother", "considering selling the van"),
    a wish when dreamt of, and what was only weighed once ("I was thinking of painting it blue")
    or a thought something caused ("it made me think about taking care of our minds") no fact."""
    if v.lemma_.lower() == "dream":
        return WISHED
    past = v.tag_ in ("VBD", "VBN") or any(c.dep_ == "aux" and c.lower_ in ("was", "were", "had") for c in v.children)
    caused = v.dep_ in ("ccomp", "xcomp") and v.head.lemma_.lower() in ("make", "get", "let", "have", "set")
    return HYPOTHETICAL if past or caused else PLANNED  # ("the book got me thinking about ...": a thought)


def _promised(verb) -> bool:
    """A "would" that is a past "will": what someone said, told or promised they would do, with
    no condition ("mum said she'd bring jollof", "he promised he would call")."""
    head = verb.head
    return (verb.dep_ == "ccomp" and head.tag_ == "VBD" and head.lemma_.lower() in ("say", "tell", "promise")
            and not any(c.dep_ == "advcl" for c in verb.children))


def _longed(v, below) -> bool:
    """A want held for long, not a plan: "I've wanted to go to Lisbon for years", "I've always
    wanted to see Japan", "my mum's been wanting to volunteer" ("I want to try it" is planned)."""
    if v.lemma_.lower() != "want" or below.dep_ != "xcomp":
        return False
    kids = list(v.children)
    return (v.tag_ == "VBN" and any(c.dep_ == "aux" and c.lemma_.lower() == "have" for c in kids)
            or v.tag_ == "VBG" and any(c.dep_ == "aux" and c.lower_ == "been" for c in kids)
            or any(c.dep_ == "advmod" and c.lower_ == "always" for c in kids))


def _had(aux) -> bool:
    """A contracted "'d" that is "had", not "would": before a past participle with no "have" of
    its own ("I'd just done a 12 hour shift"; "I'd have gone" is would)."""
    verb = aux.head
    return aux.lower_ in ("'d", "d") and verb.tag_ == "VBN" and not any(
        c.dep_ == "aux" and c.lemma_.lower() == "have" for c in verb.children)


def _stance(verb, chain: list, shared: list, aux: set) -> str:
    """A stored clause's mood when it is not negated: planned (a future, "going to", a plan
    verb or goal in the present, a trip arranged, something still owed), intended (a plan verb
    or goal only in the past: "I wanted to blend ...", "my aim was to show warmth"), else
    asserted."""
    future = aux & _FUTURE or any(map(_going_to, shared)) or _arranged_soon(verb) \
        or _arranged(shared[-1]) or any(map(_owed, shared))
    meant = [v for below, v in zip(chain, chain[1:])  # ("they mean ... to me": none)
             if v.lemma_.lower() in _PLAN and _intended(below) or v.lower_ in _PLAN - _VERB_PLAN or goal_of(v)
             or v.lemma_.lower() in _ATTEMPT and v.tag_ in ("VBD", "VBZ", "VBP", "VBG") and below.dep_ == "xcomp" and any(
                 c.dep_ == "aux" and c.lower_ == "to" for c in below.children)]
    if not future and meant and all(v.tag_ == "VBD" for v in meant):
        return INTENDED
    return PLANNED if future or meant else ASSERTED


def _eager(verb) -> bool:
    """What follows is looked forward to: "look forward to", "excited / ready to" (present), "working
    on doing", and "can't wait" (present, not "couldn't wait to get home", which happened)."""
    kids = list(verb.children)
    if verb.lower_ in EAGER and (verb.dep_ == "acomp" or verb.tag_ == "VBN"):  # ("I'm pumped to": a passive)
        be = verb.head if verb.dep_ == "acomp" else next((c for c in kids if c.dep_ in ("aux", "auxpass")), None)
        return be is not None and be.tag_ != "VBD"  # "I'm excited to open my studio" ("they were excited to
        # make it": they did; "my moves get me pumped to tackle my goals": I do)
    if verb.lemma_.lower() == "work" and any(c.dep_ == "prep" and c.lower_ in ("on", "toward", "towards")
                                             and any(g.dep_ == "pcomp" for g in c.children) for c in kids):
        # "still working on opening a dance studio": not open yet ("we've been working on building
        # up confidence": done all along)
        return not any(c.dep_ == "aux" and c.lower_ == "been" for c in kids)
    if verb.lemma_.lower() == "look" and any(c.lower_ == "forward" for c in kids):
        return True  # "I'm looking forward to reading to them", "we look forward to the trip"
    return (verb.lemma_.lower() == "wait" and any(c.dep_ == "neg" for c in kids)
            and any(c.dep_ == "aux" and c.lower_ in ("ca", "can") for c in kids))


def _sharing(verb) -> list:
    """The verb and the verbs whose auxiliaries it shares: up a chain of conjuncts and
    complements with no subject or auxiliary of their own ("I might sell the car and *buy* a
    bike", "I'm going to quit and *travel*", "I'll try to *call* her", "gonna keep *pushing*")
    and of a verb that follows "go" or "come" ("we should go *see* it"), and the "have" or "get"
    of a chance an infinitive is (:func:`fastmem.reader.words.chance_of`)."""
    out, v = [verb], verb
    while v.head is not v and len(out) < 6:
        took = chance_of(v)
        if took is not None:  # "I'll get the chance to visit", "never had the chance to meet"
            v = took
            out.append(v)
            continue
        if not (v.dep_ in ("conj", "xcomp") or v.dep_ == "advcl" and v.head.lemma_.lower() in ("go", "come")
                or _by_doing(v) or _caused(v)):
            break
        if any((c.dep_ in ("nsubj", "nsubjpass") and not _caused(v)) or c.dep_ == "mark"
               or c.dep_ in ("aux", "auxpass") and c.pos_ != "PART" for c in v.children):
            break  # its own subject or auxiliary ("to" of a complement is neither: "I'll try *to* call")
        v = v.head.head if _by_doing(v) else v.head  # "I could help you *with making* content"
        out.append(v)
    return out


#: Verbs whose bare-infinitive complement is done by their object ("it can help *you reach* more
#: people", "let me know", "made me think"): the complement is as sure as they are.
_CAUSATIVE = frozenset(("help", "let", "make", "have"))
#: What one has to do: "have to", "need to", "got to" in the present is owed, not done.
_OWE = frozenset(("have", "need"))


def _glad_could(verb) -> bool:
    """ "I was glad I *could* share my story": what one is glad, proud or lucky one could do, one
    did (the clause of an adjective of :data:`fastmem.reader.sense.FACTIVE`)."""
    return verb.dep_ == "ccomp" and verb.head.pos_ == "ADJ" and verb.head.lower_ in FACTIVE


def _intended(below) -> bool:
    """Whether a verb is what a verb of :data:`_PLAN` above it intends: its complement ("want
    *to learn*") or a "to" clause of its own ("want them *to experience* acceptance"); not a
    clause beside it ("After losing my job, I wanted ...", "which means I'm seeing more sales",
    "they mean the world to me and I'm thankful")."""
    return below.dep_ == "xcomp" or below.dep_ in ("ccomp", "advcl") and any(
        c.dep_ == "aux" and c.lower_ == "to" for c in below.children)


def _caused(verb) -> bool:
    """A bare infinitive whose subject is a causative verb's object ("can help you *reach*")."""
    return verb.dep_ == "ccomp" and verb.tag_ == "VB" and verb.head.lemma_.lower() in _CAUSATIVE and not any(
        c.dep_ in ("mark", "aux") for c in verb.children)


def _owed(verb) -> bool:
    """A present "have to" or "need to" ("we still have to do a lot", "I need to finish it"): what
    is still to do, a plan; "I had to take a break" happened."""
    return (verb.lemma_.lower() in _OWE and verb.tag_ in ("VBP", "VBZ")
            and any(c.dep_ == "xcomp" and any(a.dep_ == "aux" and a.lower_ == "to" for a in c.children)
                    for c in verb.children))


#: Verbs that have someone do what their complement says ("help dancers reach", "push me to").
_CAUSING = frozenset("help push make let enable allow encourage inspire motivate force teach".split())
#: Verbs of what befalls someone rather than what they do: their future is foreseen, not planned.
_BEFALLS = frozenset("lose die fail forget crash drown starve faint collapse regret suffer".split())


def _predicted(shared) -> bool:
    """A future that predicts rather than plans: its subject a pronoun other than "I" or "we"
    ("you'll smash it", "they'll survive") or a thing of the listener's ("your mentoring will
    push dancers to reach their goals", "your store will do great"), or a verb that "ends up"
    ("I'll end up adopting him"). A name's future ("Ana will move in May") stays a plan, as the
    speaker reports it."""
    for v in shared:
        if v.lemma_.lower() == "end" and any(c.dep_ == "prt" and c.lower_ == "up" for c in v.children):
            return True
        if v.lemma_.lower() in _BEFALLS:
            return True  # "I'm going to lose all my finger strength": feared, nobody plans it
        subj = [c for c in v.children if c.dep_ in ("nsubj", "nsubjpass", "expl")]
        if subj:
            return subj[0].lower_ in _PREDICTED or (subj[0].pos_ == "NOUN" and any(
                c.dep_ == "poss" and c.lower_ == "your" for c in subj[0].children))  # "your mentoring will push them"
    return False


def _arranged(verb) -> bool:
    """A present progressive with a time to come: "I'm doing the pottery course next month",
    "we're flying out tomorrow", "I'm seeing my dentist on Friday"."""
    if verb.tag_ != "VBG" or not any(c.dep_ == "aux" and c.lower_ in _PRESENT_BE for c in verb.children):
        return False
    return any(c.dep_ in ("npadvmod", "advmod", "prep") and any(w.lower_ in _TO_COME for w in c.subtree)
               for c in verb.children)


#: Verbs whose wh-clause asks rather than tells ("see where it takes me", "wonder what they think").
_WONDER = frozenset(("see", "wonder", "ask", "figure", "decide", "guess", "imagine"))


def _what_it_takes(chain) -> bool:
    """ "what it takes to stand out", "the grit it takes to face challenges": an infinitive of a
    "take" whose subject is "it" and that takes no one ("it took me an hour to fix it" did)."""
    for below, v in zip(chain, chain[1:]):
        if below.dep_ == "xcomp" and v.lemma_.lower() == "take" and any(
                c.dep_ == "nsubj" and c.lower_ == "it" for c in v.children) and not any(
                c.dep_ in ("dative", "dobj") and c.pos_ in ("PRON", "PROPN") for c in v.children):
            return True
    return False


#: Verbs of having and finding, whose thing an infinitive says the use of ("have a platform to ...").
_HAVING = frozenset(("have", "be", "get", "find"))


def _purpose(chain) -> bool:
    """An infinitive whose subject, as parsed, is a thing ("our own platform *to* be ourselves
    and support others' rights"): what the thing is for, not what anyone did."""
    for v in chain:
        if v.dep_ == "conj":
            continue  # (its subject is its head's)
        if any(a.dep_ == "aux" and a.lower_ == "to" for a in v.children):
            subj = next((c for c in v.children if c.dep_ == "nsubj"), None)
            return (subj is not None and subj.pos_ == "NOUN" and subj.lemma_.lower() not in _PEOPLE
                    and v.head.lemma_.lower() in _HAVING)  # ("I made this window to remind us": it does)
    return False


def _saying(chain) -> bool:
    """A saying quoted as one: an "as X says" clause on a clause whose subject is a bare common
    noun ("hard work pays off, as my dad says"); "my grandpa grows the best tomatoes, as my mum
    says" is about someone and stays a fact."""
    for v in chain:
        if any(c.dep_ == "advcl" and c.lemma_.lower() in _SAYING
               and any(g.dep_ == "mark" and g.lower_ == "as" for g in c.children) for c in v.children):
            subj = [c for c in v.children if c.dep_ == "nsubj"]
            for s in list(subj):  # and what is joined to them ("Patience and practice")
                subj += [c for c in s.subtree if c.dep_ == "conj" and c.head.dep_ in ("nsubj", "conj") and c not in subj]
            subj = [s for s in subj if s.lower_ not in INTERJECTIONS]  # "Yep, Ivy! Patience and practice ..."
            common = [s for s in subj if s.pos_ in ("NOUN", "ADJ")]
            return bool(common) and all(_bare(s) for s in subj)
    return False


def _bare(tok) -> bool:
    """A subject that names no one: a common noun with no article or possessor ("hard work"),
    or, beside one, a capitalised word the parser took for a name that names no entity
    ("Patience and practice": a name alone, "Maya grows the best tomatoes", stays someone)."""
    if any(d.dep_ in ("det", "poss") for d in tok.children):
        return False
    return tok.pos_ in ("NOUN", "ADJ") or tok.pos_ == "PROPN" and not tok.ent_type_


#: Verbs of going somewhere or starting something, whose present progressive with a time to
#: come is a plan ("I'm going to a conference next month", "we're moving this summer").
_ARRANGED = frozenset("go come head fly travel move leave start visit drive return".split())
#: Words of a time to come ("next", "tomorrow", "tonight", "soon", "later", "this weekend").
_SOON = frozenset("next tomorrow tonight soon later upcoming".split())
_THIS_TIME = frozenset("weekend month week summer winter spring fall autumn year friday saturday sunday monday "
                       "tuesday wednesday thursday".split())


def _arranged_soon(verb) -> bool:
    """"I'm going to a transgender conference this month", "we're moving next week": a present
    progressive of going or starting with a time to come, a plan (not "I'm working a lot this
    week")."""
    if verb.tag_ != "VBG" or verb.lemma_.lower() not in _ARRANGED or not any(
            c.dep_ == "aux" and c.lemma_ == "be" and c.tag_ in ("VBP", "VBZ") for c in verb.children):
        return False
    for t in verb.subtree:
        low = t.lower_
        if low in _SOON or low in _THIS_TIME and any(c.lower_ in ("this", "next") for c in t.children):
            return True
    return False


def _going_to(verb) -> bool:
    """"I'm going to try pottery", "gonna move", "I'm off to see her": the verb is the complement of
    a progressive "go" or of "be off"."""
    head = verb.head
    if verb.dep_ == "xcomp" and head.lemma_ == "be" and any(c.lower_ == "off" for c in head.children):
        return True  # "I'm off to go do some research"
    return (verb.dep_ == "xcomp" and head.lemma_.lower() == "go" and head.tag_ == "VBG"
            and any(c.dep_ == "aux" and c.lemma_ == "be" for c in head.children))
