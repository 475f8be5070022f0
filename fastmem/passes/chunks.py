"""Chunks: memories that keep co-occurring, compressed into one memory that stands for them.

The consolidation pass (:func:`plan`, then :func:`create` / :func:`update` per cluster):

1. *Mentions*: each memory's named entities - the nodes of its own facts and every known
   alias its text mentions (1-4 word n-grams), people, organisations, places and unnamed
   proper nouns only (common nouns, dates and amounts link too much to mean anything).
2. *Hubs*: an entity mentioned by more than ``max(hub_min, hub_share x N)`` memories of the
   scope links everything to everything; it is left out (and reported).
3. *Links*: two memories are linked when they share at least ``min_shared`` entities (a
   sparse product of the memory x entity incidence matrix, so the cost follows the entity
   counts, never N^2), or when they were engaged together in the same turn at least
   ``min_engaged`` times (the usage ledger).
4. *Clusters*: connected components of the links (``scipy.sparse.csgraph``) with at least
   ``min_size`` members; a component over ``max_size`` is split into Louvain communities
   (networkx, fixed seed, so reruns agree).
5. Each cluster becomes a chunk memory whose text is the summariser's, whose facts are the
   members' facts (copied edges: no new entities) and whose events and code come from its
   text, so it is recalled like any memory. Bookkeeping lives in ``chunks`` and
   ``chunk_members``; members are never changed. A cluster equal to an existing chunk's
   members leaves it alone; one that overlaps an existing chunk (Jaccard >= 0.5) updates it
   (new text, members, version + 1).

Recall lets a chunk stand for its members (:func:`fastmem.recall.stand_in.stand_in`); ``Memory.expand`` returns
them and ``Memory.chunks.dissolve`` deletes the chunk memory, which takes its bookkeeping with it.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field

import apsw
import numpy as np

from ..analogy.code_store import StructuralChanges, StructureIndex
from ..derived import graph as G
from ..errors import InvalidInput
from ..reader.canon import fold_name
from ..results import ConsolidationReport
from ..util.progress import bar
from ..util.text import MAX_TEXT_CHARS, STOPWORDS, words
from ..write import commit as C
from ..write.prepare import Prepared, prepare

__all__ = ["ConsolidationReport", "Cluster", "run", "plan", "create", "update", "members", "summary"]

#: Node types that name something (``?``: a proper noun the parser could not type).
_NAMED = ("person", "organisation", "place", "group", "event", "?")


@dataclass
class Cluster:
    """A planned chunk: its scope, members (ids, written order), the entities they share,
    and what to do (``create``, ``update`` an existing chunk, or ``same``)."""

    scope: str
    members: list[int]
    names: list[str] = field(default_factory=list)
    action: str = "create"
    chunk_id: int | None = None


def run(db: apsw.Connection, store, synced, transaction, *, embedder, extractor, structure: StructureIndex,
        scope: str | None, summarizer, progress: bool | None, budget: int) -> ConsolidationReport:
    """The consolidation pass (:meth:`fastmem.Memory.consolidate`): plan the clusters of every
    scope (or of ``scope``), then summarise, embed and parse the new and changed ones in
    batches outside the lock and write each chunk in its own ``transaction()`` (the memory's:
    the in-process index, scopes and codes follow each COMMIT). ``synced()`` holds the store's
    lock, caught up with other processes' commits."""
    t0 = time.perf_counter()
    with synced(), store.snapshot():  # one state of the file: another process may forget meanwhile
        names = [scope] if scope is not None else [r[0] for r in db.execute("SELECT DISTINCT scope FROM memories")]
        n = db.execute("SELECT count(*) FROM memories").fetchone()[0]
        b = bar(n, "finding clusters", progress)
        plans, hubs = [], []
        for sc in names:
            got, hub = plan(db, sc, progress=b.update if b else None)
            plans += got
            hubs += hub
        if b:
            b.close()
    done: dict[str, list[int]] = {"create": [], "update": [], "same": []}
    done["same"] = [cl.chunk_id for cl in plans if cl.action == "same"]
    todo = [cl for cl in plans if cl.action != "same"]
    name = str(getattr(summarizer, "name", type(summarizer).__name__))
    b = bar(len(todo), "writing chunks", progress, unit="chunk")
    for start in range(0, len(todo), 64):  # summaries, embeddings and parses in batches, outside the lock
        batch = todo[start : start + 64]
        with synced():  # a cluster a member of which was forgotten since the plan waits for the next run
            part = [cl for cl in batch if _intact(db, cl)]
        texts = [summary(summarizer, db, cl, budget) for cl in part]
        prep = prepare(texts, [None] * len(texts), embedder, extractor, False)
        for i, cl in enumerate(part):
            one = Prepared([texts[i]], prep.vecs[i : i + 1], [prep.facts[i]], [prep.events[i]])
            with transaction() as tx:  # one transaction per chunk
                if not _intact(tx.db, cl):
                    continue
                if cl.action == "create":
                    cl.chunk_id, pending = create(tx.db, one, cl, summarizer=name, model_id=embedder.model_id,
                                                  structure=structure)
                    tx.added([cl.chunk_id], one.vecs, cl.scope)
                else:
                    pending = update(tx.db, one, cl, summarizer=name, model_id=embedder.model_id,
                                     structure=structure)
                    tx.revectored([cl.chunk_id], one.vecs)
                tx.structure(pending)
            done[cl.action].append(cl.chunk_id)
        if b:
            b.update(len(batch))
    if b:
        b.close()
    with synced():
        listed = set(done["create"] + done["update"] + done["same"])
        rest = [r[0] for r in db.execute("SELECT memory_id FROM chunks" + (" WHERE scope=?" if scope is not None else ""),
                                         (scope,) if scope is not None else ()) if r[0] not in listed]
    return ConsolidationReport(tuple(done["create"]), tuple(done["update"]), tuple(sorted(done["same"] + rest)),
                               len(plans), tuple(sorted(set(hubs))), time.perf_counter() - t0)


def _intact(db: apsw.Connection, cl: Cluster) -> bool:
    """Whether every member of a planned cluster is still in the store."""
    n = db.execute("SELECT count(*) FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                   (json.dumps(cl.members),)).fetchone()[0]
    return n == len(cl.members)


def signature(members) -> str:
    return hashlib.sha1(",".join(str(m) for m in sorted(members)).encode()).hexdigest()


def _alias_index(db: apsw.Connection) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for alias, nid in db.execute(
        "SELECT a.alias, a.node_id FROM aliases a JOIN nodes n ON n.id=a.node_id WHERE n.type IN "
        "(SELECT value FROM json_each(?))", (json.dumps(_NAMED),)
    ):
        if len(alias) >= 3 and alias not in STOPWORDS and not alias.isdigit():
            out.setdefault(alias, []).append(nid)
    return out


def _mentions(text: str, aliases: dict[str, list[int]]) -> set[int]:
    toks = words(text)
    found: set[int] = set()
    for n in (1, 2, 3, 4):
        for i in range(len(toks) - n + 1):
            g = " ".join(toks[i : i + n])
            hit = aliases.get(g) or aliases.get(fold_name(g))
            if hit:
                found.update(hit)
    return found


def plan(db: apsw.Connection, scope: str, *, min_size: int = 3, max_size: int = 12, min_shared: int = 2,
         min_engaged: int = 2, hub_share: float = 0.05, hub_min: int = 50, progress=None) -> tuple[list[Cluster], list[str]]:
    """Clusters of one scope and what to do with each; also the hub entities left out.
    Reads only."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rows = db.execute(
        "SELECT id, text FROM memories WHERE scope=? AND id NOT IN (SELECT memory_id FROM chunks) ORDER BY id", (scope,)
    ).fetchall()
    ids = np.asarray([r[0] for r in rows], np.int64)
    pos = {int(m): i for i, m in enumerate(ids)}
    n = len(ids)
    if n < min_size:
        return [], []
    aliases = _alias_index(db)
    ment: list[set[int]] = []
    for i, (_, text) in enumerate(rows):
        ment.append(_mentions(text, aliases))
        if progress and i % 1024 == 1023:
            progress(1024)
    named = {r[0] for r in db.execute("SELECT id FROM nodes WHERE type IN (SELECT value FROM json_each(?))",
                                      (json.dumps(_NAMED),))}
    for mid, subj, obj in db.execute(
        "SELECT e.memory_id, e.subj, e.obj FROM edges e JOIN memories m ON m.id=e.memory_id AND m.scope=?", (scope,)
    ):
        i = pos.get(mid)
        if i is not None:
            ment[i].update(x for x in (subj, obj) if x in named)
    # entity document counts; hubs out, singletons useless
    df: dict[int, int] = {}
    for s in ment:
        for nid in s:
            df[nid] = df.get(nid, 0) + 1
    cap = max(hub_min, hub_share * n)
    hubs = sorted(nid for nid, c in df.items() if c > cap)
    keep = {nid: j for j, nid in enumerate(sorted(nid for nid, c in df.items() if 2 <= c <= cap))}
    r_idx = [i for i, s in enumerate(ment) for nid in s if nid in keep]
    c_idx = [keep[nid] for s in ment for nid in s if nid in keep]
    b = coo_matrix((np.ones(len(r_idx), np.float32), (r_idx, c_idx)), shape=(n, max(len(keep), 1))).tocsr()
    shared = (b @ b.T).tocoo()
    mask = (shared.row != shared.col) & (shared.data >= min_shared)
    lr, lc, lw = list(shared.row[mask]), list(shared.col[mask]), list(shared.data[mask])
    # engaged together in the same turn
    together: dict[tuple[int, int], int] = {}
    turn_rows = db.execute(
        "SELECT session, turn, group_concat(memory_id) FROM usage_events WHERE outcome=1 AND session IS NOT NULL "
        "GROUP BY session, turn HAVING count(*) > 1").fetchall()
    for _, _, got in turn_rows:
        mids = sorted({pos[int(x)] for x in got.split(",") if int(x) in pos})
        for a in range(len(mids)):
            for c in range(a + 1, min(len(mids), a + 20)):
                key = (mids[a], mids[c])
                together[key] = together.get(key, 0) + 1
    for (a, c), cnt in together.items():
        if cnt >= min_engaged:
            lr += [a, c]
            lc += [c, a]
            lw += [float(cnt), float(cnt)]
    links = coo_matrix((np.asarray(lw, np.float32), (np.asarray(lr, np.int64), np.asarray(lc, np.int64))), shape=(n, n)).tocsr()
    ncomp, label = connected_components(links, directed=False)
    groups: dict[int, list[int]] = {}
    for i, lab in enumerate(label):
        groups.setdefault(int(lab), []).append(i)
    clusters: list[list[int]] = []
    for g in groups.values():
        if len(g) < min_size:
            continue
        clusters.extend(_split(links, g, min_size, max_size) if len(g) > max_size else [g])
    names = dict(db.execute("SELECT id, name FROM nodes WHERE id IN (SELECT value FROM json_each(?))",
                            (json.dumps(hubs + list(keep)),)).fetchall())
    out = []
    for g in clusters:
        cnt: dict[int, int] = {}
        for i in g:
            for nid in ment[i]:
                if nid in keep:
                    cnt[nid] = cnt.get(nid, 0) + 1
        shared_names = [names[nid] for nid, c in sorted(cnt.items(), key=lambda x: (-x[1], x[0])) if c * 2 >= len(g)]
        out.append(Cluster(scope, sorted(int(ids[i]) for i in g), shared_names))
    _match(db, scope, out)
    return out, [names[h] for h in hubs if h in names]


def _split(links, group: list[int], min_size: int, max_size: int) -> list[list[int]]:
    """Louvain communities of an oversized component (recursing with a finer resolution)."""
    import networkx as nx

    sub = links[group][:, group].tocoo()
    g = nx.Graph()
    g.add_nodes_from(range(len(group)))
    g.add_weighted_edges_from((int(a), int(b), float(w)) for a, b, w in zip(sub.row, sub.col, sub.data) if a < b)
    out = []
    for resolution in (1.0, 2.0, 4.0):
        comms = nx.community.louvain_communities(g, weight="weight", resolution=resolution, seed=7)
        big = [c for c in comms if len(c) > max_size]
        if not big or resolution == 4.0:
            out = [sorted(group[i] for i in c) for c in comms if len(c) >= min_size]
            break
    return out


def _match(db: apsw.Connection, scope: str, clusters: list[Cluster]) -> None:
    """Set each cluster's action against the scope's existing chunks."""
    have: dict[int, set[int]] = {}
    for cid, mid in db.execute(
        "SELECT c.memory_id, cm.member_id FROM chunks c JOIN chunk_members cm ON cm.chunk_id=c.memory_id WHERE c.scope=?",
        (scope,),
    ):
        have.setdefault(cid, set()).add(mid)
    sig = dict(db.execute("SELECT memory_id, signature FROM chunks WHERE scope=?", (scope,)).fetchall())
    for cid in sig:
        have.setdefault(cid, set())
    taken: set[int] = set()
    for cl in clusters:
        mine = set(cl.members)
        best, best_j = None, 0.0
        for cid, got in have.items():
            if cid in taken:
                continue
            j = len(mine & got) / max(len(mine | got), 1)
            if j > best_j:
                best, best_j = cid, j
        if best is not None and best_j == 1.0 and sig[best] == signature(cl.members):
            cl.action, cl.chunk_id = "same", best  # (a forgotten member leaves the rows equal, not the signature)
        elif best is not None and best_j >= 0.5:
            cl.action, cl.chunk_id = "update", best
        if cl.chunk_id is not None:
            taken.add(cl.chunk_id)


def summary(summarizer, db: apsw.Connection, cluster: Cluster, budget: int) -> str:
    """The chunk's text from ``summarizer``, checked (a non-empty str that fits a memory)."""
    texts = [t for t, in db.execute(
        "SELECT text FROM memories WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id", (json.dumps(cluster.members),))]
    text = summarizer.summarize(texts, names=list(cluster.names), budget=budget)
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"summariser {getattr(summarizer, 'name', summarizer)!r} returned no text")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInput(f"summariser {getattr(summarizer, 'name', summarizer)!r} returned {len(text):,} characters, "
                           f"over the maximum of {MAX_TEXT_CHARS:,}")
    return text.strip()


def _link(db: apsw.Connection, cid: int, cluster: Cluster) -> list[int]:
    """Copy the members' facts onto the chunk and record its members (those still there)."""
    got = [r[0] for r in db.execute("SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
                                    (json.dumps(cluster.members),))]
    G.copy_facts(db, cid, got)
    db.executemany("INSERT INTO chunk_members(chunk_id, member_id) VALUES (?,?)", [(cid, m) for m in got])
    return got


def create(db: apsw.Connection, prep: Prepared, cluster: Cluster, *, summarizer: str, model_id: str,
           structure: StructureIndex) -> tuple[int, StructuralChanges]:
    """Write a new chunk (its memory, copied facts and bookkeeping) inside the caller's
    transaction."""
    prep.facts = [[]]  # the chunk's facts are its members', copied below: no new entities
    (cid,), pending = C.commit(db, prep, scope=cluster.scope, source=None, meta_json="{}", model_id=model_id,
                               structure=structure)
    now = time.time()
    db.execute("INSERT INTO chunks(memory_id, scope, signature, summarizer, created, updated) VALUES (?,?,?,?,?,?)",
               (cid, cluster.scope, "", summarizer, now, now))
    got = _link(db, cid, cluster)
    db.execute("UPDATE chunks SET signature=? WHERE memory_id=?", (signature(got), cid))
    return cid, pending


def update(db: apsw.Connection, prep: Prepared, cluster: Cluster, *, summarizer: str, model_id: str,
           structure: StructureIndex) -> StructuralChanges:
    """Give an existing chunk new members and a new text, inside the caller's transaction."""
    cid = cluster.chunk_id
    prep.facts = [[]]
    pending = C.update(db, cid, text=prep.texts[0], prep=prep, meta_json=None, at=C.KEEP, model_id=model_id,
                       structure=structure)
    db.execute("DELETE FROM chunk_members WHERE chunk_id=?", (cid,))
    got = _link(db, cid, cluster)
    db.execute("UPDATE chunks SET signature=?, summarizer=?, updated=?, version=version+1 WHERE memory_id=?",
               (signature(got), summarizer, time.time(), cid))
    return pending


def restore(db: apsw.Connection, cid: int, scope: str, members, *, version: int, summarizer: str, created: float,
            updated: float) -> None:
    """Make the imported memory ``cid`` the chunk of ``members`` (ids in this store) it was
    where it was exported, inside the caller's transaction."""
    db.execute("INSERT INTO chunks(memory_id, scope, signature, version, summarizer, created, updated) "
               "VALUES (?,?,?,?,?,?,?)", (cid, scope, "", version, summarizer, created, updated))
    got = _link(db, cid, Cluster(scope, list(members)))
    db.execute("UPDATE chunks SET signature=? WHERE memory_id=?", (signature(got), cid))


def drop_dangling(db: apsw.Connection) -> None:
    """Repair: memberships of a memory or chunk that is gone."""
    db.execute("DELETE FROM chunk_members WHERE member_id NOT IN (SELECT id FROM memories) "
               "OR chunk_id NOT IN (SELECT memory_id FROM chunks)")


def members(db: apsw.Connection, chunk_id: int) -> list[int] | None:
    """A chunk's member ids in written order; None when ``chunk_id`` is not a chunk."""
    if db.execute("SELECT 1 FROM chunks WHERE memory_id=?", (chunk_id,)).fetchone() is None:
        return None
    return [r[0] for r in db.execute("SELECT member_id FROM chunk_members WHERE chunk_id=? ORDER BY member_id", (chunk_id,))]


def chunk_ids(db: apsw.Connection, scope: str | None) -> list[int]:
    """The chunk memories' ids (of one scope when given)."""
    sql = "SELECT memory_id FROM chunks" + (" WHERE scope=?" if scope is not None else "") + " ORDER BY memory_id"
    return [r[0] for r in db.execute(sql, (scope,) if scope is not None else ())]


def containing(db: apsw.Connection, member_id: int) -> list[int]:
    """The chunks that hold ``member_id`` among their members, oldest first."""
    return [r[0] for r in db.execute("SELECT chunk_id FROM chunk_members WHERE member_id=? ORDER BY chunk_id",
                                     (member_id,))]
