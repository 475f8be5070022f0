"""What the local servers (``fastmem mcp``, ``fastmem ui``) share: which hosts are loopback,
what a bearer token must look like, one BLAS thread per process, and several worker
processes on one listening socket."""

from __future__ import annotations

from .errors import InvalidInput

__all__ = ["LOCAL_HOSTS", "TOKEN_MIN", "check_token", "listen", "one_blas_thread", "run_workers",
           "signals_ready"]

#: Hosts a server binds without ``allow_remote``.
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
#: Fewest characters of a bearer token (``secrets.token_urlsafe(32)`` gives 43).
TOKEN_MIN = 24


def check_token(token) -> str:
    """A bearer token as the servers accept it: a str of at least :data:`TOKEN_MIN` visible
    ASCII characters (no spaces). The message never repeats the token."""
    if not isinstance(token, str) or len(token) < TOKEN_MIN or not all(33 <= ord(c) < 127 for c in token):
        raise InvalidInput(f"the bearer token must be at least {TOKEN_MIN} visible ASCII characters without "
                           "spaces (e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')")
    return token


def one_blas_thread() -> None:
    """Make NumPy's BLAS (OpenBLAS) use one thread in this process, for a process that serves
    calls (the servers call it first thing). A call's BLAS work is small (a 1,024 x 1,024
    matrix-vector product for the analogy slot's statistics, a few small products), and
    OpenBLAS's worker threads spin for a while after each product they share: under a steady
    stream of calls they never sleep. Measured on this 2-core machine (``bench/load_mcp.py``,
    5,000 memories): one client 36 calls/s either way, the server on 1.78 cores with the
    default threads and 0.89 with one; 16 clients 32.5 -> 46.5 calls/s. ONNX Runtime and spaCy
    keep their own threads. A library does not change its host's BLAS threads: an agent
    backend that serves recalls from many threads can do the same (``OPENBLAS_NUM_THREADS=1``,
    or this function)."""
    import numpy  # noqa: F401 - BLAS libraries are limited once loaded: these two hold them
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def listen(host: str, port: int, backlog: int = 2048):
    """A bound, listening TCP socket for ``host:port`` (IPv6 when ``host`` is), made before any
    worker process starts so that every worker accepts on the same socket (the kernel hands each
    new connection to one of them)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def run_workers(n: int, target, *, name: str = "fastmem", restart_window: float = 60.0,
                max_restarts: int = 5, stop_timeout: float = 120.0) -> int:
    """Run ``target(i)`` in ``n`` worker processes (forked from this one, which must hold no other
    thread: forking a process with threads can copy a held lock) until this process gets SIGTERM
    or SIGINT, which it passes on to every worker and then waits for them (each finishes its
    calls and closes its store; one that has not stopped ``stop_timeout`` seconds later is
    killed). A worker that dies on its own is started again, at most ``max_restarts`` times in
    ``restart_window`` seconds; after that the others are stopped and 1 is returned. Returns 0
    after a clean stop. A worker holds SIGTERM back until its server calls
    :func:`signals_ready`. POSIX only."""
    import multiprocessing
    import signal
    import sys
    import threading
    import time

    if n < 1:
        raise InvalidInput(f"workers must be at least 1, not {n}")
    if not hasattr(signal, "SIGTERM") or sys.platform == "win32":
        raise InvalidInput("several worker processes need a POSIX system (fork); use one worker here")
    if threading.active_count() > 1:
        raise InvalidInput("worker processes are forked from a process that holds no other thread: start the "
                           "workers before anything else starts a thread")
    ctx = multiprocessing.get_context("fork")
    stopping = threading.Event()
    deaths: list[float] = []

    def start(i):
        p = ctx.Process(target=_worker, args=(target, i), name=f"{name}-worker-{i}", daemon=False)
        held = {getattr(signal, s) for s in _STOP_SIGNALS}
        signal.pthread_sigmask(signal.SIG_BLOCK, held)  # the child starts with them held back too
        try:
            p.start()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        return p

    def stop(signum, frame):
        stopping.set()

    old = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    procs = [start(i) for i in range(n)]
    rc = 0
    try:
        while not stopping.is_set():
            for i, p in enumerate(procs):
                if p.is_alive() or stopping.is_set():
                    continue
                now = time.monotonic()
                deaths[:] = [t for t in deaths if now - t < restart_window] + [now]
                if len(deaths) > max_restarts:
                    print(f"{name}: worker {i} exited {p.exitcode}; {len(deaths)} exits in {restart_window:.0f} s, "
                          "stopping", file=sys.stderr)
                    rc = 1
                    stopping.set()
                    break
                print(f"{name}: worker {i} exited {p.exitcode}; starting it again", file=sys.stderr)
                procs[i] = start(i)
            stopping.wait(0.5)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()  # SIGTERM: the worker's server finishes its calls, then closes the store
        deadline = time.monotonic() + stop_timeout
        for i, p in enumerate(procs):
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                print(f"{name}: worker {i} did not stop within {stop_timeout:.0f} s of SIGTERM; killing it "
                      "(the store is safe: its last write is either committed or not)", file=sys.stderr)
                p.kill()
                p.join()
                rc = rc or 1
        for s, h in old.items():
            signal.signal(s, h)
    return rc


#: The signals that stop a worker (blocked while it starts: :func:`signals_ready`).
_STOP_SIGNALS = ("SIGTERM", "SIGINT")


def _worker(target, i: int) -> None:
    """A worker's first step. SIGTERM and SIGINT arrive held back (blocked across the fork by
    :func:`run_workers`) and stay so until its server has installed its own handlers
    (:func:`signals_ready`), then are delivered to them. A stop asked for while the worker
    loads its store and models would otherwise hit the handlers it inherited from the
    supervisor, or an exception raised at an arbitrary point of the loading (a library may
    catch it), and the worker would go on to serve forever. After the server's own handlers
    are gone, SIGTERM ends the worker by SystemExit (closing its store)."""
    import signal

    def _exit(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _exit)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        target(i)
    finally:
        signals_ready()


def signals_ready() -> None:
    """Deliver the stop signals a worker held back while it started (see :func:`_worker`):
    its server calls this once its own handlers are in place. A no-op outside a worker."""
    import signal

    signal.pthread_sigmask(signal.SIG_UNBLOCK, {getattr(signal, s) for s in _STOP_SIGNALS})
