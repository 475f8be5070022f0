"""Load held: ``fastmem mcp --transport http`` on loopback under concurrent clients.

    python bench/load_mcp.py [--clients 16] [--seconds 120] [--size 100000]

A fresh copy of the cached scale store (``test_bench_scale.py``; 100k memories by default) is
served over streamable HTTP with a bearer token. Each client holds its own MCP session and
loops until the time is up (after one recall has loaded the server's models): 80% ``recall`` (a query new to the server each time, k=5, the
analogy slot on), 20% ``remember`` of a text unique to that call. Afterwards, with the server
stopped, every id a ``remember`` returned must be in the file with its text and among the
top 3 hits of a recall of its unique marker (nothing lost; how many were not the first hit,
behind a sibling load memory whose use weight the run's recalls raised, is printed too). Prints one table: calls, errors,
p50 and p99 latency per tool, and the loss count; exits 1 on any error or loss.
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
    a = ap.parse_args()

    import fastmem
    from conftest import cached_store, fresh_copy
    from fastmem import benchmark as B
    from test_bench_scale import _build

    work = tempfile.mkdtemp()
    path = fresh_copy(cached_store("scale", a.size, _build(a.size)), work)
    token = secrets.token_urlsafe(32)
    with open(os.path.join(work, "token"), "w") as fh:
        fh.write(token)
    port = _free_port()
    log = open(os.path.join(work, "server.log"), "w+")  # a file: a pipe nobody reads would block the server
    proc = subprocess.Popen([sys.executable, "-m", "fastmem", "mcp", "--db", path, "--transport", "http",
                             "--port", str(port), "--token-file", os.path.join(work, "token")],
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

        async def run():
            # the server's models are loaded first (one recall), then the clock starts
            await _client(f"http://127.0.0.1:{port}/mcp", token, -1, time.monotonic() + 1e-3, queries,
                          {"recall": [], "remember": []}, [], errors)
            end = time.monotonic() + a.seconds
            await asyncio.gather(*(_client(f"http://127.0.0.1:{port}/mcp", token, k, end, queries, lat, written, errors)
                                   for k in range(a.clients)))

        t0 = time.perf_counter()
        asyncio.run(run())
        wall = time.perf_counter() - t0
    finally:
        t_stop = time.perf_counter()
        proc.terminate()
        try:
            proc.wait(600)
        except subprocess.TimeoutExpired:
            proc.kill()
            errors.append(("shutdown", "the server did not stop within 600 s of SIGTERM"))
        stop_s = time.perf_counter() - t_stop
    lost = second = 0
    with fastmem.Memory(path, progress=False) as m:
        for mid, text, marker in written:
            try:
                row = m.get(mid)
            except fastmem.NotFound:
                row = None
            hits = [h.id for h in m.recall(marker, k=3, record=False, analogy=False).hits]
            if row is None or row.get("text") != text or mid not in hits:
                lost += 1
                if lost <= 3:
                    print("lost:", mid, text, "| stored:", None if row is None else row.get("text"), "| hits:", hits)
            elif hits[0] != mid:  # a sibling load memory first: the run's own recalls moved use weights
                second += 1
    log.seek(0)
    server_errors = [line for line in log.read().splitlines() if "ERROR" in line or "Traceback" in line]
    log.close()
    shutil.rmtree(work, ignore_errors=True)
    print(f"{a.clients} clients, {wall:.0f} s, {a.size} memories at the start")
    print("| tool | calls | errors | p50 ms | p99 ms |")
    print("|---|---|---|---|---|")
    for tool in ("recall", "remember"):
        v = [x * 1e3 for x in lat[tool]]
        print(f"| {tool} | {len(v)} | {sum(1 for e in errors if e[0] == tool)} | {_pct(v, 50):.1f} | {_pct(v, 99):.1f} |")
    print(f"remembered {len(written)}, lost {lost} (found, but not first: {second}); the server stopped {stop_s:.1f} s after SIGTERM; "
          f"errors: {errors[:3]}; server log: {len(server_errors)} error lines {server_errors[:2]}")
    return 1 if errors or lost else 0


if __name__ == "__main__":
    sys.exit(main())
