"""KG-iRAG: time-anchored iterative retrieval over a temporal KG of records (LangGraph).

- :func:`build_graph` (:mod:`.graph`): the loop ``init -> retrieve -> judge -> update ... -> synthesize``
  and the baselines (``method``: ``kg-irag``, ``single-pass``, ``limited``, ``no-check``);
- :class:`KGIRAGContext` (:mod:`.state`): per-run settings;
- :func:`generate_questions` (:mod:`.questions`) and :class:`ReferenceLabeller` (:mod:`.reference`);
- :func:`parse_question` (:mod:`.planner`): the no-LLM planner;
- :func:`chronorag.evaluation.methods.kg_irag_eval.evaluate`: accuracy, EM, F1, hit rate, hallucination,
  evidence size (not re-exported here: the name is taken by its submodule).
"""

from __future__ import annotations

from typing import Any

__all__ = ["METHODS", "KGIRAGContext", "ReferenceLabeller", "build_graph", "generate_questions",
           "parse_question"]

_LAZY = {
    "METHODS": "names", "KGIRAGContext": "state", "ReferenceLabeller": "reference", "build_graph": "graph",
    "generate_questions": "questions", "parse_question": "planner",
}


def __getattr__(name: str) -> Any:  # lazy, so importing a submodule does not build the graph
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
