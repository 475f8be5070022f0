"""The house by concern: what the layout promises a contributor, checked on the syntax tree.

* Packages are layers: a module imports its own package and the layers below it, never one
  above (:data:`LAYERS`); so the models never import a derived structure and recall never
  imports a background pass.
* Hosts (the hermes provider, the adapters, the MCP server, the web app, the Ray path, the
  command line) import only the front (``fastmem``), the public types and errors, the store-free
  helpers, the models and the public write-preparation API, and they never reach an underscore
  name of another object nor the core's internals (``Memory.admin.engine``, its connection, store,
  indexes...).
* No import cycle, no folder of more than 15 modules, no module over 500 lines of code, no
  function over 80.
* A recall channel is one module with one spec; every table is written by its owner only;
  the front and its services hold no SQL and the services hold the engine only.

Each rule has a planted breach it must see (in a temporary folder, never in the checkout).
"""

import ast
import collections
import functools
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "fastmem"
#: The packages of fastmem/ as layers, lowest first: a module may import its own package and any
#: package of a lower layer (or of the same layer only when it is its own).
LAYERS = [
    {"errors", "results", "util"},
    {"storage", "models"},
    {"reader"},
    {"derived"},
    {"analogy"},
    {"recall", "write"},
    {"passes"},
    {"core"},
    {"parts"},
    {"memory"},
    {"__init__", "__main__", "serving", "distributed", "integrations", "hermes", "mcp_server", "ui", "evaluate", "cli"},
]
RANK = {p: i for i, layer in enumerate(LAYERS) for p in layer}
#: Hosts: written against the public surface only.
HOSTS = {"hermes", "integrations", "cli", "ui", "mcp_server", "distributed"}
#: What a host may import besides other hosts: the front (the package's root), the public
#: types and errors, store-free helpers, the pluggable models, the public write-preparation API,
#: the kernels (warm-up), the local servers' shared checks and the evaluations (the CLI's eval).
HOST_MAY_IMPORT = ("fastmem", "fastmem.errors", "fastmem.results", "fastmem.util", "fastmem.models",
                   "fastmem.write.prepare", "fastmem.write.items", "fastmem.kernels", "fastmem.serving",
                   "fastmem.evaluate", "fastmem.memory")
#: What a Memory holds inside, for the core's own modules, evaluations and tests only.
CORE = {"internals", "engine", "db", "store", "index", "structure", "ledger", "scopes", "pipeline", "slot"}
#: Names that are something else in these modules (argparse's --db, a LangGraph op's index).
OTHER = {("a", "db"), ("args", "db"), ("op", "index")}
STDLIB = {"os", "sys"}


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root.parent).with_suffix("")
        name = ".".join(rel.parts)
        out[name[: -len(".__init__")] if name.endswith(".__init__") else name] = p
    kernels = root.parent / "kernels" / "__init__.py"  # the folder kernels/ (pyproject maps it)
    if kernels.exists():
        out.setdefault("fastmem.kernels", kernels)
    return out


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(name: str, path: Path, mods: dict[str, Path]) -> list[tuple[str, int]]:
    """Every fastmem module (or package) ``name`` imports, anywhere in it, with the line:
    ``from a.b import c`` imports ``a.b.c`` when that is a module, else ``a.b`` (``from fastmem
    import Memory`` imports the root, the front)."""
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = []
    for n in ast.walk(_tree(path)):
        if isinstance(n, ast.ImportFrom):
            if n.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (n.level - 1)]
                mod = ".".join(base + ([n.module] if n.module else []))
            else:
                mod = n.module or ""
            out += [(f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod, n.lineno) for a in n.names]
        elif isinstance(n, ast.Import):
            out += [(a.name, n.lineno) for a in n.names]
    return [(m, line) for m, line in out if m == "fastmem" or m.startswith("fastmem.")]


def _part(mod: str) -> str:
    """The layer name of a module: its package under fastmem/ (``fastmem`` itself: ``__init__``)."""
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer_breaches(root: Path) -> list[str]:
    mods = _modules(root)
    out = []
    for name, path in mods.items():
        me = _part(name)
        for target, line in _imports(name, path, mods):
            other = _part(target)
            if other in ("kernels", me) or target == "fastmem.__version__":
                continue
            if other not in RANK or me not in RANK:
                out.append(f"{name}:{line} imports {target} (a package no layer names)")
            elif RANK[other] > RANK[me] or (RANK[other] == RANK[me] and RANK[me] < len(LAYERS) - 1 and RANK[me] > 0):
                out.append(f"{name}:{line} imports {target} ({other} is not below {me})")
    return out


def _host_breaches(root: Path) -> list[str]:
    out = []
    mods = _modules(root)
    for name, path in mods.items():
        if _part(name) not in HOSTS:
            continue
        for target, line in _imports(name, path, mods):
            if _part(target) in HOSTS or target == "fastmem.__version__":
                continue
            if target == "fastmem":
                continue  # the front: "import fastmem", "from fastmem import Memory"
            if not any(target == ok or target.startswith(ok + ".") for ok in HOST_MAY_IMPORT if ok != "fastmem"):
                out.append(f"{name}:{line} imports {target}")
    return out


def _attribute_breaches(path: Path) -> list[str]:
    out = []
    for node in ast.walk(_tree(path)):
        if not isinstance(node, ast.Attribute):
            continue
        base = node.value.id if isinstance(node.value, ast.Name) else None
        private = node.attr.startswith("_") and not node.attr.startswith("__")
        if private and base not in ("self", "cls") and base not in STDLIB:
            out.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
        elif node.attr in CORE and (base, node.attr) not in OTHER and base not in ("self", "cls"):
            out.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return out


def _cycles(root: Path) -> list[list[str]]:
    mods = _modules(root)
    edges = collections.defaultdict(set)
    for name, path in mods.items():
        for target, _ in _imports(name, path, mods):
            t = target if target in mods else target.rsplit(".", 1)[0]
            if t in mods and t != name:
                edges[name].add(t)
    index, low, on, stack, found, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 and not any(all(x == p or x.startswith(p + ".") for x in comp) for p in comp):
                found.append(sorted(comp))

    for v in list(mods):
        if v not in index:
            visit(v)
    return found


# -- the rules on the checkout -------------------------------------------------------------
def test_packages_import_only_their_own_layer_and_those_below():
    assert _layer_breaches(ROOT) == []


def test_hosts_import_the_front_and_the_public_write_preparation_api_only():
    assert _host_breaches(ROOT) == []


@pytest.mark.parametrize("path", [p for n, p in _modules(ROOT).items() if _part(n) in HOSTS],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_hosts_use_the_public_surface_only(path):
    assert _attribute_breaches(path) == []


def test_no_import_cycle_and_no_folder_of_more_than_15_modules():
    assert _cycles(ROOT) == []
    per = collections.Counter(p.parent for p in ROOT.rglob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert max(per.values()) <= 15, per.most_common(3)


def _code_line_numbers(tree: ast.Module, src: str) -> list[int]:
    """The numbers of the lines of code: not blank, not a comment, not a docstring."""
    doc: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                doc.update(range(first.lineno, first.end_lineno + 1))
    return [i for i, line in enumerate(src.splitlines(), 1)
            if line.strip() and not line.strip().startswith("#") and i not in doc]


def test_modules_and_functions_stay_readable():
    """No module over 500 lines of code, no function over 80."""
    long_modules, long_functions = [], []
    for path in sorted(ROOT.rglob("*.py")):
        tree = _tree(path)
        code = _code_line_numbers(tree, path.read_text(encoding="utf-8"))
        if len(code) > 500:
            long_modules.append(str(path.relative_to(ROOT)))
        long_functions += [f"{path.relative_to(ROOT)}:{n.name}" for n in ast.walk(tree)
                           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                           and sum(1 for i in code if n.lineno <= i <= n.end_lineno) > 80]
    assert (long_modules, long_functions) == ([], [])


def test_a_recall_channel_is_one_module_with_one_spec():
    import fastmem
    from fastmem.recall import channels as C
    from fastmem.recall.channels.spec import CHANNELS

    folder = ROOT / "recall" / "channels"
    registered = collections.Counter()
    for path in folder.glob("*.py"):
        for n in ast.walk(_tree(path)):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "channel":
                registered[path.stem] += 1
    assert sorted(registered) == sorted(CHANNELS) and set(registered.values()) == {1}
    assert C.NAMES == fastmem.recall_channels() and all(isinstance(s.weight, float) for s in CHANNELS.values())
    order = [spec.derived for spec in CHANNELS.values()]
    assert order == sorted(order)  # the derived ones run after every base channel
    assert fastmem.Memory.recall.__kwdefaults__["channels"] == C.NAMES


@pytest.mark.parametrize("name", ["memory.py", "core/reading.py", "core/writing.py", "core/engine.py"])
def test_the_front_and_its_services_hold_no_sql(name):
    """Statements live in the module that owns their tables; the front, its services and the
    engine call them."""
    sql = [f"{name}:{n.lineno}" for n in ast.walk(_tree(ROOT / name))
           if isinstance(n, ast.Constant) and isinstance(n.value, str)
           and any(w in n.value.upper() for w in ("SELECT ", "INSERT ", "UPDATE ", "DELETE FROM"))]
    assert sql == []


def test_services_hold_the_engine_only(tmp_path):
    import fastmem
    from fastmem.core.reading import Reading
    from fastmem.core.writing import Writing

    with fastmem.Memory(str(tmp_path / "s.db"), extractor=None) as m:
        for svc in (Reading(m.admin.engine), Writing(m.admin.engine)):
            assert vars(svc) == {"e": m.admin.engine}


#: The one module that writes each table (reads may join across tables for a scope filter;
#: writes never cross). The schema module creates them and keeps the FTS rows by trigger.
OWNERS = {
    "memories": "storage.memories", "memories_fts": "storage.memories", "pending": "storage.memories",
    "derive_failures": "storage.failures", "plots": "analogy.plots",
    "ingest_log": "storage.marks", "settings": "storage.store", "change_log": "storage.store",
    "_fastmem_migrations": "storage.store",
    "embeddings": "derived.vectors", "windows": "derived.windows", "standing": "derived.standing",
    "usage": "derived.usage", "usage_events": "derived.usage",
    "nodes": "derived.graph", "edges": "derived.graph", "aliases": "derived.graph", "alias_candidates": "derived.graph",
    "codes": "analogy.code_store", "events": "analogy.code_store", "event_df": "analogy.code_store",
    "hrr_stats": "analogy.code_store",
    "chunks": "passes.chunks", "chunk_members": "passes.chunks",
    "categories": "passes.categories", "category_members": "passes.categories",
}
WRITE = re.compile(r"\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)", re.I)


def _writes(path: Path) -> list[tuple[str, int]]:
    return [(m.group(1).lower(), n.lineno) for n in ast.walk(_tree(path))
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and _is_sql(n.value)
            for m in WRITE.finditer(n.value) if m.group(1).upper() not in {"SET", "OF"}]


def _is_sql(s: str) -> bool:
    """A statement, not prose or a word list (``UPDATE`` also heads a line of chat)."""
    return bool(re.match(r"\s*(?:INSERT|UPDATE|DELETE|WITH|SELECT|CREATE)\b", s))


def _owner_breaches(root: Path) -> list[str]:
    out = []
    for name, path in _modules(root).items():
        if name.endswith(".schema"):
            continue  # the DDL, the migrations and the FTS triggers
        module = name.split(".", 1)[1] if "." in name else name
        out += [f"{name}:{line} writes {table} (owner: {OWNERS.get(table, 'none')})"
                for table, line in _writes(path) if OWNERS.get(table) != module]
    return out


def test_each_table_is_written_by_its_owner_only():
    assert _owner_breaches(ROOT) == []


# -- each rule sees a breach planted in a copy (a temporary folder) --------------------------
def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "fastmem"
    for rel, src in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(src, encoding="utf-8")
        for parent in p.relative_to(root).parents:
            init = root / parent / "__init__.py"
            if not init.exists():
                init.write_text("", encoding="utf-8")
    return root


def test_the_rules_see_a_planted_breach(tmp_path):
    root = _plant(tmp_path, {
        "models/embedder.py": "from ..derived import graph\n",  # a model reading a derived structure
        "recall/pipeline.py": "def f():\n    from ..passes import chunks\n",  # recall importing a pass
        "derived/graph.py": "",
        "passes/chunks.py": 'SQL = "UPDATE usage SET weight=1 WHERE memory_id=?"\n',  # writes another's table
        "cli/tools.py": "from ..core import engine\ndef f(mem):\n    with mem._lock:\n"
                        "        return mem.admin.engine.db.execute('SELECT 1')\n",
        "core/engine.py": "from ..cli import tools\n",  # a cycle through a host (and upwards)
    })
    layers = _layer_breaches(root)
    assert any("models.embedder" in b for b in layers) and any("recall.pipeline" in b for b in layers)
    assert any("core.engine" in b for b in layers)
    assert _host_breaches(root) == ["fastmem.cli.tools:1 imports fastmem.core.engine"]
    assert len(_attribute_breaches(root / "cli" / "tools.py")) == 3  # mem._lock, mem.admin.engine, .db
    assert _cycles(root) == [["fastmem.cli.tools", "fastmem.core.engine"]]
    assert _owner_breaches(root) == ["fastmem.passes.chunks:1 writes usage (owner: derived.usage)"]
    assert not (ROOT.parent / "tests" / "_planted_breach.py").exists()
