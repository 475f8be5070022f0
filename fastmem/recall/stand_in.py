"""Chunks in recall: a chunk (:mod:`fastmem.passes.chunks`, which writes them) stands for its
members when both would surface, so a recall shows the summary once rather than the summary
and the memories it sums up. Reads the chunk tables only."""

from __future__ import annotations

import json

import apsw

__all__ = ["stand_in"]


def stand_in(db: apsw.Connection, ranked: list[tuple[int, float]], k: int) -> tuple[list[tuple[int, float]], dict[int, dict]]:
    """The first ``k`` of ``ranked`` with each chunk standing for its members: a member is
    dropped when a chunk of it is shown, and the chunk takes the best place of the group
    (its score the group's best). Returns the hits and ``{chunk id: why}`` for the chunks
    that stood in. Without chunks in the store this is ``ranked[:k]``."""
    if db.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is None:
        return ranked[:k], {}
    window = ranked[: max(4 * k, 50)]
    ids = json.dumps([m for m, _ in window])
    chunk_of: dict[int, set[int]] = {}
    groups: dict[int, set[int]] = {}
    for cid, mid in db.execute(
        "SELECT chunk_id, member_id FROM chunk_members WHERE chunk_id IN (SELECT value FROM json_each(?1)) "
        "OR member_id IN (SELECT value FROM json_each(?1))", (ids,)
    ):
        chunk_of.setdefault(mid, set()).add(cid)
        groups.setdefault(cid, set()).add(mid)
    if not groups:
        return ranked[:k], {}
    out: list[list] = []  # [id, score]
    shown: set[int] = set()
    why: dict[int, dict] = {}
    for mid, score in window:
        if len(out) >= k:
            break
        if chunk_of.get(mid, set()) & shown:  # a chunk of it is already shown
            cid = min(chunk_of[mid] & shown)
            why[cid]["suppressed"].append(mid)
            continue
        if mid in groups:  # a chunk: it replaces its members shown so far
            mine = [i for i, (x, _) in enumerate(out) if x in groups[mid]]
            why[mid] = {"members": len(groups[mid]), "suppressed": [out[i][0] for i in mine], "own_score": score}
            if mine:
                best = max(score, max(out[i][1] for i in mine))
                first = mine[0]
                for i in reversed(mine):
                    del out[i]
                out.insert(first, [mid, best])
            else:
                out.append([mid, score])
            shown.add(mid)
            continue
        out.append([mid, score])
    if len(out) < k:  # beyond the window: plain order
        have = {m for m, _ in out} | {m for w in why.values() for m in w["suppressed"]}
        out += [[m, s] for m, s in ranked[len(window):] if m not in have][: k - len(out)]
    return [(m, s) for m, s in out], why
