"""The analogy slot's ranker, fitted by ``fastmem eval proparalogy PATH --fit`` on ProPara-Logy's
silver split (403 turns, 4023 candidates, 986 positive).

5-fold cross-validation by source process, fold means: fire 0.303, precision 0.658,
strict 0.429, distractor 0.150, hit 0.193, target above its own distractor 0.794.
Generated: edit by refitting, not by hand."""

from fastmem.ranker import FEATURES

MEAN = [3.323748, 3.069359, 0.118644, 0.374035, 0.353271, 0.189361, 0.99056]
SCALE = [1.276183, 1.493256, 0.050574, 0.117415, 0.127392, 0.270285, 0.05322]
COEF = [0.066318, 0.12779, 0.192313, 0.189737, 0.272935, -0.007899, 0.027506]
INTERCEPT = -1.217466583141161
THRESHOLD = 0.5

assert len(MEAN) == len(SCALE) == len(COEF) == len(FEATURES)
