import asyncio
import math

import networkx as nx
import numpy as np
import pytest

from chronorag.graphs.store import EventStoreBuilder
from chronorag.retrievers.star_rag import StarRAGRetriever, parse_ranked_answers
from chronorag.retrievers.star_rag.rule_graph import (
    RuleGraph,
    RuleGraphConfig,
    _mdl_select,
    build_rule_graph,
    entity_labels,
)


def _toy_store():
    b = EventStoreBuilder()
    # A and B consult and visit each other; C only threatens; D consults
    for day in range(1, 6):
        b.add("A", "Consult", "B", f"2014-01-{day:02d}")
        b.add("B", "Make a visit", "A", f"2014-01-{day + 1:02d}")
    b.add("C", "Threaten", "A", "2014-02-01")
    b.add("D", "Consult", "A", "2014-02-02")
    return b.build()


def test_entity_labels_alg2():
    s = _toy_store()
    labels, types = entity_labels(s, min_support=0.5, max_len=3, k_type=2)
    rel = {n: i for i, n in enumerate(s.relations)}
    # relation sets: A {Consult, Visit, Threaten}, B {Consult, Visit}, C {Threaten}, D {Consult}
    # frequent (>= 2 of 4 entities): {Consult}, {Visit}, {Threaten}, {Consult, Visit}; most specific first
    assert types[0] == tuple(sorted((rel["Consult"], rel["Make a visit"])))
    ent = {n: i for i, n in enumerate(s.entities)}
    assert labels[ent["A"]][0] == 0 and labels[ent["B"]][0] == 0 and len(labels[ent["A"]]) == 2
    assert [types[t] for t in labels[ent["C"]]] == [(rel["Threaten"],)]
    assert [types[t] for t in labels[ent["D"]]] == [(rel["Consult"],)]


def test_mdl_hand_computed():
    # edge 0: |T|=10 spans of 0 days (+1 -> mean 1 day), supports 10 and 10, window 30
    # data: L_cov = log2(100) - log2(10) = 3.3219; L_time = (10 + 10 ln 1)/ln 2 = 14.4270
    # null = 10 * (log2(100) + log2(31)) = 115.9834 ; model: 2 new nodes (1 bit each) + edge code 2
    # delta = 3.3219 + 14.4270 - 115.9834 + 4 = -94.2345 -> kept
    # edge 1: one 29-day span between nodes of support 1: L_time = (1 + ln 30)/ln 2 = 6.3503,
    # null = log2(31) = 4.9542, + model > 0 -> rejected
    sel, delta, _ = _mdl_select(np.array([0, 2]), np.array([1, 3]), np.array([10, 1]), np.array([0.0, 29.0]),
                                np.array([10, 10, 1, 1]), np.ones(4), 30)
    assert sel.tolist() == [True, False]
    assert delta[0] == pytest.approx(math.log2(100) - math.log2(10) + 10 / math.log(2)
                                     - 10 * (math.log2(100) + math.log2(31)) + 4, abs=1e-6)
    assert delta[1] > 0


def test_rule_graph_invariants_and_persistence(tmp_path, sample_index):
    s = sample_index.store
    rg = build_rule_graph(s, config=RuleGraphConfig(min_support=0.05))
    # every event is in the support of each of its nodes, and has >= 1 node
    for e in (0, 17, len(s) - 1):
        nodes = rg.nodes_of_events([e])[0]
        assert len(nodes) >= 1 and all(e in rg.support(int(u)) for u in nodes)
    assert rg.support_ptr[-1] == len(rg.event_nodes)
    ham = ((rg.node_s[rg.edge_u] != rg.node_s[rg.edge_v]).astype(int) + (rg.node_r[rg.edge_u] != rg.node_r[rg.edge_v])
           + (rg.node_o[rg.edge_u] != rg.node_o[rg.edge_v]))
    assert ham.max() <= 1 and (rg.edge_u < rg.edge_v).all()
    assert rg.selected.any() and (rg.edge_delta[rg.selected] < 0).all()
    best = rg.selected_edges()[0]
    assert best["delta_bits"] == min(e["delta_bits"] for e in rg.selected_edges())
    rg.save(tmp_path)
    back = RuleGraph.load(tmp_path)
    assert np.array_equal(back.selected, rg.selected) and back.stats == rg.stats and back.labels == rg.labels


def test_ppr_matches_networkx_and_personalization():
    s = _toy_store()
    rg = build_rule_graph(s, config=RuleGraphConfig(min_support=0.5, window_days=10))
    assert rg.selected.sum() >= 1
    seeds, gamma = rg.personalization([0, 1], theta=0.6, beta=0.7)
    assert gamma.sum() == pytest.approx(1.0) and len(seeds) >= 1
    pi = rg.ppr(seeds, gamma, alpha=0.2, tol=1e-12)
    g = nx.Graph()
    g.add_nodes_from(range(rg.n_nodes))
    for u, v, w in zip(rg.edge_u[rg.selected], rg.edge_v[rg.selected], rg.edge_n[rg.selected]):
        g.add_edge(int(u), int(v), weight=float(w))
    pers = {int(u): float(x) for u, x in zip(seeds, gamma)}
    ref = nx.pagerank(g, alpha=0.8, personalization=pers, weight="weight", tol=1e-14, max_iter=1000,
                      dangling=pers)
    assert np.allclose(pi, [ref[i] for i in range(rg.n_nodes)], atol=1e-6)
    useeds, ugamma = rg.personalization([0, 1], uniform=True)
    assert np.allclose(ugamma, 1 / len(useeds))
    with pytest.raises(ValueError, match="alpha"):
        rg.ppr(seeds, gamma, alpha=0)


def test_incremental_add_events_matches_rebuild_closely(sample_index):
    s = sample_index.store
    cut = int(len(s) * 0.9)
    old = s.subset(np.arange(cut))
    rg = build_rule_graph(old)
    info = rg.add_events(old.concat(s.subset(np.arange(cut, len(s)))), cut)
    full = build_rule_graph(s)
    assert info["new_events"] == len(s) - cut
    assert len(rg.event_ptr) == len(s) + 1
    assert all(len(n) >= 1 for n in rg.nodes_of_events(range(cut, len(s))))
    assert abs(rg.stats["selected_edges"] - full.stats["selected_edges"]) / full.stats["selected_edges"] < 0.1
    with pytest.raises(ValueError, match="start"):
        rg.add_events(s, cut)


def test_star_rag_retriever(sample_index):
    rg = build_rule_graph(sample_index.store)
    r = StarRAGRetriever(sample_index, rg, k1=5, k2=10)
    nodes = r.retrieve("Who did John Kerry negotiate with?")
    assert len(nodes) == 5
    md = nodes[0].node.metadata
    assert {"subject", "relation", "object", "time", "rule_nodes", "ppr", "cosine"} <= set(md)
    assert nodes[0].node.get_content().startswith("On 2014")
    ids, info = r.retrieve_event_ids("Who did John Kerry negotiate with?")
    assert info["seeds"] and len(info["top_rules"]) <= 10
    dense_ids, _ = StarRAGRetriever(sample_index, rg, k1=5, use_rule_graph=False).retrieve_event_ids(
        "Who did John Kerry negotiate with?")
    assert len(dense_ids) == 5
    assert len(asyncio.run(r.aretrieve("Who visited China?"))) == 5
    with pytest.raises(ValueError, match="personalization"):
        StarRAGRetriever(sample_index, rg, personalization="cosine")
    with pytest.raises(ValueError, match="k1"):
        StarRAGRetriever(sample_index, rg, k1=0)


def test_star_rag_under_property_graph_index(ecb_store, tmp_path):
    from llama_index.core import PropertyGraphIndex
    from llama_index.core.graph_stores import SimplePropertyGraphStore
    from llama_index.core.llms import MockLLM

    from chronorag.integrations.property_graph import export_to_property_graph
    from chronorag.retrievers.star_rag import StarRAGPGRetriever

    pg = SimplePropertyGraphStore()
    export_to_property_graph(ecb_store, pg)
    sub = StarRAGPGRetriever(pg, work_dir=str(tmp_path / "w"), k1=3)
    index = PropertyGraphIndex.from_existing(property_graph_store=pg, embed_kg_nodes=False, llm=MockLLM())
    nodes = index.as_retriever(sub_retrievers=[sub]).retrieve("Who did the European Central Bank criticize?")
    assert 1 <= len(nodes) <= 3
    assert all("European Central Bank" in n.node.get_content() for n in nodes)


def test_parse_ranked_answers():
    assert parse_ranked_answers('1. "Iran"\n2) China.\n- iran\nAnswer 3: Japan') == ["Iran", "China", "Japan"]


def test_star_rag_answers_with_llm_over_http(ecb_index):
    from chronorag.evaluation import make_method
    from chronorag.integrations.testing import ScriptedOpenAIServer

    build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3)).save(ecb_index.path)
    with ScriptedOpenAIServer(["1. Romania\n2. Ireland"]) as srv:
        method = make_method("star-rag", ecb_index.path, llm_url=srv.base_url)
        pred = method({"quid": 7, "question": "Before Germany, who did the ECB criticize last?", "answers": ["Romania"]})
        prompt = srv.requests[0]["messages"][0]["content"]
    assert pred.answers == ["Romania", "Ireland"]
    assert "Question: Before Germany, who did the ECB criticize last?" in prompt
    assert "1. On " in prompt and pred.info["tokens"]["calls"] == 1


def test_llm_answer_to_a_condition_the_retriever_cannot_filter_on_says_so(ecb_index):
    """The LLM may read "never" where the retriever cannot filter on it: the answer stands (it is
    the LLM's reading of the retrieved events) and the reason names the unfiltered condition; a
    question with none has no such reason."""
    from chronorag.evaluation import make_method
    from chronorag.integrations.testing import ScriptedOpenAIServer

    build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3)).save(ecb_index.path)
    with ScriptedOpenAIServer(["1. Romania", "1. Romania"]) as srv:
        method = make_method("star-rag", ecb_index.path, llm_url=srv.base_url)
        pred = method({"quid": 1, "question": "Who did the ECB criticize at least twice?", "answers": ["Romania"]})
        plain = method({"quid": 2, "question": "Before Germany, who did the ECB criticize last?", "answers": ["Romania"]})
    assert pred.answers == ["Romania"] and not pred.abstained
    assert pred.reason.startswith("the retriever cannot filter on a count condition: 'at least twice'"), pred.reason
    assert plain.answers == ["Romania"] and "cannot filter on" not in plain.reason
    # 'last' was the LLM's reading of a sample of the KG: said, as the no-LLM reader says it
    assert plain.reason.startswith("'last' was read by the LLM over the "), plain.reason
    assert plain.reason.endswith("retrieved events: an event the retriever did not return could change it")


def test_star_rag_method_takes_an_llm_object(ecb_index):
    """``make_method("star-rag", ..., llm=...)`` reads with the given LLM (an ``LLMConfig`` or a
    LangChain chat model; the demo passes its configured one); an endpoint and an object together
    are refused, and an unknown object is an error, not the no-LLM mode."""
    from langchain_openai import ChatOpenAI

    from chronorag.errors import LLMError
    from chronorag.evaluation import make_method
    from chronorag.integrations.llm import LLMConfig
    from chronorag.integrations.testing import ScriptedOpenAIServer

    build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3)).save(ecb_index.path)
    q = {"quid": 3, "question": "Before Germany, who did the ECB criticize last?", "answers": ["Romania"]}
    with ScriptedOpenAIServer(["1. Romania", "1. Ireland"]) as srv:
        pred = make_method("star-rag", ecb_index.path, llm=LLMConfig(base_url=srv.base_url))(q)
        assert pred.answers == ["Romania"] and pred.info["tokens"]["calls"] == 1
        chat = ChatOpenAI(base_url=srv.base_url, api_key="x", model="chronorag")
        assert make_method("star-rag", ecb_index.path, llm=chat)(q).answers == ["Ireland"]
        assert len(srv.requests) == 2
        with pytest.raises(ValueError, match="not both"):
            make_method("star-rag", ecb_index.path, llm_url=srv.base_url, llm=LLMConfig(base_url=srv.base_url))
    with pytest.raises(LLMError):
        make_method("star-rag", ecb_index.path, llm=object())


def test_llm_candidates_in_no_retrieved_event_are_dropped_and_none_left_abstains(ecb_index):
    """A small model writes dates and names that no retrieved event holds (seen with SmolLM2:
    "2016-02-28" for a KG that ends in 2015); those are dropped and counted, a near spelling
    takes the events' spelling, and with nothing left the method abstains and says why."""
    from chronorag.evaluation import make_method
    from chronorag.graphs.store import Event
    from chronorag.integrations.llm import fallbacks, query_scope
    from chronorag.integrations.testing import ScriptedOpenAIServer
    from chronorag.retrievers.star_rag import ground_answers

    ev = [Event(0, "European Central Bank", "Criticize or denounce", "Viktor Orbán", "2012-07-24", "2012-07-24"),
          Event(1, "Pact", "Sign", "Kenya", "2014-01-10", "2014-03-20")]
    kept, dropped = ground_answers(["viktor orban", "Atlantis", "2012", "2012-07", "2012-07-25", "2014-02",
                                    "2013", "3", "Viktor Orbán", "Kenyaa"], ev)
    assert kept == ["Viktor Orbán", "2012", "2012-07", "2014-02", "3", "Kenya"]
    assert dropped == ["Atlantis", "2012-07-25", "2013"]
    assert ground_answers(["Romania"], []) == ([], ["Romania"])
    # a date written out is read as the date it names, and kept in ISO form
    assert ground_answers(["July 24, 2012", "March 2014.", "June 2013", "Kenya 2014"], ev) == (
        ["2012-07-24", "2014-03"], ["June 2013", "Kenya 2014"])

    build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3)).save(ecb_index.path)
    q = "Before Germany, who did the ECB criticize last?"
    with ScriptedOpenAIServer(["1. 2016-02-28\n2. Atlantis", "1. Atlantis\n2. romania"]) as srv:
        method = make_method("star-rag", ecb_index.path, llm_url=srv.base_url)
        n = len(fallbacks.records)
        with query_scope("q1"):
            pred = method({"quid": 1, "question": q, "answers": ["Romania"]})
        assert pred.abstained and pred.answers == [] and "star_rag.ungrounded" in pred.reason
        assert "'2016-02-28'" in pred.reason and pred.info["ungrounded"] == ["2016-02-28", "Atlantis"]
        assert [k for _, k, _ in fallbacks.records[n:]] == ["star_rag.ungrounded"]
        pred = method({"quid": 2, "question": q, "answers": ["Romania"]})
        assert pred.answers == ["Romania"] and not pred.abstained and pred.info["ungrounded"] == ["Atlantis"]


# ---------------------------------------------------------------- issue 12: time-aware STAR-RAG
_COOP = "Express intent to engage in diplomatic cooperation (such as policy support)"


@pytest.fixture(scope="module")
def toy_time_index(tmp_path_factory, minilm):
    from chronorag.graphs.event_index import build_event_index

    b = EventStoreBuilder()
    b.add("Oman", _COOP, "Kuwait", "2011-11-01")
    b.add("Oman", _COOP, "Qatar", "2012-01-05")
    b.add("Oman", _COOP, "South Korea", "2012-01-15")
    b.add("Oman", _COOP, "South Korea", "2013-05-02")
    b.add("Oman", _COOP, "Japan", "2012-03-01")
    b.add("Oman", _COOP, "Bahrain", "2014-06-01")
    for m in range(1, 13):  # one busy triple: 24 events over 2014
        b.add("China", "Consult", "Japan", f"2014-{m:02d}-03")
        b.add("China", "Consult", "Japan", f"2014-{m:02d}-17")
    b.add("China", "Consult", "Vietnam", "2014-03-10")
    b.add("China", "Consult", "Laos", "2014-08-10")
    b.add("Vietnam", "Consult", "China", "2014-03-11")
    return build_event_index(b.build(), tmp_path_factory.mktemp("toytime") / "idx", encoder=minilm, progress=False)


def _objects(index, ids):
    return [e.object for e in index.store.events(ids)]


def test_time_intent_reads_window_ordinal_and_anchor():
    from chronorag.graphs.time import parse_time
    from chronorag.retrievers.star_rag import time_intent

    ti = time_intent("Who signed an agreement with China in April 2005?")
    assert (ti.constraint, ti.lo, ti.hi) == ("in", parse_time("2005-04").lo, parse_time("2005-04").hi)
    ti = time_intent("Before 22 October 2008, which country did Malaysia praise?")
    assert ti.constraint == "before" and ti.lo is None and ti.hi == parse_time("2008-10-22").lo
    ti = time_intent("Before South Korea, with whom did Oman last wish to establish diplomatic cooperation?")
    assert (ti.constraint, ti.ordinal, ti.anchor, ti.order, ti.direction) == (
        "before", "last", "South Korea", "last", "backward")
    ti = time_intent("Who first wanted to negotiate with Iraq after Egypt?")
    assert ti.order == "first" and ti.direction == "forward"
    assert not time_intent("Who visited China?").has_time


def test_anchors_cover_the_question(toy_time_index):
    r = StarRAGRetriever(toy_time_index, use_rule_graph=False, similarity_top_k=6)
    ids, info = r.retrieve_event_ids("Who did China consult?")
    assert ids.tolist() == info["anchors"]
    st = toy_time_index.store
    busy = [e for e in st.events(ids) if (e.subject, e.object) == ("China", "Japan")]
    assert len(busy) == 2  # max_per_triple, not 6 copies of the busiest triple
    assert len({e.start[:7] for e in busy}) == 2  # and in different months
    assert {"Vietnam", "Laos"} <= set(_objects(toy_time_index, ids))


def test_explicit_time_and_ordinal_steer_the_ranking(toy_time_index):
    r = StarRAGRetriever(toy_time_index, use_rule_graph=False, similarity_top_k=3)
    ids, _ = r.retrieve_event_ids("Who did China consult in August 2014?")
    assert toy_time_index.store.event(int(ids[0])).start.startswith("2014-08")
    # "first"/"last" pick the ends of a triple's history
    first, _ = r.retrieve_event_ids("When did China first consult Japan?")
    last, _ = r.retrieve_event_ids("When did China last consult Japan?")
    assert toy_time_index.store.event(int(first[0])).start == "2014-01-03"
    assert toy_time_index.store.event(int(last[0])).start == "2014-12-17"
    # the time-blind mode keeps the old order (most recent first) for both
    blind = StarRAGRetriever(toy_time_index, use_rule_graph=False, similarity_top_k=3, time_mode="none")
    assert toy_time_index.store.event(int(blind.retrieve_event_ids("When did China first consult Japan?")[0][0])
                                      ).start == "2014-12-17"


def test_anchor_event_question_finds_the_neighbour_in_time(toy_time_index):
    r = StarRAGRetriever(toy_time_index, use_rule_graph=False, similarity_top_k=3)
    ids, info = r.retrieve_event_ids("Before South Korea, with whom did Oman last wish to establish diplomatic cooperation?")
    from chronorag.graphs.time import parse_time

    assert info["reference_time"] == parse_time("2012-01-15").lo  # the first Oman -> South Korea event
    assert _objects(toy_time_index, ids)[0] == "Qatar"
    ids, _ = r.retrieve_event_ids("After South Korea, with whom did Oman first wish to establish diplomatic cooperation?")
    assert _objects(toy_time_index, ids)[0] == "Japan"


def test_ablations_share_anchors_and_rerank(toy_time_index):
    rg = build_rule_graph(toy_time_index.store, config=RuleGraphConfig(min_support=0.3, window_days=60))
    assert rg.selected.any()
    q = "Who did China consult in March 2014?"
    star = StarRAGRetriever(toy_time_index, rg, k1=3)
    uni = StarRAGRetriever(toy_time_index, rg, k1=3, personalization="uniform")
    norule = StarRAGRetriever(toy_time_index, rg, k1=3, use_rule_graph=False)
    a_star, a_uni, a_nr = (x.retrieve_event_ids(q)[1] for x in (star, uni, norule))
    assert a_star["anchors"] == a_uni["anchors"] == a_nr["anchors"]
    ids, info = star.retrieve_event_ids(q)
    assert info["seeds"] and info["n_candidate_triples"] >= len(set(toy_time_index.triple_of_event[ids]))
    # the re-rank is shared too: no-rule returns its anchors in re-rank order
    assert norule.retrieve_event_ids(q)[0].tolist() == a_nr["anchors"]
    # every returned event is scored >= the cosine of its triple (the time bonus is >= 0)
    assert all(info["score"][e] >= info["cosine"][e] - 1e-9 for e in ids.tolist())


def test_directed_chain_edges():
    s = _toy_store()  # A consults B on day d, B visits A on day d+1
    rg = build_rule_graph(s, config=RuleGraphConfig(min_support=0.5, window_days=10))
    assert rg.edge_fwd.shape == rg.edge_n.shape
    assert ((rg.edge_fwd >= 0) & (rg.edge_fwd <= rg.edge_n)).all()
    fwd, bwd, both = (rg.transition(d) for d in ("forward", "backward", "both"))
    assert abs(fwd - bwd.T).sum() >= 0  # shapes agree
    # forward and backward are each other's transpose before normalisation: they differ
    # wherever an edge's pairs mostly go one way
    one_way = rg.selected & (np.abs(2 * rg.edge_fwd - rg.edge_n) > 0)
    if one_way.any():
        assert (fwd != bwd).nnz > 0
    assert np.allclose(np.asarray(both.sum(axis=1)).ravel()[np.asarray(both.sum(axis=1)).ravel() > 0], 1)
    seeds, gamma = rg.personalization([0, 1])
    for d in ("forward", "backward"):
        pi = rg.ppr(seeds, gamma, direction=d)
        assert pi.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="direction"):
        rg.transition("sideways")


def test_edge_direction_counts_by_hand():
    b = EventStoreBuilder()
    # X always criticizes Y two days before Y threatens X: a one-way chain
    for m in range(1, 7):
        b.add("X", "Criticize", "Y", f"2014-{m:02d}-01")
        b.add("Y", "Threaten", "X", f"2014-{m:02d}-03")
    s = b.build()
    rg = build_rule_graph(s, config=RuleGraphConfig(min_support=0.5, window_days=5, k_type=1))
    crit = rg.nodes_of_events([0])[0][0]
    thr = rg.nodes_of_events([1])[0][0]
    e = np.flatnonzero((rg.edge_u == min(crit, thr)) & (rg.edge_v == max(crit, thr)))
    if len(e):  # the pair's labels differ in subject and object type when Hamming > 1: no edge
        k = e[0]
        first_is_u = rg.edge_u[k] == crit
        assert rg.edge_fwd[k] == (rg.edge_n[k] if first_is_u else 0)
    # same-day pairs count half each way
    b2 = EventStoreBuilder()
    b2.add("X", "Criticize", "Y", "2014-01-01")
    b2.add("X", "Threaten", "Y", "2014-01-01")
    b2.add("X", "Criticize", "Y", "2014-02-01")
    b2.add("X", "Threaten", "Y", "2014-02-01")
    rg2 = build_rule_graph(b2.build(), config=RuleGraphConfig(min_support=0.5, window_days=5, k_type=1))
    assert len(rg2.edge_n) == 1 and rg2.edge_fwd[0] == pytest.approx(rg2.edge_n[0] / 2)


def test_directed_edges_persist_and_update(tmp_path, sample_index):
    s = sample_index.store.subset(np.arange(min(3000, len(sample_index.store))))
    rg = build_rule_graph(s)
    rg.save(tmp_path)
    back = RuleGraph.load(tmp_path)
    assert np.array_equal(back.edge_fwd, rg.edge_fwd)
    cut = int(len(s) * 0.9)
    inc = build_rule_graph(s.subset(np.arange(cut)))
    inc.add_events(s.subset(np.arange(cut)).concat(s.subset(np.arange(cut, len(s)))), cut)
    assert ((inc.edge_fwd >= 0) & (inc.edge_fwd <= inc.edge_n)).all()
    assert inc.edge_fwd.sum() == pytest.approx(rg.edge_fwd.sum(), rel=0.2)


def test_per_call_time_filter_and_metadata_filters(toy_time_index):
    from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

    r = StarRAGRetriever(toy_time_index, use_rule_graph=False, similarity_top_k=5)
    nodes = r.retrieve("Who did China consult?", time_filter={"begin_time": "2014-03", "end_time": "2014-03",
                                                             "type": "in/on"})
    assert nodes and all(n.node.metadata["start"].startswith("2014-03") for n in nodes)
    assert r.time_filter is None  # the filter was per call
    f = MetadataFilters(filters=[MetadataFilter(key="start", value="2014-08-01", operator=FilterOperator.GTE),
                                 MetadataFilter(key="start", value="2014-08-31", operator=FilterOperator.LTE)])
    nodes = r.retrieve("Who did China consult?", time_filter=f)
    assert nodes and all(n.node.metadata["start"].startswith("2014-08") for n in nodes)
    with pytest.raises(ValueError, match="type"):
        r.retrieve("Who did China consult?", time_filter={"type": "around"})
    with pytest.raises(ValueError, match="not a time field"):
        r.retrieve("x?", time_filter=MetadataFilters(filters=[MetadataFilter(key="subject", value="China")]))
    # scores are similarities (cosine + time bonus), not ranks; ids are hidden from the LLM
    nodes = r.retrieve("Who did China consult in March 2014?")
    assert nodes[0].score >= nodes[-1].score and nodes[0].score <= 1.0 + r.w_window + r.w_order + r.w_ref
    assert "event_id" in nodes[0].node.excluded_llm_metadata_keys
    assert "event_id" not in nodes[0].node.get_content(metadata_mode="llm")


def test_aretrieve_runs_in_a_worker_thread(toy_time_index):
    import threading

    r = StarRAGRetriever(toy_time_index, use_rule_graph=False, similarity_top_k=2)
    seen = []
    orig = r.retrieve_event_ids

    def spy(*a, **k):
        seen.append(threading.get_ident())
        return orig(*a, **k)

    r.retrieve_event_ids = spy

    async def main():
        return await asyncio.gather(r.aretrieve("Who did China consult?"),
                                    r.aretrieve("Who did Oman cooperate with?",
                                                time_filter={"begin_time": "2012", "end_time": "2012"}))

    a, b = asyncio.run(main())
    assert len(a) == 2 and all(n.node.metadata["start"].startswith("2012") for n in b)
    assert threading.get_ident() not in seen


def test_similarity_top_k_and_k1_alias(toy_time_index):
    r = StarRAGRetriever(toy_time_index, use_rule_graph=False, similarity_top_k=4)
    assert r.k1 == 4 and len(r.retrieve("Who did China consult?")) == 4
    assert StarRAGRetriever(toy_time_index, use_rule_graph=False, k1=3).similarity_top_k == 3
    with pytest.raises(ValueError, match="disagree"):
        StarRAGRetriever(toy_time_index, use_rule_graph=False, k1=3, similarity_top_k=4)
    with pytest.raises(ValueError, match="time_mode"):
        StarRAGRetriever(toy_time_index, use_rule_graph=False, time_mode="clock")


def test_dated_event_texts_and_vectors(toy_time_index):
    from chronorag.graphs.event_index import EventIndex, dated_event_texts

    texts = dated_event_texts(toy_time_index.store, np.array([1]))
    assert texts == [f"On 5 January 2012, Oman {texts[0].split('Oman ', 1)[1]}"] and "Qatar" in texts[0]
    vecs = toy_time_index.event_vectors()
    assert vecs.shape == (len(toy_time_index.store), toy_time_index.vectors.vectors.shape[1])
    assert (toy_time_index.path / "event_vectors.npy").exists()
    back = EventIndex.load(toy_time_index.path)
    back.encoder = toy_time_index.encoder
    assert np.allclose(back.event_vectors(), vecs)
    r = StarRAGRetriever(back, use_rule_graph=False, similarity_top_k=3, time_mode="dated")
    ids, _ = r.retrieve_event_ids("Who did China consult in August 2014?")
    assert any(back.store.event(int(i)).start.startswith("2014-08") for i in ids)


def test_pg_retriever_contract(ecb_store, ecb_index, tmp_path):
    from llama_index.core.graph_stores import SimplePropertyGraphStore

    from chronorag.retrievers.star_rag import StarRAGPGRetriever

    with pytest.raises(ValueError, match="no chronorag events"):
        StarRAGPGRetriever(SimplePropertyGraphStore(), work_dir=str(tmp_path / "w"))
    build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3)).save(ecb_index.path)
    with pytest.raises(ValueError, match="holds 0 chronorag events"):
        StarRAGPGRetriever(SimplePropertyGraphStore(), index_dir=str(ecb_index.path))
    sub = StarRAGPGRetriever(SimplePropertyGraphStore(), index_dir=str(ecb_index.path), check_store=False, k1=2)
    assert len(sub.custom_retrieve("Who did the European Central Bank criticize?")) == 2


def test_answer_prompt_and_llm_objects(ecb_index):
    from llama_index.llms.openai_like import OpenAILike

    from chronorag.errors import LLMError
    from chronorag.integrations.llm import LLMConfig
    from chronorag.integrations.testing import ScriptedOpenAIServer
    from chronorag.retrievers.star_rag import ANSWER_PROMPT, answer_with_llm, build_answer_messages

    events = ecb_index.store.events(range(3))
    msgs = build_answer_messages("Before Germany, who did the ECB criticize last?", events)
    body = msgs[0]["content"]
    assert "Reasoning:" in body and "Answers:" in body and "Example" in body
    assert body.rstrip().endswith("Question: Before Germany, who did the ECB criticize last?")
    assert "1. " + events[0].verbalize() in body
    assert "European Central Bank criticized Romania" not in ANSWER_PROMPT  # our own example, not the paper's
    think = ("<think>The Germany event is 2011-02-14; Romania is earlier.</think>"
             "Reasoning: Romania is criticized on 2010-08-30, before Germany.\nAnswers:\n1. Romania\n2. Ireland")
    with ScriptedOpenAIServer([think, think]) as srv:
        assert answer_with_llm(LLMConfig(base_url=srv.base_url), "Before Germany, who?", events) == ["Romania", "Ireland"]
        li = OpenAILike(model="chronorag", api_base=srv.base_url, api_key="x", is_chat_model=True)
        assert answer_with_llm(li, "Before Germany, who?", events) == ["Romania", "Ireland"]
        assert len(srv.requests) == 2
    with pytest.raises(LLMError):
        answer_with_llm(object(), "Before Germany, who?", events)


def test_parse_ranked_answers_drops_reasoning():
    text = "Reasoning: X came first, then Y.\nAnswers:\n1. X\n2) Y.\n3. x"
    assert parse_ranked_answers(text) == ["X", "Y"]
    assert parse_ranked_answers("Thought: hmm\nAnswer: Iran") == ["Iran"]


KERRY = """\
John Kerry\tExpress intent to meet or negotiate\tSergey Lavrov\t2014-08-03
John Kerry\tEngage in negotiation\tMohammad Javad Zarif\t2014-08-10
Sergey Lavrov\tSign formal agreement\tMohammad Javad Zarif\t2014-08-15
John Kerry\tSign formal agreement\tAshraf Ghani\t2014-09-01
John Kerry\tExpress intent to cooperate\tLaurent Fabius\t2014-08-20
John Kerry\tExpress intent to engage in diplomatic cooperation\tWang Yi\t2014-08-22
"""


def test_star_rag_no_llm_reader_uses_only_events_of_the_questions_relation(tmp_path, minilm):
    """Without an LLM, when the reasoner finds no event of the question's relation among the
    retrieved ones, the reader used to answer from *any* retrieved event in the window: "who did
    Kerry sign a deal with in August 2014?" got his negotiation partners. It now reads only
    events of the linked relation or sharing its rarest word ("cooperate" keeps every
    "... cooperation" relation), and abstains naming the relation when there are none."""
    from chronorag.evaluation import make_method
    from chronorag.graphs.event_index import build_event_index
    from chronorag.graphs.io import read_events
    from chronorag.workflows.temptool.reading import relation_family

    (tmp_path / "kg.tsv").write_text(KERRY, encoding="utf-8")
    store = read_events(tmp_path / "kg.tsv", progress=False)
    idx = build_event_index(store, tmp_path / "idx", encoder=minilm, progress=False)
    build_rule_graph(idx.store, config=RuleGraphConfig(min_support=0.3)).save(idx.path)
    method = make_method("star-rag", idx.path)
    pred = method({"quid": 1, "question": "Who did John Kerry sign a deal with in August 2014?"})
    assert pred.answers == [] and pred.abstained, (pred.answers, pred.reason)
    assert "'Sign formal agreement'" in pred.reason, pred.reason
    pred = method({"quid": 2, "question": "Who did John Kerry sign a deal with in September 2014?"})
    assert pred.answers == ["Ashraf Ghani"]
    # no "Express intent to cooperate" event on 2014-08-22, a "... cooperation" one: the reader's
    # answer, read over the retrieved events, says the KG may hold more
    pred = method({"quid": 3, "question": "Who did John Kerry cooperate with on 2014-08-22?"})
    assert pred.answers == ["Wang Yi"] and pred.info["mode"] == "no-LLM constrained reader over the retrieved events"
    assert pred.reason.startswith("reasoner over the 6 retrieved events: no events: ") and "answered by the " \
        "constrained reader, read over the" in pred.reason, pred.reason
    assert pred.reason.endswith("the KG may hold more answers, and the ranking counts only these events"), pred.reason
    events = store.events(np.arange(len(store)))
    kept, words = relation_family(events, store.relations, phrase="cooperate with",
                                  linked="Express intent to cooperate")
    assert {e.object for e in kept} == {"Laurent Fabius", "Wang Yi"} and words == ["cooper"]
    # a verb no relation shares a word with can mean none of them (session 35: "lash out at" was
    # answered from visits); only a question without relation words reads every event
    kept, words = relation_family(events, store.relations, phrase="xylophonize", linked=None)
    assert kept == [] and words == []
    kept, words = relation_family(events, store.relations, phrase="", linked=None)
    assert len(kept) == len(events) and words == []
    kept, words = relation_family(events, store.relations, phrase="happened between", linked=None)
    assert len(kept) == len(events) and words == []  # a verb that names no act reads every event


def test_relation_family_leaves_out_the_other_side_of_an_action():
    """"Obama hosted a visit by India's head of government" shares "visit" with "Make a visit" but
    reads the other way: a reader of "who did Obama visit?" must not take India from it."""
    from types import SimpleNamespace

    from chronorag.workflows.temptool.reading import relation_family

    events = [SimpleNamespace(relation="Host a visit"), SimpleNamespace(relation="Make a visit"),
              SimpleNamespace(relation="Express intent to make a visit")]
    rels = ["Host a visit", "Make a visit", "Express intent to make a visit", "Criticize or denounce"]
    kept, _ = relation_family(events, rels, phrase="visit", linked="Make a visit")
    assert [e.relation for e in kept] == ["Make a visit", "Express intent to make a visit"]
    kept, _ = relation_family(events, rels, phrase="host", linked="Host a visit")
    assert [e.relation for e in kept] == ["Host a visit"]


def test_star_rag_llm_reply_repeating_the_prompt_is_an_abstention(ecb_index):
    """A reply that copies the reader prompt's own lines (its worked example) is not an answer:
    the question abstains, saying why, and the copy is counted as llm.echo."""
    from chronorag.evaluation import make_method
    from chronorag.integrations.llm import fallbacks
    from chronorag.integrations.testing import ScriptedOpenAIServer

    build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3)).save(ecb_index.path)
    copy = ("Events:\n1. On 2012-03-02, Ministry of Health (Kenya) signed an agreement with Oxfam.\n"
            "Answers:\n1. Romania")
    with ScriptedOpenAIServer([copy]) as srv:
        method = make_method("star-rag", ecb_index.path, llm_url=srv.base_url)
        before = fallbacks.counts().get("llm.echo", 0)
        pred = method({"quid": 71, "question": "Before Germany, who did the ECB criticize last?"})
    assert pred.answers == [] and pred.abstained and "repeated the prompt's own wording" in pred.reason
    assert fallbacks.counts().get("llm.echo", 0) == before + 1


def test_llm_candidates_that_cannot_answer_the_question_are_dropped(ecb_index):
    """A small model answers with the entity it was asked about ("Who visited Iraq?" -> Iraq;
    SmolLM2 did so on about half its wrong MultiTQ answers) or with the wrong kind of answer (a
    name for "when"). Those grounded candidates are dropped and counted; a choice question, a
    self-loop event and a count question keep them."""
    from chronorag.evaluation import make_method
    from chronorag.graphs.store import Event
    from chronorag.integrations.llm import fallbacks, query_scope
    from chronorag.integrations.testing import ScriptedOpenAIServer
    from chronorag.retrievers.star_rag import screen_answers

    ev = [Event(0, "Iraq", "Make a visit", "Iran", "2011-06-02", "2011-06-02"),
          Event(1, "Police (Iraq)", "Arrest", "Police (Iraq)", "2011-06-05", "2011-06-05")]
    kept, off = screen_answers(["Iraq", "2011-06", "Iran"], "Who paid a visit to Iraq in June 2011?", ev)
    assert kept == ["Iran"] and [a for a, _ in off] == ["Iraq", "2011-06"]
    assert "names it" in off[0][1] and "is a date" in off[1][1]
    kept, off = screen_answers(["Iran", "2011-06-02"], "When did Iraq last visit Iran?", ev)
    assert kept == ["2011-06-02"] and off == [("Iran", "the question asks when; this is not a date")]
    assert screen_answers(["Iraq"], "Who visited Iraq first, Iran or Iraq?", ev)[0] == ["Iraq"]
    assert screen_answers(["Iraq"], "Who was visited first out of Iraq and Iran?", ev)[0] == ["Iraq"]
    # a span is not a choice, and "either ... or" asks yes or no
    assert screen_answers(["Iraq"], "Who visited Iraq between May and June 2011?", ev)[0] == []
    from chronorag.graphs.answer_checks import offers_choice

    assert offers_choice("Who was born first out of Marco De Luigi and Fabio Maistro?")
    assert not offers_choice("How did revenue change between 2019 and 2022?")
    assert not offers_choice("Did either Iraq or Iran visit Kuwait?")
    assert not offers_choice("Did Iraq visit Iran, whether or not it was announced?")
    # a third party, a yes/no question, a span: no choice (found by review)
    assert not offers_choice("Who mediated between Israel and Hamas in 2014?")
    assert screen_answers(["Iraq"], "Who mediated between Iraq and Iran in 2011?", ev)[0] == []
    assert not offers_choice("Did he play for Ajax or PSV?")
    assert not offers_choice("Is there a difference between the ages of Iraq's and Iran's leaders?")
    assert not offers_choice("Who visited Iraq more between Q1 2019 and Q4 2020?")
    assert offers_choice("Which country, either France or Germany, signed first?")
    assert screen_answers(["Police (Iraq)"], "Who did Police (Iraq) arrest in June 2011?", ev)[0] == ["Police (Iraq)"]
    assert screen_answers(["3"], "How many times did Iraq visit Iran?", ev)[0] == ["3"]
    # "Iraqi" names Iraq, "ECB" names the European Central Bank; "Nigeria" does not name Niger
    assert screen_answers(["Iraq"], "Who did the Iraqi police arrest in 2011?", ev)[0] == []
    assert screen_answers(["European Central Bank"], "Who did the ECB criticize?", ev)[0] == []
    assert screen_answers(["Niger"], "Who visited Nigeria in 2011?", ev)[0] == ["Niger"]
    # a sector name "X (Country)" is named by "X of Country" or "Country's X", not by the country alone
    q = "Who was investigated by the Lawyer/Attorney of South Korea?"
    assert screen_answers(["Lawyer/Attorney (South Korea)", "Citizen (South Korea)"], q, ev)[0] == [
        "Citizen (South Korea)"]
    assert screen_answers(["Police (Iraq)"], "Who did Iraq's police arrest?", ev)[0] == ["Police (Iraq)"]  # self-loop
    assert screen_answers(["Police (Iran)"], "Who did Iran's police arrest?", ev)[0] == []
    with pytest.raises(ValueError, match="question"):
        screen_answers(["Iran"], " ", ev)

    build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3)).save(ecb_index.path)
    q = {"quid": 1, "question": "Before Germany, who did the ECB criticize last?", "answers": ["Romania"]}
    with ScriptedOpenAIServer(["1. European Central Bank\n2. 2012\n3. Romania", "1. European Central Bank"]) as srv:
        method = make_method("star-rag", ecb_index.path, llm_url=srv.base_url)
        n = len(fallbacks.records)
        with query_scope("q1"):
            pred = method(q)
        assert pred.answers == ["Romania"] and pred.info["off_question"] == ["European Central Bank", "2012"]
        assert [k for _, k, _ in fallbacks.records[n:]] == ["star_rag.off_question"]
        with query_scope("q2"):
            pred = method(q)
    assert pred.abstained and pred.answers == []
    assert "'European Central Bank'" in pred.reason and "star_rag.off_question" in pred.reason


def test_the_same_year_as_an_anchor_is_a_year_window(ecb_index):
    """"In the same year as X" reads a year around X's date, "the same month" a month, "the same
    day" a day (the year, Granularity 0, used to read as a day)."""
    from chronorag.graphs.time import parse_time
    from chronorag.retrievers.star_rag.time_scoring import time_intent

    r = StarRAGRetriever(ecb_index, use_rule_graph=False)
    t_ref = parse_time("2011-02-14").lo
    for unit, text in [("year", "2011"), ("month", "2011-02"), ("day", "2011-02-14")]:
        ti = time_intent(f"Who did the ECB criticize in the same {unit} as Germany?")
        assert ti.constraint == "same"
        tp = parse_time(text)
        assert r._window(ti, t_ref) == (tp.lo, tp.hi), unit


def test_no_llm_first_over_retrieved_events_is_checked_against_the_whole_kg(ecb_index, monkeypatch):
    """'first' read over the retrieved events is a sample's first: when the retriever missed an
    earlier matching event, the answer would be confidently wrong, so the method abstains and says
    what the whole KG holds; when the retrieved events include it, the answer is certified."""
    import numpy as np

    from chronorag.evaluation import make_method
    from chronorag.retrievers.star_rag import StarRAGRetriever

    build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3)).save(ecb_index.path)
    store = ecb_index.store
    every = np.arange(len(store))
    # the retriever returns only the ECB's criticisms from 2012 on: its first, Romania (2010), is missed
    late = np.asarray([i for i, e in zip(every, store.events(every))
                       if e.verbalize().startswith(("On 2012", "On 2014")) and "European Central Bank criticize" in
                       e.verbalize()])
    assert len(late) == 5, [e.verbalize() for e in store.events(every)]
    q = {"quid": 1, "question": "Who did the ECB criticize first?", "answers": ["Romania"]}
    monkeypatch.setattr(StarRAGRetriever, "retrieve_event_ids", lambda self, question, **kw: (late, {}))
    pred = make_method("star-rag", ecb_index.path)(q)
    assert pred.abstained and pred.answers == [], pred
    assert "gives 'Viktor Orban', but the KG holds a matching event the retriever did not return (over the whole " \
           "KG: 'Romania')" in pred.reason, pred.reason
    monkeypatch.setattr(StarRAGRetriever, "retrieve_event_ids", lambda self, question, **kw: (every, {}))
    pred = make_method("star-rag", ecb_index.path)(q)
    assert pred.answers[0] == "Romania" and not pred.abstained
    assert "'first' read over the 11 retrieved events, and the whole KG's matching events agree" in pred.reason


def test_no_llm_counts_yes_no_and_lists_over_retrieved_events_say_so(ecb_index, monkeypatch):
    """A count is refused over retrieved events; a yes/no read over them stands only when the whole
    KG agrees; a plain list says the KG may hold more answers (its tie and
    ranking count only the retrieved events)."""
    import numpy as np

    from chronorag.evaluation import make_method
    from chronorag.retrievers.star_rag import StarRAGRetriever

    build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3)).save(ecb_index.path)
    store = ecb_index.store
    every = np.arange(len(store))
    late = np.asarray([i for i, e in zip(every, store.events(every))
                       if e.verbalize().startswith("On 2014") and "European Central Bank criticize" in e.verbalize()])
    monkeypatch.setattr(StarRAGRetriever, "retrieve_event_ids", lambda self, question, **kw: (late, {}))
    m = make_method("star-rag", ecb_index.path)
    # Viktor Orban: 1 criticism among the two retrieved 2014 events, 2 in the whole KG
    pred = m({"question": "How many times did the ECB criticize Viktor Orban?"})
    assert pred.abstained and pred.answers == [] and "counting needs every matching event" in pred.reason, pred
    pred = m({"question": "Did the ECB criticize Viktor Orban in 2014?"})
    assert pred.answers == ["yes"] and "the yes/no read over the 2 retrieved events, and the whole KG's matching " \
        "events agree" in pred.reason, pred.reason
    pred = m({"question": "Did the ECB criticize Romania?"})  # its one criticism (2010) was not retrieved
    assert pred.answers == [] and pred.abstained, pred
    pred = m({"question": "Who did the ECB criticize?"})
    assert set(pred.answers) == {"Citizen (Hungary)", "Viktor Orban"}
    assert pred.reason.endswith("read over the 2 retrieved events: the KG may hold more answers, and the ranking "
                                "counts only these events"), pred.reason


def test_a_time_filter_gives_the_top_k_inside_its_window(tmp_path, minilm):
    """A LlamaIndex user filtering on a short window expects the top ``similarity_top_k`` events
    inside it (as ``VectorIndexRetriever`` with ``MetadataFilters`` gives); both retrievers
    searched all time first and filtered after, returning nothing for a 3-day window when many
    closer triples lay outside it."""
    from chronorag import DenseEventRetriever, TimeFilter
    from chronorag.graphs.event_index import build_event_index
    from chronorag.graphs.io import read_events

    rows = [f"John Kerry\tMake a visit\tCountry {i}\t2014-{1 + i % 12:02d}-{1 + i % 27:02d}" for i in range(60)]
    rows += ["Government (Poland)\tHost a visit\tJohn Kerry\t2014-06-03",
             "Police (Poland)\tArrest, detain, or charge with legal action\tProtester (Poland)\t2014-06-02"]
    (tmp_path / "kg.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    idx = build_event_index(read_events(tmp_path / "kg.tsv", progress=False), tmp_path / "idx", encoder=minilm,
                            progress=False)
    rg = build_rule_graph(idx.store, config=RuleGraphConfig(min_support=0.3))
    window = TimeFilter(begin_time="2014-06-02", end_time="2014-06-04", type="between")
    expected = {"2014-06-02", "2014-06-03"}
    for r in (DenseEventRetriever(idx, similarity_top_k=2, filters=window),
              StarRAGRetriever(idx, rg, similarity_top_k=2, filters=window)):
        nodes = r.retrieve("John Kerry made a visit to a country")
        assert len(nodes) == 2, (type(r).__name__, nodes)
        assert {n.node.metadata["time"][:10] for n in nodes} <= expected, [n.node.metadata for n in nodes]
    from chronorag.errors import IntervalOrderError, TimeParseError

    with pytest.raises(TimeParseError, match="'bogus'"):
        idx.triples_in_time(begin_time="bogus")
    with pytest.raises(IntervalOrderError):
        idx.triples_in_time(begin_time="2014-06", end_time="2014-01", type="between")
