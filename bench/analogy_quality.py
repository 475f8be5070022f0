"""Analogy-slot quality on ProPara-Logy silver (../shared/data/proparalogy-silver) and on
LoCoMo questions; the protocol and the code live in :mod:`fastmem.evaluate.proparalogy`
(``fastmem eval proparalogy PATH`` is the same).

    python bench/analogy_quality.py [--dim 512] [--z 2.0] [--sweep] [--no-baselines] [--short] [--mc]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from conftest import DATA  # noqa: E402

from fastmem.evaluate import proparalogy as P  # noqa: E402

SILVER = os.path.join(DATA, "proparalogy-silver")
LOCOMO = os.path.join(DATA, "locomo-dev")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--z", type=float, default=2.0)
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--sweep", action="store_true", help="also z_min 2..8 and the surface settings")
    ap.add_argument("--short", action="store_true", help="also the surface condition on LoCoMo questions")
    ap.add_argument("--mc", action="store_true", help="also the four-way multiple choice")
    a = ap.parse_args()
    if a.short:
        short = P.run_short(LOCOMO)
        if short is None:
            print("no LoCoMo dev data; skipping the short-text figures")
        else:
            print(f"{'LoCoMo questions: surface rule, exclude, floor, names':56s} {'fire':>6s} {'leak':>6s} {'dup':>6s} {'surf':>6s}")
            for g, s in short.items():
                print(f"{'{} {} {} names={}'.format(*g):56s} {s['fire']:6.3f} {s['leak']:6.3f} {s['dup']:6.3f} {s['surface']:6.3f}")
    rep = P.run(SILVER, dim=a.dim, z=a.z, baselines=not a.no_baselines, sweep=a.sweep)
    if rep is None:
        print("no ProPara-Logy silver data; skipping")
        return 0
    print(f"{'method':48s} {'fire':>6s} {'prec':>6s} {'strict':>6s} {'distr':>6s} {'hit':>6s}")
    for name, s in rep.items():
        print(f"{name:48s} {s['fire']:6.3f} {s['precision']:6.3f} {s['precision_strict']:6.3f} {s['distractor']:6.3f} "
              f"{s['hit']:6.3f}" + (f"   {s['ms/recall']:.1f} ms/recall, repeats a hit on {s['dup']:.3f} of fires, "
                                    f"target outranks its distractor on {s['target_beats_distractor']:.3f} of rows "
                                    f"(score ties {s['ties']:.3f}, {s['ties_left']:.3f} left after the mapping), "
                                    f"{s['target_beats_distractor_similarity']:.3f} in "
                                    f"structural_similarity" if "ms/recall" in s else ""))
    if a.mc:
        mc = P.multiple_choice(SILVER)
        print(f"multiple choice ({mc['items']} items, chance 0.25): structural_similarity {mc['structural_similarity']:.3f} "
              f"(ties {mc['ties']:.3f}), MiniLM cosine {mc['MiniLM cosine']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
