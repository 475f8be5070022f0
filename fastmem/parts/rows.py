"""``mem.rows``: memories found by their text, metadata, age or scope rather than by recall
(for hosts that keep their own ids, and for browsing)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from .base import Part

__all__ = ["Rows"]


class Rows(Part):
    """Look-ups of memories' rows."""

    __slots__ = ()

    def texts(self, *, scope: str | None = None, after: int = 0, limit: int | None = None) -> list[tuple[int, str]]:
        """``(id, text)`` of the memories (of one scope when given) with ids above ``after``,
        in id order, at most ``limit`` of them."""
        return self._read.texts(scope=scope, after=after, limit=limit)

    def newest(self, *, scope: str | None = None, offset: int = 0, limit: int = 50) -> list[int]:
        """Ids of the newest memories first (of one scope when given), a page at a time:
        ``limit`` of them after skipping ``offset``."""
        return self._read.newest(scope=scope, offset=offset, limit=limit)

    def with_text(self, text: str, *, scope: str | None = None) -> list[int]:
        """Ids of the memories whose text is exactly ``text`` (of one scope when given)."""
        return self._read.ids_with_text(text, scope=scope)

    def with_meta(self, key: str, value, *, scope: str | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        """Memories whose metadata has ``key`` equal to ``value`` (a JSON scalar), oldest first:
        ``(id, text, meta)``. For hosts that keep their own ids in ``meta``."""
        return self._read.with_meta(key, value, scope=scope)

    def with_meta_key(self, key: str, *, scopes: Collection[str] | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        """Memories whose metadata has ``key`` (any value), of the given scopes when given,
        most recently updated first: ``(id, scope, meta)``."""
        return self._read.with_meta_key(key, scopes=scopes)

    def scopes(self) -> list[str]:
        """Every scope that holds a memory, sorted."""
        return self._read.scopes_in_use()
