import os
import shutil

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
DATA = os.environ.get("FASTMEM_DATA", os.path.abspath(DATA))
#: Large bench stores are built once and kept here, keyed by what makes them valid.
CACHE = os.environ.get("FASTMEM_BENCH_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "fastmem-bench"))
_SIDECARS = ("", ".hnsw", ".hnsw.json", ".terms")


def cache_key(kind: str, n: int) -> str:
    """Name of a cached store: its kind and size, fastmem's schema, structure and events versions
    and the embedding model (a store from another version is rebuilt, never reused)."""
    import fastmem
    from fastmem.analogy.codes import StructureEncoder
    from fastmem.models.embedder import MiniLM
    from fastmem.reader.extract import EVENTS_VERSION
    from fastmem.storage.store import SCHEMA_VERSION

    model = MiniLM.model_id.replace("/", "_")
    return f"{kind}-{n}-v{fastmem.__version__}-schema{SCHEMA_VERSION}-struct{StructureEncoder.version}-events{EVENTS_VERSION}-{model}.db"


def cached_store(kind: str, n: int, build) -> str:
    """Path of a cached store, built by ``build(path)`` (which must close it) when missing."""
    os.makedirs(CACHE, exist_ok=True)
    path = os.path.join(CACHE, cache_key(kind, n))
    if not os.path.exists(path + ".done"):
        for s in _SIDECARS:
            if os.path.exists(path + s):
                os.remove(path + s)
        build(path)
        open(path + ".done", "w").close()
    return path


def fresh_copy(path: str, folder: str) -> str:
    """A copy of a closed store (and its index) in ``folder``, for benches that change it."""
    dest = os.path.join(folder, os.path.basename(path))
    for s in _SIDECARS:
        if os.path.exists(path + s):
            shutil.copyfile(path + s, dest + s)
    return dest
