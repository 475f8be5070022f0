"""The analogy slot's ranker, fitted by ``fastmem eval proparalogy PATH --fit`` on ProPara-Logy's
silver split (403 turns, 3945 candidates, 909 positive).

5-fold cross-validation by source process, fold means: fire 0.258, precision 0.644,
strict 0.432, distractor 0.151, hit 0.161, target above its own distractor 0.769.
Generated: edit by refitting, not by hand."""

from fastmem.ranker import FEATURES

MEAN = [3.360032, 3.117773, 0.121667, 0.38012, 0.353639, 0.193076, 0.991488]
SCALE = [1.293792, 1.493878, 0.051645, 0.120647, 0.129306, 0.276913, 0.0509]
COEF = [0.099978, 0.068408, 0.197346, 0.16374, 0.328281, -0.014628, 0.052824]
INTERCEPT = -1.3105282497992128
THRESHOLD = 0.5

assert len(MEAN) == len(SCALE) == len(COEF) == len(FEATURES)
