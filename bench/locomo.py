"""LoCoMo evidence recall on the dev conversations in ../shared/data/locomo-dev (the protocol
and the code live in :mod:`fastmem.evaluate.locomo`; ``fastmem eval locomo PATH`` is the same).

    python bench/locomo.py [rrf|score|learned ...]   # prints the tables (score fusion by default)
    pytest bench/test_locomo.py -s           # same, skips cleanly without the data
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from conftest import DATA  # noqa: E402

from fastmem.evaluate import locomo as L  # noqa: E402

PATH = os.path.join(DATA, "locomo-dev")


def conversation_files() -> list[str]:
    return L.conversation_files(PATH)


turns = L.turns


def evaluate(path: str, fusion: str = "score") -> dict[str, dict[str, float]]:
    return L.evaluate(path, fusion=fusion)


def main() -> int:
    files = conversation_files()
    if not files:
        print(f"no LoCoMo data under {DATA}; skipping")
        return 0
    for fusion in sys.argv[1:] or ["score"]:
        for f in files:
            res = evaluate(f, fusion=fusion)
            print(f"\n{os.path.basename(f)} ({res['fused']['questions']} questions), fusion={fusion}")
            print(L.table(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
