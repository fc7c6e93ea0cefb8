"""The question reading the no-LLM readers share (dense QA graph, dense and STAR-RAG methods): one parse, one linking.

:func:`reader_constraints` runs the TempTool reasoner's question understanding
(:meth:`~chronorag.workflows.temptool.reasoner.TemporalReasoner.plan_or_reason`: parse,
calendar windows, operators, entity linking with its margin rule) without calling any
tool, and returns the keyword arguments of
:func:`~chronorag.retrievers.reader.read_events`, or the reason the question cannot be
read faithfully.
"""

from __future__ import annotations

from typing import Any

__all__ = ["reader_constraints"]


def reader_constraints(reasoner: Any, question: str) -> tuple[dict[str, Any] | None, str]:
    """``(kwargs for read_events, "")`` or ``(None, why)``."""
    q = reasoner.parse(question)
    problem = reasoner._time_problem(q)
    if problem is not None:
        return None, problem
    plan, why = reasoner.plan_or_reason(q)
    if plan is None:
        return None, why
    window = None
    if (plan.begin_time, plan.end_time) != ("-inf", "inf"):
        window = (plan.begin_time, plan.end_time, plan.type)
    return {"target": "time" if q.target == "time" else "entity", "operator": q.operator, "window": window,
            "exclude": list(plan.exclude), "known": plan.known,
            "known_role": plan.known_role if plan.target == "entity" else None,
            "ordinal": q.ordinal, "anchor": plan.anchor, "granularity": q.granularity}, ""
