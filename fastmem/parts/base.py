"""What every named part of :class:`fastmem.Memory` holds."""

from __future__ import annotations

__all__ = ["Part"]


class Part:
    """A named part: the memory's engine (:class:`fastmem.core.engine.Engine`) and its read and
    write services (:class:`fastmem.core.reading.Reading`, :class:`fastmem.core.writing.Writing`),
    which hold the engine and nothing else."""

    __slots__ = ("_e", "_read", "_write")

    def __init__(self, engine, read, write) -> None:
        self._e, self._read, self._write = engine, read, write

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__qualname__} of {self._e.path!r}>"
