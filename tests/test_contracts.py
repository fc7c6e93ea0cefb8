"""The framework contracts, tried the way an integrator would (LlamaIndex, LangChain, RAGAS).

One time-filter contract on every retriever (strict bounds exclude their unit, at every
granularity; TimeFilter, dict or MetadataFilters; ``filters=`` at construction; a
per-query filter replaces the default), scores and LLM-hidden noise metadata on nodes,
flat metadata, one retrieval event per query, no answer call from a retriever, the
derived-index cache of ``StarRAGPGRetriever``, RAGAS relation/direction checks and
skipped-metric reasons, ``tool_call_scores`` inside a running loop, and
``Settings.embed_model`` in ``build_event_index``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

from chronorag.retrievers.base import TimeFilter, as_time_filter

DATA = Path(str(files("chronorag") / "data"))
QUESTION = "Who did the European Central Bank criticize?"


def mf(key: str, op: str, value: str) -> MetadataFilters:
    return MetadataFilters(filters=[MetadataFilter(key=key, operator=op, value=value)])


# ------------------------------------------------------------------ strict boundaries
def test_strict_less_than_excludes_june_2014_through_the_retriever(sample_index):
    """The issue's case: ``start < 2014-06`` returned 69 June 2014 events."""
    from chronorag.retrievers.dense import DenseEventRetriever

    r = DenseEventRetriever(sample_index, similarity_top_k=400)
    lt = r.retrieve("Make a visit", time_filter=mf("start", "<", "2014-06"))
    le = r.retrieve("Make a visit", time_filter=mf("start", "<=", "2014-06"))
    assert lt and not [n for n in lt if n.node.metadata["start"].startswith("2014-06")]
    assert all(n.node.metadata["start"] < "2014-06" for n in lt)
    assert [n for n in le if n.node.metadata["start"].startswith("2014-06")]  # <= includes June
    gt = r.retrieve("Make a visit", time_filter=mf("start", ">", "2014-06"))
    assert gt and all(n.node.metadata["start"] >= "2014-07" for n in gt)


def _minute_store():
    from chronorag.graphs.store import EventStoreBuilder

    b = EventStoreBuilder()
    times = ["2013-12-31T23:59", "2014-01-01T00:00", "2014-05-31T23:59", "2014-06-01T00:00",
             "2014-06-15T09:29", "2014-06-15T09:30", "2014-06-15T09:31", "2014-06-15T10:00",
             "2014-06-30T23:59", "2014-07-01T00:00", "2015-01-01T00:00"]
    for i, t in enumerate(times):
        b.add(f"A{i}", "meet", "B", t, t)
    return b.build(), times


@pytest.mark.parametrize("value", ["2014", "2014-06", "2014-06-15", "2014-06-15T09", "2014-06-15T09:30"])
@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "=="])
def test_bounds_at_every_granularity(value, op):
    """Every operator at every granularity agrees with comparing the event's time cut to
    the bound's granularity: strict bounds exclude their unit, the others include it."""
    store, times = _minute_store()
    tf = as_time_filter(mf("start", op, value))
    got = set(store.filter_time(np.arange(len(store)), **tf.as_kwargs()).tolist())
    cut = [t[: len(value)] for t in times]
    cmp = {"<": lambda a: a < value, "<=": lambda a: a <= value, ">": lambda a: a > value,
           ">=": lambda a: a >= value, "==": lambda a: a == value}[op]
    assert got == {i for i, c in enumerate(cut) if cmp(c)}, (op, value, tf)


@pytest.mark.parametrize("value", ["2014", "2014-06", "2014-06-15"])
def test_timefilter_and_dict_types_match_the_operators(value):
    """The TempTool types say the same as the operators: before = <, after = >, in/on = ==."""
    store, _ = _minute_store()
    ids = np.arange(len(store))

    def keep(f):
        return store.filter_time(ids, **as_time_filter(f).as_kwargs()).tolist()

    assert keep(TimeFilter(end_time=value, type="before")) == keep(mf("start", "<", value))
    assert keep({"begin_time": value, "type": "after"}) == keep(mf("start", ">", value))
    assert keep({"begin_time": value, "end_time": value}) == keep(mf("time", "==", value))
    both = MetadataFilters(filters=[MetadataFilter(key="start", operator=">", value="2013-12-31"),
                                    MetadataFilter(key="start", operator="<", value="2014-06")])
    assert as_time_filter(both) == TimeFilter("2014-01-01", "2014-05")  # the bounds intersect
    assert keep(both) == [1, 2]  # 2014-01-01T00:00 and 2014-05-31T23:59


def test_strict_bounds_that_leave_nothing_are_refused():
    with pytest.raises(ValueError, match="after it ends"):
        as_time_filter(MetadataFilters(filters=[MetadataFilter(key="start", operator=">", value="2014-06"),
                                                MetadataFilter(key="start", operator="<", value="2014-07")]))


# ------------------------------------------------------------------ one contract, every retriever
@pytest.fixture(scope="module")
def tgrag_index(tmp_path_factory):
    from chronorag.retrievers.tgrag.index import build_tgrag_index, read_period_documents

    return build_tgrag_index(read_period_documents(DATA / "reports"), tmp_path_factory.mktemp("tg") / "i",
                             progress=False)


@pytest.fixture(scope="module")
def topg_index(tmp_path_factory, minilm):
    from chronorag.workflows.topg.index import build_topg_index, read_corpus

    idx, _ = build_topg_index(read_corpus(DATA / "topg_corpus.json"), tmp_path_factory.mktemp("topg") / "i",
                              encoder=minilm, progress=False)
    return idx


@pytest.fixture(scope="module")
def ecb_pg(ecb_store):
    from llama_index.core.graph_stores import SimplePropertyGraphStore

    from chronorag.integrations.property_graph import export_to_property_graph

    pg = SimplePropertyGraphStore()
    export_to_property_graph(ecb_store, pg)
    return pg


def _event_years(nodes):
    return {n.node.metadata["start"][:4] for n in nodes}


FORMS = [TimeFilter("2012", "2012"), {"begin_time": "2012", "end_time": "2012"},
         mf("start", "==", "2012"),
         MetadataFilters(filters=[MetadataFilter(key="start", operator=">", value="2011"),
                                  MetadataFilter(key="start", operator="<", value="2013")])]


def _event_retrievers(ecb_index, ecb_pg, tmp_path_factory):
    from chronorag.retrievers.dense import DenseEventRetriever
    from chronorag.retrievers.star_rag import StarRAGPGRetriever, StarRAGRetriever
    from chronorag.retrievers.star_rag.rule_graph import RuleGraphConfig, build_rule_graph

    rg = build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3))
    work = tmp_path_factory.mktemp("pgw") / "w"
    return {
        "dense": lambda **kw: DenseEventRetriever(ecb_index, similarity_top_k=11, **kw),
        "star": lambda **kw: StarRAGRetriever(ecb_index, rg, similarity_top_k=11, **kw),
        "star_pg": lambda **kw: StarRAGPGRetriever(ecb_pg, work_dir=str(work), similarity_top_k=11, **kw),
    }


@pytest.mark.parametrize("kind", ["dense", "star", "star_pg"])
@pytest.mark.parametrize("form", range(len(FORMS)))
def test_every_event_retriever_takes_every_filter_form(kind, form, ecb_index, ecb_pg, tmp_path_factory):
    make = _event_retrievers(ecb_index, ecb_pg, tmp_path_factory)[kind]
    r = make()
    assert len(_event_years(r.retrieve(QUESTION))) > 1
    per_query = r.retrieve(QUESTION, time_filter=FORMS[form])
    assert per_query and _event_years(per_query) == {"2012"}
    assert len(_event_years(r.retrieve(QUESTION))) > 1  # the per-query filter does not stick
    for key in ("time_filter", "filters"):  # construction: time_filter= or VectorIndexRetriever's filters=
        built = make(**{key: FORMS[form]})
        assert _event_years(built.retrieve(QUESTION)) == {"2012"}
        # a per-query filter replaces the construction filter (documented: it does not intersect)
        assert _event_years(built.retrieve(QUESTION, time_filter={"begin_time": "2014", "end_time": "2014"})) == {"2014"}
        assert asyncio.run(built.aretrieve(QUESTION)) and _event_years(asyncio.run(built.aretrieve(QUESTION))) == {"2012"}


def test_filters_and_time_filter_together_are_refused(ecb_index):
    from chronorag.errors import ConfigError
    from chronorag.retrievers.dense import DenseEventRetriever

    with pytest.raises(ConfigError, match="filters= or time_filter="):
        DenseEventRetriever(ecb_index, filters=FORMS[0], time_filter=FORMS[1])
    with pytest.raises(ConfigError, match="not a time field"):
        DenseEventRetriever(ecb_index).retrieve(QUESTION, time_filter=mf("country", "==", "France"))


@pytest.mark.parametrize("form", [TimeFilter("2022", "2022"), {"begin_time": "2020"},
                                  mf("start", ">", "2019"), mf("period", "==", "2022"), "2022"])
def test_tgrag_takes_the_common_filters_and_its_periods(tgrag_index, tmp_path, form):
    from chronorag.retrievers.tgrag import TGragRetriever, VanillaChunkRetriever
    from chronorag.retrievers.tgrag.retriever import TGragPGRetriever

    for r in (TGragRetriever(tgrag_index, similarity_top_k=2), VanillaChunkRetriever(tgrag_index, similarity_top_k=2),
              TGragPGRetriever(tgrag_index.property_graph(), index_dir=str(tgrag_index.path), similarity_top_k=2)):
        q = "Who led the Board of Management of Audi?"
        assert {n.node.metadata["period"] for n in r.retrieve(q)} == {"2019", "2022"}
        assert {n.node.metadata["period"] for n in r.retrieve(q, time_filter=form)} == {"2022"}
    built = TGragRetriever(tgrag_index, filters=form)
    assert {n.node.metadata["period"] for n in built.retrieve("Who led Audi?")} == {"2022"}
    before = TGragRetriever(tgrag_index).retrieve("Who led Audi?", time_filter=mf("start", "<", "2022"))
    assert {n.node.metadata["period"] for n in before} == {"2019"}  # strict: 2022 excluded


def test_topg_retriever_filters_and_makes_no_answer_call(topg_index):
    from chronorag.integrations.llm import ChatLLM
    from chronorag.workflows.topg.retriever import ToPGRetriever

    calls: list[str] = []
    orig = ChatLLM.complete

    def spy(self, *a, **k):  # pragma: no cover - must not run
        calls.append("complete")
        return orig(self, *a, **k)

    ChatLLM.complete = spy  # type: ignore[method-assign]
    try:
        for mode in ("naive", "local"):
            r = ToPGRetriever(topg_index, mode=mode, similarity_top_k=4, max_iter=1)
            nodes = r.retrieve("Which film did Peter Lind direct?")
            assert nodes and all(isinstance(n.score, float) for n in nodes)
            forties = r.retrieve("Which film did Peter Lind direct?", time_filter=mf("start", "<", "1950"))
            texts = [n.node.get_content() for n in forties]
            assert texts and all("1961" not in t and "1975" not in t for t in texts)
            built = ToPGRetriever(topg_index, mode=mode, similarity_top_k=4, filters={"begin_time": "1961",
                                                                                        "end_time": "1961"})
            assert all(n.node.metadata["passage_title"] in ("Blue Harbor", "Anna Kovac")
                       for n in built.retrieve("Which film was directed?"))
    finally:
        ChatLLM.complete = orig  # type: ignore[method-assign]
    assert calls == []


# ------------------------------------------------------------------ nodes
def test_nodes_have_scores_hidden_noise_and_flat_metadata(ecb_index, ecb_pg, tmp_path_factory):
    from llama_index.core.schema import MetadataMode
    from llama_index.core.vector_stores.utils import node_to_metadata_dict

    for kind, make in _event_retrievers(ecb_index, ecb_pg, tmp_path_factory).items():
        r = make()
        assert r.similarity_top_k == 11
        nodes = r.retrieve(QUESTION)
        assert nodes and all(isinstance(n.score, float) for n in nodes), kind
        node = nodes[0].node
        assert node.get_content(metadata_mode=MetadataMode.LLM) == node.text  # no ids, no scores for the LLM
        flat = node_to_metadata_dict(node, flat_metadata=True)  # what Chroma/Qdrant/... store
        assert all(v is None or isinstance(v, (str, int, float)) for v in node.metadata.values()), kind
        assert flat["subject"] == node.metadata["subject"]
    star = _event_retrievers(ecb_index, ecb_pg, tmp_path_factory)["star"]().retrieve(QUESTION)
    assert all(isinstance(n.node.metadata["rule_nodes"], str) for n in star)  # a list, comma-joined


# ------------------------------------------------------------------ StarRAGPGRetriever
def test_star_pg_retriever_caches_by_fingerprint_and_leaves_no_temp_dirs(ecb_store, tmp_path, monkeypatch):
    import tempfile

    from llama_index.core.graph_stores import SimplePropertyGraphStore

    from chronorag.integrations.property_graph import export_to_property_graph
    from chronorag.retrievers.star_rag import StarRAGPGRetriever
    from chronorag.retrievers.star_rag import retriever as mod

    monkeypatch.setenv("CHRONORAG_HOME", str(tmp_path / "home"))
    made: list[str] = []
    monkeypatch.setattr(tempfile, "mkdtemp", lambda *a, **k: made.append("x") or str(tmp_path / "never"))
    mod._DERIVED.clear()
    pg = SimplePropertyGraphStore()
    export_to_property_graph(ecb_store, pg)
    first = StarRAGPGRetriever(pg, similarity_top_k=2)
    assert not first.derived_from_cache and made == []
    cache_dir = mod.derived_index_dir(ecb_store.fingerprint(), "minilm")
    assert (cache_dir / "index.json").exists()
    second = StarRAGPGRetriever(pg, similarity_top_k=2)  # same process: memo
    assert second.derived_from_cache and second._star._index is first._star._index
    mod._DERIVED.clear()  # a new process: the on-disk cache
    third = StarRAGPGRetriever(pg, similarity_top_k=2)
    assert third.derived_from_cache
    assert [n.node.node_id for n in third.retrieve(QUESTION)] == [n.node.node_id for n in first.retrieve(QUESTION)]
    # other events, other fingerprint: rebuilt, not served stale
    pg2 = SimplePropertyGraphStore()
    export_to_property_graph(ecb_store.subset(np.arange(8)), pg2)
    other = StarRAGPGRetriever(pg2, similarity_top_k=2)
    assert not other.derived_from_cache and len(other._star._index.store) == 8


def test_one_retrieval_event_per_query(ecb_pg, tmp_path):
    from llama_index.core import PropertyGraphIndex
    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler
    from llama_index.core.instrumentation.events.retrieval import RetrievalStartEvent
    from llama_index.core.llms import MockLLM

    from chronorag.retrievers.star_rag import StarRAGPGRetriever

    class Count(BaseEventHandler):
        n: int = 0

        def handle(self, event, **kwargs):
            if isinstance(event, RetrievalStartEvent):
                self.n += 1

    counter = Count()
    root = get_dispatcher()
    root.add_event_handler(counter)
    try:
        sub = StarRAGPGRetriever(ecb_pg, work_dir=str(tmp_path / "w"), similarity_top_k=2)
        sub.retrieve(QUESTION)
        assert counter.n == 1  # the sub-retriever's own; the wrapped StarRAGRetriever emits none
        counter.n = 0
        asyncio.run(sub.aretrieve(QUESTION))
        assert counter.n == 1
        counter.n = 0
        index = PropertyGraphIndex.from_existing(property_graph_store=ecb_pg, embed_kg_nodes=False, llm=MockLLM())
        index.as_retriever(sub_retrievers=[sub]).retrieve(QUESTION)
        assert counter.n == 2  # LlamaIndex's PGRetriever emits one, its one sub-retriever one
    finally:
        root.event_handlers.remove(counter)


# ------------------------------------------------------------------ integrators' pipelines
def test_retriever_query_engine_over_every_retriever(ecb_index, ecb_pg, tgrag_index, topg_index, tmp_path_factory):
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from chronorag.retrievers.tgrag import TGragRetriever
    from chronorag.workflows.topg.retriever import ToPGRetriever

    retrievers = {k: make(filters={"begin_time": "2012", "end_time": "2012"})
                  for k, make in _event_retrievers(ecb_index, ecb_pg, tmp_path_factory).items()}
    retrievers["tgrag"] = TGragRetriever(tgrag_index, filters=mf("start", ">=", "2022"))
    retrievers["topg"] = ToPGRetriever(topg_index, mode="naive", similarity_top_k=3)
    for kind, r in retrievers.items():
        resp = RetrieverQueryEngine.from_args(r, llm=MockLLM()).query(QUESTION)
        assert resp.source_nodes and all(n.score is not None for n in resp.source_nodes), kind
        if kind in ("dense", "star", "star_pg"):
            assert _event_years(resp.source_nodes) == {"2012"}


def test_lcel_chain_with_a_time_filter(ecb_index):
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough

    from chronorag.integrations.langchain_adapters import as_langchain_retriever
    from chronorag.retrievers.dense import DenseEventRetriever

    lc = as_langchain_retriever(DenseEventRetriever(ecb_index, similarity_top_k=3),
                                time_filter=mf("start", "<", "2012"))
    prompt = ChatPromptTemplate.from_messages([("system", "{context}"), ("human", "{question}")])
    chain = {"context": lc | RunnableLambda(lambda d: "\n".join(x.page_content for x in d)),
             "question": RunnablePassthrough()} | prompt
    text = chain.invoke(QUESTION).messages[0].content
    years = {line.split(",")[0][-10:-6] for line in text.splitlines()}
    assert years and all(y < "2012" for y in years)
    docs = asyncio.run(lc.ainvoke(QUESTION))
    assert docs and all(d.metadata["start"] < "2012" and isinstance(d.metadata["score"], float) for d in docs)


# ------------------------------------------------------------------ RAGAS
GOLD = "On 2014-07-09, Barack Obama criticized or denounced China."


@pytest.mark.parametrize("retrieved,ok", [
    (GOLD, True),
    ("On 2014-07-09, Barack Obama criticized China.", True),
    ("On 2014-07-09, Barack Obama praised China.", False),                       # another relation
    ("On 2014-07-09, China criticized or denounced Barack Obama.", False),       # the other direction
    ("On 2014-07-09, Barack Obama did not criticize or denounce China.", False),  # negated
    ("On 2014-07-10, Barack Obama criticized or denounced China.", False),       # another day
])
def test_temporal_ragas_metrics_check_relation_and_direction(retrieved, ok):
    pytest.importorskip("ragas")
    from ragas.dataset_schema import SingleTurnSample

    from chronorag.evaluation.ragas import TemporalContextPrecision, TemporalContextRecall

    sample = SingleTurnSample(retrieved_contexts=[retrieved], reference_contexts=[GOLD])
    assert asyncio.run(TemporalContextRecall().single_turn_ascore(sample)) == float(ok)
    assert asyncio.run(TemporalContextPrecision().single_turn_ascore(sample)) == float(ok)


def test_ragas_says_which_metrics_it_skipped(tmp_path, capsys):
    pytest.importorskip("ragas")
    from chronorag.cli import main
    from chronorag.evaluation.ragas import ragas_scores

    rec = {"question": "Who did Obama criticize?", "answers": ["China"], "predicted": ["China"], "evidence": [GOLD]}
    scores = ragas_scores([rec])
    assert "temporal_context_recall" in scores["skipped"] and "gold_evidence" in scores["skipped"]["temporal_context_recall"]
    assert "LLM" in scores["skipped"]["faithfulness"]
    assert "non_llm_string_similarity" in scores and "non_llm_string_similarity" not in scores["skipped"]
    with_ev = ragas_scores([{**rec, "gold_evidence": [GOLD]}])
    assert "temporal_context_recall" not in with_ev["skipped"] and with_ev["temporal_context_recall"] == 1.0
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps(rec) + "\n")
    assert main(["-q", "ragas", str(run)]) == 0
    out, err = capsys.readouterr()
    assert "skipped" in json.loads(out.strip().splitlines()[-1])
    assert "chronorag ragas: skipped" in err and "gold_evidence" in err and "--llm-url" in err


def test_tool_call_scores_inside_a_running_event_loop():
    pytest.importorskip("ragas")
    from chronorag.evaluation.ragas import tool_call_scores

    call = {"name": "Get_time", "args": {"head": "Obama", "rel": "criticize", "tail": "China"}}
    rec = {"question": "When?", "answers": ["2014"], "predicted": [], "evidence": [], "tool_calls": [call],
           "reference_tool_calls": [call]}

    async def in_a_notebook():  # Jupyter runs cells inside a running loop
        return tool_call_scores([rec])

    assert asyncio.run(in_a_notebook())["tool_call_accuracy"] == 1.0
    assert tool_call_scores([rec])["tool_call_accuracy"] == 1.0


# ------------------------------------------------------------------ base install
def test_settings_embed_model_is_honoured_and_the_index_loads(ecb_store, tmp_path):
    from llama_index.core import Settings
    from llama_index.core.embeddings import BaseEmbedding

    from chronorag.errors import IndexFormatError
    from chronorag.graphs.event_index import EventIndex, build_event_index
    from chronorag.retrievers.dense import DenseEventRetriever

    class HashEmbedding(BaseEmbedding):
        def _vec(self, text: str) -> list[float]:
            v = np.full(64, 1e-3)
            for w in text.lower().split():
                v[int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1.0
            return v.tolist()

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._vec(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._vec(text)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._vec(query)

    before = Settings._embed_model
    Settings.embed_model = HashEmbedding(model_name="hash64")
    try:
        built = build_event_index(ecb_store, tmp_path / "idx", cache=tmp_path / "c.sqlite", progress=False)
        assert built.meta["encoder"] == "settings" and built.meta["model_id"] == "llama_index:hash64"
        assert built.vectors.dim == 64
        loaded = EventIndex.load(tmp_path / "idx")
        nodes = DenseEventRetriever(loaded, similarity_top_k=1).retrieve("European Central Bank criticized Romania")
        assert "Romania" in nodes[0].node.text
        Settings.embed_model = HashEmbedding(model_name="another")
        with pytest.raises(IndexFormatError, match="hash64"):
            _ = EventIndex.load(tmp_path / "idx").encoder
    finally:
        Settings._embed_model = before


def test_base_install_declares_faiss_and_langchain():
    import tomllib

    root = Path(__file__).resolve().parents[1]
    meta = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("faiss-cpu") for d in meta["dependencies"])  # EventIndex needs it
    readme = (root / "README.md").read_text()
    if "create_agent" in readme:
        extras = [e for e, deps in meta["optional-dependencies"].items() if any(d.startswith("langchain>") for d in deps)]
        assert extras and any(f"chronorag[{e}]" in readme for e in extras)
