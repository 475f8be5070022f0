"""The hermes-agent ``MemoryProvider`` named ``fastmem`` (needs hermes-agent installed).

Life of a turn under hermes' ``MemoryManager`` (``agent/turn_context.py``, ``run_agent.py``):
``prefetch(new message)`` before the turn, then ``sync_turn(user, assistant)`` and
``queue_prefetch(that same message)`` after it. So ``prefetch`` answers its own query, always:
the full recall (keyword, vector, graph, context and speaker channels, use weights, chunks and
the analogy line) once the models are loaded, and until then, at once, the channels that need
no model (keyword and graph), never a block computed for another text.
``queue_prefetch`` only warms the embedding cache. ``sync_turn`` commits the turn at once
(both sides by default, as neighbours under the session's source, stamped with the time of the
call) without waiting for any model: the embedding, facts and structure follow on a background
thread (``Memory.remember_many(wait=False)``), and whatever is left when hermes exits is
finished by the next process. The reply judges what the last recall surfaced (inferred
engagement) off the host's path. Only the ``primary`` agent context writes; subagents, cron
and flush contexts read. Scopes come from ``user_id`` and ``agent_identity``
(:func:`fastmem.hermes.config.scope_for`).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agent.memory_provider import MemoryProvider

import fastmem

from ..models.embedder import encode_query
from ..util.text import MAX_TEXT_CHARS, is_chatter
from . import config as C
from . import tools as T

__all__ = ["FastmemProvider", "register", "split_passages"]

logger = logging.getLogger(__name__)

_READ_ONLY_CONTEXTS = {"subagent", "cron", "flush"}
#: Most seconds ``shutdown`` lets background derivation run (hermes gives providers 5 s).
SHUTDOWN_DERIVE_S = 2.0
#: Most ids of the current context's own turns kept to leave out of the block (oldest dropped).
IN_CONTEXT_MAX = 4096
#: Most seconds ``prefetch`` waits for turns still being derived (hermes allows 8 s in all).
PREFETCH_WAIT_S = 0.5
#: Seconds after the first turn before the models start loading. A one-shot `hermes chat -q`
#: is usually over by then and loads nothing (its turns are committed; the next process derives
#: them), instead of waiting at exit for a load that no recall of its own would use; in a
#: session the next turn comes later than this anyway (the first turn's block needs no model).
WARMUP_DELAY_S = 2.0
#: ...unless this many turns are pending (left by earlier short processes): the models then
#: load at once and derive them, so a run of one-shots keeps at most about this many turns
#: found by keyword alone, and every few one-shots one pays the load.
PENDING_NOW = 16


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
        self._ready = threading.Event()  # models loaded
        self._warming: threading.Thread | None = None
        self._warm_timer: threading.Timer | None = None
        # a turn and the delay's timer can both start the warm-up: Thread.start() from two
        # threads at once starts it twice (CPython then fails in the second's bootstrap)
        self._warm_lock = threading.Lock()
        # ids of this session's turns the model still sees verbatim in its context (written
        # since the session began or its context was last compressed): never a line of the
        # block, which is for what the context lacks; at most IN_CONTEXT_MAX kept
        self._in_context: dict[int, None] = {}
        #: the global standing statements this session's blocks have shown (the host's context
        #: holds them from then on)
        self._globals_shown: set[int] = set()
        # held by a turn's write until its ids are in _in_context, and by a block from reading
        # _in_context until its recall has read the store: hermes syncs a turn on its own worker
        # thread while it asks for the next block, and a turn committed in between was a line
        # of that block (the model's own context repeated, every turn)
        self._ctx_lock = threading.RLock()
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
            reason = fastmem.probe(C.db_path(self._settings(home), home))
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
        side = (Path(f"{path}.hnsw"), Path(f"{path}.hnsw.json"), Path(f"{path}.terms"))  # caches beside the store
        return [str(p) for p in (path, *side) if p.exists()]

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
            reason = fastmem.probe(self.path)
            if reason:
                raise RuntimeError(reason)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # turns are committed at once and derived only once the models are loaded, on the
            # warm-up thread's word: a process that exits while they load loses nothing
            self._mem = Memory(self.path, progress=False, derive_in_background=False,
                               analogy=fastmem.AnalogySettings(z_min=self._cfg["z_min"],
                                                               analogy_alpha=self._cfg["analogy_alpha"]))
        except Exception as exc:
            self._mem = None
            self.unavailable_reason = f"{type(exc).__name__}: {exc}"
            logger.error("fastmem memory provider could not open its store: %s", self.unavailable_reason)
            return
        self.unavailable_reason = None
        self._ready.clear()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastmem-hermes")
        # a daemon thread: hermes' exit never waits for a model load (a one-shot `hermes chat
        # -q` is over before MiniLM is); the turns are committed already. It starts with the
        # first turn, not here: loading the models beside hermes' own start-up slowed that
        # start-up by seconds (both import under one GIL), while the first turn's prefetch
        # needs no model and its model call leaves the CPU idle.
        self._warming = threading.Thread(target=self._warm, args=(self._mem,), name="fastmem-warmup", daemon=True)

    def _start_warmup(self, delay: float | None = None) -> None:
        """Start loading the models: after ``delay`` seconds (default :data:`WARMUP_DELAY_S`, or
        none when the process has them loaded already or :data:`PENDING_NOW` turns are pending;
        the first call sets the timer, a call with ``delay=0`` starts at once)."""
        w = self._warming
        if w is None or w.is_alive() or self._ready.is_set() or w.ident is not None:
            return
        if delay is None:
            mem = self._mem
            # models this process loaded already (another session's provider): nothing to load,
            # so no reason to answer the session's first turns without them
            now = mem is not None and (mem.host.models_ready() or mem.pending.count() >= PENDING_NOW)
            delay = 0.0 if now else WARMUP_DELAY_S
        if delay > 0:
            with self._ctx_lock:
                if self._warm_timer is None:
                    self._warm_timer = threading.Timer(delay, self._start_warmup, kwargs={"delay": 0})
                    self._warm_timer.daemon = True
                    self._warm_timer.start()
            return
        with self._warm_lock:
            if w.ident is None:
                w.start()

    def _warm(self, mem) -> None:
        """Load the models off the agent's path, then finish what earlier processes left
        pending."""
        try:
            import fastmem

            # the models only: every kernel a turn runs has a NumPy form, and Numba would add
            # ~150 MB and ~1 s of CPU to each one-shot `hermes chat -q`
            fastmem.warmup(models=True, kernels=False)
            self._ready.set()
            if self._ctx.writable and self._mem is mem:
                mem.pending.derive(wait=False)
        except Exception as exc:  # a failed warm-up only costs the first recall
            if self._mem is not mem or mem.closed:
                # the host shut down while the models loaded (a one-shot's normal end): what
                # was not derived stays pending for the next process, nothing is lost
                logger.debug("fastmem: warm-up ended by shutdown: %s", exc)
            else:
                logger.warning("fastmem warm-up failed", exc_info=True)

    @property
    def ready(self) -> bool:
        """Whether ``prefetch`` gives the full recall (models loaded)."""
        return self._ready.is_set()

    def shutdown(self) -> None:
        """Close the store within hermes' exit budget: every turn is already committed; the
        background derivation gets at most :data:`SHUTDOWN_DERIVE_S` seconds, what it has not
        finished stays pending for the next process."""
        timer, self._warm_timer = self._warm_timer, None
        if timer is not None:
            timer.cancel()  # a one-shot that ends before the delay loads no model at all
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)  # a model still loading is not waited for
        mem, self._mem = self._mem, None
        if mem is not None:
            try:
                mem.close(timeout=SHUTDOWN_DERIVE_S)
            except Exception:
                logger.warning("fastmem: closing the store failed", exc_info=True)

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs) -> None:
        self._session_id = new_session_id or ""
        self._ctx.session = self._session_id or None
        self._forget_context()

    def _forget_context(self) -> None:
        with self._ctx_lock:
            self._in_context.clear()
            self._globals_shown.clear()

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
        """A warm-up, never an answer: hermes queues the message just answered, and the next
        ``prefetch`` asks for a new one. Once the models are loaded, the text's embedding goes
        into the query cache on the worker thread (a repeated message skips the model)."""
        if self._mem is None or self._pool is None or not isinstance(query, str) or not query.strip():
            return
        if not self._ready.is_set():
            return
        try:
            self._pool.submit(self._embed, self._mem, query)
        except RuntimeError:  # shut down meanwhile
            pass

    @staticmethod
    def _embed(mem, query: str) -> None:
        try:
            encode_query(mem.admin.embedder, query)
        except Exception:
            logger.debug("fastmem: warming the query cache failed", exc_info=True)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the background work queued so far (the warm-up, cache warming, turns
        being derived) has finished; False when ``timeout`` seconds passed first or the
        provider is not running. For hosts that want everything ready now, and for tests."""
        pool, mem = self._pool, self._mem
        if pool is None or mem is None:
            return False
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._warming is not None:
            self._start_warmup(delay=0)  # asked to be ready: no delay
            self._warming.join(timeout)
            if self._warming.is_alive():
                return False
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            pool.submit(lambda: None).result(timeout=timeout)  # one worker: runs after the queue
        except (RuntimeError, TimeoutError):  # shut down meanwhile / too slow
            return False
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        return mem.pending.wait(left)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The recalled context for ``query`` itself: the full recall once the models are ready;
        while they load, at once, the channels that need no model (no vector hits, no analogy
        line: nothing is claimed that was not computed). The turns of this conversation that
        the model still has in its context are no lines of their own (they would repeat what
        it sees), though one can be the analogy; nor are turns with nothing to remember."""
        if self._mem is None or not isinstance(query, str) or not query.strip():
            return ""
        self._start_warmup()
        if not self._ready.is_set() and self._mem.host.models_ready():  # the warm-up is finishing: brief
            self._ready.wait(PREFETCH_WAIT_S)
        sid = session_id or self._session_id
        k = self._cfg["prefetch_k"]
        try:
            full = self._ready.is_set()
            if full:
                # turns committed a moment ago are being derived: give them a bounded moment, so
                # the vector channel and the slot see the conversation so far
                self._mem.pending.wait(PREFETCH_WAIT_S)
            with self._ctx_lock:  # no turn is committed between reading `seen` and the recall
                seen = frozenset(self._in_context)
                if full:
                    res = self._mem.recall(query, k=2 * k, scope=self._ctx.scope, session=sid or None,
                                           analogy=self._cfg["analogy"], record=False, exclude=seen,
                                           floor=self._cfg["evidence_floor"], order="auto")  # an order question: oldest first
                else:
                    res = self._mem.recall(query, k=2 * k, scope=self._ctx.scope, session=sid or None,
                                           analogy=False, channels=fastmem.recall_channels(model_free=True), record=False, exclude=seen,
                                           floor=self._cfg["evidence_floor"], order="auto")  # an order question: oldest first
            # (the analogy may be one of them: that this turn rhymes with an earlier one is news)
            # a global instruction once per session (then the context holds it), a topical one
            # on each turn it applies to, neither when the turn that said it is in the context
            standing = tuple(x for x in res.standing if x.id not in seen
                             and not (x.reach == "global" and x.id in self._globals_shown))
            shown_before = set(self._globals_shown)
            self._globals_shown.update(x.id for x in standing if x.reach == "global")
            res = replace(res, hits=tuple(h for h in res.hits if not is_chatter(h.text)
                                          and h.id not in shown_before)[:k],
                          standing=standing)
            # what is shown counts as surfaced, less an analogy the model has in its context
            # anyway: the conversation going on about it says nothing of the line's use
            shown = res if res.analogy is None or res.analogy.id not in seen else replace(res, analogy=None)
            self._mem.host.record(shown, session=sid or None)
            return self._block(res)
        except Exception:
            logger.warning("fastmem: prefetch failed", exc_info=True)
            return ""

    def _block(self, res) -> str:
        """Recalled context: the standing instructions and preferences that apply first (a
        short section of their statements), then one line per hit tagged with its id, the
        analogy apart, at most ``prefetch_chars`` characters (long memories are cut with an
        ellipsis; the tools give them whole). No fence: the host adds it."""
        budget = self._cfg["prefetch_chars"]
        tail = ""
        an = res.analogy
        if an is not None:
            because = str(an.why["reason"]).removeprefix("same structure: ")
            tail = f'Reminds me of [m{an.id}] "{_shorten(an.text, 160)}" because both: {because}.'
            budget -= len(tail) + 1
        head = []
        if res.standing:  # as many statements as fit, best first: the block never passes prefetch_chars
            title = ("What the user asked for (standing instructions and preferences; a later one replaces an "
                     "earlier one):")
            said = [f"- [m{x.id}] {_shorten(x.sentence, 240)} ({datetime.fromtimestamp(x.at, timezone.utc):%Y-%m-%d})"
                    for x in res.standing]
            room = budget - len(title) - len("Recalled:") - 2
            for line in said:
                if len(line) + 1 > room:
                    break
                head.append(line)
                room -= len(line) + 1
            if head:
                head = [title, *head, "Recalled:"]
                budget -= sum(len(x) + 1 for x in head)
        lines = []
        for h in res.hits:
            when = f" ({h.at:%Y-%m-%d})" if h.at is not None else ""
            room = budget - sum(len(x) + 1 for x in lines) - len(when) - 10 - len(str(h.id))
            if room < 40:
                break
            lines.append(f"- [m{h.id}] {_shorten(h.text, min(room, 400))}{when}")
        if tail:
            lines.append(tail)
        if head and not lines:
            head.pop()  # no "Recalled:" over nothing
        return "\n".join(head + lines)

    # -- writes ----------------------------------------------------------------------------
    def _store(self, texts: list[str], sid: str, meta: dict[str, Any], at: float | None = None) -> list[int]:
        """Commit ``texts`` now (no model runs; the derived parts follow in the background),
        stamped with ``at`` (unix seconds; default now)."""
        # the assistant's own advice is never the user's standing instruction
        split = [(p, "plain" if t.startswith("Assistant: ") else None) for t in texts for p in split_passages(t)]
        if not split:
            return []
        parts, kinds = [p for p, _ in split], [k for _, k in split]
        when = datetime.fromtimestamp(time.time() if at is None else at, timezone.utc)
        return self._mem.remember_many(parts, scope=self._ctx.scope, source=f"hermes:{sid}" if sid else None,
                                       meta=meta, at=when, wait=False, kind=kinds)

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Commit the turn now, stamped with this call's time (primary context only); once the
        models are ready, the reply judges what was surfaced, on the worker thread (turns before
        that are stored but judge nothing)."""
        if self._mem is None or not self._ctx.writable:
            return
        at = time.time()
        self._start_warmup()
        sid = session_id or self._session_id
        user = user_content.strip() if isinstance(user_content, str) else ""
        reply = assistant_content.strip() if isinstance(assistant_content, str) else ""
        try:
            if reply and sid and self._pool is not None and self._ready.is_set():
                try:
                    self._pool.submit(self._observe, self._mem, reply, sid)
                except RuntimeError:  # shut down meanwhile
                    pass
            mode = self._cfg["sync_turn"]
            texts = []
            if mode in ("both", "user") and user:
                texts.append(f"User: {user}")
            if mode == "both" and reply:
                texts.append(f"Assistant: {reply}")
            with self._ctx_lock:  # committed and marked as seen in one step (see __init__)
                ids = self._store(texts, sid, {"via": "sync_turn", "session": sid}, at=at)
                self._in_context.update(dict.fromkeys(ids))
                while len(self._in_context) > IN_CONTEXT_MAX:
                    del self._in_context[next(iter(self._in_context))]
        except Exception:
            logger.warning("fastmem: storing the turn failed", exc_info=True)

    def _observe(self, mem, reply: str, sid: str) -> None:
        """Inferred engagement from the reply (needs the embedder: runs after the warm-up)."""
        try:
            mem.host.observe(reply, session=sid)
        except Exception:
            logger.debug("fastmem: judging the reply failed", exc_info=True)

    def _mirrored(self, target: str, old_text: str) -> list[int] | None:
        """The memories that mirror the one built-in entry ``old_text`` identifies (the ids kept
        at add time, with the entry's whole text: a long entry is several passages); None
        when no entry or several entries contain it (the built-in tool itself refuses such
        an ``old_text``, so nothing is changed)."""
        rows = [(mid, meta.get("entry") or text)
                for mid, text, meta in self._mem.rows.with_meta("builtin", target, scope=self._ctx.scope)]
        entries = {entry for _, entry in rows if old_text in entry}
        if len(entries) != 1:
            if len(entries) > 1:
                logger.warning("fastmem: %d mirrored memory entries contain %r; none changed", len(entries), old_text)
            return None
        (entry,) = entries
        return [mid for mid, e in rows if e == entry]

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        """Mirror the built-in memory tool: add, replace and remove (by ``metadata['old_text']``,
        the substring that identifies one entry), by the ids kept when the entry was added.
        Committed at once; no model runs here."""
        if self._mem is None or not self._ctx.writable:
            return
        target = str(target or "memory")
        old = str((metadata or {}).get("old_text") or "")
        text = content.strip() if isinstance(content, str) else ""
        meta = {"builtin": target, "via": "memory_tool", "entry": text}
        try:
            if action == "add" and text:
                self._store([text], self._session_id, meta)
            elif action == "replace" and text:
                found = self._mirrored(target, old) if old else None
                if found is None:
                    self._store([text], self._session_id, meta)
                    return
                parts = split_passages(text)
                for mid, part in zip(found, parts):
                    self._mem.update(mid, text=part, meta=meta, wait=False)
                for mid in found[len(parts):]:
                    self._mem.forget(mid)
                if len(parts) > len(found):
                    self._store(parts[len(found):], self._session_id, meta)
            elif action == "remove" and (old or text):
                for mid in self._mirrored(target, old or text) or []:
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
            self._mem.admin.flush()
            sid = self._session_id
            n = self._mem.count(scope=self._ctx.scope, source=f"hermes:{sid}")
            return f"fastmem: {n} memories from this session, {self._mem.count(scope=self._ctx.scope)} in all."
        except Exception:
            logger.warning("fastmem: session end failed", exc_info=True)
            return ""

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Memories that bear on the part of the conversation about to be compressed, so
        the summary can keep their ids. The compressed turns leave the model's context: from
        now on they may come back as lines of the block."""
        self._forget_context()
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
