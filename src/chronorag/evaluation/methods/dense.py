"""The ``dense`` method: top-10 events by cosine, read under the question's constraints (no LLM).

The reader (:func:`~chronorag.workflows.temptool.reading.read_retrieved`) applies the
question's time window, entity role and exclusions to the retrieved events of a relation the
question can mean, and abstains, with the reason, for what it cannot apply (counting, yes/no, first/last, anchor events, an
entity not in the KG). ``dense-naive`` is the old reader: every name and date of the
retrieved events, never abstaining (the time-blind baseline).
"""

from __future__ import annotations

import os
from typing import Any

from chronorag.errors import ConfigError
from chronorag.evaluation.runner import Method, Prediction, register_method
from chronorag.retrievers.reader import rank_candidates


def _dense_factory(index_dir: str | os.PathLike[str], *, top_k: int = 10,
                   llm_url: str | None = None, naive: bool = False, reference: str | None = None,
                   **_: Any) -> Method:
    if llm_url is not None:
        raise ConfigError("method 'dense' has no LLM mode; drop --llm-url")
    from chronorag.graphs.event_index import EventIndex
    from chronorag.workflows.temptool.reading import read_retrieved
    from chronorag.workflows.temptool.reasoner import TemporalReasoner
    from chronorag.workflows.temptool.tools import TemporalKGTools

    index = EventIndex.load(index_dir)
    reasoner = None if naive else TemporalReasoner(TemporalKGTools(index), reference=reference)

    def method(q: dict[str, Any]) -> Prediction:
        # DenseEventRetriever.retrieve_event_ids without a time filter, through EventIndex
        # directly: the same events (tested) without importing LlamaIndex, so that
        # `chronorag ask --method dense` starts in about a second
        _, rows = index.search_triples(q["question"], 4 * top_k)
        ids, _ = index.expand_triples(rows, top_k)
        events = index.store.events(ids)
        info: dict[str, Any] = {"event_ids": [int(i) for i in ids]}
        evidence = [e.verbalize() for e in events]
        if reasoner is None:
            return Prediction(answers=rank_candidates(events, q["question"]), evidence=evidence,
                              info={**info, "mode": "no-LLM naive reader (names and dates of retrieved events)"})
        info["mode"] = "no-LLM constrained reader over retrieved events"
        answers, abstained, reason = read_retrieved(reasoner, events, q["question"])
        return Prediction(answers=answers, evidence=evidence, info=info, abstained=abstained, reason=reason)

    return method


def _dense_naive_factory(index_dir: str | os.PathLike[str], **kw: Any) -> Method:
    return _dense_factory(index_dir, naive=True, **kw)


register_method("dense", _dense_factory)
register_method("dense-naive", _dense_naive_factory)
