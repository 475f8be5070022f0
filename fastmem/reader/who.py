"""Who: the people and things a fact's pronouns stand for, resolved at write time.

A fact read from a turn of conversation says "I researched adoption agencies"; the graph needs
``(Caroline, research, adoption agency)``. The parse alone cannot know who "I" is, but the
write does: the turn's speaker (given, or a "Name: " prefix) and the other party of its
source. So the facts a text yields are resolved in two steps:

1. In the text (:class:`fastmem.reader.extract.SpacyExtractor`): a third-person pronoun takes
   the nearest compatible mention before it in the same text (a person for *he*, *she*; a
   thing for *it*; a plural for *they*), and "my sister" keeps its possessive.
2. At the commit (:func:`resolve`), with what the store knows of the turn: *I, me, my,
   myself* are the speaker; *you, your* the addressee (the other speaker of the source, or
   the assistant for a user's turn, the user for an assistant's); *we, us, our* the speaker
   (one of the group); a third-person pronoun still open the most recent compatible name of
   the same source's earlier turns; "my sister" becomes "Caroline's sister" (and "with your
   family" in a fact's detail "with Melanie's family").

A fact whose end is a question word, an indefinite or a placeholder (*what, something, one,
lot, that*), or a pronoun nothing resolves, is not stored: such a node would link every fact
that happens to share the word. The words as written stay with the fact (``Fact.subject_raw``,
``Fact.object_raw``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..results import Triple
from ..util.text import STOPWORDS, prefix_speaker
from .words import BARE_KIN, PERSON_NOUNS, PET_NOUNS, PRONOUN_SEX, noun_sex

__all__ = ["FIRST", "SECOND", "GROUP", "THIRD", "POSSESSIVE", "NEVER", "Turn", "resolve", "resolve_facts",
           "resolve_fixed", "is_pronoun", "never_a_node", "ASSISTANTS", "DEFAULT_SPEAKER"]

FIRST = frozenset({"i", "me", "my", "mine", "myself"})
SECOND = frozenset({"you", "your", "yours", "yourself", "yourselves", "ya", "u"})
GROUP = frozenset({"we", "us", "our", "ours", "ourselves"})
#: Third-person pronouns by what they can stand for.
HE_SHE = frozenset({"he", "him", "his", "himself", "she", "her", "hers", "herself"})
IT = frozenset({"it", "its", "itself"})
THEY = frozenset({"they", "them", "their", "theirs", "themselves"})
THIRD = HE_SHE | IT | THEY
#: Possessive determiners: "my sister" is the speaker's sister.
POSSESSIVE = frozenset({"my", "your", "our", "his", "her", "its", "their"})
#: Never a node: question words, indefinites, demonstratives, placeholders and quantifiers.
NEVER = frozenset("""what who whom which whose where when why how whatever whoever whichever wherever
something anything everything nothing someone anyone everyone somebody anybody everybody nobody none
this that these those here there one ones thing things lot lots way ways stuff kind sort bit bunch
all both each either neither other others another some any many much more most few several such same
yes no ok okay hey hi hello thanks""".split())
#: Speakers who are the assistant side of a conversation (compared case-insensitively).
ASSISTANTS = frozenset({"assistant", "ai", "bot", "model", "system", "agent"})
#: Who "I" is when a memory names no speaker: the store's user.
DEFAULT_SPEAKER = "user"
#: The turns of a source around a memory that say who the other party is and which names came
#: before it (a pronoun's name is looked for this far back).
SOURCE_WINDOW = 8
#: An "it" left open in its own text stands for a thing named in the last this many turns of its
#: source (the exchange it answers), never further back: people stay in a talk, things pass ("I
#: took a trip to Rome" ... four turns on, "It's downtown" is the studio's spot, not Rome).
IT_WINDOW = 2
_WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)
_EDGES = " \t\n\"'`“”‘’.,;:!?()[]{}<>*-–—"


def is_pronoun(word: str) -> bool:
    w = word.strip().lower()
    return w in FIRST or w in SECOND or w in GROUP or w in THIRD


def never_a_node(name: str) -> bool:
    """A question word, an indefinite, a placeholder, a word of grammar ("for", "the"), or no
    word at all ("-", "2")."""
    w = name.strip(_EDGES).lower()
    if w.startswith(("the ", "a ", "an ")):
        w = w.split(" ", 1)[1]
    return w in NEVER or w in STOPWORDS or not _WORD.search(w)


#: "my dad", "your sister's", "our kids": a person named by a tie in a turn's words, whatever
#: the turn's facts (a question names people too: "how's your dad doing?").
_TIE = re.compile(r"\b(my|your|our)\s+((?:[a-z]+[ -])?)([a-z]+(?:-in-law)?)\b", re.IGNORECASE)


#: Kin named without "my" (:data:`fastmem.reader.words.BARE_KIN`), not after a determiner.
_BARE = re.compile(r"(?:\b([\w']+)\s+)?\b(" + "|".join(sorted(BARE_KIN)) + r")\b", re.IGNORECASE)
_DETERMINERS = frozenset("a an the my your our his her their its ur this that".split())


def _noun_gender(name: str) -> str | None:
    return noun_sex(name.split()[-1].strip(_EDGES)) if name.split() else None


@dataclass(frozen=True)
class Turn:
    """What the store knows of one memory's turn: who said it, to whom, the names its source
    mentioned before it (most recent last: ``(name, type, plural)``) and every speaker of the
    source so far (people, whatever a parse typed them as)."""

    speaker: str
    addressee: str | None
    names: tuple[tuple[str, str | None, bool], ...] = ()
    speakers: frozenset[str] = frozenset()
    #: the names an "it" can stand for (those of the last :data:`IT_WINDOW` turns); None: ``names``
    it_names: tuple[tuple[str, str | None, bool], ...] | None = None


def _possessor(word: str, turn: Turn) -> str | None:
    w = word.lower()
    if w == "my" or w == "our":
        return turn.speaker
    if w == "your":
        return turn.addressee
    if w in ("his", "her"):
        return _named(turn, person=True, gender=PRONOUN_SEX[w])
    if w == "their":
        return _named(turn, plural=True)
    return None


def _named(turn: Turn, *, person: bool = False, plural: bool = False, names=None,
           gender: str | None = None) -> str | None:
    """The most recent earlier name of the source that a pronoun can stand for: a person other
    than the two parties for *he* or *she* (not one the source has shown to be of the other
    sex: "my dad", "Ana, my sister"), a plural for *they*, anything else for *it* (among
    ``names``, default the turn's)."""
    skip = {turn.speaker.lower(), (turn.addressee or "").lower()}
    people = {s.lower() for s in turn.speakers}
    known = {m[0].lower(): m[3] for m in turn.names if len(m) > 3 and m[3]}
    for name, typ, many, *_ in reversed(turn.names if names is None else names):
        low = name.lower()
        if low in skip:
            continue
        if person and (typ in ("person", "animal") or low in people) and not many:
            if gender is not None and known.get(low, gender) != gender:
                continue  # "does dad know? ... I'm going to tell him": not Jess
            return name
        if plural and many:
            return name
        if not person and not plural and low not in people and typ in _THINGS and not many:
            return name
    return None


def _end(name: str, typ: str | None, turn: Turn) -> tuple[str, str | None] | None:
    """One end of a fact, resolved: ``(name, type)``, or None when it must not be stored."""
    words = name.split()
    if not words:
        return None
    low = name.strip().lower()
    if low in FIRST or low in GROUP:
        return turn.speaker, "person"
    if low in BARE_KIN:  # "mum said she'd bring jollof": the speaker's mum, not everyone's "Mum"
        return f"{turn.speaker}{_genitive(turn.speaker)} {low}", "person"
    if low in SECOND:
        return (turn.addressee, "person") if turn.addressee else None
    if low in HE_SHE:
        got = _named(turn, person=True, gender=PRONOUN_SEX[low])
        return (got, "person") if got else None
    if low in IT:
        got = _named(turn, names=turn.it_names)
        return (got, typ if typ not in (None, "person") else "thing") if got else None
    if low in THEY:
        got = _named(turn, plural=True)
        return (got, "group") if got else None
    head = words[0].lower()
    if head in POSSESSIVE and len(words) > 1:
        owner = _possessor(head, turn)
        rest = _inner(" ".join(words[1:]), turn)
        if never_a_node(rest):
            return None
        return (f"{owner}{_genitive(owner)} {rest}" if owner else rest), typ
    if never_a_node(name):
        return None
    return _inner(name.strip(_EDGES), turn), typ


_OF_POSSESSIVE = re.compile(r"\b(of) (my|our|your|his|her|their) (?=\w)", re.IGNORECASE)


def _inner(name: str, turn: Turn) -> str:
    """A possessive after "of" inside a name resolved as one at its start is ("a reminder of
    my roots": of Caroline's roots); left as written where it names nobody known."""
    def owned(m):
        owner = _possessor(m.group(2), turn)
        return f"{m.group(1)} {owner}{_genitive(owner)} " if owner else m.group(0)
    return _OF_POSSESSIVE.sub(owned, name)


#: The words of the two parties in a fact's detail ("with your family", "in my class").
_PARTIES = re.compile(r"\b(my|your|our|me|myself|us|you|yourself)\b", re.IGNORECASE)


def _said(detail: str, turn: Turn) -> str:
    """A fact's detail (:attr:`fastmem.results.Fact.detail`) with the speaker's and the
    addressee's words named ("with your family" to Melanie: with Melanie's family); a word
    for nobody known stays as written."""
    def named(m):
        w = m.group(1).lower()
        who = turn.addressee if w in SECOND else turn.speaker
        if not who:
            return m.group(0)
        return f"{who}{_genitive(who)}" if w in POSSESSIVE else who
    return _PARTIES.sub(named, detail) if detail else detail


def _genitive(owner: str) -> str:
    return "'" if owner.endswith("s") and "'" in owner else "'s"  # "Caroline's friends' love"


def resolve(triples: Sequence[Triple], turn: Turn) -> list[Triple]:
    """A memory's facts with their pronouns resolved for ``turn`` (see the module docstring);
    facts that cannot be resolved, that link something to itself or repeat one before are
    left out. The words as written stay in ``subject_raw`` / ``object_raw``."""
    out, seen = [], set()
    for t in triples:
        s = _end(t.subject, t.subject_type, turn)
        o = _end(t.object, t.object_type, turn)
        if s is None or o is None or s[0].lower() == o[0].lower() or not t.relation.strip():
            continue
        key = (s[0].lower(), t.relation, o[0].lower())
        if key in seen:
            continue
        seen.add(key)
        out.append(Triple(s[0], t.relation, o[0], s[1], o[1], t.subject_raw or t.subject, t.object_raw or t.object,
                          t.mood, _said(t.detail, turn)))
    return out


def _turn_word(name: str) -> bool:
    """Whether :func:`_end` reads the turn for ``name``: a pronoun, or a possessive before a noun."""
    words = name.split()
    return bool(words) and (is_pronoun(name) or (len(words) > 1 and words[0].lower() in POSSESSIVE))


def _needs_turn(t: Triple) -> bool:
    return _turn_word(t.subject) or _turn_word(t.object) or bool(t.detail and _PARTIES.search(t.detail))


#: A turn for facts that read none (:func:`_needs_turn` false for all of them).
_ANY_TURN = Turn("", None)


def resolve_fixed(facts: Sequence[list[Triple] | None]) -> list[list[Triple]] | None:
    """:func:`resolve_facts` for a batch none of whose facts reads its turn (no end is a
    pronoun or begins with a possessive: an import's facts, resolved when first written):
    the same result for any turn, made without the store. None when one does read it."""
    if any(_needs_turn(t) for ts in facts for t in ts or ()):
        return None
    return [resolve(ts or [], _ANY_TURN) for ts in facts]


def _speaker_of(speaker: str | None, text: str) -> str | None:
    return speaker if speaker else prefix_speaker(text)


def _addressee(speaker: str, others: list[str]) -> str | None:
    """The other party: the nearest other speaker before this turn in its source; else the
    assistant for the user's turn and the user for the assistant's; else (a named speaker
    who opens a source) nobody yet, and *you* stays open."""
    for o in others:
        if o.lower() != speaker.lower():
            return o
    if speaker.lower() in ASSISTANTS:
        return DEFAULT_SPEAKER
    return "assistant" if speaker == DEFAULT_SPEAKER else None


def resolve_facts(db, ids: Sequence[int], facts: Sequence[list[Triple]], write=None) -> list[list[Triple]]:
    """:func:`resolve` for memories whose rows are written (inside the caller's transaction):
    each one's speaker, the other speaker of its source and the names its source mentioned
    before it come from the store. Only what was said before a memory counts (its source's
    last :data:`SOURCE_WINDOW` memories), whether those were written in this batch or an
    earlier one: a store reads the same however its writes were batched, one turn at a time
    included. ``write(ids, facts)`` stores resolved facts before the next memory is
    resolved; what the next one sees of them is then read back from the store, as a later batch
    would read it (canonical names, as written); without ``write`` it is carried in memory.

    A batch none of whose facts has an end that depends on its turn (a pronoun or a possessive
    head: an import's facts, resolved when first written) reads nothing of the store: its facts
    resolve the same for any turn, and ``write`` gets them all at once."""
    ids = [int(i) for i in ids]
    if not any(facts):
        return [list(f or []) for f in facts]
    got = resolve_fixed(facts)
    if got is not None:
        if write is not None:
            order = sorted(range(len(ids)), key=ids.__getitem__)  # new nodes made in the memories' order
            write([ids[i] for i in order], [got[i] for i in order])
        return got
    rows = {mid: (text, speaker, source) for mid, text, speaker, source in db.execute(
        "SELECT id, text, speaker, source FROM memories WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(ids),))}
    sources = {r[2] for r in rows.values() if r[2] is not None}
    history = _history(db, sources, min(ids))  # source -> [(id, speaker, names)], oldest first
    out = []
    for mid, triples in sorted(zip(ids, facts), key=lambda x: x[0]):
        text, given, source = rows.get(mid, ("", None, None))
        speaker = _speaker_of(given, text) or DEFAULT_SPEAKER
        before = [h for h in history.get(source, ()) if h[0] < mid][-SOURCE_WINDOW:] if source is not None else []
        said = [sp for _, sp, _ in reversed(before) if sp]  # nearest first
        turn = Turn(speaker, _addressee(speaker, said), tuple(n for _, _, names in before for n in names),
                    frozenset(said) | {speaker}, tuple(n for _, _, names in before[-IT_WINDOW:] for n in names))
        got = resolve(triples or [], turn)
        if write is not None:
            write([mid], [got])
        if source is not None:  # what this memory says, for the next ones of its source
            said_now = _stored_mentions(db, [mid])[mid] if write is not None else _mentions(got)
            said_now = _said_in(text, speaker, turn.addressee, said_now)
            history.setdefault(source, []).append((mid, _speaker_of(given, text), said_now))
        out.append((mid, got))
    order = {mid: i for i, mid in enumerate(ids)}
    return [got for _, got in sorted(out, key=lambda x: order[x[0]])]


#: Types of the names *it* can stand for.
_THINGS = ("organisation", "place", "event", "thing")
#: Types of named mentions a later pronoun can stand for.
_NAMED = ("person", "organisation", "place", "group", "event", None)


def _titled(name: str) -> bool:
    """A thing named in title case, two words or more ("Becoming Nicole", "Charlotte's Web"): a
    work, a product or a title, which a later "it" can stand for."""
    words = name.split()
    return len(words) >= 2 and all(w[:1].isupper() for w in words)


def _mentions(triples: Sequence[Triple]) -> list[tuple[str, str | None, bool, str | None]]:
    """The named ends of facts, in order: ``(name, type, plural, sex)``, the sex ("m", "f") of
    a person when a tie or a pronoun shows it ("Luis's dad"; "Ana" of (Ana, be, Tom's sister);
    whom a "he" was read as), else None."""
    out = []
    for t in triples:
        tie = t.relation == "be" and t.subject_type == "person" and t.object_type == "person"
        role = _noun_gender(t.object) if tie else None
        pet = t.relation == "be" and t.object.split()[-1].lower() in PET_NOUNS  # (Pirozhok, be, cat): a she
        ends = [(t.subject, "animal" if pet else t.subject_type, t.subject_raw, role)]
        if not tie:  # (Keiko, be, Hiroshi's wife): one person, named by the name
            ends.append((t.object, t.object_type, t.object_raw, None))
        for name, typ, raw, sex in ends:
            if (typ in _NAMED or typ == "animal" or typ == "thing" and _titled(name)) and name[:1].isupper() \
                    and not is_pronoun(raw or name):
                said = PRONOUN_SEX.get((raw or "").strip().lower())  # "he said cats are ok": a he
                out.append((name, typ, typ == "group" or name.endswith("s'") or _plural_phrase(name),
                            sex or said or (_noun_gender(name) if typ == "person" else None)))
    return out


def _ties(text: str, speaker: str | None, addressee: str | None) -> list[tuple[str, str | None, bool, str | None]]:
    """The people a turn names by a tie to its speaker or the one spoken to ("how's your dad
    doing?" to Luis: Luis's dad), in order, whether or not the turn states a fact of them."""
    out = [(f"{speaker}{_genitive(speaker)} {m.group(2).lower()}", "person", False, _noun_gender(m.group(2)))
           for m in _BARE.finditer(text or "") if speaker and (m.group(1) or "").lower() not in _DETERMINERS]
    for m in _TIE.finditer(text or ""):
        owner = speaker if m.group(1).lower() in ("my", "our") else addressee
        for words in ((m.group(2) + m.group(3)).strip(), m.group(2).strip()):
            noun = words.split()[-1].lower() if words else ""
            single = noun[:-1] if noun.endswith("s") and noun[:-1] in PERSON_NOUNS else noun
            if owner and single in PERSON_NOUNS:
                out.append((f"{owner}{_genitive(owner)} {words}", "person", single != noun, _noun_gender(single)))
                break
    return out


def _said_in(text: str, speaker: str | None, addressee: str | None, facts: list) -> list:
    """What a turn names, for the turns after it: the people its words tie to a party, then
    the named ends of its facts (the later, the nearer)."""
    have = {m[0].lower() for m in facts}
    return [m for m in _ties(text, speaker, addressee) if m[0].lower() not in have] + list(facts)


def _plural_phrase(name: str) -> bool:
    last = name.split()[-1].lower()
    return last.endswith("s") and not last.endswith("ss") and "'" in name  # "Melanie's kids"


def _stored_mentions(db, ids: Sequence[int]) -> dict[int, list]:
    """The named ends of the stored facts of ``ids`` (:func:`_mentions`), in the order written."""
    names: dict[int, list] = {int(mid): [] for mid in ids}
    for mid, sn, st, on, ot, rel, sr, orw in db.execute(
            "SELECT e.memory_id, s.name, s.type, o.name, o.type, e.rel, e.subj_raw, e.obj_raw FROM edges e "
            "JOIN nodes s ON s.id=e.subj JOIN nodes o ON o.id=e.obj WHERE e.memory_id IN "
            "(SELECT value FROM json_each(?)) ORDER BY e.memory_id, e.pos", (json.dumps(list(names)),)):
        names[mid].extend(_mentions([Triple(sn, rel, on, None if st == "?" else st, None if ot == "?" else ot, sr, orw)]))
    return names


def _history(db, sources, before: int) -> dict[str, list[tuple[int, str | None, list]]]:
    """Per source, its last :data:`SOURCE_WINDOW` memories before ``before``, oldest first:
    ``(id, speaker, named ends of its facts in the order they were said)``."""
    out: dict[str, list] = {}
    for src in sources:
        # twice the window: each kept turn's party is read from the same turns before it as
        # when it was written (a store reads the same however its writes were batched)
        turns = db.execute("SELECT id, text, speaker FROM memories WHERE source=? AND id<? "
                           "ORDER BY id DESC LIMIT ?", (src, before, 2 * SOURCE_WINDOW)).fetchall()[::-1]
        names = _stored_mentions(db, [mid for mid, _, _ in turns[-SOURCE_WINDOW:]])
        said = [_speaker_of(given, text) for _, text, given in turns]
        out[src] = []
        for j, (mid, text, given) in enumerate(turns):
            if j < len(turns) - SOURCE_WINDOW:
                continue
            speaker = said[j] or DEFAULT_SPEAKER
            to = _addressee(speaker, [sp for sp in reversed(said[max(0, j - SOURCE_WINDOW):j]) if sp])
            out[src].append((mid, said[j], _said_in(text, speaker, to, names[mid])))
    return out
