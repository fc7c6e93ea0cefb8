import pytest

from chronorag.integrations.llm import LLMConfig
from chronorag.integrations.testing import ScriptedOpenAIServer
from chronorag.workflows.dense_qa.graph import build_graph, parse_ranked_lines


def test_no_llm_mode(sample_index):
    g = build_graph(str(sample_index.path), llm=LLMConfig(base_url=None))
    out = g.invoke({"question": "Who did Xi Jinping host a visit from?"})
    assert set(out) == {"answers", "evidence", "mode"}
    assert out["mode"].startswith("no-LLM") and len(out["evidence"]) == 10
    assert "Xi Jinping" not in out["answers"]
    with pytest.raises(ValueError, match="question"):
        g.invoke({"question": "  "})


def test_llm_mode_over_http(sample_index):
    with ScriptedOpenAIServer(["1. Barack Obama\n2. John Kerry\n- Japan"]) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        out = build_graph(str(sample_index.path), llm=cfg).invoke({"question": "Who visited Xi Jinping?"})
        prompt = srv.requests[0]["messages"][1]["content"]
    assert out["answers"] == ["Barack Obama", "John Kerry", "Japan"]
    assert "Who visited Xi Jinping?" in prompt and out["evidence"][0] in prompt
    assert cfg.ledger.summary()["calls"] == 1


def test_parse_ranked_lines():
    assert parse_ranked_lines('1) "Iran"\n\n2. China\n* Iran') == ["Iran", "China"]
