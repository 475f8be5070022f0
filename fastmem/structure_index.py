"""The store's structural side: every memory's events, its code, and the word counts.

Tables ``events`` (a memory's narrative events as JSON), ``codes`` (its int8 FHRR code and
number of terms), ``event_df`` (how many memories mention each verb or filler) and
``hrr_stats`` (the running sums of the codes, saved on flush). In the process they live as a
:class:`~fastmem.structure.CodeStore` and a dict of document counts, which
:class:`StructureIndex` keeps equal to the tables: writes are *staged* inside the caller's
transaction and *applied* to the in-process copies once it has committed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import apsw
import numpy as np

from . import kernels as K
from .extract import Triple, events_from_triples
from .progress import bar
from .structure import CodeStore, StructQuery, StructureEncoder, event_words

__all__ = ["StructureIndex", "Pending"]


@dataclass
class Pending:
    """Structural changes written in a transaction, to apply once it commits."""

    codes: list[tuple[int, np.ndarray, int]] = field(default_factory=list)  # (id, int8 code, n terms)
    df: dict[str, int] = field(default_factory=dict)
    removed: list[int] = field(default_factory=list)


class StructureIndex:
    """Events, codes and word counts of one store (see the module docstring).

    Parameters
    ----------
    db : apsw.Connection
        The store's connection.
    encoder : StructureEncoder
        Encodes events into codes (its ``dim`` is the store's).
    """

    def __init__(self, db: apsw.Connection, encoder: StructureEncoder) -> None:
        self.db = db
        self.encoder = encoder
        self.dim = encoder.dim
        self.codes = CodeStore(self.dim)
        self.df: dict[str, int] = {}

    # -- loading ---------------------------------------------------------------------------
    def load(self) -> None:
        """Read codes, their statistics (recomputed when the saved sums are stale) and counts."""
        rows = self.db.execute("SELECT memory_id, code, nterms FROM codes WHERE dim=? ORDER BY memory_id", (self.dim,)).fetchall()
        cs = CodeStore(self.dim)
        if rows:
            ids = np.asarray([r[0] for r in rows], np.int64)
            q8 = np.frombuffer(b"".join(r[1] for r in rows), np.int8).reshape(len(rows), 2 * self.dim)
            cs.add(ids, q8, self.encoder.scale(np.asarray([r[2] for r in rows])), update_stats=False)
        st = self.db.execute("SELECT n, id_sum, s, m FROM hrr_stats WHERE dim=?", (self.dim,)).fetchone()
        d2 = 2 * self.dim
        if st and st[0] == cs.n and st[1] == cs.id_sum:
            cs.s = np.frombuffer(st[2], np.float64).copy()
            cs.m = np.frombuffer(st[3], np.float64).reshape(d2, d2).copy()
        else:
            cs.recompute_stats()
        self.codes = cs
        self.df = dict(self.db.execute("SELECT word, n FROM event_df"))

    def in_sync(self) -> bool:
        """Whether the in-process codes are the table's (same count and id sum)."""
        n, s = self.db.execute("SELECT count(*), coalesce(sum(memory_id),0) FROM codes WHERE dim=?", (self.dim,)).fetchone()
        return (n, s) == (self.codes.n, self.codes.id_sum)

    def save_stats(self, db: apsw.Connection) -> None:
        """Persist the running sums (inside the caller's transaction)."""
        c = self.codes
        db.execute(
            "INSERT OR REPLACE INTO hrr_stats(dim, n, id_sum, s, m) VALUES (?,?,?,?,?)",
            (self.dim, c.n, c.id_sum, c.s.tobytes(), c.m.tobytes()),
        )

    # -- reading ---------------------------------------------------------------------------
    def idf(self, word: str) -> float:
        """``ln(1 + N / (df + 0.5))`` over the memories with events (rare words weigh more)."""
        return math.log1p(self.codes.n / (self.df.get(word, 0) + 0.5))

    def query(self, events) -> StructQuery | None:
        """The turn's events prepared against this store's word weights (None without events)."""
        return self.encoder.query(events, self.idf) if events else None

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
    def stage(self, db: apsw.Connection, mid: int, events: list, pending: Pending) -> None:
        """Write one memory's events and code; count its words into ``pending``."""
        if not events:
            return
        ev = [[e[0], list(e[1]), list(e[2])] for e in events]
        db.execute("INSERT OR REPLACE INTO events(memory_id, events) VALUES (?,?)", (mid, json.dumps(ev)))
        code, nterms = self.encoder.encode(ev)
        q8 = K.quantize(code.reshape(1, -1))[0]
        db.execute("INSERT OR REPLACE INTO codes(memory_id, dim, code, nterms) VALUES (?,?,?,?)",
                   (mid, self.dim, q8.tobytes(), nterms))
        pending.codes.append((mid, q8, nterms))
        for w in event_words(ev):
            pending.df[w] = pending.df.get(w, 0) + 1

    def stage_forget(self, db: apsw.Connection, mid: int, pending: Pending, *, delete: bool = False) -> None:
        """Uncount a memory's words (its rows go with the memory by cascade, or now when
        ``delete``: the memory stays and gets new events)."""
        row = db.execute("SELECT events FROM events WHERE memory_id=?", (mid,)).fetchone()
        if row:
            for w in event_words(json.loads(row[0])):
                pending.df[w] = pending.df.get(w, 0) - 1
        if delete:
            db.execute("DELETE FROM events WHERE memory_id=?", (mid,))
            db.execute("DELETE FROM codes WHERE memory_id=?", (mid,))
        pending.removed.append(mid)

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

    def apply(self, pending: Pending) -> None:
        """After commit: the in-process codes and counts catch up with ``pending``."""
        for w, d in pending.df.items():
            n = self.df.get(w, 0) + d
            if n > 0:
                self.df[w] = n
            else:
                self.df.pop(w, None)
        if pending.removed:  # first: an updated memory is removed, then added again
            self.codes.remove(pending.removed)
        if pending.codes:
            self.codes.add(np.asarray([c[0] for c in pending.codes], np.int64), np.stack([c[1] for c in pending.codes]),
                           self.encoder.scale(np.asarray([c[2] for c in pending.codes])))

    # -- maintenance -----------------------------------------------------------------------
    def ensure_version(self, store, parse, progress) -> None:
        """Stores written by an older encoder are re-encoded once, from their stored events
        (or, for stores older than events, from their stored facts)."""
        want = str(StructureEncoder.version)
        if store.get_setting("struct_version") == want:
            return
        if self.db.execute("SELECT count(*) FROM memories").fetchone()[0]:
            self.rebuild(store, parse, reparse=False, progress=progress)
        with store.atomic():
            store.set_setting("struct_version", want)

    def rebuild(self, store, parse, *, reparse: bool, progress: bool | None) -> int:
        """Recompute every code and the word counts; returns how many memories have a code.

        ``parse(texts) -> [(triples, events)]`` re-extracts events when ``reparse`` (None:
        keep stored events); memories without stored events get them from their facts.
        """
        rows = self.db.execute(
            "SELECT m.id, m.text, ev.events FROM memories m LEFT JOIN events ev ON ev.memory_id=m.id ORDER BY m.id"
        ).fetchall()
        b = bar(len(rows), "re-encoding structure", progress)
        parsed: dict[int, list] = {}
        if reparse and parse is not None:
            for start in range(0, len(rows), 256):
                part = rows[start : start + 256]
                for (mid, _, _), (_, ev) in zip(part, parse([t for _, t, _ in part])):
                    parsed[mid] = ev
        todo = [(mid, parsed[mid] if mid in parsed else json.loads(ev) if ev is not None else self.events_from_edges(mid))
                for mid, _, ev in rows]
        pending = Pending()
        with store.atomic() as db:
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
        self.codes = CodeStore(self.dim)
        self.df = {}
        self.apply(pending)
        return self.codes.n
