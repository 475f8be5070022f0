"""Every real text we have goes through the reader without an exception: the development data
(``../shared/data``: LoCoMo turns and questions, ProPara-Logy paragraphs) and the repository's own
test data (stories, labelled sentences, the chats' user messages and questions). The chats'
assistant messages (2.3 million characters, written by a generator, not by people) are read
too with ``FASTMEM_STRESS=1``.

Each text is parsed once and read by every rule that reads a parse: its facts, its events, its
names (what a turn gives the analogy slot) and its standing statement."""

import csv
import glob
import json
import os
import re

import pytest

from fastmem.reader.extract import SpacyExtractor
from fastmem.reader.standing import detect_docs
from fastmem.reader.who import Turn, resolve

from ..shared import DATA, TESTDATA

STRESS = os.environ.get("FASTMEM_STRESS") == "1"


def _shared_texts() -> list[str]:
    out = []
    for f in sorted(glob.glob(str(DATA / "locomo-dev" / "*.json"))):
        d = json.loads(open(f, encoding="utf-8").read())
        for k, v in d.items():
            if re.fullmatch(r"session_\d+", k) and isinstance(v, list):
                out += [t.get("text") or "" for t in v] + [t.get("blip_caption") or "" for t in v]
        out += [q["question"] for q in d.get("qa", [])]
    for f in sorted(glob.glob(str(DATA / "proparalogy-silver" / "*.csv"))):
        with open(f, encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                out += [r.get(c) or "" for c in ("source_paragraph", "target_paragraph", "distractor_target_paragraph",
                                                  "random_target_paragraph")]
    return out


def _own_texts() -> list[str]:
    out = []
    for f in sorted(TESTDATA.glob("*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        for chat in d.get("chats", []):
            out += [m["text"] for m in chat["messages"] if STRESS or m.get("role") != "assistant"]
            out += [q["question"] if isinstance(q, dict) else q for q in chat.get("questions", [])]
        for s in d.get("sets", []):
            out += [v for k, v in s.items() if k in ("base", "literal", "analogy", "false", "appearance")]
        for it in d.get("items", []):
            out += [v for k, v in it.items() if isinstance(v, str) and k not in ("id", "split", "speaker", "listener")]
            out += list((it.get("choices") or {}).values())
    for f in sorted(TESTDATA.glob("*.tsv")):
        out += [line.split("\t")[-1] for line in f.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]
    return out


def _sweep(texts: list[str]) -> int:
    reader = SpacyExtractor()
    texts = list(dict.fromkeys(t for t in texts if t.strip()))
    turn = Turn("Maya", "Tom", (("Lisbon", "place", False),), frozenset({"Maya", "Tom"}))
    # one parse per text; every rule that reads a parse reads it (an exception fails the test)
    for doc in reader._docs(texts):
        triples = reader._doc_triples(doc)
        reader._doc_events(doc)
        reader._doc_names(doc)
        detect_docs([doc])
        resolve(triples, turn)
    return len(texts)


def test_every_development_text_is_read():
    if not (DATA / "locomo-dev").is_dir():
        pytest.skip(f"the development data is not at {DATA} (set FASTMEM_DATA)")
    assert _sweep(_shared_texts()) > 2000


def test_every_text_of_the_repository_is_read():
    assert _sweep(_own_texts()) > 1000
