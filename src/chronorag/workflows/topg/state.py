"""State, input/output schemas and the run context of the ToPG graphs (visible in LangGraph Studio)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class ToPGInput(TypedDict, total=False):
    """What a caller provides: ``question``, or chat ``messages`` (the last human one is asked)."""

    question: str
    messages: Annotated[list[Any], add_messages]


class ToPGOutput(TypedDict, total=False):
    """What a run returns."""

    question: str
    answer: str
    context: list[str]
    proposition_ids: list[int]
    passage_ids: list[int]
    mode: str
    info: dict[str, Any]
    messages: Annotated[list[Any], add_messages]


class ToPGState(ToPGInput, ToPGOutput, total=False):
    """Full state; every per-run field is reset by the ``start`` node."""

    queries: list[str]
    pool: list[int]
    collected: list[int]
    scores: dict[str, float]
    pruned: list[int]
    new: list[int]
    iteration: int
    done: bool
    seen_messages: int


@dataclass
class ToPGContext:
    """Run settings (LangGraph runtime context; shown as a form in Studio).

    Attributes
    ----------
    index_dir : str
        ToPG index directory; empty = ``$CHRONORAG_INDEX_DIR``.
    mode : str
        ``"naive"``, ``"local"`` or ``"global"``; empty = the graph's default mode.
    k : int
        Propositions suggested per step (paper: 20).
    lam : float
        Structural weight of the transition (1 = pure graph, 0 = pure semantic).
    max_iter : int
        Suggestion-Selection iterations (Local: 1 or 3; Global: until ``min_facts``).
    select_threshold : float
        Cosine threshold of the no-LLM selector (negative = off, the default).
    llm_url : str
        OpenAI-compatible endpoint; empty = the graph's LLM, else ``$CHRONORAG_BASE_URL``, else no LLM.
    """

    index_dir: str = ""
    mode: str = ""
    k: int = 20
    lam: float = 0.5
    max_iter: int = 3
    select_threshold: float = -1.0
    llm_url: str = ""
