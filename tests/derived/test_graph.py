"""Knowledge graph: canonical names, aliases, review candidates, relations, extractor, channel."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

import fastmem
from fastmem.errors import NotFound
from fastmem.reader.canon import canon_relation, fold_name
from fastmem.reader.extract import ChatExtractor, SpacyExtractor
from tests.facts import query_facts


def test_aliases_collapse_to_one_node(mem):
    a = mem.remember("Acme Inc. acquired Widget LLC in 2019.")
    b = mem.remember("ACME bought Gadget Co last year.", triples=[("ACME", "bought", "Gadget Co")])
    c = mem.remember("The Acme Corporation is headquartered in Toledo.")
    nodes = {e.id for name in ("Acme Inc.", "ACME", "the Acme Corporation", "acme corp") for e in mem.graph.entity(name)}
    assert len(nodes) == 1
    facts = mem.graph.facts_about("acme")
    assert {f.memory_id for f in facts} >= {a, b, c}
    assert {(f.relation, fold_name(f.object)) for f in facts} >= {("acquire", "widget"), ("acquire", "gadget")}


def test_homonyms_with_different_types_stay_distinct(mem):
    mem.remember("Apple released a new laptop.", triples=[("Apple", "released", "laptop", "organisation", "thing")])
    mem.remember("Priya ate an apple.", triples=[("Priya", "ate", "apple", "person", "thing")])
    apples = mem.graph.entity("apple")
    assert len(apples) == 2 and {e.type for e in apples} == {"organisation", "thing"}
    # an untyped later mention joins an existing node instead of making a third
    mem.remember("Apple is in Cupertino.", triples=[("Apple", "is in", "Cupertino")])
    assert len(mem.graph.entity("apple")) == 2


def test_fuzzy_merge_and_review_candidates(mem):
    mem.remember("x", triples=[("Johnathan Smithers", "owns", "boat", "person", "thing")])
    mem.remember("y", triples=[("Jonathan Smithers", "sold", "bike", "person", "thing")])  # one letter off: merged
    assert mem.graph.entity("Jonathan Smithers")[0].id == mem.graph.entity("Johnathan Smithers")[0].id
    mem.remember("z", triples=[("Johnathan Smith", "likes", "tea", "person", "thing")])  # borderline: candidate
    cands = mem.graph.alias_candidates()
    assert any({c["name"], c["other"]} == {"Johnathan Smith", "Johnathan Smithers"} for c in cands), cands
    assert mem.graph.entity("Johnathan Smith")[0].id != mem.graph.entity("Johnathan Smithers")[0].id
    cid = next(c["id"] for c in cands if "Johnathan Smith" in (c["name"], c["other"]))
    mem.graph.review_alias(cid, accept=True)
    assert mem.graph.entity("Johnathan Smith")[0].id == mem.graph.entity("Johnathan Smithers")[0].id
    assert {f.relation for f in mem.graph.facts_about("Johnathan Smith")} == {"own", "sell", "like"}
    with pytest.raises(NotFound):
        mem.graph.review_alias(cid, accept=False)


def test_one_possessors_things_are_judged_by_the_thing(mem):
    # "Caroline's path" and "Caroline's art" share "Caroline's " (a ratio of 88 over the whole
    # names) and name two different things: no merge, and nothing for a person to review
    mem.remember("a", triples=[("Caroline", "follows", "Caroline's path", "person", "thing")])
    mem.remember("b", triples=[("Caroline", "shows", "Caroline's art", "person", "thing")])
    mem.remember("c", triples=[("Caroline", "feels", "Caroline's emotions", "person", "thing")])
    mem.remember("d", triples=[("Caroline", "has", "Caroline's ambitions", "person", "thing")])
    assert mem.graph.entity("Caroline's path")[0].id != mem.graph.entity("Caroline's art")[0].id
    assert mem.graph.alias_candidates() == []
    # her own path is her path; a plural is as close as the whole names say (a candidate)
    mem.remember("e", triples=[("Caroline", "walks", "Caroline's own path", "person", "thing")])
    assert mem.graph.entity("Caroline's own path")[0].id == mem.graph.entity("Caroline's path")[0].id
    mem.remember("f", triples=[("Caroline", "writes", "Caroline's story", "person", "thing")])
    mem.remember("g", triples=[("Caroline", "tells", "Caroline's stories", "person", "thing")])
    pairs = [{c["name"], c["other"]} for c in mem.graph.alias_candidates()]
    assert pairs == [{"Caroline's story", "Caroline's stories"}], pairs


def test_distinct_short_names_not_fuzzy_merged(mem):
    mem.remember("a", triples=[("Anna", "likes", "tea", "person", "thing")])
    mem.remember("b", triples=[("Anne", "likes", "coffee", "person", "thing")])
    assert mem.graph.entity("Anna")[0].id != mem.graph.entity("Anne")[0].id


def test_inverse_relations_flip(mem):
    m1 = mem.remember("The red car belongs to Sam.")
    m2 = mem.remember("Widget LLC was acquired by Globex.")
    m3 = mem.remember("x", triples=[("Initech", "employs", "Peter", "organisation", "person")])
    f1, = [f for f in mem.graph.facts(m1) if f.relation == "own"]
    assert (fold_name(f1.subject), fold_name(f1.object)) == ("sam", "red car")
    f2, = [f for f in mem.graph.facts(m2) if f.relation == "acquire"]
    assert (fold_name(f2.subject), fold_name(f2.object)) == ("globex", "widget")
    f3, = mem.graph.facts(m3)
    assert (f3.subject, f3.relation, f3.object, f3.relation_raw) == ("Peter", "work_for", "Initech", "employ")
    assert canon_relation("be own by") == ("own", True)
    assert canon_relation("juggle") == ("juggle", False)  # unknown relations keep their lemma


def test_forget_updates_graph(mem):
    a = mem.remember("Maria teaches chemistry at Lincoln High.")
    b = mem.remember("Maria owns a bicycle.")
    assert mem.graph.facts(a)
    mem.forget(a)
    assert mem.graph.entity("chemistry") == []  # orphan node removed
    assert mem.graph.entity("Maria") and {f.memory_id for f in mem.graph.facts_about("Maria")} == {b}
    with pytest.raises(NotFound):
        mem.graph.facts(a)


def test_neighbours_and_path(mem):
    mem.remember("Alice works for Acme.")
    mem.remember("Acme owns Widget LLC.")
    mem.remember("Widget LLC is located in Ohio.", triples=[("Widget LLC", "is located in", "Ohio", "organisation", "place")])
    near = {e.key: d for e, d in mem.graph.neighbours("Alice", depth=2)}
    assert near == {"acme": 1, "widget": 2}
    path = mem.graph.path("Alice", "Ohio")
    assert [f.relation for f in path] == ["work_for", "own", "located_in"]
    assert mem.graph.path("Alice", "Alice") == []


def test_graph_channel_brings_facts_into_recall(mem):
    mem.remember_many([f"Filler memory number {i} about the weather in town." for i in range(100)])
    a = mem.remember("Acme Inc. acquired Widget LLC in 2019.")
    b = mem.remember("They bought Gadget Co last year.", triples=[("ACME", "bought", "Gadget Co")])
    hits = mem.recall("What did the Acme Corporation buy?", k=5).hits
    by_id = {h.id: h for h in hits}
    assert a in by_id and b in by_id
    assert by_id[b].why["graph"]["rank"] >= 1 and "acme" in by_id[b].why["graph"]["entities"]
    assert "keyword" not in by_id[b].why  # found only through the graph


# (sentence, expected (subject, canonical relation, object) facts) -- the kinds agents store
GOLD = [
    ("Alice prefers green tea.", [("alice", "like", "green tea")]),
    ("Bob loves jazz music.", [("bob", "like", "jazz music")]),
    ("Carol hates olives.", [("carol", "dislike", "olives")]),
    ("My sister owns a small bakery.", [("my sister", "own", "small bakery")]),  # whose: at the write
    ("The red bicycle belongs to Tom.", [("tom", "own", "red bicycle")]),
    ("Dana works for Initech.", [("dana", "work_for", "initech")]),
    ("Evan works at the hospital.", [("evan", "work_for", "hospital")]),
    ("Globex employs Frank.", [("frank", "work_for", "globex")]),
    ("Grace lives in Lisbon.", [("grace", "live_in", "lisbon")]),
    ("Henry moved to Denver.", [("henry", "live_in", "denver")]),
    ("The museum is located in Paris.", [("museum", "located_in", "paris")]),
    ("Acme acquired Widget LLC.", [("acme", "acquire", "widget")]),
    ("Widget LLC was bought by Globex.", [("globex", "acquire", "widget")]),
    ("Ivy manages the marketing team.", [("ivy", "manage", "marketing team")]),
    ("Jack reports to Karen.", [("karen", "manage", "jack")]),
    ("Liam visited Tokyo.", [("liam", "visit", "tokyo")]),
    ("Mia founded a startup.", [("mia", "create", "startup")]),
    ("Noah teaches mathematics.", [("noah", "teach", "mathematics")]),
    ("Olivia studies physics.", [("olivia", "study", "physics")]),
    ("Paul married Rachel.", [("paul", "marry", "rachel")]),
    ("Quinn sold his old car.", [("quinn", "sell", "his old car")]),
    ("Sara bought a new laptop.", [("sara", "acquire", "new laptop")]),
    ("The conference was organised by Umbrella Corp.", [("umbrella", "organise", "conference")]),
    ("Victor attended the wedding in June.", [("victor", "attend", "wedding")]),
]


def test_extractor_precision_recall_on_agent_sentences(capsys):
    ex = SpacyExtractor()
    got_all = ex.extract_many([s for s, _ in GOLD])
    tp = n_pred = n_gold = 0
    for (sentence, gold), triples in zip(GOLD, got_all):
        pred = {(f[3], f[1], f[4]) for f in query_facts(triples)}
        tp += len(pred & set(gold))
        n_pred += len(pred)
        n_gold += len(gold)
    precision, recall = tp / max(n_pred, 1), tp / n_gold
    with capsys.disabled():
        print(f"\nextractor on {len(GOLD)} sentences: precision={precision:.2f} recall={recall:.2f}")
    assert recall >= 0.85 and precision >= 0.75


class _StubLLM(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body["messages"][-1]["content"]
        triples = [{"subject": text.split()[0], "relation": "own", "object": text.split()[-1].rstrip("."),
                    "subject_type": "person", "object_type": "thing"}]
        out = {"choices": [{"message": {"role": "assistant", "content": "```json\n" + json.dumps(triples) + "\n```"}}]}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


def test_chat_extractor_against_local_stub(db_path):
    srv = HTTPServer(("127.0.0.1", 0), _StubLLM)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        ex = ChatExtractor(f"http://127.0.0.1:{srv.server_port}/v1", "stub-model")
        with fastmem.Memory(db_path, extractor=ex) as m:
            mid = m.remember("Zoe keeps a kayak.")
            f, = m.graph.facts(mid)
            assert (f.subject, f.relation, f.object) == ("Zoe", "own", "kayak")
            assert m.graph.entity("Zoe")[0].type == "person"
    finally:
        srv.shutdown()


def test_graph_calls_respect_scope(mem):
    mem.remember("Alice works for Acme.", scope="a")
    mem.remember("Acme owns Widget LLC.", scope="b")
    assert mem.graph.entity("Acme", scope="a") and mem.graph.entity("Widget LLC", scope="a") == []
    assert {f.memory_id for f in mem.graph.facts_about("Acme", scope="a")} == {f.memory_id for f in mem.graph.facts_about("Alice")}
    assert {e.key for e, _ in mem.graph.neighbours("Acme", scope="a")} == {"alice"}
    assert {e.key for e, _ in mem.graph.neighbours("Acme")} == {"alice", "widget"}
    assert mem.graph.path("Alice", "Widget LLC") is not None
    with pytest.raises(NotFound):
        mem.graph.path("Alice", "Widget LLC", scope="a")


def test_a_fuzzy_merge_does_not_depend_on_how_many_names_share_a_prefix(mem):
    """Regression: the fuzzy block was read with LIMIT 5000 and no order, so once 5,000 other
    names began with the same two letters, a one-letter variant was no longer merged."""
    import random

    mem.remember("x", triples=[("Johnathan Smithers", "owns", "boat", "person", "thing")])
    rnd = random.Random(5)
    with mem.admin.engine.store.atomic() as db:
        for _ in range(6000):  # other people whose folded names sort before "johnathan smithers"
            key = "joa" + "".join(rnd.choice("bcdfgklmnprstvz") for _ in range(14))
            db.execute("INSERT OR IGNORE INTO nodes(key, name, type) VALUES (?,?,'person')", (key, key.title()))
            db.execute("INSERT OR IGNORE INTO aliases(alias, node_id) SELECT ?, id FROM nodes WHERE key=?", (key, key))
    mem.remember("y", triples=[("Jonathan Smithers", "sold", "bike", "person", "thing")])
    assert mem.graph.entity("Jonathan Smithers")[0].id == mem.graph.entity("Johnathan Smithers")[0].id


def test_graph_channel_counts_named_entities_and_treats_hubs_as_extras(mem, monkeypatch):
    """The channel's ranking, read from the (entity, memory) postings: memories naming more of
    the turn's entities first, the newest among equals; an entity with more than ``CAP``
    facts (a hub) only adds to memories the rarer ones found, and a turn naming only hubs
    gets the newest memories of the rarest. In a store of several scopes, another scope's
    memories are never counted."""
    from fastmem.recall.channels.graph import Graph

    monkeypatch.setattr(Graph, "CAP", 5)  # Acme (8 facts) is a hub; Lisbon (5) is not
    hub = [mem.remember(f"Note {i} of the week.", triples=[("Acme", "own", f"Part {i}")]) for i in range(6)]
    both = mem.remember("The first note.", triples=[("Widget", "located_in", "Lisbon"), ("Acme", "own", "Widget")])
    acme_lisbon = mem.remember("The second note.", triples=[("Acme", "visit", "Lisbon")])
    old = mem.remember("The third note.", triples=[("Bob", "visit", "Lisbon")])
    new = mem.remember("The fourth note.", triples=[("Carol", "visit", "Lisbon")])
    mem.remember("A note elsewhere.", triples=[("Widget", "located_in", "Lisbon")], scope="other")

    def ranked(query):
        hits = mem.recall(query, k=10, channels=("graph",), scope="", record=False).hits
        return [h.id for h in hits], {h.id: h.why["graph"]["score"] for h in hits}

    ids, score = ranked("Acme, Widget and Lisbon")
    assert ids == [both, acme_lisbon, new, old]  # the hub's own notes are not found through it
    assert [score[i] for i in ids] == [3.0, 2.0, 1.0, 1.0]
    ids, _ = ranked("Acme")
    assert ids == [acme_lisbon, both] + hub[::-1][:8]
