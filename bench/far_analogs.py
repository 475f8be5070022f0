"""A far analog planted among real chat: is it offered when its problem is the turn?

    python bench/far_analogs.py [--data ../shared/data] [--split dev|heldout|all]

The store: every turn of the LoCoMo dev conversations (``Speaker: text``, one source per
session, with speakers), and the items of ``tests/data/far_analogs.json`` (written by a helper
who had not seen the slot's rules): for each, a past memory from another domain with the same
relational structure as a problem (``far_analog``) and a memory from the problem's own domain
that shares its words and not its structure (``near``). Each item's ``problem`` is recalled as
the turn; printed: how often the slot offers the item's far analog, its near memory, another
memory, or nothing, with the reason it gave, and how often the chat turns themselves make the
slot speak (the analogy is rare in chat). Skips with a message when the LoCoMo data is missing.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import sys
import tempfile
from pathlib import Path

ITEMS = Path(__file__).resolve().parents[1] / "tests" / "data" / "far_analogs.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--split", default="dev", choices=["dev", "heldout", "all"])
    ap.add_argument("--chat-turns", type=int, default=300, help="chat turns recalled to count the slot's fires")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.data, "locomo-dev", "*.json")))
    if not files:
        print(f"no LoCoMo conversations under {a.data}/locomo-dev: nothing to plant the analogs among")
        return
    import fastmem
    from slot_wild import remember_chat

    items = [it for it in json.loads(ITEMS.read_text())["items"] if a.split == "all" or it["split"] == a.split]
    with tempfile.TemporaryDirectory() as d, fastmem.Memory(os.path.join(d, "far.db")) as m:
        chat = remember_chat(m, files)
        planted = m.remember_many([x for it in items for x in (it["far_analog"], it["near"])], progress=False)
        which = {mid: (it["id"], kind) for mid, (it, kind) in zip(planted, [(it, k) for it in items
                                                                           for k in ("far", "near")])}
        picks: collections.Counter = collections.Counter()
        for it in items:
            r = m.recall(it["problem"], k=5, record=False)
            if r.analogy is None:
                pick = "none"
            else:
                iid, kind = which.get(r.analogy.id, (None, None))
                pick = kind if iid == it["id"] else "other"
            picks[pick] += 1
            why = r.analogy_reason
            got = re.search(r"memory (\d+)", why)
            if got and int(got.group(1)) in which:
                iid, kind = which[int(got.group(1))]
                why += f" [that memory: {'this item' if iid == it['id'] else 'another item'}'s {kind}]"
            print(f"{it['id']} {pick:5s} {why[:200]}")
        step = max(1, len(chat) // a.chat_turns)
        turns = chat[::step][: a.chat_turns]
        fired = sum(m.recall(t, k=5, record=False).analogy is not None for t in turns)
    n = len(items)
    print(f"{a.split}: {n} problems: far analog {picks['far'] / n:.3f}, near {picks['near'] / n:.3f}, "
          f"other {picks['other'] / n:.3f}, none {picks['none'] / n:.3f}; chat turns fired {fired}/{len(turns)}")


if __name__ == "__main__":
    sys.exit(main())
