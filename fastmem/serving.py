"""What the local servers (``fastmem mcp --transport http``, ``fastmem ui``) share: which hosts
are loopback, and what a bearer token must look like."""

from __future__ import annotations

from .errors import InvalidInput

__all__ = ["LOCAL_HOSTS", "TOKEN_MIN", "check_token"]

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
