"""Where fastmem keeps per-user files (compiled kernels, the distilled static model)."""

from __future__ import annotations

import os

__all__ = ["user_cache"]


def user_cache(*parts: str) -> str:
    """``$FASTMEM_CACHE_DIR/<parts>`` when set, else ``$XDG_CACHE_HOME/fastmem/<parts>``
    (``~/.cache/fastmem/<parts>``)."""
    base = os.environ.get("FASTMEM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "fastmem")
    return os.path.join(base, *parts)
