"""The reader's parse (spaCy ``en_core_web_sm``) of real text: one chat turn as recall parses it
for the analogy slot (:meth:`fastmem.reader.extract.SpacyExtractor.turns_many`), and a batch of
256 texts as a write reads them (:meth:`~fastmem.reader.extract.SpacyExtractor.analyse_many`:
facts, events, standing statement and plot), on LoCoMo dev turns (chat) and ProPara-Logy silver
paragraphs (processes), ../shared/data; skipped without it. ``extra_info["entity_share"]``: the
share of the texts that get the entity recogniser (:func:`fastmem.reader.words.entity_cue`).

    pytest bench/test_bench_parse.py --benchmark-only --benchmark-columns=median,iqr,rounds
"""

import csv
import itertools
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from conftest import DATA  # noqa: E402
from locomo import conversation_files, turns  # noqa: E402

from fastmem.reader.extract import SpacyExtractor  # noqa: E402

KINDS = ["chat", "process"]


def _texts(kind):
    if kind == "chat":
        return [t.split(": ", 1)[-1]  # what was said, without the transcript's "Name:" label
                for f in conversation_files() for _, t, *_ in turns(json.load(open(f, encoding="utf-8")))]
    path = os.path.join(DATA, "proparalogy-silver", "silver_set_analogies.csv")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [p for r in csv.DictReader(fh) for p in (r["source_paragraph"], r["target_paragraph"])]


@pytest.fixture(scope="module")
def reader():
    ex = SpacyExtractor()
    ex.analyse_many(["Warm up: Maya took the train to Lisbon in May.", "The pump moves water."])
    return ex


@pytest.fixture(scope="module", params=KINDS)
def texts(request):
    got = _texts(request.param)
    if not got:
        pytest.skip(f"{request.param} texts not found under {DATA} (set FASTMEM_DATA)")
    return request.param, got


def _entity_share(reader, texts):
    try:
        from fastmem.reader.words import entity_cue
    except ImportError:  # a commit before the cue: every text got the recogniser
        return 1.0
    nlp = reader.nlp
    return round(sum(entity_cue(d) for d in nlp.pipe(texts, disable=["ner"])) / len(texts), 3)


def test_turn_parse(benchmark, reader, texts):
    kind, got = texts
    benchmark.group = f"parse: one {kind} turn"
    it = itertools.cycle(got[:300])
    benchmark.pedantic(lambda: reader.turns_many([next(it)]), rounds=300, warmup_rounds=5)
    benchmark.extra_info["entity_share"] = _entity_share(reader, got[:300])


def test_write_parse_256(benchmark, reader, texts):
    kind, got = texts
    benchmark.group = f"parse: 256 {kind} texts as a write reads them"
    batches = itertools.cycle([got[i:i + 256] for i in range(0, len(got) - 255, 256)])
    benchmark.pedantic(lambda: reader.analyse_many(next(batches)), rounds=4, warmup_rounds=1)
    benchmark.extra_info["per_second"] = round(256 / benchmark.stats.stats.median, 1)
