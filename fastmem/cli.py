"""The ``fastmem`` command line: a demo, remember, recall and stats on a store file."""

from __future__ import annotations

import argparse
import json
import os
import sys

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


def _print_recall(res) -> None:
    print(f"\n> {res.query}")
    for h in res.hits:
        chans = ", ".join(f"{c} #{v['rank']}" for c, v in h.why.items() if c != "use")
        print(f"  [{h.id}] {h.score:.4f}  {h.text}    ({chans}; use x{h.why['use']['weight']:.2f})")
    if res.analogy is not None:
        a = res.analogy
        print(f"  analogy [{a.id}] {a.text}")
        print(f"     z={a.why['z']:.2f} structural={a.why['structural']:.3f} surface={a.why['surface']:.2f} "
              f"matched: {', '.join(a.why['matched'])}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="fastmem", description="Fast local memory for AI agents.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="build a small store, recall, and show what was found and why")
    d.add_argument("--db", default="fastmem-demo.db")
    r = sub.add_parser("remember", help="store texts (arguments, or one per line on stdin)")
    r.add_argument("--db", required=True)
    r.add_argument("--scope", default="")
    r.add_argument("texts", nargs="*")
    q = sub.add_parser("recall", help="recall memories for a query")
    q.add_argument("--db", required=True)
    q.add_argument("--scope", default=None)
    q.add_argument("-k", type=int, default=5)
    q.add_argument("--json", action="store_true", help="print JSON")
    q.add_argument("query")
    s = sub.add_parser("stats", help="counts of memories, entities, facts and codes")
    s.add_argument("--db", required=True)
    h = sub.add_parser("hermes", help="install or remove the hermes-agent memory provider")
    h.add_argument("action", choices=["install", "uninstall"])
    h.add_argument("--hermes-home", default=None)
    h.add_argument("--no-import", action="store_true", help="do not copy the holographic provider's facts")
    a = ap.parse_args(argv)

    if a.cmd == "hermes":
        from .hermes import install as I

        if a.action == "install":
            out = I.install(a.hermes_home, import_facts=not a.no_import)
            print(f"installed {out['plugin_dir']} (store: {out['db_path']}; facts imported: {out['imported']})")
            print("now add to config.yaml:\n" + out["config"])
        else:
            print("removed" if I.uninstall(a.hermes_home) else "not installed")
        return 0

    import fastmem

    if a.cmd == "demo":
        fresh = not os.path.exists(a.db)
        with fastmem.Memory(a.db) as m:
            if fresh or len(m) == 0:
                m.remember_many(DEMO, scope="demo")
                print(f"stored {len(DEMO)} memories in {a.db}")
            for text in DEMO_QUERIES:
                _print_recall(m.recall(text, k=3, scope="demo", record=False))
        return 0
    if a.cmd == "remember":
        texts = a.texts or [line.rstrip("\n") for line in sys.stdin if line.strip()]
        with fastmem.Memory(a.db) as m:
            ids = m.remember_many(texts, scope=a.scope)
        print(json.dumps(ids))
        return 0
    if a.cmd == "recall":
        with fastmem.Memory(a.db) as m:
            res = m.recall(a.query, k=a.k, scope=a.scope)
        if a.json:
            out = {"hits": [{"id": h.id, "text": h.text, "score": h.score, "why": h.why} for h in res.hits],
                   "analogy": None if res.analogy is None else {"id": res.analogy.id, "text": res.analogy.text, "why": res.analogy.why}}
            print(json.dumps(out, indent=2, default=float))
        else:
            _print_recall(res)
        return 0
    if a.cmd == "stats":
        with fastmem.Memory(a.db) as m:
            db = m.db
            n = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("memories", "nodes", "edges", "codes")}
        print(json.dumps(n))
        return 0
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
