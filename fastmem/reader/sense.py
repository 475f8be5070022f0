"""Who does what a clause says, and which clauses say nothing of anyone, for the reader's facts.

A parse gives a verb with no subject of its own the subject of the verb above it; three
constructions need another reading:

* object control: "losing my job pushed **me** to take the plunge": the one who takes is the
  object of "pushed", not the loss (:func:`doer`);
* an extraposed "it": "it's tough starting a biz", "it's awesome to have our own platform":
  nobody in particular starts or has; the "it" stands for the clause, not for a thing;
* an infinitive that says what a thing is for: "it's been a dream to have a family", "time to
  vent": the dream has nothing; only a person ("the first woman to climb it") does what the
  infinitive says.

:func:`says_nothing` names the clauses that store nothing: "it" as the speaker's feeling about
what was just said ("it's a great feeling", "it's been a wild ride"), "be yourself", praise
("you look amazing"). The rest say who a subject is in chat: :func:`first_person_left_out`
(the speaker of "Went camping last week", "Nope, sold the flat"), :func:`opener` (a parse's
subject that is a sentence's "Nope," or "not much,"), :func:`clause` (a subject that is a
whole activity), :func:`have_got` ("I've got" is have), :func:`plain_verb` ("heading to" is go);
and what a vague noun names: :func:`of_what` ("the top of the hill"; "a lot of friends" is
:func:`fastmem.reader.words.measured`).
"""

from __future__ import annotations

from .words import AMOUNTS as _AMOUNTS, INTERJECTIONS, LIFE_STAGES, PRAISE, UNDERSTOOD_I, VAGUE_HEADS, PERSON_NOUNS
from .words import SET_PHRASES, TIME_NOUNS, after_preposition, chance_of, felt, goal_of, is_thing, is_when, naming, vocative

__all__ = ["EAGER", "FACTIVE",
           "doer", "dummy_it", "relative_object", "relative_dative", "state_phrase", "spliced", "liked_activity",
           "clause", "continues_clause", "governor", "first_person_left_out", "opener", "have_got", "how_left",
           "plain_verb", "says_nothing", "of_what", "EVALUATIVE", "WHOLE_WITH_OF"]

#: Nouns that, as what "it" is, judge a situation rather than name a thing: "it's a great
#: feeling", "it's been a wild ride", "it was a bummer".
EVALUATIVE = frozenset(("feeling ride journey experience adventure blast bummer relief pleasure dream nightmare "
                        "challenge struggle rollercoaster coaster honor honour privilege joy thrill treat shame pity "
                        "lesson process step game changer gamechanger mess chaos reminder match fit idea call move act "
                        "trip day night moment evening weekend choice decision combo combination road battle grind").split())
#: Nouns that judge whatever they are said of ("my drawings are a disgrace", "the trip was a
#: nightmare"): a verdict, not what the thing is.
JUDGEMENTS = frozenset(("disgrace disaster joke nightmare mess chaos blast bummer catastrophe trainwreck "
                        "hoot riot scream nuisance headache pain letdown failure fail win angel star legend lifesaver "
                        "genius saint gem hero rockstar superstar champ sweetheart darling treasure godsend").split())
_SUBJ = ("nsubj", "nsubjpass", "csubj", "csubjpass", "expl")
#: Verbs whose object did what their complement says ("pushed me to take the plunge", "helped
#: me find"); any other verb with an object and a complement ("asked him to fix it", "want you
#: to come") says only that it was asked or wanted: no fact of the complement.
_IMPLICATIVE = frozenset(("push help make let force lead inspire motivate drive get cause teach allow enable "
                          "convince persuade remind").split())
#: Verbs that take a bare infinitive when they cause ("made me laugh", "let her go"): with "to"
#: the infinitive says what for.
_BARE_CAUSATIVE = frozenset(("make", "let"))
#: Adjectives whose "to" clause is so ("I'm lucky to have my family", "proud to have finished");
#: "excited to start", "ready to give" look ahead and are not among them.
FACTIVE = frozenset("lucky glad happy proud thankful grateful blessed able".split())
#: Adjectives of looking forward: what one is "excited to do" is a plan of one's own
#: (:func:`fastmem.reader.mood.mood`).
EAGER = frozenset("excited eager keen ready thrilled stoked pumped psyched determined".split())
_LIKING = frozenset("love like enjoy hate adore prefer miss".split())
_HAVE = frozenset(("'ve", "have", "has", "'s", "ve"))
_PERSONAL = frozenset("me you him her us them".split())
_REFLEXIVE = frozenset("myself yourself himself herself itself ourselves yourselves themselves oneself".split())
#: Heads that name a thing only with what their "of" says: "the journey of acceptance", "the
#: top of the hill", "a sense of community" (the node is the whole phrase, not "journey").
WHOLE_WITH_OF = VAGUE_HEADS - _AMOUNTS | frozenset(
    ("journey sense feeling importance value power spirit group source piece bunch collection series member "
     "bouquet symbol sign reminder example form painting photo picture drawing portrait").split())


def _own_subject(verb) -> bool:
    return any(c.dep_ in _SUBJ for c in verb.children)


def _extraposed_it(verb) -> bool:
    """A copula whose subject is "it": a clause it governs ("it's tough *starting a biz*", "it's
    awesome *to have* ...") says what "it" is, and has no doer of its own."""
    return (verb.lemma_ == "be" and any(c.dep_ in ("nsubj", "nsubjpass", "expl") and c.lower_ == "it"
                                         for c in verb.children))


def doer(verb, person, depth: int = 0):
    """Who does what ``verb`` says when it has no subject of its own: a list of tokens, ``[]``
    when nobody in particular does (the fact is left out), or None when the ordinary reading
    holds (the subject of the verb above). ``person(tok)`` says whether a token names a person."""
    if depth > 4 or _own_subject(verb) or verb.head is verb:
        return None
    head = verb.head
    if verb.dep_ == "conj" and verb.tag_ == "VBG" and any(dummy_it(c) for c in head.children if c.dep_ == "nsubj"):
        return [UNDERSTOOD_I] if _lived(head) else []  # "it was so cool spending time with them and *seeing* .."
    if verb.dep_ == "conj":
        return doer(head, person, depth + 1)
    to = any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children)
    goal = goal_of(head) if verb.dep_ == "xcomp" else None
    if goal is not None:  # "My goal is to give kids a loving home": I mean to
        return [UNDERSTOOD_I] if any(c.dep_ == "poss" and c.lower_ == "my" for c in goal.children) else []
    if verb.dep_ == "advcl" and to and head.lemma_.lower() in _BARE_CAUSATIVE:
        return None  # "I made a line to show off my style": I show it off (a purpose, not "made it do")
    if verb.dep_ == "xcomp" or verb.dep_ == "advcl" and to and head.lemma_.lower() in _IMPLICATIVE:
        objs = [c for c in head.children if c.dep_ == "dobj" and c.pos_ in ("NOUN", "PROPN", "PRON")]
        if objs and head.pos_ == "VERB":
            # "pushed me to take the plunge": I took it; "asked my brother to fix it": not said he did
            return objs if head.lemma_.lower() in _IMPLICATIVE else []
        if not objs and head.dep_ in ("xcomp", "advcl") and not _own_subject(head):
            return doer(head, person, depth + 1)  # "inspires me to keep making art", "pushed me to keep fighting"
        copula = head.head if head.dep_ == "acomp" else head  # ("it was so gratifying *to talk* to ...")
        if _extraposed_it(copula):
            return [UNDERSTOOD_I] if _lived(copula) else []  # "it's tough starting a biz"; "it was great to see"
    if verb.dep_ == "acl" and (person(head) or head.lemma_.lower() in _CROWDS):
        return [head]  # "it was awesome - so many people there complimenting my moves": they did
    if verb.tag_ == "VBG" and (verb.dep_ in ("advcl", "xcomp") and _extraposed_it(head) or verb.dep_ == "acl"
                               and head.dep_ in ("attr", "acomp") and _extraposed_it(head.head)):
        # "it's kinda freeing, just putting my feelings on the canvas": anyone doing it; "it's
        # been a wild ride starting my business": I started it
        # (not "it was awesome - so many people complimenting my moves": they did)
        said = [t for t in verb.doc[verb.head.i + 1 : verb.i] if t.pos_ in ("NOUN", "PROPN", "PRON") and t.i != head.i]
        copula = head if verb.dep_ in ("advcl", "xcomp") else head.head
        return [UNDERSTOOD_I] if (_mine(verb) or _lived(copula)) and not said else []
    if verb.dep_ in ("acl", "relcl") and to and chance_of(verb) is None:  # ("had the chance to volunteer": did)
        if head.pos_ in ("NOUN", "PROPN") and not person(head):
            return []  # "a dream to have a family", "time to vent", "tools to push the biz"
    return None


#: Nouns of people in numbers (the doers of a clause that hangs on them).
_CROWDS = frozenset(("people", "folk", "folks", "crowd", "everyone", "everybody", "audience", "fans", "guest", "guests"))


def _lived(copula) -> bool:
    """Whether an "it" copula with a clause after it tells what the speaker lived through: past,
    judged by an adjective ("it was so amazing lying there and watching the sky", "it was great
    to see the whales"), not a present remark that holds for anyone ("it's hard finding a
    plumber") nor what "it" was ("it was my goal to run a marathon"), and not past the end of its
    sentence ("It was so inspiring! Check out the crowd": an order the parser hung on it)."""
    return (copula.lemma_ == "be" and (copula.tag_ == "VBD" or copula.lower_ == "been")
            and not any(t.text in (".", "!", "?") for t in copula.doc[copula.i : max(c.i for c in copula.subtree)])
            and any(c.dep_ == "acomp" for c in copula.children)
            and not any(c.dep_ == "attr" or c.tag_ == "MD" for c in copula.children))


def says_nothing(verb, subs) -> bool:
    """A clause that states no fact: "it" judged as a feeling or an experience ("it's a great
    feeling", "it's been a wild ride"), "be yourself", praise ("you look amazing in that jacket"),
    a time of life given as a time ("when I was a kid"), a verdict ("the trip was a nightmare")."""
    if naming(verb):
        return True  # "a beagle called Biscuit": who Biscuit is (fastmem.reader.roles)
    if _order_misread(verb):
        return True  # "... since your transition - keep on inspiring people": an order, no subject
    it = any(getattr(s, "lower_", "") in ("it", "that", "this") for s in subs)
    if verb.lemma_ in ("look", "sound", "seem", "feel"):
        return (any(c.dep_ == "acomp" and c.lower_ in PRAISE for c in verb.children)  # praise; "it looks like a sunset"
                or it and any(c.dep_ == "prep" and c.lower_ == "like" for c in verb.children))
    if verb.lemma_ != "be":
        return False
    attrs = [c for c in verb.children if c.dep_ in ("attr", "acomp")]
    if it and _extraposed(verb, attrs):
        return True  # "it's a lot of pressure to keep going up": "it" is what the clause says
    if any(a.tag_ == "WP" and a.lower_ in ("who", "what") for a in attrs):
        return True  # "made me who I am", "what I am today": no thing said of anyone
    if any(getattr(s, "lemma_", "") == "name" for s in subs):
        return True  # "my cousin's name is Lucia": who Lucia is (fastmem.reader.roles), not a fact about a name
    if any(a.lower_ in _REFLEXIVE or a.dep_ == "attr" and a.pos_ == "PRON" and a.lower_ in _PERSONAL for a in attrs):
        return True  # "be yourself", "dance is just me": a figure, not what a thing is
    if any(c.dep_ in ("mark", "advmod") and c.lower_ in ("when", "while", "since") for c in verb.children) and (
            verb.dep_ == "advcl" and any(a.lemma_.lower() in LIFE_STAGES for a in attrs)
            or any(a.pos_ == "NUM" for a in attrs)):
        return True  # "... when I was a kid", "Since I was 17 or so": a time of life, not news
    if any(a.dep_ == "attr" and a.lemma_.lower() in JUDGEMENTS and not any(c.dep_ == "prep" for c in a.children)
           for a in attrs):
        return True  # "my stick figures are a disgrace": a verdict
    if it and any(c.dep_ == "prep" and c.lower_ == "like" for c in verb.children):
        return True  # "it's like a cool form of self-expression": a likeness, no fact
    if any(_ranked(a) for a in attrs):
        return True  # "Steve is the best name", "she's the sweetest", "Galway and Cork are my top two": a ranking
    return it and any(a.dep_ == "attr" and a.lemma_.lower() in EVALUATIVE for a in attrs)


#: Nouns that end like a superlative ("she's the guest", "it's the test").
_EST_NOUNS = frozenset("guest nest chest test quest interest forest contest protest harvest west pest rest vest priest "
                       "request conquest arrest fest zest crest".split())


def _ranked(attr) -> bool:
    """What a copula says is a ranking, a verdict of the speaker's: a superlative ("the best
    name", "the sweetest"; not a person's tie: "my best friend", "the best man") or a bare count
    ranked ("my top two")."""
    if attr.dep_ not in ("attr", "acomp") or attr.lemma_.lower() in PERSON_NOUNS or attr.lower_ == "man":
        return False
    kids = [c.lower_ for c in attr.children]
    if attr.dep_ == "attr" and (attr.tag_ == "JJS" or kids == ["the"] and attr.lower_.endswith("est")
                                and attr.lower_ not in _EST_NOUNS) or any(
            c.dep_ == "amod" and (c.tag_ == "JJS" or c.lower_ in ("best", "worst")) for c in attr.children):
        return True
    return attr.pos_ == "NUM" and any(c.dep_ in ("poss", "amod") for c in attr.children)


def _extraposed(verb, attrs) -> bool:
    """Whether a copula's "it" stands for a clause after it: a gerund or an infinitive on the
    verb or on what it says "it" is ("it's kinda freeing, just putting my feelings on the canvas",
    "it's a lot of pressure to keep going up", "it was so much fun building my website")."""
    def clausal(c):
        return c.tag_ == "VBG" or any(x.dep_ == "aux" and x.lower_ == "to" for x in c.children)

    return (any(c.dep_ in ("advcl", "xcomp") and c.i > verb.i and clausal(c) for c in verb.children)
            or any(c.dep_ == "acl" and c.head.i >= a.i and clausal(c) for a in attrs for c in a.subtree)
            or any(c.dep_ == "ccomp" and c.i > verb.i and any(m.dep_ == "mark" and m.lower_ == "that" for m in c.children)
                   for c in verb.children)  # "it's important to me that people have someone to talk to"
            or any(_gerund_misread(a) for a in attrs))


#: Nouns in -ing that are things, not a gerund the parser took for one.
_ING_NOUNS = frozenset("thing morning evening ring spring king wedding building ceiling clothing feeling meeting "
                       "painting setting ending beginning string wing swing sibling darling pudding".split())


def _gerund_misread(attr) -> bool:
    """A gerund after "it is" + adjective that the parser read as a noun ("it was great *bonding*
    over it", "it was so cool *spending* time with them"): an -ing word with no determiner,
    after an adjective of its own phrase."""
    for t in (attr, *(k for k in attr.children if k.dep_ == "compound")):
        if (t.lower_.endswith("ing") and t.lower_ not in _ING_NOUNS and t.tag_ in ("NN", "VBG")
                and not any(d.dep_ == "det" for d in attr.children)
                and any(x.pos_ == "ADJ" and x.i < t.i for x in attr.children)):
            return True
    return False


#: Verbs that take no object: "the time I went", "the year we moved" leave none out.
_INTRANSITIVE = frozenset(("go come live stay arrive happen sleep sit stand lie wait die fall rise laugh cry smile "
                           "talk speak think feel look seem work travel move grow belong exist start begin "
                           "end").split())


#: Verbs that take a person and a thing ("brings me joy", "made me a cake").
_TWO_OBJECTS = frozenset(("give", "bring", "send", "teach", "show", "offer", "tell", "buy", "make", "lend", "hand",
                          "pass", "sell", "cook", "bake", "write", "owe", "get", "promise", "leave"))
_PERSON_PRONOUNS = frozenset(("me", "you", "him", "her", "us", "them"))


def relative_dative(verb):
    """The person a relative clause gives its noun to, or None: in "the joy *that* dancing brings
    *me*" and "the cake my mom made me" the parser reads the pronoun as the object, but what is
    brought or made is the noun the clause describes; the pronoun is who gets it."""
    if verb.dep_ != "relcl" or verb.lemma_.lower() not in _TWO_OBJECTS or verb.head.pos_ != "NOUN":
        return None
    # the relative word ("that", "which"; the parser calls it a mark, a dative or an object) or
    # none comes before the verb; after it only the pronoun
    kids = [c for c in verb.children if not (c.i < verb.i and c.lower_ in ("that", "which"))]
    if any(c.tag_ in ("WDT", "WP") or c.dep_ in ("dative", "attr", "ccomp", "xcomp", "oprd", "nsubjpass")
           for c in kids):
        return None
    objs = [c for c in kids if c.dep_ == "dobj"]
    if len(objs) != 1 or objs[0].lower_ not in _PERSON_PRONOUNS or objs[0].i < verb.i:
        return None
    if not any(c.dep_ == "nsubj" and c.lower_ not in ("that", "which", "who") for c in kids):
        return None
    return objs[0]


def relative_object(verb):
    """The noun a relative clause leaves its object out for ("the cake *we baked*", "my horse
    painting *I did*": what was baked, what was done), or None: a clause with an object, a
    complement or a stranded preposition of its own ("the house I grew up in"), a relative
    pronoun, an "it" subject or a "when", a verb that takes no object, a set phrase ("the
    difference you're making"), or a head that is a time or no thing ("the way I feel")."""
    head = verb.head
    if verb.dep_ != "relcl" or verb.pos_ != "VERB" or head.pos_ != "NOUN" or verb.lemma_.lower() in _INTRANSITIVE:
        return None
    kids = list(verb.children)
    if not any(c.dep_ == "nsubj" and c.tag_ not in ("WDT", "WP") and c.lower_ not in ("that", "it") for c in kids):
        return None  # ("the joy it brings": which "it" is seldom said)
    if relative_dative(verb) is not None:  # "the joy that dancing brings me": it brings me the joy
        return head if is_thing(head) and not is_when(head) else None
    if any(c.tag_ == "WRB" or c.lower_ in ("that", "which", "who", "whom") for c in kids) \
            or (verb.lemma_.lower(), head.lemma_.lower()) in SET_PHRASES:  # ("news that you two get along")
        return None  # "a pic from when we met up", "the difference you're making"
    if any(c.dep_ in ("dobj", "attr", "ccomp", "xcomp", "oprd", "nsubjpass", "auxpass", "acomp")
           or c.dep_ == "prep" and not any(c.children) for c in kids):  # "the house I grew up in": in it
        return None
    return head if is_thing(head) and not is_when(head) else None


def dummy_it(tok) -> bool:
    """Whether a subject "it" stands for a clause after its copula ("It's so peaceful waking up
    to the birds", "it's tough starting a biz"), not for a thing."""
    verb = tok.head
    return (tok.lower_ == "it" and verb.lemma_ == "be"
            and _extraposed(verb, [c for c in verb.children if c.dep_ in ("attr", "acomp")]))


def _order_misread(verb) -> bool:
    """A verb in its bare form with a singular noun as its subject and nothing that allows it
    (no auxiliary, no "to", no verb that lets or makes): English has no such clause, so the
    small parser has given an order, or a verb of another clause, a subject from before it."""
    return (verb.tag_ == "VB" and verb.dep_ in ("ROOT", "advcl", "conj", "parataxis")
            and not any(c.dep_ in ("aux", "auxpass") for c in verb.children)
            and any(c.dep_ == "nsubj" and c.tag_ in ("NN", "NNP") and not any(x.dep_ == "conj" for x in c.children)
                    for c in verb.children))


def of_what(tok):
    """The "of" object that a vague head needs to name a thing ("the top *of the hill*"), or None."""
    if tok.pos_ != "NOUN" or tok.lemma_.lower() not in WHOLE_WITH_OF:
        return None
    for p in tok.children:
        if p.dep_ == "prep" and p.lower_ == "of":
            for q in p.children:
                if q.dep_ == "pobj" and q.pos_ in ("NOUN", "PROPN"):
                    return q
    return None


def governor(verb):
    """The word whose subject a verb without one of its own shares: the verb or noun it hangs on
    (a conjunct, a complement, an adverbial or relative clause), or the verb a preposition it
    follows hangs on ("I'm living my dream *by having* my own studio"); None when there is none."""
    if verb.head is verb:
        return None
    if verb.dep_ in ("conj", "xcomp", "advcl", "relcl", "acl") or (
            verb.dep_ == "acomp" and verb.lemma_.lower() in FACTIVE | EAGER
            and not any(c.dep_ == "aux" for c in verb.head.children)):  # not "they're gonna be lucky to have you"
        return verb.head  # ("I'm lucky *to have* my family": I have it)
    return verb.head.head if after_preposition(verb) else None


#: Objects that name nothing of their own ("painting nature-inspired *ones*", "doing *stuff*").
_UNNAMED = frozenset(("ones", "one", "stuff", "things", "thing"))


#: Verbs too light to be an activity liked by themselves ("I love going to the beach": the beach).
_LIGHT_ACTIVITY = frozenset("go do have get make take be spend come keep put give see let".split())


def liked_activity(tok) -> bool:
    """An activity liked or disliked with nothing of its own but where, with whom or how: "we
    love *painting* together", "I love *hiking*", "I love *hiking* with my dog" (the parser's
    complement; the activity is the thing liked, and its prepositions are its own facts)."""
    return (tok.dep_ == "xcomp" and tok.lower_.endswith("ing") and tok.head.lemma_.lower() in _LIKING
            and all(c.dep_ in ("advmod", "punct", "cc") or c.dep_ == "dobj" and c.lower_ in _UNNAMED
                    or c.dep_ in ("prep", "conj") and tok.lemma_.lower() not in _LIGHT_ACTIVITY
                    and (c.dep_ == "prep" or c.pos_ == "VERB")  # "hiking in the mountains and exploring forests"
                    for c in tok.children))  # not "love being a mom"; "love painting ... ones" is painting


def continues_clause(tok) -> bool:
    """A subject "it" that goes on from a clause as the subject before it ("Losing my job was
    tough but it gave me the push", "Feeling supported means a lot. It gives me the oomph"):
    it stands for what was done, not for a thing (nor for the job lost), so it makes no fact."""
    if tok.lower_ != "it" or tok.dep_ not in _SUBJ:
        return False
    verb = tok.head
    if any(c.dep_ == "advcl" and c.tag_ == "VBG" and c.i < tok.i and not _own_subject(c) for c in verb.children):
        return True  # "Been practicing dance routines lately, it keeps my mind focused"
    if verb.dep_ == "conj":
        before = verb.head
    elif tok.sent.start > 0:  # the last clause of the sentence before ("I agree - taking risks is key. It ...")
        before = max((t for t in tok.doc[tok.sent.start - 1].sent if t.dep_ in ("ROOT", "conj", "ccomp", "parataxis")
                      and any(c.dep_ in _SUBJ for c in t.children)), key=lambda t: t.i, default=None)
        if before is None:
            return False
    else:
        return False
    subj = next((c for c in before.children if c.dep_ in _SUBJ), None)
    return subj is not None and (subj.dep_ == "csubj" or subj.pos_ == "VERB")


def clause(tok) -> bool:
    """Whether a subject is a clause, not a thing: a verb with arguments of its own ("*Taking*
    care of ourselves is vital", "*Being* a mom is awesome", "*starting* a business has its ups
    and downs"). Its head word alone would stand for the whole activity in a fact ("Taking, be,
    vital"); a bare gerund ("Painting looks like a great outlet") is a thing and stays."""
    return tok.pos_ in ("VERB", "AUX") and any(c.dep_ not in ("cc", "conj", "punct") for c in tok.children)


def first_person_left_out(verb, depth: int = 0) -> bool:
    """A sentence that starts with its verb in the past, as a gerund or in "gonna / wanna /
    gotta" form, with no subject: chat's "Went camping last week", "Moving to Kreuzberg on the
    1st", "Gonna continue my studies", after an opener ("Nope, sold the flat", "not much, just
    finished painting"), and a verb joined to one ("... and check out career options"). An
    order ("Keep going!") has a base-form verb first and is not read as a fact."""
    if (verb.dep_ in ("conj", "xcomp") or after_preposition(verb)) and depth < 3 and verb.head.i != verb.i:
        return first_person_left_out(verb.head.head if after_preposition(verb) else verb.head, depth + 1)
    if spliced(verb):
        return True  # "Finished the quilt yesterday, it looks great"
    if verb.dep_ in ("csubj", "csubjpass") and verb.tag_ == "VBG" and not _own_subject(verb):
        return _mine(verb)  # "Losing my job was hard", "Startin' my biz has been tough": I lost it
    first = next((t for t in _after_opener(verb.sent) if not t.is_punct and t.pos_ != "INTJ" and t.dep_ != "advmod"),
                 None)
    if first is None:
        return False
    if verb.lemma_ == "be" and any(c.dep_ == "attr" and c.lower_ in TIME_NOUNS for c in verb.children):
        return False  # "Been a busy week since we talked": it has been, not I
    if first.i == verb.i:  # "Loved by millions is a song ...": an auxiliary after it, not a fragment
        spoken_to = verb.tag_ == "VBP" and any(vocative(c) for c in verb.children)  # "Gina - really appreciate it"
        return (verb.dep_ == "ROOT" and (verb.tag_ in ("VBD", "VBN", "VBG") or spoken_to)
                and not any(c.dep_ in ("aux", "auxpass") and c.i > verb.i for c in verb.children)) or felt(verb)
    if first.lower_ == "been" and first.dep_ == "aux" and first.head.i == verb.i:
        return verb.tag_ == "VBG"  # "Been reading that book you recommended"
    return first.lower_ in ("gon", "gonna", "wanna", "gotta") and verb.head.i == first.i


def spliced(verb) -> bool:
    """A subjectless clause that starts its sentence and runs on after a comma into another
    ("*Been practicing* routines lately, it keeps me focused", "*Went* camping last week, it was
    great"): a chat fragment of its own, the speaker's, not a clause that shares the next one's
    subject (a participle does: "Walking home, she saw a fox")."""
    if verb.dep_ != "advcl" or any(c.dep_ in ("nsubj", "nsubjpass", "expl", "mark") for c in verb.children):
        return False
    first = next((t for t in _after_opener(verb.sent) if not t.is_punct and t.pos_ != "INTJ" and t.dep_ != "advmod"),
                 None)
    if first is None or not any(t.text == "," for t in verb.doc[verb.i : verb.head.i]):
        return False
    if first.lower_ == "been" and first.dep_ == "aux" and first.head.i == verb.i:
        return verb.tag_ == "VBG"
    return first.i == verb.i and verb.tag_ == "VBD"


def _mine(verb) -> bool:
    """Whether a verb's object, or the object of its preposition, is the speaker's own ("my job",
    "for my store"): a gerund of one's own doings ("Growing my customer base is the focus")."""
    objs = [c for c in verb.children if c.dep_ == "dobj"]
    objs += [q for p in verb.children if p.dep_ == "prep" for q in p.children if q.dep_ == "pobj"]
    return any(c.dep_ == "poss" and c.lower_ == "my" for o in objs for c in o.children)


#: Words an opener of a chat sentence is made of ("Nope,", "not much,", "Oh well,").
_OPENER_POS = frozenset(("INTJ", "PART", "ADJ", "ADV", "DET", "PUNCT"))


def _after_opener(sent):
    """A sentence's tokens after an opener set off by a comma that names nothing ("Nope,",
    "not much,", "honestly,") and after a name spoken to ("Thanks, Gina - ...": see
    :func:`fastmem.reader.words.vocative`); the whole sentence when it has neither."""
    spoken = next((t for t in sent if vocative(t)), None)
    if spoken is not None:
        return sent.doc[spoken.i + 2 : sent.end]
    for t in sent:
        if t.text == ",":
            before = sent.doc[sent.start : t.i]
            if len(before) and all(w.pos_ in _OPENER_POS or w.lower_ in INTERJECTIONS for w in before):
                return sent.doc[t.i + 1 : sent.end]
            break
    return sent


def opener(tok) -> bool:
    """Whether a parse's subject is a word of a sentence's opener ("Nope, sold ...": "Nope",
    "not much, just finished ...": "much"); "my youngest took ..." has a subject."""
    if tok is UNDERSTOOD_I:
        return False
    if vocative(tok):
        return True  # "Thanks, Gina - really appreciate your words": the one spoken to
    after = tok.doc[tok.right_edge.i + 1] if tok.right_edge.i + 1 < len(tok.doc) else None
    comma = tok.doc[tok.i + 1] if tok.i + 1 < len(tok.doc) else None
    if (tok.pos_ == "PROPN" and comma is not None and comma.text == "," and tok.head.i != tok.i
            and any(c.dep_ in _SUBJ and c.i > comma.i for c in tok.head.children)):
        return True  # "Yep Jon, staying focused is key": the one spoken to, beside the verb's own subject
    return tok.lower_ in INTERJECTIONS or (tok.pos_ in ("ADJ", "ADV", "PART", "INTJ") and after is not None
                                           and after.text == "," and not any(c.dep_ == "poss" for c in tok.children))


#: A preposition and noun that say the state a verb leaves its object in ("keeps me *at peace*").
_STATES = frozenset((("at", "peace"), ("at", "ease"), ("on", "track"), ("in", "check"), ("in", "shape"),
                     ("on", "edge"), ("in", "line"), ("at", "bay")))
_LEAVE_IN = frozenset(("keep", "put", "set", "get", "hold", "stay", "feel"))


def state_phrase(tok) -> str | None:
    """ "at peace" when ``tok`` is the "at" of "keeps me at peace" (a verb that leaves its object,
    or its subject, in a state: keep, put, stay, feel...), else None."""
    if tok.dep_ != "prep" or tok.head.lemma_.lower() not in _LEAVE_IN:
        return None
    noun = [c for c in tok.children if c.dep_ == "pobj"]
    if len(noun) != 1 or (tok.lower_, noun[0].lower_) not in _STATES or any(noun[0].children):
        return None
    return f"{tok.lower_} {noun[0].lower_}"


def how_left(tok) -> bool:
    """A word that says how a verb leaves its object, part of the relation and never its other
    end: "keeps me *motivated*", "kept me *going*", "brings us *together*", "looks *forward* to"."""
    if tok.dep_ == "oprd":  # (not an aside after a dash: "I started my store - pretty cool, huh?")
        between = tok.doc[tok.head.i + 1 : tok.i]
        return tok.pos_ in ("ADJ", "VERB") and not any(t.is_punct and t.tag_ != "HYPH" for t in between)
    if tok.dep_ == "xcomp" and tok.tag_ == "VBG" and not any(tok.children):  # "dancing has kept me going"
        return any(c.dep_ == "dobj" and c.pos_ == "PRON" and c.i < tok.i for c in tok.head.children)
    if tok.dep_ == "advmod" and tok.lower_ in ("forward", "ahead") and tok.i == tok.head.i + 1:
        return True  # "look forward to", "pushing forward with", "going ahead with"
    if state_phrase(tok) is not None:
        return True  # "keeps me at peace", "puts me at ease", "keeps me on track"
    before = tok.doc[tok.i - 1] if tok.i else tok  # right after the verb, or after a pronoun it moves ("wishing
    return (tok.dep_ == "advmod" and tok.lower_ in ("together", "closer", "apart")  # you happy years together": no)
            and (before.i == tok.head.i
                 or before.head.i == tok.head.i and before.dep_ == "dobj" and before.pos_ == "PRON"))


def _doubled(verb, lemma: str) -> str:
    """A lemma the lemmatiser built from a doubled consonant ("prepping": *preppe*): prep."""
    if (verb.lower_.endswith(("ing", "ed")) and len(lemma) > 4 and lemma.endswith("e") and lemma[-2] == lemma[-3]
            and lemma[-2] not in "aeiouls" and verb.lower_.startswith(lemma[:-1])):
        return lemma[:-2]
    return lemma


def plain_verb(verb, lemma: str) -> str:
    """The relation a verb's lemma stands for: "I've got a work dinner", "she's got two kids":
    have, not get (:func:`have_got`); "heading to the lake", "we headed home": go."""
    if lemma == "be" and any(c.dep_ == "aux" and c.lower_ in _HAVE for c in verb.children) \
            and any(c.dep_ == "prep" and c.lower_ == "to" for c in verb.children):
        return "go"  # "I've been to Paris": gone there
    if lemma == "head" and any(c.dep_ == "prep" and c.lower_ in ("to", "for", "into", "towards") or c.dep_ == "advmod"
                               and c.lower_ in ("home", "back", "out", "off", "over", "there") for c in verb.children):
        return "go"
    if lemma == "get" and any(c.dep_ == "dobj" for c in verb.children) and any(
            c.dep_ in ("prep", "dative") and c.lower_ == "to" and any(
                p.dep_ == "pobj" and (p.lower_ in _PERSON_PRONOUNS or p.ent_type_ == "PERSON") for p in c.children)
            for c in verb.children):
        return "send"  # "I'll get the video to you": send it, not get it
    return have_got(verb, _doubled(verb, lemma))


def have_got(verb, lemma: str) -> str:
    """"I've got a work dinner", "she's got two kids": have, not get."""
    if lemma == "get" and verb.tag_ in ("VBN", "VBD") and any(c.dep_ in ("aux", "auxpass") and c.lower_ in _HAVE
                                                           for c in verb.children):
        return "have"
    return lemma
