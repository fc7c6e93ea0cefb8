"""Dense event retriever: the time-blind baseline every temporal method is compared with.

The query is embedded, the nearest distinct (subject, relation, object) triples are
found with FAISS, and their events are returned as ``NodeWithScore`` objects whose
text is the dated event sentence. Events of one triple share its cosine score;
within a triple the most recent events come first. An optional TempTool-style
time filter (``begin_time``, ``end_time``, ``type``) restricts the events.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from chronorag.retrievers.event_index import EventIndex

__all__ = ["DenseEventRetriever", "event_node"]


def event_node(index: EventIndex, event_id: int, score: float, **extra: Any) -> NodeWithScore:
    """A ``NodeWithScore`` for one event: dated sentence as text, fields as metadata."""
    ev = index.store.event(int(event_id))
    meta = {
        "event_id": ev.id,
        "subject": ev.subject,
        "relation": ev.relation,
        "object": ev.object,
        "time": ev.time,
        "start": ev.start,
        "end": ev.end,
        **extra,
    }
    node = TextNode(text=ev.verbalize(), id_=f"event-{ev.id}", metadata=meta,
                    excluded_embed_metadata_keys=list(meta), excluded_llm_metadata_keys=list(meta))
    return NodeWithScore(node=node, score=float(score))


class DenseEventRetriever(BaseRetriever):
    """LlamaIndex retriever: cosine over triple embeddings, expanded to events.

    Parameters
    ----------
    index : EventIndex
        A loaded index directory.
    similarity_top_k : int
        Number of events returned (default 10).
    triple_top_k : int
        Triples fetched from FAISS before expansion (default ``4 * similarity_top_k``).
    begin_time, end_time, type : str, optional
        A TempTool-style time filter applied to the events.
    """

    def __init__(
        self,
        index: EventIndex,
        *,
        similarity_top_k: int = 10,
        triple_top_k: int | None = None,
        begin_time: str = "-inf",
        end_time: str = "inf",
        type: str = "in/on",
        **kwargs: Any,
    ) -> None:
        if not isinstance(index, EventIndex):
            raise TypeError(f"index must be an EventIndex, got {type_name(index)}")
        if similarity_top_k < 1:
            raise ValueError(f"similarity_top_k must be >= 1, got {similarity_top_k}")
        if triple_top_k is not None and triple_top_k < 1:
            raise ValueError(f"triple_top_k must be >= 1, got {triple_top_k}")
        # validate the filter once, up front
        index.store.filter_time(np.zeros(0, np.int64), begin_time=begin_time, end_time=end_time, type=type)
        self._index = index
        self.similarity_top_k = similarity_top_k
        self.triple_top_k = triple_top_k or 4 * similarity_top_k
        self.time_filter = {"begin_time": begin_time, "end_time": end_time, "type": type}
        super().__init__(**kwargs)

    def retrieve_event_ids(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Ranked ``(event_ids, scores)`` for a query string."""
        scores, rows = self._index.search_triples(query, self.triple_top_k)
        store = self._index.store
        ids, pos = self._index.expand_triples(
            rows, self.similarity_top_k, event_filter=lambda evs: store.filter_time(evs, **self.time_filter))
        return ids, scores[pos].astype(np.float64)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        ids, scores = self.retrieve_event_ids(query_bundle.query_str)
        return [event_node(self._index, i, s, cosine=s) for i, s in zip(ids, scores)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._retrieve(query_bundle)


def type_name(x: Any) -> str:
    """Name of ``x``'s type, for error messages."""
    return type(x).__name__
