"""Typed state and run context of the dense QA graph (shown as forms in LangGraph Studio)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from chronorag.workflows.common import check, describe, graph_context


@graph_context
@dataclass(kw_only=True)
class QAContext:
    """Run settings of the dense QA graph (LangGraph ``context``; a form in Studio).

    ``build_graph``'s arguments are the defaults; a run's context overrides them field by
    field, and keys of a parent graph's context that are not fields here are ignored.
    """

    index_dir: str | None = describe(
        None, "Index directory (chronorag ingest). Unset: the one given to build_graph, else "
              "$CHRONORAG_INDEX_DIR read when the run starts.")
    similarity_top_k: int = describe(10, "Events retrieved per question (>= 1).")

    def __post_init__(self) -> None:
        check(self.index_dir is None or (isinstance(self.index_dir, str) and bool(self.index_dir.strip())),
              "index_dir", self.index_dir, "a non-empty path or unset")
        check(isinstance(self.similarity_top_k, int) and not isinstance(self.similarity_top_k, bool)
              and self.similarity_top_k >= 1, "similarity_top_k", self.similarity_top_k, "an integer >= 1")


class QAInput(TypedDict, total=False):
    """What a caller provides: a ``question``, or chat ``messages`` (the last human one is asked)."""

    question: str
    messages: Annotated[list[AnyMessage], add_messages]


class QAOutput(TypedDict, total=False):
    """What the graph returns (``messages`` gains one AI message with the answers)."""

    answers: list[str]
    evidence: list[str]
    mode: str
    #: no answer; ``reason`` says why ("" when answered)
    abstained: bool
    reason: str
    messages: Annotated[list[AnyMessage], add_messages]


class QAState(QAInput, QAOutput, total=False):
    """Full state: input, output, this run's question and the retrieved event ids."""

    current: str
    event_ids: list[int]
    info: dict[str, Any]
    seen_messages: int
