"""The doors to the outside: integrations use fastmem's public surface only.

The hermes provider, the framework adapters, the MCP server, the web app, the Ray path and
the command line are written against :class:`fastmem.Memory`'s documented verbs. They never reach an
underscore name of another object (only their own, through ``self``/``cls``) nor the core's
internals: its connection, store, indexes, ledger, scopes, pipeline or slot. A change inside
the core then cannot break them silently."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "fastmem"
OUTSIDE = sorted([*ROOT.joinpath("hermes").rglob("*.py"), *ROOT.joinpath("integrations").rglob("*.py"),
                  *ROOT.joinpath("cli").rglob("*.py"), *ROOT.joinpath("ui").rglob("*.py"), ROOT / "mcp_server.py",
                  ROOT / "distributed.py"])
#: What a Memory holds inside (public attributes for the core's own modules and tests only).
CORE = {"db", "store", "index", "structure", "ledger", "scopes", "pipeline", "slot"}
#: Names that are something else in these modules (argparse's --db, a LangGraph op's index).
OTHER = {("a", "db"), ("args", "db"), ("op", "index")}
#: Modules whose private names are the standard library's documented API.
STDLIB = {"os", "sys"}


def _breaches(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute):
            continue
        base = node.value.id if isinstance(node.value, ast.Name) else None
        private = node.attr.startswith("_") and not node.attr.startswith("__")
        if private and base not in ("self", "cls") and base not in STDLIB:
            out.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
        elif node.attr in CORE and (base, node.attr) not in OTHER and not (base in ("self", "cls")):
            out.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return out


@pytest.mark.parametrize("path", OUTSIDE, ids=lambda p: str(p.relative_to(ROOT)))
def test_integrations_use_the_public_surface_only(path):
    assert _breaches(path) == []


def test_the_check_sees_a_breach():
    planted = ROOT.parent / "tests" / "_planted_breach.py"
    try:
        planted.write_text("def f(mem):\n    with mem._lock:\n        return mem.db.execute('SELECT 1')\n"
                           "def g(self):\n    return self._mem.store\n")
        assert len(_breaches(planted)) == 3
    finally:
        planted.unlink()


def _code_lines(src: str, lines: range | None = None) -> int:
    """Lines of code: not blank, not a comment, not a docstring."""
    doc: set[int] = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                doc.update(range(first.lineno, first.end_lineno + 1))
    return sum(1 for i, line in enumerate(src.splitlines(), 1)
               if (lines is None or i in lines) and line.strip() and not line.strip().startswith("#") and i not in doc)


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_and_functions_stay_readable(path):
    """No module over 500 lines of code, no function over 80."""
    src = path.read_text(encoding="utf-8")
    assert _code_lines(src) <= 500
    long = [(n.name, _code_lines(src, range(n.lineno, n.end_lineno + 1))) for n in ast.walk(ast.parse(src))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert [f for f in long if f[1] > 80] == []


def test_every_recall_channel_is_registered_once_and_weighed():
    """The channels a user may name are exactly the registered ones, each with a fusion
    weight; the derived ones (which read the others) run after every base channel."""
    from fastmem.recall.channels import NAMES
    from fastmem.recall.fusion import DEFAULT_WEIGHTS
    from fastmem.recall.pipeline import CHANNELS

    assert set(CHANNELS) == set(NAMES) and set(NAMES) <= set(DEFAULT_WEIGHTS)
    order = [spec.derived for spec in CHANNELS.values()]
    assert order == sorted(order)


@pytest.mark.parametrize("name", ["memory.py", "core/io.py", "core/rows.py", "core/passes.py", "core/engine.py"])
def test_the_front_and_its_services_hold_no_sql(name):
    """Statements live in the module that owns their tables (writes, graph, structure_index,
    usage, vectors, chunks, categories, store...); the front, its services and the engine
    call them."""
    sql = [f"{name}:{n.lineno}" for n in ast.walk(ast.parse((ROOT / name).read_text(encoding="utf-8")))
           if isinstance(n, ast.Constant) and isinstance(n.value, str)
           and any(w in n.value.upper() for w in ("SELECT ", "INSERT ", "UPDATE ", "DELETE FROM"))]
    assert sql == []


#: The one module that writes each table (reads may join across tables for a scope filter;
#: writes never cross). schema.py creates them and keeps the FTS rows by trigger.
OWNERS = {
    "memories": "writes", "memories_fts": "writes", "pending": "writes", "embeddings": "vectors",
    "ingest_log": "writes",
    "usage": "usage", "usage_events": "usage",
    "nodes": "graph", "edges": "graph", "aliases": "graph", "alias_candidates": "graph",
    "chunks": "chunks", "chunk_members": "chunks",
    "categories": "categories", "category_members": "categories",
    "codes": "code_store", "events": "code_store", "event_df": "code_store",
    "hrr_stats": "code_store",
    "standing": "standing", "windows": "windows",
    "settings": "store", "change_log": "store", "_fastmem_migrations": "store",
}
WRITE = re.compile(r"\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)", re.I)


def _writes(path: Path) -> list[tuple[str, int]]:
    return [(m.group(1).lower(), n.lineno) for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and _is_sql(n.value)
            for m in WRITE.finditer(n.value) if m.group(1).upper() not in {"SET", "OF"}]


def _is_sql(s: str) -> bool:
    """A statement, not prose or a word list (``UPDATE`` also heads a line of chat)."""
    return bool(re.match(r"\s*(?:INSERT|UPDATE|DELETE|WITH|SELECT|CREATE)\b", s))


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_table_is_written_by_its_owner_only(path):
    if path.name == "schema.py":
        return  # the DDL, the migrations and the FTS triggers
    module = path.stem
    crossing = [f"{path.name}:{line} writes {table} (owner: {OWNERS.get(table, 'none')})"
                for table, line in _writes(path) if OWNERS.get(table) != module]
    assert crossing == []


def test_the_owner_check_sees_a_crossing(tmp_path):
    bad = tmp_path / "chunks.py"
    bad.write_text('SQL = "UPDATE usage SET weight=1 WHERE memory_id=?"\n', encoding="utf-8")
    assert _writes(bad) == [("usage", 1)] and OWNERS["usage"] != "chunks"
