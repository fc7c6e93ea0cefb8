"""Typed state and run-time context of the TempTool agent graph."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from chronorag.workflows.common import check, describe, graph_context

#: default wall-clock budget of one question, in seconds (LLM calls and tools together)
DEFAULT_DEADLINE_S = 300.0


@graph_context
@dataclass(kw_only=True)
class AgentContext:
    """Run settings of the TempTool agent (LangGraph ``context``; a form in Studio).

    ``build_graph``'s arguments are the defaults; a run's context overrides them field by
    field, and keys of a parent graph's context that are not fields here are ignored.
    """

    index_dir: str | None = describe(
        None, "Index directory (chronorag ingest). Unset: build_graph's, else $CHRONORAG_INDEX_DIR "
              "read when the run starts.")
    protocol: Literal["auto", "native", "tagged", "planner"] = describe(
        "auto", "How the agent talks to the LLM: native tool calls, the paper's tagged text protocol, or "
                "the no-LLM planner; auto picks native (tagged for a LlamaIndex LLM) with an LLM, else planner.")
    max_tool_calls: int = describe(8, "Tool calls allowed per question (>= 1).")
    max_obs_rows: int = describe(30, "Rows listed in one observation (the rest are counted).")
    deadline_s: float = describe(DEFAULT_DEADLINE_S, "Wall-clock limit per question, in seconds (> 0).")

    def __post_init__(self) -> None:
        check(self.index_dir is None or (isinstance(self.index_dir, str) and bool(self.index_dir.strip())),
              "index_dir", self.index_dir, "a non-empty path or unset")
        check(self.protocol in ("auto", "native", "tagged", "planner"), "protocol", self.protocol,
              "'auto', 'native', 'tagged' or 'planner'")
        for name in ("max_tool_calls", "max_obs_rows"):
            v = getattr(self, name)
            check(isinstance(v, int) and not isinstance(v, bool) and v >= 1, name, v, "an integer >= 1")
        check(isinstance(self.deadline_s, (int, float)) and not isinstance(self.deadline_s, bool)
              and self.deadline_s > 0, "deadline_s", self.deadline_s, "a number of seconds > 0")


class AgentInput(TypedDict, total=False):
    """Input: a ``question``, or ``messages`` ending with the user's question
    (so the graph drops into a ``MessagesState`` parent); optional per-run budget."""

    question: str
    messages: Annotated[list[AnyMessage], add_messages]
    max_tool_calls: int


class AgentOutput(TypedDict, total=False):
    """What the graph returns (all of it about the latest run)."""

    answers: list[str]
    mode: str
    tool_calls: int
    stopped: str | None
    note: str
    #: no answer (stopped, nothing found, or refused); ``reason`` says why
    abstained: bool
    #: why it abstained, or the caveat of an answer ("" when there is none)
    reason: str
    messages: Annotated[list[AnyMessage], add_messages]


class AgentState(AgentInput, AgentOutput, total=False):
    """Full state. ``run_start`` indexes this run's first message in ``messages``."""

    current: str
    run_start: int
    started_at: float
    budget: int
    done: bool
    seen_messages: int
