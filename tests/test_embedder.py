"""The default embedder is all-MiniLM-L6-v2 without torch: the model's own vectors, its id, and
a new process that never imports torch or spaCy to open, list or write to a store."""

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastmem
from fastmem.embedder import MiniLM
from fastmem.minilm import erf

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _real_texts(n):
    """Real conversation turns (LoCoMo dev) and paragraphs (ProPara-Logy silver): short and
    long texts, numbers, names, emoji."""
    out = []
    for f in sorted((DATA / "locomo-dev").glob("*.json")):
        d = json.loads(f.read_text())
        out += [t["text"] for k, v in d.items() if re.fullmatch(r"session_\d+", k) for t in v]
    silver = DATA / "proparalogy-silver" / "silver_set_analogies_w_challenging_distractors_w_random.csv"
    if silver.exists():
        with open(silver, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                out += [row[k] for k in ("source_paragraph", "target_paragraph", "distractor_target_paragraph",
                                         "random_target_paragraph")]
    return out[:n]


def test_erf_matches_the_exact_function():
    import math

    x = np.linspace(-6, 6, 10_001).astype(np.float32)
    # the approximation is within 1.5e-7; float32 arithmetic adds a few units in the last place
    np.testing.assert_allclose(erf(x), [math.erf(float(v)) for v in x], atol=1e-6)


@pytest.mark.skipif(not (DATA / "locomo-dev").exists(), reason="development data not present")
def test_vectors_are_sentence_transformers_vectors_on_2000_real_texts():
    texts = _real_texts(2000)
    assert len(texts) == 2000
    texts += ["", "ok", "😀 " * 300, "word " * 400]  # empty, tiny, past the 256-piece window (cut alike)
    mine = MiniLM(backend="numpy").model.encode(texts)
    ref = MiniLM(backend="torch").model.encode(texts, normalize_embeddings=True, batch_size=64,
                                               convert_to_numpy=True, show_progress_bar=False)
    cos = np.sum(mine * ref, axis=1)
    assert cos.min() >= 0.999, (cos.min(), texts[int(np.argmin(cos))][:80])
    assert MiniLM().model_id == MiniLM(backend="torch").model_id  # no re-embedding for existing stores


def test_a_store_written_with_torch_opens_and_recalls_with_the_default(tmp_path):
    db = str(tmp_path / "m.db")
    with fastmem.Memory(db, embedder=MiniLM(backend="torch")) as m:
        ids = m.remember_many(["Alice moved to Berlin in May.", "The museum closes at six."])
    with fastmem.Memory(db) as m:  # same model id: no ModelMismatch, no re-embed
        assert m.recall("which city did Alice move to", k=1, channels=("vector",)).hits[0].id == ids[0]


def test_bad_backend_is_refused():
    with pytest.raises(ValueError):
        MiniLM(backend="onnx")


def test_a_new_process_writes_and_recalls_without_torch_or_spacy_until_it_parses(tmp_path):
    code = f"""
import sys, fastmem
assert not {{'torch', 'spacy', 'sentence_transformers', 'numba'}} & set(sys.modules), 'import'
with fastmem.Memory({str(tmp_path / 'm.db')!r}, extractor=None) as m:
    m.remember("Alice moved to Berlin in May.")
    assert m.recall("where is Alice", analogy=False).hits
    assert m.count() == 1
print(sorted({{'torch', 'spacy', 'sentence_transformers'}} & set(sys.modules)))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_auto_embeds_small_batches_without_torch_and_large_ones_alike(monkeypatch):
    import fastmem.embedder as E

    texts = [f"Note {i}: the courier left a parcel with Nadia." for i in range(E.TORCH_FROM + 2)]
    small = MiniLM().encode(texts[:3])
    large = MiniLM().encode(texts)  # torch from TORCH_FROM texts on
    assert small.shape == (3, 384) and large.shape == (len(texts), 384)
    assert np.min(np.sum(small * large[:3], axis=1)) >= 0.999


def test_a_first_large_batch_loads_the_parser_and_torch_side_by_side(tmp_path):
    """Regression: spaCy loads with torch hidden from thinc; a first batch of 128+ texts loaded
    torch for the embedder on one thread while spaCy loaded on the parse thread, and
    transformers, meeting the hidden module, failed to import."""
    code = f"""
import fastmem
texts = [f"Note {{i}}: the courier left parcel {{i}} with Nadia in Lisbon." for i in range(300)]
with fastmem.Memory({str(tmp_path / 'm.db')!r}) as m:
    m.remember_many(texts)
    assert m.recall("parcel 7 with Nadia", k=1).hits
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]


def test_a_new_process_loads_the_parser_beside_the_first_recalls_embedding(tmp_path):
    """A new process's first recall starts spaCy's load on a thread before it embeds the turn
    (the two overlap); what it returns is what a process with the parser loaded first returns,
    and torch, hidden from spaCy meanwhile, is never imported."""
    db = str(tmp_path / "m.db")
    with fastmem.Memory(db, progress=False) as m:
        m.remember_many(["Alice moved to Berlin in May.", "Acme Corporation owns Widget Inc.",
                         "Bob plays the cello on Sundays.", "Nadia repaired the bike after the race.",
                         "The bakery hired Omar to run the morning shift."])
    code = f"""
import json, sys, fastmem
from fastmem import extract
with fastmem.Memory({db!r}, progress=False) as m:
    if sys.argv[1] == "first":
        extract.load_spacy()
    r = m.recall("where does Alice live now that Omar runs the bakery", k=3, record=False)
print(json.dumps([[h.id for h in r.hits], [round(h.score, 6) for h in r.hits],
                  None if r.analogy is None else r.analogy.id, "torch" in sys.modules,
                  extract._NLP_THREAD is not None]))
"""
    got = {}
    for how in ("first", "beside"):
        out = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        got[how] = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["beside"][:3] == got["first"][:3] and got["beside"][0]
    assert got["beside"][3] is False and got["first"][3] is False
    assert got["beside"][4] is True and got["first"][4] is False
