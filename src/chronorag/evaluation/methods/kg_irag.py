"""The ``kg-irag`` method over a record source (``nyc-weather``, ``nyc-flights``, ``seattle-weather``)."""

from __future__ import annotations

import os
from typing import Any

from chronorag.evaluation.runner import Method, Prediction, register_method


def _kg_irag_factory(index_dir: str | os.PathLike[str], *, llm_url: str | None = None,
                     method: str = "kg-irag", **_: Any) -> Method:
    """KG-iRAG: ``index_dir`` names a record source (``nyc-weather``...); its own metrics: ``chronorag eval kg-irag``."""
    from chronorag.integrations.llm import LLMConfig
    from chronorag.workflows.kg_irag.graph import build_graph, load_kg

    kg = load_kg(str(index_dir))
    cfg = LLMConfig(base_url=llm_url) if llm_url else None
    g = build_graph(kg=kg, llm=cfg, method=method, source=kg.spec.source, use_llm=bool(llm_url))

    def run(q: dict[str, Any]) -> Prediction:
        out = g.invoke({"question": q["question"]})
        steps = [{"name": "psi", "args": {"window": t["window_iso"], "radius_km": t["radius_km"]}}
                 for t in out.get("trace") or []]
        abstained = bool(out.get("abstained"))
        return Prediction(answers=[] if abstained else [out.get("answer") or "no answer"],
                          evidence=list(out.get("evidence") or []), abstained=abstained,
                          reason=str(out.get("reason") or ""),
                          info={k: out.get(k) for k in ("iterations", "stopped_by", "evidence_ids", "rationale",
                                                        "verified", "mode")},
                          trace=steps)

    if cfg is not None:
        run.ledger = cfg.ledger  # type: ignore[attr-defined]
    return run


register_method("kg-irag", _kg_irag_factory)
