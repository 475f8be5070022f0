"""The ``fastmem ui`` web app (see :mod:`fastmem.ui`)."""

from __future__ import annotations

import datetime as dt
import hmac
import json
import logging
import secrets
import sys
import time
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

import fastmem

from ..errors import FastmemError, InvalidInput, NotFound
from ..serving import LOCAL_HOSTS, check_token, one_blas_thread
from ..util.text import check_str

__all__ = ["create_app", "serve", "COOKIE"]

logger = logging.getLogger("fastmem.ui")

#: The sign-in cookie of a server with a token (HttpOnly, SameSite=Strict).
COOKIE = "fastmem_ui"
#: Memories a list page shows.
PAGE = 50
#: Hits a recall shows at most.
MAX_K = 50

_STATUS = {InvalidInput: 400, NotFound: 404}


def _when(ts) -> str:
    """A timestamp (seconds or an aware datetime) as ``YYYY-MM-DD HH:MM`` UTC; empty for None."""
    if ts is None:
        return ""
    if not isinstance(ts, dt.datetime):
        ts = dt.datetime.fromtimestamp(float(ts), dt.timezone.utc)
    return ts.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")


def _event(e) -> str:
    """An event ``(verb, subjects, objects)`` as a line: ``person move place, time`` (a type
    filler, ``@person``, without its mark)."""
    verb, subj, obj = e[0], e[1], e[2]
    show = lambda xs: ", ".join(x[1:] if x.startswith("@") else x for x in xs)  # noqa: E731
    return " ".join(x for x in (show(subj), verb, show(obj)) if x)


def _same(got, want: bytes) -> bool:
    """Constant-time comparison of a submitted value (any text, or an upload) with a secret."""
    return hmac.compare_digest(str(got).encode("utf-8", "surrogateescape"), want)


class _Auth:
    """ASGI middleware of a server with a token: a request passes with ``Authorization:
    Bearer <token>`` or the sign-in cookie; anything else but ``/login`` gets 401 (a page
    pointing to ``/login``). The token is compared in constant time and never logged."""

    def __init__(self, app, token: str) -> None:
        self.app = app
        self._bearer = b"Bearer " + token.encode("ascii")
        self._cookie = token.encode("ascii")

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope.get("path") != "/login":
            headers = dict(scope.get("headers") or ())
            ok = hmac.compare_digest(headers.get(b"authorization", b""), self._bearer)
            if not ok:
                ok = _same(Request(scope).cookies.get(COOKIE, ""), self._cookie)
            if not ok:
                body = (b"<!doctype html><title>fastmem: sign in</title><p>This server needs its token: "
                        b"<a href='/login'>sign in</a>.</p>")
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/html; charset=utf-8"),
                                        (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


_HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY",
            "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"}


def _int(value, what: str, lo: int, hi: int) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{what} must be a whole number, not {value!r}") from None
    if not lo <= n <= hi:
        if hi >= 2**53:  # no one reads a bound of nineteen digits
            raise InvalidInput(f"{what} must be a whole number of {lo} or more, not {n}")
        raise InvalidInput(f"{what} must be between {lo} and {hi}, not {n}")
    return n


def _odds(p: float) -> str:
    """A p-value in words: "1 in 77"."""
    return f"1 in {1 / max(float(p), 1e-12):,.0f}"


_ID = 2**63 - 1


class _Site:
    """The pages of one app: each handler reads the store through :class:`fastmem.Memory`'s
    public verbs and renders one template."""

    def __init__(self, mem, *, read_only: bool, scope: str | None, token: str | None) -> None:
        self.mem, self.read_only, self.scope, self.token = mem, read_only, scope, token
        self.csrf = secrets.token_urlsafe(32)
        env = Environment(loader=PackageLoader("fastmem.ui", "templates"), autoescape=select_autoescape(["html"]))
        env.filters["when"] = _when
        env.filters["event"] = _event
        env.globals.update(read_only=read_only, scope=scope, csrf=self.csrf, channels=fastmem.recall_channels(), signed=token is not None)
        self.env = env

    # -- helpers ---------------------------------------------------------------------------
    def page(self, template: str, status: int = 200, **ctx) -> HTMLResponse:
        t0 = time.perf_counter()
        html = self.env.get_template(template).render(**ctx)
        took = f"render;dur={(time.perf_counter() - t0) * 1e3:.1f}"
        return HTMLResponse(html, status, headers={"Server-Timing": took, **_HEADERS})

    def in_scope(self, mid: int) -> dict[str, Any]:
        row = self.mem.get(mid)
        if self.scope is not None and row["scope"] != self.scope:
            raise NotFound(f"memory {mid} is not in scope {self.scope!r}")
        return row

    async def writable(self, request: Request) -> dict:
        """The POSTed form, after the read-only and CSRF checks."""
        if self.read_only:
            raise HTTPException(403, "this server is read-only: nothing can be changed here")
        form = await request.form()
        if not _same(form.get("csrf", ""), self.csrf.encode("ascii")):
            raise HTTPException(403, "the request has no valid CSRF token (reload the page and try again)")
        return dict(form)

    # -- pages -----------------------------------------------------------------------------
    def home(self, request: Request) -> Response:
        mem, scope = self.mem, self.scope
        offset = _int(request.query_params.get("offset", 0), "offset", 0, 2**62)
        rows = [mem.get(i) for i in mem.rows.newest(scope=scope, offset=offset, limit=PAGE)]
        return self.page("home.html", rows=rows, total=mem.count(scope=scope), offset=offset, page=PAGE,
                         pending=mem.pending.count())

    async def recall(self, request: Request) -> Response:
        """Recall as a host does (the evidence floor on; ``floor=0`` shows the nearest memories
        anyway); the search form POSTs, so a long query never goes into the URL."""
        args = dict(request.query_params)
        if request.method == "POST":
            args.update(await request.form())
        return await run_in_threadpool(self._recall_page, args)

    def _recall_page(self, args: dict) -> Response:
        mem = self.mem
        q = str(args.get("q", "")).strip()
        if not q:
            return RedirectResponse("/", 303)
        k = _int(args.get("k", 10), "k", 1, MAX_K)
        floor = str(args.get("floor", "1")) not in ("0", "no", "off", "false")
        t0 = time.perf_counter()
        r = mem.recall(q, k=k, scope=self.scope, record=False, floor=floor)
        took = (time.perf_counter() - t0) * 1e3
        sources = {h.id: h.source for h in r.hits}
        mapping = None
        if r.analogy is not None:  # the mapping's pairs index the turn's and the memory's events
            turn, theirs = mem.analogy.events_in(q), mem.analogy.events(r.analogy.id)
            mapping = [(_event(turn[i]) if i < len(turn) else "?", _event(theirs[j]) if j < len(theirs) else "?")
                       for i, j in r.analogy.why.get("events") or []]
        chance = _odds(r.analogy.why["p"]) if r.analogy is not None and "p" in r.analogy.why else None
        return self.page("recall.html", q=q, k=k, r=r, took=took, sources=sources, mapping=mapping, floor=floor,
                         chance=chance)

    def memory(self, request: Request) -> Response:
        mem, scope = self.mem, self.scope
        mid = _int(request.path_params["mid"], "memory id", 1, _ID)
        row = self.in_scope(mid)
        facts = mem.graph.facts(mid)
        entities = sorted({(f.subject_id, f.subject) for f in facts} | {(f.object_id, f.object) for f in facts})
        neighbours = {name: mem.graph.neighbours(nid, scope=scope)[:12] for nid, name in entities[:12]}
        members = [r.id for r in mem.expand(mid)] if mid in set(mem.chunks.list(scope=scope)) else None
        return self.page("memory.html", row=row, facts=facts, events=mem.analogy.events(mid), neighbours=neighbours,
                         chunks=mem.chunks.containing(mid), members=members, usage=mem.use.counts(mid),
                         history=mem.use.history(mid, limit=PAGE), meta=json.dumps(row.get("meta") or {}, indent=1))

    async def forget(self, request: Request) -> Response:
        mid = _int(request.path_params["mid"], "memory id", 1, _ID)
        if request.method == "GET":  # the confirmation
            return self.page("forget.html", row=self.in_scope(mid))
        await self.writable(request)
        row = self.in_scope(mid)
        self.mem.forget(mid)
        return self.page("done.html", title=f"Memory {mid} forgotten",
                         changed=[f"memory {mid} deleted with its vector, facts, structural code and use counters",
                                  f"its text was: {row['text']}"])

    def graph(self, request: Request) -> Response:
        mem, scope, qp = self.mem, self.scope, request.query_params
        name, a, b = qp.get("name", "").strip(), qp.get("a", "").strip(), qp.get("b", "").strip()
        found, ent = [], None
        if qp.get("id") is not None:
            ent = mem.graph.entity_by_id(_int(qp["id"], "entity id", 1, _ID))
        elif name:
            found = mem.graph.entity(name, scope=scope)
            if not found:
                raise NotFound(f"no entity named {name!r}" + (f" in scope {scope!r}" if scope is not None else ""))
            ent = found[0]
        facts = mem.graph.facts_about(ent.id, limit=PAGE, scope=scope) if ent else []
        near = mem.graph.neighbours(ent.id, scope=scope) if ent else []
        path = mem.graph.path(a, b, scope=scope) if a and b else None
        return self.page("graph.html", name=name, ent=ent, others=found[1:], facts=facts, near=near, a=a, b=b,
                         path=path)

    def review(self, request: Request) -> Response:
        """Three lists, each paged on its own (``?categories=``, ``?chunks=``, ``?aliases=``
        offsets)."""
        mem, scope, qp = self.mem, self.scope, request.query_params
        at = {k: _int(qp.get(k, 0), f"{k} offset", 0, 2**62) for k in ("categories", "chunks", "aliases")}
        cats = mem.categories.list(scope=scope) if scope is not None else mem.categories.list()
        chunk_ids = mem.chunks.list(scope=scope)
        chunk_rows = [(mem.get(c), len(mem.expand(c))) for c in chunk_ids[at["chunks"]:at["chunks"] + PAGE]]
        aliases = mem.graph.alias_candidates() if scope is None else None  # the graph's names are store-wide
        lists = {"categories": len(cats), "chunks": len(chunk_ids), "aliases": len(aliases or ())}
        return self.page("review.html", cats=cats[at["categories"]:at["categories"] + PAGE], chunks=chunk_rows,
                         aliases=None if aliases is None else aliases[at["aliases"]:at["aliases"] + PAGE],
                         at=at, lists=lists, page=PAGE)

    async def act(self, request: Request) -> Response:
        """One review action: ``/review/<kind>/<id>/<action>``."""
        await self.writable(request)
        kind, action = request.path_params["kind"], request.path_params["action"]
        oid = _int(request.path_params["oid"], f"{kind} id", 1, _ID)
        if kind == "category" and action in ("approve", "reject", "revert"):
            changed, undo = self._category(oid, action), None
            if action != "revert":
                undo = (f"/review/category/{oid}/revert", "Revert")
        elif kind == "chunk" and action == "dissolve":
            changed, undo = self._dissolve(oid), None
        elif kind == "alias" and action in ("accept", "reject") and self.scope is None:
            changed, undo = self._alias(oid, action == "accept"), None
        else:
            raise NotFound(f"no review action {action!r} for {kind!r}" + (" in a scoped ui" if self.scope else ""))
        return self.page("done.html", title="Done", changed=changed, undo=undo)

    def _category(self, cid: int, action: str) -> list[str]:
        if self.scope is not None and cid not in {c.id for c in self.mem.categories.list(scope=self.scope)}:
            raise NotFound(f"category {cid} is not in scope {self.scope!r}")
        c = getattr(self.mem.categories, action)(cid)
        verb = {"approve": "approved: it is now a graph node its members link to",
                "reject": "rejected: later passes leave it out",
                "revert": "back to proposed: no trace left in the graph"}[action]
        return [f"category {c.id} ({c.name}: {', '.join(c.members)}) {verb}"]

    def _dissolve(self, cid: int) -> list[str]:
        row = self.in_scope(cid)
        members = [r.id for r in self.mem.expand(cid)]
        self.mem.chunks.dissolve(cid)
        return [f"chunk {cid} dissolved: its memory, copied facts, code and vector are gone",
                f"its members were never changed: {', '.join(map(str, members))}", f"its text was: {row['text']}"]

    def _alias(self, aid: int, accept: bool) -> list[str]:
        cand = next((x for x in self.mem.graph.alias_candidates() if x["id"] == aid), None)
        if cand is None:
            raise NotFound(f"no alias candidate {aid}")
        self.mem.graph.review_alias(aid, accept=accept)
        return [f"{cand['name']!r} and {cand['other']!r} "
                + ("merged into one entity, with their facts" if accept else "kept apart")]

    def use(self, request: Request) -> Response:
        rising, sinking = self.mem.use.extremes(scope=self.scope, limit=20)
        step, bins = self.mem.use.timeline(scope=self.scope, bins=60)
        return self.page("use.html", rising=rising, sinking=sinking, bins=bins, step=step,
                         top=max((b[1] for b in bins), default=0))

    def health(self, request: Request) -> Response:
        report = self.mem.admin.check() if request.query_params.get("check") == "1" else None
        return self.page("health.html", stats=self.mem.admin.stats(), pending=self.mem.pending.count(), report=report)

    async def login(self, request: Request) -> Response:
        if self.token is None:
            return RedirectResponse("/", 303)
        if request.method == "GET":
            return self.page("login.html")
        form = await request.form()
        if not _same(form.get("token", ""), self.token.encode("ascii")):
            return self.page("login.html", status=401, wrong=True)
        resp = RedirectResponse("/", 303)
        resp.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return resp

    # -- errors: the library's message on a page, never a traceback ------------------------
    def library_error(self, request: Request, exc: Exception) -> Response:
        status = next((s for cls, s in _STATUS.items() if isinstance(exc, cls)), 409)
        return self.page("error.html", status=status, title=type(exc).__name__, message=str(exc))

    def http_error(self, request: Request, exc: HTTPException) -> Response:
        return self.page("error.html", status=exc.status_code, title=f"Error {exc.status_code}", message=exc.detail)

    def crash(self, request: Request, exc: Exception) -> Response:
        logger.error("fastmem ui: %s %s failed", request.method, request.url.path, exc_info=exc)
        return self.page("error.html", status=500, title="Internal error",
                         message=f"{type(exc).__name__}: the server's log has the details")

    async def refuse_writes(self, scope, receive, send) -> None:
        """A read-only app's front: any request but GET/HEAD (and the sign-in) gets the
        read-only page, whatever its path."""
        page = self.page("error.html", status=403, title="Read-only",
                         message="this server is read-only: nothing can be changed here")
        await page(scope, receive, send)


def create_app(mem, *, read_only: bool = False, scope: str | None = None, token: str | None = None):
    """The web app (an ASGI app) over an open :class:`fastmem.Memory`.

    Parameters
    ----------
    mem : fastmem.Memory
        The store (the app does not close it).
    read_only : bool
        Show no control that writes, and refuse every POST but a search's and the sign-in (403).
    scope : str, optional
        Confine every page to this scope (a memory of another scope is not found).
    token : str, optional
        Require this token (:func:`fastmem.serving.check_token`) on every request: a browser
        signs in on ``/login`` once, a script sends ``Authorization: Bearer <token>``.
    """
    if scope is not None:
        check_str(scope, "scope")
    if token is not None:
        check_token(token)
    site = _Site(mem, read_only=read_only, scope=scope, token=token)
    routes = [Route("/", site.home), Route("/recall", site.recall, methods=["GET", "POST"]),
              Route("/memory/{mid}", site.memory),
              Route("/memory/{mid}/forget", site.forget, methods=["GET"] if read_only else ["GET", "POST"]),
              Route("/graph", site.graph), Route("/review", site.review), Route("/use", site.use),
              Route("/health", site.health), Route("/login", site.login, methods=["GET", "POST"])]
    if not read_only:
        routes.append(Route("/review/{kind}/{oid}/{action}", site.act, methods=["POST"]))
    app = Starlette(routes=routes, exception_handlers={FastmemError: site.library_error,
                                                      HTTPException: site.http_error, Exception: site.crash})
    async def read_only_front(scope_, receive, send) -> None:  # a crafted POST anywhere: the read-only page
        if scope_["type"] == "http" and scope_["method"] not in ("GET", "HEAD") \
                and scope_.get("path") not in ("/login", "/recall"):  # a search reads
            await site.refuse_writes(scope_, receive, send)
            return
        await app(scope_, receive, send)

    front = read_only_front if read_only else app
    return _Auth(front, token) if token is not None else front


def serve(path: str, *, host: str = "127.0.0.1", port: int = 8777, scope: str | None = None, read_only: bool = False,
          allow_remote: bool = False, token: str | None = None) -> None:
    """Open the store at ``path`` and serve the app until interrupted. A host other than
    loopback needs ``allow_remote`` and a ``token``."""
    if host not in LOCAL_HOSTS:
        if not allow_remote:
            raise InvalidInput(f"binding {host} exposes the memory to the network: pass allow_remote "
                               "(--allow-remote) if that is what you want, with a token")
        if token is None:
            raise InvalidInput(f"binding {host} needs a token: put one in a file and pass --token-file FILE "
                               "(or set FASTMEM_UI_TOKEN)")
    import threading

    import uvicorn

    import fastmem

    one_blas_thread()
    with fastmem.Memory(path, progress=False) as mem:
        threading.Thread(target=fastmem.warmup, kwargs={"models": True, "kernels": False}, daemon=True,
                         name="fastmem-ui-warmup").start()
        app = create_app(mem, read_only=read_only, scope=scope, token=token)
        where = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
        print(f"fastmem ui: {path} at {where}" + (" (read-only)" if read_only else "")
              + (f", scope {scope!r}" if scope is not None else "")
              + ("; sign in with the token on /login" if token else ""), file=sys.stderr)
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
