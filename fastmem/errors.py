"""Flat, named exceptions raised by fastmem.

Every exception derives from :class:`FastmemError`, so ``except fastmem.errors.FastmemError``
catches anything the library raises on purpose. Input errors also derive from the matching
built-in (``ValueError``/``TypeError``/``KeyError``) so generic handlers keep working.
"""

from __future__ import annotations

__all__ = ["FastmemError", "InvalidInput", "NotFound", "StoreCorrupt", "ModelMismatch", "StoreBusy",
           "FastmemDeprecationWarning"]


class FastmemError(Exception):
    """Base class of every error fastmem raises on purpose."""


class InvalidInput(FastmemError, ValueError):
    """An argument was rejected (empty text, wrong type, too long, k < 1, ...).

    Nothing was written: fix the argument and call again.
    """


class NotFound(FastmemError, KeyError):
    """No memory (or entity) with that id exists in this store."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "not found"


class StoreCorrupt(FastmemError):
    """The SQLite file is unreadable, not a fastmem store, or from a newer fastmem.

    Restore from a backup or open a new path; fastmem never silently recreates a store.
    """


class ModelMismatch(FastmemError):
    """The store's vectors were made by another embedding model than the one given.

    Open with the original model, or call ``Memory(path, embedder=new, reembed=True)`` /
    ``mem.admin.reembed()`` to recompute every vector with the new model.
    """


class StoreBusy(FastmemError):
    """Another process held the store's write lock for longer than the store waits
    (``Store(lock_wait_s=...)``, retried with backoff meanwhile). Nothing was written: try
    again, or find the process that keeps a write transaction open."""


class FastmemDeprecationWarning(DeprecationWarning):
    """A name that moved: it still works for this release; the message names its new place
    (``CHANGELOG.md`` lists them all). Turn it into an error to find every use:
    ``python -W error::fastmem.errors.FastmemDeprecationWarning``."""
