"""Scope isolation, as a property over random stores and queries: a recall (every channel, the
analogy slot), an exploration, a graph query or a tool call for one scope never returns
anything of another."""

import json
import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastmem
from fastmem.hermes import tools as T

POOL = [
    "Alice moved to Berlin in May and works for Acme.", "Bob works for Acme in Lisbon.",
    "Acme Corporation owns Widget Inc, a small subsidiary in Ohio.", "Alice owns a red car.",
    "Nadia booked a flight to Lisbon for the Acme offsite.", "The spare key is under the blue flowerpot.",
    "Omar is moving to Oslo in August.", "Bob bought a used red car from a dealer.",
    "Sea water evaporates in the sun and condenses into clouds.", "Priya teaches chemistry in Berlin.",
    "Omar signed a lease for an apartment in Oslo.", "Kenji plays the cello with Alice.",
    "The museum in Lisbon closes at six.", "Widget Inc hired Nadia as an engineer.",
    "Alice and Bob visited the museum in Oslo.", "The quarterly report for Acme is due in March.",
]
QUERIES = ["where does Alice live?", "who works for Acme", "My friend Bob owns a red car.", "Lisbon", "Oslo lease",
           "what evaporates?", "Widget Inc", "spare key"]
NAMES = ["Alice", "Acme", "Bob", "Lisbon", "Oslo", "Widget Inc", "Nadia", "Berlin"]
CHANNEL_SETS = [("keyword",), ("vector",), ("graph",), ("keyword", "vector", "graph")]


@settings(max_examples=int(os.environ.get("FASTMEM_ISOLATION_EXAMPLES", "12")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(layout=st.lists(st.tuples(st.integers(0, len(POOL) - 1), st.sampled_from(["a", "b", "c"])), min_size=4,
                       max_size=16),
       query=st.sampled_from(QUERIES), name=st.sampled_from(NAMES), other=st.sampled_from(NAMES))
def test_no_call_for_one_scope_returns_another(layout, query, name, other):
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "i.db"), analogy=fastmem.AnalogySettings(min_store=2)) as m:
        for i, scope in layout:
            m.remember(POOL[i], scope=scope)
        scope_of = dict(m.admin.engine.db.execute("SELECT id, scope FROM memories").fetchall())
        for s in ("a", "b", "c"):
            for chans in CHANNEL_SETS:
                res = m.recall(query, k=20, scope=s, channels=chans, record=False)
                assert all(scope_of[h.id] == s and h.scope == s for h in res.hits)
                assert res.analogy is None or scope_of[res.analogy.id] == s
            assert all(scope_of[a.id] == s for a in m.analogy.explore(query, k=20, scope=s))
            for e in m.graph.entity(name, scope=s):
                assert m.admin.engine.db.execute(
                    "SELECT 1 FROM edges e JOIN memories x ON x.id=e.memory_id AND x.scope=? WHERE e.subj=? OR e.obj=?",
                    (s, e.id, e.id)).fetchone()
            try:
                facts = m.graph.facts_about(name, scope=s)
                near = m.graph.neighbours(name, depth=2, scope=s)
                path = m.graph.path(name, other, scope=s) or []
            except fastmem.NotFound:
                facts, near, path = [], [], []
            assert all(scope_of[f.memory_id] == s for f in facts + path if f.memory_id is not None)
            for ent, _ in near:  # each neighbour has a fact in the scope
                assert m.graph.entity(ent.name, scope=s) or ent.type == "category"
            ctx = T.Context(s, writable=False)
            for tool, args in (("fastmem_recall", {"query": query, "k": 20}), ("fact_store", {"action": "search", "query": query}),
                               ("fact_store", {"action": "probe", "entity": name}), ("fact_store", {"action": "list"}),
                               ("fastmem_analogies", {"text": query})):
                got = json.loads(T.call(m, ctx, tool, args))
                ids = [x.get("id", x.get("fact_id")) for key in ("hits", "results", "facts", "analogies")
                       for x in got.get(key) or []]
                assert all(scope_of[i] == s for i in ids), (tool, got)


def test_a_small_scope_keeps_all_its_nearest_memories(tmp_path):
    """Regression: the vector search halved k when a filter left fewer than k reachable, so a
    scope of 30 memories in a store of 160 got 20 back. Now a small scope is searched exactly:
    the same ids in the same order as in a store that holds only that scope."""
    from tests.shared import noise_texts

    mine = [f"Note {i}: {t}" for i, t in enumerate(noise_texts(30, seed=3))]
    with fastmem.Memory(str(tmp_path / "shared.db"), extractor=None) as m:
        m.remember_many(noise_texts(130, seed=4), scope="other")
        m.remember_many(mine, scope="mine")
        text_of = dict(m.admin.engine.db.execute("SELECT id, text FROM memories").fetchall())
        shared = [text_of[h.id] for h in m.recall("a note about the harbor", k=50, scope="mine",
                                                 channels=("vector",), analogy=False, record=False).hits]
    with fastmem.Memory(str(tmp_path / "alone.db"), extractor=None) as m:
        m.remember_many(mine, scope="mine")
        text_of = dict(m.admin.engine.db.execute("SELECT id, text FROM memories").fetchall())
        alone = [text_of[h.id] for h in m.recall("a note about the harbor", k=50, scope="mine",
                                                channels=("vector",), analogy=False, record=False).hits]
    assert len(shared) == 30 and shared == alone


def test_categories_aliases_and_exports_stay_in_their_scope(tmp_path):
    """Regression: categories and aliases were store-wide: another user's tool listed (and could
    approve) them, and a scoped export carried every alias and every category."""
    with fastmem.Memory(str(tmp_path / "c.db")) as m:
        m.remember_many([f"{x} owns a bakery in Lyon and sells bread to Tom Reed." for x in
                         ("Anna Weber", "Boris Klein", "Carla Diaz", "Dana Wu")], scope="a")
        m.remember("Zoe drinks green tea with Tom Reed.", scope="b")
        proposed = m.categories.propose(scope="a", min_members=2)
        assert proposed and all(c.id in {x.id for x in m.categories.list(scope="a")} for c in proposed)
        assert m.categories.list(scope="b") == []
        cid = proposed[0].id
        b = T.Context("b", writable=True)
        assert json.loads(T.call(m, b, "fastmem_categories", {"action": "list"}))["categories"] == []
        assert "error" in json.loads(T.call(m, b, "fastmem_categories", {"action": "approve", "category_id": cid}))
        assert m.categories.list(scope="a")[0].status == "proposed"
        a = T.Context("a", writable=True)
        assert json.loads(T.call(m, a, "fastmem_categories", {"action": "approve", "category_id": cid}))
        out = tmp_path / "b.jsonl"
        m.admin.export_jsonl(out, scope="b")
        text = out.read_text()
        assert "Anna" not in text and "bakery" not in text and '"category"' not in text


def test_a_small_scopes_analogy_does_not_depend_on_other_scopes(tmp_path):
    """Regression: the slot took the store's 256 best-aligned candidates and only then kept the
    caller's scope, and its gate used the whole store's statistics: 300 car owners in another
    scope pushed this scope's analogy out of the candidates. Now candidates and statistics
    come from the scope itself: the same analogy, at the same z, as in a store holding only
    this scope (the slot and ``analogies``)."""
    from tests.shared import FACTS

    NAMES_300 = [f"{a} {b}" for a in ("Ann", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hal", "Ida", "Jo", "Kai", "Liv",
                                     "Max", "Noor", "Oskar", "Pia", "Quinn", "Rosa", "Sven", "Tara")
                 for b in ("Adams", "Brook", "Cole", "Dunn", "Ebert", "Frost", "Gray", "Hale", "Irwin", "Jones",
                           "Kent", "Lund", "Moss", "Nash", "Orr")]
    target = "Acme Corporation owns Widget Inc, a small subsidiary in Ohio."
    turn = "My friend Bob owns a red car."
    others = [f"My friend {n} owns a red car." for n in NAMES_300]
    found = {}
    for name, crowd in (("shared", others), ("alone", [])):
        with fastmem.Memory(str(tmp_path / f"{name}.db")) as m:
            if crowd:
                m.remember_many(crowd, scope="other")
            m.remember_many(FACTS + [target], scope="mine")
            an = m.recall(turn, k=5, scope="mine", record=False).analogy
            explored = m.analogy.explore(turn, k=5, scope="mine")
            found[name] = (an and (an.text, round(an.why["z"], 4)),
                           [(a.text, round(a.score, 4)) for a in explored])
    assert found["alone"][0] is not None and found["alone"][0][0] == target
    assert found["shared"][0][0] == found["alone"][0][0]
    assert [t for t, _ in found["shared"][1]] == [t for t, _ in found["alone"][1]]


def test_recall_in_a_scope_equals_recall_in_a_store_of_that_scope_alone(tmp_path):
    """The same hits in the same order, for every channel alone, fused, and the slot's
    analogy, whatever the other scopes hold: the keyword channel ranks a scope by its own
    word statistics, the vector channel searches it exactly, the slot weighs terms and gates
    by the scope's own counts. (Store-wide bm25 statistics reordered 35 of 40 keyword
    rankings on LoCoMo turns before.)"""
    from tests.shared import FACTS, noise_texts

    mine = POOL + FACTS + ["Acme Corporation owns Widget Inc, a small subsidiary in Ohio."] + noise_texts(20, seed=11)
    crowd = ([f"Owner number {i} owns a shop in town {i} and sells bread." for i in range(60)]
             + [f"Alice met Bob in Lisbon on day {i} to talk about Acme." for i in range(60)] + noise_texts(120, seed=12))
    turns = QUERIES + ["My friend Bob owns a red car.", "who teaches chemistry?", "the museum in Lisbon"]
    got = {}
    for name, other in (("shared", crowd), ("alone", [])):
        with fastmem.Memory(str(tmp_path / f"{name}.db")) as m:
            if other:
                m.remember_many(other, scope="other")
            m.remember_many(mine, scope="mine")
            text = dict(m.admin.engine.db.execute("SELECT id, text FROM memories"))
            for chans in CHANNEL_SETS + [("keyword", "vector", "graph", "context", "speaker")]:
                for q in turns:
                    r = m.recall(q, k=10, scope="mine", channels=chans, record=False, analogy=len(chans) > 3)
                    got.setdefault((chans, q), {})[name] = ([text[h.id] for h in r.hits], r.analogy and r.analogy.text)
    differ = [(c, q) for (c, q), v in got.items() if v["shared"] != v["alone"]]
    assert not differ, differ[:3]


def test_a_new_scope_borrows_the_stores_statistics_until_it_has_its_own(tmp_path):
    """A user's first few memories can already rhyme: a scope of fewer than 8 coded memories
    (too few for a mean and a standard deviation) is gated on the store's statistics; its
    candidates are still its own. (The hermes flow's new user with three stories lost the
    analogy line when every scope used only its own statistics.)"""
    from fastmem.analogy.code_store import SCOPE_OWN_MIN
    from tests.shared import FACTS

    target = "Acme Corporation owns Widget Inc, a small subsidiary in Ohio."
    with fastmem.Memory(str(tmp_path / "m.db")) as m:
        m.remember_many(FACTS, scope="old")
        mine = m.remember_many([target, "Heavy rain flooded the basement last spring.",
                                "Kenji plays the cello in a community orchestra."], scope="new")
        assert m.admin.engine.db.execute("SELECT count(*) FROM codes WHERE memory_id IN (SELECT id FROM memories WHERE scope='new')"
                            ).fetchone()[0] < SCOPE_OWN_MIN
        an = m.recall("My friend Bob owns a red car.", k=5, scope="new", record=False).analogy
        assert an is not None and an.id == mine[0] and an.scope == "new"
