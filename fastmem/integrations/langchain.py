"""LangChain and LangGraph on fastmem (extra ``fastmem[langchain]``).

* :class:`FastmemRetriever`: a LangChain ``BaseRetriever``. Each recalled memory is a
  ``Document`` whose metadata carries its ``id``, ``score`` and ``channels``; the analogy, when
  one qualifies, is one more ``Document`` at the end with ``metadata["kind"] == "analogy"`` and
  the ``reason`` it was chosen (``analogy=False`` leaves it out).
* :class:`FastmemStore`: a LangGraph ``BaseStore`` (long-term memory for LangGraph agents).
  A namespace is a fastmem scope (its labels joined by ``.``, which LangGraph forbids inside a
  label, so ``("user", "alice")`` is the scope ``"user.alice"``); each item is one memory whose
  text is the value's text and whose metadata keeps the key and the value. ``search`` with a
  ``query`` is fastmem's fused recall over the namespace; without one it lists the items,
  newest first. Both apply LangGraph's ``filter`` (equality and ``$eq $ne $gt $gte $lt $lte``).

    from fastmem import Memory
    from fastmem.integrations.langchain import FastmemRetriever, FastmemStore

    mem = Memory("agent.db")
    docs = FastmemRetriever(memory=mem, k=5).invoke("where does Alice live?")
    store = FastmemStore(mem)            # e.g. create_react_agent(..., store=store)
    store.put(("user", "alice"), "home", {"text": "Alice moved to Berlin in May."})
    store.search(("user", "alice"), query="where does Alice live?")
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("fastmem's LangChain retriever needs langchain-core: pip install 'fastmem[langchain]'") from exc

from ..errors import InvalidInput
from ..results import Recall
from ..util.text import from_epoch
from . import analogy_metadata, hit_metadata, standing_metadata

__all__ = ["FastmemRetriever", "FastmemStore", "documents"]

#: Metadata keys under which an item's LangGraph key and value are kept.
KEY, VALUE, INDEXED = "langgraph_key", "langgraph_value", "langgraph_indexed"


def documents(result) -> list[Document]:
    """A :class:`fastmem.Recall` as LangChain documents: the hits, then the analogy if any, then
    each standing instruction or preference that applies (``metadata["kind"]`` is
    "instruction" or "preference"; the page is the statement)."""
    docs = [Document(page_content=h.text, metadata=hit_metadata(h), id=str(h.id)) for h in result.hits]
    if result.analogy is not None:
        a = result.analogy
        docs.append(Document(page_content=a.text, metadata=analogy_metadata(a), id=str(a.id)))
    docs.extend(Document(page_content=x.sentence, metadata=standing_metadata(x), id=f"standing-{x.id}")
                for x in result.standing)
    return docs


class FastmemRetriever(BaseRetriever):
    """A LangChain retriever on :meth:`fastmem.Memory.recall`.

    Attributes: ``memory`` (an open :class:`fastmem.Memory`), ``k`` (hits), ``scope`` (only
    this scope), ``session`` (the conversation, for inferred engagement and the analogy's
    repeat rule), ``analogy`` (append the analogy document), ``record`` (count the recall
    in the usage ledger) and ``floor`` (no documents when none is grounded in the query, see
    :mod:`fastmem.recall.evidence`).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any
    k: int = 5
    scope: str | None = None
    session: str | None = None
    analogy: bool = True
    record: bool = True
    floor: bool = True

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return documents(self.memory.recall(query, k=self.k, scope=self.scope, session=self.session,
                                            analogy=self.analogy, record=self.record, floor=self.floor))


# -- LangGraph ------------------------------------------------------------------------------
try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        PutOp,
        SearchItem,
        SearchOp,
        get_text_at_path,
        tokenize_path,
    )
except ImportError:  # the retriever works without langgraph
    BaseStore = None

_OPS = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b, "$gt": lambda a, b: float(a) > float(b),
        "$gte": lambda a, b: float(a) >= float(b), "$lt": lambda a, b: float(a) < float(b),
        "$lte": lambda a, b: float(a) <= float(b)}


def _matches(value: Any, want: Any) -> bool:
    """LangGraph's filter semantics: nested dicts match key by key, ``{"$op": x}`` compares."""
    if isinstance(want, dict):
        if any(k.startswith("$") for k in want):
            try:
                return all(_OPS[op](value, x) for op, x in want.items())
            except KeyError as exc:
                raise InvalidInput(f"unsupported filter operator {exc.args[0]!r}; one of {sorted(_OPS)}") from None
            except (TypeError, ValueError):
                return False
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return isinstance(value, (list, tuple)) and len(value) == len(want) and all(map(_matches, value, want))
    return value == want


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


if BaseStore is not None:

    class FastmemStore(BaseStore):
        """A LangGraph store on a :class:`fastmem.Memory` (see the module's docstring).

        Parameters
        ----------
        memory : fastmem.Memory
            The open store (the caller closes it).
        fields : list of str, optional
            Paths into each value (LangGraph's syntax: ``"text"``, ``"notes[*].body"``)
            whose text a memory holds, unless a ``put`` names its own ``index``. Default: every
            string in the value, in order.
        record : bool
            Count what ``search`` with a query returns as surfaced in the usage ledger.
        """

        supports_ttl = False

        def __init__(self, memory, *, fields: list[str] | None = None, record: bool = True) -> None:
            self.memory = memory
            self.fields = None if fields is None else [(f, tokenize_path(f)) for f in fields]
            self.record = bool(record)

        # -- the contract -------------------------------------------------------------------
        def batch(self, ops: Iterable[Any]) -> list[Any]:
            out: list[Any] = []
            for op in ops:
                if isinstance(op, GetOp):
                    out.append(self._get(op.namespace, op.key))
                elif isinstance(op, PutOp):
                    self._put(op)
                    out.append(None)
                elif isinstance(op, SearchOp):
                    out.append(self._search(op))
                elif isinstance(op, ListNamespacesOp):
                    out.append(self._namespaces(op))
                else:
                    raise InvalidInput(f"unknown store operation {type(op).__name__}")
            return out

        async def abatch(self, ops: Iterable[Any]) -> list[Any]:
            ops = list(ops)
            return await asyncio.to_thread(self.batch, ops)

        # -- operations ---------------------------------------------------------------------
        @staticmethod
        def scope_of(namespace: tuple[str, ...]) -> str:
            """The fastmem scope of a namespace: its labels joined by ``.``."""
            return ".".join(namespace)

        def _row(self, namespace, key):
            got = self.memory.rows.with_meta(KEY, key, scope=self.scope_of(namespace))
            return got[-1] if got else None

        def _item(self, mid: int, meta: dict, namespace, cls=Item, **extra):
            row = self.memory.get(mid)
            return cls(namespace=tuple(namespace), key=meta[KEY], value=meta[VALUE],
                       created_at=from_epoch(row["created"]), updated_at=from_epoch(row["updated"]), **extra)

        def _get(self, namespace, key):
            got = self._row(namespace, key)
            return None if got is None else self._item(got[0], got[2], namespace)

        def _text(self, op) -> str:
            paths = self.fields if op.index is None or op.index is False else [(p, tokenize_path(p)) for p in op.index]
            if paths is None:
                parts = _strings(op.value)
            else:
                parts = [t for _, tokens in paths for t in get_text_at_path(op.value, tokens) if t and t.strip()]
            return "\n".join(parts) if parts else json.dumps(op.value, sort_keys=True, default=str)

        def _put(self, op) -> None:
            scope = self.scope_of(op.namespace)
            if op.value is not None and not isinstance(op.value, dict):
                raise InvalidInput("a LangGraph store value must be a dict")
            text = None if op.value is None else self._text(op)
            # a new item's models run before the lock (other threads keep recalling meanwhile)
            prep = None
            if text is not None and self._row(op.namespace, op.key) is None:
                prep = self.memory.host.prepare([text])
            with self.memory.host.locked():  # the look-up and the write as one step for this process
                got = self._row(op.namespace, op.key)
                if op.value is None:
                    if got is not None:
                        self.memory.forget(got[0])
                    return
                meta = {KEY: op.key, VALUE: dict(op.value), INDEXED: op.index is not False}
                if got is None and prep is not None:
                    self.memory.host.commit_prepared(prep, scope=scope, meta=meta)
                elif got is None:
                    self.memory.remember(text, scope=scope, meta=meta)
                else:
                    self.memory.update(got[0], text=None if text == got[1] else text, meta=meta)

        def _scopes(self, prefix: tuple[str, ...]) -> list[str]:
            found = {sc for _, sc, _ in self.memory.rows.with_meta_key(KEY)}
            return [s for s in sorted(found) if tuple(s.split("."))[:len(prefix)] == tuple(prefix)]

        def _search(self, op) -> list[Any]:
            scopes = set(self._scopes(op.namespace_prefix))
            if not scopes or op.limit <= 0:
                return []
            want = op.filter or {}
            if op.query:
                return self._recall(op, scopes, want)
            found = []
            for mid, scope, meta in self.memory.rows.with_meta_key(KEY, scopes=scopes):
                if all(_matches(meta[VALUE].get(k), v) for k, v in want.items()):
                    found.append(self._item(mid, meta, scope.split("."), SearchItem))
            return found[op.offset:op.offset + op.limit]

        def _recall(self, op, scopes: set[str], want: dict) -> list[Any]:
            one = next(iter(scopes)) if len(scopes) == 1 else None
            total = sum(self.memory.count(scope=s) for s in scopes) if one else len(self.memory)
            need, k = op.offset + op.limit, op.offset + op.limit
            while True:
                res = self.memory.recall(op.query, k=min(max(k, 1), max(total, 1)), scope=one, analogy=False,
                                         record=False)
                found = []
                for h in res.hits:
                    meta = self.memory.get(h.id)["meta"]
                    if (h.scope in scopes and KEY in meta and meta.get(INDEXED, True)
                            and all(_matches(meta[VALUE].get(f), v) for f, v in want.items())):
                        found.append((h, meta))
                if len(found) >= need or k >= total:
                    break
                k = min(total, max(2 * k, k + 32))  # the filter or other scopes took some: look further
            found = found[op.offset:need]
            if self.record and found:
                self.memory.host.record(Recall(res.query, tuple(h for h, _ in found)))
            return [self._item(h.id, meta, h.scope.split("."), SearchItem, score=h.score) for h, meta in found]

        def _namespaces(self, op) -> list[tuple[str, ...]]:
            spaces = {tuple(s.split(".")) for s in self._scopes(())}
            for cond in op.match_conditions or ():
                spaces = {ns for ns in spaces if _path_matches(ns, tuple(cond.path), cond.match_type)}
            if op.max_depth is not None:
                spaces = {ns[:op.max_depth] for ns in spaces}
            return sorted(spaces)[op.offset:op.offset + op.limit]

else:  # pragma: no cover - depends on the environment

    class FastmemStore:  # type: ignore[no-redef]
        """Needs langgraph: ``pip install 'fastmem[langchain]'``."""

        def __init__(self, *args, **kwargs) -> None:
            raise ImportError("FastmemStore needs langgraph: pip install 'fastmem[langchain]'")


def _path_matches(ns: tuple[str, ...], path: tuple[str, ...], how: str) -> bool:
    if len(ns) < len(path):
        return False
    pairs = zip(ns, path) if how == "prefix" else zip(reversed(ns), reversed(path))
    return all(p == "*" or p == n for n, p in pairs)
