"""LoCoMo evidence recall per channel (see bench/locomo.py); skips without the data."""

import os

import locomo
import pytest


@pytest.mark.parametrize("path", locomo.conversation_files() or [None], ids=os.path.basename)
def test_locomo_evidence_recall(path, capsys):
    if path is None:
        pytest.skip("LoCoMo dev data not found (set FASTMEM_DATA)")
    res = locomo.evaluate(path)
    with capsys.disabled():
        print(f"\n{os.path.basename(path)}")
        for name, sc in res.items():
            print(f"  {name:9s} any@5={sc['any@5']:.3f} any@10={sc['any@10']:.3f} all@10={sc['all@10']:.3f}")
    assert res["fused"]["any@10"] > 0
