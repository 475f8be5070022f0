"""Progress bars on long work (tqdm on stderr)."""

from __future__ import annotations

__all__ = ["bar", "AUTO_MIN"]

#: With ``progress=None`` a bar is shown for this many items or more.
AUTO_MIN = 2000


def bar(total: int, desc: str, enabled: bool | None, unit: str = "mem"):
    """A tqdm bar, or None when not wanted (``enabled=None``: only for ``AUTO_MIN`` items or more)."""
    if enabled is None:
        enabled = total >= AUTO_MIN
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, leave=False)
