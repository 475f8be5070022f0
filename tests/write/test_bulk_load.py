"""Bulk load: an export with everything derived (``export --vectors``) imported without a model.

The development chats (tests/data/chats.json, ~1,200 messages with facts, instructions,
preferences and long answers) are written with extraction, exported with their vectors, codes,
windows and statement vectors, and imported into a new store. The import embeds, parses and
encodes nothing, builds the vector index while it writes the rows (a batch of at least
``BULK_THREADS_MIN``), and gives the same file as the writes did: ids, canonical names, facts,
events, codes, statistics, statements, windows and the same answers.
"""

import json
import shutil
from datetime import datetime, timezone

import numpy as np
import pytest

import fastmem
from fastmem.derived.ann import BULK_THREADS_MIN
from fastmem.passes import categories
from tests.shared import TESTDATA

CHATS = TESTDATA / "chats.json"

QUESTIONS = ["How should I format code snippets?", "What did I say about my sister?", "Which database do I prefer?",
             "How do I get better at pull-ups?", "Why did my cake sink in the middle?"]


def _messages():
    chats = json.loads(CHATS.read_text(encoding="utf-8"))["chats"]
    return [(f"{m['role'].capitalize()}: {m['text']}", datetime.fromtimestamp(m["at"], timezone.utc).isoformat())
            for c in chats for m in c["messages"]]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    if not CHATS.exists():
        pytest.skip("tests/data/chats.json is missing")
    d = tmp_path_factory.mktemp("bulk")
    msgs = _messages()
    assert len(msgs) >= BULK_THREADS_MIN  # the bulk path, with its index build beside the writes
    src = str(d / "src.db")
    with fastmem.Memory(src) as m:
        m.remember_many([t for t, _ in msgs], at=[a for _, a in msgs], progress=False)
        m.admin.export_jsonl(str(d / "all.jsonl"), vectors=True)
    return src, str(d / "all.jsonl"), d


def _table(m, sql):
    return m.admin.engine.db.execute(sql).fetchall()


def test_an_import_of_derived_rows_gives_the_same_store_without_a_model(exported, monkeypatch):
    src, path, d = exported
    dst = str(d / "dst.db")
    with fastmem.Memory(dst) as b:
        b.recall("warm up", k=1, record=False)

        def refuse(*a, **k):
            raise AssertionError("a bulk load must not compute what the export carries")

        monkeypatch.setattr(b.admin.embedder, "encode", refuse)
        monkeypatch.setattr(b.admin, "extractor", None)  # nothing to parse either
        monkeypatch.setattr(b.admin.engine.structure.encoder, "encode", refuse)
        n = b.admin.import_jsonl(path)
        carried = b.admin.engine.index.carried_from
        monkeypatch.undo()
    with fastmem.Memory(src) as a, fastmem.Memory(dst) as b:
        assert n == len(a) == len(b)
        for sql in ("SELECT id, text, scope, at, speaker, created FROM memories ORDER BY id",
                    "SELECT key, name, type FROM nodes ORDER BY key",
                    "SELECT e.memory_id, e.pos, s.key, e.rel, o.key FROM edges e JOIN nodes s ON s.id=e.subj "
                    "JOIN nodes o ON o.id=e.obj ORDER BY e.memory_id, e.pos",
                    "SELECT memory_id, events FROM events ORDER BY memory_id",
                    "SELECT memory_id, dim, code, nterms, terms FROM codes ORDER BY memory_id",
                    "SELECT memory_id, vec FROM embeddings ORDER BY memory_id",
                    "SELECT memory_id, n, vecs FROM windows ORDER BY memory_id",
                    "SELECT memory_id, kind, polarity, sentence, topic, vec FROM standing ORDER BY memory_id",
                    "SELECT word, n FROM event_df ORDER BY word"):
            assert _table(a, sql) == _table(b, sql), sql
        assert _table(b, "SELECT count(*) FROM windows")[0][0] > 0 and _table(b, "SELECT count(*) FROM standing")[0][0] > 0
        sa, sb = a.admin.engine.structure.stats, b.admin.engine.structure.stats
        assert sa.n == sb.n and np.allclose(sa.s, sb.s, atol=1e-9) and np.allclose(sa.m, sb.m, atol=1e-9)
        assert b.admin.engine.index.live == len(b)
        for q in ("snippets", "sister OR database", "cake AND middle"):  # the keyword index, row for row
            fts = "SELECT rowid, bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank, rowid"
            assert a.admin.engine.db.execute(fts, (q,)).fetchall() == b.admin.engine.db.execute(fts, (q,)).fetchall(), q
        for q in QUESTIONS:
            ra, rb = a.recall(q, k=5, record=False), b.recall(q, k=5, record=False)
            assert [h.id for h in ra.hits] == [h.id for h in rb.hits], q
            assert [s.id for s in ra.standing] == [s.id for s in rb.standing], q
            assert (ra.analogy and ra.analogy.id) == (rb.analogy and rb.analogy.id), q
        assert b.admin.check().ok
    # the export carried the source's index graph and the import took it as its index
    header = json.loads(open(path, encoding="utf-8").readline())
    assert header["index_graph"]["file"] == "all.jsonl.hnsw" and header["index_graph"]["count"] == n
    assert carried == path + ".hnsw"


@pytest.mark.parametrize("damage", ["changed", "missing"])
def test_an_import_whose_index_graph_is_changed_or_missing_builds_its_own(exported, damage):
    """The carried graph is only a cache: a file that is not the one the header describes (a
    flipped byte) or no file at all, and the import builds the index from the vectors, with
    the same answers."""
    src, original, d = exported
    path = str(d / f"{damage}.jsonl")
    shutil.copy(original, path)
    header = json.loads(open(path, encoding="utf-8").readline())
    header_graph = d / header["index_graph"]["file"]
    graph = d / f"{damage}.graph"
    if damage == "changed":
        raw = bytearray(header_graph.read_bytes())
        raw[len(raw) // 2] ^= 0x01
        graph.write_bytes(bytes(raw))
    lines = open(path, encoding="utf-8").read().splitlines(keepends=True)
    header["index_graph"]["file"] = graph.name
    lines[0] = json.dumps(header) + "\n"
    open(path, "w", encoding="utf-8").writelines(lines)
    dst = str(d / f"{damage}.db")
    with fastmem.Memory(dst) as b:
        n = b.admin.import_jsonl(path)
        assert n == len(b) and b.admin.engine.index.live == n and b.admin.engine.index.carried_from is None
    with fastmem.Memory(src) as a, fastmem.Memory(dst) as b:
        for q in QUESTIONS:
            assert [h.id for h in a.recall(q, k=5, record=False).hits] == [h.id for h in b.recall(q, k=5, record=False).hits]
        assert b.admin.check().ok


def test_a_failed_bulk_load_leaves_nothing_and_a_retry_is_found(exported, monkeypatch):
    src, original, d = exported
    dst, path = str(d / "failed.db"), str(d / "with-category.jsonl")
    shutil.copy(original, path)

    def disk_full(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(categories, "restore", disk_full)
    with open(path, "a", encoding="utf-8") as fh:  # a category line, so that restore is reached
        fh.write(json.dumps({"category": {"name": "things", "status": "proposed", "relations": [], "scope": None,
                                          "members": []}}) + "\n")
    with fastmem.Memory(dst) as m:
        with pytest.raises(OSError):
            m.admin.import_jsonl(path)
        # the index build that began beside the writes is withdrawn with them
        assert len(m) == 0 and m.admin.engine.index.live == 0 and len(m.admin.engine.index.labels()) == 0
        assert m.recall("How do I get better at pull-ups?", record=False, analogy=False).hits == ()
        monkeypatch.undo()
        n = m.admin.import_jsonl(path)
        assert n == len(m) and m.admin.engine.index.live == n
        hit = m.recall("How do I get better at pull-ups?", k=3, record=False).hits
        assert hit and "pull-up" in hit[0].text
        assert m.admin.check().ok
    with fastmem.Memory(dst) as m:  # reopened: the saved index agrees with the file
        assert m.admin.engine.index.live == len(m) and m.admin.check().ok
