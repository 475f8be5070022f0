"""Emergent categories: graph entities that play the same roles, proposed as a category the
store did not start with, named after the fact, and reviewed by a person.

*Relational fingerprint*: the set of ``(direction, relation)`` roles an entity takes part in
("-drive->" as subject, "<-drive-" as object) and, for each, the roles of the entity at the
other end (paths of length two, in the spirit of Weisfeiler-Lehman refinement). Entities with
the same fingerprint play structurally identical roles: a Tesla, a Volvo and a Fiat that
people drive, whatever types the parser gave them. Grouping is by hashing fingerprints (never
comparing all pairs); near-identical fingerprints (MinHash LSH candidates, Jaccard >= ``near``
checked exactly, measured against each group's own fingerprint so groups never chain) are
merged.
Every group of at least ``min_members`` entities is proposed, large ones included: nothing is
dropped for its size. Feelings and qualities (love, strength, unity) are no kind of thing: a
group they make half of is not proposed, and they are left out of any other.

Review: ``approve`` makes the category a graph node (type ``category``, alias its name) that
its members link to (graph neighbours and paths go through it, and a turn that names it
reaches its members' memories in the graph channel); ``reject`` keeps it out of later
proposals; ``revert`` undoes either, back to ``proposed``, leaving no trace in the graph.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import apsw

from ..derived import graph as G
from ..reader.lexicon import CLASSES
from ..errors import InvalidInput, NotFound
from ..results import Category

__all__ = ["Category", "Namer", "RoleNamer", "propose", "listing", "approve", "reject", "revert", "STATUSES"]

STATUSES = ("proposed", "approved", "rejected")
_PRONOUNS = {"i", "me", "you", "he", "she", "it", "we", "they", "him", "her", "us", "them", "this", "that", "who"}
_PLURAL = {"person": "people", "organisation": "organisations", "place": "places", "group": "groups",
           "event": "events", "time": "times", "quantity": "amounts", "thing": "things", "concept": "ideas"}


@runtime_checkable
class Namer(Protocol):
    """Names a group: ``name(members, roles) -> str``; ``roles`` are ``(direction, relation,
    neighbours)`` with ``direction`` "out" (the members are subjects) or "in", and
    ``neighbours`` the ``(name, type)`` of the entities at the other end."""

    def name(self, members: Sequence[str], roles: Sequence[tuple[str, str, Sequence[tuple[str, str]]]]) -> str: ...


class RoleNamer:
    """Offline names from the shared roles: "things that people drive", "things that own
    cars", "things that are capital". The other end is named when it is one entity, else by
    the most common type of the entities there."""

    def name(self, members, roles) -> str:
        if not roles:
            return "things alike"
        parts = []
        for direction, rel, ends in roles[:2]:
            verb = rel.replace("_", " ")
            names = {n for n, _ in ends}
            if len(names) == 1 and next(iter(names)).lower() not in _PRONOUNS:
                other = next(iter(names))
            else:
                typ = Counter(t for _, t in ends).most_common(1)[0][0] if ends else "thing"
                other = _PLURAL.get(typ, "things")
            if verb == "be":
                parts.append(f"are {other}" if direction == "out" else f"{other} are")
            else:
                parts.append(f"{verb} {other}" if direction == "out" else f"{other} {verb}")
        return "things that " + " and ".join(parts)


def _digest(x) -> str:
    return hashlib.sha1(json.dumps(x, sort_keys=True).encode()).hexdigest()


def _facts(db: apsw.Connection, scope: str | None):
    """(subject, relation, object) of every fact (of one scope) whose relation says something
    of its ends (:func:`_telling`), chunks' copies left out."""
    sql = "SELECT e.subj, e.rel, e.obj, e.rel_raw FROM edges e"
    if scope is not None:
        sql += " JOIN memories m ON m.id=e.memory_id AND m.scope=?"
    rows = db.execute(sql + " WHERE e.subj<>e.obj AND e.memory_id NOT IN (SELECT memory_id FROM chunks)",
                      (scope,) if scope is not None else ()).fetchall()
    return [(s, rel, o) for s, rel, o, raw in rows if _telling(rel) and _telling(raw)]


#: Feelings and qualities: what is said of an experience, not things a person sorts into kinds
#: ("things that Caroline captures: feeling, strength, sunset, unity"; "things that Melanie
#: appreciates: help, friendship, motivation"). A group half of whose members are these (by
#: their head word) is not proposed; in any other group they are left out.
_QUALITIES = frozenset("""love joy happiness sadness anger fear hope peace calm serenity warmth strength courage
confidence pride gratitude kindness compassion empathy patience motivation inspiration encouragement support help
care acceptance inclusivity inclusion unity togetherness friendship company connection belonging comfort freedom
faith trust respect passion energy positivity resilience determination growth beauty balance feeling feelings
emotion emotions vibe vibes spirit meaning purpose fulfillment fulfilment satisfaction relief stress anxiety
loneliness excitement honesty understanding guidance wisdom grace""".split())

#: Dates and amounts play roles too ("note 5", "on June 3") but make no category worth naming.
_NOT_MEMBERS = ("time", "quantity", "category")


#: Verb classes (:mod:`fastmem.reader.lexicon`) whose facts say nothing of what a thing is:
#: "things that people have" groups a cat with a great time, "things that remind Caroline" a
#: window with "awesome". Attitudes ("like", "love") stay: "things that Melanie likes".
_SAYS_NOTHING = frozenset().union(*(v for k, v in CLASSES.items() if k != "attitude"))


def _telling(rel: str) -> bool:
    """Whether a relation (canonical, ``play_in``, or as written, ``make a``) says what its ends
    are: not a copula ("be", "be_important_to"), a light verb ("have", "make a difference"),
    a verb of cognition, perception or speech ("find", "mean", "remind"), nor their negation."""
    words = rel.replace("_", " ").split()
    words = words[1:] if words[:1] == ["not"] else words
    return bool(words) and words[0] not in _SAYS_NOTHING and words[0] not in ("remind", "be")


def fingerprints(facts) -> dict[int, frozenset]:
    """Relational fingerprint of every entity: the roles it plays, ``(direction, relation)``,
    and the roles of the entities it plays them with, ``(direction, relation, their
    direction, their relation)`` (paths of length two, so one extra fact about a neighbour
    changes a fingerprint a little, not entirely)."""
    roles: dict[int, set] = {}
    for s, rel, o in facts:
        roles.setdefault(s, set()).add(("out", rel))
        roles.setdefault(o, set()).add(("in", rel))
    fp: dict[int, set] = {n: set(r) for n, r in roles.items()}
    for s, rel, o in facts:
        fp[s].update(("out", rel, d, r) for d, r in roles[o])
        fp[o].update(("in", rel, d, r) for d, r in roles[s])
    return {n: frozenset(f) for n, f in fp.items()}


def _jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / max(len(a | b), 1)


def _groups(fp: dict[int, frozenset], near: float, min_members: int) -> list[tuple[frozenset, list[int]]]:
    """``(founding fingerprint, members)`` of each group. Entities are grouped by identical
    fingerprint; then, largest groups first, each still unassigned group absorbs the unassigned groups whose fingerprint is within Jaccard
    ``near`` of its own (candidates from MinHash LSH, checked exactly; no chaining)."""
    from datasketch import MinHash, MinHashLSH

    by_fp: dict[frozenset, list[int]] = {}
    for n, f in fp.items():
        by_fp.setdefault(f, []).append(n)
    keys = sorted(by_fp, key=lambda f: (-len(by_fp[f]), sorted(by_fp[f])))
    out: list[tuple[frozenset, list[int]]] = []
    if near >= 1.0 or len(keys) < 2:
        return [(f, sorted(by_fp[f])) for f in keys if len(by_fp[f]) >= min_members]
    lsh = MinHashLSH(threshold=near, num_perm=64)
    sig = {}
    for i, f in enumerate(keys):
        m = MinHash(num_perm=64, seed=7)
        m.update_batch([json.dumps(x).encode() for x in sorted(f)])
        sig[i] = m
        lsh.insert(i, m)
    taken: set[int] = set()
    for i, f in enumerate(keys):
        if i in taken:
            continue
        taken.add(i)
        group = list(by_fp[f])
        for j in sorted(lsh.query(sig[i])):
            if j not in taken and _jaccard(f, keys[j]) >= near:
                taken.add(j)
                group += by_fp[keys[j]]
        if len(group) >= min_members:
            out.append((f, sorted(group)))
    return out


def propose(db: apsw.Connection, *, namer=None, scope: str | None = None, min_members: int = 3,
            near: float = 0.5) -> list[Category]:
    """Find groups and record new ones as proposed (changing nothing else), inside the
    caller's transaction; returns every proposal currently open, best supported first. A group
    whose fingerprint was rejected stays rejected; an open proposal's members follow the graph."""
    namer = namer or RoleNamer()
    if not callable(getattr(namer, "name", None)):
        raise InvalidInput("namer must have a name(members, roles) method")
    facts = _facts(db, scope)
    fp = fingerprints(facts)
    info = {n: (name, typ) for n, name, typ in db.execute("SELECT id, name, type FROM nodes")}
    groups = _groups({n: f for n, f in fp.items() if info[n][1] not in _NOT_MEMBERS}, near, min_members)
    ends: dict[tuple[int, str, str], set[int]] = {}
    for s, rel, o in facts:
        ends.setdefault((s, "out", rel), set()).add(o)
        ends.setdefault((o, "in", rel), set()).add(s)
    now = time.time()
    for center, g in groups:
        if {"person", "thing"} <= {info[n][1] for n in g}:
            continue  # people and things in one group ("young women", "black hoodie"): no kind in common
        things = [n for n in g if info[n][0].split()[-1].lower() not in _QUALITIES]
        if 2 * len(things) <= len(g) or len(things) < min_members:
            continue  # feelings and qualities ("strength, unity, warmth"): no kind of thing
        g = things  # "live music, pottery class, camping trip", not "company" or "inclusivity" beside them
        shared = set.intersection(*({x for x in fp[n] if len(x) == 2} for n in g))
        rels = sorted(shared) or sorted({x for n in g for x in fp[n] if len(x) == 2})
        # the founding fingerprint (stable as members come and go), of this scope's graph
        key = _digest(sorted(center, key=str) if scope is None else [scope, sorted(center, key=str)])
        roles = [(d, r, sorted({(info[e][0], info[e][1] if info[e][1] != "?" else "thing")
                                for n in g for e in ends.get((n, d, r), ())})) for d, r in rels]
        if not _anchored(roles):
            continue
        row = db.execute("SELECT id, status FROM categories WHERE fingerprint=?", (key,)).fetchone()
        if row is None:
            name = str(namer.name([info[n][0] for n in g], roles)).strip() or "things alike"
            db.execute("INSERT INTO categories(name, status, fingerprint, relations, created, scope) "
                       "VALUES (?,?,?,?,?,?)", (name, "proposed", key, json.dumps(rels), now, scope))
            cid = db.last_insert_rowid()
        elif row[1] != "proposed":
            continue
        else:
            cid = row[0]
            db.execute("DELETE FROM category_members WHERE category_id=?", (cid,))
        db.executemany("INSERT INTO category_members(category_id, node_id) VALUES (?,?)", [(cid, n) for n in g])
    got = listing(db, "proposed", scope=scope)
    return sorted(got, key=lambda c: (-len(c.members), c.id))


def _anchored(roles) -> bool:
    """Whether a group says what its members have in common: some role they share ties them
    to one entity ("things that Melanie plays") or to people or other named entities ("things
    that people drive"); "things that things create" (compassion, sharing...) says nothing."""
    return any(len({n for n, _ in ends}) == 1 or (ends and all(t == "person" or n[:1].isupper() for n, t in ends))
               for _, _, ends in roles)


#: ``listing(scope=ANY)``: every category, whatever scope it was proposed for.
ANY = object()


def listing(db: apsw.Connection, status: str | None = None, *, scope=ANY) -> list[Category]:
    """Categories (of one status when given; of one scope when given, None meaning the
    store-wide proposals), oldest first."""
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"status must be one of {STATUSES} or None, not {status!r}")
    where, args = [], []
    if status:
        where.append("status=?")
        args.append(status)
    if scope is not ANY:
        where.append("scope IS ?")
        args.append(scope)
    rows = db.execute("SELECT id, name, relations, status FROM categories" + (" WHERE " + " AND ".join(where) if where
                      else "") + " ORDER BY id", args).fetchall()
    out = []
    for cid, name, rels, st in rows:
        mem = db.execute("SELECT n.id, n.name FROM category_members cm JOIN nodes n ON n.id=cm.node_id "
                         "WHERE cm.category_id=? ORDER BY n.name", (cid,)).fetchall()
        rel_s = tuple(f"-{r}->" if d == "out" else f"<-{r}-" for d, r in json.loads(rels))
        out.append(Category(cid, name, tuple(n for _, n in mem), rel_s, st, tuple(i for i, _ in mem)))
    return out


def _get(db, cid) -> tuple[int, str, str, int | None]:
    if isinstance(cid, bool) or not isinstance(cid, int):
        raise InvalidInput(f"category id must be int, not {type(cid).__name__}")
    row = db.execute("SELECT id, name, status, node_id FROM categories WHERE id=?", (cid,)).fetchone()
    if row is None:
        raise NotFound(f"no category with id {cid}")
    return row


def restore(db: apsw.Connection, name: str, relations: list, fingerprint: str, scope: str | None,
            members: Sequence[int]) -> int:
    """An imported category as a proposal with its member nodes, inside the caller's
    transaction; returns its id (the existing one when a category of that fingerprint is
    there already; the members are added to it)."""
    got = db.execute("INSERT INTO categories(name, status, fingerprint, relations, created, scope) "
                     "VALUES (?,?,?,?,?,?) ON CONFLICT(fingerprint) DO NOTHING RETURNING id",
                     (name, "proposed", fingerprint, json.dumps(relations), 0.0, scope)).fetchone()
    # the id of the row the members belong to (last_insert_rowid() is another row's when
    # the category was there already)
    cid = got[0] if got else db.execute("SELECT id FROM categories WHERE fingerprint=?", (fingerprint,)).fetchone()[0]
    db.executemany("INSERT OR IGNORE INTO category_members(category_id, node_id) VALUES (?,?)",
                   [(cid, n) for n in members])
    return cid


def approve(db: apsw.Connection, cid: int) -> Category:
    """Make a proposed category a graph node linked to its members."""
    _, name, status, _ = _get(db, cid)
    if status == "approved":
        return _one(db, cid)
    if status != "proposed":
        raise InvalidInput(f"category {cid} is {status}; revert it first")
    nid = G.add_category_node(db, cid, name)
    db.execute("UPDATE categories SET status='approved', decided=?, node_id=? WHERE id=?", (time.time(), nid, cid))
    return _one(db, cid)


def reject(db: apsw.Connection, cid: int) -> Category:
    """Keep a proposal out (later passes do not propose it again)."""
    _, _, status, _ = _get(db, cid)
    if status == "approved":
        raise InvalidInput(f"category {cid} is approved; revert it first")
    db.execute("UPDATE categories SET status='rejected', decided=? WHERE id=?", (time.time(), cid))
    return _one(db, cid)


def revert(db: apsw.Connection, cid: int) -> Category:
    """Back to proposed: an approved category's node and aliases go, a rejection is lifted."""
    _, _, status, nid = _get(db, cid)
    if nid is not None:
        G.drop_node(db, nid)  # aliases follow by cascade
    db.execute("UPDATE categories SET status='proposed', decided=NULL, node_id=NULL WHERE id=?", (cid,))
    return _one(db, cid)


def _one(db, cid) -> Category:
    return next(c for c in listing(db) if c.id == cid)
