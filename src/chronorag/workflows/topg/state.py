"""State, input/output schemas and the run context of the ToPG graphs (visible in LangGraph Studio)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from chronorag.workflows.common import check, describe, graph_context


class ToPGInput(TypedDict, total=False):
    """What a caller provides: ``question``, or chat ``messages`` (the last human one is asked)."""

    question: str
    messages: Annotated[list[Any], add_messages]


class ToPGOutput(TypedDict, total=False):
    """What a run returns (``current``: the question this run answered)."""

    current: str
    answer: str
    context: list[str]
    proposition_ids: list[int]
    passage_ids: list[int]
    mode: str
    #: no answer (no LLM: ToPG retrieves only; or the LLM gave none); ``reason`` says why
    abstained: bool
    reason: str
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


@graph_context
@dataclass(kw_only=True)
class ToPGContext:
    """Run settings of the ToPG graphs (LangGraph runtime context; a form in Studio).

    ``build_graph``'s arguments (its ``mode``, ``index_dir`` and ``settings``) are the
    defaults; a run's context overrides them field by field, and keys of a parent graph's
    context that are not fields here are ignored.
    """

    index_dir: str | None = describe(
        None, "ToPG index directory (chronorag topg index). Unset: build_graph's, else "
              "$CHRONORAG_INDEX_DIR read when the run starts.")
    mode: Literal["naive", "local", "global"] = describe("local", "Search mode: naive, local or global.")
    k: int = describe(20, "Propositions suggested per step (paper: 20).")
    lam: float = describe(0.5, "Structural weight of the transition in [0, 1] (1 = pure graph, 0 = pure semantic).")
    max_iter: int = describe(3, "Suggestion-Selection iterations (Local: 1 or 3).")
    select_threshold: float | None = describe(
        None, "Cosine threshold of the no-LLM selector; unset: the selector keeps the top walk suggestions.")
    llm_url: str | None = describe(
        None, "OpenAI-compatible endpoint for this run. Unset: the graph's LLM, else Settings.llm or "
              "$CHRONORAG_BASE_URL, else the no-LLM mode.")

    def __post_init__(self) -> None:
        check(self.mode in ("naive", "local", "global"), "mode", self.mode, "'naive', 'local' or 'global'")
        check(isinstance(self.k, int) and not isinstance(self.k, bool) and self.k >= 1, "k", self.k,
              "an integer >= 1")
        check(isinstance(self.lam, (int, float)) and 0.0 <= float(self.lam) <= 1.0, "lam", self.lam,
              "a number in [0, 1]")
        check(isinstance(self.max_iter, int) and not isinstance(self.max_iter, bool) and self.max_iter >= 0,
              "max_iter", self.max_iter, "an integer >= 0")
        check(self.select_threshold is None or isinstance(self.select_threshold, (int, float)),
              "select_threshold", self.select_threshold, "a number or unset")
        check(self.index_dir is None or (isinstance(self.index_dir, str) and bool(self.index_dir.strip())),
              "index_dir", self.index_dir, "a non-empty path or unset")
        check(self.llm_url is None or (isinstance(self.llm_url, str) and bool(self.llm_url.strip())),
              "llm_url", self.llm_url, "an http(s) URL or unset")
