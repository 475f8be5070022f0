"""No text can stop the store (regression: a passive whose agent swap met an understood "I"
made a write raise, and with ``wait=False`` kept every later memory pending for good).

A reader that fails on one text here is the real spaCy reader with one rule made to raise on a
marker word: the guard is what is tested, and it must not care what raised."""

import logging

import pytest

import fastmem
from fastmem.reader.extract import SpacyExtractor

ODD = ["Loved by millions is a song about a girl who leaves home.",
       "Written by my aunt is a novel about a farmer who sells his land.",
       "Raised by wolves is a show about two androids who raise children."]
PLAIN = ["Alice moved to Berlin in May.", "Bob owns a red car.", "Carol plays the cello in an orchestra.",
         "Dave keeps bees on his roof.", "Erin repaired the old bicycle and sold it to a student."]


class Poisoned(SpacyExtractor):
    """The default reader, except that reading a text with ``marker`` in it raises."""

    def __init__(self, marker: str = "zyzzyva") -> None:
        super().__init__()
        self.marker = marker

    def _check(self, doc):
        if self.marker in doc.text:
            raise RuntimeError("the reader could not read this text")

    def _doc_triples(self, doc):
        self._check(doc)
        return super()._doc_triples(doc)

    def _doc_events(self, doc):
        self._check(doc)
        return super()._doc_events(doc)


def _found(m, text):
    return any(h.text == text for h in m.recall(text, k=3, record=False).hits)


def test_unusual_passives_are_stored_read_and_found(mem):
    session = PLAIN[:2] + [ODD[0]] + PLAIN[2:4]
    ids = [mem.remember(ODD[1]), mem.remember(ODD[2])] + mem.remember_many(session, source="chat-1")
    assert mem.count() == 7
    rep = mem.admin.check()
    assert rep.ok and rep.failed == [] and rep.counts["failed"] == 0
    for text in ODD + PLAIN[:4]:
        assert _found(mem, text)
    # keyword alone and vector alone find the unusual one
    assert mem.recall("millions song girl leaves home", channels=["keyword"], record=False).hits[0].text == ODD[0]
    assert mem.recall("a tune adored by many about a young woman who goes away", channels=["vector"],
                      record=False).hits[0].text == ODD[0]
    # the other turns of the session were read as usual
    assert any(f.relation == "own" for f in mem.graph.facts(ids[3]))


def test_understood_i_after_a_passive_is_the_speaker():
    got = SpacyExtractor().extract_many(["Hired by Google last week!", ODD[0]])
    assert [(t.subject, t.relation, t.object) for t in got[0]] == [("Google", "hire", "I")]
    assert all(t.object != "I" and t.subject != "I" for t in got[1])  # an auxiliary after it: no fragment


def test_a_failing_read_loses_nothing_and_is_listed(db_path, caplog):
    poison = "The zyzzyva beetle ate the leaves of the old oak."
    with fastmem.Memory(db_path, extractor=Poisoned()) as m, caplog.at_level(logging.WARNING, "fastmem"):
        ids = m.remember_many(PLAIN[:2] + [poison] + PLAIN[2:], source="s")
        single = m.remember(poison + " Again.")
        assert len(ids) == 6 and m.count() == 7
        rep = m.admin.check()
        assert rep.ok  # a state, not damage
        assert [(f.memory_id, f.part, f.error) for f in rep.failed] == [(ids[2], "reading", "RuntimeError"),
                                                                        (single, "reading", "RuntimeError")]
        assert rep.failed[0].reader.startswith("fastmem ") and rep.counts["failed"] == 2
        assert m.graph.facts(ids[2]) == [] and m.graph.facts(ids[1])  # the others of the batch were read
        assert _found(m, poison) and _found(m, PLAIN[1])
        warned = [r for r in caplog.records if r.name == "fastmem" and r.levelno == logging.WARNING]
        assert len(warned) == 2 and all(r.exc_info is None for r in warned)  # one line a write, no traceback
        # the reader is fixed (a new fastmem): deriving again reads them and clears the record
        m.admin.extractor = SpacyExtractor()
        m.pending.derive()
        rep = m.admin.check()
        assert rep.failed == [] and rep.ok
        assert any(f.relation == "eat" for f in m.graph.facts(ids[2]))
        assert m.analogy.events(ids[2])


def test_one_poison_among_fifty_pending_blocks_nothing(db_path):
    texts = [f"{p} Note {i}." for i, p in enumerate(PLAIN * 10)]
    texts[17] = "A zyzzyva crossed the road at dawn."
    with fastmem.Memory(db_path, extractor=Poisoned(), derive_in_background=False) as m:
        ids = m.remember_many(texts, wait=False)
        assert m.pending.count() == 50
        m.pending.derive()
        assert m.pending.count() == 0
        later = m.remember_many(["Fiona adopted a grey cat.", "Gus sold his boat."], wait=False)
        m.pending.derive()
        assert m.pending.count() == 0
        assert [(f.memory_id, f.part) for f in m.admin.check().failed] == [(ids[17], "reading")]
        assert all(m.graph.facts(i) for i in later) and _found(m, texts[17]) and _found(m, texts[3])


class Unembeddable:
    """The default embedder, except that a text with ``marker`` in it cannot be embedded."""

    def __init__(self, inner, marker="zyzzyva"):
        self.inner, self.marker = inner, marker

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def encode(self, texts, *args, **kw):
        if any(self.marker in t for t in texts):
            raise RuntimeError("the embedder could not embed this text")
        return self.inner.encode(texts, *args, **kw)


def test_a_pending_memory_that_cannot_be_derived_at_all_leaves_pending(db_path):
    texts = [f"{p} Note {i}." for i, p in enumerate(PLAIN * 4)]
    texts[5] = "A zyzzyva crossed the road at dawn."
    with fastmem.Memory(db_path, derive_in_background=False) as m:
        e = m.admin.engine
        e.embedder = Unembeddable(e.embedder)
        ids = m.remember_many(texts, wait=False)
        m.pending.derive()
        assert m.pending.count() == 0
        rep = m.admin.check()
        assert rep.ok and [(f.memory_id, f.part) for f in rep.failed] == [(ids[5], "all")]
        assert m.recall("crossed the road at dawn", channels=["keyword"], record=False).hits[0].id == ids[5]
        assert all(_found(m, t) for i, t in enumerate(texts) if i != 5)
        e.embedder = e.embedder.inner  # derivable again: derived, listed no more, found by vector
        m.pending.derive()
        assert m.admin.check().failed == [] and m.admin.check().ok
        assert m.recall("an insect went across the street early", channels=["vector"], record=False).hits[0].id == ids[5]


def test_a_turn_the_reader_cannot_read_still_gets_its_hits(db_path):
    with fastmem.Memory(db_path, extractor=Poisoned()) as m:
        m.remember_many(PLAIN * 2)
        res = m.recall("Did the zyzzyva see Alice move to Berlin?", record=False)
        assert res.hits and res.hits[0].text == PLAIN[0]
        assert res.analogy is None
        many = m.recall_many(["zyzzyva and Bob's car", "Where does Alice live?"], record=False)
        assert many[0].hits[0].text == PLAIN[1] and many[1].hits[0].text == PLAIN[0]


@pytest.mark.parametrize("text", ODD)
def test_the_reader_reads_each_odd_sentence_without_failing(text):
    ex = SpacyExtractor()
    triples, events, _, _ = ex.analyse_many([text])[0]
    assert events and all(isinstance(t.subject, str) and isinstance(t.object, str) for t in triples)
