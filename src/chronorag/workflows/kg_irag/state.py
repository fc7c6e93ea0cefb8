"""Typed state and run context of the KG-iRAG graph (forms in LangGraph Studio)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from chronorag.workflows.kg_irag.names import METHODS

__all__ = ["KGIRAGContext", "KGIRAGInput", "KGIRAGOutput", "KGIRAGState", "METHODS"]


@dataclass
class KGIRAGContext:
    """Per-run settings (LangGraph runtime context). ``None`` keeps the graph's default.

    Attributes
    ----------
    source : str
        ``nyc-weather``, ``nyc-flights``, ``seattle-weather`` or a spec JSON path (with ``records``).
    records : str
        CSV of records for a spec JSON.
    method : str
        ``kg-irag`` (default), ``single-pass`` (one maximal window), ``limited`` (two
        steps, no window growth) or ``no-check`` (fixed steps, no stop rule).
    t_max : int
        Most retrieval steps of the full loop (default 6).
    theta : float
        Confidence threshold of the stop rule (default 0.8).
    gamma : float
        Temporal decay of the synthesis weights, per record step (default 0.7).
    lam : float
        Overlap penalty lambda of Eq. 4 (default 0.5).
    radius_km : float
        Largest spatial radius Psi may grow to when the place has no records in a window (default 0).
    hop_cap : int
        Neighbouring places Psi may add (k0, default 1).
    fixed_steps : int
        Steps of the ``no-check`` ablation (default 3).
    llm_url : str
        OpenAI-compatible endpoint for LLM1/LLM2 (default: the graph's LLM, else no-LLM mode).
    use_llm : bool
        ``False`` forces the no-LLM planner and verifier.
    """

    source: str | None = None
    records: str | None = None
    method: str | None = None
    t_max: int | None = None
    theta: float | None = None
    gamma: float | None = None
    lam: float | None = None
    radius_km: float | None = None
    hop_cap: int | None = None
    fixed_steps: int | None = None
    llm_url: str | None = None
    use_llm: bool | None = None


class KGIRAGInput(TypedDict, total=False):
    """A question, or a message list whose last human message is the question."""

    question: str
    messages: Annotated[list[AnyMessage], add_messages]


class KGIRAGOutput(TypedDict, total=False):
    """What the graph returns."""

    answer: str
    rationale: str
    plan: dict[str, Any]
    iterations: int
    first_certified: int
    stopped_by: str
    evidence: list[str]
    evidence_ids: list[str]
    cited: list[dict[str, Any]]
    windows: list[list[int]]
    trace: list[dict[str, Any]]
    llm_errors: list[str]
    mode: str
    error: str
    messages: Annotated[list[AnyMessage], add_messages]


class KGIRAGState(KGIRAGInput, KGIRAGOutput, total=False):
    """Full state (reset by ``init`` at the start of every run)."""

    settings: dict[str, Any]
    facts: list[dict[str, Any]]
    coverage: list[int]
    next_window: list[int]
    iteration: int
    radius_km: float
    verdict: dict[str, Any]
    judged: dict[str, Any]
    stop: bool
    contradictions: list[str]
