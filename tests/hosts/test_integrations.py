"""The framework adapters against the real langchain-core, langgraph and llama-index-core:
their abstract interfaces satisfied, LangGraph's store contract checked against its own
in-memory store, and the analogy carried through."""

import asyncio
from typing import TypedDict

import pytest
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from llama_index.core.schema import MetadataMode, NodeWithScore

import fastmem
from fastmem.integrations.langchain import FastmemRetriever, FastmemStore
from fastmem.integrations.llama_index import FastmemRetriever as LlamaRetriever
from tests.shared import FILLER, OWNS, SAME_TOPIC

QUERY = "My friend Bob owns a red car."


@pytest.fixture(scope="module")
def owned(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("owned") / "m.db")
    with fastmem.Memory(path) as m:
        m.remember_many(FILLER)
        target, same = m.remember(OWNS), m.remember(SAME_TOPIC)
        yield m, target, same


def test_langchain_retriever_returns_documents_with_channels_and_the_analogy_last(owned):
    m, target, same = owned
    r = FastmemRetriever(memory=m, k=3, record=False)
    assert isinstance(r, BaseRetriever)
    docs = r.invoke(QUERY)
    hits, last = docs[:-1], docs[-1]
    assert all(isinstance(d, Document) for d in docs) and len(hits) == 3
    assert hits[0].metadata["id"] == same and hits[0].id == str(same) and hits[0].page_content == SAME_TOPIC
    assert all(d.metadata["kind"] == "hit" and d.metadata["channels"] for d in hits)
    assert [d.metadata["score"] for d in hits] == sorted((d.metadata["score"] for d in hits), reverse=True)
    assert last.metadata["kind"] == "analogy" and last.metadata["id"] == target
    assert last.metadata["reason"].startswith("same structure") and last.metadata["z"] >= 2
    assert asyncio.run(r.ainvoke(QUERY)) == docs  # the async path gives the same
    chain = r | (lambda ds: [d.metadata["id"] for d in ds if d.metadata["kind"] == "analogy"])
    assert chain.invoke(QUERY) == [target]
    assert all(d.metadata["kind"] == "hit" for d in FastmemRetriever(memory=m, k=3, analogy=False,
                                                                     record=False).invoke(QUERY))


def test_llama_index_retriever_returns_nodes_and_keeps_bookkeeping_from_the_llm(owned):
    m, target, same = owned
    got = LlamaRetriever(m, k=3, record=False).retrieve(QUERY)
    assert all(isinstance(n, NodeWithScore) for n in got) and len(got) == 4
    assert got[0].node.node_id == str(same) and got[0].score == pytest.approx(got[0].node.metadata["score"])
    assert got[-1].node.metadata["kind"] == "analogy" and got[-1].node.metadata["id"] == target and got[-1].score is None
    shown = got[0].node.get_content(metadata_mode=MetadataMode.LLM)
    assert SAME_TOPIC in shown and "channels" not in shown
    again = asyncio.run(LlamaRetriever(m, k=3, record=False).aretrieve(QUERY))
    assert [n.node.node_id for n in again] == [n.node.node_id for n in got]


# -- LangGraph's store contract -----------------------------------------------------------------
OPS = [
    ("put", ("user", "alice"), "home", {"text": "Alice moved to Berlin in May.", "year": 2023}),
    ("put", ("user", "alice"), "tea", {"text": "Alice prefers green tea over coffee.", "year": 2021}),
    ("put", ("user", "bob"), "job", {"text": "Bob works for Initech as a data engineer.", "year": 2022}),
    ("put", ("user", "alice", "work"), "desk", {"text": "Alice sits by the window on the third floor.", "year": 2024}),
    ("put", ("team", "eng"), "standup", {"text": "The standup is at nine every weekday.", "year": 2024}),
    ("put", ("user", "alice"), "home", {"text": "Alice moved from Berlin to Lisbon in June.", "year": 2024}),
    ("delete", ("user", "alice"), "tea"),
    ("delete", ("user", "alice"), "never-written"),
]


def _apply(store):
    for op in OPS:
        if op[0] == "put":
            store.put(op[1], op[2], op[3])
        else:
            store.delete(op[1], op[2])


def _view(items):
    return sorted((i.namespace, i.key, tuple(sorted(i.value.items()))) for i in items)


def test_langgraph_store_keeps_the_contract_of_langgraphs_own_store(tmp_path):
    ref = InMemoryStore()
    with fastmem.Memory(str(tmp_path / "m.db")) as m:
        ours = FastmemStore(m)
        assert isinstance(ours, BaseStore)
        _apply(ref)
        _apply(ours)
        for ns, key in [(("user", "alice"), "home"), (("user", "alice"), "tea"), (("user", "bob"), "job"),
                        (("user", "bob"), "home"), (("team", "eng"), "standup")]:
            a, b = ref.get(ns, key), ours.get(ns, key)
            assert (a is None) == (b is None), (ns, key)
            if a is not None:
                assert (a.namespace, a.key, a.value) == (b.namespace, b.key, b.value)
                assert b.created_at <= b.updated_at
        for prefix, flt in [(("user",), None), (("user", "alice"), None), (("user",), {"year": 2024}),
                            (("user",), {"year": {"$gte": 2023}}), (("team",), {"year": {"$lt": 2024}}), (("x",), None)]:
            assert _view(ours.search(prefix, filter=flt, limit=50)) == _view(ref.search(prefix, filter=flt, limit=50))
        assert len(ours.search(("user",), limit=2)) == 2 and len(ours.search(("user",), limit=2, offset=2)) == 1
        for kw in [{}, {"prefix": ("user",)}, {"suffix": ("eng",)}, {"max_depth": 2}, {"prefix": ("user", "*")},
                   {"limit": 1, "offset": 1}]:
            assert ours.list_namespaces(**kw) == ref.list_namespaces(**kw), kw
        assert asyncio.run(ours.aget(("user", "bob"), "job")).value["text"].startswith("Bob")


def test_langgraph_store_search_with_a_query_is_fastmems_recall_within_the_namespace(tmp_path):
    path = str(tmp_path / "m.db")
    with fastmem.Memory(path) as m:
        m.remember_many(FILLER, scope="user.bob")  # another tenant's memories that are not store items
        store = FastmemStore(m)
        _apply(store)
        store.put(("user", "alice"), "secret", {"text": "Alice's bank PIN is 4321."}, index=False)
        store.put(("user", "bob"), "pin", {"text": "Bob's bank PIN is 9876."})
        got = store.search(("user", "alice"), query="Where does Alice live now?", limit=3)
        assert got[0].key == "home" and "Lisbon" in got[0].value["text"] and got[0].score > 0
        assert all(i.namespace[:2] == ("user", "alice") for i in got)
        pins = store.search(("user", "alice"), query="bank PIN", limit=5)
        assert "secret" not in {i.key for i in pins} and "pin" not in {i.key for i in pins}
        assert {i.key for i in store.search(("user", "alice"), limit=10)} >= {"secret"}  # listed, not searched
        both = store.search(("user",), query="bank PIN", limit=2)
        assert both[0].key == "pin" and "secret" not in {i.key for i in both}
        recent = store.search(("user",), query="Alice", filter={"year": {"$gte": 2024}}, limit=10)
        assert {i.key for i in recent} == {"home", "desk"}
    with fastmem.Memory(path) as m:  # a store on a file: a new process sees the items
        assert FastmemStore(m).get(("user", "alice"), "home").value["year"] == 2024


def test_a_langgraph_graph_uses_fastmem_as_its_long_term_memory(tmp_path):
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        user: str
        message: str
        recalled: list

    def remember_then_recall(state: State, *, store: BaseStore):
        ns = ("user", state["user"])
        store.put(ns, f"m{len(store.search(ns, limit=100))}", {"text": state["message"]})
        return {"recalled": [i.value["text"] for i in store.search(ns, query="Where does she live?", limit=1)]}

    g = StateGraph(State)
    g.add_node("memory", remember_then_recall)
    g.add_edge(START, "memory")
    g.add_edge("memory", END)
    with fastmem.Memory(str(tmp_path / "m.db")) as m:
        app = g.compile(store=FastmemStore(m))
        app.invoke({"user": "alice", "message": "Alice lives in Porto near the river.", "recalled": []})
        app.invoke({"user": "alice", "message": "Alice's favourite dish is bacalhau.", "recalled": []})
        out = app.invoke({"user": "bob", "message": "Bob lives in Leeds.", "recalled": []})
        assert out["recalled"] == ["Bob lives in Leeds."]
        out = app.invoke({"user": "alice", "message": "Alice plays padel on Sundays.", "recalled": []})
        assert out["recalled"] == ["Alice lives in Porto near the river."]
        assert m.count(scope="user.alice") == 3
