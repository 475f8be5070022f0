"""Queries that arrive together are embedded together (fastmem.models.combine): each caller gets
its own text's vector, a lone query runs at once, a failure reaches every caller of its pass,
and recall from many threads gives the answers a serial run gives."""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import fastmem
from fastmem.models.combine import Combiner
from fastmem.models.embedder import MiniLM
from tests.shared import DATA


class _Slow:
    """A stand-in model (isolates the combiner from text): a text's vector is its length, a
    pass takes 20 ms, and the batches it was given are kept."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.batches: list[list[str]] = []
        self.fail_on = fail_on
        self.lock = threading.Lock()

    def __call__(self, texts):
        with self.lock:
            self.batches.append(list(texts))
        time.sleep(0.02)
        if self.fail_on in texts:
            raise RuntimeError("model failed")
        return np.array([[len(t), i] for i, t in enumerate(texts)], np.float32)


def test_a_lone_query_runs_at_once_in_a_pass_of_its_own():
    model = _Slow()
    c = Combiner(model)
    t = time.perf_counter()
    assert c("abc")[0] == 3
    assert time.perf_counter() - t < 0.2 and model.batches == [["abc"]]


def test_overlapping_queries_share_passes_and_each_gets_its_own_vector():
    model = _Slow()
    c = Combiner(model, max_batch=4)
    texts = ["x" * (i + 1) for i in range(24)]
    with ThreadPoolExecutor(12) as ex:
        got = list(ex.map(c, texts))
    assert [int(v[0]) for v in got] == [len(t) for t in texts]
    assert sorted(t for b in model.batches for t in b) == sorted(texts)  # each text embedded once
    assert len(model.batches) < len(texts) and max(len(b) for b in model.batches) <= 4
    assert c.texts == len(texts) and c.passes == len(model.batches)


def test_a_failed_pass_raises_in_every_caller_it_held_and_the_next_pass_runs():
    model = _Slow(fail_on="bad")
    c = Combiner(model)
    first = threading.Thread(target=c, args=("first",))
    first.start()
    time.sleep(0.005)  # the model is busy: the next two wait and share one pass
    errors, ok = [], []

    def call(t):
        try:
            ok.append(c(t))
        except RuntimeError as e:
            errors.append((t, str(e)))

    ts = [threading.Thread(target=call, args=(t,)) for t in ("bad", "good")]
    for x in ts:
        x.start()
    for x in ts + [first]:
        x.join(5)
    assert sorted(errors) == [("bad", "model failed"), ("good", "model failed")]
    assert c("later")[0] == 5  # the combiner is free again


def test_max_batch_is_checked():
    with pytest.raises(ValueError):
        Combiner(lambda t: t, max_batch=0)
    with pytest.raises(ValueError):
        MiniLM(combine="yes")


LOCOMO = DATA / "locomo-dev" / "30.json"


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo dev data not present")
def test_recall_from_eight_threads_answers_as_serial_recall_does(tmp_path):
    """Every question of a LoCoMo conversation recalled by 8 threads at once on one Memory
    (queries combined: a vector differs from the lone one in its last bits) and one at a time:
    the same hits in the same order, and the combiner did combine."""
    d = json.loads(LOCOMO.read_text())
    turns = [t for key, v in d.items() if re.fullmatch(r"session_\d+", key) for t in v]
    qs = [x["question"] for x in d["qa"] if x.get("category") in (1, 2, 3, 4)]
    e = MiniLM()
    with fastmem.Memory(tmp_path / "c.db", embedder=e) as m:
        m.remember_many([t["text"] for t in turns], speaker=[t["speaker"] for t in turns], progress=False)
        e._cache.clear()
        serial = [[h.id for h in m.recall(q, k=10, record=False, analogy=False).hits] for q in qs]
        e._cache.clear()
        e.combiner.passes = e.combiner.texts = 0
        with ThreadPoolExecutor(8) as ex:
            together = list(ex.map(lambda q: [h.id for h in m.recall(q, k=10, record=False, analogy=False).hits], qs))
    assert together == serial
    assert e.combiner.texts == len(qs) and e.combiner.passes < len(qs)
