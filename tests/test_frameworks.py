"""What a LlamaIndex / LangChain user does with chronorag's retrievers and tools."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest


def test_similarity_scores_and_hidden_metadata(ecb_index):
    from chronorag.retrievers.dense import DenseEventRetriever

    nodes = DenseEventRetriever(ecb_index, similarity_top_k=4).retrieve("European Central Bank criticized")
    assert len(nodes) == 4
    assert all(-1.0 <= n.score <= 1.0 for n in nodes)
    assert nodes[0].score >= nodes[-1].score
    node = nodes[0].node
    from llama_index.core.schema import MetadataMode

    llm_text = node.get_content(metadata_mode=MetadataMode.LLM)
    assert "event_id" not in llm_text and llm_text == node.text  # ids are noise for the LLM


def test_per_query_time_filter_overrides_the_default(ecb_index):
    from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

    from chronorag.retrievers.base import TimeFilter
    from chronorag.retrievers.dense import DenseEventRetriever

    r = DenseEventRetriever(ecb_index, similarity_top_k=20)
    all_years = {n.node.metadata["start"][:4] for n in r.retrieve("European Central Bank")}
    assert len(all_years) > 1
    only = r.retrieve("European Central Bank", time_filter={"begin_time": "2012", "end_time": "2012"})
    assert only and {n.node.metadata["start"][:4] for n in only} == {"2012"}
    mf = MetadataFilters(filters=[MetadataFilter(key="start", operator=FilterOperator.GTE, value="2014-01-01")])
    later = r.retrieve("European Central Bank", time_filter=mf)
    assert later and all(n.node.metadata["start"] >= "2014" for n in later)
    # the per-query filter does not stick to the retriever
    assert {n.node.metadata["start"][:4] for n in r.retrieve("European Central Bank")} == all_years
    r12 = DenseEventRetriever(ecb_index, similarity_top_k=20, time_filter=TimeFilter("2012", "2012"))
    assert {n.node.metadata["start"][:4] for n in r12.retrieve("European Central Bank")} == {"2012"}


@pytest.mark.parametrize("bad,match", [
    ({"begin_time": "2014-13-45"}, "2014-13-45"),
    ({"type": "sometime"}, "sometime"),
    ({"begin": "2014"}, "begin_time, end_time, type"),
    ("2014", "TimeFilter, a dict or MetadataFilters"),
    ({"begin_time": "2015", "end_time": "2014"}, "begins after it ends"),
])
def test_bad_time_filters_name_the_value(ecb_index, bad, match):
    from chronorag.retrievers.dense import DenseEventRetriever

    with pytest.raises(ValueError, match=match):
        DenseEventRetriever(ecb_index).retrieve("ECB", time_filter=bad)


def test_aretrieve_runs_in_worker_threads(ecb_index):
    from chronorag.retrievers.dense import DenseEventRetriever

    r = DenseEventRetriever(ecb_index, similarity_top_k=3)
    seen: set[int] = set()
    orig = r._retrieve

    def spy(qb):
        seen.add(threading.get_ident())
        return orig(qb)

    r._retrieve = spy  # type: ignore[method-assign]

    async def main():
        return await asyncio.gather(*(r.aretrieve(q) for q in ["ECB criticize", "Romania", "Germany"]))

    res = asyncio.run(main())
    assert [len(x) for x in res] == [3, 3, 3]
    assert threading.get_ident() not in seen  # not run on the event loop's thread


def test_langchain_retriever_adapter(ecb_index):
    from langchain_core.retrievers import BaseRetriever

    from chronorag.integrations.langchain_adapters import as_langchain_retriever
    from chronorag.retrievers.dense import DenseEventRetriever

    lc = as_langchain_retriever(DenseEventRetriever(ecb_index, similarity_top_k=3),
                                time_filter={"begin_time": "2012", "end_time": "2012"})
    assert isinstance(lc, BaseRetriever)
    docs = lc.invoke("European Central Bank criticized")
    assert docs and all(d.metadata["start"].startswith("2012") for d in docs)
    assert all(isinstance(d.metadata["score"], float) for d in docs)
    adocs = asyncio.run(lc.ainvoke("European Central Bank criticized"))
    assert [d.page_content for d in adocs] == [d.page_content for d in docs]
    with pytest.raises(TypeError, match="LlamaIndex retriever"):
        as_langchain_retriever(object())


def test_llama_index_function_tools(ecb_tools):
    from llama_index.core.tools import FunctionTool

    from chronorag.workflows.temptool.llama_index_tools import make_llama_index_tools

    tools = {t.metadata.name: t for t in make_llama_index_tools(ecb_tools)}
    assert set(tools) == {"Get_time", "Get_head_entity", "Get_tail_entity"}
    assert all(isinstance(t, FunctionTool) for t in tools.values())
    schema = tools["Get_tail_entity"].metadata.get_parameters_dict()
    assert {"head", "rel", "begin_time", "end_time", "type"} <= set(schema["properties"])
    out = tools["Get_tail_entity"](head="European Central Bank", rel="Criticize or denounce")
    assert "Romania" in str(out) and not out.is_error
    with pytest.raises(TypeError, match="TemporalKGTools or an EventIndex"):
        make_llama_index_tools("not tools")


def test_query_engine_with_a_llama_index_llm(ecb_index):
    """A LlamaIndex user plugs the retriever into a query engine with their own LLM object."""
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from chronorag.retrievers.dense import DenseEventRetriever

    engine = RetrieverQueryEngine.from_args(DenseEventRetriever(ecb_index, similarity_top_k=3), llm=MockLLM())
    resp = engine.query("Who did the European Central Bank criticize?")
    assert len(resp.source_nodes) == 3
    assert all("European Central Bank" in n.node.text for n in resp.source_nodes)


def test_public_api_resolves_every_name():
    import chronorag

    for name in chronorag.__all__:
        assert getattr(chronorag, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        chronorag.Nope  # noqa: B018


def test_py_typed_is_shipped():
    from pathlib import Path

    import chronorag

    assert (Path(chronorag.__file__).parent / "py.typed").is_file()


def test_mypy_sees_chronorag_types(tmp_path):
    """A user's ``mypy --strict`` run type-checks calls into chronorag's public API
    (py.typed, explicit re-exports, pydantic defaults so ``LLMConfig()`` type-checks)."""
    import subprocess
    import sys

    pytest.importorskip("mypy")
    root = Path(__file__).resolve().parents[1]
    good = tmp_path / "user_good.py"
    good.write_text(
        "from chronorag import (\n"
        "    ConfigError, DenseEventRetriever, EventIndex, LLMConfig, TemporalEventStore, TimeFilter,\n"
        "    build_temptool_graph, read_events,\n"
        ")\n\n"
        "cfg = LLMConfig()\n"
        "cfg2 = LLMConfig(base_url='http://127.0.0.1:8000/v1', model='m')\n"
        "store: TemporalEventStore = read_events('x.tsv')\n"
        "idx: EventIndex = EventIndex.load('idx')\n"
        "nodes = DenseEventRetriever(idx, similarity_top_k=3).retrieve('q', time_filter=TimeFilter('2014', '2014'))\n"
        "out = build_temptool_graph(llm=cfg).invoke({'question': 'q'})\n"
        "err: ConfigError = ConfigError('x')\n")
    bad = tmp_path / "user_bad.py"
    bad.write_text("from chronorag import TimeFilter\n\nTimeFilter(begin_time=2014)\n")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                        "--config-file", str(root / "pyproject.toml"), "--no-error-summary", str(good), str(bad)],
                       capture_output=True, text=True, timeout=600)
    assert "user_good.py" not in r.stdout, r.stdout + r.stderr
    assert 'Argument "begin_time" to "TimeFilter" has incompatible type "int"' in r.stdout, r.stdout + r.stderr


def test_framework_embedding_models_build_an_index(tmp_path, ecb_store, minilm):
    """Settings.embed_model, a LlamaIndex BaseEmbedding or LangChain Embeddings build an index."""
    from llama_index.core import Settings

    from chronorag.graphs.encoders import (
        as_encoder,
        as_langchain_embeddings,
        as_llama_index_embedding,
    )
    from chronorag.graphs.event_index import build_event_index
    from chronorag.retrievers.dense import DenseEventRetriever

    li = as_llama_index_embedding(minilm)
    lc = as_langchain_embeddings(minilm)
    assert as_encoder(lc).model_id.startswith("langchain:")
    old = Settings._embed_model
    try:
        Settings.embed_model = li
        enc = as_encoder(None)
        assert enc.model_id.startswith("llama_index:") and enc.dim == minilm.dim
        idx = build_event_index(ecb_store, tmp_path / "idx", encoder=enc, progress=False, cache=tmp_path / "c.sqlite")
    finally:
        Settings._embed_model = old
    idx.encoder = enc
    top = DenseEventRetriever(idx, similarity_top_k=1).retrieve("European Central Bank criticized Romania")
    assert "Romania" in top[0].node.text
    with pytest.raises(TypeError, match="LangChain Embeddings, got builtins.int"):
        as_encoder(3)


def test_one_retrieval_event_per_query(ecb_index):
    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler
    from llama_index.core.instrumentation.events.retrieval import RetrievalStartEvent

    from chronorag.retrievers.dense import DenseEventRetriever

    seen = []

    class Counter(BaseEventHandler):
        def handle(self, event, **kwargs):
            if isinstance(event, RetrievalStartEvent):
                seen.append(event)

    root = get_dispatcher()
    h = Counter()
    root.add_event_handler(h)
    try:
        DenseEventRetriever(ecb_index, similarity_top_k=2).retrieve("ECB", time_filter={"begin_time": "2012"})
    finally:
        root.event_handlers.remove(h)
    assert len(seen) == 1
