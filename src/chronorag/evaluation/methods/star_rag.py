"""The ``star-rag`` method and its ablations (``star-rag-uniform``, ``star-rag-norule``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from chronorag.errors import ConfigError
from chronorag.evaluation.runner import Method, Prediction, register_method


def _star_factory(index_dir: str | os.PathLike[str], *, llm_url: str | None = None, llm: Any = None,
                  personalization: str = "star", use_rule_graph: bool = True, reference: str | None = None,
                  **_: Any) -> Method:
    """STAR-RAG retrieval; answers from the LLM (only candidates the retrieved events show:
    :func:`~chronorag.graphs.answer_checks.ground_answers`, and of the kind the question
    asks for, not the question's own entity: :func:`~chronorag.graphs.answer_checks.screen_answers`;
    none left is an abstention with its reason), or (no LLM) the temporal reasoner reading
    only the retrieved events (and the anchor event the retriever looked up, for "after X"
    questions), then the constrained reader
    (:func:`~chronorag.workflows.temptool.reading.read_retrieved`); it abstains, with the reason, when
    neither can apply the question's constraints to the retrieved events. An order, an anchor, a
    count, a "most often" or a yes/no ("first", "last before X", "after X", "how many times")
    read over the retrieved events is a sample's answer: it stands only when the same reasoner
    over the whole KG agrees (the top answer, or for "after X" alone any matching one);
    otherwise the method abstains and says what the KG holds. A plain list says that it was
    read over the retrieved events (the KG may hold more answers; its ranking and ties count
    only those events).

    ``llm_url`` (an OpenAI-compatible endpoint) or ``llm`` (anything
    :func:`~chronorag.integrations.llm.resolve_llm` accepts: ``LLMConfig``, a LlamaIndex LLM, a
    LangChain chat model) selects the LLM reader; neither is the no-LLM mode."""
    from chronorag.errors import LLMEchoError
    from chronorag.graphs.event_index import EventIndex
    from chronorag.graphs.question import parse_question
    from chronorag.integrations.llm import LLMConfig, record_fallback, resolve_llm
    from chronorag.metrics import normalize_answer
    from chronorag.retrievers.star_rag import (
        StarRAGRetriever,
        answer_with_llm,
        ground_answers,
        screen_answers,
    )
    from chronorag.workflows.temptool.reading import read_retrieved
    from chronorag.workflows.temptool.reasoner import TemporalReasoner
    from chronorag.workflows.temptool.tools import TemporalKGTools

    index = EventIndex.load(index_dir)
    retriever = StarRAGRetriever(index, personalization=personalization, use_rule_graph=use_rule_graph)
    if llm_url and llm is not None:
        raise ConfigError("give llm_url or llm, not both")
    cfg = resolve_llm(LLMConfig(base_url=llm_url) if llm_url else llm, use_env=False)
    tools = TemporalKGTools(index) if cfg is None else None
    reasoner = TemporalReasoner(tools, reference=reference) if tools is not None else None

    def method(q: dict[str, Any]) -> Prediction:
        ids, info = retriever.retrieve_event_ids(q["question"])
        events = index.store.events(ids)
        evidence = [e.verbalize() for e in events]
        meta = {"event_ids": ids.tolist(), "seeds": info.get("seeds", []), "top_rules": info.get("top_rules", [])}
        if cfg is not None:
            qid = str(q.get("quid", q.get("id", q["question"])))
            with cfg.ledger.query(qid):
                try:
                    answers, dropped = ground_answers(answer_with_llm(cfg, q["question"], events), events)
                except LLMEchoError as exc:  # counted as llm.echo by the client: no answer, said why
                    return Prediction(answers=[], evidence=evidence, abstained=True,
                                      reason=f"the LLM's reply is not an answer: {exc}",
                                      info={**meta, "tokens": cfg.ledger.summary(qid), "ungrounded": []})
                if dropped:
                    record_fallback("star_rag.ungrounded", f"{len(dropped)} candidate(s) in no retrieved event: "
                                    + ", ".join(repr(d) for d in dropped[:3]))
                answers, off = screen_answers(answers, q["question"], events)
                if off:
                    record_fallback("star_rag.off_question", "; ".join(f"{a!r}: {why}" for a, why in off[:3]))
            info = {**meta, "tokens": cfg.ledger.summary(qid), "ungrounded": dropped,
                    "off_question": [a for a, _ in off]}
            if not answers:
                if off:
                    why = (f"the LLM's grounded candidate(s) do not answer the question as asked ({off[0][0]!r}: "
                           f"{off[0][1]}; counted as star_rag.off_question)")
                elif dropped:
                    why = (f"the LLM's {len(dropped)} candidate(s) are in no retrieved event (e.g. {dropped[0]!r}; "
                           "counted as star_rag.ungrounded)")
                else:
                    why = "the LLM gave no answer"
                return Prediction(answers=[], evidence=evidence, abstained=True, reason=why, info=info)
            asked = parse_question(q["question"])
            caveat = "; ".join(x for x in (
                asked.unfiltered_note(filtered_by="the retriever",
                                      answer_from="the LLM's reading of the retrieved events"),
                asked.sample_note(len(events), reader="the LLM")) if x)
            return Prediction(answers=answers, evidence=evidence, reason=caveat, info=info)
        assert tools is not None and reasoner is not None  # built when there is no LLM
        allowed = ids
        if info.get("reference_triple") is not None:  # the anchor event the retriever found ("after France")
            anchor_ids = index.events_of_triples(np.asarray([info["reference_triple"]]))[0]
            allowed = np.union1d(ids, anchor_ids)
            meta["anchor_event_ids"] = [int(i) for i in anchor_ids]
        with tools.restricted(allowed):
            res = reasoner.answer(q["question"])
        if res.answers:
            reason = res.reason
            pq = res.plan.question if res.plan is not None else None
            mode = "no-LLM temporal reasoner over the retrieved events"
            over = (f"read over the {len(ids)} retrieved events"
                    + (" and the anchor event" if "anchor_event_ids" in meta else ""))
            if pq is not None and (pq.ordinal or pq.anchor or pq.operator != "select"):
                # an order ("first", "last before X"), an anchor ("after X"), a count, a "most often"
                # or a yes/no over a sample of the KG's events: certified only when the whole KG's
                # matching events give the same answer
                what = (f"'{pq.ordinal}'" if pq.ordinal else "the anchor condition" if pq.anchor else
                        {"count": "the count", "most_frequent": "'most often'", "exists": "the yes/no"}[pq.operator])
                full = reasoner.answer(q["question"])
                # an order or "most often" has one answer (or a tie); a count or a yes/no has one;
                # "before X" alone is met by every entity of a matching event before X
                certified = (full.answers[: full.top] if pq.ordinal or pq.operator == "most_frequent" else
                             full.answers[:1] if pq.operator in ("count", "exists") else full.answers)
                if full.answers and normalize_answer(res.answers[0]) not in {normalize_answer(a) for a in certified}:
                    why = (f"{what} {over} gives {res.answers[0]!r}, but the KG holds a matching event the "
                           f"retriever did not return (over the whole KG: {full.answers[0]!r}); the retrieved "
                           f"events cannot show the answer")
                    return Prediction(answers=[], evidence=evidence, abstained=True, reason=why,
                                      info={**meta, "mode": mode})
                caveat = (f"{what} {over}, and the whole KG's matching events agree" if full.answers else
                          f"{what} {over}: an event the retriever did not return could change it")
            else:
                # each answer is a matching event's, but the list, its ranking and any tie count only
                # the retrieved events
                caveat = f"{over}: the KG may hold more answers, and the ranking counts only these events"
            reason = f"{reason}; {caveat}" if reason else caveat
            return Prediction(answers=list(res.answers), evidence=evidence, reason=reason,
                              info={**meta, "mode": mode})
        # the reasoner found nothing among the retrieved events: the constrained reader (the events
        # of the relation the reasoner linked), or abstain
        answers, abstained, why = read_retrieved(reasoner, events, q["question"], relation=res.relation())
        if res.plan is not None:  # the reasoner's own finding over the retrieved events comes first
            why = (f"reasoner over the {len(ids)} retrieved events: {res.reason}; "
                   + ("" if abstained else "answered by the constrained reader, ") + why)
        return Prediction(answers=answers, evidence=evidence, abstained=abstained, reason=why,
                          info={**meta, "mode": "no-LLM constrained reader over the retrieved events"})

    if cfg is not None:
        method.ledger = cfg.ledger  # type: ignore[attr-defined]  # the runner's tokens for an error row
    return method


def _star_uniform_factory(index_dir: str | os.PathLike[str], **kw: Any) -> Method:
    return _star_factory(index_dir, personalization="uniform", **kw)


def _star_norule_factory(index_dir: str | os.PathLike[str], **kw: Any) -> Method:
    return _star_factory(index_dir, use_rule_graph=False, **kw)


register_method("star-rag", _star_factory)
register_method("star-rag-uniform", _star_uniform_factory)
register_method("star-rag-norule", _star_norule_factory)
