"""TempTool agent against what a real model does: threads, malformed calls, limits, failures.

Every LLM here is the OpenAI-protocol test double over real HTTP.
"""

import json
import socket
import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from chronorag.errors import LLMError, TimeParseError
from chronorag.integrations.llm import LLMConfig, fallbacks, query_scope
from chronorag.integrations.testing import ScriptedOpenAIServer
from chronorag.workflows.temptool.graph import build_graph
from chronorag.workflows.temptool.tagged_protocol import parse_turn

Q = "Before Germany, who did the ECB criticize last?"
Q2 = "Who criticized the European Central Bank first?"
TAIL_BEFORE = {"head": "ECB", "rel": "criticize", "begin_time": "-inf", "end_time": "2011-02-14", "type": "before"}


def _cfg(srv, **kw):
    return LLMConfig(base_url=srv.base_url, max_retries=0, **kw)


def _tool_msgs(out):
    return [m for m in out["messages"] if m.type == "tool"]


# ------------------------------------------------------------------- threads and input
def test_second_question_on_a_checkpointed_thread_gets_its_own_answer(ecb_index):
    from langgraph.checkpoint.memory import InMemorySaver

    g = build_graph(str(ecb_index.path), protocol="planner", checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t1"}}
    first = g.invoke({"question": Q}, cfg)
    second = g.invoke({"question": Q2}, cfg)
    assert first["answers"] == ["Romania"] and second["answers"][0] == "France"
    assert second["tool_calls"] == 1 and second["stopped"] is None
    # the thread keeps the whole conversation; the run only used its own messages
    assert [m.content for m in second["messages"] if m.type == "human"] == [Q, Q2]
    third = g.invoke({"messages": [HumanMessage(Q)]}, cfg)  # MessagesState-style input on the same thread
    assert third["answers"] == ["Romania"] and third["tool_calls"] == 2


def test_messages_input_and_missing_key(ecb_index):
    g = build_graph(str(ecb_index.path), protocol="planner")
    assert g.invoke({"messages": [HumanMessage(Q)]})["answers"] == ["Romania"]
    with pytest.raises(ValueError, match="'question'.*'messages'"):
        g.invoke({"max_tool_calls": 3})
    with pytest.raises(ValueError, match="'messages' with a new human message"):
        g.invoke({"messages": [AIMessage("hello")]})


def test_context_schema_replaces_config(ecb_index, monkeypatch):
    monkeypatch.delenv("CHRONORAG_INDEX_DIR", raising=False)
    g = build_graph()
    props = g.get_context_jsonschema()["properties"]
    assert {"index_dir", "protocol", "max_tool_calls", "max_obs_rows", "deadline_s"} <= set(props)
    out = g.invoke({"question": Q}, context={"index_dir": str(ecb_index.path), "protocol": "planner",
                                             "max_tool_calls": 1})
    assert out["tool_calls"] == 1 and out["stopped"] == "max_tool_calls"
    with pytest.raises(ValueError, match="no index directory"):
        g.invoke({"question": Q}, context={"protocol": "planner"})
    slow = g.invoke({"question": Q}, context={"index_dir": str(ecb_index.path), "protocol": "planner",
                                              "deadline_s": 1e-9})
    assert slow["stopped"] == "deadline" and slow["answers"] == [] and "deadline" in slow["messages"][-1].content


# --------------------------------------------------------------- native tool calling
def test_native_garbled_call_then_corrected(ecb_index):
    script = [
        {"tool_calls": [{"name": "Get_tail_entity", "arguments": '{"head": "ECB", "rel": criticize'}]},
        {"tool_calls": [{"name": "Get_tail_entity", "arguments": json.dumps(json.dumps(TAIL_BEFORE))}]},  # a JSON string
        "<think>\nRomania is the latest one before.\n</think>\n\nRomania",
    ]
    with ScriptedOpenAIServer(script) as srv:
        out = build_graph(str(ecb_index.path), llm=_cfg(srv)).invoke({"question": Q})
        second = srv.requests[1]["messages"]
    assert out["answers"] == ["Romania"] and out["tool_calls"] == 2
    err, ok = _tool_msgs(out)
    assert err.status == "error" and "could not be read" in err.content and ok.status == "success"
    sent = [m for m in second if m["role"] == "tool"]
    assert len(sent) == 1 and "not valid JSON" in sent[0]["content"]  # the model saw why


def test_native_unknown_tool_and_bad_argument(ecb_index):
    script = [
        {"tool_calls": [{"name": "Get_weather", "arguments": {"city": "Frankfurt"}},
                        {"name": "Get_tail_entity", "arguments": {**TAIL_BEFORE, "end_time": "2011-13-45"}}]},
        {"tool_calls": [{"name": "Get_tail_entity", "arguments": TAIL_BEFORE}]},
        "Romania",
    ]
    with ScriptedOpenAIServer(script) as srv:
        out = build_graph(str(ecb_index.path), llm=_cfg(srv)).invoke({"question": Q})
    unknown, bad, good = _tool_msgs(out)
    assert unknown.status == "error" and "unknown tool 'Get_weather'" in unknown.content
    assert bad.status == "error" and "2011-13-45" in bad.content
    assert good.status == "success" and out["answers"] == ["Romania"]


def test_native_model_that_never_stops_calling_tools(ecb_index):
    forever = {"tool_calls": [{"name": "Get_time", "arguments": {"head": "ECB", "rel": "criticize", "tail": "Germany"}}]}
    with ScriptedOpenAIServer([forever] * 10) as srv:
        out = build_graph(str(ecb_index.path), llm=_cfg(srv), max_tool_calls=3).invoke({"question": Q})
        n_requests = len(srv.requests)
        last_prompt = srv.requests[-1]
    assert out["tool_calls"] == 3 and out["answers"] == [] and out["stopped"] == "max_tool_calls"
    assert "max_tool_calls=3" in out["messages"][-1].content
    assert n_requests == 4 and "tools" not in last_prompt  # one last turn without tools, then it stops
    assert "limit" in last_prompt["messages"][-1]["content"]


OVERFLOW = {"status": 400, "body": {"error": {
    "message": "This model's maximum context length is 4096 tokens. However, you requested 4410 tokens.",
    "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}}


@pytest.mark.parametrize("protocol", ["native", "tagged"])
def test_tool_results_that_outgrow_the_models_window_end_in_a_counted_stop(ecb_index, protocol):
    """SmolLM2's 4,096-token window filled up after a few tool results on MultiTQ (2 of 10 questions)."""
    call = ({"tool_calls": [{"name": "Get_tail_entity", "arguments": TAIL_BEFORE}]} if protocol == "native"
            else "<tool_call>\n" + json.dumps({"name": "Get_tail_entity", "arguments": TAIL_BEFORE}) + "\n</tool_call>")
    with ScriptedOpenAIServer([call, OVERFLOW]) as srv, query_scope(f"overflow-{protocol}"):
        out = build_graph(str(ecb_index.path), llm=_cfg(srv), protocol=protocol).invoke({"question": Q})
    assert out["answers"] == [] and out["stopped"] == "context_window" and out["tool_calls"] == 1
    assert "after 1 tool calls" in out["note"] and "4096" in out["note"]
    assert fallbacks.counts(f"overflow-{protocol}") == {"temptool.context_overflow": 1}
    # a question that does not fit at all is an error naming the agent, not a stop
    with ScriptedOpenAIServer([OVERFLOW]) as srv, pytest.raises(LLMError, match="TempTool agent.*context length"):
        build_graph(str(ecb_index.path), llm=_cfg(srv), protocol=protocol).invoke({"question": Q})


def test_replies_without_a_tool_call_that_outgrow_the_window_end_in_a_counted_stop(ecb_index):
    """Gemma 3 270M (session 31): it answered without a tool call, was reminded, and the
    conversation then outgrew the 4,096-token window with no tool call made. That is the
    conversation's overflow, not the question's: a counted stop, not an error row."""
    with ScriptedOpenAIServer(["I think it was Romania, but I am not sure.", OVERFLOW]) as srv, \
            query_scope("overflow-reminded"):
        out = build_graph(str(ecb_index.path), llm=_cfg(srv)).invoke({"question": Q})
    assert out["answers"] == [] and out["stopped"] == "context_window", out
    assert "after a reply without a tool call" in out["note"] and "4096" in out["note"]
    assert fallbacks.counts("overflow-reminded") == {"temptool.no_tool_call": 1, "temptool.context_overflow": 1}


def _cut(text):
    """A reply cut at max_tokens (``finish_reason: "length"``), as llama.cpp sends it."""
    return {"body": {"id": "chatcmpl-cut", "object": "chat.completion", "created": 0, "model": "chronorag",
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                  "finish_reason": "length"}],
                     "usage": {"prompt_tokens": 50, "completion_tokens": 256, "total_tokens": 306}}}


CALL = {"tool_calls": [{"name": "Get_tail_entity", "arguments": TAIL_BEFORE}]}
AS_TEXT = '{"tool": "Get_time", "arguments": {"head": "China", "rel": "USSBA-2005", "tail": "A/B/C"}}'


@pytest.mark.parametrize("script, max_calls, reason, why", [
    # SmolLM2 through llama.cpp on MultiTQ: every "answer" it gave was one of these
    ([CALL, AS_TEXT], 8, "unusable_reply", "tool call as text"),
    ([CALL, _cut('{"tool": "Get_time", "arguments": {"head": "Head, Rel, Tail, time: 2018-03-24 15')], 8,
     "unusable_reply", "cut at max_tokens"),
    ([CALL, CALL, AS_TEXT], 2, "max_tool_calls", "tool call as text"),  # the last turn, without tools
])
def test_a_final_reply_that_is_no_answer_is_not_returned_as_one(ecb_index, script, max_calls, reason, why):
    with ScriptedOpenAIServer(script) as srv, query_scope(f"unusable-{reason}-{len(script)}-{why[:4]}"):
        out = build_graph(str(ecb_index.path), llm=_cfg(srv), max_tool_calls=max_calls).invoke({"question": Q})
    assert out["answers"] == [] and out["stopped"] == reason and why in out["note"]
    assert fallbacks.counts(f"unusable-{reason}-{len(script)}-{why[:4]}") == {"temptool.unusable_reply": 1}


def test_a_plain_answer_and_a_tagged_answer_are_still_answers(ecb_index):
    with ScriptedOpenAIServer([CALL, "Romania"]) as srv:
        assert build_graph(str(ecb_index.path), llm=_cfg(srv)).invoke({"question": Q})["answers"] == ["Romania"]
    tagged = ["<tool_call>\n" + json.dumps({"name": "Get_tail_entity", "arguments": TAIL_BEFORE}) + "\n</tool_call>",
              _cut("<response>Romania")]
    with ScriptedOpenAIServer(tagged) as srv:
        out = build_graph(str(ecb_index.path), llm=_cfg(srv), protocol="tagged").invoke({"question": Q})
    assert out["answers"] == [] and "cut at max_tokens" in out["note"]


# ------------------------------------------------------------------------ tagged protocol
def test_tagged_garbled_unknown_then_corrected(ecb_index):
    script = [
        '<think>look it up</think>\n<tool_call>\n{"name": "Get_time", "arguments": {"head": "ECB", "rel": }\n</tool_call>',
        '<think>fix</think>\n<tool_call>\n{"name": "Get_when", "arguments": {"head": "ECB"}}\n</tool_call>',
        # a call written before a response: the call runs and the model is asked again
        "<think>now</think>\n<tool_call>\n" + json.dumps({"name": "Get_tail_entity", "arguments": TAIL_BEFORE})
        + "\n</tool_call>\n<response>Ireland</response>",
        "<think>Only Romania is before.</think>\n<response>Romania</response>",
    ]
    with ScriptedOpenAIServer(script) as srv:
        out = build_graph(str(ecb_index.path), llm=_cfg(srv), protocol="tagged").invoke({"question": Q})
        obs = [r["messages"][-1]["content"] for r in srv.requests[1:]]
    assert out["answers"] == ["Romania"] and out["tool_calls"] == 3
    assert obs[0].startswith("<obs>") and "not valid JSON" in obs[0]
    assert "unknown tool 'Get_when'" in obs[1]
    assert "Romania" in obs[2] and "2010-08-30" in obs[2]


def test_tagged_limit_and_deep_json():
    deep = "<tool_call>" + '{"name": "Get_time", "arguments": ' + "[" * 100_000 + "]" * 100_000 + "}</tool_call>"
    t = parse_turn(deep)  # no RecursionError
    assert t.tool_calls == [] and "nested deeper" in t.errors[0]
    t = parse_turn('<tool_call>{"name": "Get_time", "arguments": "{\\"head\\": \\"A\\"}"}</tool_call><response>x</response>')
    assert t.tool_calls == [{"name": "Get_time", "arguments": {"head": "A"}}] and t.calls_before_response
    assert not parse_turn("<response>x</response><tool_call>{}</tool_call>").calls_before_response


# ----------------------------------------------------------------------- LLM failures
def _closed_port_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_llm_failures_are_llm_errors(ecb_index):
    from chronorag.evaluation import make_method

    q = {"quid": 1, "question": Q, "answers": ["Romania"]}
    with pytest.raises(LLMError, match="failed in the TempTool agent.*Connection"):
        make_method("tools", ecb_index.path, llm_url=_closed_port_url())(q)
    for reply, pattern in [({"status": 500, "body": {"error": {"message": "boom"}}}, "boom"),
                           ({"body": {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                      "choices": []}}, "no choices")]:
        with ScriptedOpenAIServer([reply]) as srv:
            with pytest.raises(LLMError, match=pattern):
                build_graph(str(ecb_index.path), llm=_cfg(srv)).invoke({"question": Q})

    def slow(_req):
        time.sleep(1.5)
        return "Romania"

    with ScriptedOpenAIServer([slow]) as srv:
        with pytest.raises(LLMError, match="[Tt]imeout|timed out"):
            build_graph(str(ecb_index.path), llm=_cfg(srv, timeout=0.2)).invoke({"question": Q})


# ------------------------------------------------------------- reranker and reasoner
def test_llm_reranker_reasoning_preamble_and_fallback(ecb_index):
    from chronorag.workflows.temptool.alignment import LLMReranker
    from chronorag.workflows.temptool.tools import TemporalKGTools

    with ScriptedOpenAIServer(['<think>\nThe second one is the citizens.\n</think>\n\n{"choice": 2}']) as srv:
        rr = LLMReranker(_cfg(srv))
        al = TemporalKGTools(ecb_index, entity_reranker=rr).align_entity("people in Hungary")
        req = srv.requests[0]
    listing = req["messages"][0]["content"]
    assert al.name == [ln for ln in listing.splitlines() if ln.startswith("2. ")][0][3:]
    assert req["response_format"]["type"] == "json_schema" and rr.failures == 0
    fallbacks.clear()
    with ScriptedOpenAIServer(["<think>hmm</think> I am not sure", "still no number"]) as srv:
        rr = LLMReranker(_cfg(srv))
        with query_scope("q-rr"):
            al = TemporalKGTools(ecb_index, entity_reranker=rr).align_entity("people in Hungary")
    assert rr.failures == 1 and fallbacks.counts("q-rr") == {"temptool.rerank_lexical": 1}
    with pytest.raises(LLMError, match="llm must be"):
        LLMReranker(object())


def test_reasoner_reports_invalid_and_out_of_range_dates(ecb_tools, ecb_index):
    from chronorag.evaluation import make_method
    from chronorag.workflows.temptool.reasoner import TemporalReasoner

    r = TemporalReasoner(ecb_tools)
    bad = r.answer("Who did the European Central Bank criticize on 2014-13-45?")
    assert bad.answers == [] and "2014-13-45" in bad.error and bad.calls == []
    old = r.answer("Who did the European Central Bank criticize in 1850?")
    assert old.answers == [] and "outside the graph's time span" in old.note  # not all-time answers
    method = make_method("tools", ecb_index.path)
    with pytest.raises(TimeParseError, match="2014-13-45"):
        method({"question": "Who did the European Central Bank criticize on 2014-13-45?", "answers": ["x"]})
    pred = method({"question": "Who did the European Central Bank criticize in 1850?", "answers": ["x"]})
    assert pred.answers == [] and "1850" in pred.info["note"]


def test_agent_accepts_llm_objects(ecb_index):
    from langchain_openai import ChatOpenAI
    from llama_index.llms.openai_like import OpenAILike

    tagged = ["<think>x</think>\n<tool_call>\n" + json.dumps({"name": "Get_tail_entity", "arguments": TAIL_BEFORE})
              + "\n</tool_call>", "<think>done</think><response>Romania</response>"]
    with ScriptedOpenAIServer(tagged) as srv:
        li = OpenAILike(api_base=srv.base_url, api_key="x", model="chronorag", is_chat_model=True)
        out = build_graph(str(ecb_index.path), llm=li).invoke({"question": Q})
    assert out["mode"] == "tagged" and out["answers"] == ["Romania"]
    native = [{"tool_calls": [{"name": "Get_tail_entity", "arguments": TAIL_BEFORE}]}, "Romania"]
    with ScriptedOpenAIServer(native) as srv:
        lc = ChatOpenAI(base_url=srv.base_url, api_key="x", model="chronorag", max_retries=0)
        out = build_graph(str(ecb_index.path), llm=lc).invoke({"question": Q})
    assert out["mode"] == "native" and out["answers"] == ["Romania"]
    with pytest.raises(LLMError, match="llm must be"):
        build_graph(str(ecb_index.path), llm=object())


def test_no_llm_cli_reports_instead_of_none(ecb_index, capsys):
    import copy

    import numpy as np

    from chronorag.cli import main
    from chronorag.errors import IndexFormatError
    from chronorag.workflows.temptool.tools import TemporalKGTools

    idx = str(ecb_index.path)
    assert main(["ask", idx, "Who did the European Central Bank criticize on 2014-13-45?", "--method", "tools"]) == 2
    assert "2014-13-45" in capsys.readouterr().err
    assert main(["ask", idx, "Who did the European Central Bank criticize in 1850?", "--method", "tools"]) == 0
    out = capsys.readouterr().out
    assert "answers: (none)" in out and "why:" in out and "outside the graph's time span" in out
    assert main(["ask", idx, Q, "--method", "tools", "--deadline", "0"]) == 2
    assert "--deadline must be > 0" in capsys.readouterr().err

    class OtherEncoder:  # an encoder that does not match the stored vectors
        dim = 7

        def encode(self, texts):
            return np.zeros((len(texts), 7), np.float32)

    broken = copy.copy(ecb_index)
    broken._encoder = OtherEncoder()
    with pytest.raises(IndexFormatError, match="7"):
        TemporalKGTools(broken)
