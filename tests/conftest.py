import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest

import fastmem


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "mem.db")


@pytest.fixture
def mem(db_path):
    with fastmem.Memory(db_path) as m:
        yield m


WORDS = (
    "apple river stone cloud market violin garden engine paper silver winter doctor lamp "
    "forest copper window ticket harbor pencil candle meadow rocket"
).split()


def noise_texts(n, seed=1):
    import random

    rnd = random.Random(seed)
    return [" ".join(rnd.choice(WORDS) for _ in range(9)) + f" note {i}." for i in range(n)]
