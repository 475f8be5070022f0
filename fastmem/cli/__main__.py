"""``python -m fastmem.cli``."""

from .main import run

run()
