import pytest

from chronorag.integrations.llm import LLMConfig
from chronorag.integrations.testing import ScriptedOpenAIServer
from chronorag.workflows.dense_qa.graph import build_graph, parse_ranked_lines


def test_no_llm_mode(sample_index):
    g = build_graph(str(sample_index.path), llm=LLMConfig(base_url=None))
    out = g.invoke({"question": "Which country did Xi Jinping make a visit to?"})
    assert set(out) == {"answers", "evidence", "mode", "abstained", "reason", "messages"}
    assert out["abstained"] is False and out["answers"][:1] == ["China"], (out["answers"], out["reason"])
    # a list read over a sample of the KG says so
    assert out["reason"] == ("read over the 10 retrieved events: the KG may hold more answers, and the ranking "
                             "counts only these events")
    assert out["mode"].startswith("no-LLM") and len(out["evidence"]) == 10
    assert "Xi Jinping" not in out["answers"]
    # the retrieved events are his visits, not visits he hosted: no answer from them
    out = g.invoke({"question": "Who did Xi Jinping host a visit from?"})
    assert out["abstained"] and out["answers"] == [] and "is of 'Host a visit'" in out["reason"], out["reason"]
    with pytest.raises(ValueError, match="question"):
        g.invoke({"question": "  "})
    with pytest.raises(ValueError, match="'question' string or 'messages'"):
        g.invoke({"query": "who?"})


def test_llm_mode_over_http(sample_index):
    with ScriptedOpenAIServer(["1. Barack Obama\n2. John Kerry\n- Japan"]) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        out = build_graph(str(sample_index.path), llm=cfg).invoke({"question": "Who visited Xi Jinping?"})
        prompt = srv.requests[0]["messages"][1]["content"]
    assert out["answers"] == ["Barack Obama", "John Kerry", "Japan"]
    assert "Who visited Xi Jinping?" in prompt and out["evidence"][0] in prompt
    assert cfg.ledger.summary()["calls"] == 1
    assert out["abstained"] is False and out["reason"] == ""  # nothing went unread


def test_llm_mode_names_the_conditions_nothing_filtered(sample_index):
    """A condition the parser cannot represent ("at least twice") is not dropped silently on the
    LLM path: the LLM's answer stands, and ``reason`` says the retriever did not apply it."""
    with ScriptedOpenAIServer(["1. Barack Obama"]) as srv:
        out = build_graph(str(sample_index.path), llm=LLMConfig(base_url=srv.base_url)).invoke(
            {"question": "Who visited Xi Jinping at least twice?"})
    assert out["answers"] == ["Barack Obama"] and out["abstained"] is False
    assert out["reason"].startswith("the dense retriever cannot filter on a count condition: 'at least twice'"), \
        out["reason"]
    with ScriptedOpenAIServer(["1. Barack Obama"]) as srv:
        out = build_graph(str(sample_index.path), llm=LLMConfig(base_url=srv.base_url)).invoke(
            {"question": "Who visited Xi Jinping first?"})
    assert out["reason"] == ("'first' was read by the LLM over the 10 retrieved events: an event the retriever "
                             "did not return could change it"), out["reason"]


def test_parse_ranked_lines():
    assert parse_ranked_lines('1) "Iran"\n\n2. China\n* Iran') == ["Iran", "China"]


def test_second_question_on_a_thread_gets_its_own_answer(sample_index):
    from langgraph.checkpoint.memory import InMemorySaver

    g = build_graph(llm=LLMConfig(base_url=None), checkpointer=InMemorySaver())
    ctx = {"index_dir": str(sample_index.path), "similarity_top_k": 5}
    cfg = {"configurable": {"thread_id": "t1"}}
    first = g.invoke({"question": "Who did Xi Jinping host a visit from?"}, cfg, context=ctx)
    second = g.invoke({"question": "Who did Barack Obama criticize?"}, cfg, context=ctx)
    assert len(first["evidence"]) == len(second["evidence"]) == 5  # context's top-k used
    assert first["evidence"] != second["evidence"] and first["answers"] != second["answers"]
    assert any("Obama" in e for e in second["evidence"])
    # the thread keeps the conversation: two AI answers
    assert sum(m.type == "ai" for m in g.get_state(cfg).values["messages"]) == 2


def test_messages_after_a_question_on_one_thread(sample_index):
    """A checkpointed thread keeps the first run's 'question'; a later chat message must win."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    g = build_graph(str(sample_index.path), llm=LLMConfig(base_url=None), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "mixed"}}
    first = g.invoke({"question": "Who did Xi Jinping host a visit from?"}, cfg)
    second = g.invoke({"messages": [HumanMessage("Who did Barack Obama criticize?")]}, cfg)
    assert second["evidence"] != first["evidence"]
    assert any("Obama" in e for e in second["evidence"])
    third = g.invoke({"question": "Who did Xi Jinping host a visit from?"}, cfg)
    assert third["evidence"] == first["evidence"]  # a plain question after a chat turn still works


def test_messages_input_and_context_index(sample_index):
    from langchain_core.messages import HumanMessage

    g = build_graph(llm=LLMConfig(base_url=None))
    out = g.invoke({"messages": [HumanMessage("Which country did Xi Jinping make a visit to?")]},
                   context={"index_dir": str(sample_index.path)})
    assert out["answers"] and out["messages"][-1].type == "ai"
    with pytest.raises(ValueError, match="no index directory"):
        build_graph(llm=LLMConfig(base_url=None)).invoke({"question": "x?"})


def test_llm_tokens_stream_and_reasoning_is_stripped(sample_index):
    from llama_index.core.llms import MockLLM  # noqa: F401  (LlamaIndex LLM objects are accepted too)

    reply = "<think>\nThe events say Obama visited.\n</think>\n1. Barack Obama\n2. Japan"
    with ScriptedOpenAIServer([reply]) as srv:
        g = build_graph(str(sample_index.path), llm=LLMConfig(base_url=srv.base_url).langchain_chat())
        chunks = [c for c, _meta in g.stream({"question": "Who visited Xi Jinping?"}, stream_mode="messages")]
    streamed = "".join(str(c.content) for c in chunks if c.type in ("AIMessageChunk", "ai"))
    assert "Barack Obama" in streamed
    assert len([c for c in chunks if c.type == "AIMessageChunk"]) > 1  # token by token


def test_llm_objects(sample_index):
    from llama_index.core.llms import MockLLM

    from chronorag.errors import LLMError

    with ScriptedOpenAIServer(["1. Barack Obama"]) as srv:
        li = LLMConfig(base_url=srv.base_url).llama_index_llm()  # a LlamaIndex LLM object
        out = build_graph(str(sample_index.path), llm=li).invoke({"question": "Who visited Xi Jinping?"})
    assert out["answers"] == ["Barack Obama"] and out["mode"].startswith("LLM (llama_index")
    with pytest.raises(LLMError, match="pass LLMConfig"):
        build_graph(str(sample_index.path), llm="http://localhost:8000/v1")
    with pytest.raises(LLMError, match="got builtins.object"):
        build_graph(str(sample_index.path), llm=object())
    assert MockLLM  # MockLLM is a LlamaIndex LLM: accepted, not an error
    build_graph(str(sample_index.path), llm=MockLLM())


def test_no_llm_mode_applies_the_question_and_refuses_what_it_cannot(ecb_index):
    """Without an LLM the graph read the retrieved events' names whatever the question asked
    ("in 1850", "how many"); it now applies the question's window and entity, and refuses, saying
    why, what a reader of a few events cannot answer."""
    g = build_graph(str(ecb_index.path), llm=LLMConfig(base_url=None))
    out = g.invoke({"question": "Whom did the European Central Bank criticize in 2011?"})
    assert out["answers"][:1] == ["Government (Germany)"] and out["abstained"] is False
    out = g.invoke({"question": "Whom did the European Central Bank criticize in 1850?"})
    assert out["answers"] == [] and out["abstained"] and "1850" in out["reason"], out["reason"]
    out = g.invoke({"question": "How many times did the European Central Bank criticize Romania?"})
    assert out["answers"] == [] and out["abstained"] and "count" in out["reason"], out["reason"]
    assert out["messages"][-1].content.startswith("No answer: ")


def test_a_reply_repeating_the_prompt_is_refused_not_read_as_answers(sample_index):
    """A base model continues the prompt: its lines (the events, the instructions) must not
    become ranked answers. The run fails with an LLMError naming the cause, counted as llm.echo."""
    import pytest

    from chronorag.errors import LLMError
    from chronorag.integrations.llm import fallbacks, query_scope

    q = {"question": "Who visited Xi Jinping?"}
    with ScriptedOpenAIServer(["1. Barack Obama"]) as srv:
        build_graph(str(sample_index.path), llm=LLMConfig(base_url=srv.base_url)).invoke(q)
        prompt = srv.requests[0]["messages"][1]["content"]
    with ScriptedOpenAIServer([prompt + "\n" + prompt[:300]]) as srv:
        with query_scope("dense-echo"), pytest.raises(LLMError, match="repeated the prompt"):
            build_graph(str(sample_index.path), llm=LLMConfig(base_url=srv.base_url)).invoke(q)
    assert fallbacks.counts("dense-echo") == {"llm.echo": 1}
