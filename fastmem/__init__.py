"""fastmem: a fast, local memory for AI agents.

One SQLite file holds memories, their embeddings, a knowledge graph of their facts and a
structural code of each; :meth:`Memory.recall` fuses keyword, vector and graph channels, ranks
by use, and adds the analogy slot: one memory with the turn's structure in other words.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

from . import errors
from .errors import FastmemDeprecationWarning, FastmemError, InvalidInput, ModelMismatch, NotFound, StoreBusy, StoreCorrupt

# Everything else loads on first use (PEP 562), so ``import fastmem`` costs milliseconds and
# loads no model, no parser and no compiler: a command that only lists a store stays fast.
_LAZY = {
    "Memory": "memory",
    "AnalogySettings": "analogy.slot",
    "Session": "derived.usage",
    "Hit": "results",
    "Analogy": "results",
    "Recall": "results",
    "Record": "results",
    "Category": "passes.categories",
    "ConsolidationReport": "passes.chunks",
    "Triple": "reader.extract",
    "SpacyExtractor": "reader.extract",
    "ChatExtractor": "reader.chat",
    "probe": "storage.store",
    "SCHEMA_VERSION": "storage.store",
}

#: Where the modules of the flat layout (fastmem 0.1's first releases) live now: ``import
#: fastmem.embedder`` still works and gives :mod:`fastmem.models.embedder` itself (the same
#: module object, so its settings and caches are shared). ``fastmem.recall`` and
#: ``fastmem.analogy`` are packages now and keep their public names.
MOVED = {
    "engine": "core.engine", "transaction": "core.transaction", "memory_io": "core.io",
    "memory_rows": "core.rows", "memory_passes": "core.passes", "args": "core.args",
    "check": "core.check", "transfer": "core.transfer",
    "pending": "write.pending", "writes": "write.prepare", "workers": "write.workers",
    "store": "storage.store", "schema": "storage.schema",
    "embedder": "models.embedder", "minilm": "models.minilm", "onnx_minilm": "models.onnx_minilm",
    "static": "models.model2vec", "exitgate": "models.exitgate",
    "extract": "reader.extract", "canon": "reader.canon", "lexicon": "reader.lexicon",
    "standing": "reader.standing",
    "vectors": "derived.vectors", "index": "derived.ann", "windows": "derived.windows",
    "graph": "derived.graph", "usage": "derived.usage",
    "channels": "recall.channels", "fusion": "recall.fusion", "evidence": "recall.evidence",
    "arrange": "recall.arrange",
    "structure": "analogy.codes", "structure_index": "analogy.code_store", "term_index": "analogy.postings",
    "mapping": "analogy.mapping", "ranker": "analogy.ranker", "ranker_weights": "analogy.ranker_weights",
    "chunks": "passes.chunks", "categories": "passes.categories", "summarize": "passes.summarize",
    "benchmark": "evaluate.bench",
    "bounded": "util.bounded", "progress": "util.progress", "text": "util.text", "paths": "util.paths",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves an old flat module name (:data:`MOVED`) to the module where it lives now."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(__name__ + ".") and fullname[len(__name__) + 1:] in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        module = importlib.import_module(f"{__name__}.{MOVED[spec.name[len(__name__) + 1:]]}")
        spec.loader_state = module.__spec__  # the import system sets __spec__ to the old name's
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = module.__spec__.loader_state  # already executed: only its own spec back


if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
    sys.meta_path.append(_MovedModules())


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    if not name.startswith("_"):  # a submodule: fastmem.models.embedder, fastmem.kernels...
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "Memory",
    "AnalogySettings",
    "Session",
    "Hit",
    "Analogy",
    "Recall",
    "Record",
    "Category",
    "ConsolidationReport",
    "Triple",
    "SpacyExtractor",
    "ChatExtractor",
    "warmup",
    "structural_similarity",
    "recall_channels",
    "probe",
    "SCHEMA_VERSION",
    "errors",
    "FastmemError",
    "FastmemDeprecationWarning",
    "InvalidInput",
    "NotFound",
    "StoreCorrupt",
    "StoreBusy",
    "ModelMismatch",
]
__version__ = "0.2.0"


def warmup(*, models: bool = False, static: bool = False, kernels: bool = True) -> None:
    """Compile every Numba kernel on tiny inputs (cached on disk by Numba afterwards).

    Nothing needs them: a write and a recall run NumPy kernels in a process that has not
    loaded Numba. A process that has loaded them uses their faster twins for the term
    postings (the slot's candidate scores, 4.8 ms against 9.1 ms at 100k memories), which
    pays off in a long-running backend over a large store; it costs ~1 s and ~150 MB, which a
    one-shot process should not pay (``kernels=False``, as the hermes provider does).

    With ``models=True`` also load MiniLM and the spaCy parser, so the first real call pays
    nothing. With ``static=True`` distil the static embedder (:mod:`fastmem.models.model2vec`) into the
    user's cache folder if it is not there yet (about a minute, once per user).
    """
    if kernels:
        from . import kernels as compiled

        compiled.warmup()
    if static:
        from .models.model2vec import StaticMiniLM

        StaticMiniLM().encode(["warm up"])
    if models:
        from .models.embedder import default_embedder
        from .models.parser import load_spacy

        emb = default_embedder()
        emb.load()  # the model a long-running process embeds with (ONNX Runtime's, when installed)
        emb.encode(["warm up"])
        load_spacy()


def recall_channels(*, model_free: bool = False) -> tuple[str, ...]:
    """The recall channels ``Memory.recall(channels=...)`` accepts, in the order they run (the
    built-in ones and any registered with :func:`fastmem.recall.channel`). ``model_free``: only
    those that need no embedding model (what a host can run while the model loads)."""
    from .recall.channels import names

    return names(model_free=model_free)


_SIM_ENCODER = None
#: The power of ``1 - s`` (``s`` how alike two texts are on the surface) that
#: :func:`structural_similarity` multiplies its structure score by: 3 keeps a literal retelling
#: under a true analogy on tests/data/stories_blind.json dev in 0.938 of sets (0.812 with 2) at one
#: multiple-choice item in 80 (tests/data/analogy_mc.json dev 0.900 -> 0.887) and at ProPara-Logy
#: silver's near analogies (four-way choice 0.658 -> 0.524); 4 and more cost true analogies over
#: false ones (``docs/defaults.md``).
_SURFACE_POWER = 3


def structural_similarity(text_a: str, text_b: str) -> float:
    """How far ``text_b`` is an analogy of ``text_a``: the same relations between different
    objects, in [-1, 1] (no store needed).

    When both texts tell a plot (two clauses or more with a content verb), the structure is
    the plot view's (:mod:`fastmem.analogy.plots`): each sentence told without its clothes
    (names and nouns by the role they play, verbs kept), embedded, and the two plots compared
    clause by clause in story order, whitened with the plot statistics of development text.
    Otherwise it is the events' (verbs in story order with their subject/object fillers, names
    reduced to types, and the higher-order relations between them): the mean of the cosine of
    their structural codes and of their structure mapping's normalised score
    (:mod:`fastmem.analogy.mapping`). Either is multiplied by ``(1 - s) ** 3``, ``s`` how alike
    the two texts are on the surface: the larger of how alike their objects are
    (:meth:`fastmem.analogy.mapping.Mapper.clothes`) and, for plots, their embedding cosine; so a
    retelling in other words, or the same things in another plot, score below a true
    analogy. 0.0 when either text has no events. Measured figures: ``README.md``.
    """
    global _SIM_ENCODER
    from . import kernels
    from .analogy.codes import StructureEncoder
    from .analogy.mapping import Mapper
    from .analogy.plots import kernel, plot_vectors, prior_whiten
    from .models.embedder import default_embedder
    from .reader.extract import SpacyExtractor
    from .util.text import check_text

    check_text(text_a, "text_a")
    check_text(text_b, "text_b")
    if _SIM_ENCODER is None:
        emb = default_embedder()
        _SIM_ENCODER = (SpacyExtractor(), StructureEncoder(512), Mapper(verb_vectors=emb.encode), emb)
    ex, enc, mapper, emb = _SIM_ENCODER
    (ev_a, _, plot_a), (ev_b, _, plot_b) = ex.turns_many([text_a, text_b])
    if not ev_a or not ev_b:
        return 0.0
    clothes = mapper.clothes(ev_a, ev_b)
    if plot_a and plot_b:
        pa, pb = plot_vectors(emb, [plot_a, plot_b])
        va, vb = emb.encode([text_a, text_b])
        surface = max(clothes, float(va @ vb))
        return kernel(prior_whiten(pa.vecs), prior_whiten(pb.vecs)) * (1.0 - surface) ** _SURFACE_POWER
    codes = [enc.encode(e)[0] for e in (ev_a, ev_b)]
    if codes[0] is None or codes[1] is None:
        return 0.0
    relational = 0.5 * float(kernels.sim(codes[0], codes[1])) + 0.5 * mapper.similarity(ev_a, ev_b)[0]
    return relational * (1.0 - clothes) ** _SURFACE_POWER
