"""Fusion of the recall channels: the head of a recall does not depend on how many hits were asked for."""

import random

from fastmem import benchmark as B
from fastmem import fusion as F


def _channel(n, seed):
    rnd = random.Random(seed)
    scores = sorted((rnd.uniform(0, 10) for _ in range(n)), reverse=True)
    return {1000 + i: (i + 1, s) for i, s in enumerate(scores)}


def test_normalised_head_is_the_same_for_a_longer_cut():
    long = _channel(240, seed=3)
    short = {m: v for m, v in long.items() if v[0] <= F.REF_DEPTH}
    a, b = F.normalised(long), F.normalised(short)
    assert all(abs(a[m] - b[m]) < 1e-12 for m in short)
    assert a[1000] == 1.0 and b[1000 + F.REF_DEPTH - 1] == 0.0
    assert all(v == 0.0 for m, v in a.items() if long[m][0] > F.REF_DEPTH)  # the tail adds nothing


def test_small_channels_are_min_max_and_ties_order_nothing():
    ch = {1: (1, 3.0), 2: (2, 2.0), 3: (3, 1.0)}
    assert F.normalised(ch) == {1: 1.0, 2: 0.5, 3: 0.0}
    fused = F.relative_score({"keyword": {1: (1, 2.0), 2: (1, 2.0)}, "vector": {1: (1, 0.9), 2: (2, 0.5)}})
    assert fused[1] > fused[2] and fused[1] - fused[2] == F.DEFAULT_WEIGHTS["vector"]


def test_asking_for_more_hits_keeps_the_first_ones(mem):
    mem.remember_many(B.texts(300, seed=4), progress=False)
    for q in B.queries(8, seed=5):
        small = [h.id for h in mem.recall(q, k=5, record=False, analogy=False).hits]
        large = [h.id for h in mem.recall(q, k=60, record=False, analogy=False).hits]
        assert large[:5] == small, q
