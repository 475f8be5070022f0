"""``mem.categories``: emergent categories, proposed by a pass and reviewed by a person (see
:mod:`fastmem.passes.categories`)."""

from __future__ import annotations

import warnings

from ..errors import FastmemDeprecationWarning
from ..passes import categories as CAT
from ..passes.categories import Category, Namer
from .base import Part

__all__ = ["Categories"]


class Categories(Part):
    """Categories of entities that play the same roles: proposals change nothing else until a
    person approves one (its members then link to it in the graph); every review is reversible."""

    __slots__ = ()

    def propose(self, *, namer: Namer | None = None, scope: str | None = None, min_members: int = 3) -> list[Category]:
        """Propose categories of entities that play the same roles (see
        :mod:`fastmem.passes.categories`); proposals change nothing else. Returns the open ones."""
        return self._write.propose_categories(namer=namer, scope=scope, min_members=min_members)

    def list(self, status: str | None = None, *, scope: str | None | object = CAT.ANY) -> list[Category]:
        """Categories, of one status ("proposed", "approved", "rejected") when given, and of one
        scope when given (what ``propose(scope=...)`` made for it; ``None``: the store-wide
        proposals). Default: all of them."""
        return self._read.categories(status, scope=scope)

    def approve(self, category_id: int) -> Category:
        """Make a proposal a graph node its members link to (recall's graph channel uses it)."""
        return self._write.review_category(category_id, "approve")

    def reject(self, category_id: int) -> Category:
        """Reject a proposal (later passes leave it out)."""
        return self._write.review_category(category_id, "reject")

    def revert(self, category_id: int) -> Category:
        """Undo an approval or a rejection: back to proposed, no trace left in the graph."""
        return self._write.review_category(category_id, "revert")

    def __call__(self, status: str | None = None, *, scope: str | None | object = CAT.ANY) -> list[Category]:
        """Deprecated: ``mem.categories(...)`` is :meth:`list`."""
        warnings.warn("Memory.categories(...) is now Memory.categories.list(...)", FastmemDeprecationWarning,
                      stacklevel=2)
        return self.list(status, scope=scope)
