"""Bulk ingest through Ray (``fastmem.distributed``) on a local cluster started here (127.0.0.1,
2 worker CPUs): the same store as ``remember_many`` on real conversation turns, a worker
killed mid-import loses and duplicates nothing, a killed driver resumes."""

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import apsw
import pytest
import ray

import fastmem
from fastmem import distributed
from tests.shared import DATA

LOCOMO = DATA / "locomo-dev"
N = 320  # five batches of 64 over two derive actors


def _turns(n):
    """``n`` conversation turns with a source per session: the LoCoMo dev conversations when
    ../shared/data has them, else the bench's synthetic memories in sessions of 8-29 turns (the
    same paths either way: extraction, grouping by source, the context channel)."""
    out = []
    for f in sorted(LOCOMO.glob("*.json")):
        d = json.load(open(f))
        for k, v in d.items():
            if re.fullmatch(r"session_\d+", k) and isinstance(v, list):
                out += [{"text": f"{t['speaker']}: {t['text']}", "source": f"locomo-{f.stem}-{k}"} for t in v]
    if len(out) < n:
        from fastmem.evaluate.bench import texts

        out, sizes = [], itertools.cycle((17, 8, 29, 12, 23))
        synthetic = texts(n, seed=3)
        while len(out) < n:
            session, size = len(out), next(sizes)
            out += [{"text": f"{('Ana', 'Ben')[i % 2]}: {t}", "source": f"synthetic-{session}"}
                    for i, t in enumerate(synthetic[len(out) : len(out) + size])]
    return out[:n]


def _rows(path, tmp):
    out = os.path.join(tmp, os.path.basename(path) + ".jsonl")
    with fastmem.Memory(path, progress=False) as m:
        m.admin.export_jsonl(out, vectors=True)
    keep = []
    for line in open(out):
        r = json.loads(line)
        if "text" in r:  # the codes: computed by the derive step, or at commit by remember_many
            keep.append((r["text"], r.get("source"), json.dumps(r.get("facts"), sort_keys=True),
                         json.dumps(r.get("events"), sort_keys=True), json.dumps(r.get("code"), sort_keys=True)))
    return keep


@pytest.fixture(scope="module")
def cluster():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             _node_ip_address="127.0.0.1")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The turns and the store ``remember_many`` writes from them (grouped by source, in order)."""
    items = _turns(N)
    tmp = str(tmp_path_factory.mktemp("ref"))
    path = os.path.join(tmp, "ref.db")
    with fastmem.Memory(path, progress=False) as m:
        start = 0
        while start < len(items):
            end = start
            while end < len(items) and items[end]["source"] == items[start]["source"]:
                end += 1
            m.remember_many([x["text"] for x in items[start:end]], source=items[start]["source"])
            start = end
    return items, _rows(path, tmp)


def test_a_ray_import_writes_the_store_remember_many_writes(cluster, reference, tmp_path):
    items, want = reference
    rep = distributed.ingest(items, str(tmp_path / "ray.db"), batch_size=64)
    assert rep["memories"] == N and rep["skipped"] == 0 and rep["batches"] == 5
    assert _rows(str(tmp_path / "ray.db"), str(tmp_path)) == want  # ids, order, facts, events, codes
    again = distributed.ingest(items, str(tmp_path / "ray.db"), batch_size=64)
    assert again["memories"] == 0 and again["skipped"] == 5  # the same job twice writes nothing twice


SMALL = 250


def _whole(path, items):
    """Every item once, in input order, fully derived, and the file checks clean."""
    with fastmem.Memory(path, progress=False) as m:
        texts = [t for (t,) in m.admin.engine.db.execute("SELECT text FROM memories ORDER BY id")]
        rep = m.admin.check()
        assert texts == [x["text"] for x in items]
        assert rep.ok and rep.counts["embeddings"] == len(items) and rep.counts["pending"] == 0, rep


def _committed(path):
    if not os.path.exists(path):
        return 0
    con = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        con.setbusytimeout(10_000)
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name='ingest_log'").fetchone():
            return 0
        return con.execute("SELECT count(*) FROM ingest_log").fetchone()[0]
    finally:
        con.close()


def _deriver_pids():
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cmd = (p / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if "_Deriver" in cmd:
                pids.append(int(p.name))
    return pids


def test_a_worker_killed_during_an_import_loses_and_duplicates_nothing(cluster, tmp_path):
    items = _turns(SMALL)
    path = str(tmp_path / "killed.db")
    killed = []

    def kill_one_worker():
        deadline = time.monotonic() + 300
        while _committed(path) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        pids = _deriver_pids()
        if pids:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    t = threading.Thread(target=kill_one_worker)
    t.start()
    rep = distributed.ingest(items, path, batch_size=25)
    t.join()
    assert killed, "no derive worker was found to kill"
    assert _committed(path) == SMALL // 25 and rep["memories"] == SMALL
    _whole(path, items)


def test_a_killed_driver_resumes_from_the_last_committed_batch(cluster, tmp_path):
    items = _turns(SMALL)
    src = tmp_path / "turns.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in items))
    path = str(tmp_path / "resumed.db")
    address = ray.get_runtime_context().gcs_address  # the CLI joins the running cluster
    cmd = [sys.executable, "-m", "fastmem", "ingest", "--db", path, str(src), "--ray", address, "--batch", "25",
           "--json"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("RAY_ADDRESS", None)
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while _committed(path) < 3 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)  # the driver (its workers on the cluster go with its job)
    first.wait(60)
    before = _committed(path)
    assert 3 <= before < 10, f"the driver was not killed mid-import ({before} of 10 batches)"
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-2000:]
    rep = json.loads(second.stdout)
    assert rep["skipped"] >= before and rep["memories"] == SMALL - 25 * rep["skipped"]
    _whole(path, items)


def test_shard_by_scope_writes_one_file_per_scope_and_reembed_runs_on_the_cluster(cluster, tmp_path):
    items = [{"text": t, "scope": s} for t, s in [
        ("Alice moved to Berlin in May.", "user/alice"), ("Bob works for Initech as a data engineer.", "bob"),
        ("Alice prefers green tea over coffee.", "user/alice"), ("The office closes at six.", ""),
        ("Bob plays the cello on Sundays.", "bob"), ("Alice's sister lives in Porto.", "user/alice")]]
    folder = str(tmp_path / "shards")
    rep = distributed.ingest(items, folder, batch_size=4, shard_by="scope")
    assert rep["memories"] == 6 and sorted(os.listdir(folder)) == sorted(
        f for s in ("user%2Falice", "bob", "_") for f in (s + ".db", s + ".db.hnsw", s + ".db.hnsw.json"))
    for scope, want in [("user/alice", 3), ("bob", 2), ("", 1)]:
        path = distributed.shard_path(folder, scope)
        with fastmem.Memory(path, progress=False) as m:
            assert m.count(scope=scope) == want == m.count()
    alice = distributed.shard_path(folder, "user/alice")
    with fastmem.Memory(alice, progress=False) as m:
        before = dict(zip((1, 2, 3), m.admin.engine.index.get([1, 2, 3])))
        m.admin.engine.db.execute("UPDATE embeddings SET vec=zeroblob(length(vec))")  # spoil the vectors
    assert distributed.reembed(alice) == 3
    with fastmem.Memory(alice, progress=False) as m:
        for i, v in before.items():
            assert float(m.admin.engine.index.get([i])[0] @ v) > 0.999
        assert m.recall("where does Alice's sister live?", k=1, analogy=False).hits[0].id == 3


def test_an_address_that_does_not_answer_is_a_clear_error(tmp_path):
    src = tmp_path / "one.txt"
    src.write_text("Alice moved to Berlin in May.\n")
    out = subprocess.run([sys.executable, "-m", "fastmem", "ingest", "--db", str(tmp_path / "x.db"), str(src),
                          "--ray", "127.0.0.1:9"], capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 1 and "cannot reach a Ray cluster at 127.0.0.1:9" in out.stderr
    assert not (tmp_path / "x.db").exists()


def test_a_commit_that_fails_before_its_commit_leaves_the_index_and_the_file_agreeing(tmp_path):
    """The commit step fails after the batch's rows and before COMMIT (its mark cannot be
    written): nothing of the batch is in the file, and nothing of it is in the process either
    (vector index, structural codes, scopes); the same batch commits whole afterwards."""
    path = str(tmp_path / "m.db")
    items = [{"text": x["text"], "scope": "s", "source": x["source"], "meta": "{}", "at": None, "speaker": None,
              "triples": None} for x in _turns(24)]
    with fastmem.Memory(path, progress=False) as m:
        m.remember("Ana keeps the spare key under the blue flowerpot.", scope="s")
        prep, rows = distributed.derive_batch(items, m.admin.embedder, m.admin.extractor)
        other = apsw.Connection(path)  # another connection: the mark's insert aborts
        other.execute("CREATE TABLE IF NOT EXISTS ingest_log(job TEXT NOT NULL, batch INTEGER NOT NULL, "
                      "rows INTEGER NOT NULL, at REAL NOT NULL, PRIMARY KEY(job, batch)) WITHOUT ROWID;"
                      "CREATE TRIGGER no_marks BEFORE INSERT ON ingest_log BEGIN SELECT RAISE(ABORT, 'disk full'); END;")
        with pytest.raises(apsw.ConstraintError):
            distributed.commit_batch(m, "job", 0, prep, rows)
        assert m.count() == 1
        assert len(m.admin.engine.index.labels()) == 1, "the index holds memories the file does not"
        assert m.admin.engine.structure.coded() == m.admin.stats()["codes"], "the codes in the process differ from the file's"
        assert m.admin.engine.structure.coded(m.admin.engine.scopes.allowed("s")) == m.admin.stats()["codes"]
        hits = m.recall(items[0]["text"], k=5, scope="s", analogy=False).hits
        assert [h.id for h in hits] == [1] or all(h.id == 1 for h in hits)
        other.execute("DROP TRIGGER no_marks")
        other.close()
        ids = distributed.commit_batch(m, "job", 0, prep, rows)
        assert len(ids) == len(items) and m.count() == 1 + len(items)
        assert len(m.admin.engine.index.labels()) == 1 + len(items) and m.admin.engine.structure.coded() == m.admin.stats()["codes"]
        assert distributed.commit_batch(m, "job", 0, prep, rows) is None  # marked: never written twice
        assert m.count() == 1 + len(items)
