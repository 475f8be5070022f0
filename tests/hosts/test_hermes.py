"""The hermes-agent provider, against the real hermes-agent 0.19.0 (its loader and MemoryManager)."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("agent.memory_provider", reason="hermes-agent is a test dependency (pip install hermes-agent==0.19.0)")

from agent.memory_manager import MemoryManager  # noqa: E402
from plugins.memory import load_memory_provider  # noqa: E402

import fastmem  # noqa: E402
from fastmem.hermes import install as I  # noqa: E402
from fastmem.hermes.provider import FastmemProvider, split_passages  # noqa: E402


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "hermes"
    h.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(h))
    I.install(h)
    return h


def _manager(home, session="s1", **kw):
    p = load_memory_provider("fastmem")
    assert isinstance(p, FastmemProvider) and p.is_available()
    mm = MemoryManager()
    mm.add_provider(p)
    mm.initialize_all(session_id=session, hermes_home=str(home), platform="cli", **kw)
    return mm, p


def _prefetch_until(mm, query, want, session="s1"):
    """The prefetch block for ``query``: the immediate one when it already shows ``want``,
    else the background recall's (queued by the first call), once the worker has run it."""
    text = mm.prefetch_all(query, session_id=session)
    if want in text:
        return text
    (p,) = [x for x in mm.providers if x.name == "fastmem"]
    assert p.wait(timeout=120)
    return mm.prefetch_all(query, session_id=session)


def test_folder_install_is_found_by_hermes_and_uninstall_removes_it(home):
    p = load_memory_provider("fastmem")
    assert p is not None and p.name == "fastmem"
    init = (home / "plugins" / "fastmem" / "__init__.py").read_text()
    assert "from fastmem.hermes.provider import" in init and len(init.splitlines()) < 12  # no code copied
    assert I.uninstall(home) and not (home / "plugins" / "fastmem").exists()
    assert load_memory_provider("fastmem") is None


def test_cli_install_prints_the_config_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "fastmem", "hermes", "install", "--hermes-home", str(tmp_path)],
                         capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr
    assert "provider: fastmem" in out.stdout and (tmp_path / "plugins" / "fastmem" / "plugin.yaml").exists()


def test_schemas_and_availability_before_initialize(home):
    p = FastmemProvider()
    names = {s["name"] for s in p.get_tool_schemas()}
    assert {"fact_store", "fact_feedback", "fastmem_recall", "fastmem_analogies", "fastmem_graph", "fastmem_chunks",
            "fastmem_categories"} <= names
    for s in p.get_tool_schemas():
        assert s["description"] and s["parameters"]["type"] == "object"
    assert p.is_available()
    assert json.loads(p.handle_tool_call("fact_store", {"action": "search", "query": "x"}))["error"]


def test_a_turn_through_the_memory_manager(home):
    mm, p = _manager(home, agent_context="primary")
    out = json.loads(mm.handle_tool_call("fact_store", {"action": "add", "content": "The staging database password rotates every 30 days."}))
    assert out["status"] == "added"
    mid = out["fact_id"]
    mm.queue_prefetch_all("how often does the staging password rotate?", session_id="s1")
    text = _prefetch_until(mm, "how often does the staging password rotate?", "30 days")
    assert f"[m{mid}]" in text and "<memory-context>" not in text
    mm.sync_all("I moved to Lisbon last spring.", "Noted: you live in Lisbon now.", session_id="s1")
    assert mm.flush_pending(timeout=60)
    got = json.loads(mm.handle_tool_call("fact_store", {"action": "search", "query": "where do I live?"}))
    assert any("Lisbon" in r["content"] for r in got["results"])
    fb = json.loads(mm.handle_tool_call("fact_feedback", {"action": "helpful", "fact_id": mid}))
    assert fb["new_trust"] > fb["old_trust"] and fb["helpful_count"] == 1
    # the built-in memory tool's writes are mirrored: add, replace, remove
    mm.on_memory_write("add", "user", "User prefers dark roast coffee.")
    assert "dark roast" in _prefetch_until(mm, "what coffee do I like?", "dark roast")
    mm.on_memory_write("replace", "user", "User prefers green tea, not coffee.", metadata={"old_text": "dark roast"})
    hits = json.loads(mm.handle_tool_call("fastmem_recall", {"query": "coffee or tea preference", "k": 10}))["hits"]
    assert any("green tea" in h["text"] for h in hits) and not any("dark roast" in h["text"] for h in hits)
    mm.on_memory_write("remove", "user", "", metadata={"old_text": "green tea"})
    hits = json.loads(mm.handle_tool_call("fastmem_recall", {"query": "coffee or tea preference", "k": 10}))["hits"]
    assert not any("green tea" in h["text"] for h in hits)
    bad = json.loads(mm.handle_tool_call("fact_store", {"action": "update", "fact_id": "x"}))
    assert "error" in bad
    mm.shutdown_all()
    # a second session (a new agent process) sees the first one's memories
    mm2, _ = _manager(home, session="s2", agent_context="primary")
    assert "30 days" in _prefetch_until(mm2, "staging database password", "30 days", session="s2")
    mm2.shutdown_all()


def test_subagent_context_writes_nothing(home):
    mm, p = _manager(home, agent_context="primary")
    json.loads(mm.handle_tool_call("fact_store", {"action": "add", "content": "Deploys happen on Thursdays."}))
    mm.shutdown_all()
    sub, _ = _manager(home, session="child", agent_context="subagent")
    before = _count(home)
    assert "error" in json.loads(sub.handle_tool_call("fact_store", {"action": "add", "content": "A subagent's guess."}))
    sub.sync_all("subagent question", "subagent answer", session_id="child")
    sub.flush_pending(timeout=60)
    sub.on_memory_write("add", "memory", "subagent note")
    assert "Thursdays" in _prefetch_until(sub, "when do deploys happen?", "Thursdays", session="child")  # reads work
    sub.shutdown_all()
    assert _count(home) == before


def _count(home):
    with fastmem.Memory(str(home / "fastmem" / "memory.db")) as m:
        return len(m)


def test_two_users_never_see_each_other(home):
    a, _ = _manager(home, session="sa", agent_context="primary", user_id="alice")
    a.handle_tool_call("fact_store", {"action": "add", "content": "My locker code is 4417."})
    a.sync_all("Remember that my cat is called Miso.", "Sure.", session_id="sa")
    a.flush_pending(timeout=60)
    a.shutdown_all()
    b, _ = _manager(home, session="sb", agent_context="primary", user_id="bob")
    b.handle_tool_call("fact_store", {"action": "add", "content": "My locker code is 9902."})
    text = _prefetch_until(b, "what is my locker code?", "9902", session="sb")
    assert "9902" in text and "4417" not in text
    for q in ("locker code", "cat Miso"):
        found = json.dumps(json.loads(b.handle_tool_call("fastmem_recall", {"query": q, "k": 20})))
        assert "4417" not in found and "Miso" not in found
    alice_id = 1
    assert "error" in json.loads(b.handle_tool_call("fact_feedback", {"action": "helpful", "fact_id": alice_id}))
    assert json.loads(b.handle_tool_call("fact_store", {"action": "remove", "fact_id": alice_id}))["removed"] is False
    b.shutdown_all()


@pytest.mark.parametrize("damage", ["garbage", "newer"])
def test_unusable_store_makes_the_provider_unavailable(home, damage):
    db = home / "fastmem" / "memory.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    if damage == "garbage":
        db.write_bytes(b"definitely not sqlite " * 400)
    else:
        with fastmem.Memory(str(db)) as m:
            m.remember("a memory")
            m.admin.engine.db.execute("INSERT INTO _fastmem_migrations(version, name, applied) VALUES (999, 'future', 0)")
    p = load_memory_provider("fastmem")
    assert p.is_available() is False
    assert p.unavailable_reason and str(db) in p.unavailable_reason


def test_standing_statements_never_push_the_block_past_its_bound(home):
    """Many long standing instructions: as many as fit are shown, best first, and the block
    stays within ``prefetch_chars`` with its hits."""
    (home / "config.yaml").write_text("plugins:\n  fastmem:\n    prefetch_chars: 400\n    prefetch_k: 8\n")
    mm, p = _manager(home, agent_context="primary")
    said = ["From now on, always answer me in British English spelling, and never use American spellings at all.",
            "Whenever you show me Python, always include type hints on every function signature you write.",
            "Always keep your answers under two hundred words unless I explicitly ask you for more detail.",
            "From now on, please never use emojis in anything you write for me, not even in casual replies.",
            "Always put the time complexity at the end whenever you write an algorithm for me, every time."]
    for x in said:
        mm.handle_tool_call("fact_store", {"action": "add", "content": x})
    q = "Can you write me a function that merges two sorted lists?"
    mm.queue_prefetch_all(q, session_id="s1")
    text = _prefetch_until(mm, q, "What the user asked for")
    assert "What the user asked for" in text and len(text) <= 400, (len(text), text)
    mm.shutdown_all()


def test_block_is_bounded_and_shows_the_analogy_apart(home):
    (home / "config.yaml").write_text("plugins:\n  fastmem:\n    prefetch_chars: 600\n    prefetch_k: 8\n")
    mm, p = _manager(home, agent_context="primary")
    facts = ["Maria teaches chemistry at the local high school.", "The museum closes at six on weekdays.",
             "Kenji plays the cello in a community orchestra.", "Heavy rain flooded the basement last spring.",
             "Olga runs a marathon every autumn.", "Grandpa was born in a small village near Krakow.",
             "The library card expires at the end of the year.", "Sam is learning Portuguese before his trip.",
             "Acme Corporation owns Widget Inc, a small subsidiary in Ohio.", "The bakery sells sourdough on Fridays."]
    for f in facts:
        mm.handle_tool_call("fact_store", {"action": "add", "content": f + " " + "detail " * 40})
    q = "My friend Bob owns a red car."
    mm.queue_prefetch_all(q, session_id="s1")
    text = _prefetch_until(mm, q, "Reminds me of")
    assert len(text) <= 600
    last = text.splitlines()[-1]
    assert last.startswith("Reminds me of [m") and "because both" in last and "own" in last
    hits = text.splitlines()[:-1]
    assert hits and all(line.startswith("- [m") and line.endswith("\u2026") for line in hits)  # cut, not dropped
    mm.shutdown_all()


def test_chit_chat_gets_an_empty_block_and_a_question_its_evidence(home):
    """The evidence floor in hermes' own order: nothing recalled is grounded in "Let me know how
    it goes.", so the model sees no memory lines rather than the store's best chance matches."""
    mm, p = _manager(home, agent_context="primary")
    for f in ["Maria teaches chemistry at the local high school.", "The museum closes at six on weekdays.",
              "Kenji plays the cello in a community orchestra.", "Lena is allergic to peanuts and shellfish.",
              "Grandpa was born in a small village near Krakow.", "The bakery sells sourdough on Fridays."]:
        mm.handle_tool_call("fact_store", {"action": "add", "content": f})
    assert p.wait(timeout=300)
    assert mm.prefetch_all("Let me know how it goes.", session_id="s1").strip() == ""
    block = mm.prefetch_all("When does the museum close?", session_id="s1")
    assert "- [m" in block and "closes at six" in block
    mm.shutdown_all()


def test_session_end_and_pre_compress_return_text(home):
    mm, p = _manager(home, agent_context="primary")
    mm.sync_all("My sister Ana lives in Porto.", "Got it.", session_id="s1")
    mm.flush_pending(timeout=60)
    assert "memories" in p.on_session_end([])
    text = p.on_pre_compress([{"role": "user", "content": "Where does Ana live again?"}])
    assert "Porto" in text and "[m" in text
    mm.shutdown_all()


def test_long_turns_are_split_never_cut():
    text = ("word " * 9000).strip()
    parts = split_passages(text, 10_000)
    assert all(len(p) <= 10_000 for p in parts) and " ".join(parts) == text


def test_holographic_facts_are_imported_once(tmp_path, monkeypatch):
    """Once, even after a failure: the import and its done-mark are one transaction (a failed
    mark used to leave every fact behind unmarked, and the next start imported them again)."""
    import sqlite3

    from fastmem.storage import marks as W

    src = tmp_path / "memory_store.db"
    con = sqlite3.connect(src)
    con.execute("CREATE TABLE facts(fact_id INTEGER PRIMARY KEY, content TEXT, category TEXT, tags TEXT, "
                "trust_score REAL, helpful_count INTEGER)")
    con.executemany("INSERT INTO facts VALUES (?,?,?,?,?,?)", [
        (1, "User's editor is Neovim.", "user_pref", "editor", 0.65, 3),
        (2, "Project Falcon ships in March.", "project", "", 0.5, 0)])
    con.commit()
    con.close()
    dest = tmp_path / "fastmem" / "memory.db"
    real = W.mark

    def disk_full(db, job, batch, *, rows):
        raise OSError("disk full")

    monkeypatch.setattr(W, "mark", disk_full)
    with pytest.raises(OSError):
        I.import_holographic(src, dest)
    monkeypatch.setattr(W, "mark", real)
    assert I.import_holographic(src, dest) == 2
    assert I.import_holographic(src, dest) == 0
    with fastmem.Memory(str(dest)) as m:
        assert len(m) == 2
    with fastmem.Memory(str(dest)) as m:
        hits = m.recall("which editor do I use", k=1, scope="hermes").hits
        assert "Neovim" in hits[0].text and m.get(hits[0].id)["meta"]["category"] == "user_pref"
        assert m.use.counts(hits[0].id)["engaged"] == 3


def test_chunk_and_category_tools(home):
    mm, p = _manager(home, agent_context="primary")
    for t in ("Nadia booked a flight to Lisbon for the Acme offsite.", "Nadia reserved a hotel in Lisbon near the Acme office.",
              "Nadia will present the Acme roadmap in Lisbon.", "Alice drives a Tesla to work.", "Bob drives a Volvo to work.",
              "Carol drives a Fiat to work."):
        mm.handle_tool_call("fact_store", {"action": "add", "content": t})
    p._mem.consolidate()
    chunks = json.loads(mm.handle_tool_call("fastmem_chunks", {"action": "list"}))["chunks"]
    assert chunks and chunks[0]["members"] >= 3
    members = json.loads(mm.handle_tool_call("fastmem_chunks", {"action": "expand", "chunk_id": chunks[0]["id"]}))["members"]
    assert all("Nadia" in m["text"] for m in members)
    p._mem.categories.propose(scope=p._ctx.scope)  # the user's own categories (another's are never listed)
    cats = json.loads(mm.handle_tool_call("fastmem_categories", {"action": "list", "status": "proposed"}))["categories"]
    cid = next(c["id"] for c in cats if {"Tesla", "Volvo", "Fiat"} <= set(c["members"]))
    got = json.loads(mm.handle_tool_call("fastmem_categories", {"action": "approve", "category_id": cid}))
    assert got["categories"][0]["status"] == "approved"
    assert "error" in json.loads(mm.handle_tool_call("fastmem_categories", {"action": "approve", "category_id": 10**6}))
    mm.shutdown_all()


def test_turns_tools_and_the_background_thread_at_once(home):
    """A stress of the threads the provider runs: the host's turns (prefetch, sync_turn,
    queue_prefetch) on one thread, tool calls on another, the provider's warm-up and
    derive thread in the background. Nothing raises, every turn and fact is stored once, and
    the store checks clean."""
    import threading

    mm, p = _manager(home, agent_context="primary")
    errors: list[BaseException] = []
    added: list[int] = []

    def turns():
        try:
            for i in range(40):
                mm.prefetch_all(f"what did we say about project {i % 7}?", session_id="s1")
                mm.sync_all(f"Project {i % 7} needs review number {i}.", f"Noted review {i}.", session_id="s1")
                mm.queue_prefetch_all(f"what did we say about project {i % 7}?", session_id="s1")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def tools():
        try:
            for i in range(40):
                out = json.loads(mm.handle_tool_call("fact_store", {"action": "add", "content": f"Fact {i}: Ana owns boat {i}."}))
                added.append(out["fact_id"])
                json.loads(mm.handle_tool_call("fact_store", {"action": "search", "query": f"boat {i}"}))
                json.loads(mm.handle_tool_call("fastmem_recall", {"query": f"review {i}"}))
                if i % 5 == 4:
                    assert json.loads(mm.handle_tool_call("fact_store", {"action": "remove", "fact_id": added[-2]}))["removed"]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=turns), threading.Thread(target=tools)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    assert mm.flush_pending(timeout=120) and p.wait(timeout=120)
    m = p._mem
    m.pending.derive()
    texts = [r[0] for r in m.admin.engine.db.execute("SELECT text FROM memories")]
    for i in range(40):
        assert sum(f"review number {i}." in t for t in texts) == 1
    assert sum(t.startswith("Fact ") for t in texts) == 40 - 8
    rep = m.admin.check()
    assert rep.ok, rep
    assert m.pending.count() == 0
    mm.shutdown_all()


def test_a_store_imported_by_an_earlier_version_is_not_imported_again(tmp_path):
    """Earlier versions marked a holographic import with a setting; that mark still counts."""
    import sqlite3

    from fastmem.storage.store import Store

    src = tmp_path / "memory_store.db"
    con = sqlite3.connect(src)
    con.execute("CREATE TABLE facts(fact_id INTEGER PRIMARY KEY, content TEXT, category TEXT, tags TEXT, "
                "trust_score REAL, helpful_count INTEGER)")
    con.execute("INSERT INTO facts VALUES (1, 'User''s editor is Neovim.', 'user_pref', 'editor', 0.65, 3)")
    con.commit()
    con.close()
    dest = tmp_path / "fastmem" / "memory.db"
    dest.parent.mkdir()
    st = Store(str(dest))
    with st.atomic():
        st.set_setting(f"imported:holographic:{src.resolve()}", '{"facts": 1}')
    st.close()
    assert I.import_holographic(src, dest) == 0
    with fastmem.Memory(str(dest)) as m:
        assert len(m) == 0


def test_a_standing_instruction_from_an_earlier_session_opens_the_block(home):
    """Said once in one session, "always add type hints" heads the block of a later session's
    Python request; the assistant's own imperatives are never taken for the user's."""
    mm, p = _manager(home, agent_context="primary")
    mm.sync_all("Always add type hints when you show me Python code.", "Understood, I will from now on.",
                session_id="s1")
    mm.sync_all("How do I store passwords?", "Always use a slow, salted hash for passwords in every project.",
                session_id="s1")
    mm.sync_all("What does git rebase do?", "It replays your commits on top of another branch.", session_id="s1")
    assert mm.flush_pending(timeout=60)
    mm.shutdown_all()
    mm2, p2 = _manager(home, session="s2", agent_context="primary")
    block = _prefetch_until(mm2, "Write me a Python function that parses the upload CSV.", "What the user asked for", session="s2")
    head, _, _ = block.partition("Recalled:")
    assert head.startswith("What the user asked for") and "Always add type hints" in head
    assert "salted hash" not in head
    out = json.loads(mm2.handle_tool_call("fastmem_recall", {"query": "Show me a Python class for a CSV row."}))
    assert any("type hints" in s["statement"] for s in out["standing"])
    mm2.shutdown_all()


def test_a_short_process_loads_no_model_until_turns_pile_up(home, monkeypatch):
    """The models load WARMUP_DELAY_S after the first turn, so a one-shot that ends sooner
    loads none (its turns wait, pending, for a later process); once PENDING_NOW turns are
    pending, the first turn loads them at once and they are derived."""
    from fastmem.hermes import provider as P
    from fastmem.parts.host import Host

    # a fresh process has no model loaded (earlier tests in this one loaded them)
    monkeypatch.setattr(Host, "models_ready", lambda self: False)
    for i in range(P.PENDING_NOW // 2):
        mm, p = _manager(home, session=f"one-{i}")
        mm.prefetch_all(f"My cousin number {i} moved to Oslo.", session_id=f"one-{i}")
        mm.sync_all(f"My cousin number {i} moved to Oslo.", "Noted.", session_id=f"one-{i}")
        assert mm.flush_pending(timeout=30)
        mm.shutdown_all()
        assert p._warming.ident is None  # no thread ever loaded a model
    with fastmem.Memory(str(home / "fastmem" / "memory.db")) as m:
        assert m.pending.count() == P.PENDING_NOW and m.count() == P.PENDING_NOW  # nothing lost
    mm, p = _manager(home, session="later")
    mm.prefetch_all("Who moved to Oslo?", session_id="later")
    assert p._warming.ident is not None  # started with the turn, no delay
    assert p.wait(timeout=300)
    mm.shutdown_all()
    with fastmem.Memory(str(home / "fastmem" / "memory.db")) as m:
        assert m.pending.count() == 0


def test_a_later_session_in_a_process_with_the_models_answers_its_first_turn_with_them(home):
    """A gateway serves many sessions in one process: once a session loaded the models, the
    next session's provider does not wait WARMUP_DELAY_S with recalls that lack the vector
    channel and the slot (its first turns lost the evidence that only they find)."""
    mm, p = _manager(home, session="s1", agent_context="primary")
    mm.sync_all("My sister Ana moved to Lisbon in May.", "Nice!", session_id="s1")
    mm.prefetch_all("Where does Ana live now?", session_id="s1")
    assert p.wait(timeout=300) and p._mem.host.models_ready()
    mm.shutdown_all()
    mm2, p2 = _manager(home, session="s2", agent_context="primary")
    calls = []
    recall = p2._mem.recall
    p2._mem.recall = lambda *a, **kw: calls.append(kw) or recall(*a, **kw)
    mm2.prefetch_all("Which city did my sister move to?", session_id="s2")
    assert calls and "channels" not in calls[0]  # every channel, the vector one included
    mm2.shutdown_all()


def test_the_warm_up_starts_once_when_a_turn_and_the_timer_start_it_together(home):
    """Two threads that start the warm-up at the same moment start one thread, and CPython
    reports no failed bootstrap (a double Thread.start() printed 'Exception ignored in thread
    started by ... KeyError' at the end of the host flow)."""
    import threading

    mm, p = _manager(home, agent_context="primary")
    unraisable = []
    old_hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        for _ in range(20):
            ran = []
            p._ready.clear()
            p._warming = threading.Thread(target=lambda: ran.append(1), daemon=True)
            gate = threading.Barrier(8)
            starters = [threading.Thread(target=lambda: (gate.wait(), p._start_warmup(delay=0))) for _ in range(8)]
            for t in starters:
                t.start()
            for t in starters:
                t.join()
            p._warming.join()
            assert ran == [1]
    finally:
        sys.unraisablehook = old_hook
    assert not unraisable
    mm.shutdown_all()
