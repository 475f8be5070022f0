"""Moving memories in and out: a JSONL export that holds everything needed to rebuild a store,
and its import. (Ingestion of text and JSONL files is :mod:`fastmem.write.items`.)

Export (:func:`export_lines`): a header line ``{"fastmem_export": 1, ...}`` with the model and
dimensions, then one line per memory with its text, scope, source, meta, time, speaker, facts (as
triples), narrative events, usage counters and optionally (``vectors=True``) everything derived
from a model: its vector (base64 float32), its structural code, its window vectors and its
standing statement's vector; chunk bookkeeping on chunk memories, then the extra aliases of
the graph and the categories. Import (:func:`parse_export`, then ``Memory.admin.import_jsonl``)
rebuilds the same store: facts are written as given (no re-parse), events as given (the same
structural codes), the model-derived parts reused when the model (and for codes, the encoder's
version and dimension) matches, else computed again; ids kept when the target store is empty.
An import of such an export embeds, parses and encodes nothing: a bulk load.

An export of a whole store with vectors to a file also writes the store's vector index graph
beside it (``<export>.hnsw``, hnswlib's own file; the header's ``index_graph`` names it with
its size, SHA-256, label count, model and build parameters). An import into an empty store
loads that graph instead of building one when the file is the one described and holds exactly
the imported memories with their vectors; otherwise (a missing or changed file, another
model or parameters, a store that is not empty, an export to standard output) it builds the
index as before. The graph is only a cache of the vectors: the answers are the same either way.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import sys
from collections.abc import Iterable, Iterator

import numpy as np
import orjson

from ..analogy.code_store import StoredCode
from ..analogy.codes import StructureEncoder
from ..derived import standing as ST
from ..derived.ann import BULK_THREADS_MIN
from ..errors import InvalidInput
from ..models.embedder import encode_with_windows
from ..reader import standing as S
from ..util.text import from_epoch

__all__ = ["export_lines", "graph_beside", "parse_export", "restore", "write_lines"]

def export_lines(e, *, scope: str | None = None, vectors: bool = False,
                 graph_path: str | None = None) -> Iterator[dict]:
    """The export of the store of engine ``e`` (:class:`fastmem.core.engine.Engine`) as
    JSON-able dicts (header first); see the module docstring. ``graph_path``: where the
    vector index graph is written for an export of the whole store with vectors (its header
    then describes it)."""
    db = e.db
    where, args = ("WHERE m.scope=?", (scope,)) if scope is not None else ("", ())
    n = db.execute(f"SELECT count(*) FROM memories m {where}", args).fetchone()[0]
    header = {"fastmem_export": 1, "model": e.embedder.model_id, "dim": e.embedder.dim, "hrr_dim": e.hrr_dim,
              "structure_version": StructureEncoder.version, "memories": n, "scope": scope}
    if graph_path is not None and vectors and scope is None:
        graph = e.index.export_graph(graph_path)
        if graph is not None:
            header["index_graph"] = graph
    yield header
    chunk_rows = {r[0]: r[1:] for r in db.execute("SELECT memory_id, version, summarizer FROM chunks")}
    standing = ST.exported(db, vectors=vectors)
    derived = _derived(db, e.hrr_dim) if vectors else None
    for row in db.execute(
        "SELECT m.id, m.text, m.scope, m.source, m.meta, m.at, m.speaker, m.created, m.updated, ev.events, u.surfaced, "
        "u.engaged, "
        f"u.ignored, u.last_surfaced, e.vec FROM memories m LEFT JOIN events ev ON ev.memory_id=m.id "
        f"LEFT JOIN usage u ON u.memory_id=m.id LEFT JOIN embeddings e ON e.memory_id=m.id {where} ORDER BY m.id", args
    ).fetchall():
        mid, text, sc, src, meta, at, who, created, updated, events, surf, eng, ign, last, vec = row
        out = {"id": mid, "text": text, "scope": sc, "source": src, "meta": json.loads(meta),
               "at": None if at is None else from_epoch(at).isoformat(), "speaker": who, "created": created,
               "updated": updated,
               "events": json.loads(events) if events else [], "usage": [surf or 0, eng or 0, ign or 0, last]}
        if mid in chunk_rows:
            out["chunk"] = {"members": [r[0] for r in db.execute(
                "SELECT member_id FROM chunk_members WHERE chunk_id=? ORDER BY member_id", (mid,))],
                "version": chunk_rows[mid][0], "summarizer": chunk_rows[mid][1]}
        else:
            # a mood only when not asserted or a detail follows; a detail only when there is one
            out["facts"] = [list(r[:5]) + ([r[5]] if r[5] != "asserted" or r[6] else []) + ([r[6]] if r[6] else [])
                            for r in db.execute(
                "SELECT s.name, e.rel_raw, o.name, s.type, o.type, e.mood, e.detail FROM edges e JOIN nodes s ON s.id=e.subj "
                "JOIN nodes o ON o.id=e.obj WHERE e.memory_id=? ORDER BY e.pos", (mid,))]
        if mid in standing:
            out["standing"] = standing[mid]
        if vectors and vec is not None:
            out["vector"] = base64.b64encode(vec).decode()
        if derived is not None:
            out.update(derived(mid))
        yield out
    # a scoped export holds the aliases of that scope's entities and that scope's categories only
    in_scope = ("AND EXISTS (SELECT 1 FROM edges e JOIN memories m ON m.id=e.memory_id "
                "WHERE (e.subj=n.id OR e.obj=n.id) AND m.scope=?)") if scope is not None else ""
    for alias, name, typ in db.execute(
        "SELECT a.alias, n.name, n.type FROM aliases a JOIN nodes n ON n.id=a.node_id WHERE a.alias<>n.key "
        f"AND n.type<>'category' {in_scope} ORDER BY n.id, a.alias", (scope,) if scope is not None else ()
    ):
        yield {"alias": {"alias": alias, "node": name, "type": typ}}
    from ..passes.categories import ANY, listing

    for c in listing(db, scope=ANY if scope is None else scope):
        types = dict(db.execute("SELECT id, type FROM nodes WHERE id IN (SELECT value FROM json_each(?))",
                                (json.dumps(list(c.member_ids)),)).fetchall())
        cat_scope = db.execute("SELECT scope FROM categories WHERE id=?", (c.id,)).fetchone()[0]
        yield {"category": {"name": c.name, "status": c.status, "relations": list(c.relations), "scope": cat_scope,
                            "members": [[nm, types.get(i)] for nm, i in zip(c.members, c.member_ids)]}}


def _derived(db, hrr_dim: int):
    """``fn(memory id) -> {"code": ..., "windows": ...}``: a memory's stored code and window
    vectors as an export carries them (base64; absent parts left out)."""
    def fn(mid: int) -> dict:
        out = {}
        c = db.execute("SELECT code, nterms, terms FROM codes WHERE memory_id=? AND dim=?", (mid, hrr_dim)).fetchone()
        if c is not None:
            out["code"] = {"q8": _b64(c[0]), "nterms": c[1], "terms": _b64(c[2])}
        w = db.execute("SELECT vecs FROM windows WHERE memory_id=?", (mid,)).fetchone()
        if w is not None:
            out["windows"] = _b64(w[0])
        p = db.execute("SELECT clauses, vecs FROM plots WHERE memory_id=?", (mid,)).fetchone()
        if p is not None:
            out["plot"] = {"clauses": json.loads(p[0]), "vecs": _b64(p[1])}  # float16
        return out
    return fn


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


def _loads(line: str):
    """One JSON line: orjson (several times faster: an export's lines are mostly base64
    vectors), the standard library for what orjson refuses (NaN, integers over 64 bits) and
    for its error message."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def parse_export(fh) -> tuple[dict, list[dict], list[dict], list[dict]]:
    """(header, memories, aliases, categories) of an export file object; raises
    :class:`InvalidInput` when it is not one."""
    lines = iter(fh)
    try:
        header = json.loads(next(lines))
    except (StopIteration, json.JSONDecodeError):
        raise InvalidInput("not a fastmem export: the first line must be its JSON header") from None
    if not isinstance(header, dict) or header.get("fastmem_export") != 1:
        raise InvalidInput("not a fastmem export (no 'fastmem_export': 1 header)")
    mems, aliases, cats = [], [], []
    for n, line in enumerate(lines, 2):
        if not line.strip():
            continue
        try:
            obj = _loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"export line {n}: not JSON ({exc.msg})") from None
        if "alias" in obj:
            aliases.append(obj["alias"])
        elif "category" in obj:
            cats.append(obj["category"])
        elif isinstance(obj.get("text"), str) and isinstance(obj.get("id"), int):
            mems.append(obj)
        else:
            raise InvalidInput(f"export line {n}: not a memory, alias or category")
    return header, mems, aliases, cats


#: The exported vector of a memory record, when present and of ``dim`` (the same field as a
#: statement's: :func:`fastmem.derived.standing.vector_of`).
vector_of = ST.vector_of


def write_lines(lines: Iterable[dict], path: str | os.PathLike | None) -> int:
    """Write JSON lines to ``path`` (``-`` or None: standard output); returns the count."""
    n = 0
    fh = sys.stdout if path in (None, "-") else open(path, "w", encoding="utf-8")
    try:
        for obj in lines:
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
            n += 1
    finally:
        if fh is not sys.stdout:
            fh.close()
    return n


def graph_beside(header: dict, export_path: str | os.PathLike) -> tuple[str, dict] | None:
    """``(path, description)`` of the index graph an export's header names, when its file is
    beside the export (the name only: a header never points elsewhere)."""
    graph = header.get("index_graph")
    if not isinstance(graph, dict) or not isinstance(graph.get("file"), str):
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(export_path)), os.path.basename(graph["file"]))
    return (path, graph) if os.path.isfile(path) else None


def restore(e, header: dict, mems: list[dict], aliases: list[dict], cats: list[dict], *, progress=None,
            graph: tuple[str, dict] | None = None) -> int:
    """Write an export's memories, chunks, aliases and categories into the store of engine ``e`` (see the module
    docstring) in one transaction: a failure anywhere leaves the store as it was (the vectors
    an import must compute are computed first, outside it). ``graph``: the export's index
    graph (:func:`graph_beside`), loaded instead of built where it fits. Returns the number of
    memories written."""
    from ..storage import memories as R
    from ..util.text import check_text, to_epoch
    from ..write import commit as C
    from ..write.checks import check_speaker

    for r in mems:
        check_text(r["text"], f"memory {r['id']}")
        check_speaker(r.get("speaker"), f"memory {r['id']}: speaker")
    same_model = header.get("model") == e.embedder.model_id and header.get("dim") == e.embedder.dim
    # what needs the model is computed before the transaction (it may embed: the model differs)
    vecs = _vectors(e, mems, same_model, progress)
    standing, windows = _standing(e, mems, same_model), _windows(e, mems, same_model)
    scope = [r.get("scope") or "" for r in mems]
    bulk = len(mems) >= BULK_THREADS_MIN  # the index is built while the rows are written
    prep = _prepared(e, header, mems, vecs, standing, windows, same_model)
    sums = e.structure.begin_sums(prep.events, prep.codes)  # on a thread from now
    with e.transaction() as tx:
        db = tx.db
        keep_ids = R.count(db, None, None) == 0
        if bulk and keep_ids:  # the ids are the export's: the index build starts now
            carried = graph if same_model and all("vector" in r for r in mems) else None
            tx.added_early([r["id"] for r in mems], vecs, scope, graph=carried)
        ids, pending = C.commit(db, prep, scope=scope, source=[r.get("source") for r in mems],
                                meta_json=[json.dumps(r.get("meta") or {}) for r in mems],
                                at=[to_epoch(r.get("at")) for r in mems], speaker=[r.get("speaker") for r in mems],
                                model_id=e.embedder.model_id, structure=e.structure,
                                ids=[r["id"] for r in mems] if keep_ids else None,
                                times=[(r.get("created") or 0, r.get("updated") or 0) for r in mems],
                                on_ids=(lambda got: tx.added_early(got, vecs, scope)) if bulk and not keep_ids else None,
                                sums=sums)
        _restore_usage(db, mems, ids)
        new_id = {r["id"]: mid for r, mid in zip(mems, ids)}
        _restore_chunks(db, mems, new_id)
        _restore_aliases(db, aliases)
        _restore_categories(db, cats)
        tx.structure(pending)
        if not bulk:
            tx.added(ids, prep.vecs, scope)
        tx.usage_changed()
        tx.scopes_changed()
        tx.graph_changed()
    return len(mems)


def _vectors(e, mems: list[dict], same_model: bool, progress) -> np.ndarray:
    """The rows' vectors: the export's when its model is the store's, else embedded 256 at a
    time with a progress bar."""
    from ..util.progress import bar

    if same_model and (whole := _all_vectors(mems, e.embedder.dim)) is not None:
        return whole
    vecs = [vector_of(r, e.embedder.dim) if same_model else None for r in mems]
    todo = [i for i, v in enumerate(vecs) if v is None]
    b = bar(len(todo), "embedding", progress) if todo else None
    for start in range(0, len(todo), 256):
        part = todo[start : start + 256]
        for i, v in zip(part, e.embedder.encode([mems[i]["text"] for i in part])):
            vecs[i] = v
        if b:
            b.update(len(part))
    if b:
        b.close()
    return np.stack(vecs).astype(np.float32) if vecs else np.zeros((0, e.embedder.dim), np.float32)


def _all_vectors(mems: list[dict], dim: int) -> np.ndarray | None:
    """Every record's exported vector decoded in one call (an export's usual case: each one
    unpadded base64 of ``dim`` float32, the same bytes as decoding them one by one); None
    when one is missing or not exactly that (they are then read one at a time)."""
    size = 4 * dim
    if not mems or size % 3:
        return None
    want = size // 3 * 4
    texts = [r.get("vector") for r in mems]
    if not all(isinstance(t, str) and len(t) == want for t in texts):
        return None
    try:
        raw = binascii.a2b_base64("".join(texts), strict_mode=True)
    except (binascii.Error, ValueError):
        return None
    return np.frombuffer(raw, np.float32).reshape(len(mems), dim).copy()


def _prepared(e, header: dict, mems: list[dict], vecs: np.ndarray, standing, windows, same_model: bool):
    """The rows as a prepared batch: their vectors, facts, events, statements, windows and
    (same model, encoder version and dimension) codes."""
    from ..reader.extract import Triple
    from ..reader.mood import STORED as STORED_MOODS
    from ..write.prepare import Prepared

    facts = [[] if "chunk" in r else [Triple(f[0], f[1], f[2], None if f[3] in (None, "?") else f[3],
                                             None if f[4] in (None, "?") else f[4],
                                             mood=f[5] if len(f) > 5 and f[5] in STORED_MOODS else "asserted",
                                             detail=str(f[6]) if len(f) > 6 and f[6] else "")
                                      for f in r.get("facts", [])]
             for r in mems]
    same_code = (same_model and header.get("hrr_dim") == e.hrr_dim
                 and header.get("structure_version") == StructureEncoder.version)
    plots = [_plot(r, e.embedder.dim) for r in mems] if same_model else None
    return Prepared([r["text"] for r in mems], vecs, facts,
                      [r.get("events") or [] for r in mems],  # (verb, subjects, objects), as stored
                      standing, windows,
                      [_code(r, e.hrr_dim) for r in mems] if same_code else None,
                      plots=plots if plots and any(p is not None for p in plots) else None)


def _plot(rec: dict, dim: int):
    """The exported plot of a memory record (:mod:`fastmem.analogy.plots`), when present and whole."""
    from ..analogy.plots import Plot

    p = rec.get("plot")
    if not isinstance(p, dict):
        return None
    try:
        clauses = [str(c) for c in p["clauses"]]
        vecs = np.frombuffer(base64.b64decode(p["vecs"]), np.float16).astype(np.float32)
    except (KeyError, TypeError, ValueError):
        raise InvalidInput(f"memory {rec.get('id')}: its exported plot is malformed") from None
    if not clauses or vecs.size != len(clauses) * dim:
        return None
    return Plot(clauses, vecs.reshape(len(clauses), dim))


def _code(rec: dict, hrr_dim: int) -> StoredCode | None:
    """The exported code of a memory record, when present and whole."""
    c = rec.get("code")
    if not isinstance(c, dict):
        return None
    try:
        q8, terms = base64.b64decode(c["q8"]), base64.b64decode(c["terms"])
        nterms = int(c["nterms"])
    except (KeyError, TypeError, ValueError):
        raise InvalidInput(f"memory {rec.get('id')}: its exported code is malformed") from None
    if len(q8) != 2 * hrr_dim or len(terms) % 8:
        return None
    return StoredCode(q8, nterms, terms)


def _windows(e, mems: list[dict], same_model: bool) -> list | None:
    """The window vectors of the long texts: the export's (same model), else embedded again."""
    w = getattr(e.embedder, "window_words", None)
    if w is None:
        return None
    out: list = [None] * len(mems)
    dim = e.embedder.dim
    long = []
    for i, r in enumerate(mems):
        if "chunk" in r or len(r["text"].split()) <= w:
            continue
        got = np.frombuffer(base64.b64decode(r["windows"]), np.float32) if same_model and r.get("windows") else None
        if got is not None and got.size and got.size % dim == 0:
            out[i] = got.reshape(-1, dim)
        else:
            long.append(i)
    if not long:
        return out if any(x is not None for x in out) else None
    for i, win in zip(long, encode_with_windows(e.embedder, [mems[i]["text"] for i in long])[1]):
        out[i] = win
    return out


def _standing(e, mems: list[dict], same_model: bool) -> list | None:
    """The exported statements, with their sentences' own vectors: the export's (same model),
    else embedded again (a statement whose sentence is the whole text has none)."""
    sts = [S.imported(r["standing"]) if r.get("standing") else None for r in mems]
    if not any(sts):
        return None
    own = [i for i, st in enumerate(sts) if st is not None and st.sentence and st.sentence != mems[i]["text"].strip()]
    sv = {}
    if same_model:
        sv = {i: v for i in own if (v := ST.vector_of(mems[i]["standing"], e.embedder.dim)) is not None}
    todo = [i for i in own if i not in sv]
    if todo:
        sv.update(zip(todo, e.embedder.encode([sts[i].sentence for i in todo])))
    return [None if st is None else (st, sv.get(i)) for i, st in enumerate(sts)]


def _restore_usage(db, mems: list[dict], ids: list[int]) -> None:
    from ..derived import usage as U

    for r, mid in zip(mems, ids):
        surf, eng, ign, last = (list(r.get("usage") or []) + [0, 0, 0, None])[:4]
        if surf or eng or ign or last is not None:  # a new row holds zeros already
            U.restore(db, mid, surf, eng, ign, last)


def _restore_chunks(db, mems: list[dict], new_id: dict[int, int]) -> None:
    from ..passes import chunks as CH

    for r in mems:
        ch = r.get("chunk")
        if not ch:
            continue
        CH.restore(db, new_id[r["id"]], r.get("scope") or "", [new_id[m] for m in ch["members"] if m in new_id],
                   version=ch.get("version", 1), summarizer=ch.get("summarizer", "import"),
                   created=r.get("created") or 0, updated=r.get("updated") or 0)


def _restore_aliases(db, aliases: list[dict]) -> None:
    from ..derived import graph as G

    for a in aliases:
        for e in G.lookup(db, a["node"]):
            if e.type == (a.get("type") if a.get("type") != "?" else "thing"):
                G.add_alias(db, a["alias"], e.id)
                break


def _restore_categories(db, cats: list[dict]) -> None:
    from ..passes import categories as CAT
    from ..reader.canon import fold_name

    for c in cats:
        members = []
        for name, typ in c["members"]:
            node = db.execute("SELECT id FROM nodes WHERE key=? OR key=?",
                              (fold_name(name) or name, f"{fold_name(name)}#{typ}")).fetchone()
            if node:
                members.append(node[0])
        rels = [["out", x[1:-2]] if x.startswith("-") else ["in", x[2:-1]] for x in c["relations"]]
        cat_id = CAT.restore(db, c["name"], rels, f"import:{c['name']}:{len(members)}", c.get("scope"), members)
        if c["status"] == "approved":
            CAT.approve(db, cat_id)
        elif c["status"] == "rejected":
            CAT.reject(db, cat_id)
