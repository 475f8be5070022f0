"""``fastmem mcp`` driven by the official MCP SDK's own client, over stdio and HTTP, as a
desktop client or an agent framework would: a real server process on a real store file."""

import asyncio
import json
import os
import socket
import subprocess
import sys
import time

from mcp import (  # the extra is part of the test install
    ClientSession,
    StdioServerParameters,
)
from mcp.client.stdio import stdio_client

import fastmem
from tests.shared import FILLER, OWNS, SAME_TOPIC, STORIES, background


def _env():
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def _params(*args):
    return StdioServerParameters(command=sys.executable, args=["-m", "fastmem", "mcp", *args], env=_env())


def _data(res):
    """A tool result's JSON (the text content the SDK writes for a dict result)."""
    assert not _is_error(res), _text(res)
    return json.loads(_text(res))


def _text(res):
    return " ".join(getattr(c, "text", "") for c in res.content)


def _is_error(res):
    return bool(getattr(res, "isError", None) or getattr(res, "is_error", None))


def _session(params, body):
    async def main():
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            return await body(s)
    return asyncio.run(main())


def test_a_client_remembers_recalls_with_channels_and_gets_the_analogy(tmp_path):
    db = str(tmp_path / "m.db")

    async def body(s):
        tools = {t.name: t for t in (await s.list_tools()).tools}
        ids = [_data(await s.call_tool("remember", {"text": t}))["id"] for t in [*FILLER, OWNS, SAME_TOPIC]]
        found = _data(await s.call_tool("recall", {"query": "what is the Lisbon wifi password?", "k": 3}))
        ana = _data(await s.call_tool("recall", {"query": "My friend Bob owns a red car.", "k": 3}))
        stats = json.loads((await s.read_resource("fastmem://stats")).contents[0].text)
        one = json.loads((await s.read_resource(f"fastmem://memory/{ids[1]}")).contents[0].text)
        prompts = [p.name for p in (await s.list_prompts()).prompts]
        return tools, ids, found, ana, stats, one, prompts

    tools, ids, found, ana, stats, one, prompts = _session(_params("--db", db), body)
    assert {"remember", "recall", "analogies", "forget", "feedback", "graph", "consolidate", "expand",
            "categories"} <= set(tools)
    assert tools["recall"].description and "analogy" in tools["recall"].description
    schema = getattr(tools["recall"], "inputSchema", None) or tools["recall"].input_schema  # mcp 1 / 2
    assert schema["properties"]["k"]["type"] == "integer"
    top = found["hits"][0]
    assert "blue-heron-42" in top["text"] and top["id"] == ids[4]
    assert {"keyword", "vector"} <= set(top["channels"])
    assert ana["analogy"] is not None and ana["analogy"]["id"] == ids[-2]  # not the same-topic car
    assert ana["analogy"]["reason"].startswith("same structure") and ana["analogy"]["shared"]
    assert stats["memories"] == len(FILLER) + 2 and stats["model"]
    assert one["text"] == FILLER[1] and set(one["usage"]) >= {"surfaced", "engaged", "weight"}
    assert "use_memory" in prompts
    with fastmem.Memory(db) as m:  # the server's writes are in the file, fully derived
        assert m.count() == len(FILLER) + 2 and m.pending.count() == 0


def test_bad_arguments_and_fastmem_errors_are_tool_errors_and_the_server_keeps_serving(tmp_path):
    db = str(tmp_path / "m.db")

    async def body(s):
        mid = _data(await s.call_tool("remember", {"text": "Alice moved to Berlin in May."}))["id"]
        out = {
            "wrong types": await s.call_tool("recall", {"query": 12345, "k": "many"}),
            "k out of range": await s.call_tool("recall", {"query": "Alice", "k": 0}),
            "blank text": await s.call_tool("remember", {"text": "   "}),
            "bad time": await s.call_tool("remember", {"text": "x happened", "at": "next blursday"}),
            "unknown id": await s.call_tool("forget", {"id": mid + 99}),
            "path without other": await s.call_tool("graph", {"action": "path", "name": "Alice"}),
            "unknown tool": await s.call_tool("no_such_tool", {}),
        }
        after = _data(await s.call_tool("recall", {"query": "where does Alice live?", "k": 1}))
        return out, after

    out, after = _session(_params("--db", db), body)
    for what, res in out.items():
        assert _is_error(res), what
    assert "no memory with id" in _text(out["unknown id"])
    assert "other" in _text(out["path without other"])
    assert "Berlin" in after["hits"][0]["text"]


def test_scope_keeps_tenants_apart_and_read_only_offers_no_writes(tmp_path):
    db = str(tmp_path / "m.db")
    with fastmem.Memory(db) as m:
        bob = m.remember_many(["Bob keeps his spare key under the blue flowerpot.", "Bob's locker code is 5521."],
                              scope="bob")
        m.remember("Alice keeps her spare key in the kitchen drawer.", scope="alice")

    async def as_alice(s):
        got = _data(await s.call_tool("recall", {"query": "where is the spare key? locker code", "k": 10}))
        new = _data(await s.call_tool("remember", {"text": "Alice's gym locker code is 9090."}))["id"]
        forget = await s.call_tool("forget", {"id": bob[0]})
        res = await s.read_resource("fastmem://stats")
        try:
            await s.read_resource(f"fastmem://memory/{bob[1]}")
            leaked = True
        except Exception:  # the SDK raises the server's resource error
            leaked = False
        return got, new, forget, json.loads(res.contents[0].text), leaked

    got, new, forget, stats, leaked = _session(_params("--db", db, "--scope", "alice"), as_alice)
    assert got["hits"] and all("Alice" in h["text"] for h in got["hits"])
    assert _is_error(forget) and not leaked and stats["memories"] == 2
    with fastmem.Memory(db) as m:
        assert m.get(new)["scope"] == "alice" and m.count(scope="bob") == 2

    async def read_only(s):
        names = {t.name for t in (await s.list_tools()).tools}
        hit = _data(await s.call_tool("recall", {"query": "Bob's locker code", "k": 1}))["hits"][0]
        propose = await s.call_tool("categories", {"action": "propose"})
        return names, hit, propose

    names, hit, propose = _session(_params("--db", db, "--read-only", "--scope", "bob"), read_only)
    assert {"recall", "analogies", "graph", "expand", "categories"} <= names
    assert not names & {"remember", "forget", "feedback", "consolidate"}
    assert "5521" in hit["text"] and _is_error(propose) and "read-only" in _text(propose)
    with fastmem.Memory(db) as m:  # a read-only server's recalls are not counted
        assert m.use.counts(hit["id"])["surfaced"] == 0


def test_feedback_consolidate_expand_and_categories_through_the_tools(tmp_path):
    db = str(tmp_path / "m.db")
    with fastmem.Memory(db) as m:
        m.remember_many(background(120))
        story = {name: m.remember_many(texts) for name, texts in STORIES.items()}

    async def body(s):
        hit = _data(await s.call_tool("recall", {"query": "Where is Omar's new job?", "k": 1}))["hits"][0]
        fb = _data(await s.call_tool("feedback", {"id": hit["id"], "helpful": True}))
        rep = _data(await s.call_tool("consolidate", {}))
        members = [_data(await s.call_tool("expand", {"chunk_id": c}))["members"] for c in rep["created"]]
        props = _data(await s.call_tool("categories", {"action": "propose"}))["categories"]
        approved = _data(await s.call_tool("categories", {"action": "approve", "id": props[0]["id"]}))
        listed = _data(await s.call_tool("categories", {"action": "list", "status": "approved"}))["categories"]
        reverted = _data(await s.call_tool("categories", {"action": "revert", "id": props[0]["id"]}))
        graph = _data(await s.call_tool("graph", {"action": "entity", "name": "Omar"}))
        return hit, fb, rep, members, approved, listed, reverted, graph

    hit, fb, rep, members, approved, listed, reverted, graph = _session(_params("--db", db), body)
    assert hit["id"] in story["oslo"] and fb["weight"] > 1.0
    assert rep["created"], rep
    stories = [set(ids) for ids in story.values()]
    chunked = [{x["id"] for x in got} for got in members]
    assert any(len(c) >= 3 and any(c <= ids for ids in stories) for c in chunked)  # a chunk stands for a story
    assert approved["categories"][0]["status"] == "approved" and [c["id"] for c in listed] == [approved["categories"][0]["id"]]
    assert reverted["categories"][0]["status"] == "proposed"
    assert any(f["memory_id"] in story["oslo"] for f in graph["entities"][0]["facts"])


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(proc, port, seconds=90):
    """Bounded wait until the server ``proc`` listens on ``port``."""
    deadline = time.monotonic() + seconds
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, f"the HTTP server did not start within {seconds} s"
        time.sleep(0.2)


async def _remember_and_recall(url, text, query, headers=None):
    """One session over streamable HTTP: remember ``text``, then recall ``query`` (k=1)."""
    import httpx
    from mcp.client.streamable_http import streamable_http_client

    client = httpx.AsyncClient(headers=headers or {}, timeout=60)
    async with client, streamable_http_client(url, http_client=client) as streams:  # mcp 1: 3, mcp 2: 2
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            await s.call_tool("remember", {"text": text})
            return _data(await s.call_tool("recall", {"query": query, "k": 1}))


def test_http_transport_on_localhost_and_remote_binding_needs_a_flag(tmp_path):
    db = str(tmp_path / "m.db")
    refused = subprocess.run([sys.executable, "-m", "fastmem", "mcp", "--db", db, "--transport", "http",
                              "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60, env=_env())
    assert refused.returncode == 2 and "--allow-remote" in refused.stderr
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "fastmem", "mcp", "--db", db, "--transport", "http",
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env())
    try:
        _wait_for_port(proc, port)
        got = asyncio.run(asyncio.wait_for(_remember_and_recall(
            f"http://127.0.0.1:{port}/mcp", "The wifi password at the Lisbon office is blue-heron-42.",
            "Lisbon wifi password"), 120))
        assert "blue-heron-42" in got["hits"][0]["text"]
        asyncio.run(asyncio.wait_for(_remember_and_recall(  # a second client opens and closes its session
            f"http://127.0.0.1:{port}/mcp", "The Oslo office opens at 8.", "Oslo office"), 120))
        time.sleep(1)
    finally:
        proc.terminate()
        proc.wait(30)
    err = proc.stderr.read().decode()
    assert "Traceback" not in err and "Error in standalone SSE" not in err, err[-2000:]  # a client leaving is normal
    with fastmem.Memory(db) as m:  # stopped by a signal: the write was committed
        assert m.count() == 2


def test_a_remote_bind_needs_a_bearer_token_and_refuses_requests_without_it(tmp_path):
    import httpx

    db = str(tmp_path / "m.db")
    base = [sys.executable, "-m", "fastmem", "mcp", "--db", db, "--transport", "http", "--host", "0.0.0.0"]
    refused = subprocess.run(base + ["--allow-remote"], capture_output=True, text=True, timeout=60, env=_env())
    assert refused.returncode == 2 and "--token-file" in refused.stderr
    short = tmp_path / "short"
    short.write_text("abc\n")
    refused = subprocess.run(base + ["--allow-remote", "--token-file", str(short)], capture_output=True, text=True,
                             timeout=60, env=_env())
    assert refused.returncode == 2 and "at least" in refused.stderr and "abc" not in refused.stderr
    token = "tok-" + "q7Zp2xR9vL4mN8sK1wE6yT3uH5jB0cF"
    (tmp_path / "token").write_text(token + "\n")
    port = _free_port()
    proc = subprocess.Popen(base + ["--allow-remote", "--token-file", str(tmp_path / "token"), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    try:
        _wait_for_port(proc, port)
        url = f"http://127.0.0.1:{port}/mcp"
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        accept = {"accept": "application/json, text/event-stream"}
        for auth in (None, "Bearer wrong-" + token, token, "Bearer " + token[:-1]):
            headers = dict(accept, **({"authorization": auth} if auth else {}))
            r = httpx.post(url, json=hello, headers=headers, timeout=30)
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", auth
        assert httpx.post(url, json=hello, headers=dict(accept, authorization=f"Bearer {token}"),
                          timeout=30).status_code == 200

        got = asyncio.run(asyncio.wait_for(_remember_and_recall(
            url, "The wifi password at the Porto office is grey-owl-17.", "Porto wifi password",
            headers={"Authorization": f"Bearer {token}"}), 120))
        assert "grey-owl-17" in got["hits"][0]["text"]
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert token.encode() not in out + err  # never logged
    with fastmem.Memory(db) as m:
        assert m.count() == 1


def test_a_server_process_runs_numpys_blas_on_one_thread(tmp_path):
    """The servers set one BLAS thread before they serve: OpenBLAS's workers spin after each
    product a call shares with them, and under a stream of calls they took a core (16 clients
    on 2 cores: 36 -> 49 calls/s). Checked in a fresh process, as ``fastmem mcp`` starts."""
    code = (
        "import fastmem.mcp_server as S, threadpoolctl\n"
        "served = []\n"
        "S.build_server = lambda *a, **k: type('X', (), {'run': lambda self, *a, **k: served.append(1)})()\n"
        f"S.serve({str(tmp_path / 'm.db')!r}, transport='stdio')\n"
        "blas = [d for d in threadpoolctl.threadpool_info() if d['user_api'] == 'blas']\n"
        "print(served, len(blas) > 0, sorted({d['num_threads'] for d in blas}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[1] True [1]"  # served; every BLAS loaded (numpy's, scipy's): 1 thread


def _children(pid):
    """Pids of the processes whose parent is ``pid`` (Linux /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return sorted(out)


def _until(cond, seconds, what):
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def test_several_worker_processes_serve_one_store_and_a_dead_worker_is_started_again(tmp_path):
    """``--workers 2``: two processes accept on one port, each with its own store connection;
    what one worker writes the other finds; a worker killed is replaced; SIGTERM stops all of
    them cleanly with every write kept."""
    import signal

    assert subprocess.run([sys.executable, "-m", "fastmem", "mcp", "--db", str(tmp_path / "x.db"), "--workers", "2"],
                          capture_output=True, text=True, timeout=60, env=_env()).returncode == 2  # stdio: one process
    db = str(tmp_path / "m.db")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "fastmem", "mcp", "--db", db, "--transport", "http",
                             "--port", str(port), "--workers", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env())
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait_for_port(proc, port)
        _until(lambda: len(_children(proc.pid)) == 2, 60, "two worker processes")
        first = _children(proc.pid)

        async def clients(n, tag):
            return await asyncio.gather(*(_remember_and_recall(
                url, f"Note {tag}{i}: the locker code of crew {tag}{i} is {tag}{i}-orchid-{i}.",
                f"locker code of crew {tag}{i}") for i in range(n)))

        for i, got in enumerate(asyncio.run(asyncio.wait_for(clients(6, "a"), 240))):
            assert f"a{i}-orchid-{i}" in got["hits"][0]["text"]
        os.kill(first[0], signal.SIGKILL)
        _until(lambda: len(_children(proc.pid)) == 2 and first[0] not in _children(proc.pid), 60,
               "the killed worker started again")
        for i, got in enumerate(asyncio.run(asyncio.wait_for(clients(4, "b"), 240))):
            assert f"b{i}-orchid-{i}" in got["hits"][0]["text"]
        workers = _children(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    err = proc.stderr.read().decode()
    assert proc.returncode == 0, err[-2000:]
    assert "worker 0 exited" in err or "worker 1 exited" in err, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    assert not [w for w in workers if os.path.exists(f"/proc/{w}")]  # every worker stopped with it
    with fastmem.Memory(db) as m:  # every write of both workers, the killed one's included
        assert m.count() == 10
        for tag, n in (("a", 6), ("b", 4)):
            for i in range(n):
                assert f"{tag}{i}-orchid-{i}" in m.recall(f"locker code of crew {tag}{i}", k=1, record=False).hits[0].text


def test_workers_that_keep_dying_stop_their_supervisor_with_an_error():
    """A worker that cannot start (a bad store, a port in use) is started again a few times,
    then the supervisor gives up with exit status 1 instead of looping for ever; forking is
    refused while another thread runs (a fork copies only the calling thread)."""
    code = ("import os, sys\nfrom fastmem.serving import run_workers\n"
            "sys.exit(run_workers(2, lambda i: os._exit(3), max_restarts=3, restart_window=60))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr[-2000:]
    assert "exited 3; starting it again" in out.stderr and "stopping" in out.stderr
    code = ("import threading, time\nfrom fastmem.serving import run_workers\n"
            "threading.Thread(target=time.sleep, args=(3,), daemon=True).start()\n"
            "run_workers(2, print)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "holds no other thread" in out.stderr
