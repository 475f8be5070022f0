"""Recall: turn -> channels -> fusion -> use weights -> hits, with the analogy slot beside them.

* :mod:`fastmem.recall.pipeline` - :class:`RecallPipeline`, one recall top to bottom, and the
  channel registry (:func:`channel`, :data:`CHANNELS`);
* :mod:`fastmem.recall.channels` - the channels' logic and the scope sets;
* :mod:`fastmem.recall.fusion` - how channels are fused;
* :mod:`fastmem.recall.evidence` - the evidence floor;
* :mod:`fastmem.recall.arrange` - spread and time order of the hits.

The registry's names are importable from here (``fastmem.recall.channel``), loaded on first use.
"""

from __future__ import annotations

import importlib

_NAMES = {"RecallPipeline", "MAX_EXCLUDED_ROOM", "CHANNELS", "channel", "ChannelSpec", "TurnQuery"}
__all__ = sorted(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(importlib.import_module(".pipeline", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
