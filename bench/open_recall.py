"""Open a store and recall once, each run in a fresh process: what a CLI call, a restarted
agent or a new server worker pays before its first answer.

    python bench/open_recall.py PATH [--runs 3] [--cold]

``--cold`` drops the page cache before each run (needs root; the store's pages then come
from disk). Prints, per run, the seconds to open (``fastmem.Memory(PATH)``, import included)
and the seconds of the first recall (models loaded on first use; the analogy slot on), then
the medians. To compare two commits in the same hour, run it from a checkout of each (a git
worktree) with ``PYTHONPATH`` set to that checkout, alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_ONE = """
import json, sys, time
t0 = time.perf_counter()
import fastmem
m = fastmem.Memory(sys.argv[1], progress=False)
t1 = time.perf_counter()
r = m.recall("What did I plan for the weekend trip?", k=10)
t2 = time.perf_counter()
m.close()
print(json.dumps({"open_s": t1 - t0, "first_recall_s": t2 - t1, "hits": len(r.hits)}))
"""


def _drop_caches() -> None:
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cold", action="store_true", help="drop the page cache before each run (root)")
    a = ap.parse_args(argv)
    if not os.path.exists(a.path):
        ap.error(f"no store at {a.path}")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    got = []
    for i in range(a.runs):
        if a.cold:
            _drop_caches()
        out = subprocess.run([sys.executable, "-c", _ONE, a.path], capture_output=True, text=True, env=env)
        if out.returncode:
            sys.stderr.write(out.stderr[-2000:])
            return 1
        row = json.loads(out.stdout.strip().splitlines()[-1])
        got.append(row)
        print(f"run {i + 1}: open {row['open_s']:.2f} s, first recall {row['first_recall_s']:.2f} s", flush=True)
    print(f"median: open {statistics.median(r['open_s'] for r in got):.2f} s, "
          f"first recall {statistics.median(r['first_recall_s'] for r in got):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
