"""hnswlib index over the stored embeddings: a derived cache, never the source of truth.

The SQLite ``embeddings`` table is the truth. The index lives in ``<store>.hnsw`` with a JSON
sidecar recording its parameters and model id. On open it is loaded and reconciled against the
table (missing labels added from the stored vectors, stale ones marked deleted), or rebuilt
from the table when the file is missing, unreadable, or from another model. So a crash between
the SQLite commit and the index save never loses a memory from recall.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable

import hnswlib
import numpy as np

from ..models.exitgate import native

__all__ = ["VectorIndex", "GRAPH_CHECK"]


#: A scope of at most this many memories is searched exactly (a matrix product over its own
#: vectors: ~1 ms for 2,048), not through the graph with a filter.
EXACT_MAX = 2048
#: hnswlib keeps a deleted label's vector and graph node; a save compacts the index (a fresh
#: one from the live vectors) once more than max(COMPACT_MIN, live / 4) labels are deleted, so
#: the file holds at most that many dead entries (the cost, one insert per live vector, is paid
#: once per live/4 deletions).
COMPACT_MIN = 1024


def _minus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The values of sorted ``a`` not in sorted ``b`` (both int64, unique): one binary search
    per value (NumPy's ``setdiff1d`` hashes both, seconds at a million)."""
    if not len(b) or not len(a):
        return a
    pos = np.minimum(np.searchsorted(b, a), len(b) - 1)
    return a[b[pos] != a]


#: Batches of at least this many vectors are added with one hnswlib thread per core.
BULK_THREADS_MIN = 1024


class VectorIndex:
    """Inner-product HNSW index whose labels are memory ids.

    Parameters
    ----------
    path : str or None
        Index file; None keeps it in memory only.
    dim : int
        Vector dimension.
    model_id : str
        Embedding model the vectors came from (a mismatch on load forces a rebuild).
    store_id : str
        Identity of the store the index belongs to (an index file of another store is
        rebuilt, never trusted).
    M, ef_construction, ef, seed : int
        hnswlib parameters, persisted in the sidecar.
    """

    def __init__(
        self,
        path: str | None,
        *,
        dim: int,
        model_id: str,
        store_id: str = "",
        M: int = 16,
        ef_construction: int = 200,
        ef: int = 96,
        seed: int = 100,
    ) -> None:
        self.path = path
        self.dim = dim
        self.model_id = model_id
        self.store_id = store_id
        self._deleted: set[int] = set()  # labels marked deleted (hnswlib keeps them, hidden)
        #: Why the last open rebuilt the index (None when it was loaded).
        self.rebuilt_because: str | None = None
        #: The index graph file an import loaded as this index (None: built or opened here).
        self.carried_from: str | None = None
        self.params = {"M": M, "ef_construction": ef_construction, "ef": ef, "seed": seed}
        self._index: hnswlib.Index | None = None
        self._label_cache: tuple[int, set[int]] | None = None
        self._sample: tuple | None = None  # (live count when drawn, vectors, (n, seed))
        #: The store's change-log position the vectors are current with (saved in the sidecar).
        self.seq = 0
        self.live = 0
        self.max_id = 0
        self.dirty = 0

    # -- life cycle ------------------------------------------------------------------------
    def _fresh(self, capacity: int) -> hnswlib.Index:
        idx = hnswlib.Index(space="ip", dim=self.dim)
        idx.init_index(
            max_elements=max(1024, capacity),
            M=self.params["M"],
            ef_construction=self.params["ef_construction"],
            random_seed=self.params["seed"],
        )
        idx.set_ef(self.params["ef"])
        idx.set_num_threads(1)
        return idx

    def _meta_path(self) -> str:
        return f"{self.path}.json"

    def _try_load(self) -> hnswlib.Index | None:
        self.rebuilt_because = "no index file"
        if not self.path or not os.path.exists(self.path) or not os.path.exists(self._meta_path()):
            return None
        try:
            with open(self._meta_path()) as f:
                meta = json.load(f)
            if meta.get("model_id") != self.model_id or meta.get("dim") != self.dim:
                self.rebuilt_because = f"the index holds vectors of {meta.get('model_id')} ({meta.get('dim')}-d)"
                return None
            if meta.get("store_id", "") != self.store_id:
                self.rebuilt_because = "the index file belongs to another store"
                return None
            if meta.get("size") != os.path.getsize(self.path):
                self.rebuilt_because = "the index file was truncated or replaced"
                return None
            idx = hnswlib.Index(space="ip", dim=self.dim)
            with native():
                idx.load_index(self.path, max_elements=int(meta["capacity"]))
            idx.set_ef(self.params["ef"])
            idx.set_num_threads(1)
            self._deleted = {int(x) for x in meta.get("deleted", [])}
            self.seq = int(meta.get("seq", 0))
            self.rebuilt_because = None
            return idx
        except Exception as exc:  # unreadable file: it is only a cache, rebuild it
            self.rebuilt_because = f"the index file is unreadable ({type(exc).__name__})"
            return None

    def open(
        self,
        db_ids: np.ndarray,
        fetch: Callable[[np.ndarray], np.ndarray],
        progress: Callable[[int], None] | None = None,
    ) -> str:
        """Load and reconcile with ``db_ids``, or rebuild. Returns 'loaded' or 'rebuilt'."""
        db_ids = np.asarray(db_ids, np.int64)
        idx = self._try_load()
        how = "loaded"
        if idx is None:
            idx = self._fresh(len(db_ids))
            how = "rebuilt"
            self._deleted = set()
        self._index = idx
        changed = self.reconcile(db_ids, fetch, progress)
        if how == "rebuilt" or changed:
            self.dirty += 1
        return how

    def labels(self) -> np.ndarray:
        """The live labels (deleted ones left out)."""
        if self._index is None:
            return np.zeros(0, np.int64)
        have = np.asarray(self._index.get_ids_list(), np.int64)
        if self._deleted:
            have = np.setdiff1d(have, np.fromiter(self._deleted, np.int64))
        return have

    def reconcile(self, db_ids: np.ndarray, fetch, progress=None) -> bool:
        """Make the live labels equal ``db_ids``: add the missing (vectors from ``fetch``),
        mark the stale deleted. Returns whether anything changed."""
        idx = self._index
        db_ids = np.asarray(db_ids, np.int64)
        if len(db_ids) > 1 and not np.all(db_ids[1:] > db_ids[:-1]):  # already sorted and unique: the
            db_ids = np.unique(db_ids)  # usual open (np.unique hashes them anyway: 0.94 s at 1M)
        have = np.sort(self.labels())
        if np.array_equal(have, db_ids):  # the usual open: the saved index is the table's
            self.live = len(db_ids)
            self.max_id = int(db_ids[-1]) if len(db_ids) else 0
            return False
        stale = _minus(have, db_ids)
        for label in stale:
            try:
                idx.mark_deleted(int(label))
            except RuntimeError:  # already deleted
                pass
            self._deleted.add(int(label))
        missing = _minus(db_ids, have)
        revive = [int(x) for x in missing if int(x) in self._deleted]
        if revive:  # deleted here, present in the table: take the stored vector again
            self.update(np.asarray(revive, np.int64), fetch(np.asarray(revive, np.int64)))
            missing = _minus(missing, np.asarray(revive, np.int64))
        for start in range(0, len(missing), 4096):
            part = missing[start : start + 4096]
            self._add_raw(part, fetch(part))
            if progress:
                progress(len(part))
        self.live = len(db_ids)
        self.max_id = int(db_ids.max()) if len(db_ids) else 0
        return bool(len(missing) or len(stale) or revive)

    def _add_raw(self, ids: np.ndarray, vecs: np.ndarray) -> None:
        idx = self._index
        need = idx.get_current_count() + len(ids)
        with native():
            if need > idx.get_max_elements():
                idx.resize_index(max(need, int(idx.get_max_elements() * 1.5)))
            # a bulk load builds with every core (hnswlib's threads end with the call); a few
            # rows go in on one thread, in order, so small stores are built the same each time
            threads = (os.cpu_count() or 1) if len(ids) >= BULK_THREADS_MIN else 1
            idx.add_items(np.asarray(vecs, np.float32), np.asarray(ids, np.int64), num_threads=threads)

    # -- mutation --------------------------------------------------------------------------
    def add(self, ids: np.ndarray, vecs: np.ndarray) -> None:
        """Add committed vectors (resizing first)."""
        if len(ids) == 0:
            return
        self._add_raw(ids, vecs)
        if self._deleted:  # hnswlib revives a withdrawn label that is added again
            self._deleted.difference_update(int(x) for x in ids)
        self.live += len(ids)
        self.max_id = max(self.max_id, int(np.max(ids)))
        self.dirty += len(ids)

    def begin_add(self, ids: np.ndarray, vecs: np.ndarray) -> "StagedAdd":
        """Start adding the vectors of new memories on a thread of its own, hidden until
        :meth:`StagedAdd.finish` (after their COMMIT; :meth:`StagedAdd.withdraw` after a
        rollback). Only while the caller holds the memory's lock, which every search takes:
        nothing searches the index between the start and the end."""
        ids = np.asarray(ids, np.int64)
        vecs = np.asarray(vecs, np.float32)
        self._reserve(len(ids))
        return StagedAdd(self, ids, vecs)

    def _reserve(self, n: int) -> None:
        """Room for ``n`` more labels."""
        idx = self._index
        need = idx.get_current_count() + n
        with native():
            if need > idx.get_max_elements():
                idx.resize_index(max(need, int(idx.get_max_elements() * 1.5)))

    def begin_adopt(self, ids: np.ndarray, vecs: np.ndarray, path: str, meta: dict) -> "StagedAdd":
        """:meth:`begin_add` for an import that carries the index graph of the store it came
        from (:meth:`export_graph`): the thread loads that file instead of building, when it
        is the one the export describes (size, SHA-256, parameters) and holds exactly these
        labels with these vectors; otherwise it builds as :meth:`begin_add` does. The loaded
        graph replaces this index at :meth:`StagedAdd.finish` (only an import into an empty
        store asks)."""
        if self.live or not self._adoptable(meta, len(ids)):
            return self.begin_add(ids, vecs)
        return StagedAdd(self, np.asarray(ids, np.int64), np.asarray(vecs, np.float32), graph=(path, meta))

    def _adoptable(self, meta: dict, n: int) -> bool:
        want = {"model_id": self.model_id, "dim": self.dim, "space": "ip", "count": n,
                "M": self.params["M"], "ef_construction": self.params["ef_construction"]}
        return all(meta.get(k) == v for k, v in want.items())

    def export_graph(self, path: str) -> dict | None:
        """Write the index (hnswlib's own file) to ``path`` for an export that carries it, and
        return what the export's header records of it (the file's name, size and SHA-256, the
        label count, the model and the build parameters an import must share); None, and no
        file, when the index has deleted labels (an import then builds its own)."""
        if self._index is None or self._deleted or not self.live:
            return None
        with native():
            self._index.save_index(path)
        return {"file": os.path.basename(path), "bytes": os.path.getsize(path), "sha256": _sha256(path),
                "count": int(self._index.get_current_count()), "model_id": self.model_id, "dim": self.dim,
                "space": "ip", "M": self.params["M"], "ef_construction": self.params["ef_construction"]}

    def _load_graph(self, path: str, meta: dict, ids: np.ndarray, vecs: np.ndarray) -> hnswlib.Index | None:
        """The carried graph of :meth:`begin_adopt`, or None when it is not exactly the one
        described, of these labels and (on a sample of :data:`GRAPH_CHECK` rows) these vectors."""
        try:
            if os.path.getsize(path) != meta.get("bytes") or _sha256(path) != meta.get("sha256"):
                return None
            idx = hnswlib.Index(space="ip", dim=self.dim)
            with native():
                idx.load_index(path, max_elements=max(1024, len(ids)))
            if idx.get_current_count() != len(ids) or not np.array_equal(
                    np.sort(np.asarray(idx.get_ids_list(), np.int64)), np.sort(ids)):
                return None
            pick = np.random.default_rng(0).choice(len(ids), min(GRAPH_CHECK, len(ids)), replace=False)
            if not np.array_equal(np.asarray(idx.get_items(ids[pick]), np.float32), vecs[pick]):
                return None
            idx.set_ef(self.params["ef"])
            idx.set_num_threads(1)
            return idx
        except Exception:  # unreadable: only a cache, built instead
            return None

    def update(self, ids: np.ndarray, vecs: np.ndarray) -> None:
        """Replace the vectors of these labels (added when absent, revived when deleted)."""
        for label, v in zip(np.asarray(ids, np.int64), np.asarray(vecs, np.float32)):
            label = int(label)
            if label in self._deleted:
                self._index.unmark_deleted(label)
                self._deleted.discard(label)
                self.live += 1
            else:
                try:
                    self._index.get_items([label])  # raises for an absent label
                except RuntimeError:
                    self.add(np.asarray([label]), v.reshape(1, -1))
                    continue
            with native():
                self._index.add_items(v.reshape(1, -1), np.asarray([label]), num_threads=1)
            self.dirty += 1

    def delete(self, ids) -> None:
        for label in ids:
            label = int(label)
            if label in self._deleted:
                continue
            try:
                self._index.mark_deleted(label)
            except RuntimeError:  # not in the index
                continue
            self._deleted.add(label)
            self.live -= 1
            self.dirty += 1

    # -- queries ---------------------------------------------------------------------------
    def query(
        self, vec: np.ndarray, k: int, allowed: Callable[[int], bool] | set[int] | frozenset[int] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` labels and inner products (k clamped to the live count), among ``allowed``
        labels when given: a membership test, or a set. With a set of at most
        :data:`EXACT_MAX` labels (or when the graph search cannot reach ``k`` of them) the
        search is exact over exactly those labels, so a small scope gets all of its nearest
        memories whatever the rest of the store holds."""
        k = min(k, self.live)
        if k <= 0 or self._index is None:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        members = allowed if isinstance(allowed, (set, frozenset)) else None
        if members is not None and len(members) <= max(EXACT_MAX, 4 * k):
            return self._exact(vec, k, members)
        test = members.__contains__ if members is not None else allowed
        self._index.set_ef(max(self.params["ef"], k))
        try:
            with native():
                labels, dist = self._index.knn_query(vec.reshape(1, -1), k=k, filter=test)
        except RuntimeError:  # fewer than k reachable (filter or deletions)
            if members is not None:
                return self._exact(vec, k, members)
            labels, dist = self._knn_fallback(vec, k, test)
        return labels[0].astype(np.int64), (1.0 - dist[0]).astype(np.float32)

    def _exact(self, vec: np.ndarray, k: int, members) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` of ``members`` by exact inner product (labels not in the index skipped)."""
        have = self._labels()
        ids = np.fromiter((m for m in members if m in have and m not in self._deleted), np.int64)
        if not len(ids):
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        vecs = np.asarray(self._index.get_items(ids), np.float32)
        sims = vecs @ np.asarray(vec, np.float32).ravel()
        top = np.argsort(-sims, kind="stable")[:k]
        return ids[top], sims[top].astype(np.float32)

    def _labels(self) -> set[int]:
        if self._label_cache is None or self._label_cache[0] != self._index.get_current_count():
            self._label_cache = (self._index.get_current_count(), set(self._index.get_ids_list()))
        return self._label_cache[1]

    def sample(self, n: int, seed: int = 0) -> np.ndarray:
        """Up to ``n`` of the indexed vectors (n, dim), chosen at random once and kept until the
        live count has changed by a tenth (the analogy slot's estimate of a turn's cosine
        spread over the store)."""
        live = self.live
        got = self._sample
        if got is not None and got[0] > 0 and got[2] == (n, seed) and abs(live - got[0]) <= 0.1 * got[0]:
            return got[1]
        labels = self.labels()
        if len(labels) > n:
            labels = np.random.default_rng(seed).choice(labels, n, replace=False)
        vecs = self.get(labels) if len(labels) else np.zeros((0, self.dim), np.float32)
        self._sample = (live, vecs, (n, seed))
        return vecs

    def get(self, ids) -> np.ndarray:
        """The indexed vectors of ``ids`` (n, dim) (labels the index has)."""
        return np.asarray(self._index.get_items(np.asarray(ids, np.int64)), np.float32)

    def _knn_fallback(self, vec, k, allowed):
        while k > 1:
            k = max(1, k // 2)
            try:
                with native():
                    return self._index.knn_query(vec.reshape(1, -1), k=k, filter=allowed)
            except RuntimeError:
                continue
        try:
            with native():
                return self._index.knn_query(vec.reshape(1, -1), k=1, filter=allowed)
        except RuntimeError:
            return np.zeros((1, 0), np.int64), np.zeros((1, 0), np.float32)

    # -- persistence -----------------------------------------------------------------------
    def compact(self) -> None:
        """A fresh index of the live labels and their vectors (the deleted ones dropped)."""
        live = self.labels()
        idx = self._fresh(len(live))
        for start in range(0, len(live), 4096):
            part = live[start : start + 4096]
            with native():
                idx.add_items(np.asarray(self._index.get_items(part), np.float32), part,
                              num_threads=os.cpu_count() or 1)
        idx.set_num_threads(1)
        self._index, self._deleted, self._label_cache = idx, set(), None
        self.dirty += 1

    def save(self) -> None:
        """Write the index atomically (temp file, then rename) if it changed, compacting it
        first when too many labels are deleted (see :data:`COMPACT_MIN`)."""
        if not self.path or self._index is None or not self.dirty:
            return
        if len(self._deleted) > max(COMPACT_MIN, self.live // 4):
            self.compact()
        # temporary names of this process and thread: processes closing one store at the same
        # moment each write their own and rename it (a shared name was renamed away under one)
        tag = f"{os.getpid()}.{threading.get_ident()}.tmp"
        tmp, tmp_meta = f"{self.path}.{tag}", f"{self._meta_path()}.{tag}"
        try:
            with native():
                self._index.save_index(tmp)
            meta = {
                "model_id": self.model_id,
                "store_id": self.store_id,
                "deleted": sorted(self._deleted),
                "seq": self.seq,
                "dim": self.dim,
                "capacity": int(self._index.get_max_elements()),
                "size": os.path.getsize(tmp),  # an index renamed in by another process fails this check
                **self.params,
            }
            with open(tmp_meta, "w") as f:
                json.dump(meta, f)
            os.replace(tmp, self.path)
            os.replace(tmp_meta, self._meta_path())
        finally:
            for leftover in (tmp, tmp_meta):
                if os.path.exists(leftover):
                    os.remove(leftover)
        self.dirty = 0


#: Rows of a carried index graph whose vectors are compared with the imported ones.
GRAPH_CHECK = 64


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class StagedAdd:
    """Vectors being added to a :class:`VectorIndex` on a thread while their transaction
    runs (see :meth:`VectorIndex.begin_add`): a bulk load's index build overlaps its SQL
    writes; or, given ``graph`` (:meth:`VectorIndex.begin_adopt`), a carried index graph
    loaded instead when it checks out. Exactly one of :meth:`finish` or :meth:`withdraw`
    ends it."""

    #: Vectors added per hnswlib call (between calls the thread count can change).
    SLICE = 4096

    def __init__(self, index: VectorIndex, ids: np.ndarray, vecs: np.ndarray,
                 graph: tuple[str, dict] | None = None) -> None:
        self.index, self.ids, self.vecs = index, ids, vecs
        self.error: BaseException | None = None
        self._graph = graph
        #: the carried graph, loaded (None: built here, or not yet)
        self.adopted: hnswlib.Index | None = None
        self._caller_done = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fastmem-index-add", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        cores = os.cpu_count() or 1
        try:
            if self._graph is not None:
                self.adopted = self.index._load_graph(*self._graph, self.ids, self.vecs)
                if self.adopted is not None:
                    return
                self.index._reserve(len(self.ids))  # not the carried graph: built as begin_add does
            for start in range(0, len(self.ids), self.SLICE):
                if self._stop.is_set():  # withdrawn: the rest is never added
                    break
                # one core fewer than the machine has while the caller writes rows; every core
                # once it waits for the rest
                threads = cores if self._caller_done.is_set() else max(1, cores - 1)
                with native():
                    self.index._index.add_items(self.vecs[start : start + self.SLICE],
                                                self.ids[start : start + self.SLICE], num_threads=threads)
        except BaseException as exc:  # raised to the caller by finish/withdraw
            self.error = exc

    def finish(self) -> None:
        """After COMMIT: the vectors count as the index's (what the background add did not
        manage is added again, in the caller's thread, when it failed)."""
        self._caller_done.set()
        self._thread.join()
        ix = self.index
        if self.adopted is not None:  # an import into an empty store: the graph is the index
            ix._index, ix._deleted, ix._label_cache, ix._sample = self.adopted, set(), None, None
            ix.live, ix.carried_from = 0, self._graph[0]
        elif self.error is not None:
            ix._add_raw(self.ids, self.vecs)
        if ix._deleted:
            ix._deleted.difference_update(int(x) for x in self.ids)
        ix.live += len(self.ids)
        ix.max_id = max(ix.max_id, int(np.max(self.ids)))
        ix.dirty += len(self.ids)

    def withdraw(self) -> None:
        """After a rollback: whatever was added is marked deleted (hidden from every search,
        revived if the same ids are added again)."""
        self._stop.set()
        self._thread.join()
        if self.adopted is not None:  # loaded beside the index, never part of it
            self.adopted = None
            return
        ix = self.index
        have = ix._labels()
        for label in self.ids.tolist():
            if label in have and label not in ix._deleted:
                with native():
                    ix._index.mark_deleted(label)
                ix._deleted.add(label)
