"""The ``fastmem`` console script, run as users run it: in a subprocess."""

import csv
import json
import os
import shutil
import struct
import subprocess
import sys

import pytest

from tests.shared import DATA

BIN = shutil.which("fastmem", path=os.path.dirname(sys.executable)) or shutil.which("fastmem")
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}

NOTES = """Nadia booked a flight to Lisbon for the Acme offsite.
Nadia reserved a hotel in Lisbon near the Acme office.
The Acme offsite in Lisbon starts on June 3.
Nadia will present the Acme roadmap in Lisbon.
Alice drives a Tesla to work.
Bob drives a Volvo to work.
Carol drives a Fiat to work.
The spare key is under the blue flowerpot.
Acme Corporation owns Widget Inc, a small subsidiary in Ohio.
"""


def fm(*args, db=None, stdin=None, env=None):
    cmd = [BIN, *args] + (["--db", db] if db else [])
    return subprocess.run(cmd, capture_output=True, text=True, input=stdin, env={**ENV, **(env or {})}, timeout=600)


def js(*args, db=None):
    out = fm(*args, "--json", db=db)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "notes.txt").write_text(NOTES)
    (d / "more.jsonl").write_text("\n".join(json.dumps(x) for x in [
        {"text": "Omar is moving to Oslo in August.", "scope": "omar", "at": "2024-05-01"},
        {"text": "Omar signed a lease in Oslo.", "scope": "omar", "meta": {"src": "chat"}},
    ]) + "\n")
    db = str(d / "m.db")
    out = fm("ingest", str(d / "notes.txt"), str(d / "more.jsonl"), db=db)
    assert out.returncode == 0, out.stderr
    assert "ingested 11 memories" in out.stderr
    return d, db


def test_help_and_usage_errors_exit_2():
    assert BIN, "the fastmem console script is not installed"
    out = fm("--help")
    assert out.returncode == 0 and "ingest" in out.stdout and "hermes" in out.stdout
    for args in (["no-such-command"], ["recall"], ["recall", "q", "-k", "x"], ["graph", "sideways", "x"],
                 ["categories", "approve"]):
        out = fm(*args, db="/tmp/never-used.db")
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr.count("\n") <= 1 and "Traceback" not in out.stderr
    out = fm("recall", "q", env={"FASTMEM_DB": ""})
    assert out.returncode == 2 and "FASTMEM_DB" in out.stderr


def test_missing_and_corrupt_stores_fail_in_one_line(tmp_path):
    out = fm("recall", "q", db=str(tmp_path / "absent.db"))
    assert out.returncode == 1 and "no store" in out.stderr and out.stderr.count("\n") == 1
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not sqlite at all " * 300)
    for cmd in (["stats"], ["recall", "x"], ["check"]):
        out = fm(*cmd, db=str(bad))
        assert out.returncode == 1 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    out = fm("ingest", str(tmp_path / "nope.txt"), db=str(tmp_path / "n.db"))
    assert out.returncode == 1 and "nope.txt" in out.stderr
    assert "Traceback" in fm("stats", "--debug", db=str(bad)).stderr


def test_recall_analogies_graph_stats(store):
    d, db = store
    res = js("recall", "where is the spare key", db=db)
    assert "flowerpot" in res["hits"][0]["text"] and {"id", "text", "score", "why", "scope", "at"} <= set(res["hits"][0])
    assert "flowerpot" in fm("recall", "where is the spare key", db=db).stdout
    scoped = js("recall", "Oslo", "--scope", "omar", db=db)
    assert {h["scope"] for h in scoped["hits"]} == {"omar"}
    assert next(h for h in scoped["hits"] if "moving" in h["text"])["at"].startswith("2024-05-01")
    an = js("analogies", "My friend Bob owns a red car.", db=db)
    assert an and "own" in " ".join(an[0]["why"]["matched"])
    ent = js("graph", "entity", "Nadia", db=db)
    assert ent and ent[0]["facts"]
    assert js("graph", "neighbours", "Nadia", db=db)
    assert js("graph", "path", "Nadia", "Lisbon", db=db)
    st = js("stats", db=db)
    assert st["memories"] == 11 and st["model"].endswith("all-MiniLM-L6-v2") and st["dimensions"] == 384
    assert "analogy_reason" in res and {"speaker", "source"} <= set(res["hits"][0])
    assert st["schema_version"] >= 8 and st["bytes"]["db"] > 0


def test_consolidate_expand_categories_check(store, tmp_path):
    d, db = store
    work = str(tmp_path / "w.db")
    shutil.copy(db, work)
    rep = js("consolidate", db=work)
    assert rep["created"]
    members = js("expand", str(rep["created"][0]), db=work)
    assert len(members) >= 3
    assert js("consolidate", db=work)["created"] == []
    props = js("categories", "propose", db=work)
    cars = next(c for c in props if {"Tesla", "Volvo", "Fiat"} <= set(c["members"]))
    assert js("categories", "approve", str(cars["id"]), db=work)[0]["status"] == "approved"
    assert js("categories", "list", "--status", "approved", db=work)[0]["id"] == cars["id"]
    assert js("categories", "revert", str(cars["id"]), db=work)[0]["status"] == "proposed"
    chk = fm("check", "--json", db=work)
    assert chk.returncode == 0 and json.loads(chk.stdout)["ok"]
    assert fm("dissolve", str(rep["created"][0]), db=work).returncode == 0
    assert fm("forget", str(members[0]["id"]), db=work).returncode == 0
    assert fm("forget", "99999", db=work).returncode == 3  # nothing found


def test_an_empty_answer_says_why_on_stderr_and_exits_3(store):
    """Nothing found is not a failure (exit 1) nor a success that printed nothing (exit 0)."""
    d, db = store
    for args, why in ((["graph", "entity", "Melanie"], "no entity named 'Melanie'"),
                      (["graph", "path", "Nadia", "Melanie"], "Melanie"),
                      (["recall", "zzxq", "--channels", "keyword"], "no memory matches"),
                      (["recall", "how are you doing today?", "--floor"], "above chance"),
                      (["expand", "424242"], "424242")):
        out = fm(*args, db=db)
        assert out.returncode == 3 and why in out.stderr and out.stderr.count("\n") == 1, (args, out.stderr)
    got = fm("recall", "where is the spare key", db=db)
    assert got.returncode == 0 and "no analogy:" in got.stdout  # and why, in words


@pytest.mark.skipif(not (DATA / "locomo-dev" / "26.json").exists(), reason="LoCoMo dev data not present")
def test_the_command_line_recalls_what_the_library_recalls_on_locomo(tmp_path):
    """Same channels, same defaults, and looking does not count as use: ``fastmem recall
    --json -k 10`` gives ``Memory.recall(k=10, record=False)``'s top 10 on 20 LoCoMo
    questions, asked one after another in fresh processes."""
    import re

    import fastmem

    d = json.loads((DATA / "locomo-dev" / "26.json").read_text())
    db = str(tmp_path / "l.db")
    with fastmem.Memory(db, progress=False) as m:
        for k, v in d.items():
            if re.fullmatch(r"session_\d+", k) and isinstance(v, list) and v:
                m.remember_many([f"{t['speaker']}: {t['text']}" for t in v], source=k, speaker=[t["speaker"] for t in v])
        qs = [x["question"] for x in d["qa"] if x.get("category") in (1, 2, 3, 4)][::7][:20]
        lib = [[h.id for h in m.recall(q, k=10, record=False).hits] for q in qs]
    cli = []
    for q in qs:
        out = fm("recall", q, "-k", "10", "--json", "--quiet", db=db)
        assert out.returncode == 0, out.stderr
        cli.append([h["id"] for h in json.loads(out.stdout)["hits"]])
    assert len(qs) == 20 and cli == lib


def test_export_then_import_gives_the_same_recall(store, tmp_path):
    d, db = store
    dump = tmp_path / "dump.jsonl"
    assert fm("export", "--out", str(dump), "--vectors", db=db).returncode == 0
    assert json.loads(dump.read_text().splitlines()[0])["fastmem_export"] == 1
    new = str(tmp_path / "copy.db")
    out = fm("import", str(dump), db=new)
    assert out.returncode == 0, out.stderr
    for q in ("where is the spare key", "What is Nadia doing in Lisbon?", "who drives a Volvo"):
        a, b = js("recall", q, "--no-record", db=db), js("recall", q, "--no-record", db=new)
        assert [(h["id"], h["text"]) for h in a["hits"]] == [(h["id"], h["text"]) for h in b["hits"]]
        assert (a["analogy"] or {}).get("id") == (b["analogy"] or {}).get("id")
    assert fm("import", str(d / "notes.txt"), db=str(tmp_path / "x.db")).returncode == 1


def test_remember_reads_stdin_and_reembed(tmp_path):
    db = str(tmp_path / "r.db")
    out = fm("remember", "--scope", "s", db=db, stdin="The gate code is 1234.\nThe cat eats at seven.\n")
    assert out.returncode == 0 and json.loads(out.stdout) == [1, 2]
    assert fm("reembed", db=db).returncode == 0
    assert "gate code" in js("recall", "what is the gate code", db=db)["hits"][0]["text"]


def test_hermes_install_and_uninstall(tmp_path):
    out = js("hermes", "install", "--hermes-home", str(tmp_path))
    assert os.path.isdir(out["plugin_dir"]) and "provider: fastmem" in out["config"]
    gone = fm("hermes", "uninstall", "--hermes-home", str(tmp_path))
    assert gone.returncode == 0 and not os.path.exists(out["plugin_dir"])
    assert f"the store is kept: {out['db_path']}" in gone.stdout  # where the memories still are
    help_install = fm("hermes", "install", "--help")
    assert help_install.returncode == 0 and "--no-import" in help_install.stdout and "uninstall" not in help_install.stdout
    assert "--no-import" not in fm("hermes", "uninstall", "--help").stdout


def test_options_before_the_command_count(store):
    """``fastmem --json stats`` is ``fastmem stats --json`` (the command's defaults used to
    overwrite what came before its name)."""
    _, db = store
    out = subprocess.run([BIN, "--json", "--db", db, "stats"], capture_output=True, text=True, env=ENV, timeout=600)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["memories"] == 11


def test_stats_and_check_say_when_memories_are_pending(tmp_path):
    import fastmem

    db = str(tmp_path / "p.db")
    with fastmem.Memory(db, derive_in_background=False) as m:
        m.remember_many(["Nadia booked a flight to Lisbon.", "Omar signed a lease in Oslo."], wait=False)
    stats = fm("stats", db=db)
    assert stats.returncode == 0 and "2 memories are pending" in stats.stdout
    assert js("stats", db=db)["pending"] == 2
    check = fm("check", db=db)
    assert check.returncode == 0 and check.stdout.strip().startswith("ok (2 memories pending")


def test_bench_writes_json_and_a_png_plot(tmp_path):
    png, res = tmp_path / "bench.png", tmp_path / "bench.json"
    out = fm("bench", "--size", "150,300", "--queries", "5", "--json-file", str(res), "--plot", str(png))
    assert out.returncode == 0, out.stderr
    data = json.loads(res.read_text())
    assert set(data["results"]) == {"150", "300"} and data["results"]["300"]["total_ms"] > 0
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    assert struct.unpack(">II", head[16:24]) == (800, 500)  # 8 x 5 inches at 100 dpi


def test_eval_commands_on_the_dev_data(tmp_path):
    data = str(DATA)
    loc = os.path.join(data, "locomo-dev", "30.json")
    if not os.path.exists(loc):
        pytest.skip("LoCoMo dev data not found")
    res = js("eval", "locomo", loc)
    assert 0.3 < res["all"]["fused"]["any@10"] <= 1.0
    out = fm("eval", "locomo", str(tmp_path / "none"))
    assert out.returncode == 1


def test_eval_proparalogy_on_a_slice_of_the_dev_data(tmp_path):
    data = str(DATA)
    src = os.path.join(data, "proparalogy-silver", "silver_set_analogies_w_challenging_distractors_w_random.csv")
    if not os.path.exists(src):
        pytest.skip("ProPara-Logy silver data not found")
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))[:24]
    part = tmp_path / "silver.csv"
    with open(part, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    rep = js("eval", "proparalogy", str(part), "--mc")
    fm_ = rep["fastmem"]
    assert fm_["rows"] == 24 and fm_["hit"] == pytest.approx(fm_["precision"] * fm_["fire"])
    # on the same rows, the slot's picks are right more often than the nearest neighbour's
    # (24 rows: 0.58 against 0.25 when written) and structural similarity beats chance
    assert fm_["precision"] > rep["MiniLM nearest"]["precision"]
    assert rep["multiple choice"]["structural_similarity"] > rep["multiple choice"]["chance"]
    assert {"MiniLM nearest", "multiple choice"} <= set(rep) and rep["multiple choice"]["items"] == 24
    small = tmp_path / "silver4.csv"  # the text report's form needs only a few rows
    with open(small, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows[:4])
    text = fm("eval", "proparalogy", str(small), "--no-baselines")
    assert text.returncode == 0 and "structural_similarity" in text.stdout
    assert fm("eval", "proparalogy", str(tmp_path / "none.csv")).returncode == 1
    # the learned ranker: cross-validated by source process, refitted and written where asked
    out = tmp_path / "weights.py"
    rep = js("eval", "proparalogy", str(part), "--cv", "2", "--fit", "--out", str(out), "--mc")
    assert rep["folds"] == 2 and rep["turns"] == 24 and rep["examples"] >= rep["positives"] > 0
    assert rep["multiple choice"]["items"] == 24  # --mc beside --cv, as the command asks
    assert {"learned (cv)", "hand-set (cv folds)"} <= set(rep) and 0 <= rep["learned (cv)"]["precision"] <= 1
    ns = {}
    exec(out.read_text(), ns)
    from fastmem.analogy.ranker import FEATURES

    assert len(ns["COEF"]) == len(FEATURES) and ns["THRESHOLD"] == 0.5
    assert fm("eval", "proparalogy", str(part), "--cv", "1").returncode == 2


def test_the_quick_exit_loses_no_write_and_no_output(tmp_path):
    """The command leaves without the interpreter's teardown: what it wrote is whole in the
    file (derived parts included) and what it printed is whole on the pipe."""
    db = str(tmp_path / "q.db")
    texts = [f"Courier {i} left parcel {i} with Nadia Berg in Lisbon on day {i}." for i in range(40)]
    out = fm("remember", *texts, db=db)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == list(range(1, 41))
    st = js("stats", db=db)
    assert st["memories"] == 40 and st["codes"] == 40 and st["facts"] >= 40
    quick = fm("recall", "who left parcel 7 with Nadia", "-k", "40", "--json", "--no-record", db=db)
    full = fm("recall", "who left parcel 7 with Nadia", "-k", "40", "--json", "--no-record", db=db,
              env={"FASTMEM_FULL_EXIT": "1"})
    assert quick.returncode == full.returncode == 0, quick.stderr
    got, ref = json.loads(quick.stdout), json.loads(full.stdout)
    assert len(got["hits"]) == 40 and [h["id"] for h in got["hits"]] == [h["id"] for h in ref["hits"]]
    assert "parcel 7 " in got["hits"][0]["text"]
