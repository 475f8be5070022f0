"""The recall pipeline: turn -> (embedding, parse) -> channels -> fusion -> use -> chunks
standing in for their members -> hits, with the analogy slot beside them.

:meth:`RecallPipeline.run` is one recall, top to bottom. The front
(:meth:`fastmem.Memory.recall_many`) checks the arguments, takes the lock, catches up with
other processes and embeds the turns (in one batch; several turns are also parsed in one
batch there). Here the channels run, then fusion, use weights and chunks; the analogy slot
runs last (it reads the vector channel's neighbours and the fused ranking for its surface
condition).
"""

from __future__ import annotations

import time
from typing import Any

import apsw
import numpy as np

from ..analogy.slot import SURFACE_SAMPLE, AnalogySlot
from ..derived.ann import VectorIndex
from ..derived.standing import StandingIndex
from ..derived.usage import Ledger
from ..derived.vectors import ids_json
from ..derived.windows import MIN_LONG, WindowIndex
from ..results import Hit, Recall
from ..storage.store import FATAL
from ..util.text import content_words, from_epoch, prefix_speaker, singular
from . import arrange as A
from . import channels as C
from .channels import CHANNELS, ChannelSpec, TurnQuery, channel
from .evidence import grounded
from .channels.keyword import varint
from .fusion import AUTO_LONG_SHARE, REF_DEPTH, clear_winner, drop_boundary_ties, length_prior, normalised, relative_score
from .scopes import Scopes
from .stand_in import stand_in

__all__ = ["RecallPipeline", "MAX_EXCLUDED_ROOM", "CHANNELS", "channel", "ChannelSpec", "TurnQuery"]

#: Most extra candidates a channel fetches to make room for excluded ids.
MAX_EXCLUDED_ROOM = 200
#: A question about the asker's own words that asks for a list, an order or a summary runs the
#: vector channel again with the mean vector of this many of the best memories fused so far
#: added to the turn's (relevance feedback; see :meth:`RecallPipeline._fed_back`).
FEEDBACK = 1
#: The channels that find a memory by the words it shares with the turn.
SHARED_WORDS = frozenset({"keyword", "graph"})
#: Their weight in a request for work (:func:`_weights`; the figures: ``docs/defaults.md``).
WORK_SHARED_WORDS = 0.5
#: The learned fusion asks whether a memory only asks of texts of at most this many characters
#: (a longer one states something).
ASKS_CHARS = 400


def _weights(found: dict, work: bool) -> dict[str, float]:
    """Each channel's fusion weight for this turn. A request for work
    (:func:`fastmem.recall.arrange.asks_for_work`) counts the shared-word channels at
    :data:`WORK_SHARED_WORDS`: what the asker said of themselves and of how they want things
    done rarely shares the request's words, while other requests on the topic and their answers
    do."""
    return {c: CHANNELS[c].weight * (WORK_SHARED_WORDS if work and c in SHARED_WORDS else 1.0) for c in found}


def _without(ch: C.Channel, exclude: frozenset[int], pool: int) -> C.Channel:
    """A channel's results less ``exclude``, ranked again from 1, its best ``pool`` kept."""
    kept = sorted(((m, v) for m, v in ch.items() if m not in exclude), key=lambda x: x[1][0])[:pool]
    return {m: (r + 1, v[1]) for r, (m, v) in enumerate(kept)}


class RecallPipeline:
    """Runs recalls against one store's parts.

    Parameters
    ----------
    db : apsw.Connection
    index : VectorIndex
        The vector channel's index.
    scopes : fastmem.recall.scopes.Scopes
        Scope membership for the vector channel's filter.
    ledger : usage.Ledger
        Use weights (applied to fused scores; the front records what was surfaced).
    slot : AnalogySlot
    fuse : callable
        ``fuse({channel: {id: (rank, score)}}, weights, prior) -> {id: score}`` (see
        :mod:`fastmem.recall.fusion`).
    standing : StandingIndex, optional
        The store's standing statements (``Recall.standing``).
    windows : WindowIndex, optional
        The long memories' window vectors (the vector channel scores each by its best).
    """

    def __init__(self, db: apsw.Connection, index: VectorIndex, scopes: Scopes, ledger: Ledger,
                 slot: AnalogySlot, fuse, standing: StandingIndex | None = None,
                 windows: WindowIndex | None = None) -> None:
        self.db, self.index, self.scopes, self.ledger, self.slot, self.fuse = db, index, scopes, ledger, slot, fuse
        self.standing = standing if standing is not None else StandingIndex(db)
        self.windows = windows if windows is not None else WindowIndex(db, index.dim)
        #: each channel's own caches (:attr:`ChannelSpec.state`), by channel name
        self.state = {name: spec.state(db) for name, spec in CHANNELS.items() if spec.state is not None}

    def reset(self) -> None:
        """Drop what another process's commit, or a change of the graph, may have outdated."""
        for st in self.state.values():
            if hasattr(st, "reset"):
                st.reset()

    def run(self, query: str, vec: np.ndarray | None, *, extractor, k: int, scope: str | None, session: str | None,
            use: frozenset[str], analogy: bool, z_min: float, parsed=None,
            exclude: frozenset[int] = frozenset(), floor: bool = False, floor_share: float = 0.05,
            standing: int = 0, order: str = "rank") -> Recall:
        """One recall of ``query`` (embedded as ``vec``; None when neither the vector channel
        nor the slot is wanted). ``parsed()``, when given, returns the turn's (events, names)
        and the parse's milliseconds (the front parses several turns in one batch); otherwise
        the slot parses the turn. ``exclude``: ids no channel may return (they take no part
        in fusion either); the slot may still pick one. ``standing``: at most this many
        standing statements (:mod:`fastmem.reader.standing`); ``order``: see :mod:`fastmem.recall.arrange`."""
        t: dict[str, float] = {}
        slot = analogy and extractor is not None and self.slot.can_fire()
        # channels (CHANNELS, in order; the vector channel also when only the slot needs its
        # neighbours)
        t0 = time.perf_counter()
        # fusion scales every channel against its REF_DEPTH-th best. Excluded ids take room in
        # what a channel fetches and are gone before anything is computed from it (context
        # seeds, speakers, normalisation, boundary ties): the recall ranks the rest as if they
        # had never matched (40 LoCoMo questions with the session's earlier questions and
        # answers excluded: rankings identical 12/40 when they were dropped only before fusion)
        pool = max(REF_DEPTH, 4 * k)
        fetch = pool + min(len(exclude), MAX_EXCLUDED_ROOM)
        turn = TurnQuery(query, vec, fetch, pool, scope, self.scopes.allowed(scope), exclude)
        needs = {"derived": any(CHANNELS[c].derived for c in use if c in CHANNELS), "slot": slot}
        found = turn.found
        for name, spec in CHANNELS.items():
            if spec.derived and exclude and not turn.filtered:  # the base channels less `exclude` first
                found.update({c: _without(v, exclude, pool) for c, v in found.items()})
                turn.filtered = True
            if spec.wanted(use, turn, needs):
                t1 = time.perf_counter()
                found[name] = spec.run(self, turn)
                t[name] = (time.perf_counter() - t1) * 1e3
            elif not spec.derived:
                t[name] = 0.0
        if exclude and not turn.filtered:
            found.update({c: _without(v, exclude, pool) for c, v in found.items()})
        labels = turn.labels
        # fusion (a keyword or graph cut at `pool` says nothing about ties at its boundary)
        found = {c: (drop_boundary_ties(v, pool) if CHANNELS[c].cut_ties else v) for c, v in found.items() if c in use}
        if exclude:  # the base ones are filtered already; a neighbour or a speaker's turn may be one
            found.update({c: _without(v, exclude, pool) for c, v in found.items() if CHANNELS[c].derived})
        own = A.own_words(query)  # "what did I bring up": the asker's turns, questions included
        wide = A.listy(query)  # a list or an order: spread over near-duplicates
        work = not wide and A.asks_for_work(query)  # "make me a plan", "how should I build ..."
        if own or work:  # what was asked before is no answer
            found.pop("context", None)  # a neighbour's credit goes to the reply
        fused = self._fuse(found, _weights(found, work), self._long_prior(found), work, wide, turn.members)
        if len(found) > 1 and "vector" in found:  # the sentence model's clear winner stays in the head
            clear_winner(fused, found["vector"])
        if own:
            A.asker_first(self.db, fused)
            if wide and vec is not None and "vector" in found and fused and not A.lists_topics(query):
                # one topic asked about as a whole: one round of feedback, and the sentence model
                # alone ranks (the rest of such a question is framing, "everything I've told you
                # about ... across our chats", which the shared-word channels match anywhere)
                found = {"vector": self._fed_back(turn, vec, fused, exclude, pool)}
                fused = self._fuse(found, {"vector": CHANNELS["vector"].weight}, {}, False, wide, turn.members)
                A.asker_first(self.db, fused)
        # use weights
        weights = self.ledger.weights_for(session)
        for mid in fused:
            w = weights.get(mid)
            if w is not None:
                fused[mid] *= w[0]
        ranked = sorted(fused.items(), key=lambda x: (-x[1], -x[0]))
        if not own:
            ranked = A.answers_first(self.db, ranked, max(2 * k, 10), scope=scope, exclude=exclude)  # answers first
        top, stood_in = stand_in(self.db, ranked, k * A.SPREAD_POOL if wide else k)  # a chunk stands for its members
        hits = self._hits(top, found, turn, stood_in, weights)
        if wide:
            hits = A.spread(hits, self._vectors([h.id for h in hits]), k)
        if order == "time" or (order == "auto" and A.asks_order(query)):
            hits = A.by_time(hits)
        grounding: dict = {}
        if floor:  # nothing above chance for this turn: no hits (see fastmem.recall.evidence)
            grounding = self._grounded(query, hits, vec, scope, floor_share)
            if not grounding["grounded"]:
                hits = []
        t["fuse"] = (time.perf_counter() - t0) * 1e3 - sum(t.get(c, 0.0) for c in CHANNELS)
        # the analogy slot: the turn's structure
        an = None
        an_reason = ("not asked for (analogy=False)" if not analogy else
                     "no parser loaded (the slot reads the turn's structure)" if extractor is None else
                     f"too few memories with a structure to compare against ({self.slot.structure.n}; the slot needs "
                     f"{self.slot.settings.min_store})"
                     if not slot else "")
        if slot:
            try:  # a turn the reader cannot read still gets its hits; the slot says why it is silent
                an, an_reason = self._analogy(query, vec, extractor, parsed, t, scope=scope, session=session,
                                              z_min=z_min, labels=labels, ranked=ranked, weights=weights)
            except FATAL:
                raise
            except Exception as exc:
                an, an_reason = None, f"the turn's structure could not be read ({type(exc).__name__}: {exc})"
        stood = self.standing.match(vec, frozenset(singular(content_words(query))), scope=scope,
                                    members=self.scopes.allowed(scope), k=standing) if standing else []
        return Recall(query, tuple(hits), an, t, grounding, tuple(stood), an_reason)

    def _analogy(self, query: str, vec, extractor, parsed, t: dict, *, scope, session, z_min, labels, ranked,
                 weights):
        """The analogy slot for one turn: ``(analogy or None, reason)``; its parse and own time in ``t``."""
        got, t["parse"] = parsed() if parsed is not None else (None, 0.0)
        if isinstance(got, Exception):  # the guarded parse of several turns (fastmem.write.guard.turns)
            raise got
        t3 = time.perf_counter()
        members = self.scopes.allowed(scope)
        sturn = self.slot.prepare(query, extractor, z_min, got, members)
        t["parse"] += sturn.parse_ms
        an, an_reason = self.slot.pick_explained(sturn, vec, scope=scope, session=session, z_min=z_min,
                                                 surface_labels=labels,
                                                 recall_ids=[m for m, _ in ranked[: self.slot.settings.surface_exclude or 0]],
                                                 n_live=self.index.live if members is None else len(members),
                                                 weights=weights, members=members)
        t["analogy"] = (time.perf_counter() - t3) * 1e3 - sturn.parse_ms
        return an, an_reason

    def _fuse(self, found: dict[str, C.Channel], weights: dict[str, float], prior: dict, work: bool,
              wide: bool, members=None) -> dict[int, float]:
        """The configured fusion of ``found``; a fusion that reads what each candidate is
        (``reads_rows``: :func:`fastmem.recall.fusion.learned`) gets its rows and ``work``,
        except for a turn that asks for a list, an order or a summary (``wide``: it was fitted
        on questions answered by their top 5), fused by the ``score`` fusion."""
        if getattr(self.fuse, "reads_rows", False):
            if wide:
                return relative_score(found, weights, prior)
            if getattr(self.fuse, "reads_store", False):
                if not self._long_answers(members):  # judged first: no rows read where unused
                    return relative_score(found, weights, prior)
                return self.fuse(found, weights, prior, rows=self._kinds(found), work=work, long_answers=True)
            return self.fuse(found, weights, prior, rows=self._kinds(found), work=work)
        return self.fuse(found, weights, prior)

    def _long_answers(self, members) -> bool:
        """Whether the store (``members``: the scope's ids; None: all) holds chats with long
        answers: at least MIN_LONG long memories, :data:`fastmem.recall.fusion.AUTO_LONG_SHARE`
        of its memories or more."""
        n = self.index.live if members is None else len(members)
        long = self.windows.count(members)
        return long >= MIN_LONG and long >= AUTO_LONG_SHARE * max(n, 1)

    def _kinds(self, found: dict[str, C.Channel]) -> dict[int, tuple[bool, bool]]:
        """What each candidate of ``found`` is: ``{id: (the assistant's side, only asks)}`` (the
        assistant's side: its speaker, or its transcript label, in
        :data:`fastmem.recall.arrange.REPLY_SPEAKERS`; only asks:
        :func:`fastmem.recall.arrange.only_asks`, for a text of at most :data:`ASKS_CHARS`
        characters)."""
        ids = set().union(*found.values()) if found else set()
        out = {}
        for mid, who, head, size in self.db.execute(
                "SELECT id, speaker, substr(text, 1, ?), length(text) FROM memories "
                "WHERE id IN (SELECT value FROM json_each(?))", (ASKS_CHARS, ids_json(ids))):
            who = who if who is not None else prefix_speaker(head[:80])
            reply = who is not None and who.strip().casefold() in A.REPLY_SPEAKERS
            out[mid] = (reply, size <= ASKS_CHARS and A.only_asks(head))
        return out

    def _fed_back(self, turn: TurnQuery, vec: np.ndarray, fused: dict[int, float], exclude, pool: int) -> C.Channel:
        """The vector channel again, for the turn's vector plus the vector of the best memory
        fused so far (one round of relevance feedback): a topic's later turns rarely repeat its
        name, but they are near the turn that introduced it."""
        best = sorted(fused, key=lambda m: (-fused[m], -m))[:FEEDBACK]
        seen = self._vectors(best)
        seen = seen[np.any(seen, axis=1)] if seen.size else seen
        if not seen.size:
            return turn.found["vector"]
        q = np.asarray(vec, np.float32) + seen.mean(0)
        q /= max(float(np.linalg.norm(q)), 1e-9)
        again = TurnQuery(turn.query, q, turn.fetch, pool, turn.scope, turn.members, turn.exclude)
        return _without(CHANNELS["vector"].run(self, again), exclude, pool) if exclude else CHANNELS["vector"].run(self, again)

    def _long_prior(self, found: dict[str, C.Channel]) -> dict[str, dict[int, float]]:
        """The length prior of the memories the shared-word channels found
        (:func:`fastmem.recall.fusion.length_prior`), by channel."""
        names = [c for c in found if CHANNELS[c].long_prior and found[c]]
        if not names:
            return {}
        ids = sorted(set().union(*(found[c] for c in names)))
        words = {mid: varint(sz, 0)[0] for mid, sz in self.db.execute(
            "SELECT id, sz FROM memories_fts_docsize WHERE id IN (SELECT value FROM json_each(?))", (ids_json(ids),))}
        prior = length_prior(words, normalised(found["vector"]) if found.get("vector") else None)
        return {c: prior for c in names} if prior else {}

    def _vectors(self, ids: list[int]) -> np.ndarray:
        """Unit vectors of ``ids`` from the index (zeros for one it lacks: a pending memory)."""
        try:
            return self.index.get(ids) if ids else np.zeros((0, 0), np.float32)
        except RuntimeError:
            out = np.zeros((len(ids), self.index.dim), np.float32)
            for i, mid in enumerate(ids):
                try:
                    out[i] = self.index.get([mid])[0]
                except RuntimeError:
                    pass
            return out

    def _grounded(self, query: str, hits, vec, scope: str | None, share: float) -> dict:
        n = self.index.live if scope is None else len(self.scopes.allowed(scope) or ()) or self.index.live
        kw = self.state["keyword"]

        def df(w: str) -> int:
            term = '"' + w.replace('"', '""') + '"'
            c = kw.df(term, self.index.live)
            return c if c <= kw.CAP else kw.exact_df(term, self.index.live)

        sample = self.index.sample(SURFACE_SAMPLE) if vec is not None else None
        return grounded(self.db, query, hits, df=df, n=n, vec=vec, sample=sample, share=share)

    def _hits(self, top, found: dict[str, C.Channel], turn: TurnQuery, stood_in: dict[int, dict],
              weights) -> list[Hit]:
        """Hits with their texts and ``why``: each channel's rank and score, the use weight,
        and for a chunk that stood in for members, ``why["chunk"]``."""
        rows = {}
        if top:
            rows = {r[0]: r[1:] for r in self.db.execute(
                "SELECT id, text, scope, at, speaker, source FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                (ids_json(m for m, _ in top),))}
        hits = []
        for mid, score in top:
            if mid not in rows:
                continue
            why: dict[str, Any] = {}
            for name, ch in found.items():
                if mid in ch:
                    why[name] = {"rank": ch[mid][0], "score": ch[mid][1]}
                    explain = CHANNELS[name].explain
                    if explain is not None:
                        why[name].update(explain(turn))
            w = weights.get(mid, (1.0, 0, 0))  # the weight this recall ranked by
            why["use"] = {"weight": w[0], "engaged": w[1], "ignored": w[2]}
            if mid in stood_in:
                why["chunk"] = stood_in[mid]
            hits.append(Hit(mid, rows[mid][0], score, why, rows[mid][1], from_epoch(rows[mid][2]), rows[mid][3],
                            rows[mid][4]))
        return hits
