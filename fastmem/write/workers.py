"""One background thread per process for work that overlaps with the model's: the spaCy
parse of a batch of texts runs there while MiniLM embeds the batch (the model's large matrix
operations release the GIL), so a batch write pays less than the sum of the two."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["submit"]

_POOL: ThreadPoolExecutor | None = None
_LOCK = threading.Lock()


def submit(fn, *args, **kw) -> Future:
    """Run ``fn(*args, **kw)`` on the parse thread; returns its future."""
    global _POOL
    with _LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastmem-parse")
    return _POOL.submit(fn, *args, **kw)
