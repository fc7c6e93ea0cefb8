"""The ``dense`` method: top-10 events by cosine, read by the naive reader (the time-blind baseline)."""

from __future__ import annotations

import os
from typing import Any

from chronorag.evaluation.runner import Method, Prediction, register_method
from chronorag.retrievers.reader import rank_candidates


def _dense_factory(index_dir: str | os.PathLike[str], *, top_k: int = 10,
                   llm_url: str | None = None, **_: Any) -> Method:
    if llm_url is not None:
        raise ValueError("method 'dense' has no LLM mode; drop --llm-url")
    from chronorag.graphs.event_index import EventIndex

    index = EventIndex.load(index_dir)

    def method(q: dict[str, Any]) -> Prediction:
        # DenseEventRetriever.retrieve_event_ids without a time filter, through EventIndex
        # directly: the same events (tested) without importing LlamaIndex, so that
        # `chronorag ask --method dense` starts in about a second
        _, rows = index.search_triples(q["question"], 4 * top_k)
        ids, _ = index.expand_triples(rows, top_k)
        events = index.store.events(ids)
        return Prediction(
            answers=rank_candidates(events, q["question"]),
            evidence=[e.verbalize() for e in events],
            info={"event_ids": [int(i) for i in ids]},
        )

    return method


register_method("dense", _dense_factory)
