"""``fastmem hermes install|uninstall``: the plugin folder hermes discovers, and the one-time
import of the bundled holographic provider's facts.

The folder ``$HERMES_HOME/plugins/fastmem/`` holds a two-line ``__init__.py`` that imports
:mod:`fastmem.hermes.provider` from the installed package (no fastmem code is copied, so
upgrading fastmem upgrades the provider) and a ``plugin.yaml`` that hermes shows in
``hermes memory setup``.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from .. import __version__
from . import config as C

__all__ = ["install", "uninstall", "import_holographic", "CONFIG_LINE"]

_INIT = '''"""fastmem memory provider for hermes-agent, installed by `fastmem hermes install`.

This folder only points hermes at the installed fastmem package (a MemoryProvider);
`fastmem hermes uninstall` removes it.
"""

from fastmem.hermes.provider import FastmemProvider, register  # noqa: F401
'''

_YAML = """name: fastmem
version: {version}
description: "fastmem: one-file local memory with keyword, vector and knowledge-graph recall ranked by use, and an analogy slot."
"""

#: What to put in ``config.yaml`` to switch hermes to fastmem.
CONFIG_LINE = "memory:\n  provider: fastmem"


def install(hermes_home: str | os.PathLike | None = None, *, import_facts: bool = True) -> dict[str, Any]:
    """Write the plugin folder (replacing an older one) and, unless ``import_facts`` is
    False, copy the holographic provider's facts into the fastmem store once. Returns what
    was done: ``plugin_dir``, ``db_path``, ``imported`` (facts copied now), ``config`` (the lines
    to set) and ``config_path`` (the file to set them in)."""
    home = C.hermes_home(hermes_home)
    folder = home / "plugins" / "fastmem"
    tmp = folder.with_name(".fastmem.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (tmp / "__init__.py").write_text(_INIT, encoding="utf-8")
    (tmp / "plugin.yaml").write_text(_YAML.format(version=__version__), encoding="utf-8")
    if folder.exists():
        shutil.rmtree(folder)
    os.replace(tmp, folder)
    cfg = settings(home)
    db = C.db_path(cfg, home)
    imported = 0
    if import_facts:
        src = _holographic_db(home)
        if src is not None and src.exists():
            imported = import_holographic(src, db)
    return {"plugin_dir": str(folder), "db_path": str(db), "imported": imported, "config": CONFIG_LINE,
            "config_path": str(home / "config.yaml")}


def uninstall(hermes_home: str | os.PathLike | None = None) -> bool:
    """Remove the plugin folder (the store is kept). Returns whether there was one."""
    folder = C.hermes_home(hermes_home) / "plugins" / "fastmem"
    if not folder.exists():
        return False
    shutil.rmtree(folder)
    return True


def settings(home: Path) -> dict[str, Any]:
    try:
        return C.load(home)
    except Exception:  # no yaml module or a broken file: the defaults still give a path
        return dict(C.DEFAULTS)


def _holographic_db(home: Path) -> Path | None:
    path = home / "memory_store.db"
    cfg = home / "config.yaml"
    if cfg.exists():
        try:
            import yaml

            data = yaml.safe_load(cfg.read_text(encoding="utf-8-sig")) or {}
            custom = ((data.get("plugins") or {}).get("hermes-memory-store") or {}).get("db_path")
            if custom:
                path = Path(str(custom).replace("${HERMES_HOME}", str(home)).replace("$HERMES_HOME", str(home))).expanduser()
        except Exception:
            pass
    return path


def import_holographic(src: str | os.PathLike, dest: str | os.PathLike, *, scope: str | None = None) -> int:
    """Copy the facts of a holographic provider's store into a fastmem store (scope
    ``hermes`` by default: hermes' single-user CLI scope), with their category and tags in
    ``meta`` and their helpful votes as engagement. Done once per source file; returns how
    many facts were copied now. One transaction holds the memories, their metadata and votes
    and the mark that the file was imported: a crash imports everything or nothing, never
    twice."""
    import fastmem
    from fastmem.util.text import check_text

    src = Path(src)
    con = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT fact_id, content, category, tags, trust_score, helpful_count FROM facts "
                           "ORDER BY fact_id").fetchall()
    finally:
        con.close()
    key = f"imported:holographic:{src.resolve()}"
    Path(dest).parent.mkdir(parents=True, exist_ok=True)
    with fastmem.Memory(dest, progress=None) as mem:
        if mem.host.batches_done(key):
            return 0
        rows = [r for r in rows if isinstance(r[1], str) and r[1].strip()]
        texts = [r[1].strip() for r in rows]
        for t in texts:
            check_text(t, "a holographic fact")
        prep = mem.host.prepare(texts)
        metas = [{"category": cat or "general", "tags": tags or "", "holographic_fact_id": fid,
                  "holographic_trust": trust} for fid, _, cat, tags, trust, _ in rows]
        votes = [(int(helpful or 0), int(trust is not None and float(trust) < 0.3)) for *_, trust, helpful in rows]
        ids = mem.host.commit_prepared(prep, scope=scope or C.scope_for(), meta=metas, usage=votes, mark=(key, 0))
        if ids is None:  # another process imported it meanwhile
            return 0
    return len(ids)
