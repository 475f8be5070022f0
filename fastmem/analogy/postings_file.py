"""The term postings saved beside the store (``<store>.terms``), so that a large store opens
without reading every memory's terms and sorting them again.

The file is a cache of the ``codes`` table's term lists, like the vector index beside the
store: it is trusted only when the store names it (a token written in the store's settings in
the same flush) and the change log still holds every code change since the sequence number it
was saved at; those changes are then applied to it. Anything else (no file, another store's,
a truncated or unreadable one, a log trimmed past it) means the terms are read from the table
as before, and the file is written again at the next flush.

Layout: 8 magic bytes, the header's length (8 bytes, little-endian), the header (JSON: the
token, the structure version and dimension, the change-log position, and each array's name
and length), then the arrays, little-endian int64, in the header's order.
"""

from __future__ import annotations

import json
import os
import struct
import threading
import uuid

import apsw
import numpy as np

from .postings import TermIndex

__all__ = ["MAGIC", "STALE", "load", "read", "stage", "write"]

#: The saved postings are caught up with at most this share of their memories changed since
#: (and at least 1,000); a file further behind is not used.
STALE = 0.25

MAGIC = b"FMTERMS\x01"
_ORDER = ("keys", "indptr", "rows", "ids")


def write(path: str, header: dict, arrays: dict[str, np.ndarray]) -> str:
    """Write ``arrays`` (``keys``, ``indptr``, ``rows``, ``ids``) and ``header`` to a temporary
    file beside ``path``; returns its name (the caller renames it into place once the store
    names its token, or removes it)."""
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    head = dict(header, arrays=[[name, int(len(arrays[name]))] for name in _ORDER])
    blob = json.dumps(head, sort_keys=True).encode()
    try:
        with open(tmp, "wb") as f:
            f.write(MAGIC + struct.pack("<Q", len(blob)) + blob)
            for name in _ORDER:
                f.write(np.ascontiguousarray(arrays[name], "<i8").tobytes())
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return tmp


def read(path: str) -> tuple[dict, dict[str, np.ndarray]] | None:
    """The header and arrays of a postings file; None when it is missing, not one, or shorter
    or longer than its header says."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            if f.read(8) != MAGIC:
                return None
            (n,) = struct.unpack("<Q", f.read(8))
            if n > size:
                return None
            header = json.loads(f.read(n))
            lengths = [(str(name), int(k)) for name, k in header["arrays"]]
            if [name for name, _ in lengths] != list(_ORDER) or 16 + n + 8 * sum(k for _, k in lengths) != size:
                return None
            arrays = {name: np.fromfile(f, "<i8", k).astype(np.int64, copy=False) for name, k in lengths}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if any(len(arrays[name]) != k for name, k in lengths):
        return None
    return header, arrays


def stage(path: str, ti: TermIndex, dim: int, struct: int, seq: int) -> tuple[str, str]:
    """Write ``ti``'s live postings, current at change-log position ``seq``, to a temporary
    file beside ``path``; returns it and its token (see the module docstring)."""
    keys, indptr, rows, ids = ti.postings_of_live()
    token = uuid.uuid4().hex
    head = {"token": token, "dim": int(dim), "struct": int(struct), "seq": int(seq), "n": int(len(ids))}
    return write(path, head, {"keys": keys, "indptr": indptr, "rows": rows, "ids": ids}), token


def load(db: apsw.Connection, path: str, dim: int, struct: int) -> tuple[TermIndex, int] | None:
    """The postings saved at ``path``, caught up with the code changes the store's log holds
    since they were saved, and how many memories those changes touched; None when there is
    no file, the store names another, its structure version or dimension differ, or the log
    no longer reaches back to it (or more than :data:`STALE` of its memories changed since)."""
    if not os.path.exists(path):
        return None
    token = db.execute("SELECT value FROM settings WHERE key='terms_file'").fetchone()
    got = read(path) if token is not None else None
    if got is None:
        return None
    head, a = got
    seq = int(head.get("seq", -1))
    trimmed = db.execute("SELECT value FROM settings WHERE key='change_log_trimmed'").fetchone()
    last = db.execute("SELECT coalesce(max(seq), 0) FROM change_log").fetchone()[0]
    if (head.get("token") != token[0] or head.get("dim") != dim or head.get("struct") != struct
            or seq < (int(trimmed[0]) if trimmed else 0) or seq > last):
        return None
    changed = [m for m, in db.execute("SELECT DISTINCT memory_id FROM change_log WHERE seq>? AND part='code'", (seq,))]
    if len(changed) > max(1000, STALE * len(a["ids"])):
        return None
    ti = TermIndex.from_postings(a["keys"], a["indptr"], a["rows"], a["ids"])
    if changed:  # written, updated or forgotten since: their terms as the table has them now
        rows = db.execute("SELECT memory_id, terms FROM codes WHERE dim=? AND memory_id IN "
                          "(SELECT value FROM json_each(?)) ORDER BY memory_id", (dim, json.dumps(changed))).fetchall()
        if any(r[1] is None for r in rows):
            return None
        ti.remove(changed)
        ti.add_many([r[0] for r in rows], [np.frombuffer(r[1], np.int64) for r in rows])
    return ti, len(changed)
