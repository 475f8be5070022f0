"""Memory footprint: the peak resident memory of new processes, as users start them.

    python bench/footprint.py [--runs 3]

* ``hermes chat -q`` three times in a row on one hermes home (the first writes a new store,
  the next ones derive what the earlier left pending), with the fastmem provider and without
  a memory provider, against a loopback model stub;
* a process that opens a 300-memory store and recalls once, and one that also writes a turn.

Peaks are ``/usr/bin/time -f %M`` (the kernel's high-water mark of the process). Prints which
of Numba, ONNX Runtime, spaCy and torch each process loaded.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

PROBE = ("import sys; print('loaded:', ' '.join(m for m in ('numba', 'onnxruntime', 'spacy', 'torch') "
         "if m in sys.modules))")


def _peak(cmd: list[str], env: dict) -> tuple[float, str]:
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M", *cmd], capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    secs, kb = out.stderr.strip().splitlines()[-1].split()
    print(f"  ({float(secs):.1f} s)", end="")
    return int(kb) / 1024, out.stdout.strip().splitlines()[-1] if out.stdout else ""


def hermes(provider: str | None, runs: int) -> list[float]:
    from fastmem.hermes import install as I
    from tests.openai_stub import Stub

    exe = str(Path(sys.executable).with_name("hermes"))
    home = Path(tempfile.mkdtemp()) / "hermes"
    home.mkdir()
    if provider:
        I.install(home, import_facts=False)
    asks = ["My flight to Oslo leaves Friday at 7:40.", "My sister Ana moved to Madrid in June.",
            "Where am I flying on Friday?"]
    with Stub(lambda req: {"content": "Noted."}) as stub:
        cfg = (f"memory:\n  provider: {provider}\n" if provider else "") + (
            f"model:\n  provider: custom\n  base_url: {stub.url}\n  default: stub\n  api_key: sk-test\n")
        (home / "config.yaml").write_text(cfg)
        env = {**os.environ, "HERMES_HOME": str(home), "HF_HUB_OFFLINE": "1"}
        return [_peak([exe, "chat", "-Q", "-q", asks[i % len(asks)]], env)[0] for i in range(runs)]


def store_process(write: bool) -> tuple[float, str]:
    import fastmem
    from fastmem.evaluate import bench as B

    path = os.path.join(tempfile.mkdtemp(), "s.db")
    with fastmem.Memory(path, progress=False) as m:
        m.remember_many(B.texts(300), progress=False)
    code = ("import fastmem\n"
            f"with fastmem.Memory({path!r}) as m:\n"
            + ("    m.remember('My flight to Oslo leaves Friday at 7:40.')\n" if write else "")
            + "    m.recall('Who is planning a trip to Porto?')\n" + PROBE + "\n")
    return _peak([sys.executable, "-c", code], {**os.environ, "HF_HUB_OFFLINE": "1"})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    print("hermes chat -q, no memory provider:", [round(x) for x in hermes(None, a.runs)], "MB")
    print("hermes chat -q, fastmem provider:  ", [round(x) for x in hermes("fastmem", a.runs)], "MB")
    for write in (False, True):
        mb, loaded = store_process(write)
        print(f"open a 300-memory store, {'write a turn, ' if write else ''}recall once: {mb:.0f} MB; {loaded}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
