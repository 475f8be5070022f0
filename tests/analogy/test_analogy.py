"""The analogy slot: structure that rhymes, surface that differs, a gate calibrated on the store."""

import pytest

import fastmem
from fastmem.analogy.slot import AnalogySlot
from fastmem.evaluate.slot import exact_scores, tracing
from tests.shared import DATA, FACTS


@pytest.fixture
def store(mem):
    mem.remember_many(FACTS)
    return mem


def test_ownership_analogy_surfaces(store):
    target = store.remember("Acme Corporation owns Widget Inc, a small subsidiary in Ohio.")
    same_topic = store.remember("Bob bought a used red car from a dealer last week.")
    res = store.recall("My friend Bob owns a red car.", k=5)
    assert res.analogy is not None and res.analogy.id == target
    why = res.analogy.why
    assert why["p"] <= store.analogy.settings.analogy_alpha and why["e_value"] <= store.analogy.settings.analogy_alpha and why["mapping"] == ["own"]
    assert why["reason"].startswith("same structure: own (1 corresponding event") and "p=" in why["reason"]
    assert res.analogy.id != same_topic


def test_tracing_records_the_gated_candidates_and_changes_no_pick(store):
    target = store.remember("Acme Corporation owns Widget Inc, a small subsidiary in Ohio.")
    with tracing(store.admin.engine.slot) as traced:
        res = store.recall("My friend Bob owns a red car.", k=5, record=False)
    assert res.analogy is not None and res.analogy.id == target
    assert target in [mid for mid, _, _ in traced]
    mid, features, surprise = next(t for t in traced if t[0] == target)
    assert features.ndim == 1 and features.size > 0 and surprise == pytest.approx(res.analogy.why["surprise"])
    assert type(store.admin.engine.slot) is AnalogySlot and not hasattr(store.admin.engine.slot, "traced")
    assert store.recall("My friend Bob owns a red car.", k=5, record=False).analogy.id == target


def test_same_topic_memory_is_never_the_analogy(store):
    same = store.remember("My friend Bob owns a blue car too.")  # same structure AND same topic
    res = store.recall("My friend Bob owns a red car.", k=5)
    assert res.analogy is None or res.analogy.id != same
    # it is found by ordinary recall instead
    assert same in [h.id for h in res.hits]


def test_empty_and_tiny_stores_never_fire(mem):
    assert mem.recall("My friend Bob owns a red car.").analogy is None
    mem.remember("Acme Corporation owns Widget Inc.")
    mem.remember("Lena owns a kayak.")
    assert mem.recall("My friend Bob owns a red car.").analogy is None


def test_no_qualifier_leaves_slot_empty(store):
    store.remember("Acme Corporation owns Widget Inc, a small subsidiary in Ohio.")
    res = store.recall("Volcanic eruptions darken the sky for weeks.", k=5)
    assert res.analogy is None
    assert store.recall("hello", k=3).analogy is None  # no facts in the turn at all


def test_gate_is_calibrated_on_the_whole_store(store):
    target = store.remember("Acme Corporation owns Widget Inc, a small subsidiary in Ohio.")
    turn = "My friend Bob owns a red car."
    before = store.recall(turn, k=5, record=False).analogy
    assert before is not None and before.id == target
    # many more owners: ownership is now ordinary in this store, so the best of the store's
    # memories would map this well by chance, and the slot stays silent
    store.remember_many([f"Person number {i} owns a house in town {i}." for i in range(60)])
    assert store.recall(turn, k=5, record=False).analogy is None
    after = store.analogy.explore(turn, k=80)
    mine = next(a for a in after if a.id == target)
    assert mine.why["z"] < before.why["z"] and mine.why["p"] > before.why["p"]


def test_analogies_report_the_slots_z(store):
    target = store.remember("Acme Corporation owns Widget Inc, a small subsidiary in Ohio.")
    turn = "My friend Bob owns a red car."
    slot = store.recall(turn, k=5, record=False).analogy
    found = store.analogy.explore(turn, k=10)
    assert slot is not None and slot.id == target
    mine = next(a for a in found if a.id == target)
    # exploration and the slot's gate put the same memory at the same z
    assert mine.why["z"] == pytest.approx(slot.why["z"], rel=1e-6)
    assert "code_z" in mine.why
    zs = [a.why["z"] for a in found]
    assert zs == sorted(zs, reverse=True)
    assert all(a.why["z"] >= 1.0 for a in store.analogy.explore(turn, k=10, z_min=1.0))


def test_a_memory_naming_what_the_turn_is_about_is_never_the_analogy(store):
    # a short question and the turn that answers it: same topic, but short texts sit at low
    # embedding cosine, so the surface band alone lets it through
    answer = store.remember("Jon: I lost my wallet at the bank last month, so I am starting my own dance studio.")
    question = "Where did Jon lose his job?"
    res = store.recall(question, k=5, record=False)
    assert res.hits[0].id == answer
    assert res.analogy is None or res.analogy.id != answer  # it names Jon
    store.analogy.settings.surface_names = False
    store.analogy.settings.surface_rule = "band"  # the surface band alone lets it through
    loose = store.recall(question, k=5, record=False).analogy
    assert loose is not None and loose.id == answer and loose.why["surface_z"] < store.analogy.settings.surface_z
    assert loose.why["recall_rank"] == 1
    # ordinary recall's first results, and the turn's own surface neighbourhood (the default,
    # in a store of 30 memories or more), are never the analogy either
    store.remember_many([f"{i}: {line}" for i, line in enumerate(FACTS)])
    assert store.count() >= 30 and store.recall(question, k=5, record=False).hits[0].id == answer
    for rule in ("recall", "neighbourhood"):
        store.analogy.settings.surface_rule = rule
        strict = store.recall(question, k=5, record=False).analogy
        assert strict is None or strict.id != answer, rule


def test_names_exclude_only_what_they_name(store):
    # the same structure about someone else still rhymes; "Jonathan" is not "Jon" (the surface
    # band alone: the default, the turn's own neighbourhood, keeps the nearest memory out)
    store.analogy.settings.surface_rule = "band"
    other = store.remember("Jonathan: Mia lost her keys at the station in spring.")
    an = store.recall("Where did Jon lose his job?", k=5, record=False).analogy
    assert an is not None and an.id == other


def test_the_same_things_doing_the_same_are_literal_similarity_not_analogy(store):
    """A retelling keeps its objects: the same relation with the same things on the same
    roles is literal similarity (``analogy_literal_max``), whoever does it."""
    store.analogy.settings.surface_rule = "band"  # the literal share alone decides
    same = store.remember("Jonathan: Mia lost her job at the bakery in spring.")
    assert store.recall("Where did Jon lose his job?", k=5, record=False).analogy is None
    store.analogy.settings.analogy_literal_max = store.analogy.settings.surface_objects = 1.0
    assert store.recall("Where did Jon lose his job?", k=5, record=False).analogy.id == same


def test_a_paraphrase_is_never_the_analogy(mem):
    """The top of the turn's own surface neighbourhood (``surface_z``) is the same story in
    other words, however well its structure maps."""
    mem.analogy.settings.surface_rule = "band"  # the band alone (the default rule keeps it out too)
    mem.remember_many(FACTS * 3)
    retold = mem.remember("The pump pulls water out of the well; the filter cleans that water; the tank then stores it.")
    turn = "The pump pulls water from the well, the filter cleans the water and the tank stores it."
    s = mem.analogy.settings
    s.analogy_literal_max, s.surface_objects, s.surface_max = 1.0, 1.0, None  # the surface band alone
    res = mem.recall(turn, k=5, record=False)
    assert res.analogy is None or res.analogy.id != retold
    mem.analogy.settings.surface_z = 99.0
    an = mem.recall(turn, k=5, record=False, session="other").analogy
    assert an is not None and an.id == retold and an.why["surface_z"] > 6.0


def test_extractor_reports_names():
    from fastmem.reader.extract import SpacyExtractor

    names = SpacyExtractor().names("Caroline met Dr. Alvarez from Acme Corporation in New York on May 3.")
    assert "Caroline" in names and "New York" in names
    assert any("Acme" in n for n in names)
    assert not any("3" in n for n in names)  # dates are not names
    assert "Dr." not in names and "Dr" not in names  # nor titles


def test_surface_rule_is_checked(tmp_path):
    with pytest.raises(fastmem.InvalidInput):
        fastmem.Memory(str(tmp_path / "x.db"), analogy=fastmem.AnalogySettings(surface_rule="cosine"))


def test_no_repeat_within_session(store):
    target = store.remember("Acme Corporation owns Widget Inc, a small subsidiary in Ohio.")
    s = store.session("chat-9")
    assert s.recall("My friend Bob owns a red car.").analogy.id == target
    again = s.recall("My neighbour Ann owns a green van.").analogy
    assert again is None or again.id != target
    assert store.recall("My neighbour Ann owns a green van.", session="other").analogy.id == target


def test_scope_limits_the_analogy(mem):
    mem.remember_many(FACTS, scope="a")
    mem.remember_many(FACTS[:10], scope="b")
    target = mem.remember("Acme Corporation owns Widget Inc, a small subsidiary in Ohio.", scope="b")
    # the analogy lives in scope b: found there, never shown to scope a
    assert mem.recall("My friend Bob owns a red car.", scope="b", record=False).analogy.id == target
    assert mem.recall("My friend Bob owns a red car.", scope="a", record=False).analogy is None


def test_structural_similarity_prefers_same_structure():
    same = fastmem.structural_similarity("A company owns a subsidiary.", "My friend owns a car.")
    other = fastmem.structural_similarity("A company owns a subsidiary.", "The river floods the valley.")
    assert same > other
    assert fastmem.structural_similarity("hello", "My friend owns a car.") == 0.0


def test_narrative_order_counts():
    turn = "The pump pulls water from the well, the filter cleans the water and the tank stores it."
    same_order = "The server pulls records from the feed, the parser cleans the records and the database stores them."
    shuffled = "The database stores the records, the parser cleans the records and the server pulls records from the feed."
    assert fastmem.structural_similarity(turn, same_order) > fastmem.structural_similarity(turn, shuffled)


def test_rare_structure_outweighs_common_structure(store):
    # "own" is everywhere, "evaporate/condense" is rare: the rare narrative is the analogy
    # (in a store this small it is also the turn's nearest memory: the band alone here)
    store.analogy.settings.surface_rule = "band"
    store.remember_many([f"Person number {i} owns a house in town {i}." for i in range(30)])
    rare = store.remember("Sea water evaporates in the sun, the vapour condenses into clouds and falls as rain.")
    res = store.recall("Alcohol evaporates from the still, condenses in the coil and falls into a jar; the distiller owns the still.",
                       k=5, record=False)
    assert res.analogy is not None and res.analogy.id == rare
    assert store.analogy.idf("evaporate") > store.analogy.idf("own")


def test_events_and_word_counts_follow_writes_and_deletes(mem):
    mem.remember_many(FACTS)
    before = mem.analogy.idf("evaporate")
    mid = mem.remember("Water evaporates from the lake and then it condenses over the hills.")
    ev = mem.analogy.events(mid)
    assert [e[0] for e in ev][:2] == ["evaporate", "condense"]
    assert "lake" in ev[0][2]  # fillers are common nouns, never names
    assert mem.analogy.idf("evaporate") < before
    mem.forget(mid)
    assert mem.analogy.idf("evaporate") == before  # N and df both back: exactly the same weight
    with pytest.raises(fastmem.errors.NotFound):
        mem.analogy.events(mid)


def test_names_never_enter_the_structure(mem):
    mid = mem.remember("Maria Lopez hired Tom Becker at Globex in Paris.")
    fillers = {f for _, s, o in mem.analogy.events(mid) for f in s + o}
    assert fillers and all(f.startswith("@") for f in fillers), fillers


def test_old_structure_is_reencoded_on_open(tmp_path):
    path = tmp_path / "old.db"
    with fastmem.Memory(path) as m:
        m.remember_many(FACTS)
        target = m.remember("Acme Corporation owns Widget Inc, a small subsidiary in Ohio.")
        m.admin.engine.db.execute("DELETE FROM events")  # a store from before events were kept
        m.admin.engine.db.execute("UPDATE settings SET value='1' WHERE key='struct_version'")
    with fastmem.Memory(path) as m:
        assert m.admin.engine.store.get_setting("struct_version") == str(fastmem.analogy.codes.StructureEncoder.version)
        assert m.analogy.events(target)  # rebuilt from the stored facts
        assert m.recall("My friend Bob owns a red car.", k=5).analogy.id == target
        assert m.analogy.rebuild(reparse=True) == m.admin.engine.structure.n > 0
        assert m.recall("My friend Bob owns a red car.", k=5).analogy.id == target


def test_batch_parse_gives_the_same_analogy(store):
    target = store.remember("Acme Corporation owns Widget Inc, a small subsidiary in Ohio.")
    turn = "My friend Bob owns a red car."
    beside = store.recall_many([turn, "Heavy rain fell."], k=5, record=False)[0]  # turns parsed in one batch
    direct = store.admin.engine.pipeline.run(turn, store.admin.embedder.encode([turn])[0], extractor=store.admin.extractor, k=5, scope=None,
                                session=None, use=frozenset({"keyword", "vector", "graph"}), analogy=True,
                                z_min=store.analogy.settings.z_min)  # parsed in the slot itself
    assert beside.analogy.id == direct.analogy.id == target
    assert beside.analogy.why["z"] == pytest.approx(direct.analogy.why["z"])
    assert direct.timings_ms["parse"] > 0


def test_the_live_statistics_equal_a_recount_after_writes_updates_and_forgets(store):
    """The slot's running sums (kept by each write, update and forget) equal the sums counted
    again from the stored codes, and a scope's own statistics equal the store's when the
    scope is the whole store."""
    from numpy.testing import assert_allclose

    ids = store.remember_many(["Acme Corporation owns Widget Inc.", "Lena sold her kayak to Tom.",
                               "The river floods the valley every spring."])
    store.update(ids[1], text="Lena repaired her bicycle and rode it to Basel.")
    store.forget(ids[2])
    st = store.admin.engine.structure
    again = st.recompute_stats()
    assert (st.stats.n, st.stats.id_sum) == (again.n, again.id_sum)
    assert_allclose(st.stats.s, again.s, atol=1e-9)
    assert_allclose(st.stats.m, again.m, atol=1e-9)
    sq = st.query(store.analogy.events(ids[0]))
    members = {r[0] for r in store.admin.engine.db.execute("SELECT id FROM memories")}
    mean, std, n = st.z_stats(sq, members)
    assert n == st.n and mean == pytest.approx(st.stats.z_stats(sq.vector)[0], abs=1e-6)
    assert std == pytest.approx(st.stats.z_stats(sq.vector)[1], abs=1e-6)


def test_a_close_after_reading_only_does_not_rewrite_the_statistics(tmp_path):
    """The slot's running sums (8 MB at D=512) are written at close only when they changed,
    or when the change log's trim would outdate the stored row; a process that only read (a
    ``fastmem recall``) rewrote them at every close. The next open still finds sums equal to
    a recount, read from the stored row."""
    from numpy.testing import assert_allclose

    path = str(tmp_path / "s.db")
    with fastmem.Memory(path) as m:
        m.remember_many(FACTS)
    with fastmem.Memory(path) as m:
        m.recall("My friend Bob owns a red car.", record=False)
        before = m.admin.engine.db.total_changes()
        m.admin.flush()
        assert m.admin.engine.db.total_changes() == before  # nothing rewritten
        stored = m.admin.engine.structure._stored[2]
        assert m.admin.engine.structure.stats_stored(stored) and not m.admin.engine.structure.stats_stored(stored + 1)
        m.remember("Lena sold her kayak to Tom and bought a canoe.")
        before = m.admin.engine.db.total_changes()
        m.admin.flush()
        assert m.admin.engine.db.total_changes() > before  # changed sums are saved
    with fastmem.Memory(path) as m:
        st = m.admin.engine.structure
        assert st._stored is not None  # read from the row, not recounted
        again = st.recompute_stats()
        assert (st.stats.n, st.stats.id_sum) == (again.n, again.id_sum)
        assert_allclose(st.stats.s, again.s, atol=1e-9)
        assert_allclose(st.stats.m, again.m, atol=1e-9)


def test_a_store_too_small_for_the_slot_skips_the_parse(tmp_path):
    """Under ``min_store`` coded memories no turn can get an analogy, so a recall does not parse
    it (in a new process that is spaCy's load, about a second); from ``min_store`` on it does."""
    texts = [f"{n} moved to {c} after the storm and opened a bakery there." for n, c in
             zip("Alice Bob Carol Dan Erin Frank Gina Hugo".split(), "Berlin Lisbon Oslo Lyon Basel Porto Cork Perth".split())]
    with fastmem.Memory(str(tmp_path / "s.db"), progress=False) as m:
        m.remember_many(texts[: m.analogy.settings.min_store - 1])
        r = m.recall("Who moved to Lisbon?", record=False)
        assert r.hits and "parse" not in r.timings_ms and not m.admin.engine.slot.can_fire()
        m.remember(texts[m.analogy.settings.min_store - 1])
        r = m.recall("Who moved to Lisbon?", record=False)
        assert m.admin.engine.slot.can_fire() and "parse" in r.timings_ms


def test_the_analogy_does_not_depend_on_the_order_written(tmp_path):
    """ProPara-Logy silver row 5 (a target and its distractor: the same events, other order and
    links), and two tellings of one story with the same events (an exact tie of the slot's
    score): the analogy is the same whichever was written first (the first written won ties
    in earlier versions, and the eval's row order favoured every target)."""
    import os

    from fastmem.evaluate import proparalogy as P

    source = "The pump pulls water from the well, the filter cleans the water and the tank stores it."
    twins = ("The server pulls records from the feed, the parser cleans the records and the database stores them.",
             "The server pulls records from the feed; the parser cleans the records, and the database stores them.")
    cases = [(source, twins, [f"Note {i}: the {w} was repaired on Tuesday." for i, w in enumerate(("roof", "bike") * 20)])]
    data = str(DATA)
    rows = P.load_rows(os.path.join(data, "proparalogy-silver"))
    if rows is not None:
        r = rows[5]
        cases.append((r["source_paragraph"], (r["target_paragraph"].strip(), r["distractor_target_paragraph"].strip()),
                      [o["random_target_paragraph"].strip() for o in rows if o["source_subject"] != r["source_subject"]][:40]))
    for k, (turn, pair, fill) in enumerate(cases):
        picked = []
        for i, order in enumerate((pair, pair[::-1])):
            # the twins are each other's and the turn's nearest memories: the band alone here
            with fastmem.Memory(str(tmp_path / f"{k}-{i}.db"), analogy=fastmem.AnalogySettings(surface_rule="band")) as m:
                ids = m.remember_many(fill + list(order), progress=False)
                if k == 0:
                    a, b = exact_scores(m.admin.engine.slot, turn, ids[-2:], m.admin.extractor)
                    assert a == pytest.approx(b, abs=1e-12)  # the tie this case is about
                a = m.recall(turn, record=False).analogy
                picked.append(a and a.text)
        assert picked[0] in pair and picked[0] == picked[1], k


def _story_picks(path, ids, **settings):
    """The slot's pick for each base story of the dev story sets ``ids`` (tests/data/stories.json),
    with every set's retelling, mere-appearance story, false and true analogy in one store:
    ``{set: (set of the pick, kind of the pick)}``, None where the slot is silent."""
    import json

    from tests.shared import TESTDATA

    sets = [s for s in json.loads((TESTDATA / "stories.json").read_text())["sets"] if s["id"] in ids]
    kinds = ("analogy", "literal", "false", "appearance")
    with fastmem.Memory(str(path), analogy=fastmem.AnalogySettings(**{"surface_rule": "band", **settings})) as m:
        texts = [(s["id"], k, s[k]) for s in sets for k in kinds]
        which = dict(zip(m.remember_many([t for _, _, t in texts] + FACTS), texts))
        return {s["id"]: r.analogy and which[r.analogy.id][:2]
                for s, r in zip(sets, m.recall_many([s["base"] for s in sets], k=5, record=False))}


def test_a_retelling_in_the_same_objects_is_never_the_analogy(tmp_path):
    """Retellings whose nouns are as alike as their base story's (over ``surface_objects``,
    0.8) are never offered, whatever their mapping; a stricter bound keeps out every retelling
    and mere-appearance story of these sets too: the slot offers the true analogy or nothing."""
    ids = ("s41", "s22", "s25")  # s41's retelling is its pick when nothing bounds the objects
    assert _story_picks(tmp_path / "free.db", ids, surface_objects=1.0)["s41"] == ("s41", "literal")
    for sid, pick in _story_picks(tmp_path / "a.db", ids).items():
        assert pick != (sid, "literal"), (sid, pick)
    for sid, pick in _story_picks(tmp_path / "b.db", ("s01", "s35", "s13"), surface_objects=0.5).items():
        assert pick is None or pick == (sid, "analogy"), (sid, pick)


def test_structural_similarity_puts_the_analogy_above_the_retelling_and_the_appearance():
    import json

    from tests.shared import TESTDATA

    s01 = next(s for s in json.loads((TESTDATA / "stories.json").read_text())["sets"] if s["id"] == "s01")
    ta = fastmem.structural_similarity(s01["base"], s01["analogy"])
    assert ta > fastmem.structural_similarity(s01["base"], s01["literal"])
    assert ta > fastmem.structural_similarity(s01["base"], s01["appearance"])


def test_structural_similarity_puts_the_analogy_above_a_close_retelling():
    """A retelling in other words can share more of the base's plot than its analogy does; its
    surface likeness, cubed, keeps it below (these three were above it with the square)."""
    import json

    from tests.shared import TESTDATA

    sets = {s["id"]: s for s in json.loads((TESTDATA / "stories_blind.json").read_text())["sets"]}
    for sid in ("b01", "b12", "b16"):
        s = sets[sid]
        assert fastmem.structural_similarity(s["base"], s["analogy"]) > fastmem.structural_similarity(
            s["base"], s["literal"]), sid
