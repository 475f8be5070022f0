"""The words and word pairs the reader's facts are judged by: what is never a thing of a fact
(interjections, vague heads), what a light verb with an action noun means (idioms), which set
phrases state no fact, and which nouns are a time. The predicates take spaCy tokens; the
understood "I" of a chat turn (:data:`UNDERSTOOD_I`) is a thing, never a time.
"""

from __future__ import annotations

import re

__all__ = ["FIGURES", "figurative", "COLLECTIVE", "their_antecedent", "sentence_case", "INTERJECTIONS", "PRAISE",
           "ANYONE", "VAGUE_HEADS", "IDIOMS", "SET_PHRASES", "TIME_NOUNS", "UNDERSTOOD_I", "AMOUNTS", "ASKING",
           "is_when", "is_thing", "no_fact", "idiom", "measured", "naming", "given_name", "bare_time", "contracted_be",
           "spoken_g",
           "what_is_had", "places_of", "ORG_NOUNS", "WORKPLACE_NOUNS", "spoken_to", "genitive", "after_preposition",
           "LIFE_STAGES", "GOALS", "goal_of", "FELT", "felt", "vocative", "COUNT_WORDS", "entity_cue", "hyphenated",
           "word_head", "DONE", "past_lemma", "TITLE_WORDS", "quoted_title", "ADVERBIAL", "adverbial", "CHANCES", "chance_of", "MEMBER_NOUNS",
           "PERSON_NOUNS", "EVENT_PEOPLE", "PET_NOUNS", "MALE_NOUNS", "FEMALE_NOUNS", "BARE_KIN",
           "PRONOUN_SEX", "noun_sex"]

#: Common nouns that name a person by kin, tie or trade: such a mention is typed a person, is
#: who a later "he" or "she" can stand for, and is the role a name given beside it holds ("my
#: cousin Anjali").
PERSON_NOUNS = frozenset("""
friend sister brother mother father mom mum mommy mummy mama dad daddy papa parent wife husband son daughter
cousin uncle aunt auntie grandma grandpa grandmother grandfather granny gran nan nana nonna grandad granddad
grandson granddaughter niece nephew sibling stepmom stepmum stepdad fiance fiancee fiancé fiancée girlfriend
boyfriend mother-in-law father-in-law sister-in-law brother-in-law boss colleague coworker co-worker teacher
doctor man woman boy girl child kid baby neighbor neighbour partner roommate flatmate housemate classmate
bestie buddy student manager customer client engineer nurse lawyer landlord landlady user mentor coach tutor
therapist dentist surgeon trainer carpenter plumber electrician mechanic builder painter gardener cleaner vet
midwife physio physiotherapist receptionist waiter waitress chef
""".split())
#: The person nouns the analogy slot's events generalise to "@person" (its fillers; kept as they
#: were when :data:`PERSON_NOUNS` widened, so that a store's events read as before).
EVENT_PEOPLE = frozenset("""friend sister brother mother father mom dad wife husband son daughter cousin uncle aunt
grandma grandpa boss colleague teacher doctor man woman boy girl child kid neighbor neighbour partner student manager
customer client engineer nurse lawyer landlord user""".split())
#: Animals a chat calls "he" or "she" (a pet is no "it" to its people).
PET_NOUNS = frozenset("""cat dog puppy pup kitten kitty horse pony rabbit bunny hamster parrot budgie tortoise ferret
beagle retriever labrador lab poodle terrier spaniel collie dachshund pug husky""".split())
#: Person nouns that say whether "he" or "she" can stand for whom they name.
MALE_NOUNS = frozenset("""dad daddy papa father brother son uncle husband boyfriend grandpa grandfather grandad
granddad nephew stepdad fiance fiancé father-in-law brother-in-law man boy guy waiter""".split())
FEMALE_NOUNS = frozenset("""mum mom mam mummy mommy mama mother sister daughter aunt auntie wife girlfriend grandma
grandmother granny gran nan nana nonna niece stepmom stepmum fiancee fiancée mother-in-law sister-in-law woman girl
landlady waitress""".split())
#: The sex a third-person pronoun says ("he": "m").
PRONOUN_SEX = {"he": "m", "him": "m", "his": "m", "himself": "m", "she": "f", "her": "f", "hers": "f", "herself": "f"}


def noun_sex(word: str) -> str | None:
    """"m" or "f" where a person noun says it ("dad", "my sister"'s last word), else None."""
    w = word.lower()
    return "m" if w in MALE_NOUNS else "f" if w in FEMALE_NOUNS else None


#: Kin a chat names without "my" ("mum said she'd bring jollof", "Dad bought it for me"): the
#: speaker's.
BARE_KIN = frozenset("mum mom mam mummy mommy mama dad daddy papa nan nana granny grandma grandpa grandad".split())
#: Nouns of organisations: a fact's object of this kind is typed as one.
ORG_NOUNS = frozenset({
    "company", "firm", "corporation", "startup", "bank", "school", "university", "team",
    "subsidiary", "agency", "club", "business", "organisation", "organization", "store", "shop",
})
#: More nouns of places people work in or groups they lead: a fact's object typed as an
#: organisation ("runs a bakery", "heads the lab"), so that its relation is read as such (see
#: fastmem.reader.canon.TYPED). Facts only: the slot's event fillers keep their lemma.
WORKPLACE_NOUNS = frozenset({
    "bakery", "restaurant", "cafe", "café", "bar", "pub", "hotel", "hospital", "clinic", "factory", "farm",
    "lab", "laboratory", "department", "division", "office", "studio", "workshop", "charity", "nonprofit",
    "foundation", "institute", "college", "academy", "church", "museum", "library", "newspaper", "magazine",
    "group", "choir", "band", "orchestra", "committee", "council", "board", "crew", "squad", "unit", "branch",
    "brand", "chain", "franchise", "practice", "salon", "gallery", "theatre", "theater", "kitchen",
})
#: Nouns of groups a person is a member of rather than works for ("joined a band", "an activist
#: group", "the soccer team"): a fact's object of this kind is typed a group, so that joining one
#: is no employment (fastmem.reader.canon.TYPED) and leading one is still managing it.
MEMBER_NOUNS = frozenset({"group", "choir", "band", "orchestra", "committee", "council", "board", "crew", "squad",
                          "club", "team"})
#: Nouns of what someone means to do: "my goal is to give kids a home" is the speaker's plan
#: (a dream, a hope or a wish is wished), not something the goal does.
GOALS = frozenset("goal aim plan mission intention ambition target dream hope wish".split())
#: The subject a chat turn leaves out ("Went camping last week"): the speaker, resolved at the write.
UNDERSTOOD_I = object()


#: Words of conversation that are never a thing of a fact: interjections, greetings, backchannel
#: ("Yep", "haha", "Glad"), read whatever a parse tagged them as.
INTERJECTIONS = frozenset(("yep yeah yes yup no nope nah haha hahaha hah lol lmao omg wow ok okay alright hey hi "
                           "hello thanks thank oh ah aw aww hmm hm um uh yay woo whoa oops sure cool glad awesome "
                           "btw tbh ugh phew bye cheers congrats congratulations ooh oof rip wait well").split())
#: Heads too vague to be a thing on their own ("a great way", "much joy", "a blast"): a fact
#: about one needs a noun that says which ("family time", "the top of the hill").
VAGUE_HEADS = frozenset(("way joy fun time thing things lot lots blast try while top stuff bit kind sort deal one "
                         "something anything everything nothing part idea experience moment day place best chance "
                         "people pic ton tons life memory detail details mix").split())
#: Words of praise that a parse can leave as the end of a fact ("it's awesome", "family is the
#: best"): an opinion of the thing, not a thing (a noun they modify is one: "a great teacher").
PRAISE = frozenset(("awesome great amazing best fantastic wonderful incredible cool nice lovely beautiful perfect "
                    "terrific brilliant superb excellent badass gorgeous stunning adorable fabulous impressive "
                    "rewarding inspiring empowering lifesaver legend genius rockstar champ gem saint").split())
#: Adjectives that say how many or how alike, not which: "many people", "other people".
_HOW_MANY = frozenset(("many few several other more most much numerous countless various different certain similar "
                       "same such all some good nice kind real right wonderful special").split())
#: Nouns of a person that, with "a" and nothing that says who ("a photo of a man holding a
#: frisbee"), name nobody in particular: no node of the graph.
ANYONE = frozenset("person man woman guy girl boy lady gentleman individual".split())
#: Nouns of amount or kind: "a lot of friends" is friends, "all kinds of people" people ("of" names
#: what is counted).
AMOUNTS = frozenset(("lot lots bunch couple number plenty ton tons handful few bit loads load heaps heap kind kinds "
                     "sort sorts type types variety").split())
#: Punctuation a tokeniser leaves on a word ("awesome--", "great!!").
_EDGES = "-\u2013\u2014.,!?;:~*'\"()"
#: Light verbs with an action noun read as the action ("give it a try" -> try, "take care of"
#: -> care for, "do a course" -> take it): (verb, noun) -> (relation, where its object is).
IDIOMS = {("give", "try"): ("try", "dative"), ("give", "shot"): ("try", "dative"), ("give", "go"): ("try", "dative"),
          ("take", "care"): ("care for", "of"), ("take", "look"): ("look at", "at"), ("have", "look"): ("look at", "at"),
          ("pay", "visit"): ("visit", "dative"), ("make", "decision"): ("decide", "about"),
          ("take", "shot"): ("try", "at"), ("take", "stab"): ("try", "at"), ("make", "it"): ("go to", "to"),
          ("do", "course"): ("take", "dobj"), ("do", "class"): ("take", "dobj"), ("do", "workshop"): ("take", "dobj"),
          ("do", "lesson"): ("take", "dobj"), ("do", "shift"): ("work", "dobj"), ("hit", "gym"): ("go to", "dobj"), ("take", "trip"): ("travel to", "to"),
          ("have", "love"): ("love", "for"), ("have", "passion"): ("be passionate about", "for"),
          ("take", "control"): ("take control of", "of"), ("keep", "track"): ("keep track of", "of"),
          ("lose", "track"): ("lose track of", "of"), ("take", "advantage"): ("take advantage of", "of"),
          ("make", "use"): ("use", "of"), ("take", "charge"): ("take charge of", "of"),
          ("take", "part"): ("take part in", "in"), ("take", "pride"): ("take pride in", "in"),
          **{("put", n): ("work on", ("on", "into")) for n in ("work", "effort", "time", "hour", "energy")},
          **{("have", n): ("enjoy", "at") for n in ("time", "blast", "fun", "ball")}}  # "had a blast at the fest"
#: Verb and noun pairs of set phrases that state no fact ("hit a rough patch", "take a while").
SET_PHRASES = frozenset({("hit", "patch"), ("take", "while"), ("make", "sense"), ("have", "blast"), ("have", "time"),
                         ("have", "fun"), ("take", "time"), ("make", "point"), ("get", "point"), ("take", "plunge"),
                         ("get", "guts"), ("have", "guts"), ("have", "ups"), ("have", "downs"), ("make", "time"),
                         ("make", "difference"), ("get", "hang"), ("take", "toll"), ("get", "kick"), ("take", "work"),
                         ("take", "effort"), ("do", "job"), ("mean", "lot"), ("mean", "world"),
                         ("put", "work"), ("put", "effort"), ("make", "progress"), ("make", "work")})


#: What a speaker who needs or wants it asks the listener for ("I need advice").
ASKING = frozenset("advice help favour favor recommendation suggestion tip idea input opinion pointer".split())
#: What a group does something as ("together as a family", "as a team"): how, not what.
_TOGETHER = frozenset("family team group couple duo pair unit".split())
#: Times of life: "as a kid", "when I was a kid" say when, not what.
LIFE_STAGES = frozenset("kid child teenager teen baby toddler boy girl youngster".split())
#: Nouns of time: an object of a preposition that is one is when, not what ("quit in March").
TIME_NOUNS = frozenset(("morning afternoon evening night midnight noon today tonight tomorrow yesterday weekend week "
                        "month year years day days hour hours minute minutes season spring summer autumn fall winter "
                        "christmas holiday holidays monday tuesday wednesday thursday friday saturday sunday january "
                        "february march april may june july august september october november december "
                        "tue tues wed weds thu thur thurs fri").split())  # ("last Tues": a day, not a name)

#: Words of count or order the entity recogniser reads as amounts ("thousands", "twice",
#: "Firstly") though the tagger does not tag them as numbers.
COUNT_WORDS = frozenset(("first second third fourth fifth sixth seventh eighth ninth tenth last once twice "
                         "dozen dozens hundred hundreds thousand thousands million millions billion billions half "
                         "firstly secondly thirdly finally").split())


def entity_cue(doc) -> bool:
    """Whether a tagged text holds anything the entity recogniser could name: a proper noun, a
    number, a word of count, order or time, money or a percentage, or a capitalised word inside
    a sentence. A text without one gets no entity recogniser: what it finds there is a
    capitalised common noun at a sentence start taken for a name ("Glad" a person, "Coal" an
    organisation, "Bacteria" a place), and it is the costliest step of the parse."""
    for t in doc:
        if (t.pos_ == "PROPN" or t.tag_ == "CD" or t.like_num or "$" in t.text or "%" in t.text
                or t.lower_ in COUNT_WORDS or t.lemma_.lower() in TIME_NOUNS
                or (not t.is_sent_start and t.text[:1].isupper() and t.text != "I")):
            return True
    return False


def measured(tok):
    """What an amount names: "a lot of friends" -> friends; any other token as it is."""
    if tok.lemma_.lower() not in AMOUNTS or tok.pos_ != "NOUN":
        return tok
    for p in tok.children:
        if p.dep_ == "prep" and p.lower_ == "of":
            for q in p.children:
                if q.dep_ == "pobj":
                    return q
    return tok


def naming(verb) -> bool:
    """Whether a verb is the "called" / "named" that gives a noun its name ("a beagle called
    Biscuit", "a woman named Sara")."""
    return verb.dep_ == "acl" and verb.lemma_.lower() in ("call", "name") and verb.tag_ in ("VBN", "VBD")


def after_preposition(verb) -> bool:
    """Whether a verb follows a preposition that hangs on another verb ("living my dream *by
    having* my own studio", "help you *with making* content"): that verb's subject and mood are
    its own."""
    return verb.dep_ == "pcomp" and verb.head.dep_ == "prep" and verb.head.head.pos_ in ("VERB", "AUX")


def spoken_to(name, head_is_person: bool) -> bool:
    """Whether a proper name in apposition is the person spoken to rather than the noun's name:
    set off by a comma, ending its clause, a person's name (or untyped), after a noun that is no
    person ("That's a gorgeous song, Caroline."; "my friend, Bob." and "the cafe, Crumbs" keep theirs)."""
    doc = name.doc
    before = name.i > 0 and doc[name.i - 1].text == ","
    after = name.i + 1 >= len(doc) or doc[name.i + 1].is_punct
    return before and after and not head_is_person and name.ent_type_ in ("PERSON", "")


def genitive(owner) -> str:
    """The mark of possession an owner was written with: "'" after a plural ("my mentors'
    support"), else "'s"."""
    return "'" if any(c.dep_ == "case" and c.text in ("'", "\u2019") for c in owner.children) else "'s"


def given_name(noun):
    """The proper name a noun is given by a "called" / "named" clause, or None."""
    for c in noun.children:
        if naming(c):
            for n in c.children:
                if n.dep_ in ("oprd", "attr", "dobj") and n.pos_ == "PROPN":
                    return n
    return None


#: A preposition and a noun that say how, when or why, not what ("in the end", "in the works",
#: "in hopes of", "by the way", "on track"): their noun is never a fact's object.
ADVERBIAL = frozenset({("in", "end"), ("in", "work"), ("in", "hope"), ("in", "meantime"), ("at", "moment"),
                       ("in", "way"), ("by", "way"), ("in", "general"), ("on", "track"), ("in", "touch"),
                       ("on", "board"), ("in", "fact"), ("of", "course"), ("on", "purpose"), ("at", "end"),
                       ("for", "sake"), ("at", "least"), ("in", "advance"), ("in", "person"), ("by", "chance")})


def adverbial(tok) -> bool:
    """Whether a preposition's object is a noun of an adverbial phrase (:data:`ADVERBIAL`)."""
    if tok.dep_ != "pobj" or (tok.head.lower_, tok.lemma_.lower()) not in ADVERBIAL \
            or any(c.dep_ in ("amod", "compound", "poss") for c in tok.children):
        return False
    of = any(c.dep_ == "prep" and c.lower_ == "of" for c in tok.children)
    return of if tok.lemma_.lower() == "hope" else not of  # "in hopes of growing"; not "the end of the road"


#: Nouns of a chance taken: "had the chance to volunteer" is volunteering.
CHANCES = frozenset(("chance", "opportunity", "privilege", "honor", "honour"))


def chance_of(verb):
    """The "have" or "get" whose chance a verb's infinitive is ("I had the chance *to volunteer*
    at the youth center", "got the opportunity to meet her"), or None: the infinitive is then
    what happened, with that verb's subject and mood."""
    noun = verb.head
    if (verb.dep_ == "acl" and any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children)
            and noun.lemma_.lower() in CHANCES and noun.dep_ == "dobj" and noun.head.lemma_.lower() in ("have", "get")):
        return noun.head
    return None


#: A day of the month said alone ("on the 3rd", "for my 18th"): a date.
_DAY_OF_MONTH = re.compile(r"(?:[1-9]|[12][0-9]|3[01])(?:st|nd|rd|th)")


def is_when(tok) -> bool:
    """Whether a token is a time (a date or time entity, or a noun of time) or a reason ("failed
    because of the roundabouts"): when or why something happened, not what it was done to."""
    if tok is UNDERSTOOD_I:
        return False
    if tok.dep_ == "pobj" and tok.head.lower_ in ("because", "thanks", "since", "until", "till"):
        return True  # ("been running longer since our last chat": when)
    if tok.dep_ == "pobj" and tok.head.lower_ == "as" and tok.lemma_.lower() in LIFE_STAGES | _TOGETHER:
        return True  # "I loved reading it as a kid": when; "together as a family": how
    return tok.ent_type_ in ("DATE", "TIME") or tok.lemma_.lower() in TIME_NOUNS or bool(_DAY_OF_MONTH.fullmatch(tok.lower_))


def hyphenated(tok) -> tuple[int, int] | None:
    """``(start, end)``, inclusive, of the hyphenated word a token is a piece of ("self-care",
    "de-stress", "stress-buster": the tokeniser splits them at the hyphen), or None."""
    doc = tok.doc
    start = end = tok.i
    while start >= 2 and doc[start - 1].text == "-" and not doc[start - 2].whitespace_ \
            and not doc[start - 1].whitespace_:
        start -= 2
    while end + 2 < len(doc) and doc[end + 1].text == "-" and not doc[end].whitespace_ \
            and not doc[end + 1].whitespace_:
        end += 2
    return (start, end) if end > start else None


def word_head(tok):
    """The piece of a hyphenated word that heads it: the one piece whose head lies outside the
    word ("care" of "self-care"), or its last piece where the parse gave every piece the same
    head and role ("sold her e-bike" as objects "e", "-" and "bike"); None where the pieces have
    different heads; the token itself outside such a word."""
    span = hyphenated(tok)
    if span is None:
        return tok
    start, end = span
    heads = [t for t in tok.doc[start : end + 1]
             if not t.is_punct and (not start <= t.head.i <= end or t.head.i == t.i)]
    if len(heads) == 1:
        return heads[0]
    if heads and len({(t.head.i, t.dep_) for t in heads}) == 1:
        return tok.doc[end]  # "sold her e-bike" read as objects "e", "-" and "bike": the last piece heads it
    return None


#: Most words a quoted title spans ("Becoming Nicole", "Embracing Identity").
TITLE_WORDS = 8


def quoted_title(tok):
    """The quoted title a token is inside, as a span without its quotes, or None: words between
    a pair of quotation marks of its sentence, at most :data:`TITLE_WORDS` of them, the first
    capitalised, none a sentence's end ("I loved 'Becoming Nicole' by Amy Ellis Nutt": a book,
    not a becoming)."""
    sent = tok.sent
    marks = [t.i for t in sent if t.is_quote]
    for a, b in zip(marks[::2], marks[1::2]):
        if a < tok.i < b:
            inner = tok.doc[a + 1 : b]
            if (1 <= len(inner) <= TITLE_WORDS and inner[0].text[:1].isupper()
                    and not any(t.text in (".", "!", "?") for t in inner)):
                return inner
            return None
    return None


def is_thing(tok) -> bool:
    """Whether a token can be an end of a fact: not an interjection, not a word of praise
    ("awesome", "the best"), not an adjective after a preposition ("for cheap"), not a vague head with nothing that says which (the understood "I"
    is always one). A word is judged without the punctuation a parse leaves on it ("awesome--")."""
    if tok is UNDERSTOOD_I:
        return True
    if tok.tag_ in ("WDT", "WP") and tok.head.dep_ in ("relcl", "acl") and tok.head.head is not tok.head:
        tok = tok.head.head  # "people who accepted me" is judged as "people"
    tok = measured(tok)  # "a lot of fun" is judged as "fun"
    if adverbial(tok):
        return False  # "in the works", "in the end": how or when, not what
    if tok.lemma_.lower() in CHANCES and any(c.dep_ == "acl" for c in tok.children):
        return False  # "got the opportunity to meet her": the meeting is the fact
    if hyphenated(tok) is not None:
        head = word_head(tok)
        if head is None or head.i != tok.i:
            return False  # "self" of "self-care": a piece of a word; "helps me de-stress" read as "de", "-", "stress"
    if not any(ch.isalnum() for ch in tok.text):
        return False  # an emoji or a symbol ("I start on Monday 🎉")
    low = tok.lower_.strip(_EDGES)
    if low in INTERJECTIONS or low in PRAISE and tok.pos_ in ("ADJ", "NOUN", "ADV"):
        return False
    if low == "course" and tok.dep_ == "pobj" and tok.head.lower_ == "of":
        return False  # "of course"
    if low in ("gon", "wan", "got") and tok.i + 1 < len(tok.doc) and tok.doc[tok.i + 1].lower_ == "na":
        return False  # what a tokeniser leaves of "Gonna be a great night", "wanna", "gotta"
    if tok.lemma_.lower() in ("guy", "folk", "all") and any(c.lower_ in ("you", "y'all") for c in tok.children):
        return False  # "you guys", "you folks": the listener and whoever is with them, no one to name
    if tok.pos_ == "ADJ" and tok.dep_ == "pobj" and not any(c.dep_ in ("det", "poss", "nummod") for c in tok.children):
        return False  # "for cheap", "for free", "in private": how, not what ("in that flat" is a thing)
    if _afterthought(tok):
        return False  # "the posters were amazing, so much pride and strength!": an exclamation, no predicate
    if low in ("love", "loving") and tok.i == tok.sent.start and tok.pos_ == "NOUN" and not any(
            c.dep_ in ("det", "poss", "amod", "compound") for c in tok.children):
        return False  # "Love seeing your dedication": the speaker's liking, no thing called love
    if (tok.lemma_.lower() in VAGUE_HEADS or low in VAGUE_HEADS) and (
            tok.pos_ in ("NOUN", "PRON", "ADJ") or tok.pos_ == "PROPN" and tok.i == tok.sent.start):  # "Life's hard"
        return any(c.dep_ in ("compound", "poss", "nmod", "nummod") or c.dep_ == "prep" and any(  # not "part of that"
            q.dep_ in ("pobj", "pcomp") and q.pos_ not in ("PRON", "ADJ") for q in c.children)  # not "a mix of excited"
            or low == "people" and c.dep_ == "amod" and c.lower_ not in PRAISE | _HOW_MANY  # "the young people"
            for c in tok.children)  # (not "amazing people", "so many people", "other people")
    if tok.lemma_.lower() in ANYONE and any(c.dep_ == "det" and c.lower_ in ("a", "an", "another") for c in tok.children):
        return any(c.dep_ in ("compound", "poss", "prep", "nmod", "appos") or naming(c)
                   for c in tok.children)  # "a woman named Sara"
    return True


def _afterthought(tok) -> bool:
    """A noun phrase without an article after a copula's adjective and a comma or dash ("were
    amazing, so much pride and strength"): an exclamation about the subject, not what it is."""
    top = tok
    while top.dep_ == "conj" and top.head is not top:
        top = top.head
    verb = top.head
    if top.dep_ != "attr" or top.i < verb.i or any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in top.children):
        return False  # ("is super special to me - a gift from my grandma": what it is, said again)
    between = tok.doc[verb.i + 1:top.i]
    sep = next((t.i for t in between if t.text in (",", "-", "\u2013", "\u2014")), None)
    return sep is not None and any(t.pos_ == "ADJ" for t in tok.doc[verb.i + 1:sep])


#: Figures of speech of everyday chat, as lemmas: a clause that holds one says how someone
#: feels or that something is easy or hard, never what its words name ("I'm over the moon",
#: "I'm up for the challenge", "it's no walk in the park", "keep me in the loop").
FIGURES = tuple(p.split() for p in (
    "over the moon", "on cloud nine", "on top of the world", "be up for", "be game", "walk in the park",
    "piece of cake", "under the weather", "in the loop", "on the same page", "same boat", "be all in", "on the fence",
    "on the right track", "on track", "hang in there", "break a leg", "call it a day", "hit the road", "hit the hay",
    "hit the sack", "spill the bean", "spill the tea", "get the ball rolling", "keep the ball roll", "bite the bullet",
    "beat around the bush", "cut corner", "the last straw", "blessing in disguise", "through thick and thin",
    "at the end of the day", "keep I post", "keep you post", "fingers cross", "go the extra mile", "out of this world",
    "over the top", "take it easy", "one day at a time", "on the go", "in a nutshell", "all ear", "a breath of fresh air",
    "the icing on the cake", "a dime a dozen", "once in a blue moon", "rain check", "sit tight", "let off steam",
    "blow off steam", "on a roll", "in the zone", "the bright side", "a leap of faith", "out of my comfort zone",
    "out of your comfort zone", "the tip of the iceberg", "a long shot", "a tough nut", "heart of gold",
    "on my mind", "on your mind", "bring it on", "have my back", "have your back", "have our back", "get my back",
    "get your back", "be here for", "be there for", "what it take", "the real deal", "a game changer", "kill it",
    "nail it", "crush it", "rock it", "put my heart into", "put our heart into", "put your heart into", "earn it",
    "deserve it", "roller coaster", "wild ride", "come to life", "around for you", "around for I", "live my dream",
    "live the dream", "live our dream"))
_FIGURES_BY_FIRST: dict[str, list[list[str]]] = {}
for _fig in FIGURES:
    _FIGURES_BY_FIRST.setdefault(_fig[0], []).append(_fig)
#: The dependents of a verb that make its clause (not another clause joined to it).
_OWN = frozenset({"prep", "pobj", "acomp", "attr", "dobj", "prt", "advmod", "det", "amod", "compound", "dative",
                  "npadvmod", "neg", "poss", "nummod", "pcomp", "oprd"})


def figurative(verb) -> bool:
    """Whether the clause of ``verb`` (its own dependents, not the clauses joined to it) holds
    a figure of speech of :data:`FIGURES`."""
    toks = [verb]
    todo = [c for c in verb.children if c.dep_ in _OWN or c.dep_ == "dep" and not any(c.children)]  # "I'm *all* in"
    while todo:
        t = todo.pop()
        toks.append(t)
        todo.extend(c for c in t.children if c.dep_ in _OWN)
    toks.sort(key=lambda t: t.i)
    forms = [t.lemma_.lower() if t.lemma_ else t.lower_ for t in toks]
    lows = [t.lower_ for t in toks]
    for words in (forms, lows):
        for i, w in enumerate(words):  # only where a figure's first word stands
            if any(words[i:i + len(fig)] == fig for fig in _FIGURES_BY_FIRST.get(w, ())):
                return True
    return False


def no_fact(verb, subs) -> bool:
    """A set phrase that states no fact: "you're telling me", "hit a rough patch", a figure of
    speech (:data:`FIGURES`)."""
    if figurative(verb):
        return True
    lemma = verb.lemma_.lower()
    objs = [measured(c) for c in verb.children if c.dep_ in ("dobj", "dative")]
    if lemma == "tell" and any(s is not UNDERSTOOD_I and s.lower_ == "you" for s in subs) \
            and any(o.lower_ == "me" for o in objs):
        return True
    if lemma in ("tell", "fill", "update") and any(o.lower_ == "you" for o in objs):
        return True  # "I wanted to tell you about my event", "fill you in on my business": the telling, no fact
    just_it = [o.lower_ for o in objs] == ["it"]
    if lemma == "get" and verb.tag_ in ("VBP", "VB") and just_it:
        return True  # "I get it": understood, not got
    if lemma == "take" and any(getattr(s, "lower_", "") == "it" for s in subs) and any(
            c.dep_ in ("xcomp", "advcl") and any(a.lower_ == "to" for a in c.children) for c in verb.children):
        return True  # "it takes strength to stay hopeful": what anyone needs
    if just_it and lemma in ("know", "believe", "mean", "think", "doubt", "guess", "feel"):
        return True  # "I just know it!": what is known is a thought, no thing
    if just_it and any(c.dep_ == "prt" and c.lower_ == "out" for c in verb.children):
        return True  # "I dance it out", "we talked it out", "sweat it out": a way of coping, no thing
    if lemma == "do" and objs and all(o.lower_ in ("it", "that", "this", "so") for o in objs):
        return True  # "I needed to do it": a deed said before, no thing done to
    if lemma == "be" and any(c.dep_ == "advmod" and c.lower_ in ("here", "there") and c.i < verb.i
                             for c in verb.children):
        return True  # "here's a painting I did", "there's my cat": shown, not said of anything
    if lemma == "make" and any(c.dep_ in ("relcl", "ccomp") and any(w.lower_ in ("who", "what") for w in c.children)
                               for o in objs for c in o.children):
        return True  # "their encouragement made me who I am": shaped, not made
    if lemma == "thank" and any(o.lower_ == "you" for o in objs):
        return True  # "thank you for your concern": a courtesy, no fact
    if lemma == "have" and any(p.dep_ == "prep" and p.lower_ in ("in", "on") and any(
            q.dep_ == "pobj" and q.lemma_.lower() in ("corner", "side") for q in p.children) for p in verb.children):
        return True  # "glad I have you in my corner", "you have me on your side": support, said
    if lemma in ("need", "want") and any(o.lemma_.lower() in ASKING for o in objs) \
            and any(s is UNDERSTOOD_I or s.lower_ in ("i", "we") for s in subs):
        return True  # "I need advice", "I'll need a tea recommendation": asked of the listener
    if any((lemma, o.lemma_.lower()) in SET_PHRASES or (lemma, o.lower_) in SET_PHRASES for o in objs):
        got = idiom(verb)  # "put in the work" says nothing; "put in the work on my business": worked on it
        return got is None or not got[1]
    return False


#: What "do" means by the kind of thing done ("doing the half marathon": running it; "did my
#: knee": injured it; "I did my bathroom": renovated it; "I'll do a curry": make it).
DONE = {**dict.fromkeys("marathon half-marathon 5k 10k race triathlon parkrun ultramarathon".split(), "run"),
        **dict.fromkeys("gym".split(), "go to"),
        **dict.fromkeys("knee ankle wrist shoulder hamstring elbow neck hip groin calf achilles".split(), "injure"),
        **dict.fromkeys("kitchen bathroom bedroom hallway basement attic loft lounge".split(), "renovate"),
        **dict.fromkeys("curry roast bbq barbecue lasagna cake pasta soup stew risotto chili chilli pie".split(),
                        "make")}  # (not a meal: "we did lunch" is had it together)


def idiom(verb):
    """``(relation, objects)`` of a light verb with an action noun (:data:`IDIOMS`, and
    :data:`DONE` for "do"), or None."""
    lemma = verb.lemma_.lower()
    for c in verb.children:
        if c.dep_ != "dobj":
            continue
        noun = measured(c).lemma_.lower()
        done = DONE.get(noun) if lemma == "do" else None
        if done == "injure" and not any(p.dep_ == "poss" for p in c.children):
            done = None  # "did my knee" is an injury; "do knee exercises" is not
        if done is not None:
            return done, [c]
        got = IDIOMS.get((lemma, noun))  # "put a lot of work into": work
        if got is None:
            continue
        rel, where = got
        if where == "dative":
            objs = [d for d in verb.children if d.dep_ == "dative"]
        elif where == "dobj":  # "doing a pottery course": taking it
            objs = [c]
        else:  # the preposition (or one of several) that names what the action is on
            where = (where,) if isinstance(where, str) else where
            objs = [q for p in list(c.children) + list(measured(c).children) + list(verb.children)
                    if p.dep_ == "prep" and p.lower_ in where for q in p.children
                    if q.dep_ == "pobj" and not is_when(q)]  # ("had a great time at night": when)
        return rel, objs
    return None


#: "'s" before an article is "is", never a possessive ("my uncle's an electrician": a
#: possessive takes no article after it; the small parser reads it as one and loses the fact).
#: Pronouns and question words are left as written: the parser reads their "'s" as "is".
_IS_BEFORE_ARTICLE = re.compile(r"\b(\w+)['\u2019]s(?= (?:a|an|the)\b)")
#: A contracted "has" before "gotten" ("it's gotten me some good stuff"), which the parser reads
#: as a passive "is".
_HAS_GOTTEN = re.compile(r"\b(\w+)['\u2019]s(?= gotten\b)")
_READ_AS_IS = frozenset("""that it he she what there here who where how when why let this everything nothing
something everyone someone anyone everybody somebody nobody""".split())


def bare_time(tok) -> bool:
    """A time with nothing that makes it an occasion ("Thursdays", "the weekend"; not "the
    official opening night"): it says when, it is not what a fact is about."""
    return tok is not UNDERSTOOD_I and is_when(tok) and not any(c.dep_ in ("amod", "compound", "poss", "nmod")
                                                               for c in tok.children)


#: A verb's "-ing" written as spoken ("livin' my dreams", "Startin' my biz"): two letters or
#: more, then "in'", with no quote before the word and no letter after it ("ain't" stays).
_DROPPED_G = re.compile(r"(?<![\w'\u2018])([A-Za-z]{2,}in)['\u2019](?![\w'\u2019])")


def spoken_g(text: str) -> str:
    """``text`` with each "-in'" of a verb written as spoken given its "g" back ("livin'":
    living), the same length, so that the parser reads a verb; a quoted word ("'Berlin'") stays."""
    return _DROPPED_G.sub(r"\1g", text) if "in'" in text or "in\u2019" in text else text


#: Verbs of feeling that chat says without "I" and in their base form: "Love the necklace!",
#: "wow, love that painting" (the speaker loves it; no one is told to).
FELT = frozenset(("love", "adore"))


#: The marks that set a name spoken to off from what follows ("Thanks, Gina - really ...").
_VOCATIVE_MARKS = frozenset((",", "-", "\u2013", "\u2014", "!", ":"))


def vocative(tok) -> bool:
    """Whether a name the parser took for its verb's subject is the one spoken to: it opens the
    sentence (after interjections and greetings only), stands alone (no name joined to it) and
    is set off from its verb by a comma, dash or "!" ("Thanks, Gina - really appreciate your
    words", "Jon, loved the show"). Its verb's subject is left unsaid: the speaker's."""
    if tok.pos_ != "PROPN" or tok.dep_ != "nsubj" or any(c.dep_ in ("conj", "cc", "appos") for c in tok.children):
        return False
    doc, end = tok.doc, tok.i + 1  # (a name's head is its last word: "Amy Ellis Nutt")
    if end >= len(doc) or doc[end].text not in _VOCATIVE_MARKS or tok.head.i <= end:
        return False
    return all(w.is_punct or w.pos_ == "INTJ" or w.lower_ in INTERJECTIONS
               for w in doc[tok.sent.start : tok.left_edge.i])


def felt(verb) -> bool:
    """A sentence-first verb of :data:`FELT` with no subject and an object: the speaker's
    feeling, not a request."""
    return (verb.lemma_.lower() in FELT and verb.tag_ in ("VB", "VBP") and verb.dep_ == "ROOT"
            and not any(c.dep_ in ("nsubj", "nsubjpass", "expl", "aux") and not vocative(c) for c in verb.children)
            and any(c.dep_ == "dobj" for c in verb.children))


def goal_of(verb):
    """The goal noun that a copula says is something to do ("My *goal* is to give kids a
    home"), or None."""
    if verb.lemma_ != "be":
        return None
    return next((c for c in verb.children if c.dep_ == "nsubj" and c.lemma_.lower() in GOALS), None)


def contracted_be(text: str) -> str:
    """``text`` with a contracted "is" after a noun or a name and before an article written out
    (see :data:`_IS_BEFORE_ARTICLE`), and a contracted "has" before "gotten" (:data:`_HAS_GOTTEN`)."""
    if "s " not in text:
        return text
    if "gotten" in text:
        text = _HAS_GOTTEN.sub(r"\1 has", text)
    return _IS_BEFORE_ARTICLE.sub(lambda m: m.group(0) if m.group(1).lower() in _READ_AS_IS else m.group(1) + " is",
                                  text)


def what_is_had(lemma: str, light, direct: list):
    """What "have" has, when it names the relation of its place or company ("had lunch with
    Sara": have lunch with; "a lot of friends in Berlin": have friend in): the head noun of the
    verb's one direct object, or None (``light``: the verb's light-verb idiom, if any)."""
    if lemma != "have" or light is not None or len(direct) != 1 or not is_thing(direct[0]):
        return None
    head = measured(direct[0])
    return head if head.pos_ == "NOUN" else None


def places_of(obj, head) -> list:
    """The prepositions (not "of") under a direct object and its counted head."""
    return [q for n in {obj, head} if n is not None for q in n.children if q.dep_ == "prep" and q.lower_ != "of"]


def sentence_case(first, text: str) -> str:
    """``text`` with its first letter lowered when its first token ``first`` is a common word
    capitalised only because it opens the sentence ("Pottery is a huge part of my life",
    "Books guide me": the nodes *pottery* and *books*, one with the lower-case mentions);
    proper names ("Biscuit", "Leeds") and acronyms keep their case."""
    if not text[:1].isupper() or first.pos_ == "PROPN" or not first.text[1:].islower():
        return text
    prev = first.doc[first.i - 1] if first.i > 0 else None
    if not (first.is_sent_start or prev is None or prev.text in (":", "-", '"', "(")):
        return text
    return text[:1].lower() + text[1:]


#: Nouns of a group that "they" and "their" can stand for though they are singular ("my
#: family's been great - their love ...").
COLLECTIVE = frozenset(("family fam team group band class crew staff company club couple community gang "
                        "committee audience crowd squad household church school department").split())
_THEM = ("nsubj", "nsubjpass", "dobj", "pobj", "attr", "conj", "appos")


def _hosts(noun, tok) -> bool:
    """Whether ``tok`` sits in a prepositional phrase of ``noun`` ("photos *of their pets*")."""
    while tok.head.i != tok.i and tok.head.i != noun.i:
        tok = tok.head
    return tok.head.i == noun.i and tok.dep_ == "prep"


def their_antecedent(owner):
    """What a possessive "their" stands for in its own text: the nearest plural or group noun
    before it, in its sentence or the one before ("my kids love the park; their favourite is
    the slide"), as a subject or object; None when there is none, or when it is one already
    known ("the kids", "these friends": the write then looks in earlier turns for whose)."""
    sent = owner.sent
    start = sent.start
    if start > 0:
        start = owner.doc[start - 1].sent.start
    for tok in reversed(owner.doc[start:owner.i]):
        if tok.pos_ != "NOUN" or tok.dep_ not in _THEM or is_when(tok) \
                or any(c.dep_ == "nummod" for c in tok.children) or _hosts(tok, owner):
            continue  # "for 4 years", "two weeks": a time or an amount, not whose; "photos of their pets": not the photos
        theirs = next((c for c in tok.children if c.dep_ == "poss" and c.lower_ == "their"), None)
        if theirs is not None:  # "get their hands dirty ... their creativity": the same owner
            return their_antecedent(theirs)
        if tok.tag_ == "NNS" or tok.lemma_.lower() in COLLECTIVE:
            known = any(c.dep_ == "det" and c.lower_ in ("the", "these", "those") for c in tok.children) \
                and not any(c.dep_ == "poss" for c in tok.children)
            return None if known else tok  # "the kids", "these friends": the write knows whose
    return None


def past_lemma(verb, verbs) -> str:
    """A past form's lemma, with the "e" the small model's rules drop where one consonant after
    one vowel ends the stem ("hated": hate, not hat; "rated", "hoped", "coded"; a short verb
    doubles it: "hopped": hop). ``verbs``: the base forms of English verbs."""
    low, lemma = verb.lower_, verb.lemma_.lower()
    if verb.tag_ in ("VBD", "VBN") and low.endswith("ed") and lemma == low[:-2] and len(lemma) >= 3 \
            and lemma[-1] not in "aeiouwxy" and lemma[-2] in "aeiou" and lemma[-3] not in "aeiou" \
            and lemma + "e" in verbs:
        return lemma + "e"
    return lemma
