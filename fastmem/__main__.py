"""``python -m fastmem``: the command line (see :mod:`fastmem.cli`)."""

from .cli import run

run()
