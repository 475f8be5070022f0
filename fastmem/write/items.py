"""Memories to ingest, from files or from a host's own items: the input formats and the checks
an item passes before anything is written. Part of the public write-preparation API (with
:mod:`fastmem.write.prepare`), used by ``fastmem ingest`` and the Ray path.

:func:`read_items`: a plain-text file gives a memory per line or per paragraph (blank-line
separated); a ``.jsonl`` / ``.ndjson`` file (or ``fmt="jsonl"``) gives one per object:
``{"text": ..., "scope": ..., "source": ..., "meta": {...}, "triples": [...], "at": ...,
"speaker": ...}`` (only ``text`` required). ``-`` reads standard input.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterable, Iterator

from ..errors import InvalidInput
from ..storage.marks import batches_done_in_file
from ..util.text import check_str, check_text, to_epoch
from .checks import check_speaker, encode_meta

__all__ = ["read_items", "checked_items", "FORMATS", "ITEM_KEYS", "batches_done_in_file"]

FORMATS = ("auto", "lines", "paragraphs", "jsonl")
ITEM_KEYS = {"text", "scope", "source", "meta", "triples", "at", "speaker"}


def _open(path: str):
    if path == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="strict")
    return open(path, encoding="utf-8")


def read_items(paths: Iterable[str], fmt: str = "auto") -> Iterator[dict]:
    """Memories to ingest from files (see the module docstring), in order. Raises
    :class:`InvalidInput` naming the file and line of anything malformed."""
    if fmt not in FORMATS:
        raise InvalidInput(f"format must be one of {FORMATS}, not {fmt!r}")
    for path in paths:
        kind = fmt
        if kind == "auto":
            kind = "jsonl" if path.endswith((".jsonl", ".ndjson")) else "lines"
        try:
            fh = _open(path)
        except OSError as exc:
            raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from exc
        with fh:
            try:
                if kind == "jsonl":
                    for n, line in enumerate(fh, 1):
                        if not line.strip():
                            continue
                        try:
                            obj = json.loads(line)
                        except json.JSONDecodeError as exc:
                            raise InvalidInput(f"{path}:{n}: not JSON ({exc.msg})") from None
                        if isinstance(obj, str):
                            obj = {"text": obj}
                        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
                            raise InvalidInput(f"{path}:{n}: each line must be an object with a 'text' string")
                        extra = set(obj) - ITEM_KEYS
                        if extra:
                            raise InvalidInput(f"{path}:{n}: unknown keys {sorted(extra)} (allowed: {sorted(ITEM_KEYS)})")
                        yield obj
                elif kind == "paragraphs":
                    block: list[str] = []
                    for line in fh:
                        if line.strip():
                            block.append(line.strip())
                        elif block:
                            yield {"text": " ".join(block)}
                            block = []
                    if block:
                        yield {"text": " ".join(block)}
                else:
                    for line in fh:
                        if line.strip():
                            yield {"text": line.rstrip("\n")}
            except UnicodeDecodeError as exc:
                raise InvalidInput(f"{path}: not UTF-8 text ({exc.reason})") from None


def checked_items(items: Iterable[dict]) -> list[dict]:
    """Items (dicts with a ``text``, as :func:`read_items` yields) validated as ``remember_many``
    would validate them, each with ``meta`` as stored JSON and every key present; raises
    :class:`InvalidInput` naming the first bad item, before anything is written."""
    out = []
    for i, it in enumerate(items):
        where = f"item {i}"
        check_text(it.get("text"), f"{where}: text")
        scope = it.get("scope") or ""
        check_str(scope, f"{where}: scope")
        if it.get("source") is not None:
            check_str(it["source"], f"{where}: source")
        meta = encode_meta(it.get("meta"))
        to_epoch(it.get("at"), f"{where}: at")
        check_speaker(it.get("speaker"), f"{where}: speaker")
        out.append({"text": it["text"], "scope": scope, "source": it.get("source"), "meta": meta,
                    "at": it.get("at"), "speaker": it.get("speaker"), "triples": it.get("triples")})
    return out
