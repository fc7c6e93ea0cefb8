"""Typed state of the dense QA graph (input/output schemas show as forms in LangGraph Studio)."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict


class QAInput(TypedDict):
    """What a caller provides."""

    question: str


class QAOutput(TypedDict, total=False):
    """What the graph returns."""

    answers: list[str]
    evidence: list[str]
    mode: str


class QAState(QAInput, QAOutput, total=False):
    """Full state: input, output and the retrieved event ids."""

    event_ids: list[int]
    info: dict[str, Any]
