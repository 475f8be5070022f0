"""Settings of the hermes provider: ``plugins.fastmem`` in ``$HERMES_HOME/config.yaml``.

The store's embedding model and code dimension are not settings here: they live in the store
file itself, so no change of config can ever mix incompatible vectors in one store.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["DEFAULTS", "SCHEMA", "hermes_home", "load", "save", "db_path", "scope_for"]

#: Every setting with its default.
DEFAULTS: dict[str, Any] = {
    "db_path": "$HERMES_HOME/fastmem/memory.db",
    "z_min": 2.0,
    "analogy_alpha": 0.05,
    "analogy": True,
    "evidence_floor": True,
    "prefetch_k": 6,
    "prefetch_chars": 2000,
    "sync_turn": "both",
}

#: ``get_config_schema()``: what ``hermes memory setup`` asks.
SCHEMA: list[dict[str, Any]] = [
    {"key": "db_path", "description": "fastmem store file ($HERMES_HOME is expanded)", "default": DEFAULTS["db_path"]},
    {"key": "analogy_alpha", "description": "Analogy gate: most chance matches expected in the store (E-value)",
     "default": str(DEFAULTS["analogy_alpha"])},
    {"key": "z_min", "description": "Analogy candidates: standard deviations above the store's mean structural score",
     "default": str(DEFAULTS["z_min"])},
    {"key": "evidence_floor", "description": "Show recalled memories only when one is grounded in the message "
     "(no chance matches for chit-chat)", "default": "true", "choices": ["true", "false"]},
    {"key": "analogy", "description": "Show an analogy line in the recalled context", "default": "true",
     "choices": ["true", "false"]},
    {"key": "prefetch_k", "description": "Memories recalled before each turn", "default": str(DEFAULTS["prefetch_k"])},
    {"key": "prefetch_chars", "description": "Most characters of recalled context per turn",
     "default": str(DEFAULTS["prefetch_chars"])},
    {"key": "sync_turn", "description": "What each completed turn stores: both sides, the user's text, or nothing",
     "default": DEFAULTS["sync_turn"], "choices": ["both", "user", "none"]},
]


def hermes_home(explicit: str | os.PathLike | None = None) -> Path:
    """The hermes home: ``explicit``, else hermes' own resolution when hermes-agent is
    installed, else ``$HERMES_HOME``, else ``~/.hermes``."""
    if explicit:
        return Path(explicit).expanduser()
    try:
        from hermes_constants import get_hermes_home

        return Path(get_hermes_home())
    except Exception:
        env = os.environ.get("HERMES_HOME", "").strip()
        return Path(env).expanduser() if env else Path.home() / ".hermes"


def _bool(v) -> bool:
    return v if isinstance(v, bool) else str(v).strip().lower() in ("1", "true", "yes", "on")


def load(home: Path) -> dict[str, Any]:
    """Settings from ``home/config.yaml`` over :data:`DEFAULTS`, typed; unknown keys kept."""
    cfg = dict(DEFAULTS)
    path = home / "config.yaml"
    if path.exists():
        import yaml  # a hermes-agent dependency

        with open(path, encoding="utf-8-sig") as f:
            data = yaml.safe_load(f) or {}
        mine = (data.get("plugins") or {}).get("fastmem") or {}
        if isinstance(mine, dict):
            cfg.update(mine)
    cfg["z_min"] = float(cfg["z_min"])
    cfg["analogy"] = _bool(cfg["analogy"])
    cfg["analogy_alpha"] = float(cfg["analogy_alpha"])
    cfg["evidence_floor"] = _bool(cfg["evidence_floor"])
    cfg["prefetch_k"] = max(1, int(cfg["prefetch_k"]))
    cfg["prefetch_chars"] = max(200, int(cfg["prefetch_chars"]))
    if cfg["sync_turn"] not in ("both", "user", "none"):
        raise ValueError(f"plugins.fastmem.sync_turn must be both, user or none, not {cfg['sync_turn']!r}")
    return cfg


def save(values: dict[str, Any], home: Path) -> None:
    """Write ``values`` under ``plugins.fastmem`` in ``home/config.yaml`` (other keys kept)."""
    import yaml

    path = home / "config.yaml"
    data = {}
    if path.exists():
        with open(path, encoding="utf-8-sig") as f:
            data = yaml.safe_load(f) or {}
    plugins = data.setdefault("plugins", {}) or {}
    data["plugins"] = plugins
    plugins["fastmem"] = {**(plugins.get("fastmem") or {}), **values}
    home.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".yaml.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        yaml.safe_dump(data, f, default_flow_style=False, sort_keys=False)
    os.replace(tmp, path)


def db_path(cfg: dict[str, Any], home: Path) -> Path:
    """The store path: ``db_path`` with ``$HERMES_HOME`` / ``~`` expanded."""
    raw = str(cfg.get("db_path") or DEFAULTS["db_path"])
    raw = raw.replace("${HERMES_HOME}", str(home)).replace("$HERMES_HOME", str(home))
    return Path(raw).expanduser()


def scope_for(user_id: str | None = None, agent_identity: str | None = None) -> str:
    """The store scope of a hermes user: ``hermes``, plus ``/profile:<name>`` for a profile
    other than the default and ``/user:<id>`` for a gateway user. One user's memories are
    never recalled for another."""
    scope = "hermes"
    if agent_identity and agent_identity != "default":
        scope += f"/profile:{agent_identity}"
    if user_id:
        scope += f"/user:{user_id}"
    return scope
