"""Standing statements in the store: the ``standing`` table (written here only) and the
recall-time index over it. What a statement is and how one is found at write time:
:mod:`fastmem.reader.standing`.

**Standing recall** (:class:`StandingIndex`): every recall returns the scope's active
statements as a profile, at most ``k``: each statement is embedded on its own (the sentence,
not the whole message) and scored against the turn by the cosine of their embeddings plus
:data:`TOPIC_BONUS` per topic word the turn shares, best first, newest first among equals, with
no relevance bar (a conditional instruction and the later request that meets its condition
in other words are no nearer by embedding than a statement and an unrelated request: the
host's model judges which applies). A *global* statement (a format, length, tone, language or persona with no condition:
:func:`fastmem.reader.standing.reach_of`) applies to every turn and is returned first.
**Supersession**: a newer statement of the same kind on the same topic replaces an older one
(same topic: their embeddings' cosine at least :data:`SAME_TOPIC` with a topic word in
common, or at least :data:`SAME_TOPIC_ALONE`; "newer": a later ``at``, else a later write).
So "use unittest from now on" replaces "please use pytest, not unittest, whenever you write
tests", whatever their polarity; the older one is never shown, and the newer one names it in
``Standing.supersedes``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence

import numpy as np

from ..reader.standing import Statement, reach_of
from ..results import Standing

__all__ = ["StandingIndex", "MATCH_MIN", "TOPIC_BONUS", "SAME_TOPIC", "SAME_TOPIC_ALONE", "write", "drop", "exported",
           "vector_of", "reembed"]

#: Least match (cosine plus topic bonus) of earlier releases' relevance bar (no longer applied:
#: every active statement is returned, best first; kept for code that read it).
MATCH_MIN = 0.25
#: Added to the cosine per topic word the turn shares with the statement (at most two count).
TOPIC_BONUS = 0.08
#: Two statements share a topic: embeddings' cosine at least this and a topic word in common...
SAME_TOPIC = 0.35
#: ...or a cosine at least this alone.
SAME_TOPIC_ALONE = 0.75


# -- the table -------------------------------------------------------------------------------
def write(db, rows: Sequence[tuple], *, replace: bool = True) -> None:
    """Store statements: ``(memory id, statement, its sentence's vector or None for the
    memory's own)``. ``replace=False`` keeps a statement already there (a host's ``kind=``)."""
    verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
    db.executemany(
        f"{verb} INTO standing(memory_id, kind, polarity, sentence, topic, focus, vec) VALUES (?,?,?,?,?,?,?)",
        [(mid, st.kind, st.polarity, st.sentence, " ".join(st.topic), st.focus,
          None if v is None else np.asarray(v, np.float32).tobytes()) for mid, st, v in rows])


def exported(db, *, vectors: bool = False) -> dict[int, dict]:
    """Every stored statement as an export carries it: ``{memory id: {kind, polarity,
    sentence, topic, focus}}`` (``kind="plain"``: a host said none), with ``vectors`` its
    sentence's own vector (base64 float32) where it has one."""
    out = {}
    for mid, k, p, st, t, f, v in db.execute(
            "SELECT memory_id, kind, polarity, sentence, topic, focus, vec FROM standing"):
        out[mid] = {"kind": k, "polarity": p, "sentence": st, "topic": t.split(), "focus": f}
        if vectors and v is not None:
            out[mid]["vector"] = base64.b64encode(v).decode()
    return out


def vector_of(d: dict, dim: int) -> np.ndarray | None:
    """The exported sentence vector of a statement (:func:`exported`), when present and of ``dim``."""
    b = d.get("vector")
    if not b:
        return None
    v = np.frombuffer(base64.b64decode(b), np.float32)
    return v if v.shape == (dim,) else None


def reembed(db, ids: Sequence[int], embedder) -> None:
    """Embed again, with ``embedder``, the sentences of ``ids``' statements that have their
    own vector (the store's model changed)."""
    rows = db.execute("SELECT memory_id, kind, polarity, sentence, topic, focus FROM standing WHERE vec IS NOT NULL "
                      "AND memory_id IN (SELECT value FROM json_each(?))", (json.dumps([int(i) for i in ids]),)).fetchall()
    if rows:  # written again (not updated in place): a new rev, so readers reload
        vecs = embedder.encode([r[3] for r in rows])
        write(db, [(r[0], Statement(r[1], r[2], r[3], tuple(r[4].split()), r[5]), v) for r, v in zip(rows, vecs)])


def drop(db, mid: int) -> None:
    """Forget a memory's statement (its text changed)."""
    db.execute("DELETE FROM standing WHERE memory_id=?", (mid,))


# -- recall ----------------------------------------------------------------------------------
class StandingIndex:
    """The store's standing statements in memory: their vectors, topics and supersession,
    reloaded when the table changed (its largest ``rev``, which every write raises, or its row
    count). One per open store."""

    def __init__(self, db) -> None:
        self.db = db
        self._key = None
        self._rows: list[tuple] = []  # (mid, text, sentence, kind, polarity, at, scope, topic set, reach)
        self._vecs = np.zeros((0, 0), np.float32)
        self._live = np.zeros(0, bool)
        self._supersedes: dict[int, tuple[int, ...]] = {}

    def _load(self) -> None:
        key = self.db.execute("SELECT max(rev), count(*) FROM standing").fetchone()
        if key == self._key:
            return
        rows, vecs = [], []
        for mid, text, sentence, kind, pol, topic, focus, v, mv, at, created, scope in self.db.execute(
                "SELECT s.memory_id, m.text, s.sentence, s.kind, s.polarity, s.topic, s.focus, s.vec, e.vec, m.at, "
                "m.created, m.scope FROM standing s JOIN memories m ON m.id=s.memory_id LEFT JOIN embeddings e "
                "ON e.memory_id=s.memory_id WHERE s.kind != 'plain'"):
            blob = v if v is not None else mv
            if blob is None:  # pending: no vector yet
                continue
            words = topic.split()
            rows.append((mid, text, sentence, kind, pol, at if at is not None else created, scope,
                         frozenset(words), reach_of(kind, words, focus or "", sentence)))
            vecs.append(np.frombuffer(blob, np.float32))
        self._rows = rows
        self._vecs = np.vstack(vecs) if vecs else np.zeros((0, 0), np.float32)
        self._supersede()
        self._key = key

    def _supersede(self) -> None:
        """Which statements a newer one of the same kind and topic replaces (per scope)."""
        n = len(self._rows)
        live = np.ones(n, bool)
        sup: dict[int, list[int]] = {}
        if n:
            sims = self._vecs @ self._vecs.T
            order = sorted(range(n), key=lambda i: (self._rows[i][5], self._rows[i][0]))
            for a_pos, i in enumerate(order):
                ri = self._rows[i]
                for j in order[a_pos + 1:]:
                    rj = self._rows[j]
                    if rj[3] != ri[3] or rj[6] != ri[6]:
                        continue
                    s = sims[i, j]
                    if s >= SAME_TOPIC_ALONE or (s >= SAME_TOPIC and ri[7] & rj[7]):
                        live[i] = False
                        sup.setdefault(rj[0], []).append(ri[0])
                        break
        self._live = live
        self._supersedes = {k: tuple(v) for k, v in sup.items()}

    def match(self, vec: np.ndarray | None, words: frozenset[str], *, scope: str | None, members=None,
              k: int = 3) -> list[Standing]:
        """The scope's standing statements for a turn (embedded as ``vec``, its lower-case words
        ``words``), a profile: the global ones (every turn of their scope) first, newest first,
        then the topical ones, the most relevant to the turn first (no relevance bar: among a
        scope's few statements the one that applies is often no nearer the turn than the
        others); at most ``k``. ``scope``/``members`` confine them as recall's hits are."""
        if vec is None or k <= 0:
            return []
        self._load()
        if not self._rows:
            return []
        sims = self._vecs @ np.asarray(vec, np.float32)
        out = []
        for i, r in enumerate(self._rows):
            if not self._live[i] or (scope is not None and r[6] != scope) or (members is not None and r[0] not in members):
                continue
            score = float(sims[i]) + TOPIC_BONUS * min(2, len(r[7] & words))
            out.append(Standing(r[0], r[1], r[2], r[3], r[4], round(score, 4), r[5],
                                self._supersedes.get(r[0], ()), r[8]))
        out.sort(key=lambda s: (s.reach != "global", -s.at if s.reach == "global" else -s.score, -s.at))
        return out[:k]
