"""The analogy slot and what it reads: each memory's structure, and the mapping of one
structure onto another.

* :mod:`fastmem.analogy.slot` - :class:`AnalogySlot`: candidates, the structure mapping, the
  gate, the surface condition;
* :mod:`fastmem.analogy.codes` - the structural encoder (events -> one FHRR code);
* :mod:`fastmem.analogy.code_store` - every memory's events, code and terms, and the
  statistics over them (the store's structural side);
* :mod:`fastmem.analogy.postings` - the term postings stage 1 searches;
* :mod:`fastmem.analogy.mapping` - structure mapping and its E-value;
* :mod:`fastmem.analogy.ranker` - the opt-in learned ranker (weights in
  :mod:`fastmem.analogy.ranker_weights`).

The slot's names are importable from here (``fastmem.analogy.AnalogySlot``), loaded on first use.
"""

from __future__ import annotations

import importlib

_NAMES = {"AnalogySlot", "AnalogySettings", "SlotSettings", "Turn", "SURFACE_RULES", "SURFACE_SAMPLE", "reason"}
__all__ = sorted(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(importlib.import_module(".slot", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
