"""The default embedder is all-MiniLM-L6-v2 without torch: the model's own vectors, its id, and
a new process that never imports torch or spaCy to open, list or write to a store."""

import csv
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import fastmem
from fastmem.models.embedder import MiniLM
from fastmem.models.minilm import erf
from tests.shared import DATA


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


#: Real texts compared with sentence-transformers (2,000 with FASTMEM_STRESS=1: about 100 s here).
REAL_TEXTS = 2000 if os.environ.get("FASTMEM_STRESS") else 500


@pytest.mark.skipif(not (DATA / "locomo-dev").exists(), reason="development data not present")
def test_vectors_are_sentence_transformers_vectors_on_real_texts():
    texts = _real_texts(REAL_TEXTS)
    assert len(texts) == REAL_TEXTS
    texts += ["", "ok", "😀 " * 300, "word " * 400]  # empty, tiny, past the 256-piece window (cut alike)
    ref = MiniLM(backend="torch").model.encode(texts, normalize_embeddings=True, batch_size=64,
                                               convert_to_numpy=True, show_progress_bar=False)
    for backend in ("numpy", "onnx"):
        mine = MiniLM(backend=backend).model.encode(texts)
        cos = np.sum(mine * ref, axis=1)
        assert cos.min() >= 0.999, (backend, cos.min(), texts[int(np.argmin(cos))][:80])
    assert MiniLM().model_id == MiniLM(backend="torch").model_id  # no re-embedding for existing stores


def test_a_store_written_with_torch_opens_and_recalls_with_the_default(tmp_path):
    db = str(tmp_path / "m.db")
    with fastmem.Memory(db, embedder=MiniLM(backend="torch")) as m:
        ids = m.remember_many(["Alice moved to Berlin in May.", "The museum closes at six."])
    with fastmem.Memory(db) as m:  # same model id: no ModelMismatch, no re-embed
        assert m.recall("which city did Alice move to", k=1, channels=("vector",)).hits[0].id == ids[0]


def test_bad_backend_is_refused():
    with pytest.raises(ValueError):
        MiniLM(backend="tensorflow")
    with pytest.raises(ValueError):
        MiniLM(backend="torch", quantized=True)  # int8 runs on ONNX Runtime only


def test_auto_starts_in_numpy_and_moves_to_onnx_runtime_for_many_texts(tmp_path):
    """A shell command embeds its query in NumPy (cheaper to load) and never imports ONNX
    Runtime; a process that embeds a batch, or more texts over time, moves to ONNX Runtime
    (faster per text), whose graph is built once into the user's cache and reused; every
    vector is the same either way."""
    code = """
import json, os, sys
import numpy as np
from fastmem.models.embedder import MiniLM, ONNX_FROM
e = MiniLM()
one = e.encode(["where does Alice live"])
first = "onnxruntime" in sys.modules
many = e.encode([f"Note {i}: the courier left parcel {i} with Nadia." for i in range(ONNX_FROM)] + ["where does Alice live"])
files = sorted(os.listdir(os.path.join(os.environ["FASTMEM_CACHE_DIR"], "onnx")))
print(json.dumps([first, "onnxruntime" in sys.modules, float(one[0] @ many[-1]), files]))
"""
    env = {**os.environ, "FASTMEM_CACHE_DIR": str(tmp_path / "cache")}
    runs = []
    for _ in range(2):  # the second process finds the graph the first one built
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    for first, later, cos, files in runs:
        assert first is False and later is True and cos >= 0.9999
        assert len(files) == 1 and files[0].endswith("-fp32.onnx")  # no temporary file left behind
    assert runs[0][3] == runs[1][3]


def test_int8_is_opt_in_and_recorded_in_the_store(tmp_path):
    db = str(tmp_path / "q.db")
    texts = ["Alice moved to Berlin in May.", "The museum closes at six.", "Bob plays the cello."]
    with fastmem.Memory(db, embedder="minilm-int8", extractor=None) as m:
        assert m.admin.embedder.model_id.endswith(":int8")
        ids = m.remember_many(texts)
    with fastmem.Memory(db, extractor=None) as m:  # found in the store: no argument needed
        assert m.admin.embedder.model_id.endswith(":int8")
        assert m.recall("which city did Alice move to", k=1, channels=("vector",)).hits[0].id == ids[0]
    with pytest.raises(fastmem.ModelMismatch):
        fastmem.Memory(db, embedder=MiniLM(), extractor=None)
    full = MiniLM(backend="onnx").encode(texts)
    cos = np.sum(MiniLM(quantized=True).encode(texts) * full, axis=1)
    assert 0.95 <= cos.min() < 0.9999  # close to the model's vectors, and not them


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
    import fastmem.models.embedder as E

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
                         "The bakery hired Omar to run the morning shift.", "Lena sold her kayak to a neighbour.",
                         "The council closed the bridge for repairs.", "Priya taught her son to ride a bike.",
                         "Kenji repaired the roof before the storm.", "The museum bought a painting in Lyon."])
    code = f"""
import json, sys, fastmem
from fastmem.models import parser
with fastmem.Memory({db!r}, progress=False) as m:
    if sys.argv[1] == "first":
        parser.load_spacy()
    r = m.recall("where does Alice live now that Omar runs the bakery", k=3, record=False)
print(json.dumps([[h.id for h in r.hits], [round(h.score, 6) for h in r.hits],
                  None if r.analogy is None else r.analogy.id, "torch" in sys.modules,
                  parser._NLP_THREAD is not None]))
"""
    got = {}
    for how in ("first", "beside"):
        out = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        got[how] = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["beside"][:3] == got["first"][:3] and got["beside"][0]
    assert got["beside"][3] is False and got["first"][3] is False
    assert got["beside"][4] is True and got["first"][4] is False


@pytest.mark.parametrize("work", ["embed", "tokenize", "write", "load", "parse"])
def test_a_process_exits_cleanly_while_a_daemon_thread_works(tmp_path, work):
    """Regression: a host's background thread inside ONNX Runtime, hnswlib or the tokenizer
    (native code that runs without the GIL) when the interpreter exited aborted the process
    ("terminate called without an active exception" / "FATAL: exception not rethrown", exit
    code 134) after its work was done; measured 3 to 4 runs in 6 before fastmem.models.exitgate.
    ``load``: the model's load (the tokenizer's Rust reader), which aborted one-shot ``hermes
    chat -q`` runs whose warm-up thread was still loading MiniLM at exit; ``parse``: spaCy."""
    code = f"""
import sys, threading, time
import fastmem
from fastmem.models.embedder import MiniLM
from fastmem.models.minilm import Bert, model_dir
texts = [f"Note {{i}}: the courier left parcel {{i}} with Nadia in Lisbon after the storm." for i in range(300)]
if sys.argv[2] == "embed":
    e = MiniLM(backend="onnx")
    e.encode(["warm up"])
    step = lambda: e.encode(texts)
elif sys.argv[2] == "tokenize":
    b = Bert(model_dir())
    step = lambda: b.token_ids([t * 3 for t in texts] * 6)
elif sys.argv[2] == "load":
    step = lambda: Bert(model_dir())
elif sys.argv[2] == "parse":
    from fastmem.reader.extract import SpacyExtractor
    x = SpacyExtractor()
    x.events_many(["warm up"])
    step = lambda: x.parse_many(texts[:50])
else:
    m = fastmem.Memory({str(tmp_path / "w.db")!r}, extractor=None, progress=False)
    m.remember_many(texts[:40])
    step = lambda: m.remember_many(texts)
def work():
    while True:
        step()
threading.Thread(target=work, daemon=True).start()
time.sleep(float(sys.argv[1]))
print("bye")
"""
    for pause in ("0.1", "0.3", "0.5", "0.2", "0.4", "0.6"):
        out = subprocess.run([sys.executable, "-c", code, pause, work], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0 and out.stdout.strip() == "bye", (pause, out.returncode, out.stderr[-500:])
