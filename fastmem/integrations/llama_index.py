"""LlamaIndex on fastmem (extra ``fastmem[llama-index]``): :class:`FastmemRetriever`, a
LlamaIndex ``BaseRetriever`` returning ``NodeWithScore``.

Each recalled memory is a ``TextNode`` (``id_`` is the memory id) whose metadata carries its
``id``, ``score`` and ``channels``; the analogy, when one qualifies, is one more node at the
end (node id ``"analogy-<id>"``: it may also be a hit) with ``metadata["kind"] == "analogy"``,
its ``reason`` and no score (its selection score
is not on the hits' scale). Only ``at`` and ``speaker`` reach the LLM with a node's text.

    from fastmem import Memory
    from fastmem.integrations.llama_index import FastmemRetriever

    retriever = FastmemRetriever(Memory("agent.db"), k=5)
    for n in retriever.retrieve("where does Alice live?"):
        print(n.score, n.node.get_content(), n.node.metadata["channels"])
"""

from __future__ import annotations

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("fastmem's LlamaIndex retriever needs llama-index-core: "
                      "pip install 'fastmem[llama-index]'") from exc

from . import analogy_metadata, hit_metadata, standing_metadata

__all__ = ["FastmemRetriever", "nodes"]

_SHOWN = ("at", "speaker")  # metadata the LLM sees beside a node's text


def _node(h, meta: dict, prefix: str = "") -> TextNode:
    hidden = [k for k in meta if k not in _SHOWN]
    return TextNode(id_=f"{prefix}{h.id}", text=h.text, metadata=meta, excluded_llm_metadata_keys=hidden,
                    excluded_embed_metadata_keys=list(meta))


def nodes(result) -> list[NodeWithScore]:
    """A :class:`fastmem.Recall` as LlamaIndex nodes: the hits, then the analogy if any, then
    the standing instructions and preferences that apply (``metadata["kind"]``
    "instruction" or "preference", node id ``"standing-<id>"``)."""
    out = [NodeWithScore(node=_node(h, hit_metadata(h)), score=float(h.score)) for h in result.hits]
    if result.analogy is not None:
        # its own node id: LlamaIndex drops a node whose id it has seen, and the analogy may
        # also be a hit
        out.append(NodeWithScore(node=_node(result.analogy, analogy_metadata(result.analogy), "analogy-"),
                                 score=None))
    for x in result.standing:  # the statement itself, under its own node id
        meta = standing_metadata(x)
        out.append(NodeWithScore(node=TextNode(id_=f"standing-{x.id}", text=x.sentence, metadata=meta,
                                               excluded_embed_metadata_keys=list(meta)), score=float(x.score)))
    return out


class FastmemRetriever(BaseRetriever):
    """A LlamaIndex retriever on :meth:`fastmem.Memory.recall`.

    ``memory`` is an open :class:`fastmem.Memory`; ``k`` hits; ``scope`` only this scope;
    ``session`` the conversation (inferred engagement, the analogy's repeat rule);
    ``analogy`` appends the analogy node; ``record`` counts the recall in the usage ledger;
    ``floor`` returns no nodes when none is grounded in the query (:mod:`fastmem.recall.evidence`).
    Other keywords go to LlamaIndex's ``BaseRetriever`` (``callback_manager``, ``verbose``).
    """

    def __init__(self, memory, *, k: int = 5, scope: str | None = None, session: str | None = None,
                 analogy: bool = True, record: bool = True, floor: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.memory, self.k, self.scope, self.session = memory, k, scope, session
        self.analogy, self.record, self.floor = analogy, record, floor

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return nodes(self.memory.recall(query_bundle.query_str, k=self.k, scope=self.scope, session=self.session,
                                        analogy=self.analogy, record=self.record, floor=self.floor))
