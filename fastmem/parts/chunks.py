"""``mem.chunks``: chunks of memories that keep co-occurring, made by
:meth:`fastmem.Memory.consolidate` (see :mod:`fastmem.passes.chunks`). A chunk is a memory of
its own; its members are never changed."""

from __future__ import annotations

import warnings

from ..errors import FastmemDeprecationWarning
from ..results import Record
from .base import Part

__all__ = ["Chunks"]


class Chunks(Part):
    """The chunks of a memory: list them, read their members, undo one."""

    __slots__ = ()

    def list(self, *, scope: str | None = None) -> list[int]:
        """Ids of the chunk memories (of one scope when given)."""
        return self._read.chunks(scope=scope)

    def members(self, chunk_id: int) -> list[Record]:
        """The members of a chunk (written order); :meth:`fastmem.Memory.expand` is the same.
        Raises NotFound when it is not a chunk."""
        return self._read.expand(chunk_id)

    def containing(self, memory_id: int) -> list[int]:
        """Ids of the chunks that hold ``memory_id`` among their members (oldest first)."""
        return self._read.chunks_of(memory_id)

    def dissolve(self, chunk_id: int) -> None:
        """Undo a chunk completely: its memory, copied facts, code, vector and bookkeeping
        go; the members were never changed. Raises NotFound when it is not a chunk."""
        return self._write.dissolve(chunk_id)

    def __call__(self, *, scope: str | None = None) -> list[int]:
        """Deprecated: ``mem.chunks(...)`` is :meth:`list`."""
        warnings.warn("Memory.chunks(...) is now Memory.chunks.list(...)", FastmemDeprecationWarning, stacklevel=2)
        return self.list(scope=scope)
