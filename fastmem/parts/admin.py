"""``mem.admin``: looking after a store: check and repair it, its figures, a full export and
import, rebuilding what derives from the rows, the models it runs."""

from __future__ import annotations

import os
from typing import Any

from ..core.check import CheckReport
from ..core.check import check as check_store
from ..errors import InvalidInput
from .base import Part

__all__ = ["Admin"]


class Admin(Part):
    """Integrity, figures, export and import, rebuilds, models."""

    __slots__ = ()

    def check(self, *, repair: bool = False) -> CheckReport:
        """Verify the file and every derived structure against the rows (see
        :mod:`fastmem.core.check`); with ``repair``, rebuild what can be rebuilt. The report
        also lists the memories whose derivation failed (``failed``: stored without a part)."""
        if not isinstance(repair, bool):
            raise InvalidInput("repair must be True or False")
        with self._e.reading():
            return check_store(self._e, repair=repair)

    def stats(self) -> dict[str, Any]:
        """What the store holds: memories, scopes, pending, entities, facts, codes, chunks,
        categories per status, the model and its dimensions, ``hrr_dim`` and the schema
        version (``fastmem stats`` prints it)."""
        return self._read.stats()

    def flush(self) -> None:
        """Save the vector index and the structural statistics now (close does this too)."""
        self._e.flush()

    def reembed(self, *, progress: bool | None = None) -> None:
        """Recompute every vector with the current embedder and rebuild the index."""
        return self._e.reembed(progress)

    def rebuild_index(self, *, progress: bool | None = None) -> None:
        """Rebuild the vector index from the stored vectors (it is only a cache of them)."""
        self._e.rebuild_index(progress)

    def export_jsonl(self, path: str | os.PathLike | None = None, *, scope: str | None = None,
                     vectors: bool = False) -> int:
        """Write everything needed to rebuild this store (or one scope) as JSON lines to
        ``path`` (None: standard output); see :mod:`fastmem.core.transfer`. ``vectors`` includes
        everything a model derived (embeddings, structural codes, window and statement
        vectors, base64), so an import with the same model embeds, parses and encodes
        nothing: a bulk load. An export of the whole store with ``vectors`` to a file also
        writes its vector index graph beside it (``<path>.hnsw``, named in the header), which
        an import into an empty store loads instead of building the index; keep the two files
        together (without it the import builds the index, with the same answers). Returns the
        number of lines written."""
        return self._read.export_jsonl(path, scope=scope, vectors=vectors)

    def import_jsonl(self, path: str | os.PathLike, *, progress: bool | None = None) -> int:
        """Rebuild memories from an export (see :meth:`export_jsonl`); ids are kept when this
        store is empty, and the index graph the export carries is loaded when it is the one its
        header describes and holds exactly the imported vectors (hnswlib reads it without
        checking its structure: delete the ``.hnsw`` beside an export you do not trust). Returns
        the number of memories imported."""
        return self._write.import_jsonl(path, progress=progress)

    @property
    def embedder(self):
        """The sentence embedder (:class:`fastmem.models.embedder.Embedder`)."""
        return self._e.embedder

    @property
    def extractor(self):
        """The extractor (None: no extraction); settable (an evaluation caches parses)."""
        return self._e.extractor

    @extractor.setter
    def extractor(self, value) -> None:
        self._e.extractor = value

    @property
    def engine(self):
        """The :class:`fastmem.core.engine.Engine` behind the memory (its connection ``db``,
        ``store``, ``index``, ``structure``, ``slot``, ``ledger``, ``scopes``, ``pipeline``...):
        for fastmem's own checks, evaluations and tests, not a stable interface; hosts and
        integrations use the verbs and the parts."""
        return self._e
