"""The README's "Look inside" screenshots: ``fastmem ui`` on a store made from one real
conversation (LoCoMo dev), taken in Debian's chromium through Playwright, and what each page
cost to render.

    python docs/screenshots.py [--conversation ../shared/data/locomo-dev/26.json] [--out docs]

Recall is shot four times: a turn of the other conversation (its hits), a turn without an
analogy (why not), chit-chat (the evidence floor's verdict), and an analogy (the card in words).

The conversation's turns are written with their session time, speaker and source; the other
dev conversation is then played against it as a host would (each turn recalled in a session,
the next turn observed, so use counters move by the ledger's own rules); then the background
passes run (chunks and category proposals for the Review page).

The slot is silent on ordinary chat, so the analogy is shot on a second store
where it speaks: the ProPara-Logy silver paragraphs (``--analogies``; every target, distractor
and random paragraph, as ``fastmem eval proparalogy`` stores them), each source paragraph
recalled in file order until the slot offers a target of the same source process told in
another domain (the data set's own label, the first such pick: an example, not a figure; the
figures are in the README's quality table).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data = os.path.join(ROOT, "..", "shared", "data", "locomo-dev")
    ap.add_argument("--conversation", default=os.path.join(data, "26.json"))
    ap.add_argument("--questions", default=os.path.join(data, "30.json"))
    ap.add_argument("--analogies", default=os.path.join(data, "..", "proparalogy-silver"))
    ap.add_argument("--out", default=HERE)
    a = ap.parse_args()

    from playwright.sync_api import sync_playwright

    import fastmem
    from fastmem.evaluate.locomo import session_date, turns
    from fastmem.ui import create_app
    from tests.hosts.test_ui import _chromium, _Server

    with open(a.conversation) as fh:
        rows = list(turns(json.load(fh)))
    with open(a.questions) as fh:
        asks = [r[1].split(": ", 1)[1] for r in turns(json.load(fh))]
    work = tempfile.mkdtemp()
    try:
        with fastmem.Memory(os.path.join(work, "locomo.db")) as m:
            m.remember_many([r[1] for r in rows], at=[session_date(r[2]) for r in rows], speaker=[r[3] for r in rows],
                            source=os.path.basename(a.conversation), progress=False)
            query = silent = None
            for q, after in zip(asks[:300], asks[1:301]):
                r = m.recall(q, k=5, session="screenshots")
                m.host.observe(after, session="screenshots")
                if query is None and len(q) > 60 and r.hits:
                    query = q
                if r.analogy is None and silent is None and r.hits and len(q) > 60 and q != query:
                    silent = q
            m.consolidate(progress=False)
            m.categories.propose()
            hit = m.recall(query or asks[0], k=5, record=False)
            shown = (hit.analogy or hit.hits[0]).id
            facts = m.graph.facts(shown)
            entity = facts[-1].object if facts else "Caroline"
            with _Server(create_app(m)) as url, sync_playwright() as p:
                browser = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                costs = {}
                from urllib.parse import quote

                for name, path in (("home", "/"), ("recall", "/recall?k=5&q=" + quote(query or asks[0])),
                                   ("recall-none", "/recall?k=5&q=" + quote(silent or asks[1])),
                                   ("recall-chat", "/recall?k=5&q=" + quote("haha ok, thanks so much!")),
                                   ("memory", f"/memory/{shown}"), ("graph", "/graph?name=" + quote(entity)),
                                   ("review", "/review"), ("use", "/use"), ("health", "/health?check=1")):
                    resp = page.goto(url + path)
                    costs[name] = resp.headers.get("server-timing", "")
                    page.screenshot(path=os.path.join(a.out, f"ui-{name}.png"), full_page=name != "home")
                browser.close()
            print(f"{len(rows)} turns; the recall shown: {query!r}; render costs: {costs}")
        analogy_shot(a.analogies, os.path.join(work, "paragraphs.db"), a.out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def analogy_shot(path: str, db: str, out: str) -> None:
    """``ui-recall-analogy.png``: the Recall page on the silver paragraphs' store, for the first
    source paragraph (file order) whose analogy is a target of its own source process in another
    domain (see the module docstring)."""
    from urllib.parse import quote

    from playwright.sync_api import sync_playwright

    import fastmem
    from fastmem.evaluate.proparalogy import build_memories, load_rows
    from fastmem.ui import create_app
    from tests.hosts.test_ui import _chromium, _Server

    rows = load_rows(path)
    if rows is None:
        print(f"no ProPara-Logy silver set under {path}: no analogy screenshot")
        return
    texts, kind, row_of = build_memories(rows)
    with fastmem.Memory(db) as m:
        ids = m.remember_many(texts, progress=False)
        pos = {mid: i for i, mid in enumerate(ids)}
        tried = 0
        for r in rows:
            if r["source_domain"] == r["target_domain"]:
                continue
            tried += 1
            got = m.recall(r["source_paragraph"], k=5, record=False).analogy
            if got is None:
                continue
            picked = rows[row_of[pos[got.id]]]
            if kind[pos[got.id]] == "target" and picked["source_subject"] == r["source_subject"] \
                    and picked["target_domain"] != r["source_domain"]:
                break
        else:
            print(f"no cross-domain analogy among {tried} source paragraphs: no analogy screenshot")
            return
        with _Server(create_app(m)) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url + "/recall?k=5&q=" + quote(r["source_paragraph"]))
            page.screenshot(path=os.path.join(out, "ui-recall-analogy.png"), full_page=True)
            browser.close()
        print(f"analogy: {r['source_subject']!r} ({r['source_domain']}) -> {picked['target_subject']!r} "
              f"({picked['target_domain']}), cross-domain source {tried} in file order")


if __name__ == "__main__":
    sys.exit(main())
