"""Use-driven ranking: the weight formula and the inferred-engagement rule.

Weight of a memory (multiplies its fused score in every channel and in the analogy slot)::

    w = BASE ** tanh((engaged - ignored / IGNORE_RATIO) / SCALE)

with ``BASE = 1.5``, ``IGNORE_RATIO = 3``, ``SCALE = 3``. So w lies in (1/1.5, 1.5): a memory
engaged six times gets about x1.47, one ignored thirty times about x0.67, and an unused one
exactly x1. The bound means feedback alone can never bury a memory: a query that names it
still ranks it first in the keyword and vector channels, which outweighs the factor. Age
never enters.

Inferred engagement: a memory surfaced in a session at turn t counts as *engaged* when one of
the next ``WINDOW`` turns of that session (``Session.observe``) reuses it, i.e.

* shares at least ``MIN_SHARED_WORDS`` distinctive words with it (content words of 4+
  letters that appear in the memory), or
* has embedding cosine of at least ``MIN_COSINE`` with it;

and as *ignored* when ``WINDOW`` turns pass without that.
"""

from __future__ import annotations

import math

BASE = 1.5
IGNORE_RATIO = 3.0
SCALE = 3.0
WINDOW = 2
MIN_SHARED_WORDS = 2
MIN_COSINE = 0.55
#: ledger rows kept; older events are deleted (their counts live on in ``usage``)
MAX_EVENTS = 50_000


def weight(engaged: int, ignored: int) -> float:
    """The use weight (see module docstring)."""
    return BASE ** math.tanh((engaged - ignored / IGNORE_RATIO) / SCALE)


def distinctive(words: list[str]) -> set[str]:
    return {w for w in words if len(w) >= 4 and not w.isdigit()}
