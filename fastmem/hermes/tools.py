"""The provider's tools: their JSON schemas and what each call does.

``fact_store`` and ``fact_feedback`` keep the parameters and result shapes of hermes' bundled
holographic provider, so prompts and habits carry over (a *fact* is a fastmem memory; its
``fact_id`` is the memory id shown as ``[m<id>]`` in the recalled context). ``trust_score`` is
the memory's use weight on a 0-1 scale (0.5 neutral; ``Memory.use.counts(id)["trust"]``). The ``fastmem_*``
tools reach what the holographic store has no counterpart for: fused recall with the analogy
slot, structural analogies, the knowledge graph, chunks and emergent categories.

Every handler returns a dict; :func:`call` turns any failure into ``{"error": ...}``.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from typing import Any

from ..errors import FastmemError, InvalidInput, NotFound
from ..integrations import standing_metadata, tool_hit
from ..util.text import from_epoch

__all__ = ["SCHEMAS", "TOOL_NAMES", "Context", "call"]

logger = logging.getLogger("fastmem.hermes")

_CATEGORIES = ["user_pref", "project", "tool", "general"]

FACT_STORE = {
    "name": "fact_store",
    "description": (
        "Long-term memory of facts about the user, their projects and the world, with a knowledge "
        "graph of the people, places and things they mention.\n"
        "Actions: add (store a fact worth remembering), search (find facts by meaning and keywords), "
        "probe (every fact about one entity), related (what is connected to an entity), "
        "reason (facts that connect several entities at once), contradict (pairs of facts that "
        "disagree about the same entity and relation), update / remove / list.\n"
        "Check memory (search or probe) before answering questions about the user."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string",
                       "enum": ["add", "search", "probe", "related", "reason", "contradict", "update", "remove", "list"]},
            "content": {"type": "string", "description": "The fact, as a sentence (add; new text for update)."},
            "query": {"type": "string", "description": "What to look for (search)."},
            "entity": {"type": "string", "description": "A person, place or thing (probe, related)."},
            "entities": {"type": "array", "items": {"type": "string"}, "description": "Several entities (reason)."},
            "fact_id": {"type": "integer", "description": "The fact's id (update, remove)."},
            "category": {"type": "string", "enum": _CATEGORIES},
            "tags": {"type": "string", "description": "Comma-separated tags."},
            "trust_delta": {"type": "number", "description": "update: > 0 rates the fact helpful, < 0 unhelpful."},
            "min_trust": {"type": "number", "description": "Only facts with at least this trust (0-1)."},
            "limit": {"type": "integer", "description": "Most results (default 10)."},
        },
        "required": ["action"],
    },
}

FACT_FEEDBACK = {
    "name": "fact_feedback",
    "description": ("Rate a fact after using it: 'helpful' when it was right and useful, 'unhelpful' when "
                    "it was wrong or out of date. Helpful facts rank higher in later recalls, unhelpful ones lower."),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["helpful", "unhelpful"]},
            "fact_id": {"type": "integer", "description": "The fact's id (the number in [m<id>])."},
        },
        "required": ["action", "fact_id"],
    },
}

RECALL = {
    "name": "fastmem_recall",
    "description": ("Recall memories for a question or topic: keyword, meaning and knowledge-graph matches fused "
                    "and ranked by past usefulness, plus at most one analogy (a past memory with the same "
                    "structure in a different domain). Each hit says which signals found it."),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The question or topic."},
            "k": {"type": "integer", "description": "How many memories (default 8, at most 50)."},
            "analogy": {"type": "boolean", "description": "Also look for an analogy (default true)."},
        },
        "required": ["query"],
    },
}

ANALOGIES = {
    "name": "fastmem_analogies",
    "description": ("Find past memories whose structure (who does what to what, in which order) matches a "
                    "text, whatever their topic, with what they share. For lateral thinking: 'what else worked like this?'"),
    "parameters": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "A situation, plan or story."},
            "k": {"type": "integer", "description": "How many (default 5, at most 20)."},
        },
        "required": ["text"],
    },
}

GRAPH = {
    "name": "fastmem_graph",
    "description": ("Query the knowledge graph built from memories: 'entity' (what a name resolves to and its facts), "
                    "'neighbours' (entities one or two steps away), 'path' (the chain of facts linking two entities)."),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["entity", "neighbours", "path"]},
            "name": {"type": "string", "description": "An entity name (any alias)."},
            "other": {"type": "string", "description": "The second entity (path)."},
            "depth": {"type": "integer", "description": "neighbours: 1 or 2 (default 1)."},
        },
        "required": ["action", "name"],
    },
}

CHUNKS = {
    "name": "fastmem_chunks",
    "description": ("Chunks are memories that summarise a cluster of related memories (made by fastmem's "
                    "consolidation pass). 'list' shows them; 'expand' gives the memories a chunk stands for."),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["list", "expand"]},
            "chunk_id": {"type": "integer", "description": "The chunk's id (expand)."},
        },
        "required": ["action"],
    },
}

CATEGORIES = {
    "name": "fastmem_categories",
    "description": ("Categories fastmem proposed for entities that play the same roles (e.g. 'things that people "
                    "drive'). 'list' shows them (optionally by status); approve, reject or revert one by id when the "
                    "user asks you to review them."),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["list", "approve", "reject", "revert"]},
            "category_id": {"type": "integer"},
            "status": {"type": "string", "enum": ["proposed", "approved", "rejected"]},
        },
        "required": ["action"],
    },
}

#: Every schema the provider offers, in order.
SCHEMAS: list[dict[str, Any]] = [FACT_STORE, FACT_FEEDBACK, RECALL, ANALOGIES, GRAPH, CHUNKS, CATEGORIES]
TOOL_NAMES = frozenset(s["name"] for s in SCHEMAS)


@dataclass
class Context:
    """Who is calling: the store scope, whether writes are allowed, the session."""

    scope: str
    writable: bool
    session: str | None = None


# -- argument helpers ----------------------------------------------------------------------
def _text(args: dict, key: str) -> str:
    v = args.get(key)
    if not isinstance(v, str) or not v.strip():
        raise InvalidInput(f"'{key}' is required (a non-empty string)")
    return v


def _int(args: dict, key: str, default: int | None = None, lo: int = 1, hi: int = 10**12) -> int:
    v = args.get(key, default)
    if v is None:
        raise InvalidInput(f"'{key}' is required (an integer)")
    if isinstance(v, bool) or isinstance(v, float) and not v.is_integer():
        raise InvalidInput(f"'{key}' must be an integer, not {v!r}")
    try:
        n = int(v)
    except (TypeError, ValueError):
        raise InvalidInput(f"'{key}' must be an integer, not {v!r}") from None
    return min(max(n, lo), hi)


def _float(args: dict, key: str, default: float | None) -> float | None:
    v = args.get(key, default)
    if v is None:
        return None
    if isinstance(v, bool):
        raise InvalidInput(f"'{key}' must be a number")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise InvalidInput(f"'{key}' must be a number, not {v!r}") from None
    if not math.isfinite(f):
        raise InvalidInput(f"'{key}' must be a finite number")
    return f


def _own(mem, ctx: Context, mid: int) -> dict:
    """The memory's row when it is in the caller's scope (else NotFound: another scope's
    memories do not exist for this caller)."""
    row = mem.get(mid)
    if row["scope"] != ctx.scope:
        raise NotFound(f"no fact with id {mid}")
    return row


def _fact(mem, row: dict, score: float | None = None) -> dict:
    u = mem.use.counts(row["id"])
    out = {"fact_id": row["id"], "content": row["text"], "category": row["meta"].get("category", "general"),
           "tags": row["meta"].get("tags", ""), "trust_score": u["trust"], "retrieval_count": u["surfaced"],
           "helpful_count": u["engaged"], "created_at": from_epoch(row["created"]).isoformat(),
           "updated_at": from_epoch(row["updated"]).isoformat()}
    if row.get("at") is not None:
        out["at"] = row["at"].isoformat()
    if score is not None:
        out["score"] = round(float(score), 6)
    return out


def _facts(mem, ids_scores, min_trust: float | None, limit: int) -> list[dict]:
    out = []
    for mid, score in ids_scores:
        try:
            f = _fact(mem, mem.get(mid), score)
        except NotFound:
            continue
        if min_trust is not None and f["trust_score"] < min_trust:
            continue
        out.append(f)
        if len(out) >= limit:
            break
    return out


def _need_write(ctx: Context, what: str) -> None:
    if not ctx.writable:
        raise InvalidInput(f"{what} is not allowed here: this agent context reads memory only")


def _entity_memories(mem, ctx: Context, name: str) -> dict[int, int]:
    """Memory id -> how many facts it has about the entity, in the caller's scope."""
    out: dict[int, int] = {}
    try:
        facts = mem.graph.facts_about(name, limit=500, scope=ctx.scope)
    except NotFound:
        return out
    for f in facts:
        out[f.memory_id] = out.get(f.memory_id, 0) + 1
    return out


# -- fact_store ----------------------------------------------------------------------------
def fact_store(mem, ctx: Context, args: dict) -> dict:
    """The ``fact_store`` tool: one action (see :data:`FACT_STORE`), in the caller's scope."""
    action = args.get("action")
    limit = _int(args, "limit", 10, 1, 100)
    min_trust = _float(args, "min_trust", None)
    category = args.get("category")
    if category is not None and category not in _CATEGORIES:
        raise InvalidInput(f"category must be one of {_CATEGORIES}")
    run = _FACT_ACTIONS.get(action) if isinstance(action, str) else None
    if run is None:
        raise InvalidInput(f"unknown action {action!r}; one of {', '.join(_FACT_ACTIONS)}")
    return run(mem, ctx, args, limit=limit, min_trust=min_trust, category=category)


def _fact_add(mem, ctx, args, *, limit, min_trust, category) -> dict:
    _need_write(ctx, "add")
    content = _text(args, "content").strip()
    dup = mem.rows.with_text(content, scope=ctx.scope)
    if dup:
        return {"fact_id": dup[0], "status": "exists"}
    meta = {"category": category or "general", "tags": str(args.get("tags") or ""), "via": "fact_store"}
    return {"fact_id": mem.remember(content, scope=ctx.scope, meta=meta, source=None, wait=False),  # no model wait
            "status": "added"}


def _fact_search(mem, ctx, args, *, limit, min_trust, category) -> dict:
    res = mem.recall(_text(args, "query"), k=min(limit * 2, 100), scope=ctx.scope, session=ctx.session, analogy=False)
    hits = [(h.id, h.score) for h in res.hits
            if category is None or mem.get(h.id)["meta"].get("category", "general") == category]
    results = _facts(mem, hits, min_trust, limit)
    return {"results": results, "count": len(results)}


def _fact_probe(mem, ctx, args, *, limit, min_trust, category) -> dict:
    name = _text(args, "entity")
    ranked = sorted(_entity_memories(mem, ctx, name).items(), key=lambda x: (-x[1], -x[0]))
    if not ranked:  # not in the graph: fall back to words
        ranked = [(h.id, h.score) for h in mem.recall(name, k=limit, scope=ctx.scope, analogy=False,
                                                      channels=("keyword",), record=False).hits]
    results = _facts(mem, ranked, min_trust, limit)
    return {"results": results, "count": len(results)}


def _fact_related(mem, ctx, args, *, limit, min_trust, category) -> dict:
    name = _text(args, "entity")
    try:
        near = mem.graph.neighbours(name, depth=1, scope=ctx.scope)
    except NotFound:
        return {"results": [], "count": 0, "entities": []}
    seen: dict[int, float] = {}
    for ent, _ in near:
        for f in mem.graph.facts_about(ent.id, limit=50, scope=ctx.scope):
            seen[f.memory_id] = seen.get(f.memory_id, 0.0) + 1.0
    ranked = sorted(seen.items(), key=lambda x: (-x[1], -x[0]))
    results = _facts(mem, ranked, min_trust, limit)
    return {"results": results, "count": len(results), "entities": [e.name for e, _ in near][:50]}


def _fact_reason(mem, ctx, args, *, limit, min_trust, category) -> dict:
    names = args.get("entities")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise InvalidInput("reason requires 'entities': a list of names")
    per = [_entity_memories(mem, ctx, n) for n in names[:10]]
    score: dict[int, int] = {}
    for found in per:
        for mid in found:
            score[mid] = score.get(mid, 0) + 1
    ranked = sorted(score.items(), key=lambda x: (-x[1], -x[0]))  # memories linked to the most entities first
    results = _facts(mem, [(m, s / len(per)) for m, s in ranked], min_trust, limit)
    return {"results": results, "count": len(results)}


def _fact_contradict(mem, ctx, args, *, limit, min_trust, category) -> dict:
    results = contradictions(mem, ctx, limit)
    return {"results": results, "count": len(results)}


def _fact_update(mem, ctx, args, *, limit, min_trust, category) -> dict:
    _need_write(ctx, "update")
    mid = _int(args, "fact_id")
    row = _own(mem, ctx, mid)
    content = args.get("content")
    meta = dict(row["meta"])
    if category is not None:
        meta["category"] = category
    if args.get("tags") is not None:
        meta["tags"] = str(args["tags"])
    mem.update(mid, text=_text(args, "content") if content is not None else None,
               meta=meta if meta != row["meta"] else None)
    delta = _float(args, "trust_delta", None)
    if delta:
        mem.feedback(mid, engaged=delta > 0)
    return {"updated": True}


def _fact_remove(mem, ctx, args, *, limit, min_trust, category) -> dict:
    _need_write(ctx, "remove")
    mid = _int(args, "fact_id")
    try:
        _own(mem, ctx, mid)
    except NotFound:
        return {"removed": False}
    mem.forget(mid)
    return {"removed": True}


def _fact_list(mem, ctx, args, *, limit, min_trust, category) -> dict:
    ids = mem.use.most_used(scope=ctx.scope, limit=limit * 4)
    facts = [f for f in _facts(mem, [(i, None) for i in ids], min_trust, 10**9)
             if category is None or f["category"] == category][:limit]
    return {"facts": facts, "count": len(facts)}


_FACT_ACTIONS = {"add": _fact_add, "search": _fact_search, "probe": _fact_probe, "related": _fact_related,
                 "reason": _fact_reason, "contradict": _fact_contradict, "update": _fact_update,
                 "remove": _fact_remove, "list": _fact_list}


def contradictions(mem, ctx: Context, limit: int) -> list[dict]:
    """Pairs of memories that say the same subject has the same (single-valued) relation to
    different objects: "Alice lives in Berlin" / "Alice lives in Lisbon". Indexed self-join
    of the graph's edges, newest pairs first."""
    rows = mem.graph.conflicts(SINGLE_VALUED, scope=ctx.scope, limit=limit * 4)
    out, seen = [], set()
    for ma, mb, subj, rel, oa, ob in rows:
        if (ma, mb) in seen:
            continue
        seen.add((ma, mb))
        out.append({"fact_a": _fact(mem, mem.get(ma)), "fact_b": _fact(mem, mem.get(mb)), "shared_entities": [subj],
                    "relation": rel, "objects": [oa, ob], "contradiction_score": 1.0})
        if len(out) >= limit:
            break
    return out


#: Relations a subject normally has one object of at a time (canonical names).
SINGLE_VALUED = {"live_in", "located_in", "born_in", "marry", "work_for"}  # one can manage many things


# -- fact_feedback -------------------------------------------------------------------------
def fact_feedback(mem, ctx: Context, args: dict) -> dict:
    _need_write(ctx, "feedback")
    action = args.get("action")
    if action not in ("helpful", "unhelpful"):
        raise InvalidInput("action must be 'helpful' or 'unhelpful'")
    mid = _int(args, "fact_id")
    _own(mem, ctx, mid)
    old = mem.use.counts(mid)
    mem.feedback(mid, engaged=action == "helpful")
    return {"fact_id": mid, "old_trust": old["trust"], "new_trust": mem.use.counts(mid)["trust"],
            "helpful_count": old["engaged"] + (action == "helpful")}


# -- fastmem's own -------------------------------------------------------------------------
_hit = tool_hit


def recall_tool(mem, ctx: Context, args: dict) -> dict:
    res = mem.recall(_text(args, "query"), k=_int(args, "k", 8, 1, 50), scope=ctx.scope, session=ctx.session,
                     analogy=bool(args.get("analogy", True)))
    an = res.analogy
    return {"hits": [_hit(h) for h in res.hits],
            "analogy": None if an is None else {**_hit(an), "because": list(an.why["matched"]), "z": round(an.why["z"], 2)},
            "standing": [standing_metadata(x) for x in res.standing]}


def analogies_tool(mem, ctx: Context, args: dict) -> dict:
    found = mem.analogy.explore(_text(args, "text"), k=_int(args, "k", 5, 1, 20), scope=ctx.scope)
    return {"analogies": [{"id": a.id, "text": a.text, "z": round(a.why["z"], 2), "shared": list(a.why["matched"]),
                           "surface": round(a.why["surface"], 3)} for a in found]}


def graph_tool(mem, ctx: Context, args: dict) -> dict:
    action, name = args.get("action"), _text(args, "name")
    if action == "entity":
        ents = mem.graph.entity(name, scope=ctx.scope)
        return {"entities": [{"id": e.id, "name": e.name, "type": e.type, "aliases": list(e.aliases),
                              "facts": [{"subject": f.subject, "relation": f.relation, "object": f.object,
                                         "mood": f.mood, "detail": f.detail,
                                         "fact_id": f.memory_id} for f in mem.graph.facts_about(e.id, limit=20, scope=ctx.scope)]}
                             for e in ents]}
    if action == "neighbours":
        depth = _int(args, "depth", 1, 1, 2)
        return {"neighbours": [{"name": e.name, "type": e.type, "distance": d}
                               for e, d in mem.graph.neighbours(name, depth=depth, scope=ctx.scope)[:100]]}
    if action == "path":
        path = mem.graph.path(name, _text(args, "other"), scope=ctx.scope)
        return {"path": None if path is None else [{"subject": f.subject, "relation": f.relation, "object": f.object,
                                                    "fact_id": f.memory_id} for f in path]}
    raise InvalidInput("action must be 'entity', 'neighbours' or 'path'")


def chunks_tool(mem, ctx: Context, args: dict) -> dict:
    if args.get("action") == "list":
        return {"chunks": [{"id": c, "text": mem.get(c)["text"], "members": len(mem.expand(c))}
                           for c in mem.chunks.list(scope=ctx.scope)[:50]]}
    if args.get("action") == "expand":
        cid = _int(args, "chunk_id")
        _own(mem, ctx, cid)
        return {"members": [{"id": r.id, "text": r.text, "at": r.at} for r in mem.expand(cid)]}
    raise InvalidInput("action must be 'list' or 'expand'")


def categories_tool(mem, ctx: Context, args: dict) -> dict:
    action = args.get("action")
    if action == "list":
        status = args.get("status")
        cats = mem.categories.list(status, scope=ctx.scope)  # this user's own, never another's
    elif action in ("approve", "reject", "revert"):
        _need_write(ctx, action)
        cid = _int(args, "category_id")
        if cid not in {c.id for c in mem.categories.list(scope=ctx.scope)}:
            raise NotFound(f"no category with id {cid}")
        cats = [getattr(mem.categories, action)(cid)]
    else:
        raise InvalidInput("action must be list, approve, reject or revert")
    return {"categories": [{"id": c.id, "name": c.name, "status": c.status, "members": list(c.members)[:30],
                            "relations": list(c.relations)} for c in cats]}


HANDLERS = {"fact_store": fact_store, "fact_feedback": fact_feedback, "fastmem_recall": recall_tool,
            "fastmem_analogies": analogies_tool, "fastmem_graph": graph_tool, "fastmem_chunks": chunks_tool,
            "fastmem_categories": categories_tool}


def call(mem, ctx: Context, name: str, args: Any) -> str:
    """Run one tool call; always a JSON string, ``{"error": ...}`` on any failure. A documented
    error (:class:`~fastmem.errors.FastmemError`) is the model's to read; anything else is a
    bug, logged with its traceback and answered as an internal error (the agent loop goes on)."""
    try:
        if mem is None:
            raise FastmemError("the fastmem store is not open (see the provider's log for why)")
        if not isinstance(name, str) or name not in HANDLERS:
            raise InvalidInput(f"unknown tool {name!r}")
        if not isinstance(args, dict):
            raise InvalidInput("arguments must be a JSON object")
        return json.dumps(HANDLERS[name](mem, ctx, args), default=str)
    except NotFound as exc:
        return json.dumps({"error": str(exc)})
    except FastmemError as exc:
        return json.dumps({"error": str(exc)})
    except Exception as exc:  # a bug: never an exception into the agent loop, always in the log
        logger.exception("fastmem: tool %s failed unexpectedly (a bug; please report it)", name)
        return json.dumps({"error": f"internal error in {name}: {type(exc).__name__}: {exc}"})
