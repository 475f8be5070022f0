"""all-MiniLM-L6-v2 through ONNX Runtime: the same weights, the same arithmetic, a compiled runtime.

:class:`fastmem.models.minilm.Bert` holds the model's weights (from the packaged safetensors) and its
tokenizer. Here its forward pass is written once as an ONNX graph, operator by operator (no
torch export: the graph is built from those arrays with ``onnx.helper``), saved in the user's
cache folder and run by ONNX Runtime, which fuses the layer norms, GELUs and bias additions
and runs the matrix products on its own threads. The vectors are the model's (cosine >= 0.999
against sentence-transformers, ``tests/test_embedder.py``), so a store keeps its model id.

The graph is built and saved on first use (about a second; ``fastmem warmup`` does it) under
``fastmem.util.paths.user_cache("onnx")``, named by the weights' size and the graph's version, and
written atomically, so concurrent first uses never read half a file. Later processes load it
without importing ``onnx``.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from .exitgate import drain_first, native
from .minilm import Bert

__all__ = ["OnnxBert", "available", "graph_path", "GRAPH_VERSION", "TOKEN_BUDGET"]

#: Bump when the graph built below changes (its file name carries it).
GRAPH_VERSION = 2
#: Word pieces a batch (ONNX Runtime's products run fastest on small batches here: 512 real
#: turns on 2 cores, 183 texts/s in batches of 512 word pieces, 146 of 2,048, 96 of 8,192).
TOKEN_BUDGET = 512


def available() -> bool:
    """Whether ONNX Runtime is installed (a dependency of fastmem; a user may remove it)."""
    import importlib.util

    return importlib.util.find_spec("onnxruntime") is not None  # without importing it (0.17 s)


def graph_path(path: str, quantized: bool = False) -> str:
    """Where the graph of the model in folder ``path`` is cached."""
    from ..util.paths import user_cache

    st = os.stat(os.path.join(path, "model.safetensors"))
    kind = "int8" if quantized else "fp32"
    return os.path.join(user_cache("onnx"), f"minilm-{st.st_size}-v{GRAPH_VERSION}-{kind}.onnx")


def _build(bert: Bert):
    """The ONNX model of ``bert.forward``: inputs ids and mask (B, L) int64, output the
    mean-pooled last hidden states (B, dim) float32 (not normalised)."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    count = iter(range(1 << 30))

    def const(arr, name=None) -> str:
        name = name or f"c{next(count)}"
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def op(kind, inputs, **attrs) -> str:
        out = f"t{next(count)}"
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    d, h = bert.dim, bert.heads
    dh = d // h
    # embeddings: word + position + token type 0, then layer norm
    n = op("Gather", [op("Shape", ["ids"]), const(np.array(1, np.int64))], axis=0)
    pos = op("Slice", [const(bert.pos, "pos"), const(np.array([0], np.int64)), op("Unsqueeze", [n, const(np.array([0], np.int64))]),
                       const(np.array([0], np.int64))])
    x = op("Add", [op("Add", [op("Gather", [const(bert.word, "word"), "ids"], axis=0), pos]), const(bert.type0, "type0")])
    x = op("LayerNormalization", [x, const(bert.ln0[0]), const(bert.ln0[1])], axis=-1, epsilon=bert.eps)
    maskf = op("Cast", ["mask"], to=TensorProto.FLOAT)
    bias = op("Mul", [op("Sub", [const(np.float32(1.0)), maskf]), const(np.float32(-1e9))])
    bias = op("Unsqueeze", [bias, const(np.array([1, 2], np.int64))])  # (B, 1, 1, L)
    heads = const(np.array([0, 0, h, dh], np.int64))
    merged = const(np.array([0, 0, d], np.int64))
    scale = const(np.float32(1.0 / np.sqrt(dh)))
    split = const(np.array([d, d, d], np.int64))
    half, one, root = const(np.float32(0.5)), const(np.float32(1.0)), const(np.float32(0.7071067811865476))
    for i, (qkv_w, qkv_b, o_w, o_b, ln1w, ln1b, i_w, i_b, f_w, f_b, ln2w, ln2b) in enumerate(bert.layers):
        qkv = op("Add", [op("MatMul", [x, const(qkv_w, f"l{i}.qkv_w")]), const(qkv_b)])
        q, k, v = (f"t{next(count)}" for _ in range(3))
        nodes.append(helper.make_node("Split", [qkv, split], [q, k, v], axis=-1))
        q = op("Transpose", [op("Reshape", [op("Mul", [q, scale]), heads])], perm=[0, 2, 1, 3])
        k = op("Transpose", [op("Reshape", [k, heads])], perm=[0, 2, 3, 1])
        v = op("Transpose", [op("Reshape", [v, heads])], perm=[0, 2, 1, 3])
        s = op("Softmax", [op("Add", [op("MatMul", [q, k]), bias])], axis=-1)
        ctx = op("Reshape", [op("Transpose", [op("MatMul", [s, v])], perm=[0, 2, 1, 3]), merged])
        att = op("Add", [op("Add", [op("MatMul", [ctx, const(o_w, f"l{i}.o_w")]), const(o_b)]), x])
        x = op("LayerNormalization", [att, const(ln1w), const(ln1b)], axis=-1, epsilon=bert.eps)
        u = op("Add", [op("MatMul", [x, const(i_w, f"l{i}.i_w")]), const(i_b)])
        u = op("Mul", [op("Mul", [u, half]), op("Add", [one, op("Erf", [op("Mul", [u, root])])])])
        out = op("Add", [op("Add", [op("MatMul", [u, const(f_w, f"l{i}.f_w")]), const(f_b)]), x])
        x = op("LayerNormalization", [out, const(ln2w), const(ln2b)], axis=-1, epsilon=bert.eps)
    m = op("Unsqueeze", [maskf, const(np.array([2], np.int64))])
    axis1 = const(np.array([1], np.int64))
    total = op("ReduceSum", [op("Mul", [x, m]), axis1], keepdims=0)
    counts = op("Max", [op("ReduceSum", [m, axis1], keepdims=0), const(np.float32(1e-9))])
    nodes.append(helper.make_node("Div", [total, counts], ["pooled"]))
    graph = helper.make_graph(
        nodes, "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "tokens"]),
         helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", d])], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="fastmem")


def _write(write, path: str) -> None:
    """``write(tmp)``, then the file renamed to ``path`` (atomic: a concurrent first use reads a
    whole file or none)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


class OnnxBert(Bert):
    """:class:`~fastmem.models.minilm.Bert` whose forward pass runs in ONNX Runtime.

    Parameters
    ----------
    path : str
        The sentence-transformers model folder (weights, config, tokenizer).
    threads : int, optional
        ONNX Runtime's threads for one batch (default: the machine's cores, at most 8).
    quantized : bool
        Run int8 weights (ONNX Runtime's dynamic quantisation of the matrix products): faster,
        but the vectors are no longer the model's (see :class:`fastmem.models.embedder.MiniLM`).
    spin : bool
        Let ONNX Runtime's worker threads busy-wait for the next batch after each one (its own
        default). Off here: in fastmem a forward pass is followed by the turn's spaCy parse,
        SQLite and the kernels, and on a small machine a spinning worker takes a core from
        them (the measurements: ``docs/defaults.md``, "Embedder").
    """

    def __init__(self, path: str, *, threads: int | None = None, quantized: bool = False, spin: bool = False,
                 **kw) -> None:
        super().__init__(path, **kw)
        self.quantized = bool(quantized)
        self.spin = bool(spin)
        with native():  # its import starts C++ libraries; the session is built outside the GIL
            import onnxruntime as ort

            self.session = self._session(ort, path, threads)
        drain_first()  # before any exit handler ONNX Runtime registered (see fastmem.models.exitgate)
        # the weights live in the session now: only the tokenizer and shapes are needed here
        self.layers, self.word = [], None

    def _session(self, ort, path: str, threads: int | None):
        file = graph_path(path, self.quantized)
        if not os.path.exists(file):
            fp32 = graph_path(path, False)
            if not os.path.exists(fp32):
                import onnx

                model = _build(self)
                _write(lambda p: onnx.save_model(model, p), fp32)
            if self.quantized:
                import logging

                from onnxruntime.quantization import QuantType, quantize_dynamic

                logging.disable(logging.WARNING)  # its advice to pre-process, once per user
                try:  # per output channel: min cosine to the model's vectors 0.977, per tensor 0.89
                    _write(lambda p: quantize_dynamic(fp32, p, weight_type=QuantType.QInt8, per_channel=True), file)
                finally:
                    logging.disable(logging.NOTSET)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(threads or min(os.cpu_count() or 1, 8))
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if self.spin else "0")
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        return ort.InferenceSession(file, opts, providers=["CPUExecutionProvider"])

    def encode(self, texts, *, token_budget: int = TOKEN_BUDGET) -> np.ndarray:
        """:meth:`Bert.encode` with batches of about ``token_budget`` word pieces."""
        return super().encode(texts, token_budget=token_budget)

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feed = {"ids": np.ascontiguousarray(ids, np.int64), "mask": np.ascontiguousarray(mask, np.int64)}
        with native():
            return self.session.run(["pooled"], feed)[0]
