"""Argument checks shared by :class:`fastmem.Memory` and its parts."""

from __future__ import annotations

import numpy as np

from ..errors import InvalidInput, NotFound
from ..util.text import check_str

__all__ = ["check_scope", "check_int", "check_id"]


def check_scope(scope) -> None:
    if scope is not None:
        check_str(scope, "scope")


def check_int(x, what: str, lo: int, hi: int) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not lo <= x <= hi:
        raise InvalidInput(f"{what} must be an int from {lo:,} to {hi:,}, got {x!r}")
    return int(x)


def check_id(value, what: str = "memory") -> int:
    """A row id of ``what`` (a memory, an entity, a category...): InvalidInput when it is not an
    int, NotFound when no SQLite row id can have it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidInput(f"{what} id must be int, not {type(value).__name__}")
    if not 0 <= value < 2**63:
        raise NotFound(f"no {what} with id {value}")
    return int(value)
