"""The ``star-rag`` method and its ablations (``star-rag-uniform``, ``star-rag-norule``)."""

from __future__ import annotations

import os
from typing import Any

from chronorag.evaluation.runner import Method, Prediction, register_method
from chronorag.retrievers.reader import rank_candidates


def _star_factory(index_dir: str | os.PathLike[str], *, llm_url: str | None = None,
                  personalization: str = "star", use_rule_graph: bool = True, **_: Any) -> Method:
    """STAR-RAG retrieval; answers from the LLM, or (no LLM) the temporal reasoner reading
    only the retrieved events, falling back to :func:`rank_candidates`."""
    from chronorag.graphs.event_index import EventIndex
    from chronorag.integrations.llm import LLMConfig
    from chronorag.retrievers.star_rag import StarRAGRetriever, answer_with_llm
    from chronorag.workflows.temptool.reasoner import TemporalReasoner
    from chronorag.workflows.temptool.tools import TemporalKGTools

    index = EventIndex.load(index_dir)
    retriever = StarRAGRetriever(index, personalization=personalization, use_rule_graph=use_rule_graph)
    cfg = LLMConfig(base_url=llm_url) if llm_url else None
    tools = TemporalKGTools(index) if cfg is None else None
    reasoner = TemporalReasoner(tools) if tools is not None else None

    def method(q: dict[str, Any]) -> Prediction:
        ids, info = retriever.retrieve_event_ids(q["question"])
        events = index.store.events(ids)
        evidence = [e.verbalize() for e in events]
        meta = {"event_ids": ids.tolist(), "seeds": info.get("seeds", []), "top_rules": info.get("top_rules", [])}
        if cfg is not None:
            qid = str(q.get("quid", q.get("id", q["question"])))
            with cfg.ledger.query(qid):
                answers = answer_with_llm(cfg, q["question"], events)
            return Prediction(answers=answers, evidence=evidence, info={**meta, "tokens": cfg.ledger.summary(qid)})
        with tools.restricted(ids):
            res = reasoner.answer(q["question"])
        answers = list(res.answers)
        for a in rank_candidates(events, q["question"]):
            if a not in answers:
                answers.append(a)
        return Prediction(answers=answers, evidence=evidence,
                          info={**meta, "reader": "temporal reasoner over retrieved events" if res.answers
                                else "entities and dates of retrieved events"})

    return method


def _star_uniform_factory(index_dir: str | os.PathLike[str], **kw: Any) -> Method:
    return _star_factory(index_dir, personalization="uniform", **kw)


def _star_norule_factory(index_dir: str | os.PathLike[str], **kw: Any) -> Method:
    return _star_factory(index_dir, use_rule_graph=False, **kw)


register_method("star-rag", _star_factory)
register_method("star-rag-uniform", _star_uniform_factory)
register_method("star-rag-norule", _star_norule_factory)
