"""Typed state and run context of the dense QA graph (shown as forms in LangGraph Studio)."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class QAContext(TypedDict, total=False):
    """Run settings (LangGraph ``context``; Studio shows them as the assistant's config).

    index_dir: index directory (``chronorag ingest``); default ``$CHRONORAG_INDEX_DIR``.
    similarity_top_k: events retrieved (default: the value given to ``build_graph``, 10).
    """

    index_dir: str
    similarity_top_k: int


class QAInput(TypedDict, total=False):
    """What a caller provides: a ``question``, or chat ``messages`` (the last human one is asked)."""

    question: str
    messages: Annotated[list[AnyMessage], add_messages]


class QAOutput(TypedDict, total=False):
    """What the graph returns (``messages`` gains one AI message with the answers)."""

    answers: list[str]
    evidence: list[str]
    mode: str
    messages: Annotated[list[AnyMessage], add_messages]


class QAState(QAInput, QAOutput, total=False):
    """Full state: input, output and the retrieved event ids."""

    event_ids: list[int]
    info: dict[str, Any]
    seen_messages: int
