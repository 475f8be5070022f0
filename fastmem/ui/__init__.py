"""``fastmem ui``: a small local web app to look inside one store.

:func:`create_app` builds the Starlette app over an open :class:`fastmem.Memory` (every page is
the library underneath: the Recall page is ``Memory.recall``, a forget is ``Memory.forget``);
:func:`serve` opens a store and serves the app with uvicorn on 127.0.0.1. Pages: Recall (the
hits with each channel's rank and score, the analogy's corresponding events side by side),
Memory (text, metadata, facts, events, chunks, graph neighbours, use history, forget with a
confirmation), Health (stats, pending, the integrity check).

Safety: a non-loopback bind needs ``allow_remote`` and a token (the browser signs in once on
``/login``; the token is then an HttpOnly, SameSite=Strict cookie; scripts may send
``Authorization: Bearer``); every request that changes the store carries the page's CSRF
token; ``read_only`` registers no writing control and refuses every POST; ``scope`` confines
every page. Errors are pages with the library's message, never a traceback.
"""

from .app import create_app, serve

__all__ = ["create_app", "serve"]
