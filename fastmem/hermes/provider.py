"""The hermes-agent ``MemoryProvider`` named ``fastmem`` (needs hermes-agent installed).

Life of a turn under hermes' ``MemoryManager``: ``prefetch(query)`` returns the block computed
for that query by ``queue_prefetch`` on the provider's worker thread (recall with the
keyword, vector and graph channels and the analogy slot); when none is ready yet it answers
at once from the keyword and graph channels (no model involved) and queues the full recall.
``sync_turn`` stores the turn (both sides by default, as neighbours under the session's
source, with the time) and lets the assistant's reply judge what the last recall surfaced
(inferred engagement). Only the ``primary`` agent context writes; subagents, cron and flush
contexts read. Scopes come from ``user_id`` and ``agent_identity``
(:func:`fastmem.hermes.config.scope_for`).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agent.memory_provider import MemoryProvider

from ..store import probe
from ..text import MAX_TEXT_CHARS
from . import config as C
from . import tools as T

__all__ = ["FastmemProvider", "register", "split_passages"]

logger = logging.getLogger(__name__)

_READ_ONLY_CONTEXTS = {"subagent", "cron", "flush"}


def split_passages(text: str, limit: int = MAX_TEXT_CHARS) -> list[str]:
    """``text`` in passages of at most ``limit`` characters, cut at paragraph, line or word
    boundaries where possible (nothing is dropped)."""
    text = text.strip()
    out = []
    while len(text) > limit:
        cut = max(text.rfind("\n\n", 0, limit), text.rfind("\n", 0, limit), text.rfind(" ", 0, limit))
        cut = cut if cut > limit // 2 else limit
        out.append(text[:cut].strip())
        text = text[cut:].strip()
    if text:
        out.append(text)
    return [p for p in out if p]


def _shorten(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters; a cut is marked with an ellipsis."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line.rfind(" ", 0, limit - 1)
    return line[: cut if cut > limit // 2 else limit - 1] + "…"


def _plain(label: str) -> str:
    """A shared structural term in words: ``person -own->`` -> ``person own``."""
    return label.replace(" -", " ").replace("-> ", " ").replace("->", "").lstrip("-").strip()


class FastmemProvider(MemoryProvider):
    """fastmem behind hermes-agent's memory-provider interface (see the module docstring).

    Parameters
    ----------
    config : dict, optional
        Settings (see :data:`fastmem.hermes.config.DEFAULTS`); default: read
        ``plugins.fastmem`` from ``$HERMES_HOME/config.yaml``.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self._given = config
        self._cfg: dict[str, Any] = dict(C.DEFAULTS)
        self._mem = None
        self._ctx = T.Context(C.scope_for(), writable=False)
        self._session_id = ""
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[str, str, Any]] = {}  # session -> (query, block, recall)
        self._queued: dict[str, str] = {}  # session -> query being computed
        self.path: Path | None = None
        #: Why the provider cannot serve (None while it can).
        self.unavailable_reason: str | None = None

    @property
    def name(self) -> str:
        return "fastmem"

    # -- before initialize -----------------------------------------------------------------
    def _settings(self, home: Path) -> dict[str, Any]:
        cfg = C.load(home)
        if self._given:
            cfg.update(self._given)
        return cfg

    def is_available(self) -> bool:
        """True when the store can be opened (or created); otherwise False, with the reason
        logged and kept in ``unavailable_reason``. Reads files only, no network."""
        try:
            home = C.hermes_home()
            reason = probe(C.db_path(self._settings(home), home))
        except Exception as exc:  # a broken config.yaml is a reason too
            reason = f"cannot read the fastmem settings: {type(exc).__name__}: {exc}"
        self.unavailable_reason = reason
        if reason:
            logger.warning("fastmem memory provider unavailable: %s", reason)
            return False
        return True

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(s) for s in T.SCHEMAS]

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [dict(s) for s in C.SCHEMA]

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        C.save(dict(values), Path(hermes_home))

    def backup_paths(self) -> list[str]:
        home = C.hermes_home()
        try:
            path = C.db_path(self._settings(home), home)
        except Exception:
            return []
        if home in path.parents:
            return []
        return [str(p) for p in (path, Path(f"{path}.hnsw"), Path(f"{path}.hnsw.json")) if p.exists()]

    # -- life cycle ------------------------------------------------------------------------
    def initialize(self, session_id: str, **kwargs) -> None:
        from ..memory import Memory

        home = C.hermes_home(kwargs.get("hermes_home"))
        self._session_id = session_id or ""
        context = kwargs.get("agent_context") or "primary"
        self._ctx = T.Context(C.scope_for(kwargs.get("user_id"), kwargs.get("agent_identity")),
                              writable=context not in _READ_ONLY_CONTEXTS, session=self._session_id or None)
        try:
            self._cfg = self._settings(home)
            self.path = C.db_path(self._cfg, home)
            reason = probe(self.path)
            if reason:
                raise RuntimeError(reason)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._mem = Memory(self.path, z_min=self._cfg["z_min"], progress=False)
        except Exception as exc:
            self._mem = None
            self.unavailable_reason = f"{type(exc).__name__}: {exc}"
            logger.error("fastmem memory provider could not open its store: %s", self.unavailable_reason)
            return
        self.unavailable_reason = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastmem-hermes")
        self._pool.submit(self._warm)

    @staticmethod
    def _warm() -> None:
        """Load the models and compile the kernels off the agent's path."""
        try:
            import fastmem

            fastmem.warmup(models=True)
        except Exception:  # pragma: no cover - a failed warm-up only costs the first recall
            logger.debug("fastmem warm-up failed", exc_info=True)

    def shutdown(self) -> None:
        """Finish queued work, save the index and close the store."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
        mem, self._mem = self._mem, None
        if mem is not None:
            try:
                mem.close()
            except Exception:
                logger.warning("fastmem: closing the store failed", exc_info=True)

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs) -> None:
        with self._lock:
            if reset or rewound:
                self._cache.pop(self._session_id, None)
        self._session_id = new_session_id or ""
        self._ctx.session = self._session_id or None

    # -- recall ----------------------------------------------------------------------------
    def system_prompt_block(self) -> str:
        if self._mem is None:
            return ""
        n = self._mem.count(scope=self._ctx.scope)
        return (
            "# fastmem memory\n"
            f"Active: {n} memories for this user. Before each turn, relevant memories appear as lines "
            "tagged [m<id>]; a 'Reminds me of' line is a past memory with the same structure in another "
            "domain, offered for lateral thinking.\n"
            "Tools: fact_store (add, search, probe, related, reason, contradict, update, remove, list), "
            "fact_feedback (rate a memory by its id after using it), fastmem_recall, fastmem_analogies, "
            "fastmem_graph, fastmem_chunks, fastmem_categories." + ("" if self._ctx.writable else "\nThis agent context reads memory only.")
        )

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Compute the recall of ``query`` on the worker thread, for the next ``prefetch``."""
        if self._mem is None or self._pool is None or not isinstance(query, str) or not query.strip():
            return
        sid = session_id or self._session_id
        with self._lock:
            if self._queued.get(sid) == query or self._cache.get(sid, ("",))[0] == query:
                return
            self._queued[sid] = query
        try:
            self._pool.submit(self._compute, query, sid)
        except RuntimeError:  # shut down meanwhile
            pass

    def _compute(self, query: str, sid: str) -> None:
        try:
            res = self._mem.recall(query, k=self._cfg["prefetch_k"], scope=self._ctx.scope, session=sid or None,
                                   analogy=self._cfg["analogy"], record=False)
            block = self._block(res)
            with self._lock:
                self._cache[sid] = (query, block, res)
        except Exception:
            logger.warning("fastmem: background recall failed", exc_info=True)
        finally:
            with self._lock:
                if self._queued.get(sid) == query:
                    del self._queued[sid]

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the background work queued so far (recalls from ``queue_prefetch``,
        the warm-up) has finished; False when ``timeout`` seconds passed first or the provider
        is not running. For hosts that want the full recall now, and for tests."""
        pool = self._pool
        if pool is None:
            return False
        try:
            pool.submit(lambda: None).result(timeout=timeout)  # one worker: runs after the queue
        except (RuntimeError, TimeoutError):  # shut down meanwhile / too slow
            return False
        return True

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The recalled context for ``query``: the worker's block when it is ready, else an
        immediate keyword-and-graph block (the full recall is queued for the next call)."""
        if self._mem is None or not isinstance(query, str) or not query.strip():
            return ""
        sid = session_id or self._session_id
        with self._lock:
            cached = self._cache.get(sid)
        try:
            if cached is not None and cached[0] == query:
                self._mem.record(cached[2], session=sid or None)  # what was shown counts as surfaced
                return cached[1]
            self.queue_prefetch(query, session_id=sid)
            res = self._mem.recall(query, k=self._cfg["prefetch_k"], scope=self._ctx.scope, session=sid or None,
                                   analogy=False, channels=("keyword", "graph"))
            return self._block(res)
        except Exception:
            logger.warning("fastmem: prefetch failed", exc_info=True)
            return ""

    def _block(self, res) -> str:
        """Recalled context: one line per hit tagged with its id, the analogy apart, at most
        ``prefetch_chars`` characters (long memories are cut with an ellipsis; the tools give
        them whole). No fence: the host adds it."""
        budget = self._cfg["prefetch_chars"]
        tail = ""
        an = res.analogy
        if an is not None:
            because = ", ".join(_plain(m) for m in an.why["matched"][:3])
            tail = f'Reminds me of [m{an.id}] "{_shorten(an.text, 160)}" because both: {because}.'
            budget -= len(tail) + 1
        lines = []
        for h in res.hits:
            when = f" ({h.at:%Y-%m-%d})" if h.at is not None else ""
            room = budget - sum(len(x) + 1 for x in lines) - len(when) - 10 - len(str(h.id))
            if room < 40:
                break
            lines.append(f"- [m{h.id}] {_shorten(h.text, min(room, 400))}{when}")
        if tail:
            lines.append(tail)
        return "\n".join(lines)

    # -- writes ----------------------------------------------------------------------------
    def _store(self, texts: list[str], sid: str, meta: dict[str, Any]) -> list[int]:
        parts = [p for t in texts for p in split_passages(t)]
        if not parts:
            return []
        return self._mem.remember_many(parts, scope=self._ctx.scope, source=f"hermes:{sid}" if sid else None,
                                       meta=meta, at=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()))

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Persist the turn and let the reply judge what was surfaced (primary context only)."""
        if self._mem is None or not self._ctx.writable:
            return
        sid = session_id or self._session_id
        user = user_content.strip() if isinstance(user_content, str) else ""
        reply = assistant_content.strip() if isinstance(assistant_content, str) else ""
        try:
            if reply and sid:
                self._mem.observe(reply, session=sid)
            mode = self._cfg["sync_turn"]
            texts = []
            if mode in ("both", "user") and user:
                texts.append(f"User: {user}")
            if mode == "both" and reply:
                texts.append(f"Assistant: {reply}")
            self._store(texts, sid, {"via": "sync_turn", "session": sid})
        except Exception:
            logger.warning("fastmem: storing the turn failed", exc_info=True)

    def _mirrored(self, target: str, old_text: str) -> list[int]:
        return [r[0] for r in self._mem.db.execute(
            "SELECT id FROM memories WHERE scope=? AND json_extract(meta, '$.builtin')=? AND instr(text, ?) > 0",
            (self._ctx.scope, target, old_text))]

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        """Mirror the built-in memory tool: add, replace (by ``metadata['old_text']``) and remove."""
        if self._mem is None or not self._ctx.writable:
            return
        target = str(target or "memory")
        old = str((metadata or {}).get("old_text") or "")
        try:
            if action == "add" and content and content.strip():
                self._store([content], self._session_id, {"builtin": target, "via": "memory_tool"})
            elif action == "replace" and content and content.strip():
                found = self._mirrored(target, old) if old else []
                if found:
                    self._mem.update(found[0], text=content.strip())
                    for mid in found[1:]:
                        self._mem.forget(mid)
                else:
                    self._store([content], self._session_id, {"builtin": target, "via": "memory_tool"})
            elif action == "remove" and (old or content):
                for mid in self._mirrored(target, old or content):
                    self._mem.forget(mid)
        except Exception:
            logger.warning("fastmem: mirroring a memory-tool %s failed", action, exc_info=True)

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs) -> None:
        """Remember what a subagent was asked and what it found (primary context only)."""
        if self._mem is None or not self._ctx.writable or not (task or "").strip():
            return
        try:
            self._store([f"Delegated task: {task.strip()}\nResult: {(result or '').strip()}"], self._session_id,
                        {"via": "delegation", "child_session": child_session_id})
        except Exception:
            logger.warning("fastmem: storing a delegation failed", exc_info=True)

    def on_session_end(self, messages: list[dict[str, Any]]) -> str:
        """Save the index now; returns a one-line account of the session."""
        if self._mem is None:
            return ""
        try:
            self._mem.flush()
            sid = self._session_id
            n = self._mem.db.execute("SELECT count(*) FROM memories WHERE source=? AND scope=?",
                                     (f"hermes:{sid}", self._ctx.scope)).fetchone()[0]
            return f"fastmem: {n} memories from this session, {self._mem.count(scope=self._ctx.scope)} in all."
        except Exception:
            logger.warning("fastmem: session end failed", exc_info=True)
            return ""

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Memories that bear on the part of the conversation about to be compressed, so
        the summary can keep their ids."""
        if self._mem is None or not messages:
            return ""
        said = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        text = " ".join(s for s in said if isinstance(s, str))[-2000:].strip()
        if not text:
            return ""
        try:
            res = self._mem.recall(text, k=5, scope=self._ctx.scope, analogy=False, record=False)
        except Exception:
            logger.warning("fastmem: pre-compress recall failed", exc_info=True)
            return ""
        if not res.hits:
            return ""
        return "Long-term memories relevant to this part (fastmem):\n" + "\n".join(
            f"- [m{h.id}] {_shorten(h.text, 200)}" for h in res.hits)

    # -- tools -----------------------------------------------------------------------------
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs) -> str:
        """Run a tool; always a JSON string (``{"error": ...}`` on failure)."""
        return T.call(self._mem, self._ctx, tool_name, args)


def register(ctx) -> None:
    """hermes plugin entry point."""
    ctx.register_memory_provider(FastmemProvider())
