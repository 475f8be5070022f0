"""One write, one transaction: what a commit changes in the process's own state, applied once.

A :class:`fastmem.Memory` keeps derived state in the process beside the file: the hnswlib
index, the structural statistics and term index, the scope sets, the usage weights, the graph
channel's caches. A write changes the file in one SQLite transaction and that state after it.
:class:`Transaction` is the only way a write path does both: the body writes rows through
``tx.db`` and tells the transaction what the process must follow (``tx.added``,
``tx.revectored``, ``tx.structure``...); the changes are applied *after* the outermost COMMIT
and not at all after a rollback, so a failure anywhere in the body (a constraint, a full disk,
a caller's own statement after fastmem's rows) never leaves the index holding ids the file
does not.

A transaction opened inside another (the same thread, the same memory) joins it: its changes
wait for the outer COMMIT. Every write path (remember, pending derivation, update, forget,
chunks, import, :meth:`fastmem.Memory.host.commit_prepared` for Ray and hosts) goes through
:meth:`fastmem.Memory.host.transaction`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

__all__ = ["Transaction"]


class Transaction:
    """The in-process changes of one write, kept until its COMMIT (see the module docstring).

    ``db`` is the store's connection inside the transaction. The recording methods only
    collect; :meth:`apply` (called by the owner after COMMIT) carries them out in order:
    structure first (an updated memory's old code leaves before its new one comes), then the
    vector index, scopes, usage and graph caches. Every part is brought up even when another
    fails; the first error is raised after.
    """

    def __init__(self, owner, db) -> None:
        self.db = db
        self._owner = owner
        self._structure: list = []
        self._vectors: list[tuple[str, np.ndarray, np.ndarray | None]] = []
        self._scoped: list[tuple[str, list[int]]] = []
        self._forgotten: list[int] = []
        self._reload_usage = False
        self._reset_scopes = False
        self._reset_graph = False
        self._staged: list = []  # index adds begun during the transaction (bulk loads)
        self._after: list[Callable[[], None]] = []

    # -- recording (inside the transaction) ------------------------------------------------
    def added(self, ids: Sequence[int], vecs: np.ndarray | None, scope: str | Sequence[str]) -> None:
        """New memories: their vectors (None: pending, no vector yet) and their scopes
        (one for all, or one per id)."""
        ids = [int(i) for i in ids]
        if vecs is not None and ids:
            self._vectors.append(("add", np.asarray(ids, np.int64), vecs))
        each = [scope] * len(ids) if isinstance(scope, str) else list(scope)
        for sc in dict.fromkeys(each):
            self._scoped.append((sc, [i for i, x in zip(ids, each) if x == sc]))

    def added_early(self, ids: Sequence[int], vecs: np.ndarray, scope: str | Sequence[str],
                    graph: tuple[str, dict] | None = None) -> None:
        """:meth:`added` for a bulk load: the vector index begins adding now, on a thread,
        while the transaction goes on (the owner's lock keeps every search out until it
        ends); the vectors count from the COMMIT, and are withdrawn after a rollback.
        ``graph``: ``(path, description)`` of an index graph an export carries (an import into
        an empty store), loaded instead of built when it is that export's
        (:meth:`fastmem.derived.ann.VectorIndex.begin_adopt`)."""
        ids = [int(i) for i in ids]
        self.added(ids, None, scope)
        if ids:
            index = self._owner.index
            self._staged.append(index.begin_add(np.asarray(ids, np.int64), vecs) if graph is None
                                else index.begin_adopt(np.asarray(ids, np.int64), vecs, *graph))

    def discard(self) -> None:
        """After a rollback: what began early is withdrawn (nothing else was applied)."""
        for staged in self._staged:
            staged.withdraw()
        self._staged = []

    def revectored(self, ids: Sequence[int], vecs: np.ndarray) -> None:
        """Existing memories whose vectors were written anew."""
        if len(ids):
            self._vectors.append(("update", np.asarray(ids, np.int64), vecs))

    def unvectored(self, ids: Iterable[int]) -> None:
        """Memories whose vectors are gone (forgotten, or pending again after a new text)."""
        ids = [int(i) for i in ids]
        if ids:
            self._vectors.append(("delete", np.asarray(ids, np.int64), None))

    def structure(self, pending) -> None:
        """Structural changes staged by :mod:`fastmem.analogy.code_store` (a ``StructuralChanges``)."""
        self._structure.append(pending)

    def forgotten(self, mid: int) -> None:
        """A memory deleted: its usage weight and scope membership go."""
        self._forgotten.append(int(mid))

    def usage_changed(self) -> None:
        """Usage rows were written directly (an import): weights are read again."""
        self._reload_usage = True

    def scopes_changed(self) -> None:
        """Scopes were written in bulk: the scope sets are rebuilt when next needed."""
        self._reset_scopes = True

    def weighed(self, weights: dict[int, tuple[float, int, int]]) -> None:
        """Use weights counted in this transaction: ``{memory id: (weight, engaged, ignored)}``."""
        if weights:
            self._after.append(lambda: self._owner.ledger.weights.update(weights))

    def after(self, fn: Callable[[], None]) -> None:
        """Anything else the process must follow once the transaction has committed."""
        self._after.append(fn)

    def graph_changed(self) -> None:
        """Categories or aliases changed: the recall channels' caches are dropped."""
        self._reset_graph = True

    # -- applying (after COMMIT) -----------------------------------------------------------
    def apply(self) -> None:
        """Carry the recorded changes out in the owner's in-process state."""
        o = self._owner
        # structure first: its statistics are computed while a bulk load's index build ends
        steps: list[Callable[[], None]] = [lambda p=p: o.structure.apply(p) for p in self._structure]
        steps += [staged.finish for staged in self._staged]
        for what, ids, vecs in self._vectors:
            if what == "add":
                steps.append(lambda ids=ids, vecs=vecs: o.index.add(ids, vecs))
            elif what == "update":
                steps.append(lambda ids=ids, vecs=vecs: o.index.update(ids, vecs))
            else:
                steps.append(lambda ids=ids: o.index.delete(ids.tolist()))
        steps += [lambda sc=sc, ids=ids: o.scopes.added(sc, ids) for sc, ids in self._scoped]
        for mid in self._forgotten:
            steps += [lambda m=mid: o.ledger.forget(m), lambda m=mid: o.scopes.removed(m)]
        if self._reload_usage:
            steps.append(o.ledger.load)
        if self._reset_scopes:
            steps.append(o.scopes.reset)
        if self._reset_graph:
            steps.append(o.pipeline.reset)
        steps += self._after
        if self._structure:
            steps.append(o.save_stats_if_due)
        if self._vectors:
            steps.append(lambda: o.index.dirty >= INDEX_SAVE_EVERY and o.index.save())
        first: BaseException | None = None
        for step in steps:
            try:
                step()
            except BaseException as exc:  # the rest still follows the file
                first = first or exc
        if first is not None:
            raise first


#: Vector changes after which the in-process index is saved to its file (a reopen after a
#: crash then replays fewer rows from the change log).
INDEX_SAVE_EVERY = 20_000
