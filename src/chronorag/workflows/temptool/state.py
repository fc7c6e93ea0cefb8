"""Typed state of the TempTool agent graph."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class AgentInput(TypedDict, total=False):
    """Studio form: the question and an optional tool-call budget."""

    question: str
    max_tool_calls: int


class AgentOutput(TypedDict, total=False):
    """What the graph returns."""

    answers: list[str]
    mode: str
    tool_calls: int
    messages: Annotated[list[AnyMessage], add_messages]


class AgentState(AgentInput, AgentOutput, total=False):
    """Full state."""

    pending: list[dict[str, Any]]
    final: list[str]
