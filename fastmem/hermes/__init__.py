"""fastmem as a hermes-agent memory provider.

Three steps for a user of hermes-agent (0.19.0 and later):

1. ``pip install fastmem``
2. ``fastmem hermes install`` - writes ``$HERMES_HOME/plugins/fastmem/`` (a folder that only
   imports this package) and, when the bundled holographic provider's store exists, copies its
   facts into the fastmem store once;
3. set ``memory.provider: fastmem`` in ``$HERMES_HOME/config.yaml``.

Modules: :mod:`fastmem.hermes.provider` (the ``MemoryProvider``; imports hermes-agent),
:mod:`fastmem.hermes.tools` (tool schemas and handlers), :mod:`fastmem.hermes.config`
(settings under ``plugins.fastmem``), :mod:`fastmem.hermes.install` (install, uninstall,
import). Only ``provider`` needs hermes-agent installed.
"""

from __future__ import annotations

__all__ = ["register", "FastmemProvider"]


def register(ctx) -> None:
    """hermes plugin entry: register a :class:`FastmemProvider` with ``ctx``."""
    from .provider import register as _register

    _register(ctx)


def __getattr__(name: str):
    if name == "FastmemProvider":  # imported on demand: it needs hermes-agent
        from .provider import FastmemProvider

        return FastmemProvider
    raise AttributeError(name)
