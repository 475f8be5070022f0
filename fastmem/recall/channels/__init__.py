"""Recall channels: each finds candidate memories for a turn its own way, one module each.

* :mod:`~fastmem.recall.channels.vector` - hnswlib inner product with the turn's embedding (a
  long memory by its best window);
* :mod:`~fastmem.recall.channels.keyword` - FTS5 bm25 over the memory text, at a bounded cost;
* :mod:`~fastmem.recall.channels.graph` - memories whose facts mention an entity the turn names;
* :mod:`~fastmem.recall.channels.context` - memories whose neighbour in the same ``source`` the
  keyword or vector channel found ("Yes, it was amazing!" after "How was the concert?");
* :mod:`~fastmem.recall.channels.speaker` - memories the others found whose speaker the turn
  names ("What has Melanie painted?").

Each registers a :class:`~fastmem.recall.channels.spec.ChannelSpec` (its run function, whether
it is derived, its fusion weight, its ``why``); :mod:`fastmem.recall.fusion` combines their
results. A new channel is a new module here, imported below: see
:mod:`fastmem.recall.channels.spec`.
"""

from __future__ import annotations

from . import context, graph, keyword, speaker, vector  # noqa: F401, I001  (registration, in run order)
from .spec import CHANNELS, Channel, ChannelSpec, TurnQuery, channel, names, weights

__all__ = ["CHANNELS", "Channel", "ChannelSpec", "TurnQuery", "channel", "names", "weights", "NAMES", "DERIVED"]

#: The built-in channels, in the order they run (the default of ``Memory.recall(channels=...)``).
NAMES = names()
#: The built-in channels that rescore what the others found.
DERIVED = tuple(n for n in NAMES if CHANNELS[n].derived)
