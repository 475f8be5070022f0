"""The learned ranker of the analogy slot (opt-in): its model, its veto and its choice on a real
store, and the fitted weights that ship."""

import numpy as np
import pytest

import fastmem
from fastmem.analogy.ranker import FEATURES, Ranker, default_ranker, features
from fastmem.errors import InvalidInput
from tests.shared import FACTS

OWNS = "Acme Corporation owns Widget Inc, a small subsidiary in Ohio."
TURN = "My friend Bob owns a red car."


def test_the_shipped_ranker_loads_and_rises_with_the_mapping():
    r = default_ranker()
    assert r is not None and r.coef.shape == (len(FEATURES),) and 0 < r.threshold < 1
    base = features(z=3.0, code_z=3.0, mapping=0.2, n_turn=4, n_cand=4, pairs=[(0, 0), (1, 1)], labels=["own", "make"])
    better = features(z=3.0, code_z=3.0, mapping=0.6, n_turn=4, n_cand=4, pairs=[(0, 0), (1, 1), (2, 2)],
                      labels=["own", "make", "sell"])
    assert base.shape == (len(FEATURES),)
    assert 0.0 < r.prob(base) < r.prob(better) < 1.0  # more of both stories mapped: a likelier analog


def test_bad_rankers_are_refused(tmp_path):
    with pytest.raises(InvalidInput, match="analogy_ranker"):
        fastmem.Memory(str(tmp_path / "a.db"), analogy=fastmem.AnalogySettings(ranker="yes"))
    with pytest.raises(ValueError, match="means, scales and weights"):
        Ranker([0.0], [1.0], [1.0], 0.0, 0.5)


def _ranker(threshold, coef=None):
    n = len(FEATURES)
    return Ranker(np.zeros(n), np.ones(n), np.ones(n) if coef is None else coef, 0.0, threshold)


def test_the_ranker_decides_whether_and_what_the_slot_shows(tmp_path):
    db = str(tmp_path / "m.db")
    with fastmem.Memory(db) as m:
        m.remember_many(FACTS)
        target = m.remember(OWNS)
        hand = m.recall(TURN, k=5, record=False).analogy
        assert hand is not None and hand.id == target and "ranker_p" not in hand.why
    with fastmem.Memory(db, analogy=fastmem.AnalogySettings(ranker=_ranker(1.0))) as m:  # a probability of 1 is never reached
        assert m.recall(TURN, k=5, record=False).analogy is None
    with fastmem.Memory(db, analogy=fastmem.AnalogySettings(ranker=_ranker(0.0))) as m:
        a = m.recall(TURN, k=5, record=False).analogy
        assert a is not None and a.id == target and 0 < a.why["ranker_p"] <= 1
        assert a.score == pytest.approx(a.why["ranker_p"])
    with fastmem.Memory(db, analogy=fastmem.AnalogySettings(ranker=True)) as m:  # the shipped one: shown only from its threshold
        a = m.recall(TURN, k=5, record=False).analogy
        assert a is None or (a.id == target and a.why["ranker_p"] >= default_ranker().threshold)
