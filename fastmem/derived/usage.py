"""Use-driven ranking: the weight formula, the inferred-engagement rule and the ledger.

Weight of a memory (multiplies its fused score in every channel and in the analogy slot)::

    w = BASE ** tanh((engaged - ignored / IGNORE_RATIO) / SCALE)

with ``BASE = 1.5``, ``IGNORE_RATIO = 3``, ``SCALE = 3``. So w lies in (1/1.5, 1.5): a memory
engaged six times gets about x1.47, one ignored thirty times about x0.67, and an unused one
exactly x1. The bound means feedback alone can never bury a memory: a query that names it
still ranks it first in the keyword and vector channels, which outweighs the factor. Age
never enters.

Inferred engagement: a memory surfaced in a session at turn t counts as *engaged* when one of
the next ``WINDOW`` turns of that session (``Session.observe``) reuses it, i.e.

* shares at least ``MIN_SHARED_WORDS`` distinctive words with it (content words of 4+
  letters that appear in the memory; leading ``Name:`` labels such as "User: Caroline:"
  are not words of either), or
* has embedding cosine of at least ``MIN_COSINE`` with it;

and as *ignored* when ``WINDOW`` turns pass without that. A turn with fewer than
``MIN_SHARED_WORDS`` distinctive words ("ok", "7 May 2023") cannot show that a memory went
unused: it may engage one (by the cosine), ignores none, and is not counted in the window.
Each outcome counts once per memory and session: a conversation that keeps surfacing a
memory and moving on sinks it as much as one turn doing so (``engaged`` and ``ignored`` count
conversations), so weights follow many conversations, never one long one.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np

from ..errors import InvalidInput, NotFound
from ..util.bounded import Bounded
from ..util.text import content_words, without_labels

__all__ = ["weight", "distinctive", "Ledger", "Session"]

BASE = 1.5
IGNORE_RATIO = 3.0
SCALE = 3.0
WINDOW = 2
MIN_SHARED_WORDS = 2
MIN_COSINE = 0.55
#: ledger rows kept; older events are deleted (their counts live on in ``usage``): the table
#: holds at most MAX_EVENTS + TRIM_SLACK rows, whichever processes write it
MAX_EVENTS = 50_000
TRIM_SLACK = 1_000
#: Sessions whose turn counter a process keeps.
SESSIONS = 10_000


def weight(engaged: int, ignored: int) -> float:
    """The use weight (see module docstring)."""
    return BASE ** math.tanh((engaged - ignored / IGNORE_RATIO) / SCALE)


def trust(w: float) -> float:
    """A use weight on a 0-1 scale (the holographic provider's trust): 0.5 for an unused
    memory, towards 1 as it is engaged, towards 0 as it is ignored (``(1 + log_BASE w) / 2``)."""
    return round((1.0 + math.log(w) / math.log(BASE)) / 2.0, 4)


def distinctive(words: list[str]) -> set[str]:
    return {w for w in words if len(w) >= 4 and not w.isdigit()}


def add_rows(db, ids) -> None:
    """The usage rows of new memories (nothing surfaced yet)."""
    db.executemany("INSERT INTO usage(memory_id) VALUES (?)", [(mid,) for mid in ids])


def drop_events(db, mid: int) -> None:
    """A forgotten memory's surfacing events (its usage row goes by cascade)."""
    db.execute("DELETE FROM usage_events WHERE memory_id=?", (mid,))


def restore(db, mid: int, surfaced: int, engaged: int, ignored: int, last_surfaced) -> None:
    """An imported memory's counters, as exported; its weight follows from them."""
    db.execute("UPDATE usage SET surfaced=?, engaged=?, ignored=?, last_surfaced=?, weight=? WHERE memory_id=?",
               (surfaced, engaged, ignored, last_surfaced, weight(engaged, ignored), mid))


def history(db, mid: int, limit: int = 50) -> list[dict]:
    """A memory's newest use events, newest first: when it was surfaced (``ts``), in which
    session and turn, by which channel, and the outcome (``"engaged"``, ``"ignored"``, or
    None while the next turn has not told)."""
    names = {1: "engaged", 0: "ignored", None: None}
    return [{"ts": ts, "session": session, "turn": turn, "channel": channel, "outcome": names.get(outcome)}
            for ts, session, turn, channel, outcome in db.execute(
                "SELECT ts, session, turn, channel, outcome FROM usage_events WHERE memory_id=? ORDER BY id DESC LIMIT ?",
                (mid, limit))]


def extremes(db, scope: str | None, limit: int = 20) -> tuple[list[tuple], list[tuple]]:
    """The memories that rose most and sank most by use: two lists of ``(id, weight,
    engaged, ignored, text)``, highest weight first and lowest weight first (only memories
    whose weight left 1)."""
    where = " AND m.scope=?" if scope is not None else ""
    args = (scope,) if scope is not None else ()
    sql = ("SELECT m.id, u.weight, u.engaged, u.ignored, m.text FROM usage u JOIN memories m ON m.id=u.memory_id "
           "WHERE u.weight {} 1.0" + where + " ORDER BY u.weight {}, m.id DESC LIMIT ?")
    return ([tuple(r) for r in db.execute(sql.format(">", "DESC"), args + (limit,))],
            [tuple(r) for r in db.execute(sql.format("<", "ASC"), args + (limit,))])


def timeline(db, scope: str | None, bins: int = 60) -> tuple[str, list[tuple[float, int, int, int]]]:
    """Use events over the ledger's whole span in at most ``bins`` equal steps of a second, a
    minute, an hour or a day (the smallest that fits): ``(step name, [(step start, surfaced, engaged,
    ignored)])``, oldest first; steps without events are left out."""
    join = " JOIN memories m ON m.id=e.memory_id AND m.scope=?" if scope is not None else ""
    args = (scope,) if scope is not None else ()
    lo, hi = db.execute("SELECT min(e.ts), max(e.ts) FROM usage_events e" + join, args).fetchone()
    if lo is None:
        return "day", []
    name, width = next(((n, w) for n, w in (("second", 1), ("minute", 60), ("hour", 3600), ("day", 86400))
                        if (hi - lo) / w < bins), ("days", 86400 * math.ceil((hi - lo) / 86400 / bins + 1e-9)))
    rows = db.execute(
        "SELECT CAST(e.ts / ? AS INTEGER) b, count(*), sum(e.outcome=1), sum(e.outcome=0) FROM usage_events e" + join
        + " GROUP BY b ORDER BY b", (width,) + args).fetchall()
    return name, [(b * width, n, int(eng or 0), int(ign or 0)) for b, n, eng, ign in rows]


def fill_missing(db) -> None:
    """Repair: a usage row for every memory without one, and every weight recomputed."""
    db.execute("INSERT INTO usage(memory_id) SELECT id FROM memories WHERE id NOT IN (SELECT memory_id FROM usage)")
    db.executemany("UPDATE usage SET weight=? WHERE memory_id=?",
                   [(weight(e, i), mid) for mid, e, i in db.execute("SELECT memory_id, engaged, ignored FROM usage")])


class Ledger:
    """The usage ledger of one store: what each recall surfaced, what came of it, and the
    resulting use weights.

    Tables ``usage`` (per memory: surfaced, engaged, ignored, weight, last_surfaced) and
    ``usage_events`` (one row per memory surfaced by a recall, with its session, turn,
    channel and outcome; bounded to :data:`MAX_EVENTS` rows). ``weights`` keeps, in the
    process, the ``(weight, engaged, ignored)`` of every memory whose weight is not 1.
    """

    def __init__(self, db) -> None:
        self.db = db
        self.weights: dict[int, tuple[float, int, int]] = {}
        #: turn counters of the last SESSIONS sessions (an evicted one continues from its stored turns)
        self._turns: dict[str, int] = Bounded(SESSIONS)
        #: the outcomes each of the last SESSIONS sessions counted: {mid: (engaged, ignored)}
        self._own: dict[str, dict[int, tuple[int, int]]] = Bounded(SESSIONS)

    def load(self) -> None:
        self.weights = {
            mid: (w, e, i)
            for mid, w, e, i in self.db.execute("SELECT memory_id, weight, engaged, ignored FROM usage WHERE engaged>0 OR ignored>0")
        }

    def catch_up(self, mids) -> None:
        """Read the weights of ``mids`` again (other connections changed them: the change
        log's ``'use'`` part); None: every weight (:meth:`load`). The same weights as a
        :meth:`load`, without a pass over every usage row."""
        if mids is None:
            self.load()
            return
        if not mids:
            return
        mids = sorted(int(m) for m in mids)
        for mid in mids:
            self.weights.pop(mid, None)
        for mid, w, e, i in self.db.execute(
                "SELECT memory_id, weight, engaged, ignored FROM usage WHERE memory_id IN (SELECT value FROM json_each(?)) "
                "AND (engaged>0 OR ignored>0)", (json.dumps(mids),)):
            self.weights[mid] = (w, e, i)

    def carry_over(self, db, ids, counts) -> None:
        """Engagement counted elsewhere (an import from another system), inside the caller's
        transaction: per memory ``(engaged, ignored)``; weights are read again after it."""
        db.executemany("UPDATE usage SET engaged=?, ignored=?, weight=? WHERE memory_id=?",
                       [(e, i, weight(e, i), mid) for mid, (e, i) in zip(ids, counts) if e or i])

    def most_used(self, scope: str | None, limit: int) -> list[int]:
        """Ids by use weight, highest first (newest first among equals)."""
        sql = ("SELECT m.id FROM memories m JOIN usage u ON u.memory_id=m.id"
               + (" WHERE m.scope=?" if scope is not None else "") + " ORDER BY u.weight DESC, m.id DESC LIMIT ?")
        return [r[0] for r in self.db.execute(sql, ((scope,) if scope is not None else ()) + (limit,))]

    def forget(self, mid: int) -> None:
        self.weights.pop(mid, None)

    def _counted(self, session: str) -> dict[int, tuple[int, int]]:
        """What ``session`` counted, per memory ``(engaged, ignored)`` (each 0 or 1)."""
        own = self._own.get(session)
        if own is None:
            own = {}
            for mid, outcome in self.db.execute(
                    "SELECT DISTINCT memory_id, outcome FROM usage_events WHERE session=? AND outcome IS NOT NULL", (session,)):
                _mark(own, mid, bool(outcome))
            self._own[session] = own
        return own

    def weights_for(self, session: str | None):
        """The use weights a recall in ``session`` ranks by: those of every other
        conversation. A conversation's own verdicts rank the next ones, never its own later
        turns (a memory it engaged once would otherwise lead each of its turns after).
        Explicit :meth:`~fastmem.Memory.feedback` counts at once everywhere."""
        own = self._counted(session) if session is not None else None
        return _Others(self.weights, own) if own else self.weights

    # -- surfacing -------------------------------------------------------------------------
    def turn(self, session: str) -> int:
        """The current turn number of a session (continues across processes)."""
        if session not in self._turns:
            row = self.db.execute("SELECT max(turn) FROM usage_events WHERE session=?", (session,)).fetchone()
            self._turns[session] = int(row[0]) if row and row[0] is not None else 0
        return self._turns[session]

    def record(self, db, hits, analogy, session: str | None, channels: tuple[str, ...] | list[str] = ()) -> None:
        """Count what one recall surfaced (inside the caller's transaction ``db``), each hit under
        its best-ranked of ``channels`` (the recall channels that can surface a memory by
        themselves; the first of them on a tie) or ``"fused"`` when none of them found it."""
        if not hits and analogy is None:
            return
        turn = self.turn(session) if session is not None else None
        now = time.time()
        rows = []
        for h in hits:
            chans = [c for c in channels if c in h.why]
            ch = min(chans, key=lambda c: h.why[c]["rank"]) if chans else "fused"
            rows.append((h.id, session, turn, ch, now))
        if analogy is not None:
            rows.append((analogy.id, session, turn, "analogy", now))
        db.executemany("UPDATE usage SET surfaced=surfaced+1, last_surfaced=?2 WHERE memory_id=?1", [(r[0], now) for r in rows])
        db.executemany("INSERT INTO usage_events(memory_id, session, turn, channel, ts) VALUES (?,?,?,?,?)", rows)
        lo, top = db.execute("SELECT min(id), max(id) FROM usage_events").fetchone()  # both O(log n)
        if top - lo >= MAX_EVENTS + TRIM_SLACK:  # the store's own count, whoever wrote it
            db.execute("DELETE FROM usage_events WHERE id <= ?", (top - MAX_EVENTS,))

    # -- outcomes --------------------------------------------------------------------------
    def apply_outcome(self, db, mid: int, engaged: bool) -> tuple[float, int, int]:
        """Count one outcome (inside the caller's transaction ``db``); returns the new
        ``(weight, engaged, ignored)``, for :attr:`weights` once the transaction has committed
        (``Transaction.weighed``)."""
        row = db.execute("SELECT engaged, ignored FROM usage WHERE memory_id=?", (mid,)).fetchone()
        if row is None:
            raise NotFound(f"no memory with id {mid}")
        e, i = row[0] + int(engaged), row[1] + int(not engaged)
        w = weight(e, i)
        db.execute("UPDATE usage SET engaged=?, ignored=?, weight=? WHERE memory_id=?", (e, i, w, mid))
        return w, e, i

    def counters(self, mid: int) -> dict:
        row = self.db.execute("SELECT surfaced, engaged, ignored, weight, last_surfaced FROM usage WHERE memory_id=?", (mid,)).fetchone()
        if row is None:
            raise NotFound(f"no memory with id {mid}")
        out = dict(zip(("surfaced", "engaged", "ignored", "weight", "last_surfaced"), row))
        out["trust"] = trust(out["weight"])
        return out

    def observe(self, atomic, text: str, session: str, embed) -> dict[str, list[int]]:
        """Judge what the session's earlier turns surfaced by its next turn ``text`` (see the
        module docstring); ``embed(texts)`` embeds the turn only when something is pending.
        The verdicts are written in one transaction (``atomic()``: the caller's door, yielding
        its transaction); the weights, the session's counts and turn follow after it."""
        turn = self.turn(session)
        pending = self.db.execute(
            "SELECT ue.id, ue.memory_id, ue.turn, m.text, e.vec FROM usage_events ue JOIN memories m ON m.id=ue.memory_id "
            "LEFT JOIN embeddings e ON e.memory_id=ue.memory_id WHERE ue.session=? AND ue.outcome IS NULL AND ue.turn<=?",
            (session, turn),
        ).fetchall()
        tw = distinctive(content_words(without_labels(text)))
        # a turn too short to share MIN_SHARED_WORDS distinctive words with anything ("ok",
        # "7 May 2023") can show reuse (by the cosine) but not its absence: it judges nothing
        # ignored and the window does not count it
        telling = len(tw) >= MIN_SHARED_WORDS
        if not pending:
            if telling:
                self._turns[session] = turn + 1
            return {"engaged": [], "ignored": []}
        tv = embed([text])[0]
        own = self._counted(session)  # counted once per outcome and session (module docstring)
        res: dict[str, list[int]] = {"engaged": [], "ignored": []}
        counted: list[tuple[int, bool]] = []
        decided: dict[int, bool] = {}
        weights: dict[int, tuple[float, int, int]] = {}
        with atomic() as tx:
            db = tx.db
            for eid, mid, eturn, mtext, v in pending:
                shared = len(tw & distinctive(content_words(without_labels(mtext))))
                cos = float(np.dot(np.frombuffer(v, np.float32), tv)) if v is not None else 0.0
                if shared >= MIN_SHARED_WORDS or cos >= MIN_COSINE:
                    outcome = True
                elif telling and turn + 1 - eturn >= WINDOW:
                    outcome = False
                else:
                    continue
                db.execute("UPDATE usage_events SET outcome=? WHERE id=?", (int(outcome), eid))
                if mid in decided:  # one verdict per memory per turn
                    continue
                decided[mid] = outcome
                res["engaged" if outcome else "ignored"].append(mid)
                if not own.get(mid, (0, 0))[0 if outcome else 1]:
                    weights[mid] = self.apply_outcome(db, mid, outcome)
                    counted.append((mid, outcome))
            tx.weighed(weights)

            def follow():
                for mid, outcome in counted:
                    _mark(own, mid, outcome)
                if telling:
                    self._turns[session] = turn + 1
            tx.after(follow)
        return res


def _mark(own: dict[int, tuple[int, int]], mid: int, engaged: bool) -> None:
    e, i = own.get(mid, (0, 0))
    own[mid] = (1, i) if engaged else (e, 1)


class _Others:
    """``weights`` less one session's own counts (see :meth:`Ledger.weights_for`)."""

    __slots__ = ("base", "own")

    def __init__(self, base: dict[int, tuple[float, int, int]], own: dict[int, tuple[int, int]]) -> None:
        self.base, self.own = base, own

    def get(self, mid: int, default=None):
        got = self.base.get(mid, default)
        d = self.own.get(mid)
        if d is None or got is None:
            return got
        e, i = got[1] - d[0], got[2] - d[1]
        return None if (e, i) == (0, 0) and default is None else (weight(e, i), e, i)


class Session:
    """One conversation with a :class:`~fastmem.Memory`: recalls and the turns that follow.

    >>> s = mem.session("chat-1")
    >>> res = s.recall("what does Alice like?")
    >>> s.observe("Alice loves hiking, so let's plan a trail walk")   # engages what was used
    """

    def __init__(self, memory, session_id: str) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise InvalidInput("session id must be a non-empty str")
        self.memory = memory
        self.id = session_id

    def recall(self, query: str, **kw):
        """:meth:`Memory.recall` within this session (engagement inferred, no repeated analogy)."""
        return self.memory.recall(query, session=self.id, **kw)

    def observe(self, text: str) -> dict[str, list[int]]:
        """:meth:`Memory.host.observe` for this session's next turn."""
        return self.memory.host.observe(text, session=self.id)
