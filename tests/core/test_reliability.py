"""Reliability: concurrent processes, crashes, corrupt files. Bounded in CI; set
FASTMEM_STRESS=1 for the large versions (10,000+ operations, 50+ kills)."""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import apsw
import pytest

import fastmem
from fastmem.errors import StoreCorrupt

STRESS = bool(os.environ.get("FASTMEM_STRESS"))

WORKER = textwrap.dedent(
    """
    import json, os, random, sys
    import fastmem

    path, w, n_ops, log = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    rnd = random.Random(w)
    out = open(log, "a")
    def ack(**kw):
        out.write(json.dumps(kw) + "\\n"); out.flush()
    mine = []
    ops = 0
    with fastmem.Memory(path) as m:
        while ops < n_ops:
            r = rnd.random()
            if r < 0.35:
                toks = [f"zq{w}x{ops + j}q" for j in range(5)]
                ids = m.remember_many([f"Worker {w} met Agent{w} in Town{j % 3} about {t}." for j, t in enumerate(toks)],
                                      scope=f"w{w}")
                for i, t in zip(ids, toks):
                    ack(op="add", id=i, tok=t); mine.append((i, t))
                ops += 5
            elif r < 0.45:
                t = f"zq{w}x{ops}q"
                i = m.remember(f"Single note {t} from worker {w}.", scope=f"w{w}")
                ack(op="add", id=i, tok=t); mine.append((i, t)); ops += 1
            elif r < 0.75:
                m.recall(f"worker {w} note {rnd.randrange(1000)}", k=5, session=f"s{w}"); ops += 1
            elif r < 0.85 and mine:
                i, t = mine.pop(rnd.randrange(len(mine)))
                m.forget(i); ack(op="forget", id=i, tok=t); ops += 1
            elif r < 0.97 and mine:
                m.feedback(rnd.choice(mine)[0], engaged=rnd.random() < 0.7); ops += 1
            elif w == 0:
                m.consolidate(scope=f"w{w}"); ops += 1
    ack(op="done", ops=ops)
    """
)


def test_four_processes_mixing_every_operation(tmp_path):
    path = str(tmp_path / "c.db")
    n_ops = 2600 if STRESS else 150  # per worker: 10,400 in all with FASTMEM_STRESS=1
    with fastmem.Memory(path) as m:
        m.remember("seed memory")
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    logs = [tmp_path / f"w{w}.log" for w in range(4)]
    procs = [subprocess.Popen([sys.executable, str(script), path, str(w), str(n_ops), str(logs[w])],
                              stderr=subprocess.PIPE, text=True) for w in range(4)]
    errs = [p.communicate(timeout=3000)[1] for p in procs]
    for p, e in zip(procs, errs):
        assert p.returncode == 0, e[-2000:]
        assert "database is locked" not in e
    added, forgotten, done = {}, {}, 0
    for log in logs:
        for line in log.read_text().splitlines():
            ev = json.loads(line)
            if ev["op"] == "add":
                added[ev["id"]] = ev["tok"]
            elif ev["op"] == "forget":
                forgotten[ev["id"]] = ev["tok"]
            else:
                done += ev["ops"]
    assert done >= 4 * n_ops
    live = {i: t for i, t in added.items() if i not in forgotten}
    with fastmem.Memory(path) as m:
        have = {r[0] for r in m.admin.engine.db.execute("SELECT id FROM memories")}
        assert set(live) <= have  # every acknowledged write is there
        assert not set(forgotten) & have  # every acknowledged forget is gone...
        labels = set(m.admin.engine.index.labels().tolist())
        assert set(live) <= labels and not set(forgotten) & labels  # ...from the vector index
        for table in ("embeddings", "codes", "events", "usage"):
            gone = m.admin.engine.db.execute(f"SELECT count(*) FROM {table} WHERE memory_id IN (SELECT value FROM json_each(?))",
                                (json.dumps(list(forgotten)),)).fetchone()[0]
            assert gone == 0, table
        rnd = random.Random(5)
        chunks = set(m.chunks.list())
        for i, t in rnd.sample(sorted(live.items()), min(40, len(live))):
            shown = [h.id for h in m.recall(t, k=3, record=False, channels=("keyword",)).hits]
            # found itself, or through a chunk that stands for it
            assert i in shown or any(i in {r.id for r in m.expand(c)} for c in shown if c in chunks), (i, t)
        for i, t in rnd.sample(sorted(forgotten.items()), min(20, len(forgotten))):
            assert i not in [h.id for h in m.recall(t, k=3, record=False).hits]
        rep = m.admin.check()
        assert rep.ok, rep.problems


CRASHER = textwrap.dedent(
    """
    import sys
    import fastmem
    path, op, b = sys.argv[1], sys.argv[2], int(sys.argv[3])
    start = b
    with fastmem.Memory(path) as m:
        while True:
            if op in ("remember_many", "remember_later"):  # later: wait=False, derived in the background
                if op == "remember_later" and b >= start + 25:  # commits take a millisecond: bound the store
                    m.pending.derive()
                    break
                m.remember_many([f"Batch {b} item {j}: the courier left parcel kq{b}x{j}z with Nadia in Lisbon."
                                 for j in range(20)], wait=op == "remember_many")
                print("ack", b, flush=True)
                b += 1
            elif op == "forget":
                if b >= start + 10:  # a few per run, so the store never empties
                    break
                b += 1
                row = m.admin.engine.db.execute("SELECT id, text FROM memories ORDER BY random() LIMIT 1").fetchone()
                if row is None:
                    break
                m.forget(row[0])
                batch = int(row[1].split()[1].rstrip(":")) if row[1].startswith("Batch ") else -1
                print("forgot", row[0], batch, flush=True)
            elif op == "consolidate":
                m.consolidate()
                print("consolidated", flush=True)
            elif op == "reembed":
                m.admin.reembed(progress=False)
                print("reembedded", flush=True)
    """
)


def _kill_at_random(script, path, op, start, seed):
    """Run ``op`` in a child, SIGKILL it at a random moment after its first acknowledgement
    (or of its start when it acknowledges nothing within a minute); its stdout lines."""
    rnd = random.Random(seed)
    child = subprocess.Popen([sys.executable, str(script), path, op, str(start)], stdout=subprocess.PIPE, text=True)
    lines: list[str] = []
    first = threading.Event()

    def read():
        for line in child.stdout:
            lines.append(line)
            first.set()
        first.set()  # the child ended

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    first.wait(60)
    # the kill point: a random moment into the operation (what the test is about, not a wait)
    time.sleep(rnd.uniform(0.0, 2.5))
    child.send_signal(signal.SIGKILL)
    child.wait()
    reader.join(5)
    # only whole lines: a kill can land inside a print (unbuffered output writes it in pieces),
    # and an acknowledgement the child never finished writing was not given
    return [x.strip() for x in lines if x.endswith("\n") and x.strip()]


def test_sigkill_at_random_points_loses_nothing_acknowledged(tmp_path):
    path = str(tmp_path / "k.db")
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    rounds = 60 if STRESS else 5  # the default kills once in each of the five operations
    ops = ["remember_many", "remember_later", "forget", "consolidate", "reembed"] * rounds
    acked, forgotten, lost = set(), set(), {}
    for rnd in range(rounds):
        op = ops[rnd]
        lines = _kill_at_random(script, path, op, rnd * 100_000, rnd)
        for line in lines:
            parts = line.split()
            if parts[0] == "ack":
                acked.add(int(parts[1]))
            elif parts[0] == "forgot":
                forgotten.add(int(parts[1]))
                lost[int(parts[2])] = lost.get(int(parts[2]), 0) + 1
        con = apsw.Connection(path)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        con.close()
        with fastmem.Memory(path) as m:  # opens; derived structures reconciled on open
            rep = m.admin.check()
            assert rep.ok, (op, rep.problems)
            per_batch: dict[int, int] = {}
            for (t,) in m.admin.engine.db.execute("SELECT text FROM memories WHERE id NOT IN (SELECT memory_id FROM chunks)"):
                if t.startswith("Batch "):
                    b = int(t.split()[1].rstrip(":"))
                    per_batch[b] = per_batch.get(b, 0) + 1
            # an acknowledged batch is whole, less what was forgotten; a kill can land between a
            # forget's commit and its acknowledgement, so each forget run may hide one
            slack = sum(1 for o in ops[: rnd + 1] if o == "forget")
            missing = 0
            for b, c in per_batch.items():
                assert c + lost.get(b, 0) <= 20, (op, b, c)
                missing += 20 - c - lost.get(b, 0)
            missing += sum(20 - lost.get(b, 0) for b in acked if b not in per_batch)
            assert missing <= slack, (op, missing, slack)  # no batch half written
            ids = {r[0] for r in m.admin.engine.db.execute("SELECT id FROM memories")}
            assert not forgotten & ids
    with fastmem.Memory(path) as m:
        n = len(m)
        assert n > 0
        rnd = random.Random(3)
        for b in rnd.sample(sorted(acked), min(10, len(acked))):
            j = rnd.randrange(20)
            hit = m.admin.engine.db.execute("SELECT id FROM memories WHERE text LIKE ?", (f"%kq{b}x{j}z%",)).fetchone()
            if hit and hit[0] not in forgotten:
                assert hit[0] in [h.id for h in m.recall(f"kq{b}x{j}z", k=3, record=False).hits]


def test_no_half_written_batch_after_kills(tmp_path):
    path = str(tmp_path / "h.db")
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    acked = set()
    for rnd in range(20 if STRESS else 4):
        for line in _kill_at_random(script, path, "remember_many", rnd * 100_000, 100 + rnd):
            acked.add(int(line.split()[1]))
    with fastmem.Memory(path) as m:
        assert len(m) % 20 == 0 and len(m) >= 20 * len(acked)


# -- corruption ----------------------------------------------------------------------------
@pytest.fixture
def small_store(tmp_path):
    path = str(tmp_path / "s.db")
    with fastmem.Memory(path) as m:
        m.remember_many([f"Note {i}: the boiler in flat {i} was serviced on Monday." for i in range(300)])
        m.remember("The spare key is under the blue flowerpot.")
    return path


def test_truncated_file_is_a_named_error(small_store):
    size = os.path.getsize(small_store)
    with open(small_store, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(StoreCorrupt, match="truncated"):
        fastmem.Memory(small_store)


def test_garbage_file_is_a_named_error(tmp_path):
    p = tmp_path / "g.db"
    p.write_bytes(os.urandom(64 * 1024))
    with pytest.raises(StoreCorrupt):
        fastmem.Memory(str(p))


def test_newer_schema_is_a_named_error(small_store):
    con = apsw.Connection(small_store)
    con.execute("INSERT INTO _fastmem_migrations(version, name, applied) VALUES (999, 'future', 0)")
    con.close()
    with pytest.raises(StoreCorrupt, match="newer"):
        fastmem.Memory(small_store)


def _top(path):
    with fastmem.Memory(path) as m:
        return [(h.id, round(h.score, 6)) for h in m.recall("where is the spare key", k=5, record=False).hits], \
            m.admin.engine.index.rebuilt_because


def test_index_of_another_store_or_model_is_rebuilt(small_store, tmp_path):
    before, _ = _top(small_store)
    other = str(tmp_path / "other.db")
    with fastmem.Memory(other) as m:
        m.remember_many([f"Unrelated text {i} about harbour cranes." for i in range(301)])
    shutil.copyfile(other + ".hnsw", small_store + ".hnsw")
    shutil.copyfile(other + ".hnsw.json", small_store + ".hnsw.json")
    after, why = _top(small_store)
    assert after == before and "another store" in why
    meta = json.load(open(small_store + ".hnsw.json"))
    meta["model_id"] = "someone/else"
    json.dump(meta, open(small_store + ".hnsw.json", "w"))
    after, why = _top(small_store)
    assert after == before and "someone/else" in why
    os.remove(small_store + ".hnsw")
    after, why = _top(small_store)
    assert after == before and why == "no index file"
