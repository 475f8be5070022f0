"""Pausing Python's cycle collector through a bulk load.

A bulk load allocates a few objects per row (an export line's dict and lists, the rows'
tuples) and frees them by reference count; none of them form cycles. The cycle collector
still runs every few hundred allocations, and a full collection walks every object of the
process: in a process that holds the models (spaCy, torch), two full collections were a
quarter of a 3,940-row import (0.25 of 1.06 s). :func:`paused` turns the collector off for
the duration and back on after, when it was on before.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused"]

_LOCK = threading.Lock()
_DEPTH = 0  # bulk loads running now (on any thread)
_WAS_ENABLED = False


@contextmanager
def paused() -> Iterator[None]:
    """The cycle collector is off inside (and on again after the last of several concurrent
    bodies ends, if it was on when the first began)."""
    global _DEPTH, _WAS_ENABLED
    with _LOCK:
        if _DEPTH == 0:
            _WAS_ENABLED = gc.isenabled()
            gc.disable()
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0 and _WAS_ENABLED:
                gc.enable()
