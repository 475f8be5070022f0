import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
DATA = os.environ.get("FASTMEM_DATA", os.path.abspath(DATA))
