"""The recall pipeline: recall among many, scopes, why each hit was found, hostile query syntax."""


import pytest

import fastmem
from fastmem.errors import InvalidInput
from tests.shared import noise_texts

PLANTED = {
    "The wifi password at the Lisbon office is blue-heron-42.": "what is the wifi password in Lisbon",
    "Dr. Okafor prescribed amoxicillin for Maya's ear infection.": "which antibiotic did Maya get",
    "Our team standup moved to 9:45 on Tuesdays.": "when is the standup meeting",
    "Grandma's apple pie recipe needs two cups of brown sugar.": "how much sugar goes in the pie",
}


@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("big") / "big.db")
    with fastmem.Memory(path) as m:
        m.remember_many(noise_texts(1200), scope="u1")
        ids = {t: m.remember(t, scope="u1") for t in PLANTED}
        m.remember("The wifi password at the Porto office is red-fox-7.", scope="u2")
    return path, ids


def test_planted_memories_found_among_1000_after_reopen(big_store):
    path, ids = big_store
    with fastmem.Memory(path) as m:
        assert m.count() == 1200 + len(PLANTED) + 1
        for text, q in PLANTED.items():
            hits = m.recall(q, k=5, scope="u1").hits
            assert ids[text] in [h.id for h in hits], q
            top = next(h for h in hits if h.id == ids[text])
            assert top.text == text
            assert set(top.why) & {"keyword", "vector"}


def test_scope_isolation(big_store):
    path, _ = big_store
    with fastmem.Memory(path) as m:
        u1 = m.recall("wifi password office", k=10, scope="u1").hits
        u2 = m.recall("wifi password office", k=10, scope="u2").hits
        everyone = m.recall("wifi password office", k=10).hits
    assert all(h.scope == "u1" for h in u1) and not any("Porto" in h.text for h in u1)
    assert [h.text for h in u2] == ["The wifi password at the Porto office is red-fox-7."]
    assert any("Porto" in h.text for h in everyone) and any("Lisbon" in h.text for h in everyone)


def test_hit_explains_channels(mem):
    mid = mem.remember("Alice moved to Berlin in May.", scope="user:alice")
    hit = mem.recall("where does Alice live?", k=3, scope="user:alice").hits[0]
    assert hit.id == mid and hit.score > 0
    assert hit.why["vector"]["rank"] == 1 and "score" in hit.why["vector"]
    assert hit.why["keyword"]["rank"] == 1


FTS_NASTIES = ['"', 'NEAR(a b', "a OR", "-x", "col:val", "((", ")", "\x00\x01", "'; drop table memories; --",
               "*", "a AND NOT b", '"unterminated', "ünïcödé 東京 🙂", "^start", "text:*", "{a b}", "a\\b"]


@pytest.mark.parametrize("q", FTS_NASTIES)
def test_fts_syntax_never_raises_or_changes_store(mem, q):
    mem.remember_many(["plain memory one about a drop table", "second memory near the text"])
    snapshot = mem.admin.engine.db.execute("SELECT group_concat(id || text, '|') FROM memories").fetchone()
    if q.strip():
        mem.recall(q, k=3)
    else:
        with pytest.raises(InvalidInput):
            mem.recall(q, k=3)
    assert mem.admin.engine.db.execute("SELECT group_concat(id || text, '|') FROM memories").fetchone() == snapshot
    assert len(mem) == 2


def test_a_word_asked_before_it_was_written_is_found_after(mem):
    """Regression: the keyword channel cached a word's count of 0 and kept it until the store
    grew by a tenth, so what was written after a miss stayed unfound."""
    mem.remember_many(noise_texts(30))
    assert not mem.recall("my locker code", channels=("keyword",), analogy=False).hits
    mid = mem.remember("My locker code is 4417.")
    assert [h.id for h in mem.recall("my locker code", channels=("keyword",), analogy=False).hits] == [mid]


def test_the_pipeline_is_the_recall(mem):
    """Memory.recall is the engine's pipeline run on the turn's embedding: the same hits,
    scores and reasons."""
    mem.remember_many(noise_texts(80) + ["The spare key is under the blue flowerpot.", "Parking permits renew in March."])
    e = mem.admin.engine
    q = "where is the spare key"
    got = mem.recall(q, k=5, record=False, analogy=False)
    direct = e.pipeline.run(q, e.embedder.encode([q])[0], extractor=e.extractor, k=5, scope=None, session=None,
                            use=frozenset(fastmem.recall_channels()), analogy=False, z_min=2.0)
    assert [(h.id, round(h.score, 6), h.why) for h in direct.hits] == [(h.id, round(h.score, 6), h.why) for h in got.hits]


def test_a_new_channel_is_one_registered_spec(mem):
    """A channel registered with fastmem.recall.channel runs in the order it was registered
    among the base channels, is accepted by recall(channels=...), fused with its weight and
    explained in why; the built-in list is the registry's."""
    from fastmem.recall import CHANNELS, channel

    ids = mem.remember_many(noise_texts(40) + ["Ingrid keeps the lighthouse log.", "The ferry leaves at nine."])

    @channel("newest", weight=0.25, explain=lambda turn: {"note": "the newest memories"})
    def newest(pipeline, turn):
        rows = pipeline.db.execute("SELECT id FROM memories ORDER BY id DESC LIMIT ?", (turn.pool,)).fetchall()
        return {mid: (r + 1, float(-r)) for r, (mid,) in enumerate(rows)}

    try:
        assert list(CHANNELS)[-3:] == ["newest", "context", "speaker"]  # base ones first, then derived
        assert "newest" in fastmem.recall_channels(model_free=True)  # it declared no model need
        r = mem.recall("ferry", k=3, record=False, analogy=False, channels=("keyword", "newest"))
        assert r.hits[0].id == ids[-1] and r.hits[0].why["newest"] == {"rank": 1, "score": 0.0, "note": "the newest memories"}
        alone = mem.recall("lighthouse", k=2, record=False, analogy=False, channels=("newest",))
        assert [h.id for h in alone.hits] == [ids[-1], ids[-2]]
    finally:
        del CHANNELS["newest"]
    with pytest.raises(fastmem.InvalidInput, match="newest"):
        mem.recall("ferry", channels=("newest",))


def test_excluded_memories_are_never_hits(mem):
    ids = mem.remember_many(["The gate code is 4471.", "The gate code changed to 9012 in May.", "Gates close at ten."])
    r = mem.recall("what is the gate code", k=3, record=False, exclude=[ids[1]])
    assert ids[1] not in [h.id for h in r.hits] and r.hits[0].id == ids[0]


TURNS = ["Melanie: We were so lucky my son was okay after the accident on the road trip.",
         "Caroline: Family is super important to me, especially after the accident.",
         "Melanie: I painted a sunset at the lake last summer.",
         "Caroline: The support group helped me feel accepted.",
         "Melanie: The kids loved the pottery workshop.",
         "Caroline: I am saving up to adopt a child one day."]
ASKED = [f"How did Melanie feel after the accident on day {i}?" for i in range(40)]


@pytest.mark.parametrize("scoped", [False, True])
def test_excluded_memories_rank_the_rest_as_if_never_stored(tmp_path, scoped):
    # a host excludes the turns its model has in context: 40 questions that repeat "Melanie"
    # and "accident" must not change how the keyword channel weighs those words for the rest
    scope = "u1" if scoped else None  # None: the whole store, written in the default scope
    with fastmem.Memory(str(tmp_path / "before.db")) as a, fastmem.Memory(str(tmp_path / "after.db")) as b:
        for m in (a, b):
            if scoped:  # another user's memories: the scope is ranked with its own statistics
                m.remember_many(noise_texts(50), scope="u2")
            m.remember_many(TURNS, scope=scope or "")
        asked = b.remember_many(ASKED, scope=scope or "")
        for q in ("how did Melanie feel after the accident", "what did the kids love", "Melanie accident family"):
            want = a.recall(q, k=5, scope=scope, record=False, analogy=False, channels=("keyword",)).hits
            got = b.recall(q, k=5, scope=scope, record=False, analogy=False, channels=("keyword",),
                           exclude=asked).hits
            assert [(h.text, round(h.score, 6)) for h in got] == [(h.text, round(h.score, 6)) for h in want], q
            if "accident" in q:  # the questions do shift the words' weights: the check can fail
                plain = b.recall(q, k=60, scope=scope, record=False, analogy=False, channels=("keyword",)).hits
                rest = {h.text: round(h.score, 6) for h in plain if h.id not in asked}
                assert any(rest.get(h.text) != round(h.score, 6) for h in want), q
