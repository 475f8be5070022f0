"""The write path: check, then parse and embed (no lock on the file), then one transaction.

:func:`prepare` does the slow, file-free work (the embedding and the parse of every text);
:func:`commit` writes the memories with their FTS rows (by trigger), embeddings, usage rows,
graph facts, events, structural codes and word counts in one transaction, all or nothing;
:func:`forget` is the only deletion. A write that must not wait for the models
(:func:`commit_rows`) commits the rows first and marks them ``pending``; :func:`commit_pending`
adds their derived parts later, in a transaction of its own. The in-process caches (vector index, codes, word
counts) catch up after the commit, so a failed transaction leaves nothing behind.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..analogy.code_store import StructuralChanges, StructureIndex
from ..derived import graph as G
from ..derived import usage as U
from ..derived import vectors as V
from ..derived import windows as X
from ..errors import InvalidInput, NotFound
from ..models.embedder import Embedder, checked, encode_with_windows
from ..reader import standing as S
from ..reader.canon import normalise_type
from ..reader.extract import Extractor, Triple, analyse_texts, events_from_triples, lemmatiser
from ..util.progress import bar
from ..util.text import check_str, check_text, from_epoch, to_epoch
from . import workers

__all__ = ["Prepared", "check_batch", "prepare", "commit", "commit_rows", "pending_rows", "commit_pending", "forget",
           "update", "row", "KEEP"]


@dataclass
class Prepared:
    """What a batch of texts becomes before it is written."""

    texts: list[str]
    vecs: np.ndarray  # (n, dim) float32, L2-normalised
    facts: list[list[Triple]]
    events: list[list]
    #: per text, its standing statement and the statement's own vector (None: the text's),
    #: or None (see :mod:`fastmem.reader.standing`); None for the whole batch: none detected
    standing: list | None = None
    #: per text, its window vectors when it is longer than one window (:mod:`fastmem.derived.windows`),
    #: else None; None for the whole batch: none
    windows: list | None = None
    #: per text, its structural code as stored (:class:`fastmem.analogy.code_store.StoredCode`,
    #: an import's: nothing to encode), or None to encode it from its events; None: all encoded
    codes: list | None = None

    def subset(self, keep: Sequence[int]) -> "Prepared":
        """The texts at positions ``keep``, with everything derived from them."""
        return Prepared([self.texts[j] for j in keep], self.vecs[list(keep)], [self.facts[j] for j in keep],
                        [self.events[j] for j in keep],
                        None if self.standing is None else [self.standing[j] for j in keep],
                        None if self.windows is None else [self.windows[j] for j in keep],
                        None if self.codes is None else [self.codes[j] for j in keep])


def _check_triples(ts, i: int, lemmatise) -> list[Triple] | None:
    if ts is None:
        return None
    if isinstance(ts, str) or not isinstance(ts, Sequence):
        raise InvalidInput(f"triples[{i}] must be a list of triples or None")
    out = []
    for t in ts:
        if isinstance(t, Triple):
            out.append(t)
            continue
        if isinstance(t, str) or not isinstance(t, Sequence) or len(t) not in (3, 5):
            raise InvalidInput(f"triples[{i}]: each triple is (subject, relation, object[, subject_type, object_type])")
        if not all(isinstance(x, str) and x.strip() for x in t[:3]):
            raise InvalidInput(f"triples[{i}]: subject, relation and object must be non-blank str")
        for x in t[:5]:
            if x is not None:
                check_str(x, f"triples[{i}]")
        if not all(x is None or isinstance(x, str) for x in t[3:5]):
            raise InvalidInput(f"triples[{i}]: types must be str or None")
        out.append(Triple(t[0], t[1], t[2], *(normalise_type(x) for x in t[3:5])))
    return [Triple(t.subject, lemmatise(t.relation.strip()), t.object, t.subject_type, t.object_type) for t in out]


def check_speaker(speaker, what: str = "speaker") -> str | None:
    """A speaker as stored: None, or a non-blank name of at most :data:`MAX_SPEAKER_CHARS`
    characters (surrounding white space removed); raises :class:`InvalidInput`."""
    if speaker is None:
        return None
    check_str(speaker, what)
    name = speaker.strip()
    if not name:
        raise InvalidInput(f"{what} is blank (give a name or None)")
    if len(name) > MAX_SPEAKER_CHARS:
        raise InvalidInput(f"{what} has {len(name)} characters, more than {MAX_SPEAKER_CHARS}")
    return name


#: The longest speaker name ``remember`` takes.
MAX_SPEAKER_CHARS = 200


def check_speakers(speaker, n: int) -> list[str | None]:
    """``remember_many``'s ``speaker``: one value for every text, or a list of one per text."""
    if isinstance(speaker, (list, tuple)):
        if len(speaker) != n:
            raise InvalidInput(f"speaker has {len(speaker)} entries for {n} texts")
        return [check_speaker(s, f"speaker[{i}]") for i, s in enumerate(speaker)]
    return [check_speaker(speaker)] * n


def check_kinds(kind, n: int) -> list[str | None] | None:
    """``remember_many``'s ``kind``: None (detect), one of :data:`fastmem.reader.standing.KINDS` for
    every text, or a list of one (or None) per text. None when nothing is given."""
    def one(k, what):
        if k is not None and k not in S.KINDS:
            raise InvalidInput(f"{what} must be None or one of {', '.join(S.KINDS)}; got {k!r}")
        return k
    if isinstance(kind, (list, tuple)):
        if len(kind) != n:
            raise InvalidInput(f"kind has {len(kind)} entries for {n} texts")
        got = [one(k, f"kind[{i}]") for i, k in enumerate(kind)]
        return got if any(k is not None for k in got) else None
    return None if one(kind, "kind") is None else [kind] * n


def kinds_for(kinds: list[str | None] | None, speakers: list[str | None]) -> list[str | None] | None:
    """A host's kinds, with :data:`fastmem.reader.standing.SKIP` where none was given and the speaker
    is the assistant (:data:`fastmem.reader.standing.ASSISTANT_SPEAKERS`)."""
    skip = [sp is not None and sp.strip().lower() in S.ASSISTANT_SPEAKERS for sp in speakers]
    if not any(skip):
        return kinds
    base = kinds if kinds is not None else [None] * len(speakers)
    return [S.SKIP if k is None and sk else k for k, sk in zip(base, skip)]


def check_batch(texts, *, scope, meta, triples, extractor: Extractor | None, source=None,
                at=None) -> tuple[list, str, list[float | None]]:
    """Validate a ``remember_many`` call; returns the caller's triples per text (None:
    extract), the meta as JSON and when each text happened (unix seconds or None).
    Raises :class:`InvalidInput` before anything is written (``speaker``: see
    :func:`check_speakers`)."""
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InvalidInput("texts must be a sequence of str (use remember() for one text)")
    for i, t in enumerate(texts):
        check_text(t, f"texts[{i}]")
    check_str(scope, "scope")
    if source is not None:
        check_str(source, "source")
    if isinstance(at, (list, tuple)):
        if len(at) != len(texts):
            raise InvalidInput(f"at has {len(at)} entries for {len(texts)} texts")
        when = [to_epoch(a, f"at[{i}]") for i, a in enumerate(at)]
    else:
        when = [to_epoch(at)] * len(texts)
    if triples is not None:
        if isinstance(triples, str) or not isinstance(triples, Sequence):
            raise InvalidInput("triples must be a list (one entry per text) or None")
        if len(triples) != len(texts):
            raise InvalidInput(f"triples has {len(triples)} entries for {len(texts)} texts")
    lem = lemmatiser(extractor) if triples is not None and any(t is not None for t in triples) else None
    given = [None if triples is None else _check_triples(triples[i], i, lem) for i in range(len(texts))]
    return given, encode_meta(meta), when


def encode_meta(meta) -> str:
    """Metadata as stored: a JSON object; raises :class:`InvalidInput` for anything else."""
    try:
        return json.dumps(dict(meta or {}))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"meta must be a JSON-serialisable mapping: {exc}") from exc


#: From this many texts on, the parse runs on the parse thread while the model embeds (below
#: it one after the other is faster; figures in ``docs/defaults.md``).
OVERLAP_MIN = 16


def prepare(texts: Sequence[str], given: list, embedder: Embedder, extractor: Extractor | None,
            progress: bool | None, kinds: Sequence[str | None] | None = None) -> Prepared:
    """Embed and parse ``texts`` (parts of 512 when a progress bar is shown, else one), with
    each text's standing statement (``kinds``: a host's ``kind=`` per text, None to detect);
    see :data:`OVERLAP_MIN`."""
    b = bar(len(texts), "remembering", progress)
    step = 512 if b else max(len(texts), 1)
    vecs = np.empty((len(texts), embedder.dim), np.float32)
    facts: list[list[Triple]] = []
    events: list[list] = []
    found: list = []
    wins: list = []
    for start in range(0, len(texts), step):
        part = list(texts[start : start + step])
        need = [j for j in range(len(part)) if given[start + j] is None]
        todo = [part[j] for j in need] if (need and extractor) else []
        parsing = workers.submit(analyse_texts, extractor, todo) if len(todo) >= OVERLAP_MIN else None
        part_vecs, part_wins = encode_with_windows(embedder, part)
        vecs[start : start + len(part)] = part_vecs
        wins.extend(part_wins)
        got = parsing.result() if parsing is not None else (analyse_texts(extractor, todo) if todo else [])
        ex = dict(zip(need, got))
        for j in range(len(part)):
            g = given[start + j]
            fs, ev, st = (g, events_from_triples(g), None) if g is not None else ex.get(j, ([], [], None))
            facts.append(fs)
            events.append(ev)
            found.append(st)
        if b:
            b.update(len(part))
    if b:
        b.close()
    return Prepared(list(texts), vecs, facts, events, _statements(texts, vecs, found, kinds, embedder),
                    wins if any(w is not None for w in wins) else None)


def _statements(texts, vecs, found: list, kinds, embedder: Embedder) -> list | None:
    """``(statement, its sentence's vector or None)`` per text (None: none), a host's kind
    first; the sentences that are not their whole text embedded in one batch."""
    sts = [None if kinds is not None and kinds[i] == S.SKIP else
           S.explicit(kinds[i], texts[i], f) if kinds is not None and kinds[i] is not None else f
           for i, f in enumerate(found)]
    if not any(st is not None for st in sts):
        return None if kinds is None else [(S.PLAIN, None) if k == "plain" else None for k in kinds]
    own = [i for i, st in enumerate(sts) if st is not None and st.sentence != texts[i].strip()]
    sv = dict(zip(own, checked(embedder.encode([sts[i].sentence for i in own]), len(own), embedder.dim))) if own else {}
    out = [None if st is None else (st, sv.get(i)) for i, st in enumerate(sts)]
    if kinds is not None:
        out = [(S.PLAIN, None) if k == "plain" else o for k, o in zip(kinds, out)]
    return out


def _each(x, n: int) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x] * n


def _insert_rows(db, texts: Sequence[str], *, scope, source, meta_json, at, speaker, ids, now: float,
                 times=None) -> list[int]:
    """The memories' rows (FTS rows by trigger) and usage rows; returns their ids.
    ``times``: per text ``(created, updated)`` (an import's); else both ``now``."""
    n = len(texts)
    scopes, sources, metas, speakers = _each(scope, n), _each(source, n), _each(meta_json, n), _each(speaker, n)
    new_ids = [r[0] for r in db.executemany(
        "INSERT INTO memories(id, text, scope, source, created, updated, meta, at, speaker) "
        "VALUES (?,?,?,?,?,?,?,?,?) RETURNING id",
        [(None if ids is None else ids[i], text, scopes[i], sources[i], *(times[i] if times is not None else (now, now)),
          metas[i], None if at is None else at[i], speakers[i]) for i, text in enumerate(texts)])]
    U.add_rows(db, new_ids)
    return new_ids


def _insert_derived(db, ids: Sequence[int], prep: Prepared, model_id: str, structure: StructureIndex,
                    pending: StructuralChanges) -> None:
    """Embeddings, graph facts, events, codes and word counts of memories whose rows exist."""
    V.put(db, ids, prep.vecs, model_id)
    G.add_facts_many(db, ids, prep.facts)
    structure.stage_many(db, ids, prep.events, pending, prep.codes)
    structure.write_df(db, pending.df)
    if prep.windows is not None:
        X.write(db, [(mid, w) for mid, w in zip(ids, prep.windows) if w is not None])
    if prep.standing is not None:  # a host's kind= (written with the row) is kept
        S.write(db, [(mid, *st) for mid, st in zip(ids, prep.standing) if st is not None and st[0] is not None],
                replace=False)


def commit(store, prep: Prepared, *, scope, source, meta_json, model_id: str, structure: StructureIndex,
           at: Sequence[float | None] | None = None, ids: Sequence[int] | None = None,
           speaker=None, times=None, on_ids=None) -> tuple[list[int], StructuralChanges]:
    """Write a prepared batch in one transaction; returns the new ids and the structural
    changes to apply (:meth:`StructureIndex.apply`) once it has committed.

    ``scope``, ``source``, ``meta_json`` and ``speaker`` are one value for all or a list (one per text);
    ``ids`` asks for these ids (a restore), otherwise the store assigns them; ``times`` gives
    each text's ``(created, updated)`` (a restore), otherwise now. ``on_ids(ids)`` is called
    inside the transaction as soon as the ids are known (a bulk load starts its index build)."""
    pending = StructuralChanges()
    with store.atomic() as db:
        ids = _insert_rows(db, prep.texts, scope=scope, source=source, meta_json=meta_json, at=at, speaker=speaker,
                           ids=ids, now=time.time(), times=times)
        if on_ids is not None:
            on_ids(ids)
        _insert_derived(db, ids, prep, model_id, structure, pending)
    return ids, pending


def _triples_json(ts: list[Triple] | None) -> str | None:
    return None if ts is None else json.dumps([[t.subject, t.relation, t.object, t.subject_type, t.object_type]
                                               for t in ts])


def commit_rows(store, texts: Sequence[str], given: list, *, scope, source, meta_json,
                at: Sequence[float | None] | None = None, speaker=None, kinds=None) -> list[int]:
    """Write memories *before* their derived parts, in one transaction that needs no model:
    the rows, their FTS rows (keyword recall finds them at once) and usage rows, and a
    ``pending`` row each (with the caller's triples) for :func:`commit_pending` to finish;
    a host's ``kinds`` (its statements take the memory's vector once it is derived).
    Returns the new ids."""
    with store.atomic() as db:
        ids = _insert_rows(db, texts, scope=scope, source=source, meta_json=meta_json, at=at, speaker=speaker,
                           ids=None, now=time.time())
        db.executemany("INSERT INTO pending(memory_id, triples) VALUES (?,?)",
                       [(mid, _triples_json(g)) for mid, g in zip(ids, given)])
        if kinds is not None:
            S.write(db, [(mid, S.PLAIN if k in ("plain", S.SKIP) else S.explicit(k, t, None), None)
                         for mid, t, k in zip(ids, texts, kinds) if k is not None])
    return ids


def pending_rows(db, limit: int, after: int = 0) -> list[tuple[int, str, list[Triple] | None]]:
    """Up to ``limit`` pending memories with ids above ``after``: ``(id, text, triples)``,
    ``triples`` None where they are to be extracted."""
    out = []
    for mid, text, ts in db.execute(
            "SELECT p.memory_id, m.text, p.triples FROM pending p JOIN memories m ON m.id=p.memory_id "
            "WHERE p.memory_id>? ORDER BY p.memory_id LIMIT ?", (after, limit)):
        out.append((mid, text, None if ts is None else [Triple(*t) for t in json.loads(ts)]))
    return out


def commit_pending(store, ids: Sequence[int], prep: Prepared, *, model_id: str,
                   structure: StructureIndex) -> tuple[list[int], np.ndarray, StructuralChanges]:
    """Finish pending memories in one transaction: those of ``ids`` that are still pending
    with the text ``prep`` was made from (another process may have finished, changed or
    forgotten one meanwhile) get their embedding, facts, events and code, and leave
    ``pending``. Returns the ids finished, their vectors and the structural changes."""
    pending = StructuralChanges()
    with store.atomic() as db:
        now = dict(db.execute(
            "SELECT p.memory_id, m.text FROM pending p JOIN memories m ON m.id=p.memory_id "
            "WHERE p.memory_id IN (SELECT value FROM json_each(?))", (json.dumps([int(i) for i in ids]),)))
        keep = [j for j, mid in enumerate(ids) if now.get(mid) == prep.texts[j]]
        done = [int(ids[j]) for j in keep]
        part = prep.subset(keep)
        if done:
            _insert_derived(db, done, part, model_id, structure, pending)
            db.executemany("DELETE FROM pending WHERE memory_id=?", [(mid,) for mid in done])
    return done, part.vecs, pending


def forget(store, mid: int, structure: StructureIndex) -> StructuralChanges:
    """Delete one memory with its vector, facts (orphaned entities too), code and usage in
    one transaction; raises :class:`NotFound`. Returns the structural changes to apply."""
    pending = StructuralChanges()
    with store.atomic() as db:
        if db.execute("SELECT 1 FROM memories WHERE id=?", (mid,)).fetchone() is None:
            raise NotFound(f"no memory with id {mid}")
        structure.stage_forget(db, mid, pending)
        structure.write_df(db, pending.df)
        nodes = G.drop_facts(db, mid)
        db.execute("DELETE FROM memories WHERE id=?", (mid,))
        U.drop_events(db, mid)
        G.drop_orphans(db, nodes)
    return pending


#: ``update(at=KEEP)`` leaves the time as it is (the same for ``speaker``).
KEEP = object()

ROW_KEYS = ("id", "text", "scope", "source", "created", "updated", "meta", "at", "speaker")


def update(store, mid: int, *, text: str | None, prep: Prepared | None, meta_json: str | None,
           at: float | None | object, model_id: str, structure: StructureIndex,
           speaker: str | None | object = KEEP) -> StructuralChanges:
    """Change a memory in place, in one transaction: a new ``text`` (with ``prep``, its
    embedding and parse) replaces the FTS row, vector, facts, events and code (with ``prep``
    None, the old derived parts go and the memory is pending again); ``meta_json``
    replaces the metadata; ``at`` (``KEEP`` to leave it) the time; ``speaker`` likewise (None
    clears it). Raises NotFound."""
    pending = StructuralChanges()
    with store.atomic() as db:
        if db.execute("SELECT 1 FROM memories WHERE id=?", (mid,)).fetchone() is None:
            raise NotFound(f"no memory with id {mid}")
        sets, args = ["updated=?"], [time.time()]
        if meta_json is not None:
            sets.append("meta=?")
            args.append(meta_json)
        if at is not KEEP:
            sets.append("at=?")
            args.append(at)
        if speaker is not KEEP:
            sets.append("speaker=?")
            args.append(speaker)
        if text is not None:
            sets.append("text=?")
            args.append(text)
            nodes = G.drop_facts(db, mid)
            S.drop(db, mid)
            X.drop(db, mid)
            structure.stage_forget(db, mid, pending, delete=True)
        db.execute(f"UPDATE memories SET {', '.join(sets)} WHERE id=?", (*args, mid))
        if text is not None and prep is None:  # derived later: the memory is pending again
            V.drop(db, mid)
            db.execute("INSERT OR REPLACE INTO pending(memory_id, triples) VALUES (?, NULL)", (mid,))
            G.drop_orphans(db, nodes)
        elif text is not None:
            V.put(db, [mid], prep.vecs[:1], model_id)
            db.execute("DELETE FROM pending WHERE memory_id=?", (mid,))  # derived now, from the new text
            if prep.facts[0]:
                G.add_facts(db, mid, prep.facts[0])
            G.drop_orphans(db, nodes)
            structure.stage(db, mid, prep.events[0], pending)
            if prep.standing is not None and prep.standing[0] is not None:
                S.write(db, [(mid, *prep.standing[0])])
            if prep.windows is not None and prep.windows[0] is not None:
                X.write(db, [(mid, prep.windows[0])])
        structure.write_df(db, pending.df)
    return pending


def text_index_problem(db) -> str | None:
    """What FTS5's integrity check says of the keyword index against the texts; None: agreed."""
    import apsw

    try:
        db.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")
    except apsw.Error as exc:
        return str(exc)
    return None


def rebuild_text_index(db) -> None:
    """Repair: the keyword index made again from the texts."""
    db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")


def row(db, mid: int) -> dict[str, Any]:
    """A memory's row as a dict (``meta`` decoded, ``at`` a UTC datetime or None); raises
    :class:`NotFound`."""
    r = db.execute("SELECT id, text, scope, source, created, updated, meta, at, speaker FROM memories WHERE id=?",
                   (mid,)).fetchone()
    if r is None:
        raise NotFound(f"no memory with id {mid}")
    d = dict(zip(ROW_KEYS, r))
    d["meta"] = json.loads(d["meta"])
    d["at"] = from_epoch(d["at"])
    return d



def encode_metas(meta, n: int) -> str | list[str]:
    """``meta`` for ``n`` memories as stored: one mapping (or None) for all, or one mapping or
    JSON object text per memory."""
    if meta is None or isinstance(meta, dict) or (not isinstance(meta, (list, tuple)) and hasattr(meta, "keys")):
        return encode_meta(meta)
    if not isinstance(meta, (list, tuple)) or len(meta) != n:
        raise InvalidInput(f"meta must be a mapping, or one mapping (or JSON object text) per memory ({n})")
    out = []
    for m in meta:
        if isinstance(m, str):
            try:
                ok = isinstance(json.loads(m), dict)
            except ValueError:
                ok = False
            if not ok:
                raise InvalidInput(f"meta text must be a JSON object, got {m[:80]!r}")
            out.append(m)
        else:
            out.append(encode_meta(m))
    return out


# -- marks of batches written (resumable imports: Ray jobs, a host's one-time import) ---------
_MARKS = ("CREATE TABLE IF NOT EXISTS ingest_log(job TEXT NOT NULL, batch INTEGER NOT NULL, rows INTEGER NOT NULL, "
          "at REAL NOT NULL, PRIMARY KEY(job, batch)) WITHOUT ROWID")


def check_mark(mark) -> tuple[str, int]:
    if (not isinstance(mark, tuple) or len(mark) != 2 or not isinstance(mark[1], int) or isinstance(mark[1], bool)
            or mark[1] < 0):
        raise InvalidInput(f"mark must be a (job, batch) pair: a str and an int >= 0, got {mark!r}")
    return check_str(mark[0], "mark's job"), int(mark[1])


def _has_marks(db) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE name='ingest_log'").fetchone() is not None


def _legacy(db, job: str) -> bool:
    """fastmem 0.x recorded a host's one-time import as a setting named after the job (batch 0)."""
    return db.execute("SELECT 1 FROM settings WHERE key=?", (job,)).fetchone() is not None


def marked(db, job: str, batch: int) -> bool:
    """Whether ``(job, batch)`` was written (inside the caller's transaction)."""
    if batch == 0 and _legacy(db, job):
        return True
    return _has_marks(db) and db.execute("SELECT 1 FROM ingest_log WHERE job=? AND batch=?",
                                         (job, batch)).fetchone() is not None


def mark(db, job: str, batch: int, *, rows: int) -> None:
    """Record ``(job, batch)`` as written (inside the caller's transaction)."""
    db.execute(_MARKS)
    db.execute("INSERT INTO ingest_log(job, batch, rows, at) VALUES (?,?,?,?)", (job, batch, rows, time.time()))


def batches_done(db, job: str) -> set[int]:
    """The batches of ``job`` recorded by :func:`mark`."""
    got = {0} if _legacy(db, job) else set()
    if _has_marks(db):
        got.update(b for (b,) in db.execute("SELECT batch FROM ingest_log WHERE job=?", (job,)))
    return got


def batches_done_in_file(path: str, job: str) -> set[int]:
    """:func:`batches_done` read from a store file without opening it as a memory (read-only;
    an absent file has none)."""
    import os

    import apsw

    if not os.path.exists(path):
        return set()
    con = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        con.setbusytimeout(30_000)
        return batches_done(con, job)
    finally:
        con.close()


# -- reads for hosts ------------------------------------------------------------------------
def texts(db, *, scope: str | None, after: int, limit: int | None) -> list[tuple[int, str]]:
    sql = "SELECT id, text FROM memories WHERE id>?" + (" AND scope=?" if scope is not None else "") + " ORDER BY id"
    args: tuple = (after,) + ((scope,) if scope is not None else ())
    if limit is not None:
        sql += " LIMIT ?"
        args += (int(limit),)
    return [(int(i), t) for i, t in db.execute(sql, args)]


def ids_with_text(db, text: str, scope: str | None) -> list[int]:
    sql = "SELECT id FROM memories WHERE text=?" + (" AND scope=?" if scope is not None else "") + " ORDER BY id"
    return [r[0] for r in db.execute(sql, (text,) + ((scope,) if scope is not None else ()))]


def with_meta_key(db, key: str, scopes: list[str] | None) -> list[tuple[int, str, dict[str, Any]]]:
    sql = "SELECT id, scope, meta FROM memories WHERE json_extract(meta, '$.' || json_quote(?)) IS NOT NULL"
    args: tuple = (key,)
    if scopes is not None:
        sql += " AND scope IN (SELECT value FROM json_each(?))"
        args += (json.dumps(scopes),)
    return [(mid, sc, json.loads(meta)) for mid, sc, meta in db.execute(sql + " ORDER BY updated DESC, id DESC", args)]


def scopes(db) -> list[str]:
    return [r[0] for r in db.execute("SELECT DISTINCT scope FROM memories ORDER BY scope")]


def count(db, scope: str | None, source: str | None) -> int:
    where = [w for w, v in (("scope=?", scope), ("source=?", source)) if v is not None]
    return int(db.execute("SELECT count(*) FROM memories" + "".join(
        (" WHERE " if i == 0 else " AND ") + w for i, w in enumerate(where)),
                          tuple(v for v in (scope, source) if v is not None)).fetchone()[0])


def newest(db, scope: str | None, offset: int, limit: int) -> list[int]:
    """Ids newest first (highest id first), ``limit`` of them after skipping ``offset``."""
    if scope is None:
        return [r[0] for r in db.execute("SELECT id FROM memories ORDER BY id DESC LIMIT ? OFFSET ?", (limit, offset))]
    return [r[0] for r in db.execute("SELECT id FROM memories WHERE scope=? ORDER BY id DESC LIMIT ? OFFSET ?",
                                     (scope, limit, offset))]


def pending_count(db, scope: str | None) -> int:
    if scope is None:
        return int(db.execute("SELECT count(*) FROM pending").fetchone()[0])
    return int(db.execute("SELECT count(*) FROM pending p JOIN memories m ON m.id=p.memory_id WHERE m.scope=?",
                          (scope,)).fetchone()[0])


def with_meta(db, key: str, value, scope: str | None) -> list[tuple[int, str, dict[str, Any]]]:
    sql = ("SELECT id, text, meta FROM memories WHERE json_extract(meta, '$.' || json_quote(?)) IS ?"
           + (" AND scope=?" if scope is not None else "") + " ORDER BY id")
    rows = db.execute(sql, (key, value) + ((scope,) if scope is not None else ())).fetchall()
    return [(mid, text, json.loads(meta)) for mid, text, meta in rows]
