"""The static embedder (MiniLM distilled by model2vec, here, from the packaged weights): a store
chosen to use it keeps it, its vectors behave like sentence vectors, and a wrong choice is a
clear error. The distillation runs once per user cache (about a minute on 2 cores)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fastmem
from fastmem.errors import InvalidInput, ModelMismatch
from fastmem.models.model2vec import MODEL_ID, StaticMiniLM, static_dir

pytest.importorskip("model2vec")

TEXTS = [
    "Caroline adopted a rescue dog named Bailey last spring.",
    "The quarterly tax filing is due at the end of April.",
    "Melanie painted a sunrise over the lake for her kids.",
    "We drove to the coast and camped near the lighthouse.",
]


@pytest.fixture(scope="module")
def static():
    e = StaticMiniLM()
    e.encode(["distil once"])  # distils into the user's cache folder when it is not there
    return e


def test_vectors_are_normalised_sentence_vectors(static):
    v = static.encode(TEXTS + ["", "dog " * 3000])
    assert v.shape == (6, 256) and v.dtype == np.float32 and v.flags.c_contiguous
    assert np.allclose(np.linalg.norm(v[[0, 1, 2, 3, 5]], axis=1), 1.0, atol=1e-5)
    assert not v[4].any()  # empty text: a zero vector, not NaN
    q = static.encode(["Who has a pet dog?"])[0]
    assert int(np.argmax(v[:4] @ q)) == 0
    assert np.array_equal(static.encode(TEXTS), static.encode(TEXTS))  # deterministic
    # the distilled table's signs are fixed: each dimension's largest loading is positive
    from fastmem.models import model2vec as S

    emb = np.asarray(S._MODEL.embedding, np.float32)
    assert (emb[np.abs(emb).argmax(0), np.arange(emb.shape[1])] > 0).all()
    assert os.path.exists(os.path.join(static_dir(), "model.safetensors"))


def test_a_static_store_keeps_its_embedder_and_refuses_another(static, tmp_path):
    db = str(tmp_path / "s.db")
    with fastmem.Memory(db, embedder="static") as m:
        ids = m.remember_many(TEXTS)
        assert m.admin.embedder.model_id == MODEL_ID and m.admin.embedder.dim == 256
        assert m.recall("Who has a pet dog?", k=2).hits[0].id == ids[0]
    with fastmem.Memory(db) as m:  # not told: the store's vectors say static
        assert m.admin.embedder.model_id == MODEL_ID
        assert m.recall("camping by the sea", k=2).hits[0].id == ids[3]
        assert m.admin.check().ok
    with pytest.raises(ModelMismatch):
        fastmem.Memory(db, embedder="minilm")
    with pytest.raises(InvalidInput, match="embedder must be one of"):
        fastmem.Memory(str(tmp_path / "x.db"), embedder="glove")
    with fastmem.Memory(db, embedder="minilm", reembed=True) as m:  # a way back to MiniLM
        assert m.admin.embedder.model_id != MODEL_ID and m.recall("Who has a pet dog?", k=1).hits[0].id == ids[0]


def test_the_cli_creates_a_static_store_and_later_calls_use_it(static, tmp_path):
    db = str(tmp_path / "c.db")
    env = dict(os.environ)

    def fm(*args):
        return subprocess.run([sys.executable, "-m", "fastmem", *args, "--db", db], capture_output=True, text=True,
                              env=env, timeout=300)

    out = fm("remember", "--embedder", "static", *TEXTS)
    assert out.returncode == 0, out.stderr[-2000:]
    out = fm("recall", "Who has a pet dog?", "--json")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Bailey" in json.loads(out.stdout)["hits"][0]["text"]
    stats = json.loads(fm("stats", "--json").stdout)
    assert stats["model"] == MODEL_ID and stats["dimensions"] == 256
