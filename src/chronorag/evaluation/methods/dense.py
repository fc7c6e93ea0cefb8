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
    from chronorag.retrievers.dense import DenseEventRetriever

    index = EventIndex.load(index_dir)
    retriever = DenseEventRetriever(index, similarity_top_k=top_k)

    def method(q: dict[str, Any]) -> Prediction:
        ids, scores = retriever.retrieve_event_ids(q["question"])
        events = index.store.events(ids)
        return Prediction(
            answers=rank_candidates(events, q["question"]),
            evidence=[e.verbalize() for e in events],
            info={"event_ids": [int(i) for i in ids]},
        )

    return method


register_method("dense", _dense_factory)
