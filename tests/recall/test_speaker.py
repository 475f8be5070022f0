"""Speakers: who said a memory, and recall that prefers what the person the turn names said."""

import pytest

import fastmem
from fastmem.errors import InvalidInput
from tests.shared import noise_texts

CHAT = [("Caroline", "I love to paint, mostly the lake at sunrise."),
        ("Melanie", "Last weekend I made a horse picture on the beach."),
        ("Caroline", "Thanks! The support group meets every Tuesday."),
        ("Melanie", "We went camping in the mountains with the kids.")]


def _store(mem):
    mem.remember_many(noise_texts(120, seed=5), source="notes")
    return mem.remember_many([t for _, t in CHAT], speaker=[s for s, _ in CHAT], source="chat")


def test_recall_prefers_what_the_named_speaker_said(mem):
    ids = _store(mem)
    q = "What did Melanie paint?"
    hits = mem.recall(q, k=5, record=False).hits
    assert hits[0].id == ids[1] and hits[0].speaker == "Melanie" and "speaker" in hits[0].why
    assert all("speaker" not in h.why for h in hits if h.speaker != "Melanie")
    plain = [h.id for h in mem.recall(q, k=5, record=False, channels=("keyword", "vector", "context")).hits]
    assert plain[0] == ids[0]  # without it (and the graph, whose facts name the speaker), Caroline's "paint" leads
    assert mem.get(ids[1])["speaker"] == "Melanie"


def test_a_given_name_alone_names_a_full_name_speaker(mem):
    mem.remember_many(noise_texts(60, seed=6))
    a = mem.remember("I sold the old boat to a neighbour.", speaker="Jon Smith")
    b = mem.remember("I sold the old boat at the harbour market.", speaker="Ana Lopez")
    hits = mem.recall("Who did Jon sell the boat to?", k=3, record=False).hits
    assert hits[0].id == a and "speaker" in hits[0].why
    assert all("speaker" not in h.why for h in hits if h.id == b)
    # a first name counts only written as a name: "jon" in lower case does not name Jon Smith
    low = {h.id: h for h in mem.recall("who did jon sell the boat to?", k=3, record=False).hits}
    assert a in low and "speaker" not in low[a].why
    # the full name counts in any case
    full = {h.id: h for h in mem.recall("who did jon smith sell the boat to?", k=3, record=False).hits}
    assert "speaker" in full[a].why


@pytest.mark.parametrize("bad", ["", "   ", 7, "x" * 201, "bad\x00name", ["Ann"]])
def test_bad_speakers_are_rejected_and_nothing_is_written(mem, bad):
    mem.remember("Something to keep.")
    with pytest.raises(InvalidInput):
        mem.remember_many(["one", "two"], speaker=bad)
    assert len(mem) == 1


def test_update_sets_and_clears_the_speaker_and_export_keeps_it(mem, tmp_path):
    mid = mem.remember("The gate code is 4512.", speaker="Ann")
    mem.update(mid, meta={"k": 1})
    assert mem.get(mid)["speaker"] == "Ann"  # other changes leave it
    mem.update(mid, speaker="Bob")
    assert mem.get(mid)["speaker"] == "Bob"
    path = tmp_path / "out.jsonl"
    mem.admin.export_jsonl(path)
    with fastmem.Memory(str(tmp_path / "copy.db")) as other:
        other.admin.import_jsonl(path)
        assert other.get(mid)["speaker"] == "Bob"
    mem.update(mid, speaker=None)
    assert mem.get(mid)["speaker"] is None
    with pytest.raises(InvalidInput):
        mem.update(mid, speaker=" ")


def test_a_name_in_front_of_the_text_is_the_speaker_when_none_is_given(mem):
    """Transcripts written as "Name: text" without ``speaker=`` (plain writes on LoCoMo dev:
    fused any@5 0.623 -> 0.641); labels, times and URLs are never speakers."""
    from fastmem.util.text import prefix_speaker

    mem.remember_many(noise_texts(120, seed=5))
    ids = mem.remember_many([f"{s}: {t}" for s, t in CHAT])
    hits = mem.recall("What did Melanie paint?", k=5, record=False).hits
    assert hits[0].id == ids[1] and "speaker" in hits[0].why
    assert all("speaker" not in h.why for h in hits if not h.text.startswith("Melanie:"))
    assert [prefix_speaker(t) for t in ("Jon Smith: hi there", "O'Brien: yes", "Note: buy milk", "10:30: standup",
                                        "https://example.org", "The plan: go", "Ingredients: flour", "Caroline:hi",
                                        "melanie: lower case")] == ["Jon Smith", "O'Brien"] + [None] * 7
