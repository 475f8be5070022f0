"""``mem.pending``: memories written before their derived parts (``remember_many(wait=False)``:
the text, keyword row and usage row at once, the embedding, facts, events and code after, on a
background thread or in the next process; see :mod:`fastmem.write.pending`)."""

from __future__ import annotations

from .base import Part

__all__ = ["Pending"]


class Pending(Part):
    """Count, derive and wait for the pending memories."""

    __slots__ = ()

    def count(self, *, scope: str | None = None) -> int:
        """Memories committed without their derived parts yet."""
        return self._read.pending_count(scope=scope)

    def derive(self, *, wait: bool = True, timeout: float | None = None) -> int | None:
        """Finish the pending memories (this process's and any another left behind): their
        embeddings, facts, events and codes, a batch per transaction; then derive again the
        memories whose derivation failed (``mem.admin.check().failed``), keeping the record of
        any that fails again. No memory blocks the others: one that cannot be derived at all
        leaves pending with its failure recorded.

        ``wait=True`` does it now and returns how many pending memories this call finished;
        ``wait=False`` hands it to the background thread and returns None at once (and turns
        background derivation on for later ``wait=False`` writes, see ``derive_in_background``).
        ``timeout`` (with ``wait=True``) bounds a wait for the background thread's own work first."""
        return self._e.derive_pending(wait=wait, timeout=timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the background thread has derived what was handed to it; False when
        ``timeout`` seconds passed first."""
        return self._e.finisher.wait(timeout)
