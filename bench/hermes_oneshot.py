"""One-shot ``hermes chat -q`` runs as a user scripts them, with fastmem as the memory provider
and with none, on the same loopback model stub: exit status, tracebacks in hermes' logs, turns
left pending after each run, wall time and peak memory (``/usr/bin/time``).

    python bench/hermes_oneshot.py [--runs 20]

The two homes are used in turns (fastmem, none, fastmem, ...), so a busy machine weighs on both
alike. The first fastmem run starts with an empty kernel cache and a new store, as on a fresh
install; the figures are medians over the runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _home(base: Path, name: str, url: str, provider: bool) -> Path:
    from fastmem.hermes import install as I

    h = base / name
    h.mkdir()
    cfg = f"model:\n  provider: custom\n  base_url: {url}\n  default: stub\n  api_key: sk-test\n"
    if provider:
        I.install(h, import_facts=False)
        cfg = "memory:\n  provider: fastmem\n" + cfg
    (h / "config.yaml").write_text(cfg)
    return h


def _run(hermes: str, home: Path, text: str, cache: str) -> dict:
    env = {**os.environ, "HERMES_HOME": str(home), "NUMBA_CACHE_DIR": cache, "HF_HUB_OFFLINE": "1"}
    t0 = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%M", hermes, "chat", "-Q", "-q", text], capture_output=True,
                         text=True, env=env, timeout=600)
    wall = time.perf_counter() - t0
    peak = int(out.stderr.strip().splitlines()[-1]) / 1024 if out.stderr.strip() else float("nan")
    return {"rc": out.returncode, "wall": wall, "peak_mb": peak}


def _tracebacks(home: Path) -> int:
    n = 0
    for f in (home / "logs").glob("*.log") if (home / "logs").exists() else ():
        text = f.read_text(errors="replace")
        n += text.count("Traceback")
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    from tests.openai_stub import Stub

    import fastmem

    hermes = str(Path(sys.executable).with_name("hermes"))
    base = Path(tempfile.mkdtemp())
    cache = str(base / "kernel-cache")
    rows = {"fastmem": [], "none": []}
    pending = []
    with Stub(lambda req: {"content": "Noted."}) as stub:
        homes = {"fastmem": _home(base, "fastmem", stub.url, True), "none": _home(base, "none", stub.url, False)}
        for i in range(a.runs):
            for name in ("fastmem", "none"):
                rows[name].append(_run(hermes, homes[name], f"My cousin number {i} moved to Oslo and bought a boat.",
                                       cache))
            with fastmem.Memory(str(homes["fastmem"] / "fastmem" / "memory.db"), progress=False) as m:
                pending.append(m.pending.count())
    tb = {name: _tracebacks(h) for name, h in homes.items()}
    with fastmem.Memory(str(homes["fastmem"] / "fastmem" / "memory.db"), progress=False) as m:
        stored = m.count()
    for name, rs in rows.items():
        print(f"{name:8s} runs {len(rs)}  exit codes {sorted({r['rc'] for r in rs})}  tracebacks in logs {tb[name]}  "
              f"wall median {statistics.median(r['wall'] for r in rs):.2f} s, mean {statistics.mean(r['wall'] for r in rs):.2f} "
              f"(max {max(r['wall'] for r in rs):.2f})  "
              f"peak median {statistics.median(r['peak_mb'] for r in rs):.0f} MB")
    added = statistics.median(r["wall"] for r in rows["fastmem"]) - statistics.median(r["wall"] for r in rows["none"])
    mean = statistics.mean(r["wall"] for r in rows["fastmem"]) - statistics.mean(r["wall"] for r in rows["none"])
    print(f"added wall time: medians {added:+.2f} s, means {mean:+.2f} s; turns stored {stored} of {2 * a.runs}; pending after each run "
          f"{pending}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
