"""TempTool-R1 agent as a LangGraph state machine: ``setup`` -> ``agent`` <-> ``tools``.

Three ways to drive the ``agent`` node (the ``protocol``):

``native`` (LLM; default when an LLM is available)
    The LLM's own tool calling (``bind_tools`` with the three LangChain tools); vLLM
    must run with a tool-call parser (``scripts/serve_vllm.sh``).
``tagged`` (LLM)
    The paper's text protocol (``<think>``/``<tool_call>``/``<obs>``/``<response>``),
    parsed by :mod:`chronorag.workflows.temptool.tagged_protocol`.
``planner`` (no LLM; used when none is configured)
    :class:`~chronorag.workflows.temptool.reasoner.TemporalReasoner` plans the question
    and the graph runs its program *one call at a time* through the ``tools`` node;
    each next call is computed from the observations that came back, so the trace in
    LangGraph Studio is what ran and ``max_tool_calls`` holds.

What the loop guarantees
------------------------
- Per-run state: every invocation is a new question, also on a checkpointed thread
  (LangGraph Studio, a chat app): ``answers``, ``tool_calls``, ``stopped`` and
  ``note`` are reset by ``setup`` and the LLM sees only this run's messages.
- Input is ``{"question": ...}`` or ``{"messages": [...]}`` ending with the user's
  question (a ``MessagesState`` parent graph can call it as a sub-graph).
- A malformed tool call (arguments that are not JSON, arguments that are not an
  object, an unknown tool, a bad argument value) is answered with an error
  observation (``ToolMessage`` with ``status="error"``; ``<obs>`` in the tagged
  protocol) so the model can correct itself. Tagged turns that put ``<tool_call>``
  before ``<response>`` have their calls executed and the model is asked again.
- At ``max_tool_calls`` the model gets one last turn without tools to answer from
  what it has; if it still asks for tools the run stops with ``stopped =
  "max_tool_calls"``, no answers, and a final message saying so. A run past its
  deadline (``deadline_s``, default 300 s) stops the same way (``"deadline"``).
- The model's final answers must be names or dates of the rows its tool calls returned,
  and of the kind the question asks for (not the question's own entity); the others are
  dropped and counted (``temptool.ungrounded``, ``temptool.off_question``), and with none
  left the run stops without an answer (``stopped = "ungrounded"``), saying why.
- LLM failures (connection refused, HTTP errors, timeouts, empty replies) raise
  :class:`~chronorag.errors.LLMError` with the endpoint and the cause.

Settings come from :class:`~chronorag.workflows.temptool.state.AgentContext` (the
graph's ``context_schema``, shown in LangGraph Studio) over the arguments of
:func:`build_graph`. The compiled ``graph`` at module level is what ``langgraph.json``
exports; it reads the index directory from the context or ``CHRONORAG_INDEX_DIR``.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from chronorag.errors import ChronoRAGError, ConfigError, LLMError
from chronorag.graphs.event_index import EventIndex
from chronorag.integrations.llm import (
    ChatLLM,
    LLMLike,
    clean_reply,
    is_context_overflow,
    record_fallback,
    resolve_llm,
)
from chronorag.workflows.common import index_dir_of, resolve_context, run_question
from chronorag.workflows.temptool.prompts import (
    LIMIT_NOTE,
    NATIVE_SYSTEM,
    NO_TOOL_NOTE,
    TAGGED_FORMAT_ERROR,
    TAGGED_LIMIT_NOTE,
    TAGGED_NO_TOOL_NOTE,
    TAGGED_SYSTEM,
)
from chronorag.workflows.temptool.reasoner import ReasonerResult, TemporalReasoner
from chronorag.workflows.temptool.state import (
    DEFAULT_DEADLINE_S,
    AgentContext,
    AgentInput,
    AgentOutput,
    AgentState,
)
from chronorag.workflows.temptool.tagged_protocol import format_obs, parse_turn, split_answers
from chronorag.workflows.temptool.tools import (
    MAX_OBS_ROWS,
    TOOL_NAMES,
    TemporalKGTools,
    ToolResult,
    make_langchain_tools,
)

__all__ = ["PROTOCOLS", "AgentContext", "agent", "build_graph", "graph", "route", "setup", "tools_node"]

PROTOCOLS = ("auto", "native", "tagged", "planner")


@lru_cache(maxsize=4)
def _event_index(index_dir: str) -> EventIndex:
    return EventIndex.load(index_dir)


@lru_cache(maxsize=8)
def _toolkit(index_dir: str, max_obs_rows: int) -> tuple[TemporalKGTools, TemporalReasoner, list[Any]]:
    tools = TemporalKGTools(_event_index(index_dir), max_obs_rows=max_obs_rows)
    return tools, TemporalReasoner(tools), make_langchain_tools(tools)


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def _tolerant(model: Any) -> Any:
    """Let a ``ChatOpenAI`` read tool arguments sent as a JSON *string* (encoded twice).

    Without this, such a reply fails inside LangChain with a pydantic error before the
    agent sees it; with it, the arguments are decoded once more. Arguments that are not
    JSON at all still arrive as ``invalid_tool_calls`` and get an error observation.
    """
    if type(model).__name__ not in ("ChatOpenAI", "AzureChatOpenAI") or not hasattr(model, "_create_chat_result"):
        return model
    orig = model._create_chat_result

    def create(response: Any, generation_info: Any = None) -> Any:
        d = response if isinstance(response, dict) else response.model_dump()
        if not d.get("choices"):
            raise LLMError(f"LLM returned no choices: {json.dumps(d)[:300]}")
        for ch in d["choices"]:
            for tc in (ch.get("message") or {}).get("tool_calls") or []:
                fn = tc.get("function") or {}
                a = fn.get("arguments")
                if isinstance(a, str):
                    try:
                        v = json.loads(a)
                    except (json.JSONDecodeError, RecursionError):
                        continue
                    if isinstance(v, str):
                        fn["arguments"] = v
                        record_fallback("temptool.args_double_encoded", a[:200])
        return orig(d, generation_info)

    try:
        object.__setattr__(model, "_create_chat_result", create)
    except (AttributeError, TypeError):  # pragma: no cover - an unusual model class
        pass
    return model


def _result_from_message(m: ToolMessage) -> ToolResult:
    """Rebuild a :class:`ToolResult` from a tool message (for replaying the planner)."""
    rows = m.artifact if isinstance(m.artifact, list) else []
    aligned = {"rel": rows[0]["rel"]} if rows else {}
    err = str(m.content) if getattr(m, "status", "success") == "error" else None
    return ToolResult(tool=str(m.name), observation=str(m.content), rows=rows, aligned=aligned, error=err)


def _tagged_messages(history: list[BaseMessage]) -> list[BaseMessage]:
    """This run's messages in the tagged protocol: tool results become ``<obs>`` user turns."""
    out: list[BaseMessage] = [SystemMessage(TAGGED_SYSTEM), HumanMessage(str(history[0].content))]
    obs: list[str] = []
    for m in history[1:]:
        if isinstance(m, ToolMessage):
            obs.append(str(m.content))
            continue
        if obs:
            out.append(HumanMessage(format_obs("\n".join(obs))))
            obs = []
        if isinstance(m, AIMessage):
            out.append(AIMessage(content=str(m.content)))
        elif isinstance(m, HumanMessage):
            out.append(HumanMessage(str(m.content)))
    if obs:
        out.append(HumanMessage(format_obs("\n".join(obs))))
    return out


def _invalid(raw: str, error: str, name: str | None = None) -> dict[str, Any]:
    return {"type": "invalid_tool_call", "name": name, "args": raw, "id": _call_id(), "error": error}


@dataclass(frozen=True)
class _Build:
    """What ``build_graph`` fixes: the default context and the LLM object (resolved per run)."""

    defaults: AgentContext
    llm: Any


def _kit(c: AgentContext) -> tuple[TemporalKGTools, TemporalReasoner, list[Any]]:
    return _toolkit(index_dir_of(c.index_dir, method="the TempTool agent"), c.max_obs_rows)

def _mode_and_llm(c: AgentContext, build: _Build) -> tuple[str, ChatLLM | None]:
    """The run's protocol and LLM (Settings.llm and the environment are read here, per run)."""
    p = c.protocol
    if p == "planner":
        return p, None
    chat = resolve_llm(build.llm, required=p != "auto")
    if chat is None:
        return "planner", None
    if p == "auto":  # a LlamaIndex LLM has no LangChain tool binding here: use the text protocol
        p = "tagged" if chat.kind == "llama_index" else "native"
    if p == "native" and chat.kind == "llama_index":
        raise ConfigError("protocol 'native' needs a LangChain chat model or an LLMConfig; a LlamaIndex "
                          "LLM runs the 'tagged' protocol")
    return p, chat

# ------------------------------------------------------------------ setup
def setup(state: AgentState, runtime: Runtime[AgentContext], *, build: _Build) -> dict[str, Any]:
    """Take this run's question (consuming the input), its budget and protocol; reset the run's fields."""
    c = resolve_context(build.defaults, runtime.context)
    msgs = list(state.get("messages") or [])
    question, consumed = run_question(state, method="the TempTool agent", echo=True)
    if "messages" in consumed:  # the question came as 'question': its message starts the run
        run_start = len(msgs)
    else:
        run_start = max(i for i, m in enumerate(msgs)
                        if getattr(m, "type", None) == "human" and str(m.content).strip() == question)
    budget = state.get("max_tool_calls") or c.max_tool_calls
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ConfigError(f"max_tool_calls must be an integer >= 1, got {budget!r}")
    mode, _ = _mode_and_llm(c, build)
    # the per-run inputs are consumed here, so the next run on this thread starts clean
    return {**consumed, "max_tool_calls": None, "current": question, "run_start": run_start,
            "budget": budget, "tool_calls": 0, "answers": [], "stopped": None, "note": "", "done": False,
            "abstained": False, "reason": "",
            "started_at": time.time(), "mode": mode}


# ------------------------------------------------------------------ agent
def agent(state: AgentState, runtime: Runtime[AgentContext], *, build: _Build) -> dict[str, Any]:
    """One agent turn: the planner's next call, or the LLM's (native tool calls or the tagged protocol)."""
    c = resolve_context(build.defaults, runtime.context)
    mode, chat = _mode_and_llm(c, build)
    run_msgs: list[BaseMessage] = [*list(state.get("messages") or [])[int(state.get("run_start") or 0):]]
    used, budget = int(state.get("tool_calls") or 0), int(state.get("budget") or c.max_tool_calls)
    deadline = c.deadline_s
    remaining = deadline - (time.time() - float(state.get("started_at") or time.time()))
    if remaining <= 0:
        return _stop("deadline", f"Stopped: the {deadline:g} s deadline for this question passed "
                                 "before an answer.")
    if mode == "planner":
        return _planner_step(c, state["current"], run_msgs, used, budget)
    assert chat is not None
    _, _, lc_tools = _kit(c)
    try:
        if mode == "native":
            return _native_step(chat, lc_tools, run_msgs, used, budget, remaining, state["current"])
        return _tagged_step(chat, run_msgs, used, budget, remaining, state["current"])
    except LLMError as exc:
        if used == 0 or not is_context_overflow(exc):
            raise  # the question alone does not fit, or another failure: a clean error naming the agent
        # the tool results outgrew the model's window: stop and say so (counted), not an error row
        record_fallback("temptool.context_overflow", str(exc)[:300])
        return _stop("context_window", f"Stopped: after {used} tool calls the conversation no longer fits the "
                                       f"model's context window; no answer. ({str(exc)[:200]})")

def _stop(reason: str, text: str) -> dict[str, Any]:
    return {"answers": [], "stopped": reason, "note": text, "done": True, "abstained": True, "reason": text,
            "messages": [AIMessage(content=text)]}

def _final(answers: list[str], text: str, note: str = "") -> dict[str, Any]:
    return {"answers": answers, "done": True, "note": note, "abstained": not answers,
            "reason": note or ("" if answers else text), "messages": [AIMessage(content=text)]}

@dataclass(frozen=True)
class _Row:
    """A tool-result row in the shape the answer checks read (subject, object, start, end)."""

    subject: str
    object: str
    start: str
    end: str


def _llm_final(answers: list[str], text: str, run_msgs: list[BaseMessage], question: str,
               note: str = "") -> dict[str, Any]:
    """The LLM's final answers, kept only where the tool results show them.

    An answer must be a name or date of a row the tools returned in this run
    (:func:`~chronorag.graphs.answer_checks.ground_answers`: a near spelling takes the
    row's spelling) and answer the question as asked
    (:func:`~chronorag.graphs.answer_checks.screen_answers`: the kind of answer, not
    the question's own entity). Others are dropped and counted (``temptool.ungrounded``,
    ``temptool.off_question``); none left stops without an answer, saying why. A yes/no
    question's answer is not a name, so it is taken as written. When the question parser
    reports conditions it cannot represent (a negation, "at least twice", ...), the answer's
    ``reason`` says the tools could not filter on them.
    """
    from chronorag.graphs.answer_checks import ground_answers, screen_answers
    from chronorag.graphs.question import parse_question

    pq = parse_question(question)
    if answers:  # the model may have read what the tools' filters cannot; say so
        note = "; ".join(p for p in (note, pq.unfiltered_note(
            filtered_by="the tools", answer_from="the model's reading of the tool results")) if p)
    if not answers or pq.operator == "exists":
        return _final(answers, text, note)
    rows = [_Row(str(r.get("head", "")), str(r.get("tail", "")), *(str(r.get("time", "")).split("/") * 2)[:2])
            for m in run_msgs if isinstance(m, ToolMessage) and getattr(m, "status", "success") != "error"
            and isinstance(m.artifact, list) for r in m.artifact if isinstance(r, dict)]
    kept, dropped = ground_answers(answers, rows)
    kept, off = screen_answers(kept, question, rows)
    if dropped:
        record_fallback("temptool.ungrounded", f"{len(dropped)} answer(s) in no tool result: "
                        + ", ".join(repr(d) for d in dropped[:3]))
    if off:
        record_fallback("temptool.off_question", "; ".join(f"{a!r}: {why}" for a, why in off[:3]))
    if kept:
        return _final(kept, text, note)
    if off:
        why = (f"the model's answer {off[0][0]!r} does not answer the question as asked ({off[0][1]}; "
               "counted as temptool.off_question)")
    else:
        why = (f"the model's answer {dropped[0]!r} is in no tool result of this run, so the KG does not "
               "show it (counted as temptool.ungrounded)")
    return _stop("ungrounded", f"Stopped: {why}; no answer.")


def _planner_step(c: AgentContext, q: str, run_msgs: list[BaseMessage], used: int,
                  budget: int) -> dict[str, Any]:
    _, reasoner, _ = _kit(c)
    results = [_result_from_message(m) for m in run_msgs if isinstance(m, ToolMessage)]
    gen = reasoner.program(q)
    res: ReasonerResult | None = None
    try:
        nxt = next(gen)
        for r in results:
            nxt = gen.send(r)
    except StopIteration as stop:
        res = stop.value
    if res is None:
        if used >= budget:
            return _stop("max_tool_calls", f"Stopped: the program needs more than max_tool_calls={budget} "
                                           "tool calls; no answer.")
        call = {"name": nxt["name"], "args": nxt["arguments"], "id": _call_id(), "type": "tool_call"}
        return {"messages": [AIMessage(content="", tool_calls=[call])], "tool_calls": used + 1}
    text = " | ".join(res.answers[:10]) if res.answers else (res.note or "No answer found.")
    out = _final(list(res.answers), text, res.note)
    if res.error:
        out["stopped"] = "invalid_question"
    return out

def _lc_model(chat: ChatLLM, remaining: float) -> Any:
    if chat.kind == "config":
        cfg = chat.backend
        t = min(cfg.timeout, max(remaining, 1.0))
        return _tolerant(cfg.langchain_chat(timeout=t, max_retries=cfg.max_retries if t >= cfg.timeout else 0))
    return _tolerant(chat.langchain())

def _invoke(model: Any, messages: list[BaseMessage], chat: ChatLLM) -> AIMessage:
    try:
        reply = model.invoke(messages)
    except ChronoRAGError:
        raise
    except Exception as exc:  # openai/httpx raise many types; keep the cause
        where = getattr(chat.backend, "base_url", None) or chat.name
        raise LLMError(f"LLM call to {where} failed in the TempTool agent: "
                       f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(reply, AIMessage):
        raise LLMError(f"LLM returned {type(reply).__name__}, expected an AIMessage")
    return reply

def _native_step(chat: ChatLLM, lc_tools: list[Any], run_msgs: list[BaseMessage], used: int,
                 budget: int, remaining: float, question: str) -> dict[str, Any]:
    model = _lc_model(chat, remaining)
    if used >= budget:
        reply = _invoke(model, [SystemMessage(NATIVE_SYSTEM), *run_msgs, HumanMessage(LIMIT_NOTE)], chat)
        text = clean_reply(str(reply.content or ""))
        answers = split_answers(text) if not (reply.tool_calls or reply.invalid_tool_calls) else []
        why = _why_not_an_answer(reply, text) if answers else None
        if why is not None:
            return _unusable(why, text, "max_tool_calls", f" after reaching max_tool_calls={budget}")
        if not answers:
            return _stop("max_tool_calls", f"Stopped: reached max_tool_calls={budget} without an answer.")
        return _llm_final(answers, text, run_msgs, question, f"answered after reaching max_tool_calls={budget}")
    bound = model.bind_tools(lc_tools)
    reply = _invoke(bound, [SystemMessage(NATIVE_SYSTEM), *run_msgs], chat)
    calls, invalid = list(reply.tool_calls), list(reply.invalid_tool_calls)
    prefix: list[BaseMessage] = []
    if not (calls or invalid) and used == 0:
        # an answer before any lookup is not grounded in the KG: remind once, then abstain
        said = clean_reply(str(reply.content or ""))
        record_fallback("temptool.no_tool_call", said[:200])
        prefix = [AIMessage(content=said), HumanMessage(NO_TOOL_NOTE)]
        forced = model.bind_tools(lc_tools, tool_choice="required")  # OpenAI, vLLM and llama.cpp honour it
        try:
            reply = _invoke(forced, [SystemMessage(NATIVE_SYSTEM), *run_msgs, *prefix], chat)
        except LLMError as exc:  # the model's own reply outgrew the window (Gemma 3 270M): counted, no error row
            if not is_context_overflow(exc):
                raise
            record_fallback("temptool.context_overflow", str(exc)[:300])
            return _stop("context_window", "Stopped: after a reply without a tool call and a reminder the "
                                           "conversation no longer fits the model's context window; no answer. "
                                           f"({str(exc)[:200]})")
        calls, invalid = list(reply.tool_calls), list(reply.invalid_tool_calls)
        if not (calls or invalid):
            return _abstain(said, clean_reply(str(reply.content or "")))
    if calls or invalid:
        room = budget - used
        calls = calls[:room]
        invalid = invalid[: max(0, room - len(calls))]
        msg = AIMessage(content=reply.content, tool_calls=calls, invalid_tool_calls=invalid,
                        id=reply.id, response_metadata=reply.response_metadata)
        return {"messages": [*prefix, msg], "tool_calls": used + len(calls) + len(invalid)}
    text = clean_reply(str(reply.content or ""))
    why = _why_not_an_answer(reply, text)
    if why is not None:
        return _unusable(why, text)
    return {**_llm_final(split_answers(text), text, run_msgs, question), "messages": [reply]}

#: a reply that opens like a tool call written as text (what small models do on a turn without tools)
_TOOL_CALL_TEXT = re.compile(r'^\s*(?:```(?:json)?\s*)?\{\s*"(?:tool|name|function|tool_name)"\s*:')


def _why_not_an_answer(reply: AIMessage, text: str) -> str | None:
    """Why a reply without tool calls cannot be taken as the answer, or ``None`` when it can."""
    if (reply.response_metadata or {}).get("finish_reason") == "length":
        return "the model's reply was cut at max_tokens"
    if _TOOL_CALL_TEXT.match(text):
        return "the model wrote a tool call as text where an answer was due"
    return None


def _unusable(why: str, text: str, reason: str = "unusable_reply", note: str = "") -> dict[str, Any]:
    """Stop without answers: the final reply is not an answer (counted as ``temptool.unusable_reply``)."""
    record_fallback("temptool.unusable_reply", f"{why}: {text[:200]}")
    return _stop(reason, f"Stopped: {why}{note}; no answer. Its reply: {text[:200]!r}")


def _abstain(first: str, second: str) -> dict[str, Any]:
    """Stop without answers: the model answered twice without consulting the KG (counted)."""
    record_fallback("temptool.abstain_no_kg", second[:200])
    note = ("Abstained: the model answered twice without consulting the knowledge graph, so its "
            f"answer is not grounded. Its unverified reply: {(second or first)[:200]!r}")
    return _stop("no_tool_call", note)

def _tagged_step(chat: ChatLLM, run_msgs: list[BaseMessage], used: int, budget: int,
                 remaining: float, question: str) -> dict[str, Any]:
    model = _lc_model(chat, remaining)
    prompt = _tagged_messages(run_msgs)
    if used >= budget:
        prompt.append(HumanMessage(TAGGED_LIMIT_NOTE))
    first_reply = _invoke(model, prompt, chat)
    text = str(first_reply.content or "")
    turn = parse_turn(text)
    wants_tools = bool(turn.tool_calls or turn.errors) and turn.calls_before_response
    if not wants_tools and used == 0 and used < budget and "<tool_call>" not in text:
        # an answer before any lookup is not grounded in the KG: remind once, then abstain
        first = clean_reply(turn.response if turn.response is not None else text)
        record_fallback("temptool.no_tool_call", first[:200])
        second_reply = _invoke(model, [*prompt, AIMessage(content=text), HumanMessage(TAGGED_NO_TOOL_NOTE)], chat)
        text2 = str(second_reply.content or "")
        turn2 = parse_turn(text2)
        if not (bool(turn2.tool_calls or turn2.errors) and turn2.calls_before_response):
            return _abstain(first, clean_reply(turn2.response if turn2.response is not None else text2))
        text, turn, wants_tools, first_reply = text2, turn2, True, second_reply
    if used >= budget:
        answers = split_answers(turn.response) if turn.response is not None and not wants_tools else []
        why = _why_not_an_answer(first_reply, clean_reply(turn.response or "")) if answers else None
        if why is not None:
            return _unusable(why, text, "max_tool_calls", f" after reaching max_tool_calls={budget}")
        if not answers:
            return _stop("max_tool_calls", f"Stopped: reached max_tool_calls={budget} without an answer.")
        return _llm_final(answers, text, run_msgs, question, f"answered after reaching max_tool_calls={budget}")
    if wants_tools:
        room = budget - used
        calls = [{"name": c["name"], "args": c["arguments"], "id": _call_id(), "type": "tool_call"}
                 for c in turn.tool_calls][:room]
        invalid = [_invalid(e, e) for e in turn.errors][: max(0, room - len(calls))]
        msg = AIMessage(content=text, tool_calls=calls, invalid_tool_calls=invalid)
        return {"messages": [msg], "tool_calls": used + len(calls) + len(invalid)}
    if turn.response is None and "<tool_call>" in text:
        msg = AIMessage(content=text, invalid_tool_calls=[_invalid(text[-200:], TAGGED_FORMAT_ERROR)])
        return {"messages": [msg], "tool_calls": used + 1}
    body = turn.response if turn.response is not None else clean_reply(text)
    why = _why_not_an_answer(first_reply, clean_reply(body))
    if why is not None:
        return _unusable(why, text)
    return _llm_final(split_answers(body), text, run_msgs, question)

# ------------------------------------------------------------------ tools
def tools_node(state: AgentState, runtime: Runtime[AgentContext], *, build: _Build) -> dict[str, Any]:
    """Run the last AI message's tool calls; malformed ones are answered with error observations."""
    _, _, lc_tools = _kit(resolve_context(build.defaults, runtime.context))
    by_name = {t.name: t for t in lc_tools}
    last = state["messages"][-1]
    out: list[ToolMessage] = []
    for tc in getattr(last, "tool_calls", None) or []:
        name, args = tc.get("name"), tc.get("args")
        tool = by_name.get(name)
        if tool is None:
            out.append(ToolMessage(content=f"Error: unknown tool {name!r}; use one of {list(TOOL_NAMES)}",
                                   tool_call_id=tc["id"], name=str(name), status="error"))
            continue
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except (json.JSONDecodeError, RecursionError):
                pass
        if not isinstance(args, dict):
            out.append(ToolMessage(content=f"Error in {name}: arguments must be a JSON object, got {args!r:.200}",
                                   tool_call_id=tc["id"], name=name, status="error"))
            continue
        out.append(tool.invoke({**tc, "args": args, "type": "tool_call"}))
    for ic in getattr(last, "invalid_tool_calls", None) or []:
        err = str(ic.get("error") or "unreadable tool call").split("\nFor troubleshooting")[0]
        out.append(ToolMessage(
            content=f"Error: this tool call could not be read: {err.strip()}. Send one JSON object "
                    f'like {{"name": "Get_time", "arguments": {{"head": "...", "rel": "...", "tail": "..."}}}}.',
            tool_call_id=ic.get("id") or _call_id(), name=str(ic.get("name") or "invalid_tool_call"),
            status="error"))
    return {"messages": out}

def route(state: AgentState) -> Literal["tools", "__end__"]:
    if state.get("done"):
        return "__end__"
    msgs = state.get("messages") or []
    last = msgs[-1] if msgs else None
    if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
        return "tools"
    return "__end__"


def build_graph(
    index_dir: str | None = None,
    *,
    llm: LLMLike = None,
    protocol: Literal["auto", "native", "tagged", "planner"] = "auto",
    max_tool_calls: int = 8,
    max_obs_rows: int = MAX_OBS_ROWS,
    deadline_s: float = DEFAULT_DEADLINE_S,
    checkpointer: Checkpointer = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the TempTool agent graph.

    Parameters
    ----------
    index_dir : str, optional
        Index directory (``chronorag ingest``); the run context's ``index_dir`` or
        ``$CHRONORAG_INDEX_DIR`` when not given.
    llm : object, optional
        Any LLM :func:`~chronorag.integrations.llm.resolve_llm` accepts (LlamaIndex LLM,
        LangChain chat model, ``LLMConfig``); default: LlamaIndex ``Settings.llm`` or
        the ``CHRONORAG_*`` environment, looked up per run. Without one the
        ``planner`` runs.
    protocol : {"auto", "native", "tagged", "planner"}
        ``"auto"`` (default) picks ``"native"`` with an LLM (``"tagged"`` for a LlamaIndex
        LLM, which has no LangChain tool binding) and ``"planner"`` without.
    max_tool_calls : int
        Tool calls per question (the input or the context may change it per run).
    max_obs_rows : int
        Rows listed per observation.
    deadline_s : float
        Wall-clock limit per question.
    checkpointer : optional
        A LangGraph checkpointer (``InMemorySaver()``, ...) for threads.

    Raises
    ------
    ConfigError
        Bad protocol or limits.
    LLMError
        ``llm`` is an object of an unknown kind.
    """
    defaults = AgentContext(index_dir=index_dir, protocol=protocol, max_tool_calls=max_tool_calls,
                            max_obs_rows=max_obs_rows, deadline_s=deadline_s)
    if llm is not None:
        resolve_llm(llm)  # an unknown object fails here, never silently later
    b = _Build(defaults=defaults, llm=llm)
    g = StateGraph(AgentState, context_schema=AgentContext, input_schema=AgentInput, output_schema=AgentOutput)
    g.add_node("setup", partial(setup, build=b))
    g.add_node("agent", partial(agent, build=b))
    g.add_node("tools", partial(tools_node, build=b))
    g.add_edge(START, "setup")
    g.add_edge("setup", "agent")
    g.add_conditional_edges("agent", route, {"tools": "tools", "__end__": END})
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)


graph = build_graph()
