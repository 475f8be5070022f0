"""The README's "Look inside" screenshots: ``fastmem ui`` on a store made from one real
conversation (LoCoMo dev), taken in Debian's chromium through Playwright, and what each page
cost to render.

    python docs/screenshots.py [--conversation ../shared/data/locomo-dev/26.json] [--out docs]

Recall is shot three times: a turn with an analogy (the card in words), a turn without one
(why not), and chit-chat (the evidence floor's verdict).

The conversation's turns are written with their session time, speaker and source; the other
dev conversation is then played against it as a host would (each turn recalled in a session,
the next turn observed, so use counters move by the ledger's own rules) until a turn brings an
analogy, which the Recall screenshot shows; then the background passes run (chunks and
category proposals for the Review page).
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
                m.observe(after, session="screenshots")
                if r.analogy is not None and query is None:
                    query = q
                if r.analogy is None and silent is None and r.hits and len(q) > 60:
                    silent = q
            m.consolidate(progress=False)
            m.propose_categories()
            hit = m.recall(query or asks[0], k=5, record=False)
            shown = (hit.analogy or hit.hits[0]).id
            facts = m.facts(shown)
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
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
