"""The ``fastmem`` command line.

Every command takes ``--db PATH`` (default: ``$FASTMEM_DB``). Exit codes: 0 ok, 1 failure,
2 usage. Errors are one line on standard error; ``--debug`` shows the traceback. Long work
shows a progress bar on standard error; ``--json`` prints machine-readable output.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import sys
import threading
import time

__all__ = ["main", "run", "DEMO"]

DEMO = [
    "Alice moved to Berlin in May.",
    "Alice prefers green tea over coffee.",
    "Bob works for Initech as a data engineer.",
    "Acme Corporation owns Widget Inc, a small subsidiary in Ohio.",
    "The quarterly report is due on the first Monday of March.",
    "Kenji plays the cello in a community orchestra.",
    "Heavy rain flooded the basement last spring.",
    "The wifi password at the Lisbon office is blue-heron-42.",
    "Priya teaches chemistry at the local high school.",
    "Olga runs a marathon every autumn.",
    "The museum closes at six on weekdays.",
    "Grandpa was born in a small village near Krakow.",
]
DEMO_QUERIES = ["where does Alice live?", "what is the Lisbon wifi password?", "My friend Bob owns a red car."]


class UsageError(Exception):
    """A command line that cannot run as given (exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def _json_default(o):
    if hasattr(o, "isoformat"):
        return o.isoformat()
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, (set, tuple)):
        return list(o)
    return str(o)


def _out(obj) -> None:
    print(json.dumps(obj, indent=2, default=_json_default, ensure_ascii=False))


def _hit(h) -> dict:
    return {"id": h.id, "text": h.text, "score": h.score, "scope": h.scope, "at": h.at, "speaker": h.speaker, "why": h.why}


def _print_recall(res) -> None:
    print(f"> {res.query}")
    for h in res.hits:
        chans = ", ".join(f"{c} #{v['rank']}" for c, v in h.why.items() if isinstance(v, dict) and "rank" in v)
        extra = f"; stands for {len(h.why['chunk']['suppressed'])} members" if "chunk" in h.why else ""
        print(f"  [{h.id}] {h.score:.4f}  {h.text}    ({chans}; use x{h.why['use']['weight']:.2f}{extra})")
    if res.analogy is not None:
        a = res.analogy
        print(f"  analogy [{a.id}] {a.text}")
        print(f"     {a.why['reason']}; surface {a.why['surface']:.2f}")


def _db(a) -> str:
    path = a.db or os.environ.get("FASTMEM_DB")
    if not path:
        raise UsageError(f"fastmem {a.cmd}: no store given: pass --db PATH or set FASTMEM_DB")
    return path


def _open(a, **kw):
    import fastmem

    if getattr(a, "embedder", None):
        kw.setdefault("embedder", a.embedder)
    return fastmem.Memory(_db(a), progress=None if not getattr(a, "quiet", False) else False, **kw)


def _open_existing(a, **kw):
    path = _db(a)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no store at {path}")
    return _open(a, **kw)


# -- commands ------------------------------------------------------------------------------
def cmd_demo(a) -> int:
    path = a.db or os.environ.get("FASTMEM_DB") or "fastmem-demo.db"
    import fastmem

    with fastmem.Memory(path) as m:
        if m.count(scope="demo") == 0:
            m.remember_many(DEMO, scope="demo")
            print(f"stored {len(DEMO)} memories in {path}")
        for text in DEMO_QUERIES:
            print()
            _print_recall(m.recall(text, k=3, scope="demo", record=False))
    return 0


def cmd_remember(a) -> int:
    texts = a.texts or [line.rstrip("\n") for line in sys.stdin if line.strip()]
    meta = json.loads(a.meta) if a.meta else None
    with _open(a, **({"extractor": None} if a.no_extract else {})) as m:
        ids = m.remember_many(texts, scope=a.scope, source=a.source, meta=meta, at=a.at, speaker=a.speaker)
    print(json.dumps(ids))
    return 0


def cmd_ingest(a) -> int:
    from .progress import bar
    from .transfer import read_items

    items = list(read_items(a.files, a.format))
    if a.ray is not None:
        return _ingest_ray(a, items)
    t0 = time.perf_counter()
    n = 0
    with _open(a, **({"extractor": None} if a.no_extract else {})) as m:
        b = bar(len(items), "ingesting", None if not a.quiet else False)
        group: list[dict] = []

        def flush():
            nonlocal n
            if group:
                g0 = group[0]
                m.remember_many([x["text"] for x in group], scope=g0.get("scope", a.scope) or "",
                                source=g0.get("source", a.source), meta=g0.get("meta"),
                                triples=[x.get("triples") for x in group] if any("triples" in x for x in group) else None,
                                at=[x.get("at") for x in group],
                                speaker=[x.get("speaker", a.speaker) for x in group], progress=False)
                n += len(group)
                if b:
                    b.update(len(group))
                group.clear()

        key = None
        for it in items:
            k = (it.get("scope", a.scope), it.get("source", a.source), json.dumps(it.get("meta"), sort_keys=True))
            if k != key or len(group) >= a.batch:
                flush()
                key = k
            group.append(it)
        flush()
        if b:
            b.close()
    dt = time.perf_counter() - t0
    summary = {"memories": n, "files": len(a.files), "seconds": round(dt, 2), "per_second": round(n / dt, 1) if dt else None}
    if a.json:
        _out(summary)
    else:
        print(f"ingested {n} memories from {len(a.files)} file(s) in {dt:.1f} s ({summary['per_second']}/s)",
              file=sys.stderr)
    return 0


def _ray_address(a) -> str | None:
    return None if a.ray == "auto" else a.ray


def _ingest_ray(a, items) -> int:
    from . import distributed

    if a.no_extract:
        raise UsageError("fastmem ingest: --ray derives facts and structure on the workers; --no-extract is not "
                         "supported with it")
    for it in items:  # the command's defaults, as without --ray
        it.setdefault("scope", a.scope)
        it.setdefault("source", a.source)
        if a.speaker is not None:
            it.setdefault("speaker", a.speaker)
    rep = distributed.ingest(items, _db(a), address=_ray_address(a), batch_size=a.batch, shard_by=a.shard_by,
                             progress=None if not a.quiet else False)
    if a.json:
        _out(dict(rep))
    else:
        rate = rep["memories"] / rep["seconds"] if rep["seconds"] else 0.0
        print(f"ingested {rep['memories']} memories through Ray in {rep['seconds']:.1f} s ({rate:.1f}/s); "
              f"{rep['skipped']} of {rep['batches']} batches were already committed", file=sys.stderr)
    return 0


def _finish_pending(m) -> None:
    """A command that loads the models anyway finishes what another process left pending."""
    if m.pending_count():
        m.derive_pending()


def cmd_recall(a) -> int:
    chans = tuple(c.strip() for c in a.channels.split(",")) if a.channels else ("keyword", "vector", "graph")
    with _open_existing(a) as m:
        _finish_pending(m)
        res = m.recall(a.query, k=a.k, scope=a.scope, analogy=not a.no_analogy, channels=chans, record=not a.no_record)
    if a.json:
        _out({"query": res.query, "hits": [_hit(h) for h in res.hits],
              "analogy": None if res.analogy is None else _hit(res.analogy), "timings_ms": res.timings_ms})
    else:
        _print_recall(res)
    return 0


def cmd_analogies(a) -> int:
    with _open_existing(a) as m:
        _finish_pending(m)
        got = m.analogies(a.text, k=a.k, scope=a.scope, z_min=a.z_min)
    if a.json:
        _out([_hit(x) for x in got])
    else:
        for x in got:
            print(f"[{x.id}] z={x.why['z']:.2f} surface={x.why['surface']:.2f}  {x.text}\n     shared: {', '.join(x.why['matched'])}")
    return 0


def cmd_graph(a) -> int:
    if a.action == "path" and not a.other:
        raise UsageError("fastmem graph path: give two entities: fastmem graph path A B")
    with _open_existing(a) as m:
        if a.action == "entity":
            out = [{"id": e.id, "name": e.name, "type": e.type, "aliases": e.aliases,
                    "facts": [_fact(f) for f in m.entity_facts(e.id, limit=a.limit, scope=a.scope)]}
                   for e in m.entity(a.name, scope=a.scope)]
        elif a.action == "neighbours":
            out = [{"name": e.name, "type": e.type, "distance": d} for e, d in m.neighbours(a.name, depth=a.depth, scope=a.scope)]
        else:
            path = m.relation_path(a.name, a.other, scope=a.scope)
            out = None if path is None else [_fact(f) for f in path]
    if a.json:
        _out(out)
    elif a.action == "entity":
        for e in out:
            print(f"{e['name']} ({e['type']}; aliases: {', '.join(e['aliases'])})")
            for f in e["facts"]:
                print(f"   {f['subject']} -{f['relation']}-> {f['object']}   [memory {f['memory_id']}]")
    elif a.action == "neighbours":
        for x in out:
            print(f"{x['distance']}  {x['name']} ({x['type']})")
    else:
        print("no path" if out is None else "\n".join(f"{f['subject']} -{f['relation']}-> {f['object']}" for f in out))
    return 0


def _fact(f) -> dict:
    return {"subject": f.subject, "relation": f.relation, "object": f.object, "memory_id": f.memory_id}


def cmd_stats(a) -> int:
    import fastmem
    from .store import SCHEMA_VERSION

    path = _db(a)
    with _open_existing(a) as m:
        st = m.stats()
        size = lambda p: os.path.getsize(p) if os.path.exists(p) else 0  # noqa: E731
        out = {
            "path": os.path.abspath(path),
            **{k: st[k] for k in ("memories", "scopes", "pending", "entities", "facts", "codes", "chunks",
                                  "categories")},
            "bytes": {"db": size(path), "wal": size(path + "-wal"), "index": size(path + ".hnsw")},
            "model": st["model"], "dimensions": st["dimensions"], "hrr_dim": st["hrr_dim"],
            "schema_version": st["schema_version"], "schema_supported": SCHEMA_VERSION,
            "fastmem": fastmem.__version__,
        }
    if a.json:
        _out(out)
    else:
        for k, v in out.items():
            print(f"{k:16s} {v}")
        if out["pending"]:
            print(f"({out['pending']} memories are pending: committed and found by keyword recall, their vectors, "
                  "facts and codes not derived yet; `fastmem check` or the next process with the models derives them)")
    return 0


def cmd_forget(a) -> int:
    with _open_existing(a) as m:
        for mid in a.ids:
            m.forget(mid)
    print(f"forgot {len(a.ids)} memories", file=sys.stderr)
    return 0


def cmd_consolidate(a) -> int:
    with _open_existing(a) as m:
        rep = m.consolidate(scope=a.scope, progress=None if not a.quiet else False)
    out = {"created": rep.created, "updated": rep.updated, "unchanged": rep.unchanged, "clusters": rep.clusters,
           "hubs": rep.hubs, "seconds": round(rep.seconds, 2)}
    if a.json:
        _out(out)
    else:
        print(f"{rep.clusters} clusters: {len(rep.created)} chunks created, {len(rep.updated)} updated, "
              f"{len(rep.unchanged)} unchanged ({rep.seconds:.1f} s); hubs left out: {', '.join(rep.hubs) or 'none'}")
    return 0


def cmd_expand(a) -> int:
    with _open_existing(a) as m:
        got = m.expand(a.chunk_id)
    if a.json:
        _out([{"id": r.id, "text": r.text, "scope": r.scope, "at": r.at} for r in got])
    else:
        for r in got:
            print(f"[{r.id}] {r.text}")
    return 0


def cmd_dissolve(a) -> int:
    with _open_existing(a) as m:
        m.dissolve(a.chunk_id)
    print(f"dissolved chunk {a.chunk_id}", file=sys.stderr)
    return 0


def cmd_categories(a) -> int:
    if a.action not in ("list", "propose") and a.id is None:
        raise UsageError(f"fastmem categories {a.action}: give the category id")
    with _open_existing(a) as m:
        if a.action == "list":
            got = m.categories(a.status)
        elif a.action == "propose":
            got = m.propose_categories(scope=a.scope)
        else:
            got = [getattr(m, f"{a.action}_category")(a.id)]
    if a.json:
        _out([{"id": c.id, "name": c.name, "status": c.status, "members": c.members, "relations": c.relations}
              for c in got])
    else:
        for c in got:
            more = f" (+{len(c.members) - 8} more)" if len(c.members) > 8 else ""
            print(f"[{c.id}] {c.status:9s} {c.name}: {', '.join(c.members[:8])}{more}  {' '.join(c.relations)}")
    return 0


def cmd_reembed(a) -> int:
    if a.ray is not None:
        from . import distributed

        n = distributed.reembed(_db(a), address=_ray_address(a), progress=None if not a.quiet else False)
        print(f"re-embedded {n} memories through Ray", file=sys.stderr)
        return 0
    with _open_existing(a, reembed=True) as m:
        m.reembed(progress=None if not a.quiet else False)
        n = len(m)
    print(f"re-embedded {n} memories", file=sys.stderr)
    return 0


def cmd_check(a) -> int:
    from .store import probe

    path = _db(a)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no store at {path}")
    reason = probe(path)
    if reason:
        raise RuntimeError(reason)
    with _open_existing(a) as m:
        rep = m.check(repair=a.repair)
    out = {"ok": rep.ok, "problems": [p.__dict__ for p in rep.problems], "repaired": [p.__dict__ for p in rep.repaired],
           "counts": rep.counts}
    if a.json:
        _out(out)
    else:
        for p in rep.repaired:
            print(f"repaired  {p.part}: {p.detail}")
        for p in rep.problems:
            print(f"PROBLEM   {p.part}: {p.detail}" + ("" if p.repairable else " (not repairable: restore a backup)"))
        pending = rep.counts.get("pending", 0)
        note = f" ({pending} memories pending: not derived yet, derived by the next process with the models)" \
            if pending else ""
        print(("ok" + note) if rep.ok else f"{len(rep.problems)} problem(s); run with --repair" if not a.repair
              else "problems remain")
    return 0 if rep.ok else 1


def cmd_export(a) -> int:
    with _open_existing(a) as m:
        n = m.export_jsonl(a.out, scope=a.scope, vectors=a.vectors)
    print(f"exported {n} lines", file=sys.stderr)
    return 0


def cmd_import(a) -> int:
    with _open(a) as m:
        n = m.import_jsonl(a.file, progress=None if not a.quiet else False)
    print(f"imported {n} memories", file=sys.stderr)
    return 0


def cmd_hermes(a) -> int:
    from .hermes import install as I

    if a.action == "install":
        out = I.install(a.hermes_home, import_facts=not a.no_import)
        t0 = time.perf_counter()
        from . import kernels

        kernels.warmup()  # hermes' first turn then loads compiled kernels instead of compiling them
        out["warmup_s"] = round(time.perf_counter() - t0, 2)
        if a.json:
            _out(out)
        else:
            print(f"installed {out['plugin_dir']} (store: {out['db_path']}; holographic facts imported: "
                  f"{out['imported']}; kernels compiled in {out['warmup_s']} s)")
            print(f"now set in {out['config_path']}:\n" + out["config"])
    else:
        gone = I.uninstall(a.hermes_home)
        home = I.C.hermes_home(a.hermes_home)
        store = I.C.db_path(I.settings(home), home)
        if a.json:
            _out({"removed": gone, "store": str(store), "store_exists": store.exists()})
            return 0
        print("removed the fastmem plugin folder" if gone else "not installed")
        print(f"the store is kept: {store}" + ("" if store.exists() else " (not written yet)"))
        print(f"hermes now needs another memory provider: in {home / 'config.yaml'} set memory.provider "
              "(for example `provider: holographic`) or remove the memory section")
    return 0


def cmd_mcp(a) -> int:
    try:
        from . import mcp_server
    except ImportError as exc:
        raise UsageError(f"fastmem mcp: {exc}") from None
    if a.transport == "http" and a.host not in mcp_server.LOCAL_HOSTS and not a.allow_remote:
        raise UsageError(f"fastmem mcp: --host {a.host} exposes the memory to the network without "
                         "authentication; add --allow-remote if that is what you want")
    mcp_server.serve(_db(a), transport=a.transport, host=a.host, port=a.port, scope=a.scope,
                     read_only=a.read_only, allow_remote=a.allow_remote)
    return 0


def cmd_warmup(a) -> int:
    """Compile the kernels into the persistent cache and, unless --no-models, load the models once."""
    import fastmem
    from .kernels.hrr import cache_dir

    t0 = time.perf_counter()
    fastmem.warmup(static=a.static)
    t1 = time.perf_counter()
    if not a.no_models:
        fastmem.warmup(models=True)
    t2 = time.perf_counter()
    summary = {"kernel_cache": cache_dir(), "kernels_s": round(t1 - t0, 2),
               "models_s": None if a.no_models else round(t2 - t1, 2)}
    if a.json:
        _out(summary)
    else:
        print(f"kernels ready in {summary['kernels_s']} s (cache: {summary['kernel_cache']})"
              + ("" if a.no_models else f"; models loaded in {summary['models_s']} s"))
    return 0


def cmd_bench(a) -> int:
    from . import benchmark as B

    sizes = [B.parse_size(s) for s in a.size.split(",")]
    res = B.run(sizes, queries=a.queries, cache=a.cache)
    if a.json_file:
        with open(a.json_file, "w") as f:
            json.dump(res, f, indent=2)
    if a.plot:
        B.plot(res, a.plot)
    print(B.table(res))
    return 0


def _slot_table(rep: dict, head: str) -> None:
    """The analogy slot's figures of each method in ``rep``, one line each."""
    print(f"{head:44s} {'fire':>6s} {'prec':>6s} {'strict':>6s} {'distr':>6s} {'hit':>6s}")
    for name, r in rep.items():
        if isinstance(r, dict) and "fire" in r:
            print(f"{name:44s} {r['fire']:6.3f} {r['precision']:6.3f} {r['precision_strict']:6.3f} "
                  f"{r['distractor']:6.3f} {r['hit']:6.3f}")


def cmd_eval(a) -> int:
    if a.dataset == "locomo":
        from .evaluate import locomo as L

        if not L.conversation_files(a.path):
            raise FileNotFoundError(f"no LoCoMo conversation files at {a.path}")
        res = L.evaluate_all(a.path, fusion=a.fusion, writes=a.writes,
                             memory_kw={"embedder": a.embedder} if a.embedder else None)
        if a.json:
            _out(res)
        else:
            for name, r in res.items():
                print(f"\n{name} ({r['fused']['questions']} questions)\n{L.table(r)}")
    else:
        from .evaluate import proparalogy as P

        if a.cv == 1 or a.cv < 0:
            raise UsageError("fastmem eval: --cv needs at least 2 folds")
        if a.fit or (a.cv and a.ranker):
            out = None
            if a.fit:
                from . import ranker

                out = a.out or os.path.join(os.path.dirname(ranker.__file__), "ranker_weights.py")
            rep = P.fit(a.path, folds=a.cv or 5, out=out)
            if rep is None:
                raise FileNotFoundError(f"no ProPara-Logy silver CSV at {a.path}")
            if a.mc:
                rep["multiple choice"] = P.multiple_choice(a.path)
            if a.json:
                _out(rep)
            else:
                _slot_table(rep, f"slot, {rep['folds']}-fold cv by process")
                print(f"target above its own distractor in the ranker's probability: "
                      f"{rep['learned (cv)']['target_beats_distractor']:.3f}")
                if a.mc:
                    _print_mc(rep["multiple choice"])
                if out:
                    print(f"ranker written to {out}")
            return 0
        rep = P.run(a.path, baselines=not a.no_baselines, connectives=not a.no_connectives, folds=a.cv or None,
                    memory_kw={"analogy_ranker": True} if a.ranker else None)
        if rep is None:
            raise FileNotFoundError(f"no ProPara-Logy silver CSV at {a.path}")
        if a.mc:
            rep["multiple choice"] = P.multiple_choice(a.path)
        if a.json:
            _out(rep)
        else:
            _slot_table(rep, "method" + (" (connectives removed)" if a.no_connectives else ""))
            f = rep["fastmem"]
            print(f"target outranks its own distractor: {f['target_beats_distractor']:.3f} of rows in the slot's order "
                  f"(score ties {f['ties']:.3f}, broken by the stage-1 alignment, {f['ties_left']:.3f} left), "
                  f"{f['target_beats_distractor_similarity']:.3f} in structural_similarity")
            if a.mc:
                _print_mc(rep["multiple choice"])
    return 0


def _print_mc(mc: dict) -> None:
    print(f"multiple choice: structural_similarity {mc['structural_similarity']:.3f}, "
          f"MiniLM cosine {mc['MiniLM cosine']:.3f} (chance 0.25)")


# -- parser --------------------------------------------------------------------------------
def _common(defaults: bool) -> argparse.ArgumentParser:
    """The options every command takes, before or after its name. The command's own copies
    default to nothing (``argparse.SUPPRESS``), so ``fastmem --json stats`` keeps the ``--json``
    given before the command instead of the command's default overwriting it."""
    d = (lambda v: v) if defaults else (lambda v: argparse.SUPPRESS)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", default=d(None), help="the store file (default: $FASTMEM_DB)")
    common.add_argument("--json", action="store_true", default=d(False), help="machine-readable output")
    common.add_argument("--debug", action="store_true", default=d(False), help="show tracebacks")
    common.add_argument("--quiet", action="store_true", default=d(False), help="no progress bars")
    common.add_argument("--embedder", default=d(None), choices=["minilm", "minilm-int8", "static"],
                        help="the embedding model of a new store (an existing one keeps its own): MiniLM "
                             "(default), MiniLM with int8 weights (faster, not the model's vectors) or static, "
                             "MiniLM distilled by model2vec (fastmem[static])")
    return common


def _parser() -> argparse.ArgumentParser:
    common = _common(defaults=False)
    ap = _Parser(prog="fastmem", description="Fast local memory for AI agents: one SQLite file, hybrid recall, "
                                             "a knowledge graph and an analogy slot.", parents=[_common(defaults=True)])
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    def add(name, fn, help, **kw):
        p = sub.add_parser(name, help=help, description=help, parents=[common], **kw)
        p.set_defaults(fn=fn)
        return p

    add.common = common

    for commands in (_writing_commands, _reading_commands, _store_commands, _tool_commands):
        commands(add)
    return ap


def _writing_commands(add) -> None:
    """Commands that write memories."""
    add("demo", cmd_demo, "store a few memories (embedded default store) and show what recall finds and why")
    p = add("warmup", cmd_warmup, "compile the kernels once for this install (a persistent cache) and load the models")
    p.add_argument("--no-models", action="store_true", help="only the kernels")
    p.add_argument("--static", action="store_true", help="also distil the static embedder (fastmem[static])")
    p = add("remember", cmd_remember, "store texts (arguments, or one per line on standard input)")
    p.add_argument("texts", nargs="*")
    p.add_argument("--scope", default="")
    p.add_argument("--source", default=None)
    p.add_argument("--at", default=None, help="when it happened (ISO 8601)")
    p.add_argument("--speaker", default=None, help="who said or wrote it")
    p.add_argument("--meta", default=None, help="JSON object stored with each memory")
    p.add_argument("--no-extract", action="store_true", help="no parsing: no facts, no structure")
    p = add("ingest", cmd_ingest, "store memories from text files (a line or paragraph each) or JSONL, or - for stdin")
    p.add_argument("files", nargs="+")
    p.add_argument("--format", default="auto", choices=["auto", "lines", "paragraphs", "jsonl"])
    p.add_argument("--scope", default="")
    p.add_argument("--source", default=None)
    p.add_argument("--speaker", default=None, help="who said or wrote it (a JSONL item's own \"speaker\" wins)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--no-extract", action="store_true", help="no parsing: no facts, no structure")
    p.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help="derive on a Ray cluster (the running one, a new local one, or ADDRESS); needs fastmem[ray]")
    p.add_argument("--shard-by", choices=["scope"], default=None,
                   help="with --ray: one store file per scope under the folder --db names")

def _reading_commands(add) -> None:
    """Commands that read: recall, analogies, the graph."""
    p = add("recall", cmd_recall, "recall memories for a query")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--scope", default=None)
    p.add_argument("--channels", default=None, help="comma-separated subset of keyword,vector,graph")
    p.add_argument("--no-analogy", action="store_true")
    p.add_argument("--no-record", action="store_true", help="do not count this recall in the usage ledger")
    p = add("analogies", cmd_analogies, "memories with the same structure as a text")
    p.add_argument("text")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--scope", default=None)
    p.add_argument("--z-min", type=float, default=0.0)
    p = add("graph", cmd_graph, "the knowledge graph: an entity and its facts, its neighbours, or a path")
    p.add_argument("action", choices=["entity", "neighbours", "path"])
    p.add_argument("name")
    p.add_argument("other", nargs="?")
    p.add_argument("--depth", type=int, default=1, choices=[1, 2])
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--scope", default=None)

def _store_commands(add) -> None:
    """Commands on the store as a whole."""
    add("stats", cmd_stats, "counts, bytes, model, dimensions and schema version")
    p = add("forget", cmd_forget, "delete memories by id")
    p.add_argument("ids", nargs="+", type=int)
    p = add("consolidate", cmd_consolidate, "compress co-occurring memories into chunks (members kept)")
    p.add_argument("--scope", default=None)
    p = add("expand", cmd_expand, "the members of a chunk")
    p.add_argument("chunk_id", type=int)
    p = add("dissolve", cmd_dissolve, "undo a chunk completely")
    p.add_argument("chunk_id", type=int)
    p = add("categories", cmd_categories, "emergent categories: list, propose, approve, reject, revert")
    p.add_argument("action", choices=["list", "propose", "approve", "reject", "revert"])
    p.add_argument("id", nargs="?", type=int)
    p.add_argument("--status", default=None, choices=["proposed", "approved", "rejected"])
    p.add_argument("--scope", default=None)
    p = add("reembed", cmd_reembed, "recompute every vector with the default model and rebuild the index")
    p.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help="embed on a Ray cluster (the running one, a new local one, or ADDRESS); needs fastmem[ray]")
    p = add("check", cmd_check, "verify the file and every derived structure (exit 1 on problems)")
    p.add_argument("--repair", action="store_true", help="rebuild what can be rebuilt")
    p = add("export", cmd_export, "write everything needed to rebuild the store as JSONL")
    p.add_argument("--out", default="-", help="file (default: standard output)")
    p.add_argument("--scope", default=None)
    p.add_argument("--vectors", action="store_true", help="include the embeddings (no model run on import)")
    p = add("import", cmd_import, "rebuild memories from an export")
    p.add_argument("file")

def _tool_commands(add) -> None:
    """The hermes installer, the bench and the evaluations."""
    p = add("hermes", cmd_hermes, "install or remove the hermes-agent memory provider")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    inst = acts.add_parser("install", parents=[add.common], help="install the provider plugin into a hermes home",
                           description="write $HERMES_HOME/plugins/fastmem/, copy the holographic provider's facts "
                                       "once, compile the kernels, and print the config line that switches to it")
    inst.add_argument("--hermes-home", default=None, help="the hermes home (default: hermes' own, $HERMES_HOME, "
                                                          "~/.hermes)")
    inst.add_argument("--no-import", action="store_true", help="do not copy the holographic provider's facts")
    rm = acts.add_parser("uninstall", parents=[add.common], help="remove the provider plugin (the store is kept)",
                         description="remove $HERMES_HOME/plugins/fastmem/; the store stays where it is and is named")
    rm.add_argument("--hermes-home", default=None, help="the hermes home (default as for install)")
    p = add("mcp", cmd_mcp, "serve the store to MCP clients (Claude Desktop, Cursor, agent frameworks); "
                            "needs fastmem[mcp]")
    p.add_argument("--transport", default="stdio", choices=["stdio", "http"],
                   help="stdio (the client starts the server) or streamable HTTP")
    p.add_argument("--host", default="127.0.0.1", help="http: address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="http: port (default 8765)")
    p.add_argument("--scope", default=None, help="serve one tenant: every tool reads and writes this scope only")
    p.add_argument("--read-only", action="store_true", help="offer no tool that writes; recalls are not recorded")
    p.add_argument("--allow-remote", action="store_true", help="http: allow binding an address other than localhost")
    p = add("bench", cmd_bench, "latency of ingest and of each recall stage against store size")
    p.add_argument("--size", default="1k,10k", help="comma-separated sizes, e.g. 1k,10k,100k")
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--json-file", "--json-out", dest="json_file", default=None, help="write the results as JSON")
    p.add_argument("--plot", default=None, help="draw latency against size (PNG; needs fastmem[plot])")
    p.add_argument("--cache", default=None, help="folder for the built stores (default: a temporary one)")
    p = add("eval", cmd_eval, "quality on public data: LoCoMo recall or ProPara-Logy analogies")
    p.add_argument("dataset", choices=["locomo", "proparalogy"])
    p.add_argument("path", help="a LoCoMo JSON file or folder / the ProPara-Logy silver CSV or its folder")
    p.add_argument("--fusion", default="score", choices=["score", "rrf"])
    p.add_argument("--no-baselines", action="store_true")
    p.add_argument("--mc", action="store_true", help="proparalogy: also the four-way multiple choice")
    p.add_argument("--no-connectives", action="store_true",
                   help="proparalogy: remove the sequence connectives (after, then, finally...) from every paragraph "
                        "and turn (the set's distractors carry them, its targets rarely)")
    p.add_argument("--ranker", action="store_true", help="proparalogy: the slot with the learned ranker")
    p.add_argument("--cv", type=int, default=0, metavar="N",
                   help="proparalogy: the slot's figures as means over N folds grouped by source process (with "
                        "--ranker: the learned ranker cross-validated, refitted per fold)")
    p.add_argument("--fit", action="store_true",
                   help="proparalogy: also fit the ranker on every row and write it (default: the installed "
                        "fastmem/ranker_weights.py)")
    p.add_argument("--out", default=None, help="with --fit: where to write the ranker instead")
    p.add_argument("--writes", default="full", choices=["full", "context", "plain", "single"],
                   help="locomo: what each turn is written with besides its text: source, at and speaker "
                        "(full), source and at (context), nothing (plain; single: nothing, and one remember "
                        "call per turn)")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    debug = "--debug" in argv
    try:
        a = _parser().parse_args(argv)
        return a.fn(a)
    except UsageError as exc:
        print(f"{exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fastmem: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # one readable line, never a traceback (unless --debug)
        if debug:
            raise
        msg = str(exc).splitlines()[0] if str(exc) else ""
        if isinstance(exc, FileNotFoundError) and exc.filename and not msg.startswith("no "):
            msg = f"no such file: {exc.filename}"
        print(f"fastmem: error: {type(exc).__name__}: {msg} (--debug shows the traceback)", file=sys.stderr)
        return 1


def run() -> None:
    """The ``fastmem`` command: :func:`main`, then exit without the interpreter's teardown
    (freeing every module and object one by one: about 0.2 s after a recall, a tenth of the
    command) when nothing is left to finish: no thread but daemons, output flushed, exit
    handlers run. Otherwise, or when ``FASTMEM_FULL_EXIT=1``, the usual exit."""
    rc = main()
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if others or os.environ.get("FASTMEM_FULL_EXIT") == "1":
        raise SystemExit(rc)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # a closed pipe: nothing more can be written anyway
        pass
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None:  # not CPython: the usual exit
        raise SystemExit(rc)
    run_exit_handlers()
    os._exit(rc)


if __name__ == "__main__":
    run()
