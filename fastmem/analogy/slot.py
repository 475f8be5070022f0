"""The analogy slot: at most one memory with the turn's structure in other clothes, or silence.

Two stages (MAC/FAC: many are called, few are chosen), then a calibrated gate:

1. **Candidates** (:meth:`AnalogySlot.candidates`): the memories that share structural terms
   with the turn, heaviest alignment first, from the term index
   (:mod:`fastmem.analogy.postings`: the cost follows the turn's terms' postings, not the store's
   size). Skeleton verbs ("have", "let", "know", see :mod:`fastmem.reader.lexicon`) weigh nothing.
2. **Structure mapping** (:mod:`fastmem.analogy.mapping`) of the first ``rerank`` candidates that
   pass the surface condition: a one-to-one, order-preserving correspondence of their content
   events, scored in bits of information (how rare each corresponding relation is among the
   store's events) plus systematicity (fillers that correspond consistently).
3. **The gate**: the slot picks the best of N memories, so a match must beat what the best of
   N would reach by chance. The mapping's *surprise* (its bits less the bits of choosing which
   events correspond) gives the E-value ``N * 2 ** -surprise``, the expected number of
   memories of the store (or the scope) that would map at least this well by chance; the slot
   fires only when it is at most ``alpha``. A bigger store needs more evidence.

The **surface condition** keeps what is only the same story in the same or other words out:
a candidate whose embedding cosine to the turn stands ``surface_z`` standard deviations or
more above the turn's mean cosine over the store (the top of the turn's own surface
neighbourhood: a paraphrase, a retelling), one at cosine ``surface_max`` or more (a copy of
the turn: short chat turns spread so widely that a copy can stand only 3-4 standard
deviations up), one that names what the turn names (``surface_names``), one whose corresponding
roles are mostly filled by the same nouns (``literal_max``: literal similarity, not analogy),
and one whose objects are as alike as a retelling's (``surface_objects``: an analogy maps
different objects). The default ``surface_rule="neighbourhood"`` also excludes the turn's own
surface neighbourhood: its nearest :data:`HOOD_MIN` memories by embedding that stand
:data:`HOOD_Z` standard deviations above the store's cosines for the turn (what recall already
shows: a retelling, the same things in another plot), and any memory that tells one of them
again (cosine :data:`RETOLD` or more to it: the same events in another order). ``"band"``
excludes nothing more (the rule before 0.2: processes of one field are often each other's
nearest memories and their near analogies); ``"recall"`` what ordinary recall already ranks
first; ``"neighbours"`` the turn's nearest surface neighbours above ``surface_floor``.

Among the candidates that pass, the analogy is the most surprising mapping times its use
weight; when more than one passes, the surprise of each counts with the plot view's evidence
for it, in bits (:meth:`AnalogySlot.plot_evidence`: the same events told in another order, a
process's broken-order distractor, stand lower there). ``Analogy.why["reason"]`` says in one
line which events and entities correspond, with the bits and the p-value.

:meth:`AnalogySlot.explore` is ``Memory.analogy.explore``: the structurally closest memories
without the surface condition, the gate or the session rules.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import apsw
import numpy as np

from ..derived.vectors import ids_json
from ..errors import InvalidInput
from ..reader.extract import parse_turn
from ..results import Analogy
from ..util.bounded import Bounded
from . import plots as P
from .code_store import StructureIndex
from .codes import StructQuery
from .mapping import Mapper, Mapping
from .ranker import features, resolve_ranker

__all__ = ["AnalogySlot", "AnalogySettings", "SlotSettings", "Turn", "SURFACE_RULES", "reason"]

#: Sessions whose repeat window a process keeps.
SESSIONS = 10_000
#: Values of ``Memory(surface_rule=...)``.
SURFACE_RULES = ("band", "recall", "neighbours", "neighbourhood")
#: The ``"neighbourhood"`` rule: the turn's nearest surface neighbours it looks at (at most
#: ``surface_exclude``; more would cost near analogies: ``docs/defaults.md``) ...
HOOD_MIN = 3
#: ... and how far above the store's mean cosine for the turn (in its standard deviations) a
#: neighbour stands to be the turn's own neighbourhood rather than a chance nearest.
HOOD_Z = 2.0
#: Below this many memories in the store (or scope) the ``"neighbourhood"`` rule excludes none of
#: the structure mapping's candidates by rank (the plot view's: the nearest one): the few
#: nearest are a good part of a store this small, and recall shows them anyway.
HOOD_STORE = 10 * HOOD_MIN
#: Stored vectors sampled to estimate the spread of a turn's cosines over the store (all of a
#: store this small or smaller; 6 MB; why not fewer: ``docs/defaults.md``).
SURFACE_SAMPLE = 4096
#: A candidate at this embedding cosine or more to one of the turn's surface neighbours that the
#: surface condition excludes tells that neighbour's story again (the same events in another
#: order or other words) and is excluded with it (a process told twice: median 0.94; a story and
#: its analogy: at most 0.5; ``docs/defaults.md``).
RETOLD = 0.85
#: The plot view speaks from ``plot_mapped_margin`` instead of ``plot_margin`` when the structure
#: mapping also pairs this many of the plot's events with the turn's, one to one.
PLOT_MAPPED_EVENTS = 2


def _mentions(names: Sequence[str]):
    """A pattern that finds any of ``names`` as a whole word (as written), or None."""
    names = sorted({n for n in names if n}, key=len, reverse=True)
    if not names:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, names)) + r")(?!\w)")


@dataclass
class Turn:
    """A turn prepared for the slot: its structural query, the names and events it has."""

    query: StructQuery | None
    names: tuple[str, ...]
    events: tuple = ()
    parse_ms: float = 0.0
    prep_ms: float = 0.0
    #: the turn's plot (:class:`fastmem.analogy.plots.Plot`), or None
    plot: object = None


@dataclass
class _Candidate:
    """One stage-2 candidate: its row and what the slot learned of it."""

    id: int
    text: str
    scope: str
    events: list
    code: bytes
    nterms: int
    surface: float
    surface_z: float
    surface_rank: int | None
    recall_rank: int | None
    #: its embedding (for the neighbourhood's retellings, :meth:`AnalogySlot._retold`)
    vec: np.ndarray | None = None


def reason(mp: Mapping, p: float) -> str:
    """The one-line ``why["reason"]`` of an analogy: its corresponding events, entities,
    information and p-value."""
    events = " then ".join(mp.labels)
    ents = "; ".join(mp.fillers[:3])
    return (f"same structure: {events} ({len(mp.pairs)} corresponding event{'s' * (len(mp.pairs) != 1)} in order, "
            f"{mp.score:.1f} bits, p={p:.2g})" + (f"; {ents}" if ents else "")
            + (f"; {'; '.join(mp.links[:2])}" if mp.links else ""))


@dataclass
class AnalogySettings:
    """The analogy slot's settings in one value: ``Memory(path, analogy=AnalogySettings(...))``,
    and live as ``mem.analogy.settings`` (``mem.analogy.settings.surface_rule = "recall"``).
    Every assignment is checked (:class:`InvalidInput` names a bad value and changes nothing).
    Measured effects of the defaults: ``docs/defaults.md``.

    Parameters
    ----------
    analogy_alpha : float
        The gate: a memory is shown only when the expected number of memories of the store
        (or the scope) that would map onto the turn at least as well *by chance* (the E-value
        of its structure mapping, see :mod:`fastmem.analogy`) is at most this. Lower it for
        fewer, surer analogies; a bigger store needs more evidence by itself.
    z_min : float
        Stage 1's floor: a candidate's exact structural alignment with the turn, on the
        store's score scale, at least this many standard deviations above the store's mean
        score for the turn (a cheap filter before the structure mapping; not the gate).
    surface_z : float
        Surface condition: a memory whose embedding cosine to the turn is this many standard
        deviations or more above the turn's mean cosine over the store (estimated on a sample
        of the store's vectors) is the top of the turn's own surface neighbourhood (a
        paraphrase, a retelling), never the analogy.
    analogy_literal_max : float
        Surface condition: a mapping whose corresponding roles are filled by the same nouns in
        more than this share is literal similarity (the same things doing the same), not an
        analogy.
    surface_exclude, surface_fraction, surface_floor : int, float, float
        See ``surface_rule``.
    surface_max : float or None
        Surface condition: a memory at this embedding cosine to the turn or above is a copy of
        it, never its analogy. None: no ceiling.
    surface_rule : {"neighbourhood", "band", "recall", "neighbours"}
        What else "superficially different" excludes for the structure mapping's candidates
        (the plot view's always use ``"neighbourhood"``). ``"neighbourhood"`` (default): the
        turn's own surface neighbourhood, judged against the store: its nearest
        ``min(surface_exclude, 3)`` memories by embedding (none in a store or scope of fewer
        than 30, whose own checks of names, objects and roles judge it) that stand two
        standard deviations or more above the turn's mean cosine over the store (what ordinary
        recall already shows near the top: a retelling, the same things in another plot), and
        every memory at cosine 0.85 or more to one of those (the same story told again).
        ``"band"``: nothing beyond ``surface_z``, ``surface_names``, ``analogy_literal_max`` and
        ``surface_objects`` (the default before 0.2: it keeps near analogies of one field, which
        are often each other's nearest memories, and lets retellings through in a small store). ``"recall"``:
        the first ``min(surface_exclude, ceil(surface_fraction * N))`` results of ordinary recall.
        ``"neighbours"``: the turn's nearest surface neighbours, as many at cosine >= ``surface_floor``.
    surface_names : bool
        A memory that mentions one of the turn's names (people, organisations, places,
        products...; as the extractor reports them) is the same story in the same clothes,
        never the analogy: an analogy shares relations, not what they are about.
    analogy_repeat_window : int
        An analogy is not surfaced again within this many turns of the same session.
    analogy_rerank : int
        How many stage-1 candidates (heaviest structural alignment first) that pass the
        surface condition are compared by structure mapping.
    min_store : int
        The slot stays empty while fewer memories have structural codes.
    analogy_min_units : int
        The matched structure a fire needs besides its E-value (relation plus the roles both
        events fill, summed over corresponding events): 3 = one full subject-relation-object
        correspondence.
    surface_objects : float
        Surface condition: a memory whose objects (its common nouns, each matched to the
        turn's most alike by embedding, averaged both ways) are more alike than this is the
        same story in other words (a flat for an apartment, a physician for a doctor) or the
        same things in another plot, never the analogy: an analogy maps different objects.
    plot_margin : float
        The plot view (:mod:`fastmem.analogy.plots`, when the structure mapping finds no analogy):
        a plot is offered when its kernel score stands ``sqrt(2 ln N) + plot_margin`` standard
        deviations above the store's (N plots: the best of N by chance stands near
        ``sqrt(2 ln N)``). ``inf`` turns the plot view off.
    plot_mapped_margin : float
        The plot view's gate when a second view agrees: the plot is offered from
        ``sqrt(2 ln N) + plot_mapped_margin`` standard deviations when the structure mapping
        also pairs two or more of its events with the turn's, in order, in a mapping that chance
        would give less than once among the store's plots (its E-value at most 1). ``inf``: the
        plot view alone decides, at ``plot_margin``.
    ranker : bool or Ranker
        Opt in to the learned ranker (:mod:`fastmem.analogy.ranker`, fitted on ProPara-Logy
        silver): among the candidates that pass the gate the most probable analog is shown,
        and only when its probability reaches the ranker's threshold. ``True``: the shipped
        one; False: the hand-set rule.
    """

    analogy_alpha: float = 0.05
    z_min: float = 2.0
    surface_z: float = 6.0
    analogy_literal_max: float = 0.5
    surface_exclude: int = 10
    surface_fraction: float = 0.005
    surface_max: float | None = 0.9
    surface_floor: float = 0.5
    surface_rule: str = "neighbourhood"
    surface_names: bool = True
    analogy_repeat_window: int = 20
    analogy_rerank: int = 32
    min_store: int = 8
    analogy_min_units: int = 3
    surface_objects: float = 0.8
    ranker: object = False
    plot_margin: float = 3.0
    plot_mapped_margin: float = 1.0

    def __post_init__(self) -> None:
        self.checked()
        object.__setattr__(self, "_ready", True)

    def __setattr__(self, name: str, value) -> None:
        if name not in _SETTINGS:
            raise InvalidInput(f"no analogy setting {name!r}; the settings are {', '.join(_SETTINGS)}")
        if self.__dict__.get("_ready"):  # a change: checked on a copy first, so a bad one changes nothing
            value = getattr(replace(self, **{name: value}), name)
        object.__setattr__(self, name, value)

    def checked(self) -> AnalogySettings:
        """Itself, once every setting is valid (:class:`InvalidInput` names the first that is not)."""
        if self.surface_rule not in SURFACE_RULES:
            raise InvalidInput(f"surface_rule must be one of {SURFACE_RULES}, not {self.surface_rule!r}")
        if isinstance(self.analogy_rerank, bool) or not isinstance(self.analogy_rerank, int) or self.analogy_rerank < 1:
            raise InvalidInput(f"analogy_rerank must be a whole number of 1 or more, got {self.analogy_rerank!r}")
        for name, lo, hi in (("analogy_alpha", 0.0, math.inf), ("surface_z", 0.0, math.inf), ("plot_margin", 0.0, math.inf),
                             ("plot_mapped_margin", -math.inf, math.inf),
                             ("analogy_literal_max", 0.0, 1.0), ("z_min", -math.inf, math.inf),
                             ("surface_objects", 0.0, 1.0)):
            v = getattr(self, name)
            open_low = name == "analogy_alpha"
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (lo < v <= hi if open_low else lo <= v <= hi):
                raise InvalidInput(f"{name} must be a number in {'(' if open_low else '['}{lo}, {hi}], got {v!r}")
            object.__setattr__(self, name, float(v))
        object.__setattr__(self, "surface_names", bool(self.surface_names))
        resolve_ranker(self.ranker)  # raises InvalidInput for anything but True, False or a Ranker
        return self


#: The name of :class:`AnalogySettings` before fastmem 0.2 (kept for a release).
SlotSettings = AnalogySettings


_SETTINGS = tuple(f.name for f in fields(AnalogySettings))


class AnalogySlot:
    """The slot's settings and state (the repeat window per session); see the module
    docstring for the algorithm and :class:`fastmem.Memory` for each setting.

    ``sample_vectors()`` returns a sample of the store's embeddings, (n, dim) float32
    (for the surface band); ``verb_vectors`` embeds verbs for graded relation similarity.
    """

    #: At most this many stage-1 candidates (heaviest alignment first) are read per turn.
    CANDIDATES = 256

    def __init__(self, db: apsw.Connection, structure: StructureIndex, settings: AnalogySettings | None = None, *,
                 verb_vectors=None, sample_vectors=None) -> None:
        #: the slot's settings, one object (each is also an attribute of the slot, settable live)
        self.settings = (settings if settings is not None else AnalogySettings()).checked()
        self.db = db
        self.structure = structure
        self.verb_vectors = verb_vectors
        self.sample_vectors = sample_vectors
        #: the structure mapping of the whole store's verb counts (explore, ties, features)
        self.mapper = Mapper(structure.verb_bits(), verb_vectors)
        #: the last analogies of each session (at most SESSIONS sessions; an evicted one starts afresh)
        self._recent: dict[str, deque] = Bounded(SESSIONS)

    @property
    def ranker(self):
        """The learned ranker the settings choose (:mod:`fastmem.analogy.ranker`); None: the
        most surprising mapping."""
        return resolve_ranker(self.settings.ranker)

    def can_fire(self) -> bool:
        """Whether any turn could get an analogy now: the store holds at least ``min_store``
        memories with a structural code (a scope's population is part of the store's, so none
        can have more). When it does not, a recall skips the turn's parse (spaCy's load is
        about a second of a new process)."""
        return self.structure.n >= self.settings.min_store

    # -- the turn and its candidates -------------------------------------------------------
    def prepare(self, text: str, extractor, z_min: float, parsed=None, members=None) -> Turn:
        """The turn's structural query (parsed here unless ``parsed`` gives its events and
        names), weighted by the word counts of the store or of the scope's ``members``."""
        t0 = time.perf_counter()
        events, names, plot = parsed if parsed is not None else parse_turn(extractor, text)
        if isinstance(plot, list):  # the clauses, not yet embedded
            plot = P.plot_vectors(self.verb_vectors, [plot])[0] if self.verb_vectors is not None else None
        t1 = time.perf_counter()
        sq = self.structure.query(events, members)
        parse_ms = (t1 - t0) * 1e3 if parsed is None else 0.0
        return Turn(sq, tuple(names), tuple(events), parse_ms, (time.perf_counter() - t1) * 1e3, plot)

    def candidates(self, sq: StructQuery, z_min: float, members=None):
        """``(mean, std, n, ids, alignments)``: the exact statistics of the turn's code score
        over the store (over the scope's ``members`` when given: see
        :meth:`StructureIndex.z_stats`), its population n, and the memories (of the scope)
        whose exact alignment reaches ``z_min`` standard deviations over the mean, heaviest
        first (stage 1)."""
        st = self.structure
        mean, std, n = st.z_stats(sq, members)
        if n < self.settings.min_store or std <= 1e-9:
            return mean, std, n, np.zeros(0, np.int64), np.zeros(0)
        ids, align = st.candidates(sq, mean + z_min * std, self.CANDIDATES, members)
        return mean, std, n, ids, align

    # -- the surface condition -------------------------------------------------------------
    def _band(self, vec: np.ndarray) -> tuple[float, float]:
        """Mean and std of the turn's embedding cosine over (a sample of) the store."""
        sample = self.sample_vectors() if self.sample_vectors is not None else None
        if sample is None or len(sample) < 2:
            return 0.0, 1.0
        c = sample @ np.asarray(vec, np.float32)
        return float(c.mean()), max(float(c.std()), 1e-6)

    def _superficial(self, c: _Candidate, n_surface: int, same_names, hood: int = 0) -> bool:
        """Whether a candidate is the turn's own story or topic rather than an analogy;
        ``hood``: also when it is among the first ``hood`` of the turn's surface neighbourhood
        (the ``"neighbourhood"`` rule, whatever ``surface_rule`` says)."""
        if c.surface_z >= self.settings.surface_z:
            return True  # the top of the turn's surface neighbourhood: a paraphrase, a retelling
        if self.settings.surface_max is not None and c.surface > self.settings.surface_max:
            return True
        if self.settings.surface_rule == "neighbours" and c.surface_rank is not None and c.surface_rank <= n_surface \
                and c.surface >= self.settings.surface_floor:
            return True
        if (self.settings.surface_rule == "neighbourhood" or hood) and c.surface_rank is not None \
                and c.surface_rank <= (hood or n_surface) and c.surface_z >= HOOD_Z:
            return True  # among the few memories that stand out as the turn's nearest: what recall finds
        if self.settings.surface_rule == "recall" and c.recall_rank is not None and c.recall_rank <= n_surface:
            return True  # ordinary recall already ranks it first for this turn
        return same_names is not None and same_names.search(c.text) is not None  # the same story by name

    def _hood(self, vec, band, surface_labels, n_surface: int, hood: int = 0) -> np.ndarray | None:
        """The embeddings of the turn's nearest memories that the surface condition excludes
        (``(k, dim)``), or None: a memory that retells one of them is the turn's story too."""
        first = [int(x) for x in list(surface_labels)[: max(n_surface, hood, 1)]]
        if not first or not RETOLD:
            return None
        mu, sd = band
        rank = {m: r + 1 for r, m in enumerate(first)}
        out = []
        for mid, blob in self.db.execute("SELECT memory_id, vec FROM embeddings WHERE memory_id IN "
                                         "(SELECT value FROM json_each(?))", (ids_json(first),)):
            v = np.frombuffer(blob, np.float32)
            s = float(np.dot(v, vec))
            c = _Candidate(mid, "", "", [], b"", 0, s, (s - mu) / sd, rank[mid], None, v)
            if self._superficial(c, n_surface, None, hood):
                out.append(v)
        return np.stack(out) if out else None

    def _retold(self, c: _Candidate, hood_vecs) -> bool:
        """Whether ``c`` tells again (cosine >= :data:`RETOLD`) a memory of the turn's own
        surface neighbourhood (``hood_vecs``, :meth:`_hood`)."""
        return hood_vecs is not None and c.vec is not None and float(np.max(hood_vecs @ c.vec)) >= RETOLD

    def _rows(self, ids: Sequence[int], vec, band, surface_labels, recall_ids) -> list[_Candidate]:
        """The stage-2 rows of ``ids`` (in that order), with their surface figures."""
        mu, sd = band
        srank = {int(x): r + 1 for r, x in enumerate(surface_labels)}
        rrank = {int(x): r + 1 for r, x in enumerate(recall_ids)}
        got = {}
        for r in self.db.execute(
            "SELECT m.id, m.text, m.scope, e.vec, ev.events, c.code, c.nterms FROM memories m "
            "JOIN embeddings e ON e.memory_id=m.id JOIN events ev ON ev.memory_id=m.id "
            "JOIN codes c ON c.memory_id=m.id WHERE m.id IN (SELECT value FROM json_each(?))",
            (ids_json(ids),),
        ):
            v = np.frombuffer(r[3], np.float32)
            s = float(np.dot(v, vec))
            got[r[0]] = _Candidate(r[0], r[1], r[2], json.loads(r[4]), r[5], r[6], s, (s - mu) / sd,
                                   srank.get(r[0]), rrank.get(r[0]), v)
        return [got[i] for i in ids if i in got]

    # -- the pick --------------------------------------------------------------------------
    def pick(self, turn: Turn, vec: np.ndarray, *, scope: str | None, session: str | None, z_min: float,
             surface_labels: np.ndarray, recall_ids: Sequence[int], n_live: int, weights,
             members=None) -> Analogy | None:
        """The analogy for a prepared turn, or None (:meth:`pick_explained` without the reason).

        ``members``: the ids of ``scope`` when the store holds other scopes (candidates,
        statistics and verb counts come from the scope alone); None when every memory is in
        it. ``surface_labels``: the turn's nearest memories by embedding (the vector
        channel's labels); ``recall_ids``: ordinary recall's ranking; ``n_live``: memories
        in the store or scope; ``weights``: the usage ledger's ``{id: (weight, engaged,
        ignored)}``.
        """
        return self.pick_explained(turn, vec, scope=scope, session=session, z_min=z_min,
                                   surface_labels=surface_labels, recall_ids=recall_ids, n_live=n_live,
                                   weights=weights, members=members)[0]

    def pick_explained(self, turn: Turn, vec: np.ndarray, *, scope: str | None, session: str | None, z_min: float,
                       surface_labels: np.ndarray, recall_ids: Sequence[int], n_live: int, weights,
                       members=None) -> tuple[Analogy | None, str]:
        """``(analogy or None, why)``: :meth:`pick`, and in plain words why the slot spoke or
        stayed silent (the first condition the best candidate failed)."""
        sq = turn.query
        if sq is None:
            return None, "the turn states no event the slot can read (no verb with a subject or an object)"
        mean, std, n, cids, aligns = self.candidates(sq, z_min, members)
        if len(cids) == 0 and turn.plot is None:
            if n < self.settings.min_store:
                return None, (f"too few memories with a structure to compare against ({n}; the slot needs "
                              f"{self.settings.min_store})")
            return None, "no memory shares enough of the turn's events and roles to be a candidate"
        recent = self._recent.get(session, ()) if session else ()
        bits = self.structure.verb_bits(members)
        scored = self.shortlist(turn, vec, cids, aligns, scope, recent, surface_labels, recall_ids, n_live, bits)
        # the best of how many: the memories the slot chooses from that have content events
        # (a small scope borrows the store's counts, not its population)
        population = bits.memories() if members is None else min(bits.memories(), self.structure.coded(members))
        best = self.choose(turn, scored, max(population, 1), weights, (mean, std)) if scored else None
        why = None
        if best is None:  # the mapping found none: the plot view may
            best, why = self.plot_pick(turn, vec, scope=scope, recent=recent, surface_labels=surface_labels,
                                       n_live=n_live, weights=weights, members=members)
        if best is None:
            if why is not None:
                return None, why
            if not scored:
                return None, (f"every one of the {len(cids)} candidates sharing the turn's events is the turn's own "
                              "story or topic (a paraphrase, a retelling, the same names) or was offered just before")
            return None, self.silence(turn, scored, max(population, 1))
        if session:
            self._recent.setdefault(session, deque(maxlen=self.settings.analogy_repeat_window)).append(best.id)
        return best, best.why["reason"]

    def silence(self, turn: Turn, scored, n: int) -> str:
        """Why no shortlisted candidate was offered, in words: what the one with the strongest
        mapping lacked (too few corresponding parts, the same objects, objects as alike as a
        retelling's, a mapping that chance would give in a store of ``n``, or the learned
        ranker's doubt)."""
        s = self.settings
        c, mp, _ = max(scored, key=lambda x: (x[1].surprise, x[2]))
        if not mp.pairs or mp.units < s.analogy_min_units:
            return (f"the closest structure (memory {c.id}) has {mp.units} corresponding part"
                    f"{'s' if mp.units != 1 else ''}; an analogy needs {s.analogy_min_units}")
        if mp.literal > s.analogy_literal_max:
            return (f"the closest structure (memory {c.id}) plays its roles with the same things "
                    f"({mp.literal:.0%} of them): the same story, not an analogy")
        expected = 2.0 ** mp.log2_expected(n)
        if expected > s.analogy_alpha:
            return (f"the closest structure (memory {c.id}) is one chance would match: a mapping this strong "
                    f"turns up by chance {_odds(expected)} among {n} memories; the slot speaks only when the "
                    f"odds are under 1 in {1 / s.analogy_alpha:,.0f}")
        clothes = self.mapper.clothes(turn.events, c.events)
        if clothes > s.surface_objects:
            return (f"the closest structure (memory {c.id}) is told with objects as alike as a retelling's "
                    f"({clothes:.2f}; an analogy's differ, at most {s.surface_objects:.2f})")
        return "the learned ranker finds no candidate likely enough to be an analogy"

    def _n_surface(self, n_live: int, rule: str | None = None) -> int:
        """How many of the turn's nearest surface neighbours the surface rule (``rule``, default
        the settings') looks at: the ``"recall"`` and ``"neighbours"`` rules
        ``min(surface_exclude, ceil(surface_fraction N))``, the ``"neighbourhood"`` rule
        :meth:`_hood_size`."""
        s = self.settings
        if (rule or s.surface_rule) == "neighbourhood":
            return self._hood_size(n_live)
        return min(s.surface_exclude or 0, math.ceil(s.surface_fraction * max(n_live, 1)))

    def _hood_size(self, n_live: int, *, blind: bool = False) -> int:
        """How many of the turn's nearest memories its neighbourhood rule looks at:
        ``min(surface_exclude, HOOD_MIN)``. In a store or scope under :data:`HOOD_STORE`, none
        for the structure mapping (recall shows much of a store that small, and the mapping's
        own checks of names, objects and roles judge it) and the nearest one for the plot view
        (``blind``: it compares plots without their objects)."""
        cap = self.settings.surface_exclude or 0
        if n_live < HOOD_STORE:
            return min(cap, 1) if blind else 0
        return min(cap, HOOD_MIN)

    def plot_pick(self, turn: Turn, vec, *, scope, recent, surface_labels, n_live, weights,
                  members=None) -> tuple[Analogy | None, str | None]:
        """The plot view's pick (:mod:`fastmem.analogy.plots`): among the plots nearest the turn's,
        the one whose kernel score stands highest above the store's (its z against a sample of
        plots), when it stands ``sqrt(2 ln N) + plot_margin`` standard deviations up (N: the
        plots of the store or scope) and passes the surface condition. ``(analogy, None)``, or
        ``(None, why)``; ``(None, None)`` when the turn has no plot or the store too few."""
        plots = self.structure.plots
        if turn.plot is None:
            return None, None  # most chat turns: nothing to count
        population = plots.n if members is None else len(members & set(plots.ids.tolist()))
        if population < self.settings.min_store:
            return None, None
        turn_white = plots.whiten(turn.plot.vecs)
        ids = plots.nearest(turn.plot.vecs, P.FIRST, members, set(recent))
        stored = P.read(self.db, ids, plots.dim)
        band = self._band(vec)
        n_surface = self._n_surface(n_live)
        hood = self._hood_size(n_live, blind=True)  # a plot is blind to clothes: never the turn's own
        same_names = _mentions(turn.names) if self.settings.surface_names else None
        mean, std = plots.chance(turn_white)
        batch = plots.batch(stored)
        score = dict(zip(batch.ids, P.kernels(turn_white, batch)))
        keyed = []
        hood_vecs = self._hood(vec, band, surface_labels, n_surface, hood)
        for c in self._rows(ids, vec, band, surface_labels, ()):
            if ((scope is not None and c.scope != scope) or c.id not in stored
                    or self._superficial(c, n_surface, same_names, hood) or self._retold(c, hood_vecs)):
                continue
            z = (score[c.id] - mean) / std
            keyed.append((z + math.log2(max(weights.get(c.id, (1.0, 0, 0))[0], 1e-9)), z, c))
        best = None
        for _, z, c in sorted(keyed, key=lambda x: -x[0]):  # the highest that is not told in the turn's objects
            if turn.events and self.mapper.clothes(turn.events, c.events) > self.settings.surface_objects:
                continue
            best = (c, z)
            break
        gate = math.sqrt(2.0 * math.log(max(population, 2))) + self.settings.plot_margin
        if best is None:
            return None, ("every plot near the turn's is the turn's own story or topic (a paraphrase, a retelling, "
                          "the same names) or was offered just before")
        c, z = best
        mp = None
        if z < gate:
            low = gate - self.settings.plot_margin + self.settings.plot_mapped_margin
            if z >= low:  # two views agree: the plot's events also correspond one to one
                mp = self.mapper.map(list(turn.events), c.events)
            if mp is None or len(mp.pairs) < PLOT_MAPPED_EVENTS or mp.log2_expected(population) > 0.0:
                return None, (f"the closest plot (memory {c.id}) stands {z:.1f} standard deviations above the store's; "
                              f"among {population} plots the slot speaks from {gate:.1f} (from {low:.1f} when "
                              f"{PLOT_MAPPED_EVENTS} or more of its events correspond to the turn's in a mapping "
                              "chance would give less than once)")
            gate = low
        other = plots.whiten(stored[c.id].vecs)
        return self._plot_analogy(turn, c, z, gate, population, turn_white, other, stored[c.id],
                                  weights.get(c.id, (1.0, 0, 0))[0], mp), None

    def _plot_analogy(self, turn: Turn, c: _Candidate, z: float, gate: float, n: int, turn_white, other, plot,
                      use: float, mp: Mapping | None = None) -> Analogy:
        """The plot view's pick, explained: the clauses that correspond and, from the structure
        mapping, the events and objects."""
        told = [(turn.plot.clauses[i], plot.clauses[j]) for i, j, _ in P.pairs(turn_white, other)[:3]]
        mp = mp if mp is not None else self.mapper.map(list(turn.events), c.events)
        likeness, objects = self.mapper.objects(turn.events, c.events, mp)
        reason = "the same plot in other clothes: " + "; ".join(f"'{a}' ~ '{b}'" for a, b in told)
        reason += f" ({z:.1f} standard deviations above the store's plots, {n} of them)"
        if len(mp.pairs) >= PLOT_MAPPED_EVENTS:
            reason += "; events " + ", ".join(mp.labels[:4])  # "notice=see, feed=train"
        if objects:
            reason += "; objects " + ", ".join(objects[:3])
        why = {"reason": reason, "view": "plot", "plot_z": z, "plot_gate": gate, "population": n,
               "plot_pairs": [list(p) for p in told], "mapping": list(mp.labels), "matched": list(mp.labels),
               "events": [list(pair) for pair in mp.pairs], "links": list(mp.links), "objects": list(objects),
               "object_likeness": likeness, "clothes": self.mapper.clothes(turn.events, c.events),
               "surface": c.surface, "surface_z": c.surface_z, "surface_rank": c.surface_rank, "use": use,
               "z": z, "e_value": n * 0.5 * math.erfc(z / math.sqrt(2.0)),
               "p": min(1.0, n * 0.5 * math.erfc(z / math.sqrt(2.0)))}
        return Analogy(c.id, c.text, z * use, why, c.scope)

    def shortlist(self, turn: Turn, vec, cids, aligns, scope, recent, surface_labels, recall_ids, n_live,
                  bits) -> list[tuple[_Candidate, Mapping, float]]:
        """Stage 2: the first ``rerank`` candidates that pass the surface condition, each
        with its structure mapping (and stage-1 alignment), in stage-1 order."""
        n_surface = self._n_surface(n_live)
        same_names = _mentions(turn.names) if self.settings.surface_names else None
        band = self._band(vec)
        mapper = self.mapper.using(bits)
        align_of = dict(zip((int(x) for x in cids), aligns.tolist()))
        hood_vecs = self._hood(vec, band, surface_labels, n_surface) if len(cids) else None
        out = []
        start = 0
        while start < len(cids) and len(out) < self.settings.analogy_rerank:
            part = [int(m) for m in cids[start : start + 2 * self.settings.analogy_rerank] if int(m) not in recent]
            start += 2 * self.settings.analogy_rerank
            kept = [c for c in self._rows(part, vec, band, surface_labels, recall_ids)
                    if (scope is None or c.scope == scope) and not self._superficial(c, n_surface, same_names)
                    and not self._retold(c, hood_vecs)]
            kept = kept[: self.settings.analogy_rerank - len(out)]
            mapper.prime([turn.events, *(c.events for c in kept)])  # one model call for their relations
            out.extend((c, mapper.map(turn.events, c.events), align_of[c.id]) for c in kept)
        return out

    def gated(self, scored, n: int, turn: Turn | None = None):
        """The shortlisted ``(candidate, mapping, alignment)`` whose mapping passes the gate:
        enough units, not literal (the same nouns on its roles, or, with the ``turn``, objects as
        alike as a retelling's: :meth:`fastmem.analogy.mapping.Mapper.clothes`), and an E-value
        over the population of ``n`` of at most ``alpha``."""
        gate = math.log2(self.settings.analogy_alpha)
        most = self.settings.analogy_literal_max
        for c, mp, align in scored:
            if (mp.pairs and mp.units >= self.settings.analogy_min_units and mp.literal <= most
                    and mp.log2_expected(n) <= gate
                    and (turn is None or self.mapper.clothes(turn.events, c.events) <= self.settings.surface_objects)):
                yield c, mp, align

    def choose(self, turn: Turn, scored, n: int, weights, stats) -> Analogy | None:
        """The choice among the gated: the most surprising mapping (times its use weight; with
        the plot view's evidence in bits when more than one passes, :meth:`plot_evidence`), or
        the learned ranker's most probable one over its threshold. ``stats``: the store's
        ``(mean, std)`` of the turn's code score."""
        best, best_key = None, None
        ranker = self.ranker
        gated = list(self.gated(scored, n, turn))
        # more than one passes: the plot view's evidence joins the mapping's (both in bits)
        plot = self.plot_evidence(turn, [c.id for c, _, _ in gated]) if len(gated) > 1 and ranker is None else {}
        for c, mp, align in gated:
            use = weights.get(c.id, (1.0, 0, 0))[0]
            learned = None
            if ranker is not None:
                learned = ranker.prob(self.candidate_features(turn, c, mp, stats))
                if learned < ranker.threshold:
                    continue
                key = (learned * use, align, c.text)
            else:
                # a tie: the more structural terms shared, then the text (never the order written)
                key = (mp.surprise + plot.get(c.id, 0.0) + math.log2(max(use, 1e-9)), align, c.text)
            if best_key is None or key > best_key:
                best, best_key = (c, mp, align, use, learned), key
        if best is None:
            return None
        c, mp, align, use, learned = best
        z = (self.structure.encoder.expected_score(turn.query, align, c.nterms) - stats[0]) / stats[1]
        analogy = self._analogy(c, mp, align, z, use, n, learned)
        likeness, objects = self.mapper.objects(turn.events, c.events, mp)
        analogy.why.update(objects=list(objects), object_likeness=likeness,
                           clothes=self.mapper.clothes(turn.events, c.events), links=list(mp.links))
        if objects:
            analogy.why["reason"] += "; objects " + ", ".join(objects[:3])
        if plot:
            analogy.why["plot_bits"] = plot[c.id]
        return analogy

    def plot_evidence(self, turn: Turn, ids: Sequence[int]) -> dict[int, float]:
        """The plot view's evidence that each of ``ids`` is the turn's analogy, in bits: ``-log2``
        of the chance that a plot of the store stands as many standard deviations above the
        store's plots for the turn (:meth:`plot_pick`'s scale; the same events in another order
        stand lower), 1 bit (z = 0, no evidence either way) for a memory without a plot; empty
        when the turn has no plot or the store too few. What :meth:`choose` adds to the
        mapping's surprise when more than one mapping passes the gate: ProPara-Logy silver's
        targets above their own broken-order distractors 0.772 -> 0.841 by mapping and plot
        together (docs/defaults.md)."""
        plots = self.structure.plots
        if turn.plot is None or not ids or plots.n < self.settings.min_store:
            return {}
        turn_white = plots.whiten(turn.plot.vecs)
        mean, std = plots.chance(turn_white)
        stored = P.read(self.db, [int(x) for x in ids], plots.dim)
        out = dict.fromkeys((int(x) for x in ids), 1.0)
        if stored:
            batch = plots.batch(stored)
            for mid, k in zip(batch.ids, P.kernels(turn_white, batch)):
                out[mid] = tail_bits((float(k) - mean) / std)
        return out

    def candidate_features(self, turn: Turn, c: _Candidate, mp: Mapping, stats) -> np.ndarray:
        """The learned ranker's features (:func:`fastmem.analogy.ranker.features`) of a shortlisted
        candidate and its mapping; ``stats`` as in :meth:`choose`."""
        mean, std = stats
        sq = turn.query
        structural = self.structure.code_scores(sq, [(c.id, c.code, c.nterms)])[c.id]
        align, _, n_terms = self.structure.encoder.alignment(sq, c.events)
        z = (self.structure.encoder.expected_score(sq, align, n_terms) - mean) / std
        return self.describe(turn.events, c.events, mp, z=z, code_z=(structural - mean) / std)

    def _analogy(self, c: _Candidate, mp: Mapping, align: float, z: float, use: float, n: int,
                 learned: float | None = None) -> Analogy:
        p = mp.p_value(n)
        why = {"reason": reason(mp, p), "p": p, "e_value": 2.0 ** mp.log2_expected(n), "bits": mp.score,
               "surprise": mp.surprise, "mapping": list(mp.labels), "matched": list(mp.labels),
               "fillers": list(mp.fillers), "events": [list(pair) for pair in mp.pairs], "literal": mp.literal,
               "units": mp.units, "population": n, "alignment": align, "z": z, "surface": c.surface,
               "surface_z": c.surface_z, "surface_rank": c.surface_rank, "recall_rank": c.recall_rank, "use": use}
        if learned is not None:
            why["ranker_p"] = learned
            return Analogy(c.id, c.text, learned * use, why, c.scope)
        return Analogy(c.id, c.text, mp.surprise * use, why, c.scope)

    # -- the learned ranker's features (also read by fastmem.evaluate.slot) -----------------
    def describe(self, events, mev, mp: Mapping, *, z: float, code_z: float) -> np.ndarray:
        """:func:`fastmem.analogy.ranker.features` of a turn's events and a candidate's, given their mapping."""
        own = math.sqrt(self.mapper.map(events, events).score * self.mapper.map(mev, mev).score)
        norm = mp.score / own if own > 0 else 0.0
        return features(z=z, code_z=code_z, mapping=norm, n_turn=mp.n, n_cand=mp.m, pairs=mp.pairs,
                        labels=mp.labels)

    # -- exploration -----------------------------------------------------------------------
    def explore(self, text: str, embed_query, extractor, *, k: int, scope: str | None,
                z_min: float, members=None) -> list[Analogy]:
        """The ``k`` memories structurally closest to ``text`` by the slot's exact z (see
        ``Memory.analogy.explore``); ``embed_query(text)`` gives ``why["surface"]``; ``members`` as
        in :meth:`pick`."""
        events = parse_turn(extractor, text)[0]
        sq = self.structure.query(events, members)
        st = self.structure
        if sq is None or st.n == 0:
            return []
        encoder = st.encoder
        mean, std, n = st.z_stats(sq, members)
        # the memories (of the scope) sharing a term, heaviest first
        ids, _ = st.candidates(sq, -math.inf, k * 4 + 16, members)
        rows = self.db.execute("SELECT memory_id, code, nterms FROM codes WHERE memory_id IN (SELECT value FROM "
                               "json_each(?))", (ids_json(ids),)).fetchall()
        code_score = st.code_scores(sq, rows)
        vec = embed_query(text)
        out = []
        for mid, mtext, mscope, v, ev in self.db.execute(
            "SELECT m.id, m.text, m.scope, e.vec, ev.events FROM memories m JOIN embeddings e ON e.memory_id=m.id "
            "JOIN events ev ON ev.memory_id=m.id WHERE m.id IN (SELECT value FROM json_each(?))",
            (ids_json(list(code_score)),),
        ):
            if scope is not None and mscope != scope:
                continue
            mev = json.loads(ev)
            align, matched, n_terms = encoder.alignment(sq, mev)
            z = (encoder.expected_score(sq, align, n_terms) - mean) / std if std > 1e-9 else 0.0
            if z < z_min:
                continue
            mp = self.mapper.map(events, mev)
            code_z = (code_score[mid] - mean) / std if std > 1e-9 else 0.0
            why = {"z": z, "code_z": code_z, "structural": code_score[mid], "store_mean": mean, "store_std": std,
                   "alignment": align, "surface": float(np.dot(np.frombuffer(v, np.float32), vec)),
                   "matched": matched, "mapping": list(mp.labels), "surprise": mp.surprise,
                   "p": mp.p_value(n) if mp.pairs else 1.0}
            out.append(Analogy(mid, mtext, z, why, mscope))
        out.sort(key=lambda a: (-a.score, a.id))
        return out[:k]


def tail_bits(z: float) -> float:
    """``-log2 P(Z >= z)`` for a standard normal Z: the evidence of standing ``z`` standard
    deviations up, in bits (1 at z = 0)."""
    return -math.log2(max(0.5 * math.erfc(z / math.sqrt(2.0)), 1e-300))


def _odds(expected: float) -> str:
    """An expected count of chance mappings in words: "with odds of 1 in 20", "about 3 times"."""
    if expected >= 1:
        return f"about {expected:.0f} time{'s' if round(expected) != 1 else ''}"
    return f"with odds of 1 in {1 / max(expected, 1e-12):,.0f}"
