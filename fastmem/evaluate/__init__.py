"""Quality evaluations on public data sets that fastmem never ships (``fastmem eval``):

* :mod:`fastmem.evaluate.locomo` - evidence recall on LoCoMo conversations (any@k, all@k per
  channel and fused);
* :mod:`fastmem.evaluate.proparalogy` - the analogy slot on ProPara-Logy paragraphs (fire rate,
  precision, distractor and hit rates next to baselines computed in the same run; the share of
  rows whose target outscores its own distractor; a four-way multiple choice).
"""
