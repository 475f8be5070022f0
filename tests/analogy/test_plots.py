"""The slot's domain-blind structure view: plots told without their clothes, compared clause by
clause in story order, whitened by the store's own statistics."""

import numpy as np
import pytest

import fastmem
from fastmem.analogy import plots as P
from fastmem.reader.extract import SpacyExtractor

COURIER = ("A courier had to deliver a cake across town before noon. The main bridge was closed because a "
           "truck had crashed into it. She rode south to the old ferry and crossed the river on it. "
           "She reached the party late, but the cake arrived whole.")
HEART = ("A heart needed blood to reach a muscle behind a blocked artery. The artery was narrowed because "
         "plaque had built up inside it. Small side vessels widened and carried the blood around the "
         "blockage. The muscle got its blood more slowly, but it survived.")
SHUFFLED = ("She reached the party late, but the cake arrived whole. She rode south to the old ferry and "
            "crossed the river on it. A courier had to deliver a cake across town before noon. The main bridge "
            "was closed because a truck had crashed into it.")


@pytest.fixture(scope="module")
def reader():
    return SpacyExtractor()


def test_a_plot_keeps_the_verbs_and_drops_the_clothes(reader):
    plot = reader.plot(COURIER)
    assert len(plot) == 4
    assert plot[1] == "the something was close because a something had crash into something ."
    assert not any(w in " ".join(plot) for w in ("courier", "cake", "bridge", "truck", "ferry", "river"))
    assert "ride" in plot[2] and "cross" in plot[2]
    # chat made of skeleton verbs tells no plot; one sentence is not a plot
    assert reader.plot("Wow, that sounds great! I love it so much, thanks for telling me.") is None
    assert reader.plot("The truck crashed into the bridge.") is None


def test_the_kernel_reads_the_story_in_order():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 16))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    assert P.kernel(a, a) == pytest.approx(1.0)
    assert P.kernel(a, a[::-1]) < 0.9  # the same clauses told backwards
    batch = P.Batch.of([1, 2, 3], [a, a[::-1], a[:2]])
    assert np.allclose(P.kernels(a, batch), [P.kernel(a, a), P.kernel(a, a[::-1]), P.kernel(a, a[:2])])
    assert [i for i, _, _ in P.pairs(a, a)] and P.pairs(a, a)[0][0] == P.pairs(a, a)[0][1]


def test_an_analogy_scores_above_its_retelling_order_and_topic():
    sim = fastmem.structural_similarity
    analog = sim(COURIER, HEART)
    assert analog > sim(COURIER, SHUFFLED)  # the same clothes, the story out of order
    assert analog > sim(COURIER, "A courier rode a bike across town with a cake for a party. She liked the "
                                 "bridge over the river and often stopped there. Later she ate a slice of the cake.")
    assert -1.0 <= analog <= 1.0


def test_the_store_keeps_plots_and_their_statistics_exactly(tmp_path):
    path = str(tmp_path / "p.db")
    with fastmem.Memory(path) as m:
        ids = m.remember_many([COURIER, HEART, "Short note about lunch.", SHUFFLED])
        pl = m.admin.engine.structure.plots
        assert sorted(pl.ids.tolist()) == sorted([ids[0], ids[1], ids[3]])  # one sentence: no plot
        means = pl.means.astype(np.float64)
        assert pl.n == 3 and np.allclose(pl.s, means.sum(0)) and np.allclose(pl.m, means.T @ means)
        m.update(ids[1], text="Lunch was fine.")  # its plot goes
        m.forget(ids[3])
        assert pl.ids.tolist() == [ids[0]] and pl.n == 1
        assert m.admin.check().ok
    with fastmem.Memory(path) as again, fastmem.Memory(path) as other:
        other.remember(HEART)  # another connection's write is seen by the next read
        again.count()
        assert again.admin.engine.structure.plots.n == 2


def test_the_turns_own_neighbourhood_is_never_the_analogy_and_a_far_plot_can_be(tmp_path):
    """A retelling is the turn's nearest memory by embedding: never offered. With the plot view,
    a process told in another field stands out of a store of chat and is offered, with the
    clauses that correspond."""
    chat = [f"{who}: {line}" for who, line in zip(["Ana", "Ben"] * 40, [
        "Haha that sounds great, thanks!", "I love it, we should do that again soon.",
        "Did you see the game last night?", "Yes! What a finish, I could not believe it.",
        "I'm so tired today, the week was long.", "Same here, I need a holiday.",
        "My sister called me this morning.", "Oh nice, how is she doing?",
    ] * 10)]
    retold = ("A bike messenger needed to bring a birthday cake across the city by twelve. The big bridge was shut "
              "since a lorry had smashed into it. She cycled south to the ferry and crossed the water on it. She got "
              "to the party late, yet the cake was fine.")
    with fastmem.Memory(str(tmp_path / "n.db")) as m:
        m.remember_many(chat)
        far, near = m.remember_many([HEART, retold])
        res = m.recall(COURIER, k=5, record=False)
        assert res.hits[0].id == near
        assert res.analogy is None or res.analogy.id == far
        m.analogy.settings.surface_rule = "band"
        m.analogy.settings.surface_objects = 1.0
        loose = m.recall(COURIER, k=5, record=False, session="s").analogy
        assert loose is None or loose.id in (far, near)


def test_plots_are_read_again_with_the_reader(tmp_path):
    with fastmem.Memory(str(tmp_path / "r.db")) as m:
        ids = m.remember_many([COURIER, HEART])
        e = m.admin.engine
        with m.host.transaction() as tx:  # a store written before plots: none stored
            tx.db.execute("DELETE FROM plots")
        e.structure.plots.load()
        assert e.structure.plots.n == 0
        m.analogy.rebuild(reparse=True)
        assert sorted(e.structure.plots.ids.tolist()) == sorted(ids)
        assert m.admin.check().ok


PLANT = ("Roots take up water from the soil. The water rises through the stem to the leaves. In the leaves, "
         "sunlight turns the water and air into sugar. The sugar flows to the rest of the plant, where it feeds "
         "new growth.")
MILL = ("Trucks bring raw ore from the mine. The ore rides a conveyor up to the furnace. In the furnace, heat "
        "turns the ore and coke into iron. The iron goes to the workshops, where it feeds the machines.")
MILL_OUT_OF_ORDER = ("In the furnace, heat turns the ore and coke into iron. The iron goes to the workshops, where "
                     "it feeds the machines. Trucks bring raw ore from the mine. The ore rides a conveyor up to "
                     "the furnace.")


def test_between_two_mappings_that_pass_the_plot_view_chooses_the_process_in_order(tmp_path):
    """The same events told in another order map as well event by event; the plot view's
    evidence, added to the mapping's, decides for the one told in the turn's order."""
    with fastmem.Memory(str(tmp_path / "o.db")) as m:
        chores = ["cooked dinner", "painted the fence", "fixed the bike", "planted beans", "washed the car"]
        m.remember_many([f"On day {i} Ana {chores[i % 5]}. Then she called her brother and read a book."
                         for i in range(40)])  # plots of a store, none of them the turn's
        m.remember_many([COURIER, HEART, "A baker mixed flour and water, and the dough rose in the warm kitchen."])
        ordered, shuffled = m.remember_many([MILL, MILL_OUT_OF_ORDER])
        slot = m.admin.engine.slot
        turn = slot.prepare(PLANT, m.admin.extractor, 0.0)
        bits = slot.plot_evidence(turn, [ordered, shuffled])
        assert bits[ordered] > bits[shuffled] > 0.0
        from fastmem.evaluate.slot import exact_scores
        scores = exact_scores(slot, PLANT, [ordered, shuffled], m.admin.extractor)
        assert scores[0] > scores[1]
        an = m.recall(PLANT, k=3, record=False).analogy
        assert an is None or an.id != shuffled
