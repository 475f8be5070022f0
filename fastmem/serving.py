"""What the local servers (``fastmem mcp``, ``fastmem ui``) share: which hosts are loopback,
what a bearer token must look like, and one BLAS thread per process."""

from __future__ import annotations

from .errors import InvalidInput

__all__ = ["LOCAL_HOSTS", "TOKEN_MIN", "check_token", "one_blas_thread"]

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
