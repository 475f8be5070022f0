"""fastmem as a Model Context Protocol server (``fastmem mcp``; extra ``fastmem[mcp]``).

Built on the official ``mcp`` SDK's high-level server (``MCPServer``, called FastMCP before
mcp 2). One server serves one store file:

* **tools** ``remember``, ``recall`` (hits with their channels, and the analogy with the
  reason it was chosen), ``analogies``, ``forget``, ``feedback``, ``graph``, ``consolidate``,
  ``expand`` and ``categories``; typed arguments (the SDK validates them) and docstrings
  written for the model that calls them. A bad argument or a fastmem error is a tool error
  carrying fastmem's message; the server keeps serving.
* **resources** ``fastmem://stats`` and ``fastmem://memory/{id}``; a **prompt**
  ``use_memory`` that shows the model how to use recall and the analogy.
* **tenants**: ``scope="alice"`` (``--scope``) confines every tool to that scope: writes go
  there, reads see only it, and another scope's ids do not exist. Without it the server
  serves the whole file (writes to the default scope ``""``).
* **read-only** (``--read-only``): no tool that writes is offered and recalls are not
  counted in the usage ledger.

Transports: ``stdio`` (desktop clients start the server themselves) or streamable HTTP,
bound to 127.0.0.1 unless ``allow_remote`` is given. Another address also needs a bearer
token (``token``; on the command line ``--token-file FILE`` or the ``FASTMEM_MCP_TOKEN``
environment variable, never an argument a process list shows): every HTTP request must carry
``Authorization: Bearer <token>`` or is answered 401 before it reaches the server. The token
is compared in constant time and never logged or printed. A token given on localhost is
checked too.
"""

from __future__ import annotations

import hmac
import json
import logging
import sys
import threading
from typing import Annotated, Any, Literal

import anyio.to_thread

try:
    from mcp.types import ToolAnnotations
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("fastmem mcp needs the MCP SDK: pip install 'fastmem[mcp]'") from exc
try:  # mcp 1.x: FastMCP
    from mcp.server.fastmcp import FastMCP as _Server
    from mcp.server.fastmcp.exceptions import ResourceError as _NoResource
    from mcp.server.fastmcp.exceptions import ToolError

    _SDK2 = False
except ImportError:  # mcp 2.x renamed it MCPServer  # pragma: no cover - the extra pins 1.x
    from mcp.server.mcpserver import MCPServer as _Server
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError as _NoResource
    from mcp.server.mcpserver.exceptions import ToolError

    _SDK2 = True
from pydantic import Field

from .errors import FastmemError, InvalidInput, NotFound
from .integrations import analogy_metadata, standing_metadata, tool_hit
from .serving import LOCAL_HOSTS, TOKEN_MIN, check_token, listen, one_blas_thread, run_workers, signals_ready

__all__ = ["LOCAL_HOSTS", "TOKEN_MIN", "build_server", "check_token", "serve"]

logger = logging.getLogger("fastmem.mcp")

#: The exceptions that end a client's event stream when the client closes its session.
_CLOSED = ("ClosedResourceError", "BrokenResourceError", "EndOfStream", "ConnectionResetError", "BrokenPipeError")


class _ClientClosed(logging.Filter):
    """The SDK logs "Error in standalone SSE ..." with a traceback whenever a client closes its
    session over streamable HTTP (the stream it was writing to is gone): a normal end, logged at
    debug on ``fastmem.mcp`` instead. Any other error passes as the SDK logged it."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if str(record.msg).startswith("Error in standalone SSE") and type(exc).__name__ in _CLOSED:
            logger.debug("a client closed its event stream (%s)", type(exc).__name__)
            return False
        return True


def quiet_closed_streams() -> None:
    """Install :class:`_ClientClosed` on the SDK's streamable-HTTP logger (idempotent)."""
    sdk = logging.getLogger("mcp.server.streamable_http")
    if not any(isinstance(f, _ClientClosed) for f in sdk.filters):
        sdk.addFilter(_ClientClosed())


class _BearerAuth:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401."""

    def __init__(self, app, token: str) -> None:
        self.app = app
        self._want = b"Bearer " + token.encode("ascii")

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(got, self._want):
                body = b'{"error": "unauthorized: this server needs Authorization: Bearer <token>"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

_READ = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
_WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
_DELETE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)

INSTRUCTIONS = """\
fastmem is this user's long-term memory. Call `recall` with the user's message (or what you
need to know) before answering anything that may depend on the past; call `remember` with
one self-contained sentence for each thing worth keeping (a fact, a preference, a decision).
`recall` returns `hits` (what looks like the message, best first) and at most one `analogy`:
a past memory with the same structure in other words (a mapping of roles, not a topic
match). Mention the analogy when it helps the user see a pattern; ignore it otherwise. Use
`feedback` on a hit that helped or misled you: it changes how that memory ranks later."""
READ_ONLY_INSTRUCTIONS = """\
fastmem is this user's long-term memory, offered read-only here. Call `recall` with the
user's message (or what you need to know) before answering anything that may depend on the
past. It returns `hits` (what looks like the message, best first) and at most one `analogy`: a
past memory with the same structure in other words (a mapping of roles, not a topic match).
Mention the analogy when it helps the user see a pattern; ignore it otherwise."""


async def _run(work):
    """Run a store call on a worker thread (the event loop keeps serving; the store's own lock
    orders the calls); fastmem's documented errors reach the client as tool errors carrying
    their message."""
    try:
        return await anyio.to_thread.run_sync(work)
    except (FastmemError, ValueError, KeyError) as exc:
        raise ToolError(str(exc) or type(exc).__name__) from exc


_hit = tool_hit


def _analogy(an) -> dict[str, Any]:
    out = analogy_metadata(an)
    del out["kind"], out["scope"]
    return {"text": an.text, **out, "score": round(out["score"], 6), "z": round(out["z"], 2),
            "surface": round(out["surface"], 3)}


def _fact(f) -> dict[str, Any]:
    return {"subject": f.subject, "relation": f.relation, "object": f.object, "memory_id": f.memory_id, "mood": f.mood,
            "detail": f.detail}


def _category(c) -> dict[str, Any]:
    return {"id": c.id, "name": c.name, "status": c.status, "members": list(c.members)[:50],
            "relations": list(c.relations)}


class _Tenant:
    """The store as one client sees it: its scope, its write permission, its ids."""

    def __init__(self, memory, scope: str | None, read_only: bool) -> None:
        self.mem = memory
        self.scope = scope  # None: the whole file
        self.read_only = read_only
        self.instructions = READ_ONLY_INSTRUCTIONS if read_only else INSTRUCTIONS

    @property
    def write_scope(self) -> str:
        return "" if self.scope is None else self.scope

    def own(self, mid: int) -> dict[str, Any]:
        """The memory's row when this client may see it (else NotFound: another tenant's
        memories do not exist for it)."""
        row = self.mem.get(mid)
        if self.scope is not None and row["scope"] != self.scope:
            raise NotFound(f"no memory with id {mid}")
        return row

    def writable(self, what: str) -> None:
        if self.read_only:
            raise InvalidInput(f"{what} is not allowed: this server is read-only")


def build_server(memory, *, scope: str | None = None, read_only: bool = False, name: str = "fastmem",
                 host: str = "127.0.0.1", port: int = 8765, stateless: bool = False):
    """The MCP server (the SDK's ``FastMCP``; ``MCPServer`` from mcp 2) for an open
    :class:`fastmem.Memory`.

    The caller owns ``memory`` (and closes it after the server stops). ``scope`` confines
    every tool to one tenant; ``read_only`` leaves out the tools that write; ``host`` and
    ``port`` are the HTTP transport's. ``stateless``: the HTTP transport keeps no session
    between requests (any of several server processes can answer any request; no tool of
    fastmem's needs a session).
    """
    if scope is not None and (not isinstance(scope, str) or len(scope) > 200):
        raise InvalidInput("scope must be a str of at most 200 characters")
    t = _Tenant(memory, scope, bool(read_only))
    if _SDK2:  # pragma: no cover - the extra pins 1.x
        server = _Server(name, instructions=t.instructions, version=_version(), log_level="WARNING")
        server.fastmem_http = {"host": host, "port": port, "stateless_http": stateless, "json_response": stateless}
    else:
        server = _Server(name, instructions=t.instructions, host=host, port=port, log_level="WARNING",
                         stateless_http=stateless, json_response=stateless)
    _reading_tools(server, t)
    if not read_only:
        _writing_tools(server, t)
    _store_tools(server, t)
    _resources(server, t)
    return server


def _version() -> str:
    from . import __version__

    return __version__


def _reading_tools(server, t: _Tenant) -> None:
    mem = t.mem

    @server.tool(annotations=_READ)  # it counts what it surfaced, but changes no memory
    async def recall(query: Annotated[str, Field(description="The user's message, or what you need to know.")],
                     k: Annotated[int, Field(ge=1, le=50, description="How many memories to return.")] = 5,
                     analogy: Annotated[bool, Field(description="Also look for a structural analogy.")] = True,
                     floor: Annotated[bool, Field(description="Return no hits when none is grounded in the "
                                                              "message (chit-chat gets nothing).")] = True,
                     ) -> dict[str, Any]:
        """Recall memories for a message: keyword, meaning and knowledge-graph matches fused and
        ranked by past usefulness (`hits`, best first; `channels` says which search found each
        and at what rank), plus at most one `analogy`: a past memory with the same structure in
        other words, with the `reason` it was chosen. `analogy` is null when nothing stands out;
        `hits` is empty when nothing recalled is grounded in the message (`floor`). `standing`
        lists the user's standing instructions and preferences that apply to the message
        (follow them; `reach` "global" applies to every turn; a later one on the same topic has
        replaced an earlier one). `analogy_reason` says in words why the analogy was chosen or why
        there is none."""
        def work():
            res = mem.recall(query, k=k, scope=t.scope, analogy=analogy, record=not t.read_only, floor=floor)
            return {"hits": [_hit(h) for h in res.hits],
                    "analogy": None if res.analogy is None else _analogy(res.analogy),
                    "analogy_reason": res.analogy_reason,
                    "standing": [standing_metadata(x) for x in res.standing]}
        return await _run(work)

    @server.tool(annotations=_READ)
    async def analogies(text: Annotated[str, Field(description="A situation, story or statement.")],
                        k: Annotated[int, Field(ge=1, le=20, description="How many to return.")] = 5,
                        ) -> dict[str, Any]:
        """Explore: the memories whose structure (who does what to whom, in what order) is closest
        to `text`, however different their words. `z` is how far above the store's mean each
        one's alignment stands; `shared` lists the structure they have in common."""
        return await _run(lambda: {"analogies": [_analogy(a) for a in mem.analogy.explore(text, k=k, scope=t.scope)]})

    @server.tool(annotations=_READ)
    async def graph(action: Annotated[Literal["entity", "neighbours", "path"], Field(
                        description="entity: an entity and its facts; neighbours: what is connected to it; "
                                    "path: the facts linking it to `other`.")],
                    name: Annotated[str, Field(description="A person, place, organisation or thing.")],
                    other: Annotated[str | None, Field(description="The second entity (path only).")] = None,
                    depth: Annotated[int, Field(ge=1, le=2, description="neighbours: 1 or 2 hops.")] = 1,
                    limit: Annotated[int, Field(ge=1, le=200, description="Most facts per entity.")] = 20,
                    ) -> dict[str, Any]:
        """The knowledge graph of facts (subject -relation-> object, canonical entity names)
        extracted from the memories."""
        def work():
            if action == "entity":
                return {"entities": [{"id": e.id, "name": e.name, "type": e.type, "aliases": list(e.aliases),
                                      "facts": [_fact(f) for f in mem.graph.facts_about(e.id, limit=limit, scope=t.scope)]}
                                     for e in mem.graph.entity(name, scope=t.scope)]}
            if action == "neighbours":
                return {"neighbours": [{"name": e.name, "type": e.type, "distance": d}
                                       for e, d in mem.graph.neighbours(name, depth=depth, scope=t.scope)[:limit * 10]]}
            if not other:
                raise InvalidInput("path needs `other`: the second entity")
            path = mem.graph.path(name, other, scope=t.scope)
            return {"path": None if path is None else [_fact(f) for f in path]}
        return await _run(work)

    @server.tool(annotations=_READ)
    async def expand(chunk_id: Annotated[int, Field(ge=1, description="The id of a chunk (a recalled memory "
                                                                       "that stands for several).")],
                     ) -> dict[str, Any]:
        """The original memories a chunk summarises (chunks are made by `consolidate`; their
        members are kept unchanged)."""
        def work():
            t.own(chunk_id)
            return {"members": [{"id": r.id, "text": r.text, "at": None if r.at is None else r.at.isoformat()}
                                for r in mem.expand(chunk_id)]}
        return await _run(work)


def _writing_tools(server, t: _Tenant) -> None:
    mem = t.mem

    @server.tool(annotations=_WRITE)
    async def remember(text: Annotated[str, Field(description="One self-contained statement worth keeping.")],
                       source: Annotated[str | None, Field(description="Where it came from (a conversation id, a "
                                                           "document); memories of one source are neighbours.")] = None,
                       at: Annotated[str | None, Field(description="When it happened, ISO 8601 "
                                                                   "(2024-05-07T14:00).")] = None,
                       speaker: Annotated[str | None, Field(description="Who said or wrote it.")] = None,
                       ) -> dict[str, Any]:
        """Store a memory (its facts, meaning and structure are indexed in the same write).
        Returns its id."""
        return await _run(lambda: {"id": mem.remember(text, scope=t.write_scope, source=source, at=at,
                                                      speaker=speaker)})

    @server.tool(annotations=_DELETE)
    async def forget(id: Annotated[int, Field(ge=1, description="The memory's id.")]) -> dict[str, Any]:
        """Delete a memory for good, with its facts and everything derived from it."""
        def work():
            t.own(id)
            mem.forget(id)
            return {"forgot": id}
        return await _run(work)

    @server.tool(annotations=_WRITE)
    async def feedback(id: Annotated[int, Field(ge=1, description="The id of a recalled memory.")],
                       helpful: Annotated[bool, Field(description="true: it helped; false: it was not "
                                                                  "useful.")] = True,
                       ) -> dict[str, Any]:
        """Say whether a recalled memory helped: helpful ones rank higher later, unhelpful ones
        lower (nothing is deleted). Returns the memory's new use weight (1.0 is neutral)."""
        def work():
            t.own(id)
            return {"id": id, "weight": round(float(mem.feedback(id, engaged=helpful)), 4)}
        return await _run(work)

    @server.tool(annotations=_WRITE)
    async def consolidate() -> dict[str, Any]:
        """Compress memories that keep co-occurring into chunks (summaries that stand for
        their members in recall; the members are kept, `expand` lists them). Safe to repeat."""
        def work():
            rep = mem.consolidate(scope=t.scope, progress=False)
            return {"created": list(rep.created), "updated": list(rep.updated), "unchanged": len(rep.unchanged),
                    "clusters": rep.clusters, "seconds": round(rep.seconds, 2)}
        return await _run(work)


def _store_tools(server, t: _Tenant) -> None:
    mem = t.mem
    mine = (lambda status=None: mem.categories.list(status, scope=t.scope)) if t.scope is not None else mem.categories

    @server.tool(annotations=_READ if t.read_only else _WRITE)
    async def categories(action: Annotated[Literal["list", "propose", "approve", "reject", "revert"], Field(
                             description="list; propose (find groups of entities that play the same roles); "
                                         "approve / reject / revert one proposal by id.")] = "list",
                         id: Annotated[int | None, Field(ge=1, description="The category (approve, reject, "
                                                                           "revert).")] = None,
                         status: Annotated[Literal["proposed", "approved", "rejected"] | None, Field(
                             description="list: only this status.")] = None,
                         ) -> dict[str, Any]:
        """Emergent categories: groups of entities that play the same roles in the facts
        ("dog, cat, parrot: things people feed and walk"), proposed by a pass over the graph
        and only used once approved. Every step is reversible."""
        def work():
            if action == "list":
                cats = mine(status)
            elif action == "propose":
                t.writable("propose")
                cats = mem.categories.propose(scope=t.scope)
            else:
                t.writable(action)
                if id is None:
                    raise InvalidInput(f"{action} needs the category's `id`")
                if id not in {c.id for c in mine()}:
                    raise NotFound(f"no category with id {id}")
                cats = [getattr(mem.categories, action)(id)]
            return {"categories": [_category(c) for c in cats]}
        return await _run(work)


def _resources(server, t: _Tenant) -> None:
    mem = t.mem

    @server.resource("fastmem://stats", name="stats", mime_type="application/json",
                     description="How many memories (of this server's scope), the model and the schema.")
    def stats() -> str:
        out = {"memories": mem.count(scope=t.scope), "chunks": len(mem.chunks.list(scope=t.scope)),
               "scope": t.scope, "read_only": t.read_only, "model": mem.admin.embedder.model_id,
               "dimensions": mem.admin.embedder.dim, "schema_version": mem.admin.stats()["schema_version"]}
        return json.dumps(out)

    @server.resource("fastmem://memory/{id}", name="memory", mime_type="application/json",
                     description="One memory: text, scope, source, time, speaker, metadata, facts and usage.")
    def memory(id: str) -> str:
        try:
            mid = int(id)
            row = t.own(mid)
        except (ValueError, FastmemError):
            raise _NoResource(f"no memory with id {id!r}") from None
        out = {k: row[k] for k in ("id", "text", "scope", "source", "meta", "speaker")}
        out["at"] = None if row.get("at") is None else row["at"].isoformat()
        out["facts"] = [_fact(f) for f in mem.graph.facts(mid)]
        out["usage"] = mem.use.counts(mid)
        return json.dumps(out, default=str)

    @server.prompt(name="use_memory", description="How to use fastmem's recall and its analogy in a reply.")
    def use_memory(message: str = "") -> str:
        text = t.instructions
        if message:
            text += f"\n\nThe user's message: {message}\nStart by calling `recall` with it."
        return text


def serve(path: str, *, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8765,
          scope: str | None = None, read_only: bool = False, allow_remote: bool = False,
          token: str | None = None, workers: int = 1) -> None:
    """Open the store at ``path`` and serve it until the client goes (stdio) or the process is
    stopped (HTTP); the store is closed (index and statistics saved) on the way out.

    ``token``: the bearer token every HTTP request must carry (required with a non-loopback
    ``host``, which also needs ``allow_remote``; see the module docstring). The models load
    on a background thread from the start, so the first call waits less.

    ``workers`` (HTTP only, POSIX): serve from this many processes, each with its own open
    store on the same file and its own models (about 650 MB each), all accepting on one
    socket. One process is bound by Python's global lock at about 1.2 cores; on a machine with
    more cores, more processes serve more calls (README: the load runs). The transport
    is then stateless (any process answers any request: no MCP session is kept between
    requests, which none of fastmem's tools needs); a write made through one process is seen
    by the next call to any other (each catches up with the file before it reads). This
    process only holds the socket and restarts a worker that dies; SIGTERM or SIGINT stops
    them all.
    """
    if transport not in ("stdio", "http"):
        raise InvalidInput(f"transport must be 'stdio' or 'http', not {transport!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidInput(f"workers must be an int of at least 1, not {workers!r}")
    if workers > 1 and transport != "http":
        raise InvalidInput("several workers serve the http transport (a stdio client talks to one process)")
    if token is not None:
        check_token(token)
        if transport != "http":
            raise InvalidInput("a bearer token is for the http transport (stdio has no network side)")
    if transport == "http" and host not in LOCAL_HOSTS:
        if not allow_remote:
            raise InvalidInput(f"binding {host} exposes the memory to the network: pass allow_remote "
                               "(--allow-remote) if that is what you want, with a bearer token")
        if token is None:
            raise InvalidInput(f"binding {host} needs a bearer token: put one in a file and pass --token-file FILE "
                               "(or set FASTMEM_MCP_TOKEN)")
        print(f"fastmem mcp: serving {path} on {host}:{port}; every request needs the bearer token", file=sys.stderr)
    if workers > 1:
        _serve_workers(path, workers, host=host, port=port, scope=scope, read_only=read_only, token=token)
        return
    _serve_one(path, transport=transport, host=host, port=port, scope=scope, read_only=read_only, token=token)


def _serve_one(path: str, *, transport: str, host: str, port: int, scope: str | None, read_only: bool,
               token: str | None, sock=None) -> None:
    """One server process on ``path`` (``sock``: a listening socket it shares with others)."""
    import fastmem

    one_blas_thread()
    if transport == "http":
        quiet_closed_streams()
    mem = fastmem.Memory(path, progress=False)
    warm = threading.Thread(target=_warm, args=(mem,), name="fastmem-mcp-warmup", daemon=True)
    warm.start()
    try:
        server = build_server(mem, scope=scope, read_only=read_only, host=host, port=port, stateless=sock is not None)
        if transport == "stdio":
            server.run("stdio")
        elif token is not None or sock is not None:
            _serve_http(server, host, port, token, sock)
        elif _SDK2:  # pragma: no cover - the extra pins 1.x
            server.run("streamable-http", host=host, port=port)
        else:
            server.run("streamable-http")
    finally:
        mem.close()


def _serve_workers(path: str, workers: int, *, host: str, port: int, scope: str | None, read_only: bool,
                   token: str | None) -> None:
    """``workers`` processes serving ``path`` over HTTP on one socket (see :func:`serve`)."""
    import fastmem

    fastmem.Memory(path, progress=False).close()  # the file opens (created, upgraded) once, before the workers
    sock = listen(host, port)
    print(f"fastmem mcp: {workers} worker processes serving {path} on http://{host}:{sock.getsockname()[1]}/mcp",
          file=sys.stderr)
    try:
        rc = run_workers(workers, lambda i: _serve_one(path, transport="http", host=host, port=port, scope=scope,
                                                       read_only=read_only, token=token, sock=sock),
                         name="fastmem mcp")
    finally:
        sock.close()
    if rc:
        raise SystemExit(rc)


def _serve_http(server, host: str, port: int, token: str | None, sock=None) -> None:
    """The SDK's streamable-HTTP app (behind :class:`_BearerAuth` when there is a token) on
    uvicorn, as the SDK runs it, without an access log; on ``sock`` when given."""
    import uvicorn

    app = server.streamable_http_app()
    if token is not None:
        app = _BearerAuth(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    if sock is None:
        uvicorn.Server(config).run()
        return

    class WorkerServer(uvicorn.Server):
        """uvicorn in a worker process: the stop signals the worker held back while it loaded
        are delivered once uvicorn's own handlers are installed (at startup)."""

        async def startup(self, sockets=None) -> None:
            signals_ready()
            await super().startup(sockets=sockets)

    WorkerServer(config).run(sockets=[sock])


def _warm(mem) -> None:
    try:
        import fastmem

        fastmem.warmup(models=True)
        if mem.pending.count():
            mem.pending.derive()
    except Exception:  # pragma: no cover - a failed warm-up only costs the first call
        logger.warning("fastmem warm-up failed", exc_info=True)
