"""The argument parser: every command, its options and its help."""

from __future__ import annotations

import argparse

from .common import _Parser
from .records import (
    cmd_analogies,
    cmd_categories,
    cmd_check,
    cmd_consolidate,
    cmd_demo,
    cmd_dissolve,
    cmd_expand,
    cmd_export,
    cmd_forget,
    cmd_graph,
    cmd_import,
    cmd_ingest,
    cmd_recall,
    cmd_reembed,
    cmd_remember,
    cmd_stats,
)
from .tools import cmd_bench, cmd_eval, cmd_hermes, cmd_mcp, cmd_ui, cmd_warmup


def _common(defaults: bool) -> argparse.ArgumentParser:
    """The options every command takes, before or after its name. The command's own copies
    default to nothing (``argparse.SUPPRESS``), so ``fastmem --json stats`` keeps the ``--json``
    given before the command instead of the command's default overwriting it."""
    d = (lambda v: v) if defaults else (lambda v: argparse.SUPPRESS)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", default=d(None), help="the store file (default: $FASTMEM_DB)")
    common.add_argument("--json", action="store_true", default=d(False), help="machine-readable output")
    common.add_argument("--debug", action="store_true", default=d(False), help="show tracebacks")
    common.add_argument("--quiet", action="store_true", default=d(False), help="no progress bars")
    common.add_argument("--embedder", default=d(None), choices=["minilm", "minilm-int8", "static"],
                        help="the embedding model of a new store (an existing one keeps its own): MiniLM "
                             "(default), MiniLM with int8 weights (faster, not the model's vectors) or static, "
                             "MiniLM distilled by model2vec (fastmem[static])")
    return common


def _server_options(p, port: int, env: str, when: str) -> None:
    """A server command's --host, --port, --scope, --allow-remote and --token-file."""
    p.add_argument("--host", default="127.0.0.1", help=f"{when}address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=port, help=f"{when}port (default {port})")
    p.add_argument("--scope", default=None, help="serve one tenant: every call or page reads and writes this scope only")
    p.add_argument("--allow-remote", action="store_true",
                   help=f"{when}allow binding an address other than localhost (needs a token)")
    p.add_argument("--token-file", default=None,
                   help=f"{when}a file whose first line is the token every request must carry (or set {env}); "
                        "required with --allow-remote")


def _parser() -> argparse.ArgumentParser:
    common = _common(defaults=False)
    ap = _Parser(prog="fastmem", description="Fast local memory for AI agents: one SQLite file, hybrid recall, "
                                             "a knowledge graph and an analogy slot.", parents=[_common(defaults=True)])
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    def add(name, fn, help, **kw):
        p = sub.add_parser(name, help=help, description=help, parents=[common], **kw)
        p.set_defaults(fn=fn)
        return p

    add.common = common

    for commands in (_writing_commands, _reading_commands, _store_commands, _tool_commands):
        commands(add)
    return ap


def _writing_commands(add) -> None:
    """Commands that write memories."""
    add("demo", cmd_demo, "store a few memories (embedded default store) and show what recall finds and why")
    p = add("warmup", cmd_warmup, "compile the kernels once for this install (a persistent cache) and load the models")
    p.add_argument("--no-models", action="store_true", help="only the kernels")
    p.add_argument("--static", action="store_true", help="also distil the static embedder (fastmem[static])")
    p = add("remember", cmd_remember, "store texts (arguments, or one per line on standard input)")
    p.add_argument("texts", nargs="*")
    p.add_argument("--scope", default="")
    p.add_argument("--source", default=None)
    p.add_argument("--at", default=None, help="when it happened (ISO 8601)")
    p.add_argument("--speaker", default=None, help="who said or wrote it")
    p.add_argument("--meta", default=None, help="JSON object stored with each memory")
    p.add_argument("--no-extract", action="store_true", help="no parsing: no facts, no structure")
    p = add("ingest", cmd_ingest, "store memories from text files (a line or paragraph each) or JSONL, or - for stdin")
    p.add_argument("files", nargs="+")
    p.add_argument("--format", default="auto", choices=["auto", "lines", "paragraphs", "jsonl"])
    p.add_argument("--scope", default="")
    p.add_argument("--source", default=None)
    p.add_argument("--speaker", default=None, help="who said or wrote it (a JSONL item's own \"speaker\" wins)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--no-extract", action="store_true", help="no parsing: no facts, no structure")
    p.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help="derive on a Ray cluster (the running one, a new local one, or ADDRESS); needs fastmem[ray]")
    p.add_argument("--shard-by", choices=["scope"], default=None,
                   help="with --ray: one store file per scope under the folder --db names")

def _reading_commands(add) -> None:
    """Commands that read: recall, analogies, the graph."""
    p = add("recall", cmd_recall, "recall memories for a query")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--scope", default=None)
    p.add_argument("--channels", default=None,
                   help="comma-separated subset of keyword,vector,graph,context,speaker (default: all, as the library)")
    p.add_argument("--no-analogy", action="store_true")
    p.add_argument("--floor", action="store_true",
                   help="the hosts' evidence floor: no hits when nothing stands above chance for the query")
    p.add_argument("--session", default=None, help="the conversation the query belongs to (the context channel)")
    rec = p.add_mutually_exclusive_group()
    rec.add_argument("--record", action="store_true",
                     help="count what is shown as surfaced in the usage ledger (a host's recall); by default a "
                          "recall from the command line only looks, as the UI does")
    rec.add_argument("--no-record", action="store_true", help=argparse.SUPPRESS)  # the default since 0.x; kept
    p = add("analogies", cmd_analogies, "memories with the same structure as a text")
    p.add_argument("text")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--scope", default=None)
    p.add_argument("--z-min", type=float, default=0.0)
    p = add("graph", cmd_graph, "the knowledge graph: an entity and its facts, its neighbours, or a path")
    p.add_argument("action", choices=["entity", "neighbours", "path"])
    p.add_argument("name")
    p.add_argument("other", nargs="?")
    p.add_argument("--depth", type=int, default=1, choices=[1, 2])
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--scope", default=None)

def _store_commands(add) -> None:
    """Commands on the store as a whole."""
    add("stats", cmd_stats, "counts, bytes, model, dimensions and schema version")
    p = add("forget", cmd_forget, "delete memories by id")
    p.add_argument("ids", nargs="+", type=int)
    p = add("consolidate", cmd_consolidate, "compress co-occurring memories into chunks (members kept)")
    p.add_argument("--scope", default=None)
    p = add("expand", cmd_expand, "the members of a chunk")
    p.add_argument("chunk_id", type=int)
    p = add("dissolve", cmd_dissolve, "undo a chunk completely")
    p.add_argument("chunk_id", type=int)
    p = add("categories", cmd_categories, "emergent categories: list, propose, approve, reject, revert")
    p.add_argument("action", choices=["list", "propose", "approve", "reject", "revert"])
    p.add_argument("id", nargs="?", type=int)
    p.add_argument("--status", default=None, choices=["proposed", "approved", "rejected"])
    p.add_argument("--scope", default=None)
    p = add("reembed", cmd_reembed, "recompute every vector with the default model and rebuild the index")
    p.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help="embed on a Ray cluster (the running one, a new local one, or ADDRESS); needs fastmem[ray]")
    p = add("check", cmd_check, "verify the file and every derived structure (exit 1 on problems)")
    p.add_argument("--repair", action="store_true", help="rebuild what can be rebuilt")
    p = add("export", cmd_export, "write everything needed to rebuild the store as JSONL")
    p.add_argument("--out", default="-", help="file (default: standard output)")
    p.add_argument("--scope", default=None)
    p.add_argument("--vectors", action="store_true",
                   help="include what the models derived: embeddings, structural codes, window and statement "
                        "vectors (an import with the same model embeds, parses and encodes nothing); a whole "
                        "store's export to a file also writes its index graph beside it (OUT.hnsw), which an "
                        "import into an empty store loads instead of building")
    p = add("import", cmd_import, "rebuild memories from an export")
    p.add_argument("file")

def _tool_commands(add) -> None:
    """The hermes installer, the bench and the evaluations."""
    p = add("hermes", cmd_hermes, "install or remove the hermes-agent memory provider")
    acts = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    inst = acts.add_parser("install", parents=[add.common], help="install the provider plugin into a hermes home",
                           description="write $HERMES_HOME/plugins/fastmem/, copy the holographic provider's facts "
                                       "once, compile the kernels, and print the config line that switches to it")
    inst.add_argument("--hermes-home", default=None, help="the hermes home (default: hermes' own, $HERMES_HOME, "
                                                          "~/.hermes)")
    inst.add_argument("--no-import", action="store_true", help="do not copy the holographic provider's facts")
    rm = acts.add_parser("uninstall", parents=[add.common], help="remove the provider plugin (the store is kept)",
                         description="remove $HERMES_HOME/plugins/fastmem/; the store stays where it is and is named")
    rm.add_argument("--hermes-home", default=None, help="the hermes home (default as for install)")
    p = add("mcp", cmd_mcp, "serve the store to MCP clients (Claude Desktop, Cursor, agent frameworks); "
                            "needs fastmem[mcp]")
    p.add_argument("--transport", default="stdio", choices=["stdio", "http"],
                   help="stdio (the client starts the server) or streamable HTTP")
    _server_options(p, 8765, "FASTMEM_MCP_TOKEN", "http: ")
    p.add_argument("--read-only", action="store_true", help="offer no tool that writes; recalls are not recorded")
    p.add_argument("--workers", type=int, default=1,
                   help="http: serve from this many processes on one port (each loads the models, ~650 MB; the "
                        "transport is then stateless); one process uses about 1.2 cores (default 1)")
    p = add("ui", cmd_ui, "a local web app to look inside the store: recall and why, each memory, health")
    _server_options(p, 8777, "FASTMEM_UI_TOKEN", "")
    p.add_argument("--read-only", action="store_true", help="show no control that writes; refuse every change")
    p = add("bench", cmd_bench, "latency of ingest and of each recall stage against store size")
    p.add_argument("--size", default="1k,10k", help="comma-separated sizes, e.g. 1k,10k,100k")
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--json-file", "--json-out", dest="json_file", default=None, help="write the results as JSON")
    p.add_argument("--plot", default=None, help="draw latency against size (PNG; needs fastmem[plot])")
    p.add_argument("--cache", default=None, help="folder for the built stores (default: a temporary one)")
    p = add("eval", cmd_eval, "quality on public data: LoCoMo recall or ProPara-Logy analogies; the development "
                              "chats (standing instructions, preferences, order); the story sets (the slot's picks, "
                              "or a multiple-choice file); the reading set (facts a person would store)")
    p.add_argument("dataset", choices=["locomo", "proparalogy", "chats", "stories", "reading"])
    p.add_argument("path", help="a LoCoMo JSON file or folder / the ProPara-Logy silver CSV or its folder / the "
                                "chats JSON (tests/data/chats.json) / the story sets (tests/data/stories.json, "
                                "tests/data/analogy_mc.json) / a reading set (tests/data/reading.json, reading_dev2.json, reading_dev3.json)")
    p.add_argument("--fusion", default=None, choices=["auto", "score", "learned", "rrf"],
                   help="locomo, chats: how the channels are fused (default: the library's)")
    p.add_argument("--no-baselines", action="store_true")
    p.add_argument("--mc", action="store_true", help="proparalogy: also the four-way multiple choice")
    p.add_argument("--no-connectives", action="store_true",
                   help="proparalogy: remove the sequence connectives (after, then, finally...) from every paragraph "
                        "and turn (the set's distractors carry them, its targets rarely)")
    p.add_argument("--ranker", action="store_true", help="proparalogy: the slot with the learned ranker")
    p.add_argument("--cv", type=int, default=0, metavar="N",
                   help="proparalogy: the slot's figures as means over N folds grouped by source process (with "
                        "--ranker: the learned ranker cross-validated, refitted per fold)")
    p.add_argument("--fit", action="store_true",
                   help="proparalogy: also fit the ranker on every row and write it (default: the installed "
                        "fastmem/ranker_weights.py)")
    p.add_argument("--out", default=None, help="with --fit: where to write the ranker instead")
    p.add_argument("--writes", default="full", choices=["full", "context", "plain", "single"],
                   help="locomo: what each turn is written with besides its text: source, at and speaker "
                        "(full), source and at (context), nothing (plain; single: nothing, and one remember "
                        "call per turn)")
