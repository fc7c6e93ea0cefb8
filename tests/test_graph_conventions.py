"""The conventions every chronorag LangGraph graph keeps, tested as an integrator would use them.

- one kw_only Context dataclass per graph, with a description per field and real defaults;
- build_graph's settings are defaults that a run's context overrides field by field;
- a parent graph's context (another class, extra keys) drives a graph used as a sub-graph;
- the incoming question is consumed at the start of a run: a failed run never poisons the thread;
- nodes are module functions taking ``Runtime[Context]``; ``build_graph`` takes a checkpointer.
"""

from __future__ import annotations

import csv
import dataclasses
import importlib
import inspect
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from chronorag.errors import ChronoRAGError, ConfigError
from chronorag.workflows.common import resolve_context
from chronorag.workflows.dense_qa.state import QAContext
from chronorag.workflows.kg_irag.state import KGIRAGContext
from chronorag.workflows.temptool.state import AgentContext
from chronorag.workflows.topg.search import ToPGSettings
from chronorag.workflows.topg.state import ToPGContext

# the graph modules (a package may re-export its compiled ``graph`` under the same name)
dense_graph = importlib.import_module("chronorag.workflows.dense_qa.graph")
tt_graph = importlib.import_module("chronorag.workflows.temptool.graph")
topg_graph = importlib.import_module("chronorag.workflows.topg.graph")
kg_graph = importlib.import_module("chronorag.workflows.kg_irag.graph")

CONTEXTS = [QAContext, AgentContext, ToPGContext, KGIRAGContext]
MODULES = [dense_graph, tt_graph, topg_graph, kg_graph]
ECB_Q = "Before Germany, who did the European Central Bank criticize last?"


@pytest.fixture(scope="module")
def record_kg(tmp_path_factory):
    from test_kg_irag import SPEC, _rows

    from chronorag.workflows.kg_irag.record_kg import read_records_csv

    p = tmp_path_factory.mktemp("conv") / "sensors.csv"
    with open(p, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["timestamp", "station", "rain_mm", "wind"])
        w.writeheader()
        w.writerows(_rows())
    return read_records_csv(p, SPEC)


@pytest.mark.parametrize("cls", CONTEXTS, ids=lambda c: c.__name__)
def test_one_kw_only_context_with_descriptions_and_real_defaults(cls):
    assert dataclasses.is_dataclass(cls)
    for f in dataclasses.fields(cls):
        assert f.kw_only, f"{cls.__name__}.{f.name} is not keyword-only"
        assert f.metadata.get("description"), f"{cls.__name__}.{f.name} has no description"
        assert f.default not in ("", -1), f"{cls.__name__}.{f.name} uses {f.default!r} for 'default'"
    assert dataclasses.asdict(cls())  # every field has a default
    with pytest.raises(TypeError):
        cls("positional")


@pytest.mark.parametrize("mod", MODULES, ids=lambda m: m.__name__.split(".")[-2])
def test_studio_sees_field_descriptions(mod):
    schema = mod.graph.get_context_jsonschema()
    props = schema["properties"]
    assert props and all(p.get("description") for p in props.values())


@pytest.mark.parametrize("mod", MODULES, ids=lambda m: m.__name__.split(".")[-2])
def test_nodes_are_module_functions_taking_the_runtime(mod):
    g = mod.build_graph() if mod is not kg_graph else mod.build_graph(source="nyc-weather")
    names = [n for n in g.get_graph().nodes if not n.startswith("__")]
    assert names
    for n in names:
        fn = getattr(mod, n if n != "tools" else "tools_node", None)
        assert inspect.isfunction(fn) and fn.__module__ == mod.__name__, f"node {n} of {mod.__name__}"
    assert "checkpointer" in inspect.signature(mod.build_graph).parameters


@pytest.mark.parametrize("cls", CONTEXTS, ids=lambda c: c.__name__)
def test_bad_context_values_are_config_errors(cls):
    bad = {"QAContext": {"similarity_top_k": 0}, "AgentContext": {"protocol": "smoke"},
           "ToPGContext": {"lam": 2.0}, "KGIRAGContext": {"hop_cap": 7}}[cls.__name__]
    with pytest.raises(ConfigError, match=next(iter(bad))):
        cls(**bad)
    assert issubclass(ConfigError, ChronoRAGError) and issubclass(ConfigError, ValueError)


def test_resolve_context_overrides_field_by_field_from_any_source():
    base = ToPGContext(mode="naive", k=3, lam=0.2)
    # our own dataclass: only the fields it was given
    assert resolve_context(base, ToPGContext(max_iter=1)) == ToPGContext(mode="naive", k=3, lam=0.2, max_iter=1)
    # a mapping with a parent's extra keys: known keys override, the rest is ignored
    r = resolve_context(base, {"lam": 0.9, "thread_title": "x", "user_id": 7})
    assert (r.mode, r.k, r.lam) == ("naive", 3, 0.9)

    # any object (a parent's context class): its set attributes of known names
    @dataclass
    class Parent:
        index_dir: str = "/data/idx"
        user_id: int = 1
        mode: str | None = None

    r = resolve_context(base, Parent())
    assert (r.index_dir, r.mode, r.k) == ("/data/idx", "naive", 3)
    assert resolve_context(base, None) is base
    with pytest.raises(ConfigError, match="k must be"):
        resolve_context(base, {"k": 0})
    # a context of the wrong type was run with the defaults, silently
    for bad in ([1, 2], "naive", 3):
        with pytest.raises(ConfigError, match="context must be a mapping"):
            resolve_context(base, bad)


def test_topg_build_settings_survive_a_run_context(topg_dir):
    # today's bug: any context silently replaced build_graph(settings=...)
    g = topg_graph.build_graph(mode="naive", index_dir=str(topg_dir), settings=ToPGSettings(k=4))
    out = g.invoke({"question": "Who founded Nordic Pictures?"}, context={"mode": "naive"})
    assert len(out["proposition_ids"]) == 4
    out = g.invoke({"question": "Who founded Nordic Pictures?"}, context=ToPGContext(k=2))
    assert len(out["proposition_ids"]) == 2 and out["info"]["mode"] == "naive"


def test_temptool_build_settings_survive_a_run_context(ecb_index):
    g = tt_graph.build_graph(protocol="planner", max_tool_calls=1)
    out = g.invoke({"question": ECB_Q}, context={"index_dir": str(ecb_index.path)})
    assert out["stopped"] == "max_tool_calls"  # the build-time budget held under a context naming index_dir
    out = g.invoke({"question": ECB_Q}, context={"index_dir": str(ecb_index.path), "max_tool_calls": 8})
    assert out["answers"][0] == "Romania"


class ParentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


@dataclass
class ParentContext:
    """A parent app's own context: index_dir plus keys no chronorag graph knows."""

    index_dir: str
    user_id: str = "u1"
    tenant: str = "acme"


def _parent(sub: Any) -> Any:
    g = StateGraph(ParentState, context_schema=ParentContext)
    g.add_node("chronorag", sub)
    g.add_edge(START, "chronorag")
    g.add_edge("chronorag", END)
    return g.compile(checkpointer=InMemorySaver())


def test_temptool_and_dense_as_subgraphs_take_index_dir_from_the_parent(ecb_index, monkeypatch):
    monkeypatch.delenv("CHRONORAG_INDEX_DIR", raising=False)
    monkeypatch.delenv("CHRONORAG_BASE_URL", raising=False)
    ctx = ParentContext(index_dir=str(ecb_index.path))
    cfg = {"configurable": {"thread_id": "p1"}}
    p = _parent(tt_graph.build_graph(protocol="planner"))
    out = p.invoke({"messages": [HumanMessage(ECB_Q)]}, cfg, context=ctx)
    assert "Romania" in out["messages"][-1].content
    # a second question on the parent's thread gets its own answer
    out = p.invoke({"messages": [HumanMessage("When did the European Central Bank first criticize Romania?")]},
                   cfg, context=ctx)
    assert "2010" in out["messages"][-1].content
    d = _parent(dense_graph.build_graph())
    out = d.invoke({"messages": [HumanMessage("Whom did the European Central Bank criticize?")]},
                   {"configurable": {"thread_id": "p2"}}, context=ctx)
    assert out["messages"][-1].type == "ai" and out["messages"][-1].content


def test_topg_as_subgraph_takes_index_dir_from_the_parent(topg_dir, monkeypatch):
    monkeypatch.delenv("CHRONORAG_INDEX_DIR", raising=False)
    p = _parent(topg_graph.build_graph(mode="naive"))
    out = p.invoke({"messages": [HumanMessage("Who founded Nordic Pictures?")]},
                   {"configurable": {"thread_id": "p3"}}, context=ParentContext(index_dir=str(topg_dir)))
    assert out["messages"][-1].type == "ai" and out["messages"][-1].content


def test_kg_irag_as_subgraph_ignores_the_parents_keys(record_kg):
    p = _parent(kg_graph.build_graph(kg=record_kg, source="fixture"))
    q = "Can I spend 2 hours at C starting 2013-05-01 10:00 without running into rain?"
    out = p.invoke({"messages": [HumanMessage(q)]}, {"configurable": {"thread_id": "p4"}},
                   context=ParentContext(index_dir="/unused"))
    assert out["messages"][-1].content.startswith("yes")


def test_a_failed_topg_run_does_not_poison_the_thread(topg_dir, tmp_path):
    g = topg_graph.build_graph(mode="naive", checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    with pytest.raises(ChronoRAGError):  # no index there: fails after the question was taken
        g.invoke({"messages": [HumanMessage("Where was the director of the film Blue Harbor born?")]}, cfg,
                 context={"index_dir": str(tmp_path / "missing")})
    q2 = "Who founded Nordic Pictures and where?"
    out = g.invoke({"question": q2}, cfg, context={"index_dir": str(topg_dir)})
    assert out["current"] == q2  # not the failed run's question
    with pytest.raises(ConfigError, match="question"):  # the failed question is gone, not re-answered
        g.invoke({}, cfg, context={"index_dir": str(topg_dir)})


def test_a_failed_kg_irag_run_does_not_poison_the_thread(record_kg, monkeypatch):
    g = kg_graph.build_graph(kg=record_kg, source="fixture", checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    real = kg_graph.engine.psi

    def boom(*a: Any, **k: Any) -> Any:
        raise RuntimeError("records backend down")

    monkeypatch.setattr(kg_graph.engine, "psi", boom)
    q1 = "Can I spend 2 hours at A starting 2013-05-01 10:00 without running into rain?"
    with pytest.raises(RuntimeError, match="backend down"):
        g.invoke({"question": q1}, cfg)
    monkeypatch.setattr(kg_graph.engine, "psi", real)
    q2 = "Can I spend 2 hours at C starting 2013-05-01 10:00 without running into rain?"
    out = g.invoke({"messages": [HumanMessage(q2)]}, cfg)
    assert out["answer"] == "yes" and all(i.startswith("fixture:C@") for i in out["evidence_ids"])
    with pytest.raises(ConfigError, match="question"):
        g.invoke({}, cfg)


def test_a_failed_dense_run_does_not_poison_the_thread(ecb_index, tmp_path):
    g = dense_graph.build_graph(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    with pytest.raises(ChronoRAGError):
        g.invoke({"question": "Whom did the ECB criticize?"}, cfg, context={"index_dir": str(tmp_path / "nope")})
    with pytest.raises(ConfigError, match="question"):
        g.invoke({}, cfg, context={"index_dir": str(ecb_index.path)})


def test_env_is_read_when_a_run_starts_not_at_import(ecb_index, monkeypatch):
    monkeypatch.delenv("CHRONORAG_INDEX_DIR", raising=False)
    g = dense_graph.build_graph()  # built with no index and no environment
    monkeypatch.setenv("CHRONORAG_INDEX_DIR", str(ecb_index.path))
    out = g.invoke({"question": "Whom did the European Central Bank criticize?"})
    assert out["evidence"]


def test_unknown_llm_object_is_an_error_at_build_time():
    from chronorag.errors import LLMError

    for mod in (dense_graph, tt_graph, topg_graph):
        with pytest.raises(LLMError):
            mod.build_graph(llm=object())
    with pytest.raises(LLMError):
        kg_graph.build_graph(llm=object())
    with pytest.raises(ConfigError, match="unknown KG-iRAG settings"):
        kg_graph.build_graph(windows=3)


def test_every_answering_graph_says_whether_it_abstained_and_why(ecb_index, topg_dir, monkeypatch):
    """TempTool, dense QA and ToPG return ``abstained`` and ``reason`` like KG-iRAG: an answer has
    ``abstained`` false; no answer says why (a refusal, nothing retrieved, no LLM for ToPG)."""
    monkeypatch.delenv("CHRONORAG_BASE_URL", raising=False)
    tt = tt_graph.build_graph(index_dir=str(ecb_index.path), protocol="planner")
    out = tt.invoke({"question": ECB_Q})
    assert out["answers"] and out["abstained"] is False
    out = tt.invoke({"question": "Who did the European Central Bank criticize in 1850?"})
    assert out["answers"] == [] and out["abstained"] is True and "1850" in out["reason"], out["reason"]
    d = dense_graph.build_graph(str(ecb_index.path))
    out = d.invoke({"question": "Whom did the European Central Bank criticize?"})
    assert out["answers"] and out["abstained"] is False
    assert out["reason"] == ("read over the 10 retrieved events: the KG may hold more answers, and the ranking "
                             "counts only these events"), out["reason"]
    t = topg_graph.build_graph(mode="naive", index_dir=str(topg_dir))
    out = t.invoke({"question": "Who founded Nordic Pictures?"})
    assert out["answer"] == "" and out["abstained"] is True and out["reason"].startswith("no LLM"), out["reason"]


def test_a_reply_that_says_the_material_does_not_answer_is_an_abstention():
    from chronorag.graphs.text import no_answer_reply

    for t in ("Not stated.", "The answer is not stated.", "The facts do not mention it.", "Unknown",
              "I don't know.", "The reports do not say.",
              # the first: SmolLM2 through T-GRAG (session 30); the rest: the same refusal in other words
              "The material does not answer the question.", "The figure is not listed in the material.",
              "I am unable to determine this from the material.", "Not reported.",
              "The 2012 report does not explicitly state a goal for it.", "It is not directly mentioned.",
              "The launch date of the Audi A3 e-tron is not stated."):  # "A3" is a name, not a figure
        assert no_answer_reply(t), t
    # negative facts are answers: the subject is not the material, or a figure is stated
    for t in ("Audi did not report a loss in 2020.", "The company did not give a dividend in 2020.",
              "Revenue was not disclosed separately but totalled EUR 5 billion.", "No data breaches occurred.",
              "The report gives no details on the recall; 5,000 cars were affected.", "Audi was unable to find a buyer.",
              "Profit was not only reported but also audited."):
        assert not no_answer_reply(t), t
    for t in ("Markus Duesmann", "No", "1,614,231 cars", "It was not the first time: Audi delivered 1.8 million "
              "cars in 2019, more than in any year before, as the report states on page 33 of its summary "
              "and again in the outlook, which is not known for optimism."):
        assert not no_answer_reply(t), t


def test_a_question_input_joins_the_transcript_and_the_answer_streams(topg_dir, ecb_index):
    """``{"question": ...}`` on ToPG wrote no message at all (``stream_mode="messages"`` yielded
    nothing and the thread had no transcript), and dense QA left the question out: both now
    record the question and the answer, run after run on a thread."""
    from langchain_core.messages import AIMessage

    for g, ctx, questions in (
            (topg_graph.build_graph(mode="naive", checkpointer=InMemorySaver()), {"index_dir": str(topg_dir)},
             ["Who founded Nordic Pictures?", "Where was the director of the film Blue Harbor born?"]),
            (dense_graph.build_graph(checkpointer=InMemorySaver()), {"index_dir": str(ecb_index.path)},
             ["Whom did the ECB criticize?", "Whom did the ECB praise?"])):
        cfg = {"configurable": {"thread_id": "t"}}
        for q in questions:
            out = g.invoke({"question": q}, cfg, context=ctx)
        kinds = [type(m).__name__ for m in out["messages"]]
        assert kinds == ["HumanMessage", "AIMessage", "HumanMessage", "AIMessage"], kinds
        assert [m.content for m in out["messages"][::2]] == questions
        streamed = [m for m, _meta in g.stream({"question": questions[0]}, {"configurable": {"thread_id": "s"}},
                                                context=ctx, stream_mode="messages")]
        assert any(isinstance(m, AIMessage) and m.content for m in streamed), streamed
