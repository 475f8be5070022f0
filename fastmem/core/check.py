"""Integrity of a store: the file, and every derived structure against the rows it derives from.

:func:`check` verifies, and with ``repair=True`` rebuilds what can be rebuilt:

* ``sqlite``     - ``PRAGMA integrity_check`` (not repairable here: restore a backup);
* ``fts``        - the FTS5 index against the memory texts (rebuilt from them);
* ``embeddings`` - one vector per memory that is not pending, of the store's model and dimension
  (re-embedded);
* ``pending``    - memories committed before their derived parts (``remember_many(wait=False)``)
  are a state, not damage: counted in ``counts["pending"]``; ``repair`` derives them;
* ``failed``     - memories a part of whose derivation failed (:mod:`fastmem.write.guard`: stored
  without their facts, events or code, or with nothing but their text) are a state too: listed
  in ``failed`` (one :class:`~fastmem.results.DeriveFailure` per memory and part) and counted in
  ``counts["failed"]``; ``repair`` derives them again;
* ``index``      - the hnswlib labels are exactly the stored vectors' ids, and their vectors
  are the stored ones (a sample of 256; every one with ``repair``) (reconciled or rebuilt);
* ``graph``      - no entity without a fact or category, no alias or edge to a missing entity
  (orphans dropped);
* ``usage``      - one usage row per memory, weights equal to the formula (recomputed);
* ``structure``  - a code for every memory with events, word counts equal to a recount, the
  running statistics equal to a recomputation (re-encoded from the stored events);
* ``chunks``     - every chunk's memory and members exist (dangling bookkeeping dropped).
"""

from __future__ import annotations

import json

import numpy as np

from ..analogy.codes import event_counts
from ..derived import graph as G
from ..derived import usage as U
from ..derived.vectors import stored_vectors
from ..passes import chunks as CH
from ..results import CheckReport, DeriveFailure, Problem
from ..storage import failures as F
from ..storage import memories as R

__all__ = ["Problem", "CheckReport", "check"]


def _sqlite(e) -> list[Problem]:
    rows = [r[0] for r in e.db.execute("PRAGMA integrity_check")]
    return [] if rows == ["ok"] else [Problem("sqlite", "; ".join(rows[:5]), repairable=False)]


def _fts(e) -> list[Problem]:
    problem = R.text_index_problem(e.db)
    return [Problem("fts", f"the keyword index disagrees with the texts ({problem})")] if problem else []


def _embeddings(e) -> list[Problem]:
    out = []
    missing = e.db.execute("SELECT count(*) FROM memories WHERE id NOT IN (SELECT memory_id FROM embeddings) "
                           "AND id NOT IN (SELECT memory_id FROM pending) "
                           "AND id NOT IN (SELECT memory_id FROM derive_failures WHERE part='all')").fetchone()[0]
    if missing:
        out.append(Problem("embeddings", f"{missing} memories have no vector and are not pending"))
    bad = e.db.execute("SELECT count(*) FROM embeddings WHERE model<>? OR dim<>? OR length(vec)<>?",
                         (e.embedder.model_id, e.embedder.dim, 4 * e.embedder.dim)).fetchone()[0]
    if bad:
        out.append(Problem("embeddings", f"{bad} vectors are of another model or size"))
    return out


#: Vectors compared with their rows by a plain check (all of them with ``repair``).
CONTENT_SAMPLE = 256


def _index(e, full: bool = False) -> list[Problem]:
    ids = np.fromiter((r[0] for r in e.db.execute("SELECT memory_id FROM embeddings")), np.int64)
    have = np.asarray(e.index.labels(), np.int64)
    missing, stale = np.setdiff1d(ids, have), np.setdiff1d(have, ids)
    out = []
    if len(missing):
        out.append(Problem("index", f"{len(missing)} stored vectors are missing from the vector index"))
    if len(stale):
        out.append(Problem("index", f"{len(stale)} index entries have no stored vector"))
    both = np.intersect1d(ids, have)
    if len(both) > CONTENT_SAMPLE and not full:  # content: a sample is cheap, every vector with repair
        both = np.sort(np.random.default_rng().choice(both, CONTENT_SAMPLE, replace=False))
    differ = 0
    for start in range(0, len(both), 4096):
        part = both[start : start + 4096]
        got = np.asarray(e.index.get(part), np.float32)
        want = stored_vectors(e.db, part, e.index.dim)
        differ += int(np.sum(np.max(np.abs(got - want), axis=1) > 1e-5))
    if differ:
        out.append(Problem("index", f"{differ} index vectors differ from their stored rows"))
    return out


def _graph(e) -> list[Problem]:
    db = e.db
    out = []
    orphans = db.execute(
        "SELECT count(*) FROM nodes n WHERE n.type<>'category' AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.subj=n.id OR e.obj=n.id)"
    ).fetchone()[0]
    if orphans:
        out.append(Problem("graph", f"{orphans} entities have no fact"))
    dangling = db.execute(
        "SELECT count(*) FROM edges WHERE subj NOT IN (SELECT id FROM nodes) OR obj NOT IN (SELECT id FROM nodes) "
        "OR memory_id NOT IN (SELECT id FROM memories)").fetchone()[0]
    if dangling:
        out.append(Problem("graph", f"{dangling} facts point at missing entities or memories"))
    return out


def _usage(e) -> list[Problem]:
    db = e.db
    out = []
    missing = db.execute("SELECT count(*) FROM memories WHERE id NOT IN (SELECT memory_id FROM usage)").fetchone()[0]
    if missing:
        out.append(Problem("usage", f"{missing} memories have no usage row"))
    wrong = sum(1 for _, w, e, i in db.execute("SELECT memory_id, weight, engaged, ignored FROM usage")
                if abs(w - U.weight(e, i)) > 1e-9)
    if wrong:
        out.append(Problem("usage", f"{wrong} use weights differ from their counts"))
    return out


def _structure(e) -> list[Problem]:
    db = e.db
    out = []
    no_code = db.execute("SELECT count(*) FROM events WHERE memory_id NOT IN (SELECT memory_id FROM codes)").fetchone()[0]
    if no_code:
        out.append(Problem("structure", f"{no_code} memories with events have no structural code"))
    df: dict[str, int] = {}
    for ev, in db.execute("SELECT events FROM events"):
        for w, c in event_counts(json.loads(ev)).items():
            df[w] = df.get(w, 0) + c
    stored = dict(db.execute("SELECT word, n FROM event_df"))
    if stored != df:
        diff = len(set(stored.items()) ^ set(df.items()))
        out.append(Problem("structure", f"word counts differ from a recount ({diff} entries)"))
    no_terms = db.execute("SELECT count(*) FROM codes WHERE terms IS NULL").fetchone()[0]
    if no_terms:
        out.append(Problem("structure", f"{no_terms} structural codes have no stored terms"))
    stored_plots = {r[0] for r in db.execute("SELECT memory_id FROM plots")}
    if set(e.structure.plots.ids.tolist()) != stored_plots or e.structure.plots.n != len(stored_plots):
        out.append(Problem("structure", "the in-process plots differ from the stored plots"))
    if not e.structure.in_sync():
        out.append(Problem("structure", "the in-process terms or statistics differ from the stored codes"))
    else:
        if not e.structure.terms_match_table():  # e.g. postings read from a file beside the store
            out.append(Problem("structure", "the in-process term postings differ from the stored terms"))
        c, fresh = e.structure.stats, e.structure.recompute_stats()
        drift = max(float(np.max(np.abs(c.s - fresh.s), initial=0.0)), float(np.max(np.abs(c.m - fresh.m), initial=0.0)))
        if drift > 1e-6 * max(1, c.n):
            out.append(Problem("structure", f"running statistics drifted from a recomputation ({drift:.3g})"))
    return out


def _chunks(e) -> list[Problem]:
    n = e.db.execute("SELECT count(*) FROM chunk_members WHERE member_id NOT IN (SELECT id FROM memories) "
                       "OR chunk_id NOT IN (SELECT memory_id FROM chunks)").fetchone()[0]
    return [Problem("chunks", f"{n} chunk memberships point at missing memories")] if n else []


CHECKS = {"sqlite": _sqlite, "fts": _fts, "embeddings": _embeddings, "index": _index, "graph": _graph,
          "usage": _usage, "structure": _structure, "chunks": _chunks}


def _repair(e, part: str) -> None:
    """Rebuild one part, each through the engine's write door."""
    if part == "embeddings":
        e.reembed(progress=False)
    elif part == "index":
        e.rebuild_index(progress=False)
    elif part == "structure":
        e.rebuild_structure(False, progress=False)
    else:
        with e.transaction() as tx:
            if part == "fts":
                R.rebuild_text_index(tx.db)
            elif part == "graph":
                G.drop_dangling(tx.db)
                tx.graph_changed()
            elif part == "usage":
                U.fill_missing(tx.db)
                tx.usage_changed()
            elif part == "chunks":
                CH.drop_dangling(tx.db)


def check(e, *, repair: bool = False, parts=None) -> CheckReport:
    """Verify the store of engine ``e`` (:class:`fastmem.core.engine.Engine`); see the module docstring.

    With ``repair``, every repairable part that failed is rebuilt and checked again; the
    report's ``problems`` are what is still wrong, ``repaired`` what was fixed.
    """
    rep = CheckReport()
    rep.counts = {t: e.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                  for t in ("memories", "embeddings", "pending", "nodes", "edges", "codes", "chunks", "categories")}
    if repair and rep.counts["pending"]:
        e.derive_until(None)
    if repair and F.count(e.db):
        e.rederive_failed()
    rep.failed = [DeriveFailure(*r) for r in F.listed(e.db)]
    rep.counts["failed"] = len({f.memory_id for f in rep.failed})
    for part in parts or CHECKS:
        found = _index(e, full=repair) if part == "index" else CHECKS[part](e)
        if found and repair and all(p.repairable for p in found):
            _repair(e, part)
            again = CHECKS[part](e)
            rep.repaired += [p for p in found]
            found = again
        rep.problems += found
    return rep
