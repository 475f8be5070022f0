"""The ``fastmem`` command line.

Every command takes ``--db PATH`` (default: ``$FASTMEM_DB``). Exit codes: 0 ok, 1 failure,
2 usage. Errors are one line on standard error; ``--debug`` shows the traceback. Long work
shows a progress bar on standard error; ``--json`` prints machine-readable output.
"""

from __future__ import annotations

from .demo import DEMO
from .main import main, run

__all__ = ["main", "run", "DEMO"]
