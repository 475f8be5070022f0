"""Past one machine: bulk ingest and re-embedding on a Ray cluster (extra ``fastmem[ray]``).

A write is two steps, the same ones :meth:`fastmem.Memory.remember_many` takes:

* **derive** (pure: texts in, embeddings, facts and events out; no store access):
  :func:`fastmem.write.prepare.prepare_items`, run here by Ray Data
  on an actor pool whose actors load MiniLM and the parser once each;
* **commit** (one transaction of precomputed rows: canonical names, graph, FTS, index and
  statistics as for any write): :func:`fastmem.write.commit.commit` through the store's own front,
  from one place per store file, batches in input order.

Each batch is committed together with a row ``(job, batch)`` in the file's
``ingest_log`` table, in the same transaction: the job is a digest of the input and the batch
size, so a batch is never written twice, a worker that dies is replaced by Ray and its batch
derived again, and a driver that dies resumes from the last committed batch when run again
with the same arguments. ``shard_by="scope"`` writes each scope to its own file
``<dir>/<scope>.db`` (the empty scope to ``_.db``; other names percent-encoded), each file with its
own writer actor, so writers of different files run on different nodes in parallel.

    import ray
    from fastmem import distributed
    ray.init()                                   # or address="ray://head:10001"
    distributed.ingest("chats.jsonl", "memory.db")
    distributed.reembed("memory.db")
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import time
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote

import numpy as np

from .errors import InvalidInput
from .write import prepare as P
from .write.items import batches_done_in_file, checked_items, read_items

__all__ = ["IngestReport", "commit_batch", "derive_batch", "ingest", "reembed", "shard_path"]

#: Texts per derived batch (one Ray task; one transaction per store file).
BATCH = 256
#: The structural code dimension the derive step encodes at: the default store's
#: (:class:`fastmem.Memory` ``hrr_dim``); a store of another dimension encodes at commit.
DERIVE_HRR_DIM = 512


def _ray():
    try:
        import ray
    except ImportError:
        raise ImportError("fastmem.distributed needs Ray: pip install 'fastmem[ray]'") from None
    return ray


def _connect(address: str | None):
    """Ray, connected: to ``address`` when given, to the running cluster or a new local one
    otherwise (an already initialised Ray is used as it is)."""
    ray = _ray()
    if not ray.is_initialized():
        if address not in (None, "auto", "local"):
            _answers(address)
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     logging_level="ERROR", configure_logging=True)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ConnectionError(f"cannot reach a Ray cluster at {address or 'the default address'}: {exc}") from None
    return ray


def _answers(address: str, timeout: float = 10.0) -> None:
    """ConnectionError at once when nothing listens at a ``host:port`` / ``ray://host:port``
    address (Ray itself retries for minutes)."""
    import socket

    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise InvalidInput(f"a Ray address is host:port or ray://host:port, not {address!r}")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ConnectionError(f"cannot reach a Ray cluster at {address}: {exc.strerror or exc}") from None


# -- input ----------------------------------------------------------------------------------
def _items(source) -> list[dict]:
    """The items to ingest, validated (nothing is sent before all of it is known to be good)."""
    if isinstance(source, (str, os.PathLike)):
        items = list(read_items([os.fspath(source)]))
    elif isinstance(source, Iterable) and not isinstance(source, (bytes, dict)):
        items = [x if isinstance(x, dict) else {"text": x} for x in source]
    else:
        raise InvalidInput("source must be a file path (text or JSONL) or an iterable of texts / item dicts")
    return checked_items(items)


def _job(items: list[dict], batch_size: int, shard_by: str | None) -> str:
    h = hashlib.sha256(f"{batch_size}|{shard_by}|".encode())
    for it in items:
        h.update(json.dumps(it, sort_keys=True, default=str).encode())
        h.update(b"\n")
    return h.hexdigest()[:32]


# -- derive ---------------------------------------------------------------------------------
def derive_batch(items: Sequence[dict], embedder=None, extractor=None, encoder=None):
    """The pure step: validated items -> a :class:`fastmem.write.prepare.Prepared` (embeddings,
    facts, events, statements, windows and, with a :class:`fastmem.write.prepare.CodeEncoder`
    as ``encoder``, structural codes) plus what each row is written with. What
    ``remember_many`` does before its transaction, and the codes it computes inside it: the
    commit step then encodes nothing (a code of another dimension than the store's is
    encoded again there)."""
    from . import SpacyExtractor
    from .models.embedder import default_embedder

    embedder = embedder if embedder is not None else default_embedder()
    extractor = extractor if extractor is not None else SpacyExtractor()
    prep, when = P.prepare_items(items, embedder, extractor, encoder)
    rows = {"scope": [it["scope"] for it in items], "source": [it["source"] for it in items],
            "meta": [it["meta"] for it in items], "at": when, "speaker": [it.get("speaker") for it in items]}
    return prep, rows


class _Deriver:
    """A Ray Data actor: loads the models once, derives one fastmem batch per call."""

    def __init__(self) -> None:
        from . import SpacyExtractor
        from .models.embedder import default_embedder

        self.embedder, self.extractor = default_embedder(), SpacyExtractor()
        self.encoder = P.CodeEncoder(DERIVE_HRR_DIM, self.embedder)
        self.embedder.encode(["warm up"])

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        out_batch, out_payload = [], []
        for b, items in zip(batch["batch"], batch["items"]):
            prep, rows = derive_batch(json.loads(items), self.embedder, self.extractor, self.encoder)
            out_batch.append(int(b))
            out_payload.append(pickle.dumps((prep, rows), protocol=pickle.HIGHEST_PROTOCOL))
        return {"batch": out_batch, "payload": out_payload}


# -- commit ---------------------------------------------------------------------------------
def commit_batch(mem, job: str, batch: int, prep, rows: dict) -> list[int] | None:
    """The commit step: one transaction of precomputed rows and the ``(job, batch)`` mark
    (:meth:`fastmem.Memory.host.commit_prepared`). None (and nothing written) when this batch was
    committed before."""
    return mem.host.commit_prepared(prep, scope=rows["scope"], source=rows["source"], meta=rows["meta"], at=rows["at"],
                               speaker=rows["speaker"], mark=(job, int(batch)))


def _done(path: str, job: str) -> set[int]:
    return batches_done_in_file(path, job)


def shard_path(folder: str, scope: str) -> str:
    """The file of one scope under ``shard_by="scope"``: ``<folder>/<scope>.db``, the scope
    percent-encoded (``/`` and every other character a file name cannot hold), ``_.db``
    for the empty scope."""
    name = quote(scope, safe=" -.,@+=()") if scope else "_"
    if name.startswith((".", "_")) and scope:
        name = "%" + format(ord(name[0]), "02X") + name[1:]
    return os.path.join(folder, name + ".db")


class _Writer:
    """One store file's writer (a Ray actor under ``shard_by="scope"``): batches in order."""

    def __init__(self, path: str) -> None:
        import fastmem

        self.mem = fastmem.Memory(path, progress=False)

    def commit(self, job: str, batch: int, payload: bytes) -> int:
        prep, rows = pickle.loads(payload)
        got = commit_batch(self.mem, job, batch, prep, rows)
        return 0 if got is None else len(got)

    def close(self) -> None:
        self.mem.close()


def _subset(prep, rows: dict, keep: list[int]):
    return prep.subset(keep), {k: [v[i] for i in keep] for k, v in rows.items()}


class IngestReport(dict):
    """What :func:`ingest` did: ``memories`` written now, ``skipped`` (batches committed by an
    earlier run of the same job), ``batches``, ``files`` and ``seconds``."""


def ingest(source, db: str, *, address: str | None = None, batch_size: int = BATCH, shard_by: str | None = None,
           workers: int | None = None, progress: bool | None = None) -> IngestReport:
    """Import ``source`` (a text or JSONL file as ``fastmem ingest`` reads it, or an iterable of
    texts / item dicts with ``text`` and optional ``scope``, ``source``, ``meta``, ``triples``,
    ``at``, ``speaker``) into the store ``db`` through Ray (see the module docstring).

    ``address``: the Ray cluster (default: the initialised one, else the running one, else a
    new local one). ``workers``: derive actors (default: the cluster's CPUs). ``shard_by``:
    None (one file) or ``"scope"`` (``db`` is a folder of one file per scope). Running it again
    with the same arguments finishes what an interrupted run left and writes nothing twice.
    """
    if shard_by not in (None, "scope"):
        raise InvalidInput(f"shard_by must be None or 'scope', not {shard_by!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= 100_000:
        raise InvalidInput(f"batch_size must be an int from 1 to 100,000, got {batch_size!r}")
    t0 = time.perf_counter()
    items = _items(source)
    job = _job(items, batch_size, shard_by)
    batches = [items[i:i + batch_size] for i in range(0, len(items), batch_size)]
    files = _files(db, shard_by, items)
    done = _completed(files, job, batches, shard_by)
    todo = [i for i in range(len(batches)) if i not in done]
    report = IngestReport(memories=0, skipped=len(done), batches=len(batches), files=sorted(set(files.values())),
                          seconds=0.0)
    if todo:
        ray = _connect(address)
        report["memories"] = _run(ray, job, batches, todo, files, shard_by, workers, progress)
    report["seconds"] = round(time.perf_counter() - t0, 2)
    return report


def _files(db: str, shard_by: str | None, items: list[dict]) -> dict[str, str]:
    """Scope -> store file."""
    if shard_by is None:
        return {it["scope"]: db for it in items}
    if os.path.exists(db) and not os.path.isdir(db):
        raise InvalidInput(f"shard_by='scope' writes a folder of stores; {db} is a file")
    os.makedirs(db, exist_ok=True)
    return {it["scope"]: shard_path(db, it["scope"]) for it in items}


def _completed(files: dict[str, str], job: str, batches: list[list[dict]], shard_by) -> set[int]:
    """Batches every file they write to has committed."""
    per_file = {p: _done(p, job) for p in set(files.values())}
    out = set()
    for i, items in enumerate(batches):
        if all(i in per_file[files[s]] for s in {it["scope"] for it in items}):
            out.add(i)
    return out


def _run(ray, job, batches, todo, files, shard_by, workers, progress) -> int:
    from .util.progress import bar

    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True  # commits in input order: the ids remember_many gives
    ctx.enable_progress_bars = False
    n_workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    ds = ray.data.from_items([{"batch": i, "items": json.dumps(batches[i])} for i in todo],
                             override_num_blocks=len(todo))
    derived = ds.map_batches(_Deriver, batch_size=1, compute=ray.data.ActorPoolStrategy(size=n_workers), num_cpus=1)  # Ray Data restarts a dead actor and retries its batch
    b = bar(sum(len(batches[i]) for i in todo), "ingesting (ray)", progress)
    written = 0
    if shard_by is None:
        import fastmem

        path = next(iter(files.values()))
        with fastmem.Memory(path, progress=False) as mem:
            for row in derived.iter_rows():
                prep, rows = pickle.loads(row["payload"])
                got = commit_batch(mem, job, int(row["batch"]), prep, rows)
                written += 0 if got is None else len(got)
                if b:
                    b.update(len(prep.texts))
    else:
        writer = ray.remote(num_cpus=0)(_Writer)
        actors: dict[str, Any] = {}
        refs = []
        for row in derived.iter_rows():
            prep, rows = pickle.loads(row["payload"])
            for path in sorted({files[s] for s in rows["scope"]}):
                keep = [i for i, s in enumerate(rows["scope"]) if files[s] == path]
                if path not in actors:
                    actors[path] = writer.remote(path)
                part = pickle.dumps(_subset(prep, rows, keep), protocol=pickle.HIGHEST_PROTOCOL)
                refs.append(actors[path].commit.remote(job, int(row["batch"]), part))
            if b:
                b.update(len(prep.texts))
        written = sum(ray.get(refs))
        ray.get([a.close.remote() for a in actors.values()])
    if b:
        b.close()
    return written


# -- re-embedding ---------------------------------------------------------------------------
class _Embedder:
    def __init__(self) -> None:
        from .models.embedder import default_embedder

        self.embedder = default_embedder()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        vecs = self.embedder.encode(list(batch["text"]))
        return {"id": batch["id"], "vec": [v.tobytes() for v in vecs]}


def reembed(db: str, *, address: str | None = None, batch_size: int = BATCH, workers: int | None = None,
            progress: bool | None = None) -> int:
    """Recompute every vector of the store ``db`` with the default model on Ray workers, then
    rebuild its index; returns the number of memories re-embedded. Each batch is its own
    transaction: an interrupted run leaves a store that opens with ``reembed=True`` (or a
    second run of this) and nothing half-written."""
    import fastmem

    from .util.progress import bar

    if not os.path.exists(db):
        raise FileNotFoundError(f"no store at {db}")
    ray = _connect(address)
    with fastmem.Memory(db, progress=False, reembed=True) as mem:
        rows = mem.rows.texts()
        if not rows:
            return 0
        ds = ray.data.from_items([{"id": i, "text": t} for i, t in rows])
        n_workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        out = ds.map_batches(_Embedder, batch_size=batch_size, compute=ray.data.ActorPoolStrategy(size=n_workers),
                             num_cpus=1)
        b = bar(len(rows), "re-embedding (ray)", progress)
        for part in out.iter_batches(batch_size=batch_size):
            vecs = np.stack([np.frombuffer(v, np.float32) for v in part["vec"]])
            mem.host.write_vectors([int(i) for i in part["id"]], vecs)
            if b:
                b.update(len(part["id"]))
        if b:
            b.close()
        mem.admin.rebuild_index(progress=False)
    return len(rows)
