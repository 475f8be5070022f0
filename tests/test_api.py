"""The public surface: a small front, named parts, and every name that moved still working for
this release with a warning that names its new place."""

import warnings

import pytest

import fastmem
from fastmem.parts import MOVED, PARTS
from fastmem.parts.moved import OLD_SLOT_KEYWORDS

FRONT = {"remember", "remember_many", "recall", "recall_many", "update", "forget", "get", "count", "feedback",
         "session", "consolidate", "expand", "close", "closed", "path"}


def test_the_front_is_the_dozen_verbs_of_a_turn():
    public = {n for n in dir(fastmem.Memory) if not n.startswith("_")}
    assert public == FRONT
    for name in public:  # every public name is documented
        assert (getattr(fastmem.Memory, name).__doc__ or "").strip(), name


def test_each_part_is_small_and_documented(tmp_path):
    with fastmem.Memory(str(tmp_path / "p.db"), extractor=None) as m:
        for attr, cls in PARTS.items():
            part = getattr(m, attr)
            assert isinstance(part, cls)
            names = [n for n in dir(cls) if not n.startswith("_")]
            assert 1 <= len(names) <= 10, (attr, names)
            assert cls.__doc__ and all((getattr(cls, n).__doc__ or "").strip() for n in names), attr


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    with fastmem.Memory(str(tmp_path_factory.mktemp("api") / "a.db"),
                        analogy=fastmem.AnalogySettings(min_store=2)) as m:
        m.remember_many(["Alice moved to Berlin in May.", "Bob owns a red car.", "Acme Inc. owns Widget LLC."])
        yield m


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_old_name_still_works_and_names_its_new_place(mem, old):
    part, new = MOVED[old]
    with pytest.warns(fastmem.FastmemDeprecationWarning, match=rf"Memory\.{old} is now Memory\.{part}\.{new}"):
        got = getattr(mem, old)
    want = getattr(getattr(mem, part), new)
    if callable(want) and hasattr(want, "__self__"):
        assert got.__self__ is want.__self__ and got.__func__ is want.__func__
    else:
        assert got is want or got == want


def test_old_names_give_the_same_answers(mem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastmem.FastmemDeprecationWarning)
        assert mem.facts(1) == mem.graph.facts(1)
        assert [e.name for e in mem.entity("Alice")] == [e.name for e in mem.graph.entity("Alice")]
        assert mem.check().ok and mem.stats()["memories"] == mem.admin.stats()["memories"] == 3
        assert mem.categories() == mem.categories.list() and mem.chunks() == mem.chunks.list() == []
        assert mem.pending_count() == mem.pending.count() == 0
        assert mem.analogy_settings is mem.analogy.settings
        ex = mem.extractor
        mem.extractor = None  # the old setter sets the new place
        assert mem.admin.extractor is None
        mem.admin.extractor = ex


def test_the_callable_parts_warn(mem):
    with pytest.warns(fastmem.FastmemDeprecationWarning, match=r"categories\.list"):
        mem.categories("proposed")
    with pytest.warns(fastmem.FastmemDeprecationWarning, match=r"chunks\.list"):
        mem.chunks(scope=None)


@pytest.mark.parametrize("keyword", sorted(OLD_SLOT_KEYWORDS - {"analogy_mapping", "analogy_ranker"}))
def test_the_old_slot_keywords_still_set_the_settings(tmp_path, keyword):
    value = fastmem.AnalogySettings().__dict__[keyword]
    with pytest.warns(fastmem.FastmemDeprecationWarning, match=r"AnalogySettings"):
        m = fastmem.Memory(str(tmp_path / "k.db"), extractor=None, **{keyword: value})
    with m:
        assert getattr(m.analogy.settings, keyword) == value


def test_settings_are_one_value_copied_per_memory(tmp_path):
    s = fastmem.AnalogySettings(z_min=2.5, surface_rule="recall")
    with fastmem.Memory(str(tmp_path / "a.db"), extractor=None, analogy=s) as a, \
            fastmem.Memory(str(tmp_path / "b.db"), extractor=None, analogy=s) as b:
        a.analogy.settings.z_min = 3.0
        assert (a.analogy.settings.z_min, b.analogy.settings.z_min, s.z_min) == (3.0, 2.5, 2.5)
        b.analogy.settings = fastmem.AnalogySettings(min_store=4)
        assert b.admin.engine.slot.settings.min_store == 4
        with pytest.raises(fastmem.InvalidInput):
            b.analogy.settings.surface_rule = "cosine"
        with pytest.raises(fastmem.InvalidInput):
            fastmem.Memory(str(tmp_path / "c.db"), analogy={"z_min": 2})
        with pytest.raises(TypeError, match="unexpected keyword"):
            fastmem.Memory(str(tmp_path / "c.db"), zmin=2)
        with pytest.warns(fastmem.FastmemDeprecationWarning), pytest.raises(fastmem.InvalidInput):
            fastmem.Memory(str(tmp_path / "c.db"), analogy_ranker="yes")


def test_an_unknown_name_is_an_attribute_error(mem):
    with pytest.raises(AttributeError, match="no attribute 'recal'"):
        mem.recal("x")
