"""TempTool agent graph (planner / native / tagged), rewards and SFT records."""

import json

import pytest
from conftest import FIXTURES

from chronorag.integrations.llm import LLMConfig
from chronorag.integrations.testing import ScriptedOpenAIServer
from chronorag.workflows.temptool.graph import build_graph
from chronorag.workflows.temptool.prompts import TAGGED_SYSTEM
from chronorag.workflows.temptool.reasoner import TemporalReasoner
from chronorag.workflows.temptool.rewards import (
    correctness_reward,
    format_reward,
    grpo_reward,
    match_score,
    total_reward,
    unigram_f1,
)
from chronorag.workflows.temptool.sft import cronquestions_records, reasoner_records
from chronorag.workflows.temptool.tagged_protocol import parse_turn, split_answers

Q = "Before Germany, who did the ECB criticize last?"


def test_planner_mode_runs_the_reasoner_calls_through_the_tool_node(ecb_index):
    g = build_graph(str(ecb_index.path), protocol="planner")
    out = g.invoke({"question": Q})
    assert out["mode"] == "planner" and out["answers"] == ["Romania"] and out["tool_calls"] == 2
    kinds = [m.type for m in out["messages"]]
    assert kinds == ["human", "ai", "tool", "ai", "tool", "ai"]
    assert out["messages"][4].artifact[0]["tail"] == "Romania"
    # the second call's end_time is the date the first call observed: computed step by step
    assert out["messages"][3].tool_calls[0]["args"]["end_time"] == "2011-02-14"
    capped = g.invoke({"question": Q, "max_tool_calls": 1})
    # one call ran; the program needed two, so no answer (and it says so) rather than a replayed one
    assert capped["tool_calls"] == 1 and capped["answers"] == [] and capped["stopped"] == "max_tool_calls"
    assert [m.type for m in capped["messages"]] == ["human", "ai", "tool", "ai"]
    assert "max_tool_calls=1" in capped["messages"][-1].content


def test_native_tool_calling_over_http(ecb_index):
    script = [
        {"tool_calls": [{"name": "Get_time", "arguments": {"head": "ECB", "rel": "criticize", "tail": "Germany"}}]},
        {"tool_calls": [{"name": "Get_tail_entity", "arguments": {"head": "ECB", "rel": "criticize", "begin_time": "-inf",
                                                                 "end_time": "2011-02-14", "type": "before"}}]},
        "Romania",
    ]
    with ScriptedOpenAIServer(script) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        with cfg.ledger.query("q"):
            out = build_graph(str(ecb_index.path), llm=cfg).invoke({"question": Q})
        second = srv.requests[1]["messages"]
    assert out["mode"] == "native" and out["answers"] == ["Romania"] and out["tool_calls"] == 2
    assert {t["function"]["name"] for t in srv.requests[0]["tools"]} == {"Get_time", "Get_head_entity", "Get_tail_entity",
                                                                       "Count_events", "Rank_entities"}
    tool_msg = [m for m in second if m["role"] == "tool"][0]
    assert "2011-02-14" in tool_msg["content"]  # the observation went back to the model
    assert cfg.ledger.summary("q")["calls"] == 3


def test_agent_answers_must_be_in_its_tool_results_and_answer_the_question(ecb_index):
    """The model's final answer is kept only where this run's tool rows show it (a near
    spelling takes the row's spelling) and it answers the question as asked; otherwise it is
    counted and the run stops without an answer, saying why (a small model answers with names
    it never looked up, with the question's own entity, or with "the observations are not enough")."""
    from chronorag.integrations.llm import fallbacks, query_scope

    call = {"tool_calls": [{"name": "Get_tail_entity", "arguments": {
        "head": "ECB", "rel": "criticize", "begin_time": "-inf", "end_time": "2011-02-14", "type": "before"}}]}
    cases = [("romnia | Atlantis", ["Romania"], None, ["temptool.ungrounded"]),
             ("Atlantis", [], "is in no tool result", ["temptool.ungrounded"]),
             ("The observations are not enough.", [], "is in no tool result", ["temptool.ungrounded"]),
             ("European Central Bank", [], "does not answer the question as asked", ["temptool.off_question"])]
    for i, (reply, answers, why, kinds) in enumerate(cases):
        with ScriptedOpenAIServer([call, reply]) as srv:
            n = len(fallbacks.records)
            with query_scope(f"g{i}"):
                out = build_graph(str(ecb_index.path), llm=LLMConfig(base_url=srv.base_url)).invoke({"question": Q})
        assert out["answers"] == answers, (reply, out)
        assert [k for _, k, _ in fallbacks.records[n:]] == kinds
        if why is None:
            assert not out["abstained"]
        else:
            assert out["abstained"] and out["stopped"] == "ungrounded" and why in out["reason"], out["reason"]
            assert repr(reply.rstrip(".")) in out["reason"]


def test_agent_answer_to_a_condition_the_tools_cannot_filter_on_says_so(ecb_index):
    """No tool filters on "at least twice": the model's grounded answer stands, and its reason
    says the tools could not filter on that condition."""
    call = {"tool_calls": [{"name": "Get_tail_entity", "arguments": {
        "head": "ECB", "rel": "criticize", "begin_time": "-inf", "end_time": "inf", "type": "before"}}]}
    with ScriptedOpenAIServer([call, "Romania"]) as srv:
        out = build_graph(str(ecb_index.path), llm=LLMConfig(base_url=srv.base_url)).invoke(
            {"question": "Who did the ECB criticize at least twice?"})
    assert out["answers"] == ["Romania"] and not out["abstained"], out
    assert "the tools cannot filter on a count condition: 'at least twice'" in out["reason"], out["reason"]


def test_tagged_protocol_over_http(ecb_index):
    script = [
        '<think>Find when the ECB criticized Germany.</think>\n<tool_call>\n'
        '{"name": "Get_time", "arguments": {"head": "ECB", "rel": "criticize", "tail": "Germany"}}\n</tool_call>',
        "<think>Now look before that date.</think>\n<tool_call>\n{'name': 'Get_tail_entity', 'arguments': "
        "{'head': 'ECB', 'rel': 'criticize', 'begin_time': '-inf', 'end_time': '2011-02-14', 'type': 'before',}}",
        "<think>Only Romania.</think>\n<response>Romania</response>",
    ]
    with ScriptedOpenAIServer(script) as srv:
        out = build_graph(str(ecb_index.path), llm=LLMConfig(base_url=srv.base_url), protocol="tagged").invoke({"question": Q})
        third = srv.requests[2]["messages"]
    assert out["answers"] == ["Romania"] and out["tool_calls"] == 2
    assert third[0]["content"].startswith("You answer questions") and "tools" not in srv.requests[0]
    assert third[-1]["role"] == "user" and third[-1]["content"].startswith("<obs>") and "Romania" in third[-1]["content"]


def test_graph_rejects_bad_config(ecb_index):
    with pytest.raises(ValueError, match="protocol"):
        build_graph(str(ecb_index.path), protocol="smoke-signals")
    with pytest.raises(ValueError, match="max_tool_calls"):
        build_graph(str(ecb_index.path), max_tool_calls=0)
    with pytest.raises(ValueError, match="question"):
        build_graph(str(ecb_index.path), protocol="planner").invoke({"question": ""})


# ------------------------------------------------------------------ tagged parser
def test_parse_turn_is_forgiving():
    t = parse_turn('<think>a</think><tool_call>{"name": "Get_time", "parameters": "{\\"head\\": \\"A\\"}"}'
                   '{"function": {"name": "Get_head_entity", "arguments": {"tail": "B"}}}</tool_call>')
    assert [c["name"] for c in t.tool_calls] == ["Get_time", "Get_head_entity"]
    assert t.tool_calls[0]["arguments"] == {"head": "A"} and t.think == "a"
    t = parse_turn('<tool_call>\n{"name": "Get_time", "arguments": {"head": "A"')  # cut off mid-object
    assert t.tool_calls == [{"name": "Get_time", "arguments": {"head": "A"}}]
    t = parse_turn("<tool_call>not json</tool_call>")
    assert t.tool_calls == [] and t.errors
    assert split_answers("<response>1. Iran | China\nIran</response>") == ["Iran", "China"]


# ------------------------------------------------------------------------ rewards
GOLD = [
    {"name": "Get_time", "arguments": {"head": "Danish Ministry of Defence", "rel": "visit", "tail": "Iraq"}},
    {"name": "Get_head_entity", "arguments": {"tail": "Iraq", "rel": "visit", "begin_time": "2007-12-19",
                                              "end_time": "inf", "type": "after"}},
]


def test_match_score_hand_computed():
    # S_max = 1 + 2 + (3 + 5) = 11; a perfect prediction scores 11/11
    assert match_score(GOLD, GOLD) == pytest.approx(1.0)
    # wrong order (filter before Get_time): r_name = 0, params and values still count -> 10/11
    assert match_score(list(reversed(GOLD)), GOLD) == pytest.approx(10 / 11)
    # only Get_time, head "Danish ministry" (F1 with "Danish Ministry of Defence" = 2*1/(2+4) = 1/3):
    # r_name = 1/2, r_param = 1, r_value = 1/3 + 1 + 1 -> (0.5 + 1 + 7/3) / 11
    pred = [{"name": "Get_time", "arguments": {"head": "Danish ministry", "rel": "visit", "tail": "Iraq"}}]
    assert match_score(pred, GOLD) == pytest.approx((0.5 + 1 + 1 / 3 + 2) / 11)
    # a time given at the wrong granularity is not an exact match
    p2 = [GOLD[0], {"name": "Get_head_entity", "arguments": {**GOLD[1]["arguments"], "begin_time": "2007"}}]
    assert match_score(p2, GOLD) == pytest.approx(10 / 11)
    assert correctness_reward(GOLD, GOLD) == pytest.approx(3.0)
    assert correctness_reward([], GOLD) == pytest.approx(-3.0)
    assert unigram_f1("a b c", "a b") == pytest.approx(0.8)
    with pytest.raises(ValueError, match="gold has no tool calls"):
        match_score(GOLD, [])


def test_format_reward():
    good = '<think>x</think>\n<tool_call>\n{"name": "Get_time", "arguments": {}}\n</tool_call>'
    assert format_reward(good) == 1.0
    assert format_reward("<think>x</think><response>Iran</response>") == 1.0
    assert format_reward("<response>Iran</response>") == 0.0          # no thought first
    assert format_reward("<think>x<response>Iran</response>") == 0.0  # unbalanced
    assert format_reward("<think>x</think><tool_call>oops</tool_call>") == 0.0
    ref = good + "<obs>..</obs><think>y</think><response>Iran</response>"
    assert format_reward(ref, reference=ref) == 1.0
    assert format_reward("<think>y</think><response>Iran</response>", reference=ref) == 0.0


def test_grpo_signature():
    comp = ('<think>t</think><tool_call>{"name": "Get_time", "arguments": {"head": "Danish Ministry of Defence", '
            '"rel": "visit", "tail": "Iraq"}}</tool_call>')
    r = grpo_reward(prompts=["q"], completions=[[{"role": "assistant", "content": comp}]], gold_calls=[GOLD])
    assert r == [pytest.approx(total_reward(comp, GOLD))]
    assert r[0] == pytest.approx(1.0 + 6 * (0.5 + 1 + 3) / 11 - 3)
    with pytest.raises(ValueError, match="completions"):
        grpo_reward(completions=["a", "b"], gold_calls=[GOLD])


# ----------------------------------------------------------------------------- SFT
def test_cronquestions_to_sft_keeps_correct_only():
    recs = list(cronquestions_records(FIXTURES / "cronq_trajectories.jsonl", system_prompt=TAGGED_SYSTEM))
    assert len(recs) == 2  # the middle trajectory is marked incorrect
    msgs = recs[0]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant"]
    assert msgs[1]["content"] == "What was the name of the team Roberto Colombo played in 2000?"
    call = parse_turn(msgs[2]["content"]).tool_calls[0]
    assert call == {"name": "Get_tail_entity", "arguments": {"head": "Roberto Colombo", "rel": "member of sports team",
                                                            "begin_time": "2000", "end_time": "2000", "type": "in/on"}}
    assert msgs[3]["content"].startswith("<obs>") and msgs[-1]["content"].endswith("<response>A.C. Milan</response>")
    assert all(format_reward(m["content"]) == 1.0 for m in msgs if m["role"] == "assistant")


def test_reasoner_trajectories_to_sft(ecb_tools):
    qs = [{"question": Q, "answers": ["Romania"]}, {"question": Q, "answers": ["Ireland"]}]
    recs = list(reasoner_records(TemporalReasoner(ecb_tools), qs, system_prompt=TAGGED_SYSTEM))
    assert len(recs) == 1
    text = json.dumps(recs[0])
    assert "Get_time" in text and "<response>Romania</response>" in text


def test_llm_reranker_and_tools_method_over_http(ecb_index):
    from chronorag.evaluation import make_method
    from chronorag.workflows.temptool.alignment import LLMReranker
    from chronorag.workflows.temptool.tools import TemporalKGTools

    with ScriptedOpenAIServer(["2"]) as srv:  # the LLM picks candidate 2 of its list
        cfg = LLMConfig(base_url=srv.base_url)
        tools = TemporalKGTools(ecb_index, entity_reranker=LLMReranker(cfg))
        al = tools.align_entity("people in Hungary")  # not an exact name: goes through the reranker
        listing = srv.requests[0]["messages"][0]["content"]
    second = [line for line in listing.splitlines() if line.startswith("2. ")][0][3:]
    assert al.name == second
    script = [{"tool_calls": [{"name": "Get_tail_entity", "arguments": {"head": "ECB", "rel": "criticize",
                                                                        "begin_time": "-inf", "end_time": "2011-02-14",
                                                                        "type": "before"}}]}, "Romania"]
    with ScriptedOpenAIServer(script) as srv:
        method = make_method("tools", ecb_index.path, llm_url=srv.base_url)
        pred = method({"quid": 1, "question": Q, "answers": ["Romania"]})
    assert pred.answers == ["Romania"] and pred.info["mode"] == "native" and pred.info["tokens"]["calls"] == 2
