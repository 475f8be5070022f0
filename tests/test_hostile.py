"""Hostile input: arbitrary unicode, control characters, FTS operators, SQL fragments, very long
strings, NaN and infinities, wrong types and shapes. Only documented exceptions; a rejected
call leaves the store unchanged (every table, compared row by row)."""

import json
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import fastmem
from fastmem import errors
from fastmem.hermes import tools as T

DOCUMENTED = tuple(v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, Exception))

NASTY = ['"', "' OR 1=1; DROP TABLE memories; --", "NEAR(a b", "a AND OR NOT", "*", "^x", "col:val", "((",
         "\x00\x01\x02", "\ud800 lone surrogate", "e\u0301" * 50, "\u202e reversed", "🦜" * 100, "x" * 40_000,
         "", "   \n\t", "SELECT * FROM sqlite_master", "memories_fts MATCH 'x'", "\u0000", "%", "_", "\\"]
texts = st.one_of(st.sampled_from(NASTY), st.text(max_size=300), st.text(alphabet=st.characters(), min_size=1, max_size=40))
others = st.one_of(st.none(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.binary(max_size=20),
                   st.lists(st.text(max_size=5), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                   st.just(np.zeros(3)), st.just(float("nan")), st.just(float("inf")))
anything = st.one_of(texts, others)
SETTINGS = settings(max_examples=400 if os.environ.get("FASTMEM_STRESS") else 60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("hostile") / "h.db")
    with fastmem.Memory(path) as m:
        m.remember_many([f"The courier left parcel {i} with Nadia at the Lisbon depot." for i in range(30)])
        m.remember("Acme Corporation owns Widget Inc, a small subsidiary in Ohio.")
        yield m


def snapshot(m):
    tables = [r[0] for r in m.internals.db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    return {t: m.internals.db.execute(f'SELECT * FROM "{t}"').fetchall() for t in tables}


def attempt(m, fn):
    """Run ``fn``; a documented exception must leave every table as it was."""
    before = snapshot(m)
    try:
        fn()
    except DOCUMENTED:
        assert snapshot(m) == before, "a rejected call changed the store"
        return False
    return True


@SETTINGS
@given(text=anything)
def test_remember_and_remember_many(store, text):
    attempt(store, lambda: store.remember(text))
    attempt(store, lambda: store.remember_many(["a fine memory about parcels", text]))


@SETTINGS
@given(text=anything, k=st.one_of(st.integers(-5, 20), st.sampled_from([0, 10**12, True, 2.5, "3", None, float("inf")])),
       scope=st.one_of(st.none(), texts, others))
def test_recall_and_analogies(store, text, k, scope):
    attempt(store, lambda: store.recall(text, k=k, scope=scope, record=False))
    attempt(store, lambda: store.recall("parcel", k=3, scope=scope, channels=(text,) if isinstance(text, str) else text))
    attempt(store, lambda: store.analogies(text, k=k if isinstance(k, int) and 0 < k < 50 else 3, scope=scope))
    # what must be refused is refused (a silently accepted NaN gate or a float k would pass unseen)
    bad_k = isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 10_000
    assert attempt(store, lambda: store.recall("parcel", k=k, record=False)) is not bad_k, k
    gate = text if not isinstance(text, str) else float("nan")
    bad_gate = gate is not None and (isinstance(gate, bool) or not isinstance(gate, (int, float))
                                     or not math.isfinite(gate))
    assert attempt(store, lambda: store.recall("parcel", z_min=gate, record=False)) is not bad_gate, gate
    assert attempt(store, lambda: store.recall("parcel", floor=text, record=False)) is (text is False or text is True)


@SETTINGS
@given(name=anything, other=anything, depth=st.one_of(st.integers(-2, 4), others))
@example(name=2**63, other=0, depth=1)  # an entity id past SQLite's integers
def test_graph_calls(store, name, other, depth):
    attempt(store, lambda: store.entity(name))
    attempt(store, lambda: store.neighbours(name, depth=depth))
    attempt(store, lambda: store.relation_path(name, other))
    attempt(store, lambda: store.entity_facts(name, limit=depth))


@SETTINGS
@given(cid=anything, accept=anything)
@example(cid=2**63, accept=True)
def test_category_and_alias_reviews(store, cid, accept):
    for verb in (store.approve_category, store.reject_category, store.revert_category):
        attempt(store, lambda: verb(cid))
    attempt(store, lambda: store.review_alias(cid, accept=accept))


@SETTINGS
@given(mid=anything, meta=others, triples=st.one_of(others, st.lists(st.lists(anything, max_size=6), max_size=3)),
       at=st.one_of(others, texts), speaker=anything)
def test_ids_meta_triples_times_and_speakers(store, mid, meta, triples, at, speaker):
    attempt(store, lambda: store.forget(mid))
    attempt(store, lambda: store.feedback(mid, engaged=True))
    attempt(store, lambda: store.get(mid))
    attempt(store, lambda: store.update(mid, text="new text"))
    attempt(store, lambda: store.remember("Ann owns a boat.", triples=triples))
    attempt(store, lambda: store.remember("Ann owns a boat.", meta=meta))
    attempt(store, lambda: store.remember("Ann owns a boat.", at=at))
    attempt(store, lambda: store.remember_many(["Ann owns a boat.", "Bo owns a car."], speaker=speaker))
    attempt(store, lambda: store.update(1, speaker=speaker))
    attempt(store, lambda: store.recall(f"what did {speaker} say?" if isinstance(speaker, str) else "who said it?",
                                        k=3, record=False))


@SETTINGS
@given(name=st.one_of(st.sampled_from(["fact_store", "fact_feedback", "fastmem_recall", "fastmem_analogies",
                                       "fastmem_graph", "fastmem_chunks", "fastmem_categories", "nope"]), anything),
       args=st.one_of(others, texts, st.builds(
           lambda action, rest: {**rest, **({"action": action} if action else {})},
           st.one_of(st.none(), st.sampled_from(sorted({a for s in T.SCHEMAS for a in (s["parameters"]["properties"]
                                                         .get("action", {}).get("enum") or [])}))),
           st.dictionaries(
               st.sampled_from(["action", "content", "query", "entity", "entities", "fact_id", "limit", "min_trust",
                                "trust_delta", "category", "tags", "k", "text", "name", "other", "depth", "chunk_id",
                                "category_id", "status"]),
               anything, max_size=5))))
def test_hermes_tool_calls_always_answer_json(store, name, args):
    """Each tool's handler either answers or raises a documented error (``call`` would turn
    any exception into JSON, so the handlers are tested themselves), and ``call`` answers JSON
    that leaves the store as it was when it reports an error."""
    ctx = T.Context("hostile", writable=True, session="s")
    if isinstance(name, str) and name in T.HANDLERS and isinstance(args, dict):
        try:
            T.HANDLERS[name](store, ctx, args)
        except DOCUMENTED:
            pass
    before = snapshot(store)
    out = T.call(store, ctx, name, args)
    got = json.loads(out)
    assert isinstance(got, dict)
    if "error" in got:  # only the usage ledger may have moved (a recall made before the error)
        after = snapshot(store)
        assert {t: v for t, v in after.items() if not t.startswith("usage")} == \
            {t: v for t, v in before.items() if not t.startswith("usage")}


def test_wrong_dimension_vectors_are_rejected(tmp_path):
    class Bad(fastmem.models.embedder.MiniLM):
        def encode(self, texts):
            return np.full((len(texts), 3), math.nan, np.float32)

    with pytest.raises(DOCUMENTED):
        with fastmem.Memory(str(tmp_path / "d.db"), embedder=Bad()) as m:
            m.remember("a memory")
