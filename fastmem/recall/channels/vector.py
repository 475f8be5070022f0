"""The vector channel: the nearest memories by embedding (hnswlib inner product); a memory
longer than the model's window is scored by the better of its mean vector and its best window
less what a long memory's best window gains by chance for the turn
(:mod:`fastmem.derived.windows`). Also leaves the neighbours' labels in rank order for the
keyword channel and the analogy slot's surface condition."""

from __future__ import annotations

import numpy as np

from ...derived.ann import VectorIndex
from .spec import Channel, TurnQuery, channel

__all__ = ["vector", "with_windows"]


def vector(index: VectorIndex, vec: np.ndarray, pool: int, allowed) -> tuple[Channel, np.ndarray]:
    """Nearest memories by embedding; also returns the labels in rank order (the analogy
    slot's surface condition reads them)."""
    labels, sims = index.query(np.asarray(vec, np.float32), pool, allowed)
    return {int(m): (r + 1, float(s)) for r, (m, s) in enumerate(zip(labels, sims))}, labels


def with_windows(found: Channel, best: dict[int, float], pool: int) -> Channel:
    """The vector channel with long memories scored by the better of their mean vector and
    their best window less its chance gain (``best``:
    :meth:`fastmem.derived.windows.WindowIndex.best`), ranked again, its ``pool`` best kept."""
    score = {m: v[1] for m, v in found.items()}
    for m, s in best.items():
        if s > score.get(m, -np.inf):
            score[m] = s
    ranked = sorted(score.items(), key=lambda x: (-x[1], x[0]))[:pool]
    return {m: (r + 1, s) for r, (m, s) in enumerate(ranked)}


@channel("vector", also=("derived", "slot"), weight=1.0, cut_ties=False, needs_vector=True, needs_model=True)
def run(p, t: TurnQuery) -> Channel:
    found, t.labels = vector(p.index, t.vec, t.fetch, t.members)
    best = p.windows.best(t.vec, t.fetch, t.members)  # long memories: their best window
    return with_windows(found, best, t.fetch) if best else found
