"""Recall channels: each finds candidate memories for a turn its own way.

A channel returns ``{memory_id: (rank, score)}`` (rank 1 best, score larger-is-better) for
at most ``pool`` memories of the requested scope. :mod:`fastmem.recall.fusion` combines them.

* ``keyword`` - FTS5 bm25 over the memory text (every query word quoted, OR-ed);
* ``vector``  - hnswlib inner product with the turn's embedding;
* ``graph``   - memories whose facts mention an entity the turn names (any alias);
* ``context`` - memories whose neighbour (the memory written just before or after them with
  the same ``source``) the keyword or vector channel found: a turn that answers through its
  context ("Yes, it was amazing!" after "How was the concert?"). Weighed apart from the
  memory's own words (see :func:`context`).
* ``speaker`` - memories the other channels found whose speaker (``remember(...,
  speaker=...)``) the turn names: "What has Melanie painted?" prefers what Melanie said
  (see :func:`speaker`).

Each channel's cost is bounded, whatever the store's size (see :class:`Keyword`,
:class:`Graph`).

A new channel is a function here, registered under its name with :func:`fastmem.recall.channel`
(``run(pipeline, turn) -> {id: (rank, score)}``; the recall pipeline runs the registered
channels in order), its name in :data:`NAMES` (what ``recall(channels=...)`` accepts) and its
weight in :data:`fastmem.recall.fusion.DEFAULT_WEIGHTS`.
"""

from __future__ import annotations

import json
import math
import re

import apsw
import numpy as np

from ..derived.ann import VectorIndex
from ..reader.canon import fold_name
from ..util.bounded import Bounded
from ..util.text import STOPWORDS, fts_terms, words
from .fusion import normalised

__all__ = ["NAMES", "Channel", "vector", "Keyword", "Graph", "Scopes", "KEYWORD_SCOPE_OWN_STATS"]

#: A scope of at most this many memories, in a store that holds others, is ranked by the
#: keyword channel with its own word statistics.
KEYWORD_SCOPE_OWN_STATS = 2048
#: Texts whose FTS5 tokens the keyword channel keeps (the texts it scores again and again).
TOKEN_CACHE = 20_000

Channel = dict[int, tuple[int, float]]
#: The channels recall fuses by default, in the order they run.
NAMES = ("keyword", "vector", "graph", "context", "speaker")
#: Channels that rescore what the others found (they need the keyword and vector channels).
DERIVED = ("context", "speaker")


def vector(index: VectorIndex, vec: np.ndarray, pool: int, allowed) -> tuple[Channel, np.ndarray]:
    """Nearest memories by embedding; also returns the labels in rank order (the analogy
    slot's surface condition reads them)."""
    labels, sims = index.query(np.asarray(vec, np.float32), pool, allowed)
    return {int(m): (r + 1, float(s)) for r, (m, s) in enumerate(zip(labels, sims))}, labels


def with_windows(found: Channel, best: dict[int, float], pool: int) -> Channel:
    """The vector channel with long memories scored by the better of their mean vector and
    their best window (``best``: :meth:`fastmem.derived.windows.WindowIndex.best`), ranked again, its
    ``pool`` best kept."""
    score = {m: v[1] for m, v in found.items()}
    for m, s in best.items():
        if s > score.get(m, -np.inf):
            score[m] = s
    ranked = sorted(score.items(), key=lambda x: (-x[1], x[0]))[:pool]
    return {m: (r + 1, s) for r, (m, s) in enumerate(ranked)}


#: Turns of a transcript written without a ``source`` are neighbours when written at most this
#: many seconds apart (a longer pause ends the conversation).
TURN_GAP = 1800.0


def context(db: apsw.Connection, found: dict[str, Channel], pool: int, scope: str | None,
            before: float = 0.3, asked: float = 1.0, after: float = 0.0) -> Channel:
    """Memories credited through their neighbours: each memory the keyword or vector channel
    found (its normalised score as in fusion, the best of the two) passes ``before`` times its
    score to the next memory of its source (``asked`` times when the seed asks something: it
    contains a question mark, and the next memory is likely its answer) and ``after`` times
    it to the previous one. A memory without a ``source`` has as neighbours the memories
    written just before and after it in its scope, at most :data:`TURN_GAP` seconds apart,
    when both are turns of a transcript (each has a speaker, given or as a "Name: " prefix):
    a conversation given to ``remember_many`` at once, or written a turn per ``remember`` call
    as it happens; list items are never each other's neighbours. Two indexed queries over at
    most ``2 pool`` seeds. The defaults' figures: ``docs/defaults.md``.
    """
    seeds: dict[int, float] = {}
    for name in ("keyword", "vector"):
        for mid, v in normalised(found.get(name, {})).items():
            if v > seeds.get(mid, 0.0):
                seeds[mid] = v
    if not seeds or max(before, asked, after) <= 0:
        return {}
    top = sorted(seeds.items(), key=lambda x: -x[1])[: 2 * pool]
    scoped = " AND n.scope=m.scope" + (" AND n.scope=:scope" if scope is not None else "")
    credit: dict[int, float] = {}
    for mid, q, nxt, prv in db.execute(
        "SELECT m.id, instr(m.text, '?') > 0, (SELECT n.id FROM memories n WHERE n.source=m.source AND n.id>m.id" + scoped + " ORDER BY n.id LIMIT 1), "
        "(SELECT n.id FROM memories n WHERE n.source=m.source AND n.id<m.id" + scoped + " ORDER BY n.id DESC LIMIT 1) "
        "FROM memories m WHERE m.id IN (SELECT value FROM json_each(:ids)) AND m.source IS NOT NULL",
        {"ids": json.dumps([m for m, _ in top]), "scope": scope},
    ):
        v = seeds[mid]
        for other, w in ((nxt, asked if q else before), (prv, after)):
            if other is not None and w > 0 and w * v > credit.get(other, 0.0):
                credit[other] = w * v
    for mid, q, head, who, nxt, nhead, nwho, prv, phead, pwho in db.execute(
        "SELECT m.id, instr(m.text, '?') > 0, substr(m.text, 1, 80), m.speaker, n.id, substr(n.text, 1, 80), n.speaker, "
        "p.id, substr(p.text, 1, 80), p.speaker FROM memories m "
        "LEFT JOIN memories n ON n.id=m.id+1 AND n.source IS NULL AND abs(n.created-m.created) <= :gap "
        "AND n.scope=m.scope "
        "LEFT JOIN memories p ON p.id=m.id-1 AND p.source IS NULL AND abs(p.created-m.created) <= :gap "
        "AND p.scope=m.scope "
        "WHERE m.id IN (SELECT value FROM json_each(:ids)) AND m.source IS NULL",
        {"ids": json.dumps([m for m, _ in top]), "gap": TURN_GAP},
    ):
        if not _a_turn(who, head):
            continue
        v = seeds[mid]
        for other, text, by, w in ((nxt, nhead, nwho, asked if q else before), (prv, phead, pwho, after)):
            if other is not None and w > 0 and w * v > credit.get(other, 0.0) and _a_turn(by, text):
                credit[other] = w * v
    ranked = sorted(credit.items(), key=lambda x: (-x[1], -x[0]))[:pool]
    return {mid: (r + 1, sc) for r, (mid, sc) in enumerate(ranked)}


def _a_turn(speaker: str | None, head: str) -> bool:
    """Whether a memory is a turn of a transcript: it has a speaker, given or as a prefix."""
    return speaker is not None or prefix_speaker(head) is not None


def _speaker_keys(name: str) -> tuple[str, str | None]:
    """A speaker's folded full name, and its folded first word when the name has several
    words and starts with a capital (a given name: "Jon" for "Jon Smith")."""
    parts = name.split()
    first = fold_name(parts[0]) if len(parts) > 1 and parts[0][:1].isupper() else None
    return fold_name(name), first or None


#: "Name: text" at the start of a memory: one to three capitalised words (letters, apostrophes,
#: hyphens, dots), a colon, a space. Times ("10:30"), URLs ("https:") and lower-case labels
#: never match.
_PREFIX = re.compile(r"\s*([A-Z][^\W\d_]*(?:['’.-][^\W\d_]+)*(?: [A-Z][^\W\d_]*(?:['’.-][^\W\d_]+)*){0,2}):\s+\S")
#: Capitalised words that head a line as a label, not as a speaker ("Note: ...").
_LABELS = frozenset("""note notes warning caution todo update updates re subject summary question answer q a tip tips
error errors fyi ps edit important reminder step steps example examples ingredients agenda action actions status
result results problem solution fix bug issue task tasks goal goals plan idea ideas comment comments title date time
location address phone email url link source sources quote definition meaning translation input output
response request reply feedback nb total price cost day week""".split())


def prefix_speaker(text: str) -> str | None:
    """The speaker a transcript-style memory names in front ("Caroline: I went to ..."), or
    None (no such prefix, or a label such as "Note:")."""
    m = _PREFIX.match(text)
    if not m:
        return None
    name = m.group(1)
    first = name.split()[0].casefold()
    if first in _LABELS or first in STOPWORDS:
        return None
    return name


def speaker(db: apsw.Connection, found: dict[str, Channel], query: str, cache: dict | None = None) -> Channel:
    """The memories found by the other channels whose speaker the turn names: the speaker's
    full name as words of the turn (folded as entity names are: case, punctuation,
    possessives), or the first word of a several-word name written with a capital in the turn
    ("Jon" for "Jon Smith"). Every such memory scores 1, so in fusion the channel adds its
    weight to each and orders them only against memories of other speakers. One primary-key
    query over the candidates (its fusion weight and what it was measured to add:
    ``docs/defaults.md``).

    A memory written without ``speaker`` whose text starts with a speaker's name and a colon
    (:func:`prefix_speaker`) counts as that speaker's, named in the turn with a capital (a
    stricter test than a given speaker's: the prefix is a guess).
    """
    cands = {m for ch in found.values() for m in ch}
    if not cands:
        return {}
    folded = f" {fold_name(query)} "
    capitals = {fold_name(w) for w in query.replace("'", " ").split() if w[:1].isupper()}
    cache = {} if cache is None else cache
    hits = []
    for mid, who, head in db.execute(
        "SELECT id, speaker, substr(text, 1, 80) FROM memories WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(cands)),),
    ):
        if who is None:
            guess = prefix_speaker(head)
            if guess is not None and all(fold_name(w) in capitals for w in guess.split()[:1]):
                hits.append(mid)
            continue
        keys = cache.get(who)
        if keys is None:
            keys = cache[who] = _speaker_keys(who)
        full, first = keys
        if (full and f" {full} " in folded) or (first and first in capitals):
            hits.append(mid)
    return {mid: (1, 1.0) for mid in sorted(hits)}


def _varint(b: bytes, i: int) -> tuple[int, int]:
    """An SQLite varint at ``b[i:]``: (value, next offset)."""
    v = 0
    for k in range(9):
        c = b[i]
        i += 1
        if k == 8:
            return (v << 8) | c, i
        v = (v << 7) | (c & 0x7F)
        if not c & 0x80:
            break
    return v, i


class Keyword:
    """bm25 over the FTS5 index, at a cost bounded whatever the store's size.

    FTS5 ranks every row that contains a query word, so a common word in a large store costs
    its whole posting list (tens of milliseconds for a word in 50,000 rows). The channel reads each
    word's document count, capped at ``CAP`` (a bounded count, cached per word until the store
    grows by a tenth). When every word is under the cap and their counts add up to at most
    ``BUDGET``, the query is FTS5's plain OR of all words (small stores: always). Otherwise
    FTS5 matches only the rarest words that fit the budget, and the candidates it finds, with
    the vector channel's (at most ``4 pool`` + ``pool``; when every word is common, the newest
    rows that have the rarest), are scored here with FTS5's own bm25 over *every* query word (same
    tokenizer, document counts, lengths and averages; k1 = 1.2, b = 0.75), so a common word
    still counts where it appears (dropping common words instead costs recall quality:
    ``docs/defaults.md``).
    """

    CAP = 2_000
    BUDGET = 3_000
    K1, B = 1.2, 0.75

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db
        self._df: dict[str, tuple[int, int]] = {}  # term -> (capped count, store size then)
        self._exact: dict[str, tuple[int, int]] = {}  # term -> (exact count, store size then)
        self._tok = None
        self._tokens: dict[str, tuple[int, dict[str, int]]] = Bounded(TOKEN_CACHE)  # text -> (length, counts)

    def _cached(self, cache: dict, term: str, n: int, sql: str, args: tuple) -> int:
        got = cache.get(term)
        if got is not None and abs(n - got[1]) * 10 <= max(got[1], 1):
            return got[0]
        c = self.db.execute(sql, args).fetchone()[0]
        if c <= self.CAP:  # a rare word is cheap to count, and a count of it goes stale with one write
            return c
        if len(cache) > 100_000:
            cache.clear()
        cache[term] = (c, n)
        return c

    def df(self, term: str, n: int) -> int:
        """Rows with ``term``, counted up to ``CAP + 1``."""
        return self._cached(self._df, term, n, "SELECT count(*) FROM (SELECT rowid FROM memories_fts WHERE "
                            "memories_fts MATCH ? LIMIT ?)", (term, self.CAP + 1))

    def exact_df(self, term: str, n: int) -> int:
        return self._cached(self._exact, term, n, "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (term,))

    def terms(self, query: str, n: int) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
        """(words FTS5 matches, words scored here only), each as (capped count, term)."""
        counted = sorted(((self.df(t, n), t) for t in fts_terms(query)), key=lambda x: x[0])
        counted = [x for x in counted if x[0] > 0]
        if not counted or (counted[-1][0] <= self.CAP and sum(c for c, _ in counted) <= self.BUDGET):
            return counted, []  # small enough: every word, as always
        keep, total = [], 0
        for c, t in counted:
            if c > self.CAP or (keep and total + c > self.BUDGET):
                break
            keep.append((c, t))
            total += c
        return keep, [x for x in counted if x not in keep]

    def __call__(self, query: str, pool: int, scope: str | None, n: int, extra=(), members=None) -> Channel:
        """The ``pool`` best memories of ``scope`` for ``query``. ``members``: the scope's ids
        when the store holds other scopes; a scope of at most :data:`KEYWORD_SCOPE_OWN_STATS` memories is
        then ranked with its own statistics (see :meth:`scoped`)."""
        if members is not None and len(members) <= KEYWORD_SCOPE_OWN_STATS:
            return self.scoped(query, pool, scope, members)
        match, rescore = self.terms(query, n)
        if not match and not rescore:
            return {}
        scope_sql = " AND m.scope=:scope" if scope is not None else ""
        sql = ("SELECT m.id, bm25(memories_fts) FROM memories_fts JOIN memories m ON m.id=memories_fts.rowid "
               "WHERE memories_fts MATCH :q")
        if not rescore:  # the plain query
            rows = self.db.execute(sql + scope_sql + " ORDER BY 2 LIMIT :pool",
                                   {"q": " OR ".join(t for _, t in match), "pool": pool, "scope": scope})
            return {mid: (r + 1, float(-s)) for r, (mid, s) in enumerate(rows)}
        cands = set(int(x) for x in extra)
        if match:
            cands.update(r[0] for r in self.db.execute(sql + scope_sql + " ORDER BY 2 LIMIT :lim", {
                "q": " OR ".join(t for _, t in match), "lim": 4 * pool, "scope": scope}))
        else:  # every word is common: the newest rows that have the rarest
            q = rescore[0][1]
            cands.update(r[0] for r in self.db.execute(
                "SELECT m.id FROM memories_fts JOIN memories m ON m.id=memories_fts.rowid WHERE memories_fts MATCH :q"
                + scope_sql + " ORDER BY memories_fts.rowid DESC LIMIT :b", {"q": q, "b": 4 * pool, "scope": scope}))
        return self._bm25(cands, match + rescore, pool, scope, n)

    def scoped(self, query: str, pool: int, scope: str, members) -> Channel:
        """bm25 over the scope alone: its memory count, average length and each word's count
        among its memories, so the ranking is the one a store holding only this scope gives
        (FTS5's statistics count every scope's words). Every memory of the scope with a query
        word is scored (at most :data:`KEYWORD_SCOPE_OWN_STATS`)."""
        terms = fts_terms(query)
        if not terms or not members:
            return {}
        cands = [r[0] for r in self.db.execute(
            "SELECT m.id FROM memories_fts JOIN memories m ON m.id=memories_fts.rowid WHERE memories_fts MATCH :q "
            "AND m.scope=:scope", {"q": " OR ".join(terms), "scope": scope})]
        tokens = sum(_varint(sz, 0)[0] for (sz,) in self.db.execute(
            "SELECT sz FROM memories_fts_docsize WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(members)),)))
        return self._bm25(cands, [(0, t) for t in terms], pool, scope, 0, stats=(len(members), tokens))

    def _tokenised(self, text: str) -> tuple[int, dict[str, int]]:
        """A text's FTS5 token count and the count of each token (cached)."""
        got = self._tokens.get(text)
        if got is None:
            toks = self._tok(text.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None, include_offsets=False,
                             include_colocated=False)
            counts: dict[str, int] = {}
            for x in toks:
                counts[x] = counts.get(x, 0) + 1
            got = self._tokens[text] = (len(toks), counts)
        return got

    def _stems(self, term: str) -> list[str]:
        return self._tok(term.strip('"').replace('""', '"').encode(), apsw.FTS5_TOKENIZE_QUERY, None,
                         include_offsets=False, include_colocated=False)

    def _bm25(self, cands, terms, pool: int, scope: str | None, n: int, stats=None) -> Channel:
        """FTS5's bm25 of ``cands`` over ``terms``, computed here (see the class docstring).
        ``stats``: ``(rows, tokens)`` of a scope whose every memory with a query word is in
        ``cands`` (the words' counts are then taken among them), else the FTS table's."""
        if not cands:
            return {}
        if self._tok is None:
            self._tok = self.db.fts5_tokenizer("porter", ["unicode61"])
        if stats is None:
            blob = self.db.execute("SELECT block FROM memories_fts_data WHERE id=1").fetchone()
            if blob is None:
                return {}
            rows, i = _varint(blob[0], 0)
            tokens, _ = _varint(blob[0], i)
        else:
            rows, tokens = stats
        avgdl = tokens / max(rows, 1)
        texts = self.db.execute(
            "SELECT id, text FROM memories m WHERE id IN (SELECT value FROM json_each(:ids))"
            + (" AND m.scope=:scope" if scope is not None else ""), {"ids": json.dumps(sorted(cands)), "scope": scope})
        docs = [(mid, self._tokenised(text)) for mid, text in texts]
        idf: dict[str, float] = {}
        for c, t in terms:
            stems = self._stems(t)
            if stats is not None:  # the word's count among the scope's memories (all in cands)
                df = sum(1 for _, (_, counts) in docs if any(st in counts for st in stems))
            else:
                df = c if c <= self.CAP else self.exact_df(t, n)
            w = max(math.log((rows - df + 0.5) / (df + 0.5)), 1e-6)
            for st in stems:
                idf[st] = idf.get(st, 0.0) + w
        scored = []
        k1, b = self.K1, self.B
        for mid, (length, counts) in docs:
            tf = {x: counts[x] for x in idf if x in counts}
            if not tf:
                continue
            norm = k1 * (1 - b + b * length / avgdl)
            scored.append((sum(idf[x] * f * (k1 + 1) / (f + norm) for x, f in tf.items()), mid))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return {mid: (r + 1, float(sc)) for r, (sc, mid) in enumerate(scored[:pool])}


def _grams(query: str) -> set[str]:
    toks = words(query)
    grams = set()
    for n in (1, 2, 3, 4):
        for i in range(len(toks) - n + 1):
            g = " ".join(toks[i : i + n])
            if n == 1 and (g in STOPWORDS or len(g) < 2):
                continue
            grams.add(fold_name(g) or g)
    return grams


class Graph:
    """Memories whose facts mention entities the turn names (1-4 word n-grams looked up as
    folded aliases; an approved category stands for its members), ranked by how many of them,
    newest first among equals; also returns the matched names.

    Indexed lookups only, at a bounded cost: an entity with more than ``CAP`` facts (a hub:
    "I", the user's own name) only counts for memories that the rarer entities found; when
    every named entity is a hub, the newest ``pool`` memories of the rarest one are ranked.
    """

    CAP = 2_000

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db
        self._deg: dict[int, tuple[int, int]] = {}  # node -> (capped degree, store size then)
        self._categories: bool | None = None  # whether any category is approved (None: ask)

    def reset(self) -> None:
        """Forget what may have changed: approved categories (degrees refresh on their own)."""
        self._categories = None

    def degree(self, nid: int, n: int) -> int:
        """Facts that mention the entity, counted up to ``CAP + 1`` on each side (cached
        until the store grows by a tenth)."""
        got = self._deg.get(nid)
        if got is not None and abs(n - got[1]) * 10 <= max(got[1], 1):
            return got[0]
        d = sum(self.db.execute(f"SELECT count(*) FROM (SELECT 1 FROM edges WHERE {col}=? LIMIT ?)",
                                (nid, self.CAP + 1)).fetchone()[0] for col in ("subj", "obj"))
        if len(self._deg) > 100_000:
            self._deg.clear()
        self._deg[nid] = (d, n)
        return d

    def memories(self, nid: int) -> np.ndarray:
        """The distinct memories whose facts name the entity, ascending: its postings, read
        from the two ``(entity, memory)`` indexes alone (no table row is visited)."""
        rows = self.db.execute("SELECT memory_id FROM edges WHERE subj=?1 UNION ALL "
                               "SELECT memory_id FROM edges WHERE obj=?1", (nid,)).fetchall()
        return np.unique(np.fromiter((r[0] for r in rows), np.int64, len(rows)))

    def __call__(self, query: str, pool: int, scope: str | None, n: int = 0,
                 members: set[int] | None = None) -> tuple[Channel, list[str]]:
        """Rank the memories for ``query``; ``members`` are the ids of ``scope`` when the store
        also holds other scopes (:meth:`Scopes.allowed`), None when no memory is left out."""
        grams = _grams(query)
        if not grams:
            return {}, []
        db = self.db
        found = db.execute("SELECT alias, node_id FROM aliases WHERE alias IN (SELECT value FROM json_each(?))",
                           (json.dumps(sorted(grams)),)).fetchall()
        if not found:
            return {}, []
        nodes = {nd for _, nd in found}
        if self._categories is None:
            self._categories = db.execute("SELECT 1 FROM categories WHERE status='approved' LIMIT 1").fetchone() is not None
        if self._categories:
            nodes.update(r[0] for r in db.execute(  # an approved category stands for its members
                "SELECT cm.node_id FROM category_members cm JOIN categories c ON c.id=cm.category_id "
                "WHERE c.status='approved' AND c.node_id IN (SELECT value FROM json_each(?))", (json.dumps(sorted(nodes)),)))
        names = sorted({a for a, _ in found})
        deg = {nd: self.degree(nd, n) for nd in nodes}
        rare = sorted(nd for nd in nodes if deg[nd] <= self.CAP)
        common = sorted((nd for nd in nodes if deg[nd] > self.CAP), key=lambda nd: deg[nd])
        lim = pool if not common else 4 * pool
        if rare:  # distinct named entities per memory, counted over the postings
            ids, counts = np.unique(np.concatenate([self.memories(nd) for nd in rare]), return_counts=True)
            if members is not None:
                keep = np.fromiter((m in members for m in ids.tolist()), np.bool_, len(ids))
                ids, counts = ids[keep], counts[keep]
            top = np.lexsort((-ids, -counts))[:lim]  # most entities first, then newest
            rows = list(zip(ids[top].tolist(), counts[top].tolist()))
        elif common:  # only hubs: the newest memories of the rarest (backwards on its index)
            join = "JOIN memories m ON m.id=e.memory_id AND m.scope=:scope " if members is not None else ""
            newest: set[int] = set()
            for col in ("subj", "obj"):
                newest.update(r[0] for r in db.execute(
                    f"SELECT DISTINCT e.memory_id FROM edges e {join}WHERE e.{col}=:n ORDER BY e.memory_id DESC LIMIT :lim",
                    {"n": common[0], "scope": scope, "lim": lim}))
            rows = [(mid, 1) for mid in sorted(newest, reverse=True)[:lim]]
        else:
            rows = []
        if common and rows:  # what the hubs add to the memories found
            score = {mid: c for mid, c in rows}
            hubs = set(common)
            seen: dict[int, set[int]] = {}
            for mid, a, b in db.execute("SELECT memory_id, subj, obj FROM edges WHERE memory_id IN "
                                        "(SELECT value FROM json_each(?))", (json.dumps(list(score)),)):
                x = a if a in hubs else b if b in hubs else None
                if x is not None and (rare or x != common[0]):
                    seen.setdefault(mid, set()).add(x)
            rows = sorted(((mid, c + len(seen.get(mid, ()))) for mid, c in score.items()), key=lambda x: (-x[1], -x[0]))
        return {mid: (r + 1, float(c)) for r, (mid, c) in enumerate(rows[:pool])}, names


class Scopes:
    """Which memories belong to a scope, for filters that cannot join on the table (the
    vector index). Cached per scope; kept current by the writes of this process and
    cleared when another process commits."""

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db
        self._cache: dict[str, set[int]] = {}
        self.reset()

    def reset(self) -> None:
        self._cache.clear()
        self._known = {r[0] for r in self.db.execute("SELECT DISTINCT scope FROM memories")}

    def allowed(self, scope: str | None) -> set[int] | None:
        """The ids of ``scope`` (a set the vector index can count and test), or None when no
        filter is needed."""
        if scope is None:
            return None
        if len(self._known) <= 1 and (not self._known or scope in self._known):
            return None  # every memory is in this scope (or there are none)
        ids = self._cache.get(scope)
        if ids is None:
            ids = {r[0] for r in self.db.execute("SELECT id FROM memories WHERE scope=?", (scope,))}
            self._cache[scope] = ids
        return ids

    def added(self, scope: str, ids) -> None:
        self._known.add(scope)
        if scope in self._cache:
            self._cache[scope].update(ids)

    def removed(self, mid: int) -> None:
        for s in self._cache.values():
            s.discard(mid)
