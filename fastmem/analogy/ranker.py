"""The analogy slot's learned ranker: which of a turn's few structural candidates is the analogy,
and whether any is good enough to show.

For each candidate that reaches the slot's exact stage (at most ``analogy_rerank``, 16 by
default) and passes its gate (z, matched terms, mapping units), :func:`features` describes the
pair (turn, candidate) by what the structure code, the term alignment and the structure
mapping already computed, and a logistic model turns them into the probability that the
candidate is an analog of the turn. The slot shows the most probable candidate (times its use
weight) when that probability reaches the model's threshold, and nothing otherwise.

The model is fitted on ProPara-Logy's silver training split only, by
``fastmem eval proparalogy PATH --fit`` (:func:`fastmem.evaluate.proparalogy.fit`), which
cross-validates it by source process and writes :mod:`fastmem.analogy.ranker_weights`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["FEATURES", "Ranker", "features", "default_ranker", "resolve_ranker"]

#: What :func:`features` returns, in order.
FEATURES = (
    "z",            # the slot's exact alignment z over the store
    "code_z",       # the structure code's similarity, as a z over the store
    "mapping",      # structure-mapping score over the two stories' self-mappings (1 = same structure)
    "turn_mapped",  # share of the turn's events in the mapping
    "cand_mapped",  # share of the candidate's events in the mapping
    "adjacent",     # share of consecutive mapped pairs adjacent in both stories
    "same_verb",    # share of mapped pairs with the same relation (the rest are graded synonyms)
)
# Left out, measured: the matched units, the length ratio and the surface cosine. They tie the
# model to the silver set's paragraphs (a two-event turn has few units however well it maps) and
# to its topics; without them the cross-validated precision is higher (0.644 against 0.609).


def features(*, z: float, code_z: float, mapping: float, n_turn: int, n_cand: int,
             pairs: Sequence[tuple[int, int]], labels: Sequence[str]) -> np.ndarray:
    """The feature vector (float64, len(FEATURES)) of one turn-candidate pair."""
    k = len(pairs)
    adj = sum(1 for (i1, j1), (i2, j2) in zip(pairs, pairs[1:]) if i2 == i1 + 1 and j2 == j1 + 1)
    return np.array([z, code_z, mapping, k / max(n_turn, 1), k / max(n_cand, 1), adj / max(k - 1, 1),
                     sum(1 for lab in labels if "=" not in lab) / max(k, 1)])


class Ranker:
    """A standardised logistic model over :data:`FEATURES` with a firing threshold.

    Parameters
    ----------
    mean, scale, coef : sequence of float
        Per feature: the standardisation and the weight.
    intercept : float
    threshold : float
        The probability a candidate needs to be shown.
    """

    def __init__(self, mean, scale, coef, intercept: float, threshold: float) -> None:
        self.mean = np.asarray(mean, np.float64)
        self.scale = np.asarray(scale, np.float64)
        self.coef = np.asarray(coef, np.float64)
        if not (self.mean.shape == self.scale.shape == self.coef.shape == (len(FEATURES),)):
            raise ValueError(f"a ranker needs {len(FEATURES)} means, scales and weights")
        self.intercept = float(intercept)
        self.threshold = float(threshold)

    def prob(self, f: np.ndarray) -> float:
        """The probability that the candidate described by ``f`` is an analog of the turn."""
        x = float(((np.asarray(f) - self.mean) / self.scale) @ self.coef + self.intercept)
        return 1.0 / (1.0 + math.exp(-x)) if x > -500 else 0.0


def default_ranker() -> Ranker | None:
    """The shipped ranker (:mod:`fastmem.analogy.ranker_weights`), or None when none has been fitted."""
    try:
        from . import ranker_weights as w
    except ImportError:
        return None
    return Ranker(w.MEAN, w.SCALE, w.COEF, w.INTERCEPT, w.THRESHOLD)


def resolve_ranker(choice) -> Ranker | None:
    """``AnalogySettings(ranker=...)``: False (the hand-set rule), True (the shipped ranker) or a
    :class:`Ranker`."""
    from ..errors import InvalidInput

    if isinstance(choice, Ranker):
        return choice
    if choice is False or choice is None:
        return None
    if choice is True:
        r = default_ranker()
        if r is None:
            raise InvalidInput("no fitted ranker is installed (fastmem eval proparalogy PATH --fit)")
        return r
    raise InvalidInput(f"the analogy ranker (AnalogySettings.ranker, formerly analogy_ranker) must be True, "
                       f"False or a Ranker, not {choice!r}")
