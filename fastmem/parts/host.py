"""``mem.host``: what agent hosts and integrations need beside the verbs: the two halves of a
write (the models' half anywhere, the store's half here), the signals of a conversation's
turns, and short look-up-then-write steps."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np

from ..results import Recall
from ..write.prepare import Prepared
from .base import Part

__all__ = ["Host"]


class Host(Part):
    """Write halves, turn signals and locks for hosts."""

    __slots__ = ()

    def prepare(self, texts: Sequence[str], *, triples=None, progress: bool | None = None) -> Prepared:
        """The models' half of :meth:`fastmem.Memory.remember_many`, without touching the store:
        each text's embedding, facts and events (a :class:`fastmem.write.prepare.Prepared`). For
        hosts that derive elsewhere (Ray workers) or outside their own locks; write it with
        :meth:`commit_prepared`. ``triples`` as in ``remember_many``."""
        return self._write.prepare(texts, triples=triples, progress=progress)

    def commit_prepared(self, prep: Prepared, *, scope: str | Sequence[str] = "",
                        source: str | None | Sequence[str | None] = None, meta=None, at=None, speaker=None,
                        mark: tuple[str, int] | None = None,
                        usage: Sequence[tuple[int, int]] | None = None) -> list[int] | None:
        """Write prepared memories (:meth:`prepare`, :func:`fastmem.distributed.derive_batch`)
        in one transaction; returns their ids.

        ``scope``, ``source``, ``speaker`` and ``at`` (unix seconds, datetimes or ISO 8601) are
        one value for all or one per memory; ``meta`` a mapping for all, or one mapping (or
        JSON object text) per memory. ``mark=(job, batch)`` records that this batch of a job
        is written, in the same transaction: when it was recorded before, nothing is written
        and None is returned (a resumed import writes nothing twice; see
        :meth:`batches_done`). ``usage``: per memory ``(engaged, ignored)`` counts carried
        over from another system. The in-process index, codes, scopes and weights follow
        after COMMIT only."""
        return self._write.commit_prepared(prep, scope=scope, source=source, meta=meta, at=at, speaker=speaker,
                                           mark=mark, usage=usage)

    def batches_done(self, job: str) -> set[int]:
        """The batches of ``job`` written with ``commit_prepared(mark=(job, batch))``."""
        return self._read.batches_done(job)

    def write_vectors(self, ids: Sequence[int], vecs: np.ndarray) -> None:
        """Store new vectors of the current model for existing memories (a re-embedding
        computed elsewhere), in one transaction; the index follows after COMMIT."""
        return self._write.write_vectors(ids, vecs)

    def observe(self, text: str, *, session: str) -> dict[str, list[int]]:
        """Tell the store the next turn of a session (user or assistant text).

        Memories surfaced in that session's earlier turns are judged by the rule in
        :mod:`fastmem.derived.usage`: reused -> engaged, unused for ``usage.WINDOW`` turns -> ignored.
        Returns ``{"engaged": [...], "ignored": [...]}`` ids resolved by this turn.
        """
        return self._write.observe(text, session=session)

    def record(self, result: Recall, *, session: str | None = None) -> None:
        """Count a recall made with ``record=False`` as surfaced now (for hosts that compute
        a recall ahead of time and show it later, or not at all)."""
        return self._write.record(result, session=session)

    @contextmanager
    def locked(self):
        """Hold the memory for a short look-up-then-write step: other threads of this process
        wait (other processes are not stopped; each write is still its own transaction). Verbs
        may be called inside; yields nothing."""
        with self._e.reading():
            yield

    def transaction(self):
        """One transaction on the store, and the in-process state brought up after it.

        A context manager yielding a :class:`fastmem.core.transaction.Transaction`: write through
        ``tx.db`` and record what the process must follow; it is applied after COMMIT, and not
        at all when the body raises (everything is rolled back). Holds the memory's lock
        throughout, caught up with other processes' commits first. Nested, it joins the open
        transaction. Keep the body short: no model runs inside it."""
        return self._e.transaction()

    def models_ready(self) -> bool:
        """Whether the embedder and the parser are loaded (a recall or write pays no load)."""
        return self._e.models_ready()
