"""A loopback OpenAI-compatible chat-completions server for host tests (127.0.0.1 only).

Every request body is kept in ``requests``; each reply comes from ``script(body)``, which
returns an assistant message: ``{"content": str}`` or ``{"tool_calls": [(name, args), ...]}``.
Streaming requests get the same message as server-sent events. It binds 127.0.0.1 only and
stops with its context.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _message(msg: dict, model: str) -> dict:
    out = {"role": "assistant", "content": msg.get("content")}
    calls = msg.get("tool_calls")
    if calls:
        out["tool_calls"] = [{"id": f"call_{i}_{int(time.time() * 1e6)}", "type": "function",
                              "function": {"name": n, "arguments": json.dumps(a)}} for i, (n, a) in enumerate(calls)]
    return out


class Stub:
    """The server; ``url`` is its ``/v1`` base. Use as a context manager."""

    def __init__(self, script) -> None:
        self.script = script
        self.requests: list[dict] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_GET(self):  # model listings
                body = json.dumps({"object": "list", "data": [{"id": "stub", "object": "model", "owned_by": "test"}]})
                self._send(200, body.encode(), "application/json")

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                req = json.loads(self.rfile.read(n) or b"{}")
                if not self.path.rstrip("/").endswith("chat/completions"):
                    self._send(404, b"{}", "application/json")
                    return
                stub.requests.append(req)
                msg = _message(stub.script(req), req.get("model", "stub"))
                if req.get("stream"):
                    self._stream(msg, req.get("model", "stub"))
                    return
                body = {"id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()),
                        "model": req.get("model", "stub"),
                        "choices": [{"index": 0, "message": msg,
                                     "finish_reason": "tool_calls" if msg.get("tool_calls") else "stop"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
                self._send(200, json.dumps(body).encode(), "application/json")

            def _stream(self, msg, model):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                base = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": int(time.time()),
                        "model": model}
                delta = {"role": "assistant"}
                if msg.get("content"):
                    delta["content"] = msg["content"]
                if msg.get("tool_calls"):
                    delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(msg["tool_calls"])]
                chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                          {**base, "choices": [{"index": 0, "delta": {},
                                                "finish_reason": "tool_calls" if msg.get("tool_calls") else "stop"}],
                           "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}]
                for c in chunks:
                    self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _send(self, code, body, ctype):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> Stub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def system_and_user_text(req: dict) -> str:
    """Everything the model was shown in one request, as one string."""
    parts = []
    for m in req.get("messages", []):
        c = m.get("content")
        if isinstance(c, list):
            c = " ".join(p.get("text", "") for p in c if isinstance(p, dict))
        parts.append(str(c or ""))
    return "\n".join(parts)
