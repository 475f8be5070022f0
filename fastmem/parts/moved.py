"""The names :class:`fastmem.Memory` had before its named parts (fastmem 0.2): each still works
for this release and warns (:class:`fastmem.errors.FastmemDeprecationWarning`) with its new
place. ``CHANGELOG.md`` lists them."""

from __future__ import annotations

import warnings
from dataclasses import fields, replace

from ..analogy.slot import AnalogySettings
from ..errors import FastmemDeprecationWarning, InvalidInput
from . import MOVED

__all__ = ["moved_attribute", "set_moved_attribute", "slot_settings", "OLD_SLOT_KEYWORDS"]

#: The analogy slot's settings that ``Memory()`` took as keywords before :class:`AnalogySettings`.
OLD_SLOT_KEYWORDS = frozenset({f.name for f in fields(AnalogySettings)} - {"ranker"}
                              | {"analogy_ranker", "analogy_mapping"})


def _warn(name: str, where: tuple[str, str]) -> None:
    warnings.warn(f"Memory.{name} is now Memory.{where[0]}.{where[1]}", FastmemDeprecationWarning, stacklevel=3)


def moved_attribute(mem, name: str):
    """``Memory.__getattr__``: an old name gives its new place's value, with a warning."""
    where = MOVED.get(name)
    if where is None:
        raise AttributeError(f"{type(mem).__name__!r} object has no attribute {name!r}")
    _warn(name, where)
    return getattr(object.__getattribute__(mem, where[0]), where[1])


def set_moved_attribute(mem, name: str, value) -> None:
    """``Memory.__setattr__``: an old name (``mem.extractor = ...``) sets its new place, with a
    warning; any other name is set as usual."""
    where = MOVED.get(name)
    if where is None:
        object.__setattr__(mem, name, value)
        return
    _warn(name, where)
    setattr(object.__getattribute__(mem, where[0]), where[1], value)


def slot_settings(analogy: AnalogySettings | None, old: dict) -> AnalogySettings:
    """The slot's settings for ``Memory(analogy=...)`` (a copy: a value given to two memories
    is not shared), or from the keywords ``Memory()`` took before, with a warning."""
    if analogy is not None and not isinstance(analogy, AnalogySettings):
        raise InvalidInput(f"analogy must be an AnalogySettings, not {type(analogy).__name__}")
    unknown = set(old) - OLD_SLOT_KEYWORDS
    if unknown:
        raise TypeError(f"Memory() got unexpected keyword arguments {sorted(unknown)}")
    if not old:
        return replace(analogy) if analogy is not None else AnalogySettings()
    if analogy is not None:
        raise InvalidInput("give the analogy slot's settings as analogy=AnalogySettings(...) only")
    warnings.warn(f"Memory({', '.join(f'{k}=...' for k in sorted(old))}) is now "
                  f"Memory(analogy=fastmem.AnalogySettings(...))", FastmemDeprecationWarning, stacklevel=3)
    old = dict(old)
    if old.pop("analogy_mapping", True) is not True:
        raise InvalidInput("analogy_mapping: the structure mapping is the analogy slot's score; only True is accepted")
    if "analogy_ranker" in old:
        old["ranker"] = old.pop("analogy_ranker")
    return AnalogySettings(**old)
