"""The README's framework examples run as written (LlamaIndex, LangChain, LangGraph, graph DB)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = {m.group(1): m.group(0) for m in re.finditer(
    r"```python\n# example: (\w+)\n.*?```", README.read_text(encoding="utf-8"), re.S)}


def _run(name: str, capsys) -> str:
    code = BLOCKS[name].removeprefix("```python\n").removesuffix("```")
    exec(compile(code, f"README.md:{name}", "exec"), {"__name__": f"readme_{name}"})
    return capsys.readouterr().out


def test_all_examples_found():
    assert set(BLOCKS) >= {"llamaindex", "langchain", "langgraph", "graphdb"}


@pytest.fixture()
def index_env(sample_index, monkeypatch):
    monkeypatch.setenv("CHRONORAG_INDEX_DIR", str(sample_index.path))
    monkeypatch.delenv("CHRONORAG_BASE_URL", raising=False)


def test_llamaindex_example(index_env, capsys):
    assert "Kerry" in _run("llamaindex", capsys)


def test_langchain_agent_example(index_env, monkeypatch, capsys):
    from chronorag.integrations.testing import ScriptedOpenAIServer

    call = {"tool_calls": [{"name": "Get_tail_entity", "arguments": {
        "head": "John Kerry", "rel": "Consult", "begin_time": "-inf", "end_time": "2014-06", "type": "before"}}]}

    def final(req):
        tool_msgs = [m for m in req["messages"] if m.get("role") == "tool"]
        assert tool_msgs and "John Kerry" in tool_msgs[-1]["content"]  # the agent saw the KG rows
        return "Sergey Lavrov"

    with ScriptedOpenAIServer([call, final]) as srv:
        monkeypatch.setenv("CHRONORAG_BASE_URL", srv.base_url)
        out = _run("langchain", capsys)
    assert out.strip().endswith("Sergey Lavrov")


def test_langgraph_subgraph_example(index_env, capsys):
    out = _run("langgraph", capsys)
    assert out.strip() and "Xi Jinping" not in out.splitlines()[0]


def test_graphdb_example(capsys):
    pytest.importorskip("ladybug", reason="graphdb extra not installed: pip install 'chronorag[graphdb]'")
    assert _run("graphdb", capsys).startswith("On 2014-")
