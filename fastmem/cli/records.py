"""Commands on memories and the store: demo, remember, ingest, recall, analogies, graph, stats,
forget, chunks, categories, reembed, check, export and import."""

from __future__ import annotations

import json
import os
import sys
import time

from ..results import shown_mood
from .common import NothingFound, UsageError, _db, _hit, _open, _open_existing, _out, _print_recall, _recall_json
from .demo import DEMO, DEMO_QUERIES


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
    from ..util.progress import bar
    from ..write.items import read_items

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
    from .. import distributed

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
    if m.pending.count():
        m.pending.derive()


def cmd_recall(a) -> int:
    """The library's recall (``Memory.recall``, every channel, its defaults); looking only,
    unless ``--record``. Nothing found: why on standard error, exit 3."""
    chans = {"channels": tuple(c.strip() for c in a.channels.split(","))} if a.channels else {}
    with _open_existing(a) as m:
        _finish_pending(m)
        res = m.recall(a.query, k=a.k, scope=a.scope, analogy=not a.no_analogy, record=a.record, floor=a.floor,
                       session=a.session, **chans)
    if a.json:
        _out(_recall_json(res))
    else:
        _print_recall(res)
    if not res.hits and res.analogy is None:
        why = ("nothing stands above chance for this query (the evidence floor)" if a.floor and res.grounding
               else "no memory matches this query" + (f" in scope {a.scope!r}" if a.scope is not None else ""))
        raise NothingFound(why)
    return 0


def cmd_analogies(a) -> int:
    with _open_existing(a) as m:
        _finish_pending(m)
        got = m.analogy.explore(a.text, k=a.k, scope=a.scope, z_min=a.z_min)
        why = "" if got else m.recall(a.text, k=1, scope=a.scope, record=False, z_min=a.z_min).analogy_reason
    if a.json:
        _out([_hit(x) for x in got])
    else:
        for x in got:
            print(f"[{x.id}] z={x.why['z']:.2f} surface={x.why['surface']:.2f}  {x.text}\n     shared: {', '.join(x.why['matched'])}")
    if not got:
        raise NothingFound(f"no memory has this structure: {why}" if why else "no memory has this structure")
    return 0


def cmd_graph(a) -> int:
    if a.action == "path" and not a.other:
        raise UsageError("fastmem graph path: give two entities: fastmem graph path A B")
    with _open_existing(a) as m:
        if a.action == "entity":
            out = [{"id": e.id, "name": e.name, "type": e.type, "aliases": e.aliases,
                    "facts": [_fact(f) for f in m.graph.facts_about(e.id, limit=a.limit, scope=a.scope)]}
                   for e in m.graph.entity(a.name, scope=a.scope)]
        elif a.action == "neighbours":
            out = [{"name": e.name, "type": e.type, "distance": d} for e, d in m.graph.neighbours(a.name, depth=a.depth, scope=a.scope)]
        else:
            path = m.graph.path(a.name, a.other, scope=a.scope)
            out = None if path is None else [_fact(f) for f in path]
    if a.json:
        _out(out)
    elif a.action == "entity":
        for e in out:
            print(f"{e['name']} ({e['type']}; aliases: {', '.join(e['aliases'])})")
            for f in e["facts"]:
                shown = shown_mood(f["relation"], f["mood"])
                mood = f" ({shown})" if shown else ""
                rest = f" {f['detail']}" if f["detail"] else ""
                print(f"   {f['subject']} -{f['relation']}-> {f['object']}{rest}{mood}   [memory {f['memory_id']}]")
    elif a.action == "neighbours":
        for x in out:
            print(f"{x['distance']}  {x['name']} ({x['type']})")
    elif out is not None:
        print("\n".join(f"{f['subject']} -{f['relation']}-> {f['object']}" for f in out))
    if a.action == "path" and out is None:
        raise NothingFound(f"no path between {a.name!r} and {a.other!r} (within the search depth)")
    if not out:
        raise NothingFound(f"no entity named {a.name!r}" if a.action == "entity" else f"{a.name!r} has no neighbours")
    return 0


def _fact(f) -> dict:
    return {"subject": f.subject, "relation": f.relation, "object": f.object, "memory_id": f.memory_id, "mood": f.mood,
            "detail": f.detail}


def cmd_stats(a) -> int:
    import fastmem

    path = _db(a)
    with _open_existing(a) as m:
        st = m.admin.stats()
        size = lambda p: os.path.getsize(p) if os.path.exists(p) else 0  # noqa: E731
        out = {
            "path": os.path.abspath(path),
            **{k: st[k] for k in ("memories", "scopes", "pending", "entities", "facts", "codes", "chunks",
                                  "categories")},
            "bytes": {"db": size(path), "wal": size(path + "-wal"), "index": size(path + ".hnsw"),
                      "terms": size(path + ".terms")},
            "model": st["model"], "dimensions": st["dimensions"], "hrr_dim": st["hrr_dim"],
            "schema_version": st["schema_version"], "schema_supported": fastmem.SCHEMA_VERSION,
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
        m.chunks.dissolve(a.chunk_id)
    print(f"dissolved chunk {a.chunk_id}", file=sys.stderr)
    return 0


def cmd_categories(a) -> int:
    if a.action not in ("list", "propose") and a.id is None:
        raise UsageError(f"fastmem categories {a.action}: give the category id")
    with _open_existing(a) as m:
        if a.action == "list":
            got = m.categories.list(a.status)
        elif a.action == "propose":
            got = m.categories.propose(scope=a.scope)
        else:
            got = [getattr(m.categories, a.action)(a.id)]
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
        from .. import distributed

        n = distributed.reembed(_db(a), address=_ray_address(a), progress=None if not a.quiet else False)
        print(f"re-embedded {n} memories through Ray", file=sys.stderr)
        return 0
    with _open_existing(a, reembed=True) as m:
        m.admin.reembed(progress=None if not a.quiet else False)
        n = len(m)
    print(f"re-embedded {n} memories", file=sys.stderr)
    return 0


def cmd_check(a) -> int:
    import fastmem

    path = _db(a)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no store at {path}")
    reason = fastmem.probe(path)
    if reason:
        raise RuntimeError(reason)
    with _open_existing(a) as m:
        rep = m.admin.check(repair=a.repair)
    out = {"ok": rep.ok, "problems": [p.__dict__ for p in rep.problems], "repaired": [p.__dict__ for p in rep.repaired],
           "counts": rep.counts, "failed": [f.__dict__ for f in rep.failed]}
    if a.json:
        _out(out)
    else:
        for p in rep.repaired:
            print(f"repaired  {p.part}: {p.detail}")
        for p in rep.problems:
            print(f"PROBLEM   {p.part}: {p.detail}" + ("" if p.repairable else " (not repairable: restore a backup)"))
        for f in rep.failed:
            print(f"failed    m{f.memory_id} {f.part}: {f.error}: {f.message[:120]} ({f.reader})")
        if rep.failed:
            print(f"{rep.counts['failed']} memories stored without a part that could not be derived (listed above); "
                  "--repair derives them again")
        pending = rep.counts.get("pending", 0)
        note = f" ({pending} memories pending: not derived yet, derived by the next process with the models)" \
            if pending else ""
        print(("ok" + note) if rep.ok else f"{len(rep.problems)} problem(s); run with --repair" if not a.repair
              else "problems remain")
    return 0 if rep.ok else 1


def cmd_export(a) -> int:
    with _open_existing(a) as m:
        n = m.admin.export_jsonl(a.out, scope=a.scope, vectors=a.vectors)
    print(f"exported {n} lines", file=sys.stderr)
    return 0


def cmd_import(a) -> int:
    with _open(a) as m:
        n = m.admin.import_jsonl(a.file, progress=None if not a.quiet else False)
    print(f"imported {n} memories", file=sys.stderr)
    return 0
