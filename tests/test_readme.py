"""Every Python example of the README runs as written, each in a fresh process, one after the
other in one folder as a reader would run them (the first writes ``agent.db``; the MCP client
example runs against a ``fastmem mcp --transport http`` server it starts), with fastmem's
deprecation warnings as errors."""

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
FASTMEM = Path(sys.executable).with_name("fastmem")


STRICT = "import warnings, fastmem; warnings.simplefilter('error', fastmem.FastmemDeprecationWarning)\n"


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", STRICT + code], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})


def _wait_for_port(port: int, proc: subprocess.Popen, seconds: float = 120.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited: {proc.stderr.read()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on {port}")


def test_the_readme_has_its_examples():
    assert len(EXAMPLES) >= 5 and "fastmem.Memory(" in EXAMPLES[0]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("readme")


@pytest.mark.parametrize("i", range(len(EXAMPLES)))
def test_each_readme_example_runs_as_written(i, folder):
    code, tmp_path = EXAMPLES[i], folder
    server = None
    if "8765/mcp" in code:
        server = subprocess.Popen([str(FASTMEM), "mcp", "--db", "agent.db", "--transport", "http"], cwd=tmp_path,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "HF_HUB_OFFLINE": "1"})
        _wait_for_port(8765, server)
    try:
        out = _run(code, tmp_path)
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
    assert out.returncode == 0, out.stderr[-3000:]
    if "print(" in code:
        assert out.stdout.strip()
