"""Cold start as users meet it: each round is a new process (the shell's ``fastmem ...``, an
agent host starting), so these medians include interpreter start and every import.

* ``python -c pass``           - the interpreter alone (the floor every command pays);
* ``import fastmem``           - the package (no model, no parser, no compiler);
* ``fastmem stats``            - a command that needs no model, on a 3-memory store;
* ``fastmem recall, cold cache`` - the first command after an install: empty kernel cache;
* ``fastmem recall``           - every later one (the kernel cache filled; a 3-memory store,
  too small for the analogy slot, so no parse);
* ``fastmem recall, 10k store`` - the same on 10,000 memories, where the slot parses the turn;
* ``recall, torch embedder``   - the same recall with sentence-transformers (the reference);
* ``provider to full prefetch`` - hermes provider ``initialize`` until its first full recall
  (models loaded, vector hits and the slot), in a new process;
* ``sync_turn before/after models`` - in-process: the commit of one turn while the models
  have not loaded, and once they have (what the host waits for either way).

    pytest bench/test_bench_startup.py --benchmark-only --benchmark-columns=median,iqr,rounds
"""

import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

PY = sys.executable
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def _run(args, env=None):
    out = subprocess.run(args, capture_output=True, text=True, env=env or ENV, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("startup")
    db = str(d / "s.db")
    _run([PY, "-m", "fastmem", "remember", "--db", db, "Alice moved to Berlin in May.",
          "Acme Corporation owns Widget Inc.", "Bob plays the cello on Sundays."])
    _run([PY, "-m", "fastmem", "recall", "--db", db, "warm up"])  # fills the kernel cache
    return db


CASES = {
    "python -c pass": lambda db: [PY, "-c", "pass"],
    "import fastmem": lambda db: [PY, "-c", "import fastmem"],
    "fastmem stats": lambda db: [PY, "-m", "fastmem", "stats", "--db", db],
    "fastmem recall": lambda db: [PY, "-m", "fastmem", "recall", "--db", db, "where does Alice live"],
    "recall, torch embedder": lambda db: [PY, "-c", textwrap.dedent(f"""
        import fastmem
        from fastmem.models.embedder import MiniLM
        with fastmem.Memory({db!r}, embedder=MiniLM(backend="torch")) as m:
            m.recall("where does Alice live")""")],
}


@pytest.mark.parametrize("case", list(CASES))
def test_new_process(benchmark, store, case):
    benchmark.group = "cold start: a new process"
    benchmark.pedantic(_run, args=(CASES[case](store),), rounds=5, warmup_rounds=1)


@pytest.fixture(scope="module")
def store10k():
    """10,000 synthetic agent memories (fastmem.evaluate.bench.texts), built once and cached."""
    from conftest import cached_store

    def build(path):
        import fastmem
        from fastmem.evaluate.bench import texts

        with fastmem.Memory(path, progress=False) as m:
            m.remember_many(texts(10_000), progress=False)

    db = cached_store("startup", 10_000, build)
    _run([PY, "-m", "fastmem", "recall", "--db", db, "warm up", "--no-record"])
    return db


def test_recall_on_a_10k_store(benchmark, store10k):
    """What the slot needs on a real store: the turn's parse, so spaCy's import and load."""
    benchmark.group = "cold start: a new process"
    benchmark.pedantic(_run, args=([PY, "-m", "fastmem", "recall", "--db", store10k, "Where did Lena Park move?",
                                    "--no-record"],), rounds=5, warmup_rounds=1)


def test_recall_with_an_empty_kernel_cache(benchmark, store):
    benchmark.group = "cold start: a new process"

    def setup():
        env = {**ENV, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="fastmem-empty-cache-")}
        return ([PY, "-m", "fastmem", "recall", "--db", store, "where does Alice live"], env), {}

    benchmark.pedantic(_run, setup=setup, rounds=3)


_PROVIDER = textwrap.dedent("""
    import os, sys, time
    from fastmem.hermes.provider import FastmemProvider
    home = sys.argv[1]
    os.environ["HERMES_HOME"] = home
    p = FastmemProvider(config={"db_path": os.path.join(home, "m.db")})
    p.initialize("s", hermes_home=home, agent_context="primary")
    p.handle_tool_call("fact_store", {"action": "add", "content": "Alice moved to Berlin in May."})
    p.prefetch("hello", session_id="s")  # the host's first prefetch starts the warm-up
    assert p.wait(timeout=600)
    assert "Berlin" in p.prefetch("where does Alice live now?", session_id="s")
    p.shutdown()
""")


def test_provider_initialize_to_first_full_prefetch(benchmark, tmp_path):
    benchmark.group = "cold start: a new process"
    homes = iter(range(100))
    benchmark.pedantic(lambda: _run([PY, "-c", _PROVIDER, str(tmp_path / f"h{next(homes)}")]), rounds=3)


@pytest.mark.parametrize("when", ["before models", "after models"])
def test_sync_turn(benchmark, tmp_path, when):
    pytest.importorskip("agent.memory_provider")
    from fastmem.hermes.provider import FastmemProvider

    benchmark.group = "sync_turn: the commit the host waits for"
    os.environ["HERMES_HOME"] = str(tmp_path)
    p = FastmemProvider(config={"db_path": str(tmp_path / "m.db")})
    p.initialize("s", hermes_home=str(tmp_path), agent_context="primary")
    if when == "after models":
        assert p.wait(timeout=600)
    else:
        p._warming = None  # as while the models load: nothing derived, nothing waited for
    n = iter(range(10**6))
    benchmark.pedantic(lambda: p.sync_turn(f"My locker code is {next(n)}.", "Saved.", session_id="s"),
                       rounds=40, warmup_rounds=2)
    p.shutdown()
