"""The analogy slot's ranker, fitted by ``fastmem eval proparalogy PATH --fit`` on ProPara-Logy's
silver split (403 turns, 309 candidates, 187 positive).

5-fold cross-validation by source process, fold means: fire 0.370, precision 0.698,
strict 0.551, distractor 0.142, hit 0.255, target above its own distractor 0.725.
Generated: edit by refitting, not by hand."""

MEAN = [5.618144, 5.217878, 0.490627, 0.604352, 0.60225, 0.347357, 0.965311]
SCALE = [1.940168, 2.11422, 0.089761, 0.133474, 0.136264, 0.254999, 0.084725]
COEF = [0.052768, 0.290745, 0.519735, -0.23544, -0.361088, 0.005915, -0.010492]
INTERCEPT = 0.45553584949559817
THRESHOLD = 0.5
