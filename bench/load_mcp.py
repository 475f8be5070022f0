"""Load held: ``fastmem mcp --transport http`` on loopback under concurrent clients.

    python bench/load_mcp.py [--clients 16] [--seconds 120] [--size 100000] [--workers 2] [--writers 4] [--hermes]

A fresh copy of the cached scale store (``test_bench_scale.py``; 100k memories by default) is
served over streamable HTTP with a bearer token. Each client holds its own MCP session and
loops until the time is up (after one recall has loaded the server's models): 80% ``recall`` (a query new to the server each time, k=5, the
analogy slot on), 20% ``remember`` of a text unique to that call. Afterwards, with the server
stopped, every id a ``remember`` returned must be in the file with its text and among the
top 3 hits of a recall of its unique marker (nothing lost; how many were not the first hit,
behind a sibling load memory whose use weight the run's recalls raised, is printed too). Prints one table: calls, errors,
p50 and p99 latency per tool, and the loss count; exits 1 on any error or loss.

``--writers N`` adds N processes that write the same file through the Python API meanwhile
(``Memory.remember`` of unique texts, as fast as the store lets them); ``--hermes`` adds a
process running hermes-agent's own ``MemoryManager`` with the fastmem provider on the same
file, in the host's call order (``prefetch_all`` of the new message, ``sync_all`` of the
turn, ``queue_prefetch_all``), one turn a second. Their writes are checked like the
clients' (every turn of the hermes process by its text in the ``hermes`` scope).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q / 100 * (len(v) - 1))))] if v else float("nan")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _client(url: str, token: str, k: int, deadline: float, queries, lat, written, errors) -> None:
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    rnd = random.Random(k)
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    async with http, streamable_http_client(url, http_client=http) as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            i = 0
            while i == 0 or time.monotonic() < deadline:  # at least one call
                i += 1
                if rnd.random() < 0.2:
                    marker = f"zq{k}x{i}w{rnd.randrange(10**6)}"
                    text = f"Load client {k} noted item {i}: the code word is {marker}."
                    t0 = time.perf_counter()
                    r = await s.call_tool("remember", {"text": text})
                    lat["remember"].append(time.perf_counter() - t0)
                    if r.isError:
                        errors.append(("remember", str(r.content)[:200]))
                    else:
                        written.append((_id(r), text, marker))
                else:
                    t0 = time.perf_counter()
                    r = await s.call_tool("recall", {"query": next(queries), "k": 5})
                    lat["recall"].append(time.perf_counter() - t0)
                    if r.isError:
                        errors.append(("recall", str(r.content)[:200]))


def _until(start: float) -> None:
    time.sleep(max(0.0, start - time.time()))


def _writer(path: str, k: int, start: float, end: float, out: str, rate: float = 0.0) -> int:
    """A process writing the store through the Python API from ``start`` to ``end``
    (time.time()), its models loaded before; ``rate`` writes a second at most (0: as fast as
    the store lets it)."""
    import json

    import fastmem

    rnd = random.Random(1000 + k)
    rows = []
    with fastmem.Memory(path, progress=False) as m:
        fastmem.warmup(models=True, kernels=False)
        _until(start)
        i = 0
        while time.time() < end:
            i += 1
            marker = f"zw{k}x{i}w{rnd.randrange(10**6)}"
            text = f"Writer process {k} noted item {i}: the code word is {marker}."
            t0 = time.perf_counter()
            try:
                mid = m.remember(text)
                rows.append({"id": mid, "text": text, "marker": marker, "s": time.perf_counter() - t0})
            except Exception as exc:  # counted, not raised: the run reports every error
                rows.append({"error": repr(exc)[:200], "s": time.perf_counter() - t0})
            if rate > 0:
                time.sleep(max(0.0, 1.0 / rate - (time.perf_counter() - t0)))
    with open(out, "w") as fh:
        json.dump(rows, fh)
    return 0


def _hermes(path: str, start: float, end: float, out: str) -> int:
    """A process running hermes' memory manager with the fastmem provider on ``path``, one
    turn a second in the host's order, from ``start`` to ``end`` (time.time()); a first turn
    before ``start`` starts the provider's warm-up, which is waited for."""
    import json
    from pathlib import Path

    from fastmem.hermes import config as C
    from fastmem.hermes import install as I

    home = Path(tempfile.mkdtemp()) / "hermes"
    home.mkdir()
    os.environ["HERMES_HOME"] = str(home)
    I.install(home, import_facts=False)
    (home / "config.yaml").write_text("memory:\n  provider: fastmem\n")
    C.save({"db_path": path}, home)
    from agent.memory_manager import MemoryManager
    from plugins.memory import load_memory_provider

    mm = MemoryManager()
    provider = load_memory_provider("fastmem")
    mm.add_provider(provider)
    sid = "load-run"
    mm.initialize_all(sid, hermes_home=str(home), platform="cli", agent_context="primary")
    mm.prefetch_all("Hello, I am back.", session_id=sid)  # the first turn: the models start loading
    while not provider.ready and time.time() < start + 300:
        time.sleep(0.2)
    _until(start)
    rows, rnd, i = [], random.Random(7), 0
    while time.time() < end:
        i += 1
        marker = f"zh{i}w{rnd.randrange(10**6)}"
        user = f"Please keep in mind that my locker code is {marker} for visit {i}."
        reply = f"Noted: locker code {marker}."
        t0 = time.perf_counter()
        try:
            mm.prefetch_all(user, session_id=sid)
            t1 = time.perf_counter()
            mm.sync_all(user, reply, session_id=sid)
            t2 = time.perf_counter()
            mm.queue_prefetch_all(user, session_id=sid)
            rows.append({"user": user, "reply": reply, "marker": marker, "prefetch": t1 - t0, "sync": t2 - t1})
        except Exception as exc:
            rows.append({"error": repr(exc)[:200]})
        time.sleep(max(0.0, 1.0 - (time.perf_counter() - t0)))
    mm.shutdown_all()
    with open(out, "w") as fh:
        json.dump(rows, fh)
    return 0


def _id(result) -> int:
    import json

    data = result.structuredContent or json.loads(result.content[0].text)
    data = data.get("result", data)
    return int(data["id"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--writers", type=int, default=0, help="processes writing through the Python API meanwhile")
    ap.add_argument("--writer-rate", type=float, default=0.0,
                    help="writes a second per writer process (0: as fast as the store lets it)")
    ap.add_argument("--hermes", action="store_true", help="a process running the hermes provider meanwhile")
    ap.add_argument("--workers", type=int, default=1, help="server processes (fastmem mcp --workers)")
    ap.add_argument("--warm", type=float, default=90.0,
                    help="seconds the writer and hermes processes get to load their models before the clock")
    ap.add_argument("--role", nargs=4, help=argparse.SUPPRESS)  # writer|hermes PATH K START:END:OUT[:RATE]
    a = ap.parse_args()
    if a.role:
        role, path, k, rest = a.role
        start, end, rate, out = rest.split(":", 3)
        if role == "writer":
            return _writer(path, int(k), float(start), float(end), out, float(rate))
        return _hermes(path, float(start), float(end), out)

    from conftest import cached_store, fresh_copy
    from test_bench_scale import _build

    import fastmem
    from fastmem.evaluate import bench as B

    work = tempfile.mkdtemp()
    path = fresh_copy(cached_store("scale", a.size, _build(a.size)), work)
    token = secrets.token_urlsafe(32)
    with open(os.path.join(work, "token"), "w") as fh:
        fh.write(token)
    port = _free_port()
    log = open(os.path.join(work, "server.log"), "w+")  # a file: a pipe nobody reads would block the server
    proc = subprocess.Popen([sys.executable, "-m", "fastmem", "mcp", "--db", path, "--transport", "http",
                             "--port", str(port), "--token-file", os.path.join(work, "token"),
                             "--workers", str(a.workers)],
                            stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    lat = {"recall": [], "remember": []}
    written, errors = [], []
    try:
        deadline = time.monotonic() + 300
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                print(log.read()[-2000:])
                return 1
            time.sleep(0.2)
        queries = iter(B.queries(100_000, seed=11))
        helpers = []

        async def run():
            # the server's models are loaded first (one recall), then the clock starts
            await _client(f"http://127.0.0.1:{port}/mcp", token, -1, time.monotonic() + 1e-3, queries,
                          {"recall": [], "remember": []}, [], errors)
            roles = [("writer", str(k)) for k in range(a.writers)] + ([("hermes", "0")] if a.hermes else [])
            start = time.time() + (a.warm if roles else 0.0)
            wall_end = start + a.seconds
            for role, k in roles:
                out = os.path.join(work, f"{role}{k}.json")
                helpers.append((role, out, subprocess.Popen(
                    [sys.executable, os.path.abspath(__file__), "--role", role, path, k, f"{start}:{wall_end}:{a.writer_rate}:{out}"],
                    stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, "HF_HUB_OFFLINE": "1"})))
            await asyncio.sleep(max(0.0, start - time.time()))
            end = time.monotonic() + a.seconds
            await asyncio.gather(*(_client(f"http://127.0.0.1:{port}/mcp", token, k, end, queries, lat, written, errors)
                                   for k in range(a.clients)))

        t0 = time.perf_counter()
        asyncio.run(run())
        wall = time.perf_counter() - t0 - (a.warm if helpers else 0.0)
        for role, out, hp in helpers:
            if hp.wait(900) != 0:
                errors.append((role, f"the {role} process exited {hp.returncode}"))
    finally:
        t_stop = time.perf_counter()
        proc.terminate()
        try:
            proc.wait(600)
        except subprocess.TimeoutExpired:
            proc.kill()
            errors.append(("shutdown", "the server did not stop within 600 s of SIGTERM"))
        stop_s = time.perf_counter() - t_stop
    import json

    extra = {"writer": [], "hermes": []}
    for role, out, _ in helpers:
        if os.path.exists(out):
            with open(out) as fh:
                extra[role] += json.load(fh)
    errors += [(role, row["error"]) for role in extra for row in extra[role] if "error" in row]
    lat["writer remember"] = [r["s"] for r in extra["writer"] if "id" in r]
    lat["hermes prefetch"] = [r["prefetch"] for r in extra["hermes"] if "prefetch" in r]
    lat["hermes sync"] = [r["sync"] for r in extra["hermes"] if "sync" in r]
    written += [(r["id"], r["text"], r["marker"]) for r in extra["writer"] if "id" in r]
    lost = second = turns_lost = 0
    with fastmem.Memory(path, progress=False) as m:
        for r in extra["hermes"]:
            if "user" in r:
                found = m.admin.engine.db.execute("SELECT count(*) FROM memories WHERE scope='hermes' AND text IN (?, ?)",
                                     ("User: " + r["user"], "Assistant: " + r["reply"])).fetchone()[0]
                turns_lost += found != 2
        for mid, text, marker in written:
            try:
                row = m.get(mid)
            except fastmem.NotFound:
                row = None
            hits = [h.id for h in m.recall(marker, k=3, record=False, analogy=False).hits]
            if row is None or row.get("text") != text or mid not in hits:
                lost += 1
                if lost <= 3:
                    deep = {h.id: h.why for h in m.recall(marker, k=50, record=False, analogy=False).hits}
                    pending = m.admin.engine.db.execute("SELECT count(*) FROM pending WHERE memory_id=?", (mid,)).fetchone()[0]
                    print("lost:", mid, text, "| stored:", None if row is None else row.get("text"), "| hits:", hits,
                          "| pending:", pending, "| its why:", deep.get(mid), "| first's why:", deep.get(hits[0]) if hits else None)
            elif hits[0] != mid:  # a sibling load memory first: the run's own recalls moved use weights
                second += 1
    log.seek(0)
    server_errors = [line for line in log.read().splitlines() if "ERROR" in line or "Traceback" in line]
    log.close()
    shutil.rmtree(work, ignore_errors=True)
    print(f"{a.clients} clients, {a.workers} server process{'es' if a.workers > 1 else ''}, {a.writers} writer processes"
          + (f" ({a.writer_rate:g} writes/s each)" if a.writers and a.writer_rate else "")
          + (", the hermes provider in another" if a.hermes else "") + f", {wall:.0f} s, {a.size} memories at the start")
    print("| tool | calls | errors | p50 ms | p99 ms |")
    print("|---|---|---|---|---|")
    kind = {"recall": "recall", "remember": "remember", "writer remember": "writer", "hermes prefetch": "hermes"}
    for tool in lat:
        v = [x * 1e3 for x in lat[tool]]
        if v or tool in ("recall", "remember"):
            n_err = sum(1 for e in errors if e[0] == kind.get(tool))  # a hermes turn's errors: on its prefetch row
            print(f"| {tool} | {len(v)} | {n_err} | {_pct(v, 50):.1f} | {_pct(v, 99):.1f} |")
    print(f"remembered {len(written)} (clients and writer processes), lost {lost} (found, but not first: {second}); "
          f"hermes turns {sum(1 for r in extra['hermes'] if 'user' in r)}, lost {turns_lost}; "
          f"the server stopped {stop_s:.1f} s after SIGTERM; "
          f"errors: {errors[:3]}; server log: {len(server_errors)} error lines {server_errors[:2]}")
    return 1 if errors or lost or turns_lost else 0


if __name__ == "__main__":
    sys.exit(main())
