"""Rank fusion of the recall channels.

Each channel gives ``{memory_id: (rank, score)}`` (rank 1 is best; scores larger-is-better).

* ``rrf``: reciprocal-rank fusion, ``sum_c w_c / (K + rank_c)`` with K = 60, where memories
  with equal channel scores share the best rank of their tie (so a term that every memory
  contains cannot order them arbitrarily).
* ``score`` (relative score fusion): each channel's scores min-max normalised over its own
  candidates, then ``sum_c w_c * norm_c``. A channel whose candidates all score alike adds
  the same to each of them and so orders nothing.

Measured on LoCoMo dev (bench/locomo.py, conversations 26 / 30): fused any@5 is 0.613 / 0.642
with ``score`` against 0.520 / 0.556 with ``rrf`` (keyword alone 0.547 / 0.630), so ``score``
is the default. The context channel weighs 1.0 (0.5: any@5 0.623, 0.75: 0.641, 1.0: 0.658,
1.5: 0.593, with the neighbour credit of a question's answer and of any other turn equal).
"""

from __future__ import annotations

RRF_K = 60.0
DEFAULT_WEIGHTS = {"keyword": 1.0, "vector": 1.0, "graph": 0.5, "context": 1.0}


def drop_boundary_ties(ch: dict[int, tuple[int, float]], pool: int) -> dict[int, tuple[int, float]]:
    """A channel cut at ``pool`` candidates cannot say which of the memories tied with its last
    score made the cut, so those carry no evidence: drop them (all of them when every
    candidate ties, e.g. a word that every memory contains)."""
    if len(ch) < pool or not ch:
        return ch
    last = max(ch.values(), key=lambda v: v[0])[1]
    return {m: v for m, v in ch.items() if abs(v[1] - last) > 1e-9 * max(1.0, abs(last))}


def _tie_ranks(ch: dict[int, tuple[int, float]]) -> dict[int, int]:
    out: dict[int, int] = {}
    prev_score, prev_rank = None, 0
    for mid, (rank, score) in sorted(ch.items(), key=lambda x: x[1][0]):
        if prev_score is None or abs(score - prev_score) > 1e-9 * max(1.0, abs(score)):
            prev_rank = rank
            prev_score = score
        out[mid] = prev_rank
    return out


def rrf(channels: dict[str, dict[int, tuple[int, float]]], weights=DEFAULT_WEIGHTS) -> dict[int, float]:
    fused: dict[int, float] = {}
    for name, ch in channels.items():
        w = weights.get(name, 1.0)
        for mid, rank in _tie_ranks(ch).items():
            fused[mid] = fused.get(mid, 0.0) + w / (RRF_K + rank)
    return fused


def relative_score(channels: dict[str, dict[int, tuple[int, float]]], weights=DEFAULT_WEIGHTS) -> dict[int, float]:
    fused: dict[int, float] = {}
    for name, ch in channels.items():
        if not ch:
            continue
        w = weights.get(name, 1.0)
        scores = [s for _, s in ch.values()]
        lo, hi = min(scores), max(scores)
        span = hi - lo
        for mid, (_, s) in ch.items():
            norm = (s - lo) / span if span > 1e-12 else 1.0
            fused[mid] = fused.get(mid, 0.0) + w * norm
    return fused


FUSIONS = {"rrf": rrf, "score": relative_score}
