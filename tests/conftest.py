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
