"""Typed state and run-time context of the TempTool agent graph."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

#: default wall-clock budget of one question, in seconds (LLM calls and tools together)
DEFAULT_DEADLINE_S = 300.0


@dataclass
class AgentContext:
    """Run settings (LangGraph ``context``; LangGraph Studio shows them as a form).

    Every field left ``None`` takes the value given to
    :func:`~chronorag.workflows.temptool.graph.build_graph` (or its default).

    Attributes
    ----------
    index_dir : str, optional
        Index directory (``chronorag ingest``); else ``$CHRONORAG_INDEX_DIR``.
    protocol : {"native", "tagged", "planner"}, optional
        How the agent talks to the LLM; ``planner`` runs without one.
    max_tool_calls : int, optional
        Tool calls allowed per question (default 8).
    max_obs_rows : int, optional
        Rows listed in one observation (default 30; the rest are counted).
    deadline_s : float, optional
        Wall-clock limit per question in seconds (default 300).
    """

    index_dir: str | None = None
    protocol: Literal["native", "tagged", "planner"] | None = None
    max_tool_calls: int | None = None
    max_obs_rows: int | None = None
    deadline_s: float | None = None


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
    messages: Annotated[list[AnyMessage], add_messages]


class AgentState(AgentInput, AgentOutput, total=False):
    """Full state. ``run_start`` indexes this run's first message in ``messages``."""

    current: str
    run_start: int
    started_at: float
    budget: int
    done: bool
