"""Native calls that a process exit must not cut in half.

ONNX Runtime and hnswlib (C++ through pybind11), ``tokenizers`` and ``safetensors`` (Rust)
and spaCy's parser (Cython over the BLIS library) run with the GIL released. A daemon thread
(a host's background embedding, a warm-up loading the models) still inside one of them when
the interpreter exits is stopped as it takes the GIL back, by an unwinding that their frames
do not allow: the process aborts ("terminate called without an active exception", "FATAL:
exception not rethrown", "libblis: Aborting", exit code 134) after its work is done. Measured
on 2 cores: a daemon thread tokenising or adding to an hnswlib index at exit aborted 3 runs in
6; one parsing with spaCy, 1 run in 6; a one-shot ``hermes chat -q`` whose warm-up thread was
still reading the tokenizer's file at exit, 3 runs in 80.

So every such call runs inside :func:`native`, which counts it. At exit (an ``atexit``
handler, which runs before daemon threads are stopped) new calls wait forever, which stops
their daemon threads harmlessly at a Python-level wait, and the calls in flight are waited
for, at most :data:`EXIT_WAIT_S` seconds (each is one batch or one model file: milliseconds
to a second). A thread already inside :func:`native` enters it again without waiting (a
model load that embeds a first text), so the drain never waits on itself.

The drain must also run before the exit handlers of the libraries it protects: BLIS (under
spaCy) registers one that frees the memory pools a parse in flight is using, and exit
handlers run last registered first. So each place that loads such a library calls
:func:`drain_first` afterwards (measured: a daemon thread parsing at exit crashed 12 runs in 12
with the drain registered before BLIS, and none after).
"""

from __future__ import annotations

import atexit
import contextlib
import threading

__all__ = ["native", "drain_first", "EXIT_WAIT_S"]

#: Most seconds the exit waits for native calls in flight.
EXIT_WAIT_S = 30.0

_GATE = threading.Condition()
_IN_FLIGHT = 0
_CLOSING = False
_DEPTH = threading.local()  # how deep this thread is inside native()


@contextlib.contextmanager
def native():
    """Run the body as one counted native call (see the module's docstring)."""
    global _IN_FLIGHT
    depth = getattr(_DEPTH, "n", 0)
    if depth:  # nested in this thread's own call, which the exit already waits for
        _DEPTH.n = depth + 1
        try:
            yield
        finally:
            _DEPTH.n = depth
        return
    with _GATE:
        while _CLOSING:  # the interpreter is exiting: never enter native code again
            _GATE.wait()
        _IN_FLIGHT += 1
    _DEPTH.n = 1
    try:
        yield
    finally:
        _DEPTH.n = 0
        with _GATE:
            _IN_FLIGHT -= 1
            _GATE.notify_all()


def drain_first() -> None:
    """Make the drain the first exit handler to run (call it after importing a library that
    registers exit handlers of its own)."""
    atexit.unregister(_drain)
    atexit.register(_drain)


def _drain() -> None:
    global _CLOSING
    if threading.current_thread() is not threading.main_thread():
        return
    with _GATE:
        _CLOSING = True
        _GATE.wait_for(lambda: _IN_FLIGHT == 0, EXIT_WAIT_S)


atexit.register(_drain)
