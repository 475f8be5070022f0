"""Commands around the store: the hermes installer, the MCP server, warm-up, the bench and
the evaluations."""

from __future__ import annotations

import json
import os
import time

from ..errors import InvalidInput
from .common import UsageError, _db, _out


def cmd_hermes(a) -> int:
    from ..hermes import install as I

    if a.action == "install":
        out = I.install(a.hermes_home, import_facts=not a.no_import)
        t0 = time.perf_counter()
        from .. import kernels

        kernels.warmup()  # a process that warms up later (a backend, `fastmem bench`) loads them compiled
        out["warmup_s"] = round(time.perf_counter() - t0, 2)
        if a.json:
            _out(out)
        else:
            print(f"installed {out['plugin_dir']} (store: {out['db_path']}; holographic facts imported: "
                  f"{out['imported']}; kernels compiled in {out['warmup_s']} s)")
            print(f"now set in {out['config_path']}:\n" + out["config"])
    else:
        gone = I.uninstall(a.hermes_home)
        home = I.C.hermes_home(a.hermes_home)
        store = I.C.db_path(I.settings(home), home)
        if a.json:
            _out({"removed": gone, "store": str(store), "store_exists": store.exists()})
            return 0
        print("removed the fastmem plugin folder" if gone else "not installed")
        print(f"the store is kept: {store}" + ("" if store.exists() else " (not written yet)"))
        print(f"hermes now needs another memory provider: in {home / 'config.yaml'} set memory.provider "
              "(for example `provider: holographic`) or remove the memory section")
    return 0


def cmd_mcp(a) -> int:
    try:
        from .. import mcp_server
    except ImportError as exc:
        raise UsageError(f"fastmem mcp: {exc}") from None
    if a.token_file and a.transport != "http":
        raise UsageError("fastmem mcp: --token-file is for --transport http (stdio has no network side)")
    if a.workers != 1 and a.transport != "http":
        raise UsageError("fastmem mcp: --workers is for --transport http (a stdio client talks to one process)")
    if a.workers < 1:
        raise UsageError(f"fastmem mcp: --workers must be at least 1, not {a.workers}")
    # FASTMEM_MCP_TOKEN: the http transport's only
    token = _server_token(a, "FASTMEM_MCP_TOKEN", "a bearer token") if a.transport == "http" else None
    mcp_server.serve(_db(a), transport=a.transport, host=a.host, port=a.port, scope=a.scope,
                     read_only=a.read_only, allow_remote=a.allow_remote, token=token, workers=a.workers)
    return 0


def cmd_ui(a) -> int:
    try:
        from .. import ui
    except ImportError as exc:
        raise UsageError(f"fastmem ui: {exc} (pip install 'fastmem[ui]')") from None
    token = _server_token(a, "FASTMEM_UI_TOKEN", "a token")
    ui.serve(_db(a), host=a.host, port=a.port, scope=a.scope, read_only=a.read_only, allow_remote=a.allow_remote,
             token=token)
    return 0


def _server_token(a, env: str, kind: str) -> str | None:
    """A server command's token (``--token-file``, else ``env``), checked; a bind other than
    loopback without ``--allow-remote`` or without a token is a usage error."""
    from ..serving import LOCAL_HOSTS, check_token

    token = _token(a, env)
    if a.host not in LOCAL_HOSTS:
        if not a.allow_remote:
            raise UsageError(f"fastmem {a.cmd}: --host {a.host} exposes the memory to the network; add --allow-remote "
                             f"(with {kind}: --token-file FILE) if that is what you want")
        if token is None:
            raise UsageError(f"fastmem {a.cmd}: --host {a.host} needs {kind}: write one to a file and pass "
                             f"--token-file FILE, or set {env} (e.g. python -c 'import secrets; "
                             "print(secrets.token_urlsafe(32))')")
    if token is not None:
        try:
            check_token(token)
        except InvalidInput as exc:
            raise UsageError(f"fastmem {a.cmd}: {exc}") from None
    return token


def _token(a, env: str = "FASTMEM_MCP_TOKEN") -> str | None:
    """The token: the first line of ``--token-file``, else the environment variable ``env``."""
    if a.token_file:
        try:
            with open(a.token_file, encoding="utf-8") as fh:
                return fh.readline().strip()
        except OSError as exc:
            raise UsageError(f"fastmem {a.cmd}: cannot read --token-file {a.token_file}: "
                             f"{exc.strerror or exc}") from None
    return os.environ.get(env) or None


def cmd_warmup(a) -> int:
    """Compile the kernels into the persistent cache and, unless --no-models, load the models once."""
    import fastmem

    from ..kernels.hrr import cache_dir

    t0 = time.perf_counter()
    fastmem.warmup(static=a.static)
    t1 = time.perf_counter()
    if not a.no_models:
        fastmem.warmup(models=True)
    t2 = time.perf_counter()
    summary = {"kernel_cache": cache_dir(), "kernels_s": round(t1 - t0, 2),
               "models_s": None if a.no_models else round(t2 - t1, 2)}
    if a.json:
        _out(summary)
    else:
        print(f"kernels ready in {summary['kernels_s']} s (cache: {summary['kernel_cache']})"
              + ("" if a.no_models else f"; models loaded in {summary['models_s']} s"))
    return 0


def cmd_bench(a) -> int:
    from ..evaluate import bench as B

    sizes = [B.parse_size(s) for s in a.size.split(",")]
    res = B.run(sizes, queries=a.queries, cache=a.cache)
    if a.json_file:
        with open(a.json_file, "w") as f:
            json.dump(res, f, indent=2)
    if a.plot:
        B.plot(res, a.plot)
    print(B.table(res))
    return 0


def _slot_table(rep: dict, head: str) -> None:
    """The analogy slot's figures of each method in ``rep``, one line each."""
    print(f"{head:44s} {'fire':>6s} {'prec':>6s} {'strict':>6s} {'distr':>6s} {'hit':>6s}")
    for name, r in rep.items():
        if isinstance(r, dict) and "fire" in r:
            print(f"{name:44s} {r['fire']:6.3f} {r['precision']:6.3f} {r['precision_strict']:6.3f} "
                  f"{r['distractor']:6.3f} {r['hit']:6.3f}")


def _eval_reading(a) -> int:
    from ..evaluate import reading as RD

    data = RD.load(a.path)
    if data is None:
        raise FileNotFoundError(f"no reading set at {a.path}")
    res = RD.evaluate(data, memory_kw={"embedder": a.embedder} if a.embedder else None)
    if a.json:
        _out(res)
    else:
        for split in ("dev", "heldout", "all"):
            if split in res:
                print(f"{split:<8} " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                                 for k, v in res[split].items()))
    return 0


def _eval_stories(a) -> int:
    from ..evaluate import stories as ST

    data = ST.load(a.path)
    if data is None:
        raise FileNotFoundError(f"no story sets at {a.path}")
    if "items" in data:  # the multiple-choice form
        res = ST.multiple_choice(data)
        if a.json:
            _out(res)
        else:
            for split, row in res.items():
                print(f"{split:<8} " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                                 for k, v in row.items()))
        return 0
    res = ST.evaluate(data, memory_kw={"embedder": a.embedder} if a.embedder else None)
    if a.json:
        _out(res)
    else:
        print(ST.table(res))
    return 0


def cmd_eval(a) -> int:
    if a.dataset == "reading":
        return _eval_reading(a)
    if a.dataset == "stories":
        return _eval_stories(a)
    if a.dataset == "chats":
        from ..evaluate import chats as CH

        data = CH.load(a.path)
        if data is None:
            raise FileNotFoundError(f"no chats file at {a.path}")
        kw = ({"embedder": a.embedder} if a.embedder else {}) | ({"fusion": a.fusion} if a.fusion else {})
        res = CH.evaluate(data, baselines=not a.no_baselines, memory_kw=kw or None)
        if a.json:
            _out(res)
        else:
            print(CH.table(res))
        return 0
    if a.dataset == "locomo":
        from ..evaluate import locomo as L

        if not L.conversation_files(a.path):
            raise FileNotFoundError(f"no LoCoMo conversation files at {a.path}")
        res = L.evaluate_all(a.path, fusion=a.fusion, writes=a.writes,
                             memory_kw={"embedder": a.embedder} if a.embedder else None)
        if a.json:
            _out(res)
        else:
            for name, r in res.items():
                print(f"\n{name} ({r['fused']['questions']} questions)\n{L.table(r)}")
    else:
        from .. import AnalogySettings
        from ..evaluate import proparalogy as P

        if a.cv == 1 or a.cv < 0:
            raise UsageError("fastmem eval: --cv needs at least 2 folds")
        if a.fit or (a.cv and a.ranker):
            out = (a.out or P.SHIPPED_WEIGHTS) if a.fit else None
            rep = _silver_report(P.fit(a.path, folds=a.cv or 5, out=out), a, P)
            if not a.json:
                _slot_table(rep, f"slot, {rep['folds']}-fold cv by process")
                print(f"target above its own distractor in the ranker's probability: "
                      f"{rep['learned (cv)']['target_beats_distractor']:.3f}")
                if a.mc:
                    _print_mc(rep["multiple choice"])
                if out:
                    print(f"ranker written to {out}")
            return 0
        rep = _silver_report(P.run(a.path, baselines=not a.no_baselines, connectives=not a.no_connectives,
                                   folds=a.cv or None, memory_kw={"analogy": AnalogySettings(ranker=True)} if a.ranker else None), a, P)
        if not a.json:
            _slot_table(rep, "method" + (" (connectives removed)" if a.no_connectives else ""))
            f = rep["fastmem"]
            print(f"target outranks its own distractor: {f['target_beats_distractor']:.3f} of rows in the slot's order "
                  f"(score ties {f['ties']:.3f}, broken by the stage-1 alignment, {f['ties_left']:.3f} left), "
                  f"{f['target_beats_distractor_similarity']:.3f} in structural_similarity")
            if a.mc:
                _print_mc(rep["multiple choice"])
    return 0


def _silver_report(rep: dict | None, a, P) -> dict:
    """A ProPara-Logy report with the multiple choice added (``--mc``), printed as JSON with
    ``--json``; FileNotFoundError when the silver CSV is not at the path."""
    if rep is None:
        raise FileNotFoundError(f"no ProPara-Logy silver CSV at {a.path}")
    if a.mc:
        rep["multiple choice"] = P.multiple_choice(a.path)
    if a.json:
        _out(rep)
    return rep


def _print_mc(mc: dict) -> None:
    print(f"multiple choice: structural_similarity {mc['structural_similarity']:.3f}, "
          f"MiniLM cosine {mc['MiniLM cosine']:.3f} (chance 0.25)")


# -- parser --------------------------------------------------------------------------------
