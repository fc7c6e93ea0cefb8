"""TempTool-R1 agent as a LangGraph state machine: ``agent`` <-> ``tools`` until an answer.

Three ways to drive the ``agent`` node, chosen by :func:`build_graph`:

``native`` (LLM, default when an endpoint is set)
    ``ChatOpenAI.bind_tools`` with the three LangChain tools; vLLM must run with a
    tool-call parser (``scripts/serve_vllm.sh``).
``tagged`` (LLM)
    The paper's text protocol (``<think>``/``<tool_call>``/``<obs>``/``<response>``),
    parsed by :mod:`chronorag.workflows.temptool.tagged_protocol`; observations go back as
    ``<obs>`` user turns.
``planner`` (no LLM; used when no endpoint is configured)
    :class:`~chronorag.workflows.temptool.reasoner.TemporalReasoner` plans the
    question and the graph issues *its* tool calls one turn at a time through the
    same ``tools`` node, then answers with the reasoner's ranking.

The loop stops at a final answer or after ``max_tool_calls`` tool calls. The
compiled ``graph`` at module level (no checkpointer, typed input/output) is what
``langgraph.json`` exports for LangGraph Studio; it reads the index directory from
``CHRONORAG_INDEX_DIR`` on first use.
"""

from __future__ import annotations

import os
import uuid
from functools import lru_cache
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode

from chronorag.integrations.llm import LLMConfig
from chronorag.integrations.temporal_tools import TemporalKGTools, make_langchain_tools
from chronorag.retrievers.event_index import EventIndex
from chronorag.workflows.temptool.prompts import NATIVE_SYSTEM, TAGGED_SYSTEM
from chronorag.workflows.temptool.reasoner import TemporalReasoner
from chronorag.workflows.temptool.state import AgentInput, AgentOutput, AgentState
from chronorag.workflows.temptool.tagged_protocol import format_obs, parse_turn, split_answers

__all__ = ["build_graph", "graph", "PROTOCOLS"]

PROTOCOLS = ("native", "tagged", "planner")


@lru_cache(maxsize=4)
def _toolkit(index_dir: str) -> tuple[TemporalKGTools, TemporalReasoner, list[Any]]:
    tools = TemporalKGTools(EventIndex.load(index_dir))
    return tools, TemporalReasoner(tools), make_langchain_tools(tools)


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def _tagged_messages(question: str, history: list[BaseMessage]) -> list[BaseMessage]:
    out: list[BaseMessage] = [SystemMessage(TAGGED_SYSTEM), HumanMessage(question)]
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
    if obs:
        out.append(HumanMessage(format_obs("\n".join(obs))))
    return out


def build_graph(
    index_dir: str | None = None,
    *,
    llm: LLMConfig | None = None,
    protocol: str | None = None,
    max_tool_calls: int = 8,
) -> Any:
    """Compile the TempTool agent graph.

    Parameters
    ----------
    index_dir : str, optional
        Index directory (``chronorag ingest``); defaults to ``$CHRONORAG_INDEX_DIR``.
    llm : LLMConfig, optional
        Endpoint; defaults to the environment's. Without one the ``planner`` runs.
    protocol : {"native", "tagged", "planner"}, optional
        Defaults to ``"native"`` with an endpoint and ``"planner"`` without.
    max_tool_calls : int
        Tool-call budget per question (the input may lower or raise it).
    """
    if protocol is not None and protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    if max_tool_calls < 1:
        raise ValueError(f"max_tool_calls must be >= 1, got {max_tool_calls}")

    def kit() -> tuple[TemporalKGTools, TemporalReasoner, list[Any]]:
        d = index_dir or os.environ.get("CHRONORAG_INDEX_DIR")
        if not d:
            raise ValueError("no index directory: pass index_dir or set CHRONORAG_INDEX_DIR")
        return _toolkit(str(d))

    def mode_of() -> str:
        cfg = llm or LLMConfig()
        if protocol is not None:
            if protocol != "planner" and not cfg.is_configured:
                cfg.require()
            return protocol
        return "native" if cfg.is_configured else "planner"

    def agent(state: AgentState) -> dict[str, Any]:
        q = state.get("question", "")
        if not isinstance(q, str) or not q.strip():
            raise ValueError(f"question must be a non-empty string, got {q!r}")
        budget = int(state.get("max_tool_calls") or max_tool_calls)
        if budget < 1:
            raise ValueError(f"max_tool_calls must be >= 1, got {budget}")
        used = int(state.get("tool_calls") or 0)
        messages = list(state.get("messages") or [])
        new: list[BaseMessage] = []
        if not messages:
            messages = new = [HumanMessage(q)]
        mode = mode_of()
        out = _agent_step(state, q, messages, used, budget, mode)
        out["messages"] = new + out.get("messages", [])
        out["mode"] = mode
        return out

    def _agent_step(state: AgentState, q: str, messages: list[BaseMessage], used: int, budget: int,
                    mode: str) -> dict[str, Any]:
        if mode == "planner":
            return _planner_step(state, q, used, budget)
        cfg = llm or LLMConfig()
        _, _, lc_tools = kit()
        if used >= budget:  # budget spent: stop without an answer rather than loop
            return {"answers": [], "messages": [AIMessage(content="Tool-call budget exhausted.")]}
        if mode == "native":
            model = cfg.langchain_chat().bind_tools(lc_tools)
            reply = model.invoke([SystemMessage(NATIVE_SYSTEM), *messages])
            calls = list(reply.tool_calls)[: budget - used]
            if calls:
                msg = AIMessage(content=reply.content, tool_calls=calls)
                return {"messages": [msg], "tool_calls": used + len(calls)}
            return {"messages": [reply], "answers": split_answers(str(reply.content))}
        reply = cfg.langchain_chat().invoke(_tagged_messages(q, messages))
        text = str(reply.content)
        turn = parse_turn(text)
        if turn.tool_calls and turn.response is None:
            calls = [{"name": c["name"], "args": c["arguments"], "id": _call_id(), "type": "tool_call"}
                     for c in turn.tool_calls][: budget - used]
            return {"messages": [AIMessage(content=text, tool_calls=calls)], "tool_calls": used + len(calls)}
        answers = split_answers(turn.response if turn.response is not None else text)
        return {"messages": [AIMessage(content=text)], "answers": answers}

    def _planner_step(state: AgentState, q: str, used: int, budget: int) -> dict[str, Any]:
        pending = state.get("pending")
        out: dict[str, Any] = {}
        if pending is None:
            _, reasoner, _ = kit()
            res = reasoner.answer(q)
            pending = [{"name": c["name"], "args": c["arguments"]} for c in res.calls]
            out["final"] = res.answers
            final = res.answers
        else:
            final = state.get("final") or []
        if pending and used < budget:
            nxt, rest = pending[0], pending[1:]
            call = {"name": nxt["name"], "args": nxt["args"], "id": _call_id(), "type": "tool_call"}
            msg = AIMessage(content="", tool_calls=[call])
            return {**out, "pending": rest, "messages": [msg], "tool_calls": used + 1}
        text = " | ".join(final[:10]) if final else "No answer found."
        return {**out, "pending": [], "answers": list(final), "messages": [AIMessage(content=text)]}

    def route(state: AgentState) -> Literal["tools", "__end__"]:
        msgs = state.get("messages") or []
        last = msgs[-1] if msgs else None
        if isinstance(last, AIMessage) and last.tool_calls and "answers" not in state:
            return "tools"
        return "__end__"

    def tools_node(state: AgentState) -> dict[str, Any]:
        _, _, lc_tools = kit()
        return ToolNode(lc_tools).invoke(state)

    g = StateGraph(AgentState, input_schema=AgentInput, output_schema=AgentOutput)
    g.add_node("agent", agent)
    g.add_node("tools", tools_node)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, {"tools": "tools", "__end__": END})
    g.add_edge("tools", "agent")
    return g.compile()


graph = build_graph()
