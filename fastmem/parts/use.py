"""``mem.use``: what use did to each memory. Surfaced and engaged raises a memory's weight,
surfaced and ignored sinks it, nothing is pruned for age (see :mod:`fastmem.derived.usage`)."""

from __future__ import annotations

from typing import Any

from .base import Part

__all__ = ["Use"]


class Use(Part):
    """The usage ledger read back: counters, history, the extremes and the timeline."""

    __slots__ = ()

    def counts(self, memory_id: int) -> dict[str, Any]:
        """Counters of one memory: surfaced, engaged, ignored, weight, last_surfaced, and trust
        (the weight on a 0-1 scale: 0.5 unused, towards 1 engaged, towards 0 ignored)."""
        return self._read.usage(memory_id)

    def history(self, memory_id: int, *, limit: int = 50) -> list[dict[str, Any]]:
        """A memory's newest use events, newest first: ``ts``, ``session``, ``turn``,
        ``channel`` (what surfaced it) and ``outcome`` ("engaged", "ignored", or None while
        the next turn has not told)."""
        return self._read.use_history(memory_id, limit)

    def extremes(self, *, scope: str | None = None, limit: int = 20) -> tuple[list[tuple], list[tuple]]:
        """The memories use raised most and sank most: two lists of ``(id, weight, engaged,
        ignored, text)``, highest weight first and lowest first (weights away from 1 only)."""
        return self._read.use_extremes(scope=scope, limit=limit)

    def timeline(self, *, scope: str | None = None, bins: int = 60) -> tuple[str, list[tuple]]:
        """Use events over the ledger's span in at most ``bins`` steps of a second, minute, hour
        or day: ``(step, [(step start (epoch s), surfaced, engaged, ignored)])``."""
        return self._read.use_timeline(scope=scope, bins=bins)

    def most_used(self, *, scope: str | None = None, limit: int = 100) -> list[int]:
        """Ids of the memories by use weight, highest first (newest first among equals)."""
        return self._read.most_used(scope=scope, limit=limit)
