"""Typed state and run context of the KG-iRAG graph (forms in LangGraph Studio)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from chronorag.workflows.common import check, describe, graph_context

__all__ = ["KGIRAGContext", "KGIRAGInput", "KGIRAGOutput", "KGIRAGState", "METHODS"]

#: the full loop and the paper's baseline and ablations
METHODS = ("kg-irag", "single-pass", "limited", "no-check")


@graph_context
@dataclass(kw_only=True)
class KGIRAGContext:
    """Run settings of the KG-iRAG graph (LangGraph runtime context; a form in Studio).

    ``build_graph``'s keyword settings are the defaults; a run's context overrides them
    field by field, and keys of a parent graph's context that are not fields here are ignored.
    """

    source: str = describe(
        "nyc-weather", "Record source: nyc-weather, nyc-flights, seattle-weather, or a spec JSON path (with "
                       "records). The module-level graph reads $CHRONORAG_KG_SOURCE per run when no source is set.")
    records: str | None = describe(None, "CSV of records for a spec JSON source.")
    method: Literal["kg-irag", "single-pass", "limited", "no-check"] = describe(
        "kg-irag", "kg-irag (the full loop), single-pass (one maximal window), limited (two steps, no window "
                   "growth) or no-check (fixed steps, no stop rule).")
    t_max: int = describe(6, "Most retrieval steps of the full loop (paper: 3-6).")
    theta: float = describe(0.8, "Confidence threshold of the stop rule, in [0, 1].")
    gamma: float = describe(0.7, "Temporal decay of the synthesis weights per record step (paper: 0.5-1.0).")
    lam: float = describe(0.5, "Overlap penalty lambda of Eq. 4 (>= 0).")
    radius_km: float = describe(0.0, "Largest spatial radius Psi may grow to when the place has no records (km).")
    hop_cap: int = describe(1, "Neighbouring places Psi may add (k0: 0, 1 or 2).")
    fixed_steps: int = describe(3, "Steps of the no-check ablation.")
    llm_url: str | None = describe(None, "OpenAI-compatible endpoint for LLM1/LLM2 in this run. Unset: the "
                                         "graph's LLM, else Settings.llm or $CHRONORAG_BASE_URL.")
    use_llm: bool | None = describe(None, "False forces the no-LLM planner and verifier; True requires an LLM; "
                                          "unset uses one when configured.")

    def __post_init__(self) -> None:
        check(isinstance(self.source, str) and bool(self.source.strip()), "source", self.source,
              "a source name or a spec JSON path")
        check(self.method in METHODS, "method", self.method, f"one of {METHODS}")
        check(_int(self.t_max) and self.t_max >= 1, "t_max", self.t_max, "an integer >= 1")
        check(_num(self.theta) and 0.0 <= self.theta <= 1.0, "theta", self.theta, "a number in [0, 1]")
        check(_num(self.gamma) and 0.0 < self.gamma < 1e6, "gamma", self.gamma,
              "a number > 0 (the paper uses 0.5-1.0)")
        check(_num(self.lam) and 0.0 <= self.lam < 1e6, "lam", self.lam, "a number >= 0")
        check(_num(self.radius_km) and 0.0 <= self.radius_km <= 20_000, "radius_km", self.radius_km,
              "a distance in km in [0, 20000]")
        check(_int(self.hop_cap) and self.hop_cap in (0, 1, 2), "hop_cap", self.hop_cap, "0, 1 or 2")
        check(_int(self.fixed_steps) and 1 <= self.fixed_steps <= 1000, "fixed_steps", self.fixed_steps,
              "an integer in [1, 1000]")
        check(self.use_llm is None or isinstance(self.use_llm, bool), "use_llm", self.use_llm, "true, false or unset")


def _int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _num(v: object) -> bool:
    import math

    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


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
    current: str
    seen_messages: int
