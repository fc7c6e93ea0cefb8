"""A real model in the loop: the local llama.cpp server (``local-llm`` extra) behind every LLM path.

Two parts:

- fast, deterministic tests of the pieces a real server made necessary (the chat handler's
  message flattening and tool grammar, the json_object dialect, truncation, the TempTool
  agent's abstention, HTML entities), against the scripted OpenAI double;
- ``slow`` tests against the real server serving SmolLM2-135M-Instruct (started once per
  module by :class:`~chronorag.integrations.local_llm.LocalLLMServer`, stopped by its PID).
  They check plumbing, not answer quality: a 135M model's answers are mostly wrong.
  They skip only when the ``local-llm`` extra is not installed (CI installs it).
"""

from __future__ import annotations

import json
import os
import socket

import pytest

from chronorag.errors import LLMError, MissingExtraError
from chronorag.integrations.llm import ChatLLM, LLMConfig, fallbacks, query_scope
from chronorag.integrations.local_llm import (
    LocalLLMServer,
    _plain_messages,
    _tool_schema,
    fallback_chat_format,
    local_llm_available,
)
from chronorag.integrations.testing import ScriptedOpenAIServer

SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]},
                                           "sure": {"type": "boolean"}}, "required": ["city", "sure"]}


# ------------------------------------------------------------------ the chat handler's pieces
def test_plain_messages_turn_tools_into_alternating_text_turns():
    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "Get_time", "arguments": '{"head": "A"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "2014-03-05"},
            {"role": "tool", "tool_call_id": "c2", "content": "2014-04-01"}]
    out = _plain_messages(msgs, "TOOLS")
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[0]["content"] == "S\n\nTOOLS"
    assert json.loads(out[2]["content"]) == {"tool": "Get_time", "arguments": {"head": "A"}}
    assert out[3]["content"] == "Tool result:\n2014-03-05\n\nTool result:\n2014-04-01"
    # a conversation that starts with the assistant still starts with a user turn (Gemma's template)
    assert _plain_messages([{"role": "assistant", "content": "hi"}])[0]["role"] == "user"


def test_a_gguf_without_a_chat_template_gets_its_architectures_turn_format():
    """The packaged Gemma 3 270M file carries no chat template: it gets Gemma's turns, with the
    system text opening the first user turn (Gemma's format has no system role, and
    llama-cpp-python's would drop it); other files get ChatML."""
    assert fallback_chat_format({"general.architecture": "gemma3"}) == "gemma"
    assert fallback_chat_format({"general.architecture": "llama"}) == "chatml"
    assert fallback_chat_format({}) == "chatml"
    with pytest.raises(TypeError):
        fallback_chat_format(None)  # type: ignore[arg-type]
    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}]
    assert _plain_messages(msgs, "TOOLS", system_in_user=True) == [{"role": "user", "content": "S\n\nTOOLS\n\nQ"}]
    assert _plain_messages(msgs)[0] == {"role": "system", "content": "S"}


def test_tool_schema_offers_each_tool_and_an_answer_unless_required():
    tools = [{"type": "function", "function": {"name": "Get_time", "description": "dates",
                                               "parameters": {"type": "object", "properties": {"head": {"type": "string"}}}}},
             {"type": "function", "function": {"name": "Get_head_entity", "parameters": {"type": "object"}}}]
    schema, text = _tool_schema(tools, None)
    names = [o["properties"].get("tool", {}).get("const") for o in schema["anyOf"]]
    assert names == ["Get_time", "Get_head_entity", None] and "answer" in schema["anyOf"][2]["properties"]
    assert "Get_time: dates" in text and '{"answer"' in text
    forced, text2 = _tool_schema(tools, {"type": "function", "function": {"name": "Get_head_entity"}})
    assert forced["properties"]["tool"]["const"] == "Get_head_entity" and '{"answer"' not in text2


def test_missing_extra_and_bad_settings_are_clean_errors(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "llama_cpp" else real(n, *a))
    why = local_llm_available("smollm2")
    assert why is not None and "chronorag[local-llm]" in why and "llama-cpp-python" in why
    with pytest.raises(MissingExtraError, match="local-llm"):
        LocalLLMServer(model="smollm2").start()
    with pytest.raises(Exception, match="unknown local model 'gpt-5'"):
        LocalLLMServer(model="gpt-5")
    with pytest.raises(ValueError, match="port must be"):
        LocalLLMServer(port=70000)


def test_port_in_use_is_a_clean_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        with pytest.raises(LLMError, match=f"port {port} on 127.0.0.1 is already in use"):
            LocalLLMServer(model="smollm2", port=port).start()
        from chronorag.integrations.local_llm import main

        assert main(["--model-path", __file__, "--port", str(port)]) == 2


# ------------------------------------------------------------------ client fixes, scripted
def test_json_schema_rejected_then_json_object_with_schema_for_good():
    """llama-cpp-python answers 422 to OpenAI's json_schema form; the client switches once."""
    def reply(req):
        if req.get("response_format", {}).get("type") == "json_schema":
            return {"status": 422, "body": {"detail": [{"loc": ["body", "response_format", "type"],
                                                        "msg": "Input should be 'text' or 'json_object'"}]}}
        return '{"city": "Paris", "sure": true}'

    with ScriptedOpenAIServer([reply] * 3) as srv:
        chat = ChatLLM(LLMConfig(base_url=srv.base_url, max_retries=0))
        assert chat.complete_json([{"role": "user", "content": "Capital?"}], schema=SCHEMA) == {"city": "Paris", "sure": True}
        assert chat.complete_json([{"role": "user", "content": "Again?"}], schema=SCHEMA)["city"] == "Paris"
        fmts = [r.get("response_format") for r in srv.requests]
    assert fmts[0]["type"] == "json_schema"
    assert fmts[1] == fmts[2] == {"type": "json_object", "schema": SCHEMA}  # remembered: no second 422


def test_llama_cpp_servers_500_for_json_schema_switches_dialect_and_is_a_failed_call_not_unmetered():
    """llama-cpp-python 0.3.x wraps its 422 validation error in a 500: still a dialect refusal.

    Missing this was why every ToPG call through ``demo --llm-url`` fell back, unmetered.
    """
    detail = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
              "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}")

    def reply(req):
        if req.get("response_format", {}).get("type") == "json_schema":
            return {"status": 500, "body": {"error": {"message": detail, "type": "internal_server_error"}}}
        return '{"city": "Rome", "sure": false}'

    with ScriptedOpenAIServer([reply] * 3) as srv:
        cfg = LLMConfig(base_url=srv.base_url, max_retries=0)
        chat = ChatLLM(cfg)
        with query_scope("dialect-500"):
            assert chat.complete_json([{"role": "user", "content": "Capital?"}], schema=SCHEMA) == {
                "city": "Rome", "sure": False}
            assert chat.complete_json([{"role": "user", "content": "Again?"}], schema=SCHEMA)["city"] == "Rome"
        fmts = [r.get("response_format", {}).get("type") for r in srv.requests]
    assert fmts == ["json_schema", "json_object", "json_object"]
    s = cfg.ledger.summary("dialect-500")
    assert (s["calls"], s["failed_calls"], s["unmetered_calls"]) == (3, 1, 0)
    assert fallbacks.counts("dialect-500") == {}


def test_other_500s_are_not_taken_for_a_dialect_refusal():
    with ScriptedOpenAIServer([{"status": 500, "body": {"error": {"message": "out of memory"}}}]) as srv:
        chat = ChatLLM(LLMConfig(base_url=srv.base_url, max_retries=0))
        with pytest.raises(LLMError, match="out of memory"):
            chat.complete_json([{"role": "user", "content": "Capital?"}], schema=SCHEMA)
        assert len(srv.requests) == 1


def test_truncated_reply_is_a_counted_fallback():
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": '{"city": "Pa'},
                         "finish_reason": "length"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}}
    with ScriptedOpenAIServer([{"body": body}, {"body": body}]) as srv:
        chat = ChatLLM(LLMConfig(base_url=srv.base_url, max_retries=0, max_tokens=4))
        with query_scope("trunc-1"), pytest.raises(LLMError, match="no valid JSON after 2 tries"):
            chat.complete_json([{"role": "user", "content": "Capital?"}], schema=SCHEMA)
    assert fallbacks.counts("trunc-1") == {"llm.truncated": 2}
    assert chat.ledger.summary()["completion_tokens"] == 8


def test_temptool_agent_abstains_when_the_model_never_consults_the_kg(ecb_index):
    """What SmolLM2 did through chatml-function-calling: an answer with entities, no tool call."""
    from chronorag.workflows.temptool.graph import build_graph

    said = "Barack Obama&#39;s answer is Germany."
    with ScriptedOpenAIServer([said, said]) as srv:
        g = build_graph(str(ecb_index.path), llm=LLMConfig(base_url=srv.base_url, max_retries=0))
        with query_scope("abstain-1"):
            out = g.invoke({"question": "Before Germany, who did the ECB criticize last?"})
        reminder = srv.requests[1]["messages"][-1]["content"]
    assert out["answers"] == [] and out["stopped"] == "no_tool_call" and out["tool_calls"] == 0
    assert "without consulting the knowledge graph" in out["note"] and "Obama's" in out["note"]
    assert "&#39;" not in out["note"] and "call one of the tools first" in reminder
    assert fallbacks.counts("abstain-1") == {"temptool.no_tool_call": 1, "temptool.abstain_no_kg": 1}


def test_temptool_agent_reminded_once_then_uses_the_tools(ecb_index):
    from chronorag.workflows.temptool.graph import build_graph

    call = {"tool_calls": [{"name": "Get_tail_entity", "arguments": {
        "head": "ECB", "rel": "criticize", "begin_time": "-inf", "end_time": "2011-02-14", "type": "before"}}]}
    with ScriptedOpenAIServer(["Germany", call, "Romania"]) as srv:
        g = build_graph(str(ecb_index.path), llm=LLMConfig(base_url=srv.base_url, max_retries=0))
        with query_scope("remind-1"):
            out = g.invoke({"question": "Before 2011-02-14, who did the ECB criticize last?"})
        forced = srv.requests[1].get("tool_choice")
    assert out["answers"] == ["Romania"] and out["tool_calls"] == 1 and out["stopped"] is None
    assert forced == "required"  # the reminder turn must call a tool
    assert fallbacks.counts("remind-1") == {"temptool.no_tool_call": 1}


# ------------------------------------------------------------------ the real local server
# CHRONORAG_TEST_LLM_URL (+ CHRONORAG_TEST_LLM_MODEL, CHRONORAG_TEST_LLM_KEY) points these tests at
# another real server instead (scripts/gpu_check.sh: vLLM on a GPU machine)
EXTERNAL_URL = os.environ.get("CHRONORAG_TEST_LLM_URL")
LOCAL_MODEL = os.environ.get("CHRONORAG_TEST_LOCAL_MODEL", "smollm2")
_WHY = None if EXTERNAL_URL else local_llm_available(LOCAL_MODEL)
needs_local = pytest.mark.skipif(_WHY is not None, reason=f"{_WHY}")
needs_llama_cpp = pytest.mark.skipif(local_llm_available(LOCAL_MODEL) is not None,
                                     reason=f"{local_llm_available(LOCAL_MODEL)}")


class _External:
    """A real server started elsewhere (same interface as LocalLLMServer for these tests)."""

    def __init__(self, url: str) -> None:
        self.base_url = url.rstrip("/")
        self.model = os.environ.get("CHRONORAG_TEST_LLM_MODEL", "chronorag")
        self.api_key = os.environ.get("CHRONORAG_TEST_LLM_KEY", "EMPTY")

    def config(self, **kw):
        return LLMConfig(**{"base_url": self.base_url, "model": self.model, "api_key": self.api_key,
                            "max_retries": 0, **kw})


@pytest.fixture(scope="module")
def server():
    if EXTERNAL_URL:
        yield _External(EXTERNAL_URL)
        return
    with LocalLLMServer(model=LOCAL_MODEL, threads=2, n_ctx=4096) as srv:
        yield srv


@pytest.fixture()
def cfg(server):
    return server.config(timeout=600.0, max_tokens=256)  # generous: CI machines may be loaded


@pytest.mark.slow
@needs_local
def test_structured_output_through_the_servers_json_schema_mode_and_ledger_equals_usage(server, cfg):
    chat = ChatLLM(cfg)
    with query_scope("real-json"):
        got = chat.complete_json([{"role": "user", "content": "Which city is the capital of France?"}],
                                 schema=SCHEMA, name="city")
    assert got["city"] in ("Paris", "Rome") and isinstance(got["sure"], bool)  # the grammar held
    # the ledger's tokens are the server's usage, call by call
    client = cfg.openai_client()
    resp = client.chat.completions.create(model=cfg.model, messages=[{"role": "user", "content": "Say hi."}],
                                          max_tokens=8)
    last = cfg.ledger.records[-1]
    assert (last.prompt_tokens, last.completion_tokens) == (resp.usage.prompt_tokens, resp.usage.completion_tokens)
    assert last.prompt_tokens > 0 and last.metered
    assert cfg.ledger.summary("real-json")["calls"] == 1


@pytest.mark.slow
@needs_local
def test_native_tool_calls_parsed_from_the_servers_reply(server, cfg, ecb_index):
    from chronorag.workflows.temptool.tools import TemporalKGTools, make_langchain_tools

    tools = make_langchain_tools(TemporalKGTools(ecb_index))
    reply = cfg.langchain_chat().bind_tools(tools, tool_choice="required").invoke(
        [("system", "Call a tool to look the answer up."), ("user", "When did the ECB criticize Germany?")])
    assert reply.tool_calls, f"no tool call parsed from {reply!r}"
    tc = reply.tool_calls[0]
    assert tc["name"] in {t.name for t in tools} and isinstance(tc["args"], dict) and tc["id"].startswith("call_")
    assert reply.response_metadata.get("finish_reason") == "tool_calls"


@pytest.mark.slow
@needs_local
def test_the_reply_cap_holds_whichever_name_the_client_sends(server, cfg):
    """LangChain's ChatOpenAI sends the cap as ``max_completion_tokens``, which llama-cpp-python's
    server ignored: a TempTool reply ran to the end of the 4,096-token window. chronorag's LangChain
    model sends ``max_tokens``, and the local server reads either name."""
    long = [{"role": "user", "content": "Count from 1 to 500, one number per line."}]
    client = cfg.openai_client()
    control = client.chat.completions.create(model=cfg.model, messages=long, max_tokens=64)
    assert control.usage.completion_tokens > 6, control.usage  # uncapped at 6, the model goes on
    for field in ("max_tokens", "max_completion_tokens"):
        resp = client.chat.completions.create(model=cfg.model, messages=long, **{field: 6})
        assert resp.usage.completion_tokens <= 6, (field, resp.usage)
    reply = server.config(max_tokens=6).langchain_chat().invoke(long)
    assert reply.usage_metadata["output_tokens"] <= 6, reply.usage_metadata


@pytest.mark.slow
@needs_local
def test_every_methods_llm_path_completes_on_two_questions(server, tmp_path, capsys, monkeypatch):
    """`chronorag demo --llm-url`: STAR-RAG, T-GRAG, ToPG, KG-iRAG and TempTool through the server."""
    from chronorag.cli import main

    monkeypatch.setenv("CHRONORAG_API_KEY", server.api_key)
    monkeypatch.setenv("CHRONORAG_MODEL", server.model)
    monkeypatch.delenv("CHRONORAG_STRUCTURED_OUTPUT", raising=False)  # "auto": the dialect is found per config
    code = main(["-q", "demo", "--out", str(tmp_path / "demo"), "--encoder", "static",
                 "--llm-url", server.base_url, "--max-tokens", "256", "--deadline", "900",
                 "--llm-timeout", "600"])
    out = capsys.readouterr().out
    assert "Traceback" not in out
    res = json.loads(out.strip().splitlines()[-1])["methods"]
    assert sorted(res) == ["kg-irag", "star-rag", "t-grag", "temptool", "topg"]
    for name, r in res.items():
        assert r["ok"], f"{name}: {r.get('error')}"
        assert r["questions"] == 2 and r["llm_calls"] >= 2, (name, r)
        assert r["prompt_tokens"] > 0 and r["completion_tokens"] > 0, (name, r)
        assert isinstance(r["fallbacks"], dict) and r["latency_s"] > 0
        # every answered call is metered from the server's usage; the only failed call allowed is the
        # one json_schema request llama.cpp refuses before the client switches to its json_object form
        assert r["unmetered_calls"] == 0 and r["failed_calls"] <= 1, (name, r)
    assert code == 0


@pytest.mark.slow
@needs_local
def test_dense_qa_streams_tokens_from_the_real_server(server, cfg, sample_index):
    from chronorag.workflows.dense_qa.graph import build_graph

    g = build_graph(str(sample_index.path), llm=cfg, similarity_top_k=5)
    chunks = [m for m, meta in g.stream({"question": "Whom did John Kerry meet in 2014?"}, stream_mode="messages")
              if meta.get("langgraph_node") == "answer" and getattr(m, "content", "")]
    assert len(chunks) > 1, "the answer did not arrive as a token stream"
    streamed = [r for r in cfg.ledger.records if r.path.endswith("/chat/completions")]
    if not EXTERNAL_URL:  # llama-cpp-python streams carry no usage: the ledger says so, it does not guess
        assert streamed and not streamed[-1].metered


@pytest.mark.slow
@needs_local
def test_judge_and_ragas_llm_metrics_run(server, cfg):
    from ragas.metrics import Faithfulness, LLMContextPrecisionWithReference

    from chronorag.evaluation.judge import MajorityJudge
    from chronorag.evaluation.ragas import ragas_scores

    v = MajorityJudge(cfg, votes=1)("Who leads Audi in 2022?", "Markus Duesmann", "Markus Duesmann")
    assert v.correct in (True, False) or v.failed_calls == 1
    calls = cfg.ledger.summary()["calls"]
    rec = {"id": "r1", "question": "Who chaired Audi's board in 2022?", "answers": ["Markus Duesmann"],
           "predicted": ["Markus Duesmann"],
           "evidence": ["Markus Duesmann chaired the Board of Management of Audi."]}
    scores = ragas_scores([rec], metrics=[Faithfulness(), LLMContextPrecisionWithReference()], llm=cfg)
    assert scores["n"] == 1
    for m in ("faithfulness", "llm_context_precision_with_reference"):
        assert m in scores and (scores[m] is None or 0.0 <= scores[m] <= 1.0)
        assert scores[m] is not None or scores[f"{m}_failed"] == 1
    assert cfg.ledger.summary()["calls"] > calls  # RAGAS called the server


@pytest.mark.slow
@needs_local
@needs_llama_cpp
def test_bad_input_context_overflow_cut_replies_and_a_dead_server(server, cfg, tmp_path):
    from chronorag.workflows.kg_irag.graph import build_graph
    from chronorag.workflows.kg_irag.sources import load_source_kg

    chat = ChatLLM(cfg)
    # context overflow: a clean LLMError naming the window
    with pytest.raises(LLMError, match="context"):
        chat.complete([{"role": "user", "content": "word " * 6000}])
    # a reply cut at max_tokens: a counted fallback, then the caller's documented substitute
    tiny = ChatLLM(server.config(max_tokens=3))
    with query_scope("real-cut"), pytest.raises(LLMError, match="no valid JSON"):
        tiny.complete_json([{"role": "user", "content": "Name a city."}], schema=SCHEMA)
    assert fallbacks.counts("real-cut").get("llm.truncated", 0) >= 1
    # a server that dies mid-run: KG-iRAG falls back (counted) and still answers, no traceback
    from chronorag.cli.demo import demo_data_dir

    d = demo_data_dir() / "kg_irag"
    kg, _ = load_source_kg(d / "nyc_weather_spec.json", records=next(d.glob("*.csv")))
    doomed = LocalLLMServer(model="smollm2", threads=1).start()
    g = build_graph(kg=kg, llm=doomed.config(timeout=30.0), use_llm=True, t_max=2)
    doomed.stop()
    with query_scope("real-dead"):
        out = g.invoke({"question": "Is any rain recorded at La Guardia between 2013-05-09 04:00 and "
                                    "2013-05-09 07:00?"})
    assert out["answer"] in ("yes", "no") and fallbacks.counts("real-dead").get("kg_irag.init") == 1


def test_the_local_server_reads_max_completion_tokens_as_max_tokens():
    from chronorag.integrations.local_llm import alias_token_cap

    body = json.dumps({"messages": [], "max_completion_tokens": 9}).encode()
    assert json.loads(alias_token_cap(body)) == {"messages": [], "max_tokens": 9}
    both = json.dumps({"max_tokens": 4, "max_completion_tokens": 9}).encode()
    assert alias_token_cap(both) == both  # the server's own name wins
    for other in (b"{not json", b"[1, 2]", json.dumps({"max_tokens": 3}).encode()):
        assert alias_token_cap(other) == other


def test_langchain_model_sends_the_cap_as_max_tokens():
    """The request body carries ``max_tokens`` (what llama.cpp-style servers read), never only
    ``max_completion_tokens``; a per-call override is sent the same way."""
    with ScriptedOpenAIServer(["hi", "hi"]) as srv:
        cfg = LLMConfig(base_url=srv.base_url, max_tokens=11)
        cfg.langchain_chat().invoke("Say hi.")
        cfg.langchain_chat(max_tokens=5, timeout=9.0).invoke("Say hi.")
        bodies = list(srv.requests)
    assert bodies[0].get("max_tokens") == 11 and "max_completion_tokens" not in bodies[0], bodies[0]
    assert bodies[1].get("max_tokens") == 5 and "max_completion_tokens" not in bodies[1], bodies[1]


def test_topg_caps_question_lists_in_the_schema_and_refuses_copied_placeholders():
    """What SmolLM2 did through the real server: NextQ lists past max_q, Eval's '<short answer>' echoed."""
    from chronorag.workflows.topg.search import _questions_schema, _usable

    sch = _questions_schema(3)
    assert sch["properties"]["questions"] == {"type": "array", "items": {"type": "string", "maxLength": 200},
                                              "maxItems": 3}
    assert sch["required"] == ["questions"]
    for echoed in ("<short answer>", "...", "<short answer>}; otherwise reply {"):  # the last: Gemma 3
        with pytest.raises(LLMError, match="placeholder"):
            _usable(echoed, "eval")
    for empty in ("  ", ""):
        with pytest.raises(LLMError, match="empty answer"):
            _usable(empty, "eval")
    assert _usable(" Zagreb ", "eval") == "Zagreb" and _usable("x < y", "eval") == "x < y"


def test_assistant_tool_call_turns_go_out_with_string_content():
    """llama-cpp-python refuses ``content: null`` beside ``tool_calls`` (LangChain's form) with a 500."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    with ScriptedOpenAIServer(["done", "done"]) as srv:
        cfg = LLMConfig(base_url=srv.base_url, max_retries=0)
        turn = [HumanMessage("When?"), AIMessage("", tool_calls=[{"name": "Get_time", "args": {"head": "A"},
                                                                  "id": "c1"}]),
                ToolMessage("2014-03-05", tool_call_id="c1")]
        assert cfg.langchain_chat().invoke(turn).content == "done"
        import asyncio

        assert asyncio.run(cfg.langchain_chat().ainvoke(turn)).content == "done"
        sent = [r["messages"][1] for r in srv.requests]
    assert all(m["role"] == "assistant" and m["content"] == "" and m["tool_calls"] for m in sent)
    assert cfg.ledger.summary()["calls"] == 2
