"""Adapters for agent frameworks, each an optional extra:

* :mod:`fastmem.integrations.langchain` (``fastmem[langchain]``): a LangChain retriever and a
  LangGraph long-term memory store;
* :mod:`fastmem.integrations.llama_index` (``fastmem[llama-index]``): a LlamaIndex retriever.

What a recall returns is the same everywhere: the hits (id, score, channels), when one
qualifies, the analogy with the reason it was chosen (:func:`hit_metadata`,
:func:`analogy_metadata`), and the standing instructions and preferences that apply to the
turn (:func:`standing_metadata`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["analogy_metadata", "analogy_reason", "hit_metadata", "standing_metadata"]


def hit_metadata(h) -> dict[str, Any]:
    """A recalled memory's metadata: ``kind="hit"``, ``id``, ``score``, ``channels`` (channel ->
    rank), ``scope``, and ``at`` (ISO 8601) / ``speaker`` when the memory has them."""
    out: dict[str, Any] = {"kind": "hit", "id": h.id, "score": float(h.score), "scope": h.scope,
                           "channels": {c: v["rank"] for c, v in h.why.items() if isinstance(v, dict) and "rank" in v}}
    if h.at is not None:
        out["at"] = h.at.isoformat()
    if h.speaker is not None:
        out["speaker"] = h.speaker
    return out


def analogy_reason(an) -> str:
    """One line saying why a memory is the turn's analogy: its corresponding events and
    entities, their information and the p-value (``why["reason"]``)."""
    return str(an.why["reason"])


def analogy_metadata(an) -> dict[str, Any]:
    """The analogy's metadata: as :func:`hit_metadata` with ``kind="analogy"``, ``z``,
    ``surface``, ``shared`` (the structure it has in common with the turn) and ``reason``."""
    return {**hit_metadata(an), "kind": "analogy", "z": float(an.why["z"]), "surface": float(an.why["surface"]),
            "shared": list(an.why["matched"]), "reason": analogy_reason(an)}


def standing_metadata(s) -> dict[str, Any]:
    """A standing statement's metadata (:class:`fastmem.reader.standing.Standing`): ``kind``
    ("instruction" or "preference"), ``id``, ``statement`` (the sentence), ``polarity``,
    ``score`` (the match), ``at`` (ISO 8601), ``supersedes`` (older ids it replaced) and
    ``reach`` ("global": every turn; "topical": turns on its topic), and ``channels`` (empty: a
    statement comes with every turn of its scope, not from a search), so that every document of a
    recall carries the same keys as a hit's."""
    from datetime import datetime, timezone

    return {"kind": s.kind, "id": s.id, "statement": s.sentence, "polarity": s.polarity,
            "score": round(float(s.score), 6), "at": datetime.fromtimestamp(s.at, timezone.utc).isoformat(),
            "supersedes": list(s.supersedes), "reach": s.reach, "channels": {}}


def tool_hit(h) -> dict[str, Any]:
    """A recalled memory as an agent tool returns it (hermes' ``fastmem_recall``, the MCP
    ``recall``): ``id``, ``text``, ``score`` (6 decimals), ``channels`` and ``at`` /
    ``speaker`` when set."""
    out = hit_metadata(h)
    del out["kind"], out["scope"]
    return {"text": h.text, **out, "score": round(out["score"], 6)}
