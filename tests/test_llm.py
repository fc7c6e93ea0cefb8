"""LLM path, end to end over HTTP against the ScriptedOpenAIServer test double."""

import asyncio

import numpy as np
import pytest

from chronorag.errors import LLMError
from chronorag.graphs.encoders import OpenAIEmbeddingEncoder
from chronorag.integrations.llm import LLMConfig, chat
from chronorag.integrations.testing import ScriptedOpenAIServer


def test_config_from_env(monkeypatch):
    monkeypatch.setenv("CHRONORAG_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("CHRONORAG_MODEL", "qwen")
    monkeypatch.setenv("CHRONORAG_TEMPERATURE", "0.3")
    cfg = LLMConfig()
    assert (cfg.base_url, cfg.model, cfg.temperature) == ("http://127.0.0.1:9/v1", "qwen", 0.3)
    from chronorag.errors import ConfigError

    # a ChronoRAGError naming the field and the value (was pydantic's four-line ValidationError)
    with pytest.raises(ConfigError, match=r"^LLMConfig: base_url: base_url must be an http\(s\) URL, got 'localhost:8000'$"):
        LLMConfig(base_url="localhost:8000")
    with pytest.raises(ConfigError, match=r"temperature: .*\(got -1\)"):
        LLMConfig(temperature=-1)
    monkeypatch.setenv("CHRONORAG_TEMPERATURE", "hot")  # from the environment, the same
    with pytest.raises(ConfigError, match="temperature"):
        LLMConfig()
    monkeypatch.setenv("CHRONORAG_TEMPERATURE", "0.3")
    monkeypatch.delenv("CHRONORAG_BASE_URL")
    with pytest.raises(LLMError, match="CHRONORAG_BASE_URL"):
        LLMConfig().require()


def test_chat_langchain_llamaindex_and_ledger():
    replies = ["Paris", "Berlin", "Rome"]
    with ScriptedOpenAIServer(replies) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        with cfg.ledger.query("q1"):
            assert chat(cfg, [{"role": "user", "content": "capital of france"}]) == "Paris"
            assert cfg.langchain_chat().invoke("capital of germany").content == "Berlin"
        from llama_index.core.llms import ChatMessage

        with cfg.ledger.query("q2"):
            out = cfg.llama_index_llm().chat([ChatMessage(role="user", content="capital of italy please")])
        assert out.message.content == "Rome"
        assert srv.requests[0]["messages"][0]["content"] == "capital of france"
    per = cfg.ledger.per_query()
    assert per["q1"]["calls"] == 2 and per["q1"]["prompt_tokens"] == 6 and per["q1"]["completion_tokens"] == 2
    assert per["q2"] == {**per["q2"], "calls": 1, "prompt_tokens": 4, "completion_tokens": 1}
    assert per["q1"]["latency_s"] > 0


def test_native_tool_calls_and_streaming():
    from langchain_core.tools import tool

    @tool
    def get_time(head: str, rel: str, tail: str) -> str:
        """When did head do rel to tail."""
        return "2010-08-30"

    call = {"tool_calls": [{"name": "get_time", "arguments": {"head": "ECB", "rel": "criticize", "tail": "Romania"}}]}
    with ScriptedOpenAIServer([call, "streamed answer"]) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        msg = cfg.langchain_chat().bind_tools([get_time]).invoke("when?")
        assert msg.tool_calls[0]["name"] == "get_time"
        assert msg.tool_calls[0]["args"] == {"head": "ECB", "rel": "criticize", "tail": "Romania"}
        assert srv.requests[0]["tools"][0]["function"]["name"] == "get_time"
        chunks = [c.content for c in cfg.langchain_chat().stream("go")]
        assert "".join(chunks) == "streamed answer"


def test_async_client_and_errors():
    with ScriptedOpenAIServer(["async ok"]) as srv:
        cfg = LLMConfig(base_url=srv.base_url, max_retries=0)
        res = asyncio.run(cfg.langchain_chat().ainvoke("hi"))
        assert res.content == "async ok"
        assert cfg.ledger.summary()["calls"] == 1
        with pytest.raises(LLMError, match="exhausted"):
            chat(cfg, [{"role": "user", "content": "one too many"}])
    with pytest.raises(ValueError, match="message #0"):
        chat(LLMConfig(base_url="http://127.0.0.1:9/v1"), ["not a dict"])
    with pytest.raises(LLMError, match="no LLM endpoint"):
        chat(LLMConfig(), [{"role": "user", "content": "x"}])


def test_openai_embedding_endpoint():
    with ScriptedOpenAIServer(embedding_dim=24) as srv:
        enc = OpenAIEmbeddingEncoder(srv.base_url, "emb", batch_size=2)
        v = enc.encode(["a", "b", "c", "a"])
        assert v.shape == (4, 24) and np.allclose(v[0], v[3])
        assert np.allclose(np.linalg.norm(v, axis=1), 1)
        assert len(srv.requests) == 2  # batched
    with pytest.raises(ValueError, match="base_url"):
        OpenAIEmbeddingEncoder("ftp://x", "m")


def test_llm_judge_over_http():
    from chronorag.evaluation.judge import judge_answer

    with ScriptedOpenAIServer(["CORRECT", "Incorrect.", "maybe"]) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        assert judge_answer(cfg, "Deliveries in 2022?", "1,614,231", "About 1.61 million (1,614,231).") is True
        assert judge_answer(cfg, "Deliveries in 2022?", "1,614,231", "1.8 million") is False
        with pytest.raises(LLMError, match="maybe"):
            judge_answer(cfg, "Deliveries in 2022?", "1,614,231", "x")
        assert "Reference answer: 1,614,231" in srv.requests[0]["messages"][0]["content"]
    assert judge_answer(LLMConfig(), "q", "g", "") is False  # empty prediction: wrong, no call needed
    with pytest.raises(ValueError, match="gold"):
        judge_answer(LLMConfig(), "q", " ", "x")


# --- one adapter for every LLM object -------------------------------------------------

def test_strip_reasoning_variants():
    from chronorag.integrations.llm import strip_reasoning

    assert strip_reasoning("<think>\nhmm\n</think>\n\n1. Romania") == "1. Romania"
    assert strip_reasoning("<THINKING>a</THINKING>b") == "b"
    assert strip_reasoning("<think>never closed, budget ran out") == ""
    assert strip_reasoning("server ate the opening tag</think>\nRomania") == "Romania"
    assert strip_reasoning("plain") == "plain"


def test_resolve_llm_accepts_every_llm_object_and_strips_reasoning():
    from chronorag.integrations.llm import ChatLLM, LLMConfig, resolve_llm
    from chronorag.integrations.testing import ScriptedOpenAIServer

    with ScriptedOpenAIServer(["<think>x</think>Paris"] * 3) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        for obj, kind in [(cfg, "config"), (cfg.langchain_chat(), "langchain"), (cfg.llama_index_llm(), "llama_index")]:
            c = resolve_llm(obj)
            assert isinstance(c, ChatLLM) and c.kind == kind
            assert c.complete([{"role": "user", "content": "Capital of France?"}]) == "Paris"


def test_resolve_llm_settings_env_and_errors(monkeypatch):
    from llama_index.core import Settings
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata

    from chronorag.errors import LLMError
    from chronorag.integrations.llm import LLMConfig, resolve_llm

    monkeypatch.delenv("CHRONORAG_BASE_URL", raising=False)
    assert resolve_llm(None) is None  # documented no-LLM mode
    assert resolve_llm(LLMConfig(base_url=None)) is None  # explicit no-LLM
    with pytest.raises(LLMError, match="no LLM endpoint configured"):
        resolve_llm(None, required=True)
    with pytest.raises(LLMError, match="got builtins.dict"):
        resolve_llm({"model": "x"})
    with pytest.raises(LLMError, match="pass LLMConfig"):
        resolve_llm("http://localhost:8000/v1")
    monkeypatch.setenv("CHRONORAG_BASE_URL", "http://127.0.0.1:9/v1")
    assert resolve_llm(None).kind == "config"

    class Echo(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata()

        def complete(self, prompt, formatted=False, **kw):
            return CompletionResponse(text="<think>..</think>{\"answer\": \"Oslo\"}")

        def stream_complete(self, prompt, formatted=False, **kw):
            raise NotImplementedError

    old = Settings._llm
    try:
        Settings.llm = Echo()
        c = resolve_llm(None)  # Settings.llm wins over the environment
        assert c.kind == "llama_index"
        assert c.complete_json([{"role": "user", "content": "q"}], schema={"type": "object"}) == {"answer": "Oslo"}
    finally:
        Settings._llm = old


def test_complete_json_retries_once_then_raises():
    from chronorag.errors import LLMError
    from chronorag.integrations.llm import LLMConfig, resolve_llm
    from chronorag.integrations.testing import ScriptedOpenAIServer

    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    with ScriptedOpenAIServer(["not json", '<think>ok</think>{"a": 1}', "nope", "still nope"]) as srv:
        c = resolve_llm(LLMConfig(base_url=srv.base_url))
        assert c.complete_json([{"role": "user", "content": "x"}], schema=schema) == {"a": 1}
        with pytest.raises(LLMError, match="no valid JSON after 2 tries"):
            c.complete_json([{"role": "user", "content": "x"}], schema=schema)
        sent = srv.requests[0]
    assert sent["response_format"]["type"] == "json_schema"  # structured output requested


def test_fallback_log_counts_per_query():
    from chronorag.integrations.llm import FallbackLog, query_scope

    log = FallbackLog()
    with query_scope("q1"):
        log.add("reranker.lexical")
        log.add("reranker.lexical")
    log.add("other")
    assert log.counts("q1") == {"reranker.lexical": 2}
    assert log.counts() == {"reranker.lexical": 2, "other": 1}


def test_a_reply_that_repeats_the_prompt_is_a_counted_error_not_an_answer():
    """A base model continues a chat prompt instead of answering it: the reply opens with the
    prompt. That is an LLMError naming the cause, counted as ``llm.echo``; restating a short
    question before answering it is an answer."""
    from chronorag.integrations.llm import fallbacks, query_scope, resolve_llm

    long_prompt = ("You answer questions about dated events from a knowledge graph. Read the numbered "
                   "events, then think briefly before answering.\n1. On 2014-03-05, Angela Merkel consulted "
                   "Barack Obama.\nQuestion: Who did Angela Merkel consult in March 2014?")
    echo = long_prompt.replace("\n", " \n ") + "\nQuestion: Who did Angela Merkel consult in March 2014?"
    drift = long_prompt[:90] + " the 2014 knowledge graph: [2014] Merkel met Obama. Answer briefly"  # a drifting copy
    script = [echo, drift, "Who did Merkel consult? Barack Obama.", "Barack Obama"]
    with ScriptedOpenAIServer(script) as srv:
        chat_llm = resolve_llm(LLMConfig(base_url=srv.base_url))
        with query_scope("echo-q"):
            for _ in range(2):
                with pytest.raises(LLMError, match="repeated the prompt.*instruction-tuned"):
                    chat_llm.complete([{"role": "user", "content": long_prompt}])
            assert chat_llm.complete([{"role": "user", "content": "Who did Merkel consult?"}]).endswith("Obama.")
            assert chat_llm.complete([{"role": "user", "content": long_prompt}]) == "Barack Obama"
    assert fallbacks.counts("echo-q") == {"llm.echo": 2}
