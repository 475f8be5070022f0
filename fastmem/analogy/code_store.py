"""The store's structural side: every memory's events, its code, its terms and the word counts.

Tables ``events`` (a memory's narrative events as JSON), ``codes`` (its int8 FHRR code, number
of terms and the hashes of its terms), ``event_df`` (how many memories mention each verb or
filler) and ``hrr_stats`` (the running sums of the codes, saved on flush). In the process they
live as a :class:`~fastmem.analogy.postings.TermIndex` (the analogy slot's candidate search), the
exact running statistics (:class:`~fastmem.analogy.codes.CodeStats`) and a dict of document
counts; the codes themselves stay on disk. :class:`StructureIndex` keeps the in-process parts
equal to the tables: writes are *staged* inside the caller's transaction and *applied* once
it has committed.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import apsw
import numpy as np

from .. import kernels as K
from ..reader.extract import EVENTS_VERSION, Triple, events_from_triples
from ..util.progress import bar
from . import postings_file
from . import plots as P
from .plots import PlotChanges, PlotIndex
from .codes import VERB_KEY, CodeStats, StructQuery, StructureEncoder, SumsAhead, count_events, event_counts
from .mapping import VerbBits
from .postings import TermIndex, term_hashes

__all__ = ["StoredCode", "stored_code", "StructureIndex", "StructuralChanges"]

#: The running statistics are saved every this many structural changes (and on flush), so
#: that reopening after a crash recomputes them rarely.
STATS_SAVE_EVERY = 20_000
#: A scope of at most this many memories gets the slot's statistics from its own codes (one
#: read of at most 4 MB per change of the store); a larger one uses the store's.
SLOT_SCOPE_OWN_STATS = 4096
#: A scope with fewer coded memories than this has no statistics of its own (a mean and a
#: standard deviation of a handful say nothing): it borrows the store's, so a new user's first
#: memories can already rhyme. Equal to the slot's own minimum store size (``min_store``).
SCOPE_OWN_MIN = 8
#: A write of at least this many codes begins their statistics on a thread while its
#: transaction goes on (:meth:`fastmem.analogy.codes.CodeStats.ahead`): a bulk load's.
AHEAD_MIN = 1024
#: Scopes whose codes are kept between turns (at most 4 MB each).
SCOPE_CACHE = 8
#: A store with at least this many coded memories keeps its term postings in a file beside it
#: (:mod:`fastmem.analogy.postings_file`), read on open instead of rebuilt from every
#: memory's terms (1M memories: 2.6 s to read and 3.4 s to sort, against ~0.1 s from the file).
TERMS_FILE_MIN = 20_000


@dataclass(frozen=True)
class StoredCode:
    """A memory's code as the ``codes`` table holds it (an export carries it, so that an
    import of the same encoder version and dimension has nothing to encode)."""

    q8: bytes  # (2 dim,) int8: the code's cosines then sines
    nterms: int
    terms: bytes  # int64 term hashes


def stored_code(encoder: StructureEncoder, events) -> StoredCode | None:
    """A memory's code as the ``codes`` table stores it (None: no events), computed where the
    rows are derived (a Ray worker, so that its commit encodes nothing) or at the commit."""
    if not events:
        return None
    code, nterms = encoder.encode(events)
    if code is None:
        return None
    return StoredCode(K.quantize(code.reshape(1, -1))[0].tobytes(), nterms,
                      term_hashes(encoder.term_keys(events)).tobytes())


@dataclass
class StructuralChanges:
    """Structural changes written in a transaction, to apply once it commits."""

    codes: list[tuple[int, np.ndarray, int, np.ndarray]] = field(default_factory=list)  # (id, int8 code, n, hashes)
    df: dict[str, int] = field(default_factory=dict)
    removed: list[tuple[int, np.ndarray, int]] = field(default_factory=list)  # (id, int8 code, n terms)
    #: the statistics of ``codes`` begun on a thread (a bulk write: :data:`AHEAD_MIN` codes)
    ahead: SumsAhead | None = None
    #: plots written and removed (:mod:`fastmem.analogy.plots`)
    plots: PlotChanges = field(default_factory=PlotChanges)


class StructureIndex:
    """Events, codes, terms and word counts of one store (see the module docstring).

    Parameters
    ----------
    db : apsw.Connection
        The store's connection.
    encoder : StructureEncoder
        Encodes events into codes (its ``dim`` is the store's).
    terms_path : str, optional
        Where the term postings are saved beside the store (None: never, an in-memory store).
    """

    def __init__(self, db: apsw.Connection, encoder: StructureEncoder, terms_path: str | None = None,
                 plot_dim: int = 384) -> None:
        self.db = db
        #: the memories' plots, the slot's domain-blind view (:mod:`fastmem.analogy.plots`)
        self.plots = PlotIndex(db, plot_dim)
        self.terms_path = terms_path
        #: (the index, its version) as last read from or written to ``terms_path``
        self._terms_saved: tuple[TermIndex, int] | None = None
        self._terms_staged: tuple[TermIndex, int] | None = None
        #: Where the last :meth:`load` took the term postings from: ``'file'`` or ``'table'``.
        self.terms_source = "table"
        self.encoder = encoder
        self.dim = encoder.dim
        self.stats = CodeStats(self.dim)
        self.terms = TermIndex()
        self.df: dict[str, int] = {}
        self._changes = 0
        #: The change-log position these sums are known to include (set by the owner after it
        #: caught up); saved with them, so a later change by anyone forces a recount on open.
        self.seq = 0
        #: (the sums, their change count, the log position) as last read from or written to
        #: hrr_stats; None when the sums in memory were never stored
        self._stored: tuple | None = None
        self._scope_cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def n(self) -> int:
        """Memories with a structural code."""
        return self.stats.n

    # -- loading ---------------------------------------------------------------------------
    def load(self) -> None:
        """Read the terms (from the postings saved beside the store when they are current,
        else from the table), the statistics (recomputed when the saved sums are stale) and
        the word counts. Memories whose terms are missing (an older store) get them from their
        events."""
        ti = self._saved_terms()
        self.terms_source = "file" if ti is not None else "table"
        if ti is None:
            ti = self._terms_from_table()
        self.terms = ti
        ids = ti.live_ids()
        n, id_sum = len(ids), int(ids.sum()) if len(ids) else 0
        st = self.db.execute("SELECT n, id_sum, s, m, seq FROM hrr_stats WHERE dim=?", (self.dim,)).fetchone()
        stats = CodeStats(self.dim)
        d2 = 2 * self.dim
        # the saved sums hold when the codes are the same rows and none changed since they were
        # saved (an update keeps the count and the id sum)
        if st and st[0] == n and st[1] == id_sum and not self._codes_changed_since(st[4]):
            stats.s = np.frombuffer(st[2], np.float64).copy()
            stats.m = np.frombuffer(st[3], np.float64).reshape(d2, d2).copy()
            stats.n, stats.id_sum = n, id_sum
            self._stored = (stats, stats.changes, int(st[4]))
        else:
            stats = self.recompute_stats()
            self._stored = None
        self.stats = stats
        self.df = dict(self.db.execute("SELECT word, n FROM event_df"))
        self.plots.load()

    def _terms_from_table(self) -> TermIndex:
        rows = self.db.execute("SELECT memory_id, terms FROM codes WHERE dim=? ORDER BY memory_id", (self.dim,)).fetchall()
        ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        ti = TermIndex()
        if all(r[1] is not None for r in rows):  # one buffer, not an array a memory
            ti.build_flat(ids, np.frombuffer(b"".join([r[1] for r in rows]), np.int64),
                          np.fromiter((len(r[1]) >> 3 for r in rows), np.int64, len(rows)))
        else:
            ti.build(ids, [np.frombuffer(t, np.int64) if t is not None else self._hashes_of(mid) for mid, t in rows])
        return ti

    def _saved_terms(self) -> TermIndex | None:
        if not self.terms_path:
            return None
        got = postings_file.load(self.db, self.terms_path, self.dim, StructureEncoder.version)
        if got is None:
            return None
        ti, behind = got
        # caught up with changes made since: written again at the next flush
        self._terms_saved = (ti, ti.version) if not behind else None
        return ti

    def terms_save_due(self) -> bool:
        """Whether the term postings should be written beside the store at the next flush:
        a large store whose postings changed since they were read or written."""
        ti, saved = self.terms, self._terms_saved
        return (bool(self.terms_path) and ti.n >= TERMS_FILE_MIN
                and (saved is None or saved[0] is not ti or saved[1] != ti.version))

    def stage_terms(self) -> tuple[str, str]:
        """Write the term postings (current at :attr:`seq`) to a temporary file: returns it and
        the token the store must name (in the transaction that commits) before
        :meth:`publish_terms` moves it into place."""
        staged = postings_file.stage(self.terms_path, self.terms, self.dim, StructureEncoder.version, self.seq)
        self._terms_staged = (self.terms, self.terms.version)
        return staged

    def publish_terms(self, tmp: str) -> None:
        """Move the file :meth:`stage_terms` wrote into place (its token is committed)."""
        os.replace(tmp, self.terms_path)
        self._terms_saved = self._terms_staged

    def terms_match_table(self) -> bool:
        """Whether the in-process term postings hold exactly the table's terms (reads them all)."""
        def pairs(ti: TermIndex) -> np.ndarray:
            keys, indptr, rows, ids = ti.postings_of_live()
            both = np.stack([ids[rows], np.repeat(keys, np.diff(indptr))], axis=1)
            return np.unique(both, axis=0)

        return np.array_equal(pairs(self.terms), pairs(self._terms_from_table()))

    def catch_up(self, mids) -> bool:
        """Take other connections' code changes for ``mids`` without reading every code: when
        none of them is in this process's index (codes written elsewhere for new memories,
        the common case of several writing processes), their rows are added to the
        statistics and the term index, and the word counts are read again. A memory this
        process already holds (updated or forgotten elsewhere) needs its old code, which is
        gone: returns False, changing nothing, and the caller reloads (:meth:`load`)."""
        mids = sorted(int(m) for m in mids)
        if not mids:
            return True
        self.plots.catch_up(mids)  # a plot is read again whatever happened to the code
        if self.terms.count_of(mids):
            return False
        rows = self.db.execute("SELECT memory_id, code, nterms, terms FROM codes WHERE dim=? AND memory_id IN "
                               "(SELECT value FROM json_each(?)) ORDER BY memory_id", (self.dim, json.dumps(mids))).fetchall()
        if any(r[3] is None for r in rows):  # an older writer left no terms: they come from the events on load
            return False
        if rows:
            ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
            q8 = np.frombuffer(b"".join(r[1] for r in rows), np.int8).reshape(len(rows), 2 * self.dim)
            self.stats.add(ids, q8, self.encoder.scale(np.asarray([r[2] for r in rows])))
            self.terms.add_many(ids.tolist(), [np.frombuffer(r[3], np.int64) for r in rows])
        self.df = dict(self.db.execute("SELECT word, n FROM event_df"))
        return True

    def _codes_changed_since(self, seq: int) -> bool:
        trimmed = self.db.execute("SELECT value FROM settings WHERE key='change_log_trimmed'").fetchone()
        if trimmed and int(trimmed[0]) > seq:
            return True
        return self.db.execute("SELECT 1 FROM change_log WHERE seq>? AND part='code' LIMIT 1", (seq,)).fetchone() is not None

    def _hashes_of(self, mid: int) -> np.ndarray:
        return term_hashes(self.encoder.term_keys(self.events(mid)))

    def recompute_stats(self) -> CodeStats:
        """The statistics summed again from every stored code (8,192 at a time)."""
        stats = CodeStats(self.dim)
        last = -1
        while True:
            part = self.db.execute("SELECT memory_id, code, nterms FROM codes WHERE dim=? AND memory_id>? "
                                   "ORDER BY memory_id LIMIT 8192", (self.dim, last)).fetchall()
            if not part:
                break
            q8 = np.frombuffer(b"".join(r[1] for r in part), np.int8).reshape(len(part), 2 * self.dim)
            stats.add(np.asarray([r[0] for r in part], np.int64), q8, self.encoder.scale(np.asarray([r[2] for r in part])))
            last = part[-1][0]
        return stats

    def in_sync(self) -> bool:
        """Whether the in-process statistics describe the table's codes (count and id sum)."""
        n, s = self.db.execute("SELECT count(*), coalesce(sum(memory_id),0) FROM codes WHERE dim=?", (self.dim,)).fetchone()
        return (n, s) == (self.stats.n, self.stats.id_sum) and n == self.terms.n

    def save_stats(self, db: apsw.Connection) -> None:
        """Persist the running sums (inside the caller's transaction)."""
        c = self.stats
        db.execute(
            "INSERT OR REPLACE INTO hrr_stats(dim, n, id_sum, s, m, seq) VALUES (?,?,?,?,?,?)",
            (self.dim, c.n, c.id_sum, c.s.tobytes(), c.m.tobytes(), self.seq),
        )
        self._stored = (c, c.changes, self.seq)
        self._changes = 0

    def stats_stored(self, trim_to: int) -> bool:
        """Whether the sums in memory are the stored ones and the stored row stays usable once
        the change log is trimmed to ``trim_to`` (its position is not older): then a save
        would rewrite the same megabytes (8 MB at D=512) and can be skipped. Call it after
        catching up with the log, so that no other writer's change is missing."""
        st = self._stored
        return st is not None and st[0] is self.stats and st[1] == self.stats.changes and st[2] >= trim_to

    # -- reading ---------------------------------------------------------------------------
    def idf(self, word: str) -> float:
        """``ln(1 + N / (df + 0.5))`` over the memories with events (rare words weigh more)."""
        return math.log1p(self.stats.n / (self.df.get(word, 0) + 0.5))

    def coded(self, members: set[int] | frozenset[int] | None = None) -> int:
        """Memories with a structural code, in the store or among ``members``."""
        if members is None:
            return self.stats.n
        return self.terms.count_of(members)

    def verb_bits(self, members: set[int] | frozenset[int] | None = None) -> VerbBits:
        """The information of verbs among the store's content events, or a scope's
        (``members``, as in :meth:`query`)."""
        if members is not None and len(members) <= SLOT_SCOPE_OWN_STATS:
            q8, _, df = self._scope_codes(members)
            if len(q8) >= SCOPE_OWN_MIN:
                return VerbBits(lambda v: df.get(VERB_KEY + v, 0), lambda: df.get(VERB_KEY, 0),
                                lambda: df.get(VERB_KEY * 2, 0))
        # the store's counts as they are when asked (a reload replaces the dict)
        return VerbBits(lambda v: self.df.get(VERB_KEY + v, 0), lambda: self.df.get(VERB_KEY, 0),
                        lambda: self.df.get(VERB_KEY * 2, 0))

    def query(self, events, members: set[int] | frozenset[int] | None = None) -> StructQuery | None:
        """The turn's events prepared against this store's word weights, or a scope's
        (``members``, up to :data:`SLOT_SCOPE_OWN_STATS`: its own memory and word counts); None without
        events."""
        if not events:
            return None
        if members is None or len(members) > SLOT_SCOPE_OWN_STATS:
            return self.encoder.query(events, self.idf)
        q8, _, df = self._scope_codes(members)
        n = len(q8)
        if n < SCOPE_OWN_MIN:
            return self.encoder.query(events, self.idf)
        return self.encoder.query(events, lambda w: math.log1p(n / (df.get(w, 0) + 0.5)))

    def candidates(self, sq: StructQuery, min_score: float, limit: int,
                   allowed: set[int] | frozenset[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Memories whose exact alignment with the turn can put them at ``min_score`` or above
        on the store's score scale, heaviest alignment first (at most ``limit``, among
        ``allowed`` when given): (ids, alignments). Alignment a scores ``a x gain / norm``
        (gain <= 1, see :meth:`StructureEncoder.expected_score`), so ``a >= min_score x norm``
        is necessary."""
        bound = 1.0 if self.encoder.length_power <= 0.5 else math.inf
        thr = max(min_score * sq.norm / bound, 1e-9) if math.isfinite(bound) else 1e-9
        return self.terms.query(sq.hashes, sq.wts, thr, limit, allowed)

    def z_stats(self, sq: StructQuery, members: set[int] | frozenset[int] | None = None) -> tuple[float, float, int]:
        """``(mean, std, n)`` of the turn's code score over the store's memories with a code,
        or over ``members`` (a scope) when given: a scope's gate stands on its own
        population, as it would in a store holding only that scope (one of fewer than
        :data:`SCOPE_OWN_MIN` coded memories borrows the store's). The store's from the
        running sums (O(D^2)); a scope's from its codes (read once per change of the store and
        kept for the last :data:`SCOPE_CACHE` scopes), exact up to :data:`SLOT_SCOPE_OWN_STATS`
        members; a larger scope uses the store's (documented bound: its z is on the store's
        scale)."""
        if members is None or len(members) > SLOT_SCOPE_OWN_STATS:
            mean, std = self.stats.z_stats(sq.vector)
            return mean, std, self.stats.n
        q8, scale, _ = self._scope_codes(members)
        if len(q8) < SCOPE_OWN_MIN:  # too few to have statistics of their own: the store's
            mean, std = self.stats.z_stats(sq.vector)
            return mean, std, self.stats.n
        sc = K.sims_q8_many(q8, np.asarray(sq.vector, np.float32)[None, :])[0].astype(np.float64) * scale
        return float(sc.mean()), float(sc.std()), len(sc)

    def _scope_codes(self, members) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
        """The scope's int8 codes, their scales and its word counts (cached per store change)."""
        seq = self.db.execute("SELECT coalesce(max(seq), 0) FROM change_log").fetchone()[0]
        key = (seq, frozenset(members))
        got = self._scope_cache.get(key)
        if got is None:
            rows = self.db.execute("SELECT c.code, c.nterms, e.events FROM codes c JOIN events e ON e.memory_id=c.memory_id "
                                   "WHERE c.dim=? AND c.memory_id IN (SELECT value FROM json_each(?))",
                                   (self.dim, json.dumps(sorted(members)))).fetchall()
            q8 = np.frombuffer(b"".join(r[0] for r in rows), np.int8).reshape(len(rows), 2 * self.dim)
            df: dict[str, int] = {}
            for r in rows:
                for w, c in event_counts(json.loads(r[2])).items():
                    df[w] = df.get(w, 0) + c
            got = (q8, np.asarray(self.encoder.scale(np.asarray([r[1] for r in rows])), np.float64), df)
            self._scope_cache[key] = got
            while len(self._scope_cache) > SCOPE_CACHE:
                self._scope_cache.pop(next(iter(self._scope_cache)))
        return got

    def code_scores(self, sq: StructQuery, rows) -> dict[int, float]:
        """The code score (scaled, as the statistics see it) of each ``(id, code blob, nterms)``."""
        if not rows:
            return {}
        q8 = np.frombuffer(b"".join(r[1] for r in rows), np.int8).reshape(len(rows), 2 * self.dim)
        sc = K.sims_q8_many(q8, np.asarray(sq.vector, np.float32)[None, :])[0]
        scale = self.encoder.scale(np.asarray([r[2] for r in rows]))
        return {int(r[0]): float(v * s) for r, v, s in zip(rows, sc, scale)}

    def events(self, mid: int) -> list:
        row = self.db.execute("SELECT events FROM events WHERE memory_id=?", (mid,)).fetchone()
        return json.loads(row[0]) if row else []

    def events_from_edges(self, mid: int) -> list:
        """Events of a memory derived from its stored facts (stores older than events)."""
        ts = [Triple(s, rel, o, None if st == "?" else st, None if ot == "?" else ot)
              for s, st, rel, o, ot in self.db.execute(
                  "SELECT s.name, s.type, e.rel, o.name, o.type FROM edges e JOIN nodes s ON s.id=e.subj "
                  "JOIN nodes o ON o.id=e.obj WHERE e.memory_id=? ORDER BY e.pos", (mid,))]
        return events_from_triples(ts)

    # -- writing (inside the caller's transaction) -----------------------------------------
    def stage(self, db: apsw.Connection, mid: int, events: list, pending: StructuralChanges,
              stored: StoredCode | None = None) -> None:
        """Write one memory's events, code and terms; count its words into ``pending``.
        ``stored``: its code as this encoder made it already (an import), used as given."""
        self.stage_many(db, [mid], [events], pending, None if stored is None else [stored])

    def begin_sums(self, events: Sequence[list], stored: Sequence[StoredCode | None] | None) -> SumsAhead | None:
        """For a bulk load whose codes are all given (an import's): their statistics begun
        now, on a thread, before its transaction (:meth:`stage_many` takes them with
        ``ahead=``). None when it is not one (fewer than :data:`AHEAD_MIN` codes, or one is to
        be computed)."""
        if stored is None:
            return None
        codes = [c for evs, c in zip(events, stored) if evs]  # the codes stage_many counts, in its order
        if len(codes) < AHEAD_MIN or any(c is None or len(c.q8) != 2 * self.dim for c in codes):
            return None
        return self.stats.ahead(np.stack([np.frombuffer(c.q8, np.int8) for c in codes]),
                                self.encoder.scale(np.asarray([c.nterms for c in codes])))

    def stage_many(self, db: apsw.Connection, ids: Sequence[int], events: Sequence[list], pending: StructuralChanges,
                   stored: Sequence[StoredCode | None] | None = None, ahead: SumsAhead | None = None,
                   failed=None, plots: Sequence | None = None) -> None:
        """:meth:`stage` for a batch (one statement per table). ``ahead``: the statistics of
        these codes begun before (:meth:`begin_sums`). ``failed(i, exc)``: a memory whose code
        cannot be made is left without events and code and reported (None: raise). ``plots``:
        each memory's plot vectors or None (:mod:`fastmem.analogy.plots`)."""
        if plots is not None:
            pending.plots.added += P.write(db, [(mid, v) for mid, v in zip(ids, plots) if v is not None])
        ev_rows, code_rows, counted = [], [], []
        for i, (mid, evs) in enumerate(zip(ids, events)):
            if not evs:
                continue
            code = None if stored is None else stored[i]
            if code is None or len(code.q8) != 2 * self.dim:
                try:
                    code = stored_code(self.encoder, evs)
                except Exception as exc:
                    if failed is None:
                        raise
                    failed(i, exc)
                    continue
                if code is None:  # events that make no term: nothing to encode
                    continue
            ev_rows.append((mid, json.dumps(evs)))  # (verb, subjects, objects); tuples store as lists
            q8, hashes = np.frombuffer(code.q8, np.int8), np.frombuffer(code.terms, np.int64)
            code_rows.append((mid, self.dim, code.q8, code.nterms, code.terms))
            pending.codes.append((mid, q8, code.nterms, hashes))
            counted.append(evs)
        count_events(pending.df, counted)
        if ahead is not None and not pending.removed and pending.ahead is None and ahead.rows == len(pending.codes):
            pending.ahead = ahead
        elif len(pending.codes) >= AHEAD_MIN and not pending.removed and pending.ahead is None:
            pending.ahead = self.stats.ahead(np.stack([c[1] for c in pending.codes]),
                                             self.encoder.scale(np.asarray([c[2] for c in pending.codes])))
        db.executemany("INSERT OR REPLACE INTO events(memory_id, events) VALUES (?,?)", ev_rows)
        db.executemany("INSERT OR REPLACE INTO codes(memory_id, dim, code, nterms, terms) VALUES (?,?,?,?,?)",
                       code_rows)

    def stage_forget(self, db: apsw.Connection, mid: int, pending: StructuralChanges, *, delete: bool = False) -> None:
        """Uncount a memory's words and code (its rows go with the memory by cascade, or now
        when ``delete``: the memory stays and gets new events)."""
        row = db.execute("SELECT events FROM events WHERE memory_id=?", (mid,)).fetchone()
        if row:
            for w, c in event_counts(json.loads(row[0])).items():
                pending.df[w] = pending.df.get(w, 0) - c
        code = db.execute("SELECT code, nterms FROM codes WHERE memory_id=? AND dim=?", (mid, self.dim)).fetchone()
        if code is not None:
            pending.removed.append((mid, np.frombuffer(code[0], np.int8), code[1]))
        pending.plots.removed.append(int(mid))  # its row goes with the memory, or now
        if delete:
            db.execute("DELETE FROM events WHERE memory_id=?", (mid,))
            db.execute("DELETE FROM codes WHERE memory_id=?", (mid,))
            P.drop(db, mid)

    @staticmethod
    def write_df(db: apsw.Connection, delta: dict[str, int]) -> None:
        """Add ``delta`` to the stored word counts (words that reach zero are deleted)."""
        if not delta:
            return
        db.executemany(
            "INSERT INTO event_df(word, n) VALUES (?1, ?2) ON CONFLICT(word) DO UPDATE SET n = n + ?2",
            list(delta.items()),
        )
        if any(v < 0 for v in delta.values()):
            db.execute("DELETE FROM event_df WHERE n <= 0")

    def apply(self, pending: StructuralChanges) -> None:
        """After commit: the in-process terms, statistics and counts catch up with ``pending``."""
        for w, d in pending.df.items():
            n = self.df.get(w, 0) + d
            if n > 0:
                self.df[w] = n
            else:
                self.df.pop(w, None)
        if pending.removed:  # first: an updated memory is removed, then added again
            ids = np.asarray([r[0] for r in pending.removed], np.int64)
            self.stats.remove(ids, np.stack([r[1] for r in pending.removed]),
                              self.encoder.scale(np.asarray([r[2] for r in pending.removed])))
            self.terms.remove(ids.tolist())
        if pending.codes:
            ids = np.asarray([c[0] for c in pending.codes], np.int64)
            if pending.ahead is not None and pending.ahead.usable(self.stats, len(ids)):  # summed on its thread
                self.stats.add(ids, None, None, ahead=pending.ahead)
            else:
                self.stats.add(ids, np.stack([c[1] for c in pending.codes]),
                               self.encoder.scale(np.asarray([c[2] for c in pending.codes])))
            self.terms.add_many([c[0] for c in pending.codes], [c[3] for c in pending.codes])
        self._changes += len(pending.codes) + len(pending.removed)
        self.plots.apply(pending.plots)

    def save_due(self) -> bool:
        """Whether the statistics are due to be persisted: every :data:`STATS_SAVE_EVERY`
        changes. The saved sums are only used when they match the codes on open (else they are
        recomputed from the codes), so saving only makes a reopen after a crash cheaper."""
        return self._changes >= STATS_SAVE_EVERY

    # -- maintenance -----------------------------------------------------------------------
    def ensure_version(self, store, parse, progress) -> None:
        """Stores written by an older encoder are re-encoded once, from their stored events
        (or, for stores older than events, from their stored facts); stores whose events were
        read by older rules (:data:`fastmem.reader.extract.EVENTS_VERSION`) are parsed again once,
        when a parser is given (a progress bar shows it: about 300 memories a second)."""
        want = str(StructureEncoder.version)
        events = str(EVENTS_VERSION)
        reparse = parse is not None and store.get_setting("events_version") != events
        if store.get_setting("struct_version") == want and not reparse:
            return
        if self.db.execute("SELECT count(*) FROM memories").fetchone()[0]:
            self.rebuild(store.atomic, parse, reparse=reparse, progress=progress)
        with store.atomic():
            store.set_setting("struct_version", want)
            if parse is not None:
                store.set_setting("events_version", events)

    def rebuild(self, atomic, parse, *, reparse: bool, progress: bool | None) -> int:
        """Recompute every code, term list and the word counts in one transaction (``atomic()``:
        the caller's door, yielding its connection); returns how many memories have a code.
        ``parse(texts) -> [(triples, events)]`` re-extracts events when ``reparse`` (None: keep
        stored events); memories without stored events get them from their facts."""
        rows = self.db.execute(
            "SELECT m.id, m.text, ev.events FROM memories m LEFT JOIN events ev ON ev.memory_id=m.id "
            "WHERE m.id NOT IN (SELECT memory_id FROM pending) ORDER BY m.id"  # pending: derived later
        ).fetchall()
        parsed: dict[int, list] = {}
        if reparse and parse is not None:
            pb = bar(len(rows), "reading events again", progress)
            for start in range(0, len(rows), 256):
                part = rows[start : start + 256]
                for (mid, _, _), (_, ev) in zip(part, parse([t for _, t, _ in part])):
                    parsed[mid] = ev
                if pb:
                    pb.update(len(part))
            if pb:
                pb.close()
        b = bar(len(rows), "re-encoding structure", progress)
        todo = [(mid, parsed[mid] if mid in parsed else json.loads(ev) if ev is not None else self.events_from_edges(mid))
                for mid, _, ev in rows]
        pending = StructuralChanges()
        with atomic() as db:
            db.execute("DELETE FROM codes")
            db.execute("DELETE FROM event_df")
            for i, (mid, ev) in enumerate(todo):
                if not ev:
                    db.execute("DELETE FROM events WHERE memory_id=?", (mid,))
                self.stage(db, mid, ev, pending)
                if b and i % 256 == 255:
                    b.update(256)
            self.write_df(db, pending.df)
            db.execute("DELETE FROM hrr_stats")
        if b:
            b.close()
        self.stats = CodeStats(self.dim)
        self.terms = TermIndex()
        self.df = {}
        ids = np.asarray([c[0] for c in pending.codes], np.int64)
        if len(ids):
            self.stats.add(ids, np.stack([c[1] for c in pending.codes]), self.encoder.scale(np.asarray([c[2] for c in pending.codes])))
            self.terms.build(ids, [c[3] for c in pending.codes])
        for w, d in pending.df.items():
            self.df[w] = d
        self.plots.load()
        return self.stats.n
