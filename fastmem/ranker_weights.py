"""The analogy slot's ranker, fitted by ``fastmem eval proparalogy PATH --fit`` on ProPara-Logy's
silver split (403 turns, 4023 candidates, 980 positive).

5-fold cross-validation by source process, fold means: fire 0.303, precision 0.666,
strict 0.436, distractor 0.142, hit 0.196, target above its own distractor 0.797.
Generated: edit by refitting, not by hand."""

from fastmem.ranker import FEATURES

MEAN = [3.323748, 3.069652, 0.118639, 0.37401, 0.353242, 0.189237, 0.99056]
SCALE = [1.276183, 1.49409, 0.050592, 0.117398, 0.127407, 0.270027, 0.05322]
COEF = [0.077603, 0.125797, 0.191226, 0.189071, 0.275637, -0.013694, 0.025063]
INTERCEPT = -1.2276368986078472
THRESHOLD = 0.5

assert len(MEAN) == len(SCALE) == len(COEF) == len(FEATURES)
