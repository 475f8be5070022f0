"""The keyword channel: FTS5 bm25 over the memory text (every query word quoted, OR-ed), at
a cost bounded whatever the store's size (see :class:`Keyword`)."""

from __future__ import annotations

import json
import math

import apsw

from ...util.bounded import Bounded
from ...util.text import fts_terms
from .spec import Channel, TurnQuery, channel

__all__ = ["Keyword", "KEYWORD_SCOPE_OWN_STATS", "TOKEN_CACHE", "varint"]

#: A scope of at most this many memories, in a store that holds others, is ranked by the
#: keyword channel with its own word statistics.
KEYWORD_SCOPE_OWN_STATS = 2048
#: Texts whose FTS5 tokens the keyword channel keeps (the texts it scores again and again).
TOKEN_CACHE = 20_000


def varint(b: bytes, i: int) -> tuple[int, int]:
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

    def __call__(self, query: str, pool: int, scope: str | None, n: int, extra=(), members=None,
                 exclude: frozenset[int] = frozenset()) -> Channel:
        """The ``pool`` best memories of ``scope`` for ``query``. ``members``: the scope's ids
        when the store holds other scopes; a scope of at most :data:`KEYWORD_SCOPE_OWN_STATS` memories is
        then ranked with its own statistics (see :meth:`scoped`). ``exclude``: memories ranked
        as if they were not stored (none returned; the store's size, length and each word's
        count without them), so a recall that leaves out the turns a host's model has in its
        context ranks the rest as the store before them would."""
        if members is not None and len(members) <= KEYWORD_SCOPE_OWN_STATS:
            return self.scoped(query, pool, scope, members - exclude if exclude else members, exclude)
        match, rescore = self.terms(query, n)
        if not match and not rescore:
            return {}
        scope_sql = " AND m.scope=:scope" if scope is not None else ""
        sql = ("SELECT m.id, bm25(memories_fts) FROM memories_fts JOIN memories m ON m.id=memories_fts.rowid "
               "WHERE memories_fts MATCH :q")
        if not rescore:  # the plain query
            rows = self.db.execute(sql + scope_sql + " ORDER BY 2 LIMIT :pool",
                                   {"q": " OR ".join(t for _, t in match), "pool": pool, "scope": scope})
            if not exclude:
                return {mid: (r + 1, float(-s)) for r, (mid, s) in enumerate(rows)}
            # FTS5's statistics count the excluded rows: its best scored again without them
            # (``pool`` has room for them; the two orders differ a little, near the top rarely)
            return self._bm25({mid for mid, _ in rows}, match, pool, scope, n, less=exclude)
        cands = set(int(x) for x in extra)
        if match:
            cands.update(r[0] for r in self.db.execute(sql + scope_sql + " ORDER BY 2 LIMIT :lim", {
                "q": " OR ".join(t for _, t in match), "lim": 4 * pool, "scope": scope}))
        else:  # every word is common: the newest rows that have the rarest
            q = rescore[0][1]
            cands.update(r[0] for r in self.db.execute(
                "SELECT m.id FROM memories_fts JOIN memories m ON m.id=memories_fts.rowid WHERE memories_fts MATCH :q"
                + scope_sql + " ORDER BY memories_fts.rowid DESC LIMIT :b", {"q": q, "b": 4 * pool, "scope": scope}))
        return self._bm25(cands, match + rescore, pool, scope, n, less=exclude)

    def scoped(self, query: str, pool: int, scope: str, members, exclude: frozenset[int] = frozenset()) -> Channel:
        """bm25 over the scope alone: its memory count, average length and each word's count
        among its memories, so the ranking is the one a store holding only this scope gives
        (FTS5's statistics count every scope's words). Every memory of the scope with a query
        word is scored (at most :data:`KEYWORD_SCOPE_OWN_STATS`); ``exclude``: never scored (``members``
        are the scope's without them)."""
        terms = fts_terms(query)
        if not terms or not members:
            return {}
        cands = [r[0] for r in self.db.execute(
            "SELECT m.id FROM memories_fts JOIN memories m ON m.id=memories_fts.rowid WHERE memories_fts MATCH :q "
            "AND m.scope=:scope", {"q": " OR ".join(terms), "scope": scope})]
        tokens = sum(varint(sz, 0)[0] for (sz,) in self.db.execute(
            "SELECT sz FROM memories_fts_docsize WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(members)),)))
        return self._bm25(cands, [(0, t) for t in terms], pool, scope, 0, stats=(len(members), tokens), less=exclude)

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

    def _bm25(self, cands, terms, pool: int, scope: str | None, n: int, stats=None,
              less: frozenset[int] = frozenset()) -> Channel:
        """FTS5's bm25 of ``cands`` over ``terms``, computed here (see the class docstring).
        ``stats``: ``(rows, tokens)`` of a scope whose every memory with a query word is in
        ``cands`` (the words' counts are then taken among them), else the FTS table's, less
        the memories ``less`` (their rows, tokens and words; none of them is scored)."""
        cands = set(cands) - less if less else cands
        if not cands:
            return {}
        if self._tok is None:
            self._tok = self.db.fts5_tokenizer("porter", ["unicode61"])
        gone = []
        if stats is None:
            blob = self.db.execute("SELECT block FROM memories_fts_data WHERE id=1").fetchone()
            if blob is None:
                return {}
            rows, i = varint(blob[0], 0)
            tokens, _ = varint(blob[0], i)
            if less:
                told = [self._tokenised(text) for (text,) in self.db.execute(
                    "SELECT text FROM memories WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(list(less)),))]
                rows -= len(told)
                tokens -= sum(length for length, _ in told)
                gone = [counts for _, counts in told]
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
                df -= sum(1 for counts in gone if any(st in counts for st in stems))
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


@channel("keyword", also=("derived",), weight=1.0, state=Keyword, long_prior=True)
def run(p, t: TurnQuery) -> Channel:
    return p.state["keyword"](t.query, t.fetch, t.scope, p.index.live, extra=t.labels, members=t.members,
                              exclude=t.exclude)
