"""Part of :class:`fastmem.Memory`: writing and recalling. The verbs' logic; their
documentation is on ``Memory``, which hands over to :class:`Io`."""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Sequence

from ..errors import InvalidInput
from ..models.embedder import encode_queries, encode_query
from ..reader.extract import parse_turns
from ..recall.arrange import ORDERS
from ..recall.channels import CHANNELS
from ..results import Analogy, Recall
from ..util.text import check_query, check_str
from ..write import commit as C
from ..write.checks import check_batch, check_kinds, check_speakers, kinds_for
from ..write.prepare import prepare
from .args import check_id as _check_id
from .args import check_int as _check_int
from .args import check_scope as _check_scope

__all__ = ["Io", "MAX_K"]

#: Most hits one recall returns.
MAX_K = 10_000


class Io:
    """Writing and recalling: :meth:`fastmem.Memory.remember`, ``remember_many``, ``recall``,
    ``recall_many``, ``analogies`` (documented there, with their defaults: the front passes
    every argument)."""

    def __init__(self, engine, front) -> None:
        self.e = engine
        self.front = front

    # -- writing ---------------------------------------------------------------------------
    def remember(self, text: str, *, scope, source, meta, triples, at, speaker, wait, kind) -> int:
        return self.remember_many([text], scope=scope, source=source, meta=meta,
                                  triples=None if triples is None else [triples], at=at, speaker=speaker,
                                  progress=None, wait=wait, kind=kind)[0]

    def remember_many(self, texts: Sequence[str], *, scope, source, meta, triples, at, speaker, progress,
                      wait, kind) -> list[int]:
        self.e.check_open()
        if not isinstance(wait, bool):
            raise InvalidInput("wait must be True or False")
        given, meta_json, when = check_batch(texts, scope=scope, meta=meta, triples=triples,
                                               extractor=self.e.extractor, source=source, at=at)
        speakers = check_speakers(speaker, len(texts))
        kinds = kinds_for(check_kinds(kind, len(texts)), speakers)
        if not texts:
            return []
        if not wait:
            with self.e.transaction() as tx:
                ids = C.commit_rows(tx.db, list(texts), given, scope=scope, source=source, meta_json=meta_json,
                                    at=when, speaker=speakers, kinds=kinds)
                tx.added(ids, None, scope)
            if self.e.background:
                self.e.finisher.poke()
            return ids
        prep = prepare(texts, given, self.e.embedder, self.e.extractor, progress, kinds)  # no lock held meanwhile
        return self.e.commit(prep, scope=scope, source=source, meta_json=meta_json, at=when, speaker=speakers)

    # -- recall ----------------------------------------------------------------------------
    def recall(self, query: str, *, k, scope, session, analogy, z_min, record, channels, exclude, floor, standing,
               order) -> Recall:
        return self.recall_many([query], k=k, scope=scope, session=session, analogy=analogy, z_min=z_min,
                                record=record, channels=channels, exclude=exclude, floor=floor, standing=standing,
                                order=order)[0]

    def recall_many(self, queries: Sequence[str], *, k, scope, session, analogy, z_min, record, channels, exclude,
                    floor, standing, order) -> list[Recall]:
        self.e.check_open()
        if isinstance(queries, str) or not isinstance(queries, Sequence):
            raise InvalidInput("queries must be a sequence of str (use recall() for one)")
        for q in queries:
            check_query(q)
        k = _check_int(k, "k", 1, MAX_K)
        _check_scope(scope)
        ok = isinstance(channels, (list, tuple, set, frozenset)) and all(isinstance(c, str) for c in channels)
        use = frozenset(channels) if ok else frozenset()
        if not isinstance(analogy, bool) or not isinstance(record, bool) or not isinstance(floor, bool):
            raise InvalidInput("analogy, record and floor must be True or False")
        if not use or use - set(CHANNELS):
            raise InvalidInput(f"channels must be a non-empty subset of {', '.join(CHANNELS)}; got {channels!r}")
        if z_min is not None and (isinstance(z_min, bool) or not isinstance(z_min, (int, float)) or not math.isfinite(z_min)):
            raise InvalidInput(f"z_min must be a finite number or None, got {z_min!r}")
        if session is not None and (check_str(session, "session") == ""):
            raise InvalidInput("session must be a non-empty str or None")
        if isinstance(exclude, (str, bytes)) or not isinstance(exclude, Collection):
            raise InvalidInput("exclude must be a collection of memory ids")
        skip = frozenset(_check_id(i) for i in exclude)
        standing = _check_int(standing, "standing", 0, MAX_K)
        if order not in ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(ORDERS)}; got {order!r}")
        gate = self.e.slot.z_min if z_min is None else z_min
        # the turns' embeddings first, without the lock (the slot parses each turn after the
        # channels; on the parse thread beside the channels or the model it was measured no
        # faster or slower: a short turn's spaCy parse holds the GIL)
        t0 = time.perf_counter()
        slot = analogy and self.e.extractor is not None and self.e.slot.can_fire()
        preload = getattr(self.e.extractor, "load_in_background", None)
        if slot and preload is not None and not getattr(self.e.extractor, "loaded", True):
            preload()  # a new process: the parser loads while the turn is embedded
        if not any(CHANNELS[c].needs_model for c in use) and not analogy and not standing:
            vecs = [None] * len(queries)  # keyword and graph alone never need the model
        elif len(queries) > 1:
            vecs = encode_queries(self.e.embedder, list(queries))
        else:
            vecs = [encode_query(self.e.embedder, queries[0])]
        embed_ms = (time.perf_counter() - t0) * 1e3 / max(len(queries), 1)
        parsed = parse_turns(self.e.extractor, list(queries)) if (slot and len(queries) > 1) else None
        out = []
        with self.e.lock:
            self.e.sync()
            for qi, (query, vec) in enumerate(zip(queries, vecs)):
                got = None
                if parsed is not None:  # several turns: parsed in one batch above
                    got = (lambda qi=qi: (parsed[qi], 0.0))
                res = self.e.pipeline.run(query, vec, extractor=self.e.extractor, k=int(k), scope=scope, session=session,
                                        use=use, analogy=analogy, z_min=gate, record=record, parsed=got,
                                        exclude=skip, floor=floor, standing=standing, order=order)
                res.timings_ms["embed"] = embed_ms
                out.append(res)
        return out

    def analogies(self, text: str, k: int = 5, *, scope: str | None = None, z_min: float = 0.0) -> list[Analogy]:
        self.e.check_open()
        check_query(text, "text")
        _check_scope(scope)
        k = _check_int(k, "k", 1, MAX_K)
        if isinstance(z_min, bool) or not isinstance(z_min, (int, float)) or not math.isfinite(z_min):
            raise InvalidInput(f"z_min must be a finite number, got {z_min!r}")
        with self.e.lock:
            self.e.sync()
            return self.e.slot.explore(text, lambda t: encode_query(self.e.embedder, t), self.e.extractor,
                                     k=k, scope=scope, z_min=z_min, members=self.e.scopes.allowed(scope))
