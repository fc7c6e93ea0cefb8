"""The ``tools`` method: TempTool-R1's no-LLM reasoner, or its LangGraph agent with an LLM."""

from __future__ import annotations

import os
import sys
from typing import Any, Literal, cast

from chronorag.errors import ConfigError
from chronorag.evaluation.runner import Method, Prediction, register_method


def _tools_factory(index_dir: str | os.PathLike[str], *, llm_url: str | None = None, llm: Any = None,
                   protocol: str | None = None, max_tool_calls: int = 8, deadline_s: float | None = None,
                   reference: str | None = None, **_: Any) -> Method:
    """TempTool: the no-LLM reasoner, or the agent graph when an LLM is given (``llm_url`` or ``llm``).

    A question with an invalid date raises :class:`~chronorag.errors.TimeParseError`; a
    time outside the graph's span gives no answers and says why in ``info["note"]``.
    With an LLM, every LLM failure (connection refused, HTTP 5xx, timeout, an empty
    reply) raises :class:`~chronorag.errors.LLMError` naming the endpoint; a question
    gets at most ``deadline_s`` seconds (default 300).
    """
    from chronorag.errors import TimeParseError
    from chronorag.graphs.event_index import EventIndex
    from chronorag.workflows.temptool.reasoner import TemporalReasoner
    from chronorag.workflows.temptool.tools import TemporalKGTools

    if llm_url is None and llm is None and "llama_index.core" not in sys.modules:
        chat = None  # no LLM asked for and no Settings.llm can be set: skip importing the LLM layer
    else:
        from chronorag.integrations.llm import LLMConfig, resolve_llm

        chat = resolve_llm(LLMConfig(base_url=llm_url) if llm_url else llm, use_env=False)
    if chat is None:
        if protocol not in (None, "planner"):
            raise ConfigError(f"protocol {protocol!r} needs an LLM: pass --llm-url")
        reasoner = TemporalReasoner(TemporalKGTools(EventIndex.load(index_dir)), reference=reference)

        def method(q: dict[str, Any]) -> Prediction:
            res = reasoner.answer(q["question"])
            if res.error and res.error.startswith("invalid date"):
                raise TimeParseError(f"question {q['question']!r}: {res.error}")
            return Prediction(answers=res.answers, evidence=res.evidence, abstained=res.abstained,
                              reason=res.reason,
                              info={"mode": "no-LLM rule-based reasoner over the TempTool tools",
                                    "calls": res.calls, "note": res.note, "event_ids": res.evidence_ids,
                                    "plan": res.plan.describe() if res.plan else None},
                              trace=[{"name": c["name"], "args": c["arguments"]} for c in res.calls])

        return method

    from chronorag.integrations.llm import fallbacks, query_scope
    from chronorag.workflows.temptool.graph import build_graph
    from chronorag.workflows.temptool.state import DEFAULT_DEADLINE_S

    proto = cast(Literal["auto", "native", "tagged", "planner"], protocol or "auto")  # build_graph checks it
    graph = build_graph(str(index_dir), llm=chat, protocol=proto, max_tool_calls=max_tool_calls,
                        deadline_s=deadline_s or DEFAULT_DEADLINE_S)

    def agent_method(q: dict[str, Any]) -> Prediction:
        qid = str(q.get("quid", q.get("id", q["question"])))
        with query_scope(qid):
            out = graph.invoke({"question": q["question"]})
        answers = out.get("answers", [])
        return Prediction(answers=answers, abstained=not answers,
                          reason="" if answers else str(out.get("note") or out.get("stopped") or "no answer"),
                          evidence=[str(m.content) for m in out.get("messages", []) if m.type == "tool"],
                          info={"mode": out.get("mode"), "tool_calls": out.get("tool_calls", 0),
                                "stopped": out.get("stopped"), "note": out.get("note", ""),
                                "tokens": chat.ledger.summary(qid), "fallbacks": fallbacks.counts(qid)},
                          trace=[{"name": c["name"], "args": c["args"]} for m in out.get("messages", [])
                                 if m.type == "ai" for c in (getattr(m, "tool_calls", None) or [])])

    agent_method.ledger = chat.ledger  # type: ignore[attr-defined]  # the runner's tokens for an error row
    return agent_method


register_method("tools", _tools_factory)
