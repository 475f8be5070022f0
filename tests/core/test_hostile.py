"""Hostile input: arbitrary unicode, control characters, FTS operators, SQL fragments, very long
strings, NaN and infinities, wrong types and shapes. Only documented exceptions; a rejected
call leaves the store unchanged (every table, compared row by row)."""

import json
import math
import os
from datetime import datetime, timezone

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import fastmem
from fastmem import errors
from fastmem.hermes import tools as T
from fastmem.util.text import MAX_TEXT_CHARS

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
    tables = [r[0] for r in m.admin.engine.db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    return {t: m.admin.engine.db.execute(f'SELECT * FROM "{t}"').fetchall() for t in tables}


def attempt(m, fn):
    """Run ``fn``: its result, or the documented exception it raised, which must leave every
    table as it was (anything else fails the test)."""
    before = snapshot(m)
    try:
        return fn()
    except DOCUMENTED as exc:
        assert snapshot(m) == before, "a rejected call changed the store"
        return exc


# -- what each argument must be (the documented rules, written independently of the checks) --
def _clean(x) -> bool:
    return isinstance(x, str) and "\x00" not in x and not any("\ud800" <= c <= "\udfff" for c in x)


def good_text(x) -> bool:
    return _clean(x) and bool(x.strip()) and len(x) <= MAX_TEXT_CHARS


def good_query(x) -> bool:
    return isinstance(x, str) and bool(x.replace("\x00", " ").strip()) and len(x) <= MAX_TEXT_CHARS and \
        not any("\ud800" <= c <= "\udfff" for c in x)


def good_scope(x) -> bool:
    return x is None or _clean(x)


def an_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def good_speaker(x) -> bool:
    return x is None or (_clean(x) and bool(x.strip()) and len(x.strip()) <= 200)


def good_at(x) -> bool:
    if x is None:
        return True
    if not isinstance(x, str):
        return False
    try:
        t = datetime.fromisoformat(x.strip()[:-1] + "+00:00" if x.strip().endswith("Z") else x.strip())
    except ValueError:
        return False
    return math.isfinite((t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp())


def good_triples(ts) -> bool:
    if ts is None:
        return True
    if isinstance(ts, (str, bytes)) or not isinstance(ts, (list, tuple)):
        return False
    for t in ts:
        if isinstance(t, (str, bytes)) or not isinstance(t, (list, tuple)) or len(t) not in (3, 5):
            return False
        if not all(_clean(x) and x.strip() for x in t[:3]) or not all(x is None or _clean(x) for x in t[3:5]):
            return False
    return True


def refused(out) -> bool:
    return isinstance(out, errors.InvalidInput)


def found_or_not(out) -> bool:
    """A valid call about something that may not exist: it answers, or says NotFound."""
    return not isinstance(out, BaseException) or isinstance(out, errors.NotFound)


@SETTINGS
@given(text=anything)
def test_remember_and_remember_many(store, text):
    one = attempt(store, lambda: store.remember(text))
    many = attempt(store, lambda: store.remember_many(["a fine memory about parcels", text]))
    if good_text(text):
        assert store.get(one)["text"] == text and [store.get(i)["text"] for i in many][1] == text
    else:
        assert refused(one) and refused(many), (text, one, many)


@SETTINGS
@given(text=anything, k=st.one_of(st.integers(-5, 20), st.sampled_from([0, 10**12, True, 2.5, "3", None, float("inf")])),
       scope=st.one_of(st.none(), texts, others))
def test_recall_and_analogies(store, text, k, scope):
    good_k = an_int(k) and 1 <= k <= 10_000
    r = attempt(store, lambda: store.recall(text, k=k, scope=scope, record=False))
    if good_query(text) and good_k and good_scope(scope):
        assert len(r.hits) <= k and all(h.scope == scope for h in r.hits if scope is not None)
    else:
        assert refused(r), (text, k, scope, r)
    chosen = (text,) if isinstance(text, str) else text
    r = attempt(store, lambda: store.recall("parcel", k=3, scope=scope, channels=chosen))
    known = isinstance(chosen, (list, tuple, set, frozenset)) and chosen and all(
        isinstance(c, str) and c in fastmem.recall_channels() for c in chosen)
    assert refused(r) is not (bool(known) and good_scope(scope)), (chosen, scope, r)
    a = attempt(store, lambda: store.analogy.explore(text, k=k if an_int(k) and 0 < k < 50 else 3, scope=scope))
    assert refused(a) is not (good_query(text) and good_scope(scope)), (text, scope, a)
    # what must be refused is refused (a silently accepted NaN gate or a float k would pass unseen)
    assert refused(attempt(store, lambda: store.recall("parcel", k=k, record=False))) is not good_k, k
    gate = text if not isinstance(text, str) else float("nan")
    bad_gate = gate is not None and (isinstance(gate, bool) or not isinstance(gate, (int, float))
                                     or not math.isfinite(gate))
    assert refused(attempt(store, lambda: store.recall("parcel", z_min=gate, record=False))) is bad_gate, gate
    assert refused(attempt(store, lambda: store.recall("parcel", floor=text, record=False))) is not (
        text is False or text is True)


@SETTINGS
@given(name=anything, other=anything, depth=st.one_of(st.integers(-2, 4), others))
@example(name=2**63, other=0, depth=1)  # an entity id past SQLite's integers
def test_graph_calls(store, name, other, depth):
    node = lambda x: an_int(x) or good_text(x)  # noqa: E731 - an entity id or a name
    got = attempt(store, lambda: store.graph.entity(name))
    assert isinstance(got, list) if good_text(name) else refused(got), (name, got)
    got = attempt(store, lambda: store.graph.neighbours(name, depth=depth))
    assert found_or_not(got) if node(name) and an_int(depth) and 1 <= depth <= 2 else refused(got), (name, depth, got)
    got = attempt(store, lambda: store.graph.path(name, other))
    assert found_or_not(got) if node(name) and node(other) else refused(got), (name, other, got)
    got = attempt(store, lambda: store.graph.facts_about(name, limit=depth))
    assert found_or_not(got) if node(name) and an_int(depth) and 1 <= depth <= 1_000_000 else refused(got), (name, depth, got)


@SETTINGS
@given(cid=anything, accept=anything)
@example(cid=2**63, accept=True)
def test_category_and_alias_reviews(store, cid, accept):
    """The store holds no category and no alias candidate: every review of an id is NotFound,
    of anything else InvalidInput."""
    for verb in (store.categories.approve, store.categories.reject, store.categories.revert):
        got = attempt(store, lambda: verb(cid))
        assert isinstance(got, errors.NotFound) if an_int(cid) else refused(got), (cid, got)
    got = attempt(store, lambda: store.graph.review_alias(cid, accept=accept))
    if not an_int(cid):
        assert refused(got)
    elif not 0 <= cid < 2**63:
        assert isinstance(got, errors.NotFound)
    else:
        assert isinstance(got, errors.NotFound) if isinstance(accept, bool) else refused(got), (cid, accept, got)


@SETTINGS
@given(mid=anything, meta=others, triples=st.one_of(others, st.lists(st.lists(anything, max_size=6), max_size=3)),
       at=st.one_of(others, texts), speaker=anything)
def test_ids_meta_triples_times_and_speakers(store, mid, meta, triples, at, speaker):
    exists = an_int(mid) and int(mid) in {i for i, _ in store.rows.texts()}
    for call in (lambda: store.feedback(mid, engaged=True), lambda: store.get(mid),
                 lambda: store.update(mid, text="new text")):
        got = attempt(store, call)
        if not an_int(mid):
            assert refused(got), (mid, got)
        else:
            assert not isinstance(got, BaseException) if exists else isinstance(got, errors.NotFound), (mid, got)
    got = attempt(store, lambda: store.forget(mid))
    assert (got is None if exists else isinstance(got, errors.NotFound)) if an_int(mid) else refused(got)
    got = attempt(store, lambda: store.remember("Ann owns a boat.", triples=triples))
    assert an_int(got) if good_triples(triples) else refused(got), (triples, got)
    got = attempt(store, lambda: store.remember("Ann owns a boat.", meta=meta))
    assert store.get(got)["meta"] == dict(meta or {}) if meta is None or isinstance(meta, dict) else refused(got)
    got = attempt(store, lambda: store.remember("Ann owns a boat.", at=at))
    assert an_int(got) if good_at(at) else refused(got), (at, got)
    got = attempt(store, lambda: store.remember_many(["Ann owns a boat.", "Bo owns a car."], speaker=speaker))
    pair = isinstance(speaker, (list, tuple)) and len(speaker) == 2 and all(good_speaker(s) for s in speaker)
    if pair or (not isinstance(speaker, (list, tuple)) and good_speaker(speaker)):
        want = [s.strip() if isinstance(s, str) else s for s in (speaker if pair else [speaker] * 2)]
        assert [store.get(i)["speaker"] for i in got] == want
    else:
        assert refused(got), (speaker, got)
    one = store.remember("Ann owns a kayak.")
    got = attempt(store, lambda: store.update(one, speaker=speaker))
    assert (store.get(one)["speaker"] == (speaker.strip() if speaker else None)) if good_speaker(speaker) else refused(got)
    r = attempt(store, lambda: store.recall(f"what did {speaker} say?" if isinstance(speaker, str) else "who said it?",
                                            k=3, record=False))
    assert not isinstance(r, BaseException) or (isinstance(speaker, str) and not good_query(f"what did {speaker} say?"))


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
