"""The knowledge graph in the store: nodes, aliases, review candidates and edges.

All functions take the open apsw connection and run inside the caller's transaction, so the
graph changes in the same write as the memory that asserts the facts.
"""

from __future__ import annotations

import json
import math
import re
from collections import deque

import apsw
from rapidfuzz import fuzz, process

from ..errors import NotFound
from ..reader.canon import canon_relation, fold_name
from ..results import Entity, Fact

__all__ = ["Entity", "Fact", "resolve_entity", "add_facts", "MERGE_SCORE", "CANDIDATE_SCORE", "alias_candidates",
           "review_alias"]

#: fuzzy ratio (0-100) at or above which two names of compatible type are one node
MERGE_SCORE = 94.0
#: ratio at or above which (and below MERGE_SCORE) a review candidate is recorded instead
CANDIDATE_SCORE = 84.0
_MIN_FUZZY_LEN = 5
#: "<possessor>'s [own] <thing>"
_POSSESSIVE = re.compile(r"^\s*(.+?)(?:'s|\u2019s|s'|s\u2019)\s+(?:own\s+)?(.+?)\s*$", re.IGNORECASE)


def _compatible(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


def resolve_entity(db: apsw.Connection, name: str, etype: str | None, *, create: bool = True) -> int | None:
    """Node id for a name: alias hit, fuzzy merge, or a new node (with review candidates).

    Types keep homonyms apart: "Apple" the organisation and "apple" the thing are two nodes;
    an unknown type (None) joins whatever node the name already has.
    """
    key = fold_name(name)
    if not key:
        key = name.strip().casefold() or "?"
    rows = db.execute(
        "SELECT n.id, n.type FROM aliases a JOIN nodes n ON n.id=a.node_id WHERE a.alias=? ORDER BY n.id",
        (key,),
    ).fetchall()
    for nid, ntype in rows:
        if _compatible(etype, None if ntype == "?" else ntype):
            if etype and ntype == "?":
                db.execute("UPDATE nodes SET type=? WHERE id=?", (etype, nid))
            return nid
    if not create:
        return None
    cands = _fuzzy(db, key, name, etype) if not rows else []
    cands.sort(reverse=True)
    if cands and cands[0][0] >= MERGE_SCORE:
        nid = cands[0][1]
        db.execute("INSERT OR IGNORE INTO aliases(alias, node_id) VALUES (?,?)", (key, nid))
        return nid
    node_key = key if not rows else f"{key}#{etype or 'thing'}"
    db.execute(
        "INSERT INTO nodes(key, name, type) VALUES (?,?,?) ON CONFLICT(key) DO NOTHING",
        (node_key, name.strip(), etype or "?"),
    )
    nid = db.execute("SELECT id FROM nodes WHERE key=?", (node_key,)).fetchone()[0]
    db.execute("INSERT OR IGNORE INTO aliases(alias, node_id) VALUES (?,?)", (key, nid))
    for score, other in cands[:5]:
        if other != nid:
            db.execute(
                "INSERT OR IGNORE INTO alias_candidates(node_id, other_id, score) VALUES (?,?,?)",
                (nid, other, score),
            )
    return nid


def _fuzzy(db: apsw.Connection, key: str, name: str, etype: str | None) -> list[tuple[float, int]]:
    """``(ratio, node id)`` of the nodes whose names are close to ``name`` (folded: ``key``),
    at least :data:`CANDIDATE_SCORE`: blocked on the first two characters (an index range,
    so this never scans every name) and on the lengths that ratio allows; every alias of the
    block is considered, so a merge never depends on the rows' order. Names with digits
    (dates, codes, amounts) and times or quantities only ever match exactly; two names of one
    possessor are judged on what they name (:func:`_owned_ratio`)."""
    cands: list[tuple[float, int]] = []
    if len(key) >= _MIN_FUZZY_LEN and etype not in ("time", "quantity") and not any(c.isdigit() for c in key):
        lo = key[:2]
        hi = lo[:-1] + chr(ord(lo[-1]) + 1)
        r = CANDIDATE_SCORE / 100.0  # ratio = 1 - indel / (la + lb) >= r needs |la - lb| <= (1 - r)(la + lb)
        shortest, longest = math.floor(len(key) * r / (2 - r)), math.ceil(len(key) * (2 - r) / r)
        block = [
            (alias, nid, nname)
            for alias, nid, ntype, nname in db.execute(
                "SELECT a.alias, n.id, n.type, n.name FROM aliases a JOIN nodes n ON n.id=a.node_id "
                "WHERE a.alias>=? AND a.alias<? AND length(a.alias) BETWEEN ? AND ? ORDER BY a.alias",
                (lo, hi, shortest, longest),
            )
            if _compatible(etype, None if ntype == "?" else ntype)
        ]
        if block:
            owned = possessed(name)
            limit = 5 if owned is None else 20  # one possessor's names crowd the first five
            for _, score, j in process.extract(key, [a for a, _, _ in block], scorer=fuzz.ratio,
                                               score_cutoff=CANDIDATE_SCORE, limit=limit):
                score = _owned_ratio(owned, possessed(block[j][2]), score)
                if score >= CANDIDATE_SCORE:
                    cands.append((score, block[j][1]))
            if owned is not None:  # "Caroline's own path" for "Caroline's path": the same thing of hers
                for _, nid, nname in block:
                    if possessed(nname) == owned and all(nid != c for _, c in cands):
                        cands.append((100.0, nid))
    return cands


def possessed(name: str) -> tuple[str, str] | None:
    """``(possessor, thing)`` of a possessive name, folded ("Caroline's own path" ->
    ``("caroline", "path")``), or None."""
    m = _POSSESSIVE.match(name or "")
    if m is None:
        return None
    owner, thing = fold_name(m.group(1)), fold_name(m.group(2))
    return (owner, thing) if owner and thing else None


def _owned_ratio(a: tuple[str, str] | None, b: tuple[str, str] | None, score: float) -> float:
    """The fuzzy ratio of two names, judged on what they name when both are one possessor's:
    "Caroline's path" and "Caroline's art" share "Caroline's " and differ in everything else
    (the whole names' ratio is 88; the things' 57). Short things match only exactly."""
    if a is None or b is None or a[0] != b[0]:
        return score
    if a[1] == b[1]:
        return 100.0
    if _plural_of(a[1], b[1]) or _plural_of(b[1], a[1]):
        return score  # "toy" and "toys": as close as the whole names say
    if min(len(a[1]), len(b[1])) < _MIN_FUZZY_LEN:
        return 0.0
    return float(fuzz.ratio(a[1], b[1]))


def _plural_of(one: str, many: str) -> bool:
    """Whether ``many`` is ``one`` with a plural ending (toy/toys, box/boxes, story/stories)."""
    return many in (one + "s", one + "es") or (one.endswith("y") and many == one[:-1] + "ies")


def add_facts_many(db: apsw.Connection, ids, facts, names: dict | None = None) -> None:
    """:func:`add_facts` for a batch of memories (``facts[i]`` the triples of ``ids[i]``):
    each ``(name, type)`` resolved once (a name resolves to the same node again until nodes
    are merged or deleted, which a write does not do; ``names``, a dict the caller keeps,
    carries that over calls of one write), every edge in one statement."""
    names = {} if names is None else names
    rows = []
    for mid, triples in zip(ids, facts):
        for pos, t in enumerate(triples or ()):
            rel, flip = canon_relation(t.relation, t.subject_type, t.object_type)
            s = _resolved(db, t.subject, t.subject_type, names)
            o = _resolved(db, t.object, t.object_type, names)
            sr, orw = t.subject_raw, t.object_raw
            if flip:
                s, o, sr, orw = o, s, orw, sr
            rows.append((mid, pos, s, rel, t.relation, o, sr, orw, getattr(t, "mood", "asserted") or "asserted",
                         getattr(t, "detail", "") or ""))
    db.executemany("INSERT INTO edges(memory_id, pos, subj, rel, rel_raw, obj, subj_raw, obj_raw, mood, detail) "
                   "VALUES (?,?,?,?,?,?,?,?,?,?)", rows)


def add_facts(db: apsw.Connection, memory_id: int, triples) -> None:
    """Store a memory's triples as edges (:func:`add_facts_many` for one memory)."""
    add_facts_many(db, [memory_id], [triples])


def _resolved(db: apsw.Connection, name: str, etype: str | None, names: dict) -> int:
    nid = names.get((name, etype))
    if nid is None:
        nid = names[(name, etype)] = resolve_entity(db, name, etype)
    return nid


def drop_facts(db: apsw.Connection, memory_id: int) -> list[int]:
    """Delete a memory's edges; returns the nodes they used (for :func:`drop_orphans`)."""
    nodes = [n for r in db.execute("SELECT subj, obj FROM edges WHERE memory_id=?", (memory_id,)) for n in r]
    db.execute("DELETE FROM edges WHERE memory_id=?", (memory_id,))
    return nodes


def copy_facts(db: apsw.Connection, memory_id: int, sources) -> None:
    """Give ``memory_id`` (a chunk) the distinct facts of the memories ``sources``, in the
    order they were first asserted."""
    db.execute(
        "INSERT INTO edges(memory_id, pos, subj, rel, rel_raw, obj, subj_raw, obj_raw, mood, detail) "
        "SELECT ?1, row_number() OVER (ORDER BY min(memory_id), min(pos)) - 1, subj, rel, min(rel_raw), obj, "
        "min(subj_raw), min(obj_raw), min(mood), max(detail) FROM edges "
        "WHERE memory_id IN (SELECT value FROM json_each(?2)) GROUP BY subj, rel, obj",
        (memory_id, json.dumps([int(x) for x in sources])),
    )


def add_alias(db: apsw.Connection, alias: str, node_id: int) -> None:
    """Another name of a node (kept when the alias is taken already)."""
    db.execute("INSERT OR IGNORE INTO aliases(alias, node_id) VALUES (?,?)", (alias, node_id))


def add_category_node(db: apsw.Connection, category_id: int, name: str) -> int:
    """The graph node of an approved category, with its folded name as an alias; returns its id."""
    db.execute("INSERT INTO nodes(key, name, type) VALUES (?,?,?)", (f"category:{category_id}", name, "category"))
    nid = db.last_insert_rowid()
    add_alias(db, fold_name(name) or name.casefold(), nid)
    return nid


def drop_node(db: apsw.Connection, node_id: int) -> None:
    """Delete a node; its aliases and candidates follow by cascade."""
    db.execute("DELETE FROM nodes WHERE id=?", (node_id,))


def drop_dangling(db: apsw.Connection) -> None:
    """Repair: edges whose memory or node is gone, and entity nodes no edge uses."""
    db.execute("DELETE FROM edges WHERE subj NOT IN (SELECT id FROM nodes) OR obj NOT IN (SELECT id FROM nodes) "
               "OR memory_id NOT IN (SELECT id FROM memories)")
    db.execute("DELETE FROM nodes WHERE type<>'category' AND NOT EXISTS "
               "(SELECT 1 FROM edges e WHERE e.subj=nodes.id OR e.obj=nodes.id)")


def drop_orphans(db: apsw.Connection, node_ids) -> None:
    """Delete nodes no edge uses any more (after a memory was forgotten)."""
    for nid in set(node_ids):
        used = db.execute("SELECT 1 FROM edges WHERE subj=? OR obj=? LIMIT 1", (nid, nid)).fetchone()
        if not used:
            db.execute("DELETE FROM nodes WHERE id=?", (nid,))


def merge_nodes(db: apsw.Connection, keep: int, other: int) -> None:
    """Fold node ``other`` into ``keep``: edges, aliases and candidates move over."""
    if keep == other:
        return
    db.execute("UPDATE edges SET subj=? WHERE subj=?", (keep, other))
    db.execute("UPDATE edges SET obj=? WHERE obj=?", (keep, other))
    db.execute("INSERT OR IGNORE INTO aliases(alias, node_id) SELECT alias, ? FROM aliases WHERE node_id=?", (keep, other))
    db.execute("DELETE FROM nodes WHERE id=?", (other,))


def alias_candidates(db: apsw.Connection) -> list[dict]:
    """Borderline name pairs awaiting review: ``id, name, other, score``, best first."""
    return [
        {"id": cid, "name": a, "other": b, "score": s}
        for cid, a, b, s in db.execute(
            "SELECT c.id, n.name, o.name, c.score FROM alias_candidates c JOIN nodes n ON n.id=c.node_id "
            "JOIN nodes o ON o.id=c.other_id WHERE c.status='pending' ORDER BY c.score DESC"
        )
    ]


def review_alias(db: apsw.Connection, candidate_id: int, accept: bool) -> None:
    """Accept (merge the two nodes) or reject a pending candidate, inside the caller's
    transaction; raises NotFound."""
    row = db.execute("SELECT node_id, other_id FROM alias_candidates WHERE id=? AND status='pending'",
                     (candidate_id,)).fetchone()
    if row is None:
        raise NotFound(f"no pending alias candidate {candidate_id}")
    db.execute("UPDATE alias_candidates SET status=? WHERE id=?", ("accepted" if accept else "rejected", candidate_id))
    if accept:
        merge_nodes(db, row[1], row[0])


def entity(db: apsw.Connection, nid: int) -> Entity | None:
    row = db.execute("SELECT id, key, name, type FROM nodes WHERE id=?", (nid,)).fetchone()
    if row is None:
        return None
    aliases = tuple(r[0] for r in db.execute("SELECT alias FROM aliases WHERE node_id=? ORDER BY alias", (nid,)))
    return Entity(row[0], row[1], row[2], row[3] if row[3] != "?" else "thing", aliases)


def _in_scope(scope: str | None) -> str:
    """SQL condition keeping edges ``e`` of memories in ``scope`` (bound as ``:scope``); ''
    for every scope."""
    if scope is None:
        return ""
    return " AND EXISTS (SELECT 1 FROM memories sm WHERE sm.id=e.memory_id AND sm.scope=:scope)"


def lookup(db: apsw.Connection, name: str, scope: str | None = None) -> list[Entity]:
    """Every node that ``name`` is an alias of (several when homonyms differ by type); with
    ``scope``, only nodes that a fact of a memory in that scope mentions."""
    key = fold_name(name) or name.strip().casefold()
    ids = [r[0] for r in db.execute("SELECT node_id FROM aliases WHERE alias=? ORDER BY node_id", (key,))]
    if scope is not None:
        ids = [i for i in ids if db.execute(
            "SELECT 1 FROM edges e WHERE (e.subj=:nid OR e.obj=:nid)" + _in_scope(scope) + " LIMIT 1", {"nid": i, "scope": scope}
        ).fetchone()]
    return [e for e in (entity(db, i) for i in ids) if e is not None]


_FACT_SQL = (
    "SELECT e.memory_id, s.name, e.rel, o.name, e.rel_raw, e.subj, e.obj, e.pos, e.subj_raw, e.obj_raw, e.mood, e.detail FROM edges e "
    "JOIN nodes s ON s.id=e.subj JOIN nodes o ON o.id=e.obj "
)


def facts_of_memory(db: apsw.Connection, memory_id: int) -> list[Fact]:
    return [Fact(*r) for r in db.execute(_FACT_SQL + "WHERE e.memory_id=? ORDER BY e.pos", (memory_id,))]


def facts_of_node(db: apsw.Connection, nid: int, limit: int = 1000, scope: str | None = None) -> list[Fact]:
    """Facts in which a node is subject or object, newest memory first (``scope``: only
    facts of memories in that scope)."""
    return [
        Fact(*r)
        for r in db.execute(
            _FACT_SQL + "WHERE (e.subj=:nid OR e.obj=:nid)" + _in_scope(scope) + " ORDER BY e.memory_id DESC LIMIT :limit",
            {"nid": nid, "limit": limit, "scope": scope},
        )
    ]


#: Approved categories link their members to the category's node, both ways (a member is only
#: reached from the category when it has a fact in the scope, when one is given).
_CATEGORY_LINKS = (
    "SELECT c.node_id FROM category_members cm JOIN categories c ON c.id=cm.category_id "
    "WHERE cm.node_id=:nid AND c.status='approved' AND c.node_id IS NOT NULL "
    "UNION SELECT cm.node_id FROM category_members cm JOIN categories c ON c.id=cm.category_id "
    "WHERE c.node_id=:nid AND c.status='approved' AND EXISTS (SELECT 1 FROM edges e WHERE "
    "(e.subj=cm.node_id OR e.obj=cm.node_id){cond})"
)


def _with_category_links(db: apsw.Connection, rows: list, nid: int, scope: str | None) -> list:
    """Fact rows of a node plus its approved-category links as ``instance_of`` facts (no memory)."""
    links = db.execute(
        "SELECT cm.node_id, c.node_id FROM category_members cm JOIN categories c ON c.id=cm.category_id "
        "WHERE (cm.node_id=:nid OR c.node_id=:nid) AND c.status='approved' AND c.node_id IS NOT NULL",
        {"nid": nid},
    ).fetchall()
    for member, cat in links:
        if scope is not None and member != nid and not db.execute(
            "SELECT 1 FROM edges e WHERE (e.subj=:m OR e.obj=:m)" + _in_scope(scope) + " LIMIT 1",
            {"m": member, "scope": scope},
        ).fetchone():
            continue
        names = dict(db.execute("SELECT id, name FROM nodes WHERE id IN (?,?)", (member, cat)))
        rows.append((None, names[member], "instance_of", names[cat], "instance_of", member, cat, -1, None, None,
                     "asserted", ""))
    return rows


def neighbours(db: apsw.Connection, nid: int, depth: int = 1, scope: str | None = None) -> dict[int, int]:
    """Node ids within ``depth`` hops (either direction) -> hop count, excluding the start
    (``scope``: through facts of memories in that scope only)."""
    seen = {nid: 0}
    frontier = deque([nid])
    cond = _in_scope(scope)
    while frontier:
        cur = frontier.popleft()
        if seen[cur] >= depth:
            continue
        for (nxt,) in db.execute(
            "SELECT e.obj FROM edges e WHERE e.subj=:nid" + cond + " UNION SELECT e.subj FROM edges e WHERE e.obj=:nid" + cond
            + " UNION " + _CATEGORY_LINKS.format(cond=cond),
            {"nid": cur, "scope": scope},
        ):
            if nxt not in seen:
                seen[nxt] = seen[cur] + 1
                frontier.append(nxt)
    seen.pop(nid)
    return seen


def shortest_path(db: apsw.Connection, a: int, b: int, max_depth: int = 4, scope: str | None = None) -> list[Fact] | None:
    """Breadth-first path of facts from node ``a`` to node ``b`` (edges in either direction;
    ``scope``: facts of memories in that scope only)."""
    if a == b:
        return []
    prev: dict[int, tuple[int, tuple]] = {a: (a, ())}
    frontier = [a]
    sql = _FACT_SQL + "WHERE (e.subj=:nid OR e.obj=:nid)" + _in_scope(scope)
    for _ in range(max_depth):
        nxt_frontier = []
        for cur in frontier:
            for row in _with_category_links(db, db.execute(sql, {"nid": cur, "scope": scope}).fetchall(), cur, scope):
                f = Fact(*row)
                other = f.object_id if f.subject_id == cur else f.subject_id
                if other in prev:
                    continue
                prev[other] = (cur, f)
                if other == b:
                    path = []
                    node = b
                    while node != a:
                        node, fact = prev[node]
                        path.append(fact)
                    return path[::-1]
                nxt_frontier.append(other)
        frontier = nxt_frontier
        if not frontier:
            break
    return None


def conflicts(db, relations, scope: str | None, limit: int) -> list[tuple[int, int, str, str, str, str]]:
    """Pairs of facts with one subject and one relation (of ``relations``) but different
    objects, newest pairs first: ``(memory a, memory b, subject, relation, object a, object
    b)``. Indexed self-join of the edges; both memories of ``scope`` when given."""
    import json

    join = ("JOIN memories ma ON ma.id=a.memory_id AND ma.scope=:s JOIN memories mb ON mb.id=b.memory_id "
            "AND mb.scope=:s " if scope is not None else "")
    return db.execute(
        "SELECT a.memory_id, b.memory_id, s.name, a.rel, oa.name, ob.name FROM edges a "
        "JOIN edges b ON b.subj=a.subj AND b.rel=a.rel AND b.obj<>a.obj AND b.memory_id>a.memory_id " + join +
        "JOIN nodes s ON s.id=a.subj JOIN nodes oa ON oa.id=a.obj JOIN nodes ob ON ob.id=b.obj "
        "WHERE a.rel IN (SELECT value FROM json_each(:r)) ORDER BY b.memory_id DESC LIMIT :n",
        {"s": scope, "r": json.dumps(sorted(relations)), "n": limit}).fetchall()
