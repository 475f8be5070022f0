"""Native calls that a process exit must not cut in half.

ONNX Runtime and hnswlib (C++ through pybind11) and ``tokenizers`` (Rust) run with the GIL
released. A daemon thread (a host's background embedding, a warm-up) still inside one of them
when the interpreter exits is stopped as it takes the GIL back, by an unwinding that their
frames do not allow: the process aborts ("terminate called without an active exception",
"FATAL: exception not rethrown", exit code 134) after its work is done. Measured on 2 cores:
a daemon thread tokenising or adding to an hnswlib index at exit aborted 3 runs in 6.

So every such call runs inside :func:`native`, which counts it. At exit (an ``atexit``
handler, which runs before daemon threads are stopped) new calls wait forever, which stops
their daemon threads harmlessly at a Python-level wait, and the calls in flight are waited
for, at most :data:`EXIT_WAIT_S` seconds (each is one batch: milliseconds to a second).
"""

from __future__ import annotations

import atexit
import contextlib
import threading

__all__ = ["native", "EXIT_WAIT_S"]

#: Most seconds the exit waits for native calls in flight.
EXIT_WAIT_S = 30.0

_GATE = threading.Condition()
_IN_FLIGHT = 0
_CLOSING = False


@contextlib.contextmanager
def native():
    """Run the body as one counted native call (see the module's docstring)."""
    global _IN_FLIGHT
    with _GATE:
        while _CLOSING:  # the interpreter is exiting: never enter native code again
            _GATE.wait()
        _IN_FLIGHT += 1
    try:
        yield
    finally:
        with _GATE:
            _IN_FLIGHT -= 1
            _GATE.notify_all()


@atexit.register
def _drain() -> None:
    global _CLOSING
    if threading.current_thread() is not threading.main_thread():
        return
    with _GATE:
        _CLOSING = True
        _GATE.wait_for(lambda: _IN_FLIGHT == 0, EXIT_WAIT_S)
