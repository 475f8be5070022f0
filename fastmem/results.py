"""The types :class:`fastmem.Memory`'s verbs return: small dataclasses with the scores that explain
them (recall's hits, analogy and standing statements; rows; graph entities and facts;
categories; the reports of consolidation and of the integrity check)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["Hit", "Analogy", "Recall", "Record", "Standing", "Entity", "Fact", "Category", "ConsolidationReport", "DeriveFailure",
           "CheckReport", "Problem", "Triple"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled memory.

    Attributes
    ----------
    id : int
        Memory id (as returned by ``remember``).
    text : str
        The memory's full text.
    score : float
        Fused score (higher is better); comparable within one recall only.
    why : dict
        Per-channel evidence: ``{"keyword": {"rank", "score"}, "vector": {"rank", "score"},
        "graph": {"rank", "score", "entities"}, "context": {"rank", "score"}, "speaker":
        {"rank", "score"}, "use": {"weight", "engaged", "ignored"}}``;
        a channel that did not find the memory is absent. A chunk that stands for members
        also found by this recall has ``"chunk": {"members", "suppressed", "own_score"}``
        (the suppressed member ids; ``Memory.expand`` gives every member).
    scope : str
        The memory's scope.
    at : datetime or None
        When it happened (``remember(..., at=...)``; aware, UTC), None when not given.
    speaker : str or None
        Who said or wrote it (``remember(..., speaker=...)``), None when not given.
    source : str or None
        Where it came from (``remember(..., source=...)``: a conversation, a file), None
        when not given.
    """

    id: int
    text: str
    score: float
    why: dict[str, Any]
    scope: str = ""
    at: datetime | None = None
    speaker: str | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Analogy(Hit):
    """The analogy slot: a memory with the turn's structure in different words.

    Same fields as :class:`Hit`; ``score`` is the selection score (exact alignment times use
    weight; from :meth:`fastmem.Memory.analogy.explore` it is the z). ``why`` holds ``z`` (the
    alignment in store standard deviations above the store's mean score for the turn),
    ``structural`` (the code's score against the turn), ``store_mean``/``store_std``,
    ``alignment`` (IDF-weighted sum of the structural terms shared with the turn),
    ``surface`` (embedding cosine to the turn), ``surface_rank`` (its rank among the turn's
    surface neighbours, None when beyond them), ``use`` (its use weight) and ``matched``
    (the heaviest shared terms: ``"evaporate"``, ``"heat then evaporate"``,
    ``"person -own->"``, ``"-absorb-> oxygen"``).

    From :meth:`fastmem.Memory.recall` ``why`` also holds ``reason`` (one line: the
    corresponding events in order, the information, the entities and objects that correspond),
    ``links`` (the higher-order relations both stories share between corresponding events,
    ``"cause: stay->grow = keep->grow"``), ``objects`` (the fillers of corresponding roles and
    how alike they are, ``"army~beam 0.21"``: an analogy's objects differ), ``object_likeness``
    (their mean) and ``clothes`` (how alike the two stories' nouns are, whatever their roles;
    the slot offers nothing over ``surface_objects``).
    """


@dataclass(frozen=True, slots=True)
class Recall:
    """What ``recall`` returns: ranked ``hits`` and at most one ``analogy`` (or None).

    ``grounding`` is filled when the recall asked for the evidence floor (``floor=True``,
    :mod:`fastmem.recall.evidence`): ``{"grounded", "by", "words", "vector_z", "chance_z"}``; when
    ``grounded`` is False the hits are empty. ``standing`` holds the standing instructions
    and preferences whose topic matches the turn (:mod:`fastmem.reader.standing`)."""

    query: str
    hits: tuple[Hit, ...]
    analogy: Analogy | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    grounding: dict[str, Any] = field(default_factory=dict)
    #: the standing instructions and preferences that apply to the turn, best first
    #: (:class:`Standing`; empty when none matches or none was asked for)
    standing: tuple = ()
    #: why the analogy slot spoke or stayed silent, in words: the analogy's reason, or the first
    #: condition the best candidate failed ("no memory shares enough of the turn's events...",
    #: "the closest structure (memory 12) is one chance would match: ...")
    analogy_reason: str = ""

    def __iter__(self):
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)


@dataclass(frozen=True, slots=True)
class Record:
    """A stored memory as it is (what :meth:`fastmem.Memory.expand` returns).

    ``at`` is when it happened (UTC) or None; ``speaker`` who said it or None;
    ``created``/``updated`` are unix seconds.
    """

    id: int
    text: str
    scope: str
    source: str | None
    created: float
    updated: float
    meta: dict[str, Any]
    at: datetime | None = None
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class Standing:
    """A standing statement a recall found for its turn (``Recall.standing``).

    ``id``: the memory that holds it; ``text``: that memory's text; ``sentence``: the
    statement itself; ``kind``, ``polarity`` as in :class:`Statement`; ``score``: the match
    (cosine plus topic bonus); ``at``: when it was said (UTC, or when written);
    ``supersedes``: ids of older statements on the same topic it replaced; ``reach``:
    ``"global"`` (it applies to every turn of its scope: a format, a length, a tone, a
    language, a persona, with no condition) or ``"topical"`` (turns on its topic), decided from
    what the statement says (:func:`fastmem.reader.standing.reach_of`)."""

    id: int
    text: str
    sentence: str
    kind: str
    polarity: int
    score: float
    at: float
    supersedes: tuple[int, ...] = field(default_factory=tuple)
    reach: str = "topical"


@dataclass(frozen=True)
class Problem:
    """One inconsistency: which ``part``, what is wrong, and whether ``repair`` fixes it."""

    part: str
    detail: str
    repairable: bool = True


@dataclass(frozen=True)
class DeriveFailure:
    """A part of a memory that could not be derived (:mod:`fastmem.write.guard`): the memory is
    stored without it. ``part``: ``"reading"`` (facts, events and standing statement),
    ``"facts"``, ``"structure"`` or ``"all"`` (nothing but the text and keyword row); ``error``
    and ``message``: the exception's; ``reader``: the fastmem and reader version that failed;
    ``at``: when (unix seconds)."""

    memory_id: int
    part: str
    error: str
    message: str
    reader: str
    at: float


@dataclass
class CheckReport:
    """``ok`` when nothing is wrong (after repairs, when asked for). ``failed`` lists the
    memories whose derivation failed (a state, like pending, not damage: ``ok`` does not count
    it)."""

    problems: list[Problem] = field(default_factory=list)
    repaired: list[Problem] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    failed: list[DeriveFailure] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class ConsolidationReport:
    """What one consolidation pass did.

    Attributes
    ----------
    created, updated, unchanged : tuple of int
        Chunk ids (each a memory id) made, changed, and left as they were.
    clusters : int
        Clusters found (each created, updated or unchanged).
    hubs : tuple of str
        Entities left out because they link too many memories.
    seconds : float
    """

    created: tuple[int, ...] = ()
    updated: tuple[int, ...] = ()
    unchanged: tuple[int, ...] = ()
    clusters: int = 0
    hubs: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class Category:
    """A proposed, approved or rejected category.

    Attributes
    ----------
    id : int
    name : str
    members : tuple of str
        Display names of the member entities.
    relations : tuple of str
        The roles they share: ``"-drive->"`` (subject of drive), ``"<-drive-"`` (object of drive).
    status : {"proposed", "approved", "rejected"}
    member_ids : tuple of int
        Graph node ids of the members.
    """

    id: int
    name: str
    members: tuple[str, ...]
    relations: tuple[str, ...]
    status: str
    member_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Entity:
    """A graph node: canonical key, display name, type and known aliases."""

    id: int
    key: str
    name: str
    type: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Fact:
    """One stored edge: names are the nodes' display names, ``relation`` canonical;
    ``memory_id`` is None for the ``instance_of`` link of an approved category."""

    memory_id: int | None
    subject: str
    relation: str
    object: str
    relation_raw: str
    subject_id: int
    object_id: int
    position: int
    #: the subject and object as the text wrote them ("I" for the speaker, "my sister" for
    #: "Caroline's sister": :mod:`fastmem.reader.who`); None where they are the names above
    subject_raw: str | None = None
    object_raw: str | None = None
    #: "asserted", "planned", "intended" (meant, told in the past: "I wanted to blend ...") or
    #: "negated" (:mod:`fastmem.reader.mood`)
    mood: str = "asserted"
    #: the rest of the clause the fact was read from, as the text says it: what completes the
    #: triple ("to the museum" of (Melanie, take, kids), "for dance" of (Jon, follow, passion));
    #: "" where the triple says it all (and for facts stored before 0.2.0 kept it)
    detail: str = ""

    @property
    def mood_shown(self) -> str:
        """The mood as a display adds it after the relation: "" for an asserted fact and for a
        negated one whose relation already says so ("not_quit_on": "(negated)" beside it reads
        as a double negation), else the mood."""
        return shown_mood(self.relation, self.mood)


def shown_mood(relation: str, mood: str) -> str:
    """:attr:`Fact.mood_shown` for a relation and a mood (a fact as a dict: the CLI's JSON)."""
    if mood == "asserted" or mood == "negated" and relation.startswith(("not_", "not ")):
        return ""
    return mood


@dataclass(frozen=True, slots=True)
class Triple:
    """One fact as a text states it (what ``remember(triples=...)`` takes and the extractors
    return). ``relation`` is the lemmatised phrase (canonicalised when stored); types are
    ``None`` when unknown."""

    subject: str
    relation: str
    object: str
    subject_type: str | None = None
    object_type: str | None = None
    #: the subject and object as the text wrote them, where the reader resolved them ("I" for
    #: the speaker, :mod:`fastmem.reader.who`); None: as above
    subject_raw: str | None = None
    object_raw: str | None = None
    #: what the text says of it: "asserted", "planned" ("I'll book the tapas place"),
    #: "intended" ("I wanted to blend ...") or "negated" ("I don't drink coffee");
    #: :mod:`fastmem.reader.mood`
    mood: str = "asserted"
    #: what completes the triple, as the text says it (:attr:`Fact.detail`): "to the museum"
    #: of "I took the kids to the museum" -> (I, take, kids); "" for none
    detail: str = ""
