"""A dict with a maximum size, for per-session and per-word caches of long-lived processes."""

from __future__ import annotations

__all__ = ["Bounded"]


class Bounded(dict):
    """A dict that keeps at most ``maxsize`` keys: adding one more drops the oldest added (a
    cache whose entries can always be recomputed or restarted, never the only copy of data)."""

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        if maxsize < 1:
            raise ValueError("maxsize must be >= 1")
        self.maxsize = maxsize

    def __setitem__(self, key, value) -> None:
        if key not in self:
            while len(self) >= self.maxsize:
                del self[next(iter(self))]
        super().__setitem__(key, value)

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]
