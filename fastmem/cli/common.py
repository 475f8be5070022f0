"""What every command shares: the usage error, output, opening the store."""

from __future__ import annotations

import argparse
import json
import os


class UsageError(Exception):
    """A command line that cannot run as given (exit 2)."""


class NothingFound(Exception):
    """A command that ran and found nothing: its message (why) goes to standard error, exit 3."""


#: Exit status of a command that found nothing (no hit, no analogy, no such entity, no path).
NOTHING = 3


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def _json_default(o):
    if hasattr(o, "isoformat"):
        return o.isoformat()
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, (set, tuple)):
        return list(o)
    return str(o)


def _out(obj) -> None:
    print(json.dumps(obj, indent=2, default=_json_default, ensure_ascii=False))


def _hit(h) -> dict:
    return {"id": h.id, "text": h.text, "score": h.score, "scope": h.scope, "at": h.at, "speaker": h.speaker,
            "source": h.source, "why": h.why}


def _recall_json(res) -> dict:
    """A :class:`fastmem.Recall` as ``--json`` prints it: every hit with its time, speaker,
    source and channel ranks, the analogy or why there is none, the standing statements."""
    return {"query": res.query, "hits": [_hit(h) for h in res.hits],
            "analogy": None if res.analogy is None else _hit(res.analogy), "analogy_reason": res.analogy_reason,
            "standing": [{"id": x.id, "kind": x.kind, "reach": x.reach, "sentence": x.sentence} for x in res.standing],
            "grounding": res.grounding, "timings_ms": res.timings_ms}


def _print_recall(res) -> None:
    print(f"> {res.query}")
    for x in res.standing:
        print(f"  standing {x.reach} {x.kind} [{x.id}]: {x.sentence}")
    for i, h in enumerate(res.hits, 1):
        chans = ", ".join(f"{c} #{v['rank']}" for c, v in h.why.items() if isinstance(v, dict) and "rank" in v)
        extra = f"; stands for {len(h.why['chunk']['suppressed'])} members" if "chunk" in h.why else ""
        said = " · ".join(x for x in (h.at.strftime("%Y-%m-%d %H:%M") if h.at else None, h.speaker,
                                      h.source) if x)
        print(f"{i:3d}. [{h.id}] {h.score:.4f}  {h.text}")
        print(f"       {said + ' | ' if said else ''}{chans}; use x{h.why['use']['weight']:.2f}{extra}")
    if res.analogy is not None:
        a = res.analogy
        print(f"  analogy [{a.id}] {a.text}")
        print(f"     {a.why['reason']}; surface {a.why['surface']:.2f}")
    elif res.analogy_reason:
        print(f"  no analogy: {res.analogy_reason}")


def _db(a) -> str:
    path = a.db or os.environ.get("FASTMEM_DB")
    if not path:
        raise UsageError(f"fastmem {a.cmd}: no store given: pass --db PATH or set FASTMEM_DB")
    return path


def _open(a, **kw):
    import fastmem

    if getattr(a, "embedder", None):
        kw.setdefault("embedder", a.embedder)
    return fastmem.Memory(_db(a), progress=None if not getattr(a, "quiet", False) else False, **kw)


def _open_existing(a, **kw):
    path = _db(a)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no store at {path}")
    return _open(a, **kw)


# -- commands ------------------------------------------------------------------------------
