"""fastmem: a fast, local memory for AI agents.

One SQLite file holds memories, their embeddings, a knowledge graph of their facts and a
structural code of each; :meth:`Memory.recall` fuses keyword, vector and graph channels, ranks
by use, and adds the analogy slot: one memory with the turn's structure in other words.
"""

from __future__ import annotations

from . import errors
from .errors import FastmemError, InvalidInput, ModelMismatch, NotFound, StoreCorrupt
from .extract import ChatExtractor, SpacyExtractor, Triple
from .memory import Memory
from .usage import Session
from .results import Analogy, Hit, Recall

__all__ = [
    "Memory",
    "Session",
    "Hit",
    "Analogy",
    "Recall",
    "Triple",
    "SpacyExtractor",
    "ChatExtractor",
    "warmup",
    "structural_similarity",
    "errors",
    "FastmemError",
    "InvalidInput",
    "NotFound",
    "StoreCorrupt",
    "ModelMismatch",
]
__version__ = "0.1.0"


def warmup(*, models: bool = False) -> None:
    """Compile every Numba kernel on tiny inputs (cached on disk by Numba afterwards).

    With ``models=True`` also load MiniLM and the spaCy parser, so the first real call pays
    nothing.
    """
    from . import kernels

    kernels.warmup()
    if models:
        from .embedder import default_embedder
        from .extract import load_spacy

        default_embedder().encode(["warm up"])
        load_spacy()


_SIM_ENCODER = None


def structural_similarity(text_a: str, text_b: str) -> float:
    """Structural similarity of two texts in [-1, 1] (no store needed).

    Both are parsed into events (verbs in order with their subject/object fillers, names
    reduced to types) by the default extractor and encoded by the default structural encoder;
    the result is the cosine of the two codes. 0.0 when either has no events.
    """
    global _SIM_ENCODER
    from . import kernels
    from .extract import SpacyExtractor
    from .structure import StructureEncoder
    from .text import check_text

    check_text(text_a, "text_a")
    check_text(text_b, "text_b")
    if _SIM_ENCODER is None:
        _SIM_ENCODER = (SpacyExtractor(), StructureEncoder(512))
    ex, enc = _SIM_ENCODER
    codes = [enc.encode(ev)[0] for ev in ex.events_many([text_a, text_b])]
    if codes[0] is None or codes[1] is None:
        return 0.0
    return float(kernels.sim(codes[0], codes[1]))
