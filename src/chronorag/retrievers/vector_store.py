"""Dense temporal retrieval from any LlamaIndex vector store (``BasePydanticVectorStore``).

A user who already runs a vector store (PGVectorStore, Qdrant, Chroma, ...) keeps it:

- :func:`event_nodes` turns a chronorag index's events into ``TextNode`` objects (dated
  sentence as text, the triple's vector as embedding, and the event's time as integer
  minutes ``t_lo``/``t_hi`` in metadata) to ``add`` to the store;
- :func:`time_filter_to_metadata_filters` translates a :class:`~chronorag.retrievers.base.TimeFilter`
  into LlamaIndex ``MetadataFilters`` over those two numeric fields, with exactly the
  semantics of the store's own filter (:func:`chronorag.graphs.time.temporal_mask`), so
  the store does the filtering inside its query;
- :class:`VectorStoreTemporalRetriever` queries the store with both.

Integer minutes (not ISO strings) make the comparison exact at every granularity:
"in 2014" keeps an event of 2014-03-05 and an event spanning 2013-2015 alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from chronorag.errors import ArgumentTypeError, ConfigError
from chronorag.graphs.time import NEG_INF, POS_INF, parse_time
from chronorag.retrievers.base import TemporalRetriever, TimeFilter, as_time_filter

__all__ = ["VectorStoreTemporalRetriever", "event_nodes", "time_filter_to_metadata_filters"]

START_KEY = "t_lo"
END_KEY = "t_hi"


def time_filter_to_metadata_filters(time_filter: Any, *, start_key: str = START_KEY,
                                    end_key: str = END_KEY) -> Any:
    """LlamaIndex ``MetadataFilters`` equivalent to a chronorag time filter.

    Parameters
    ----------
    time_filter : TimeFilter, dict or MetadataFilters
        Anything :func:`~chronorag.retrievers.base.as_time_filter` accepts.
    start_key, end_key : str
        Metadata fields holding each node's first minute and the minute after its last
        (as written by :func:`event_nodes`).

    Returns
    -------
    llama_index.core.vector_stores.MetadataFilters or None
        AND-combined numeric comparisons; ``None`` for an open filter (keeps everything).

    Examples
    --------
    >>> f = time_filter_to_metadata_filters({"begin_time": "2014", "end_time": "2014"})
    >>> [(x.key, x.operator.value) for x in f.filters]
    [('t_lo', '<'), ('t_hi', '>')]
    """
    from llama_index.core.vector_stores.types import (
        FilterCondition,
        FilterOperator,
        MetadataFilter,
        MetadataFilters,
    )

    tf = as_time_filter(time_filter)
    if tf is None or tf.is_open:
        return None
    b, e = parse_time(tf.begin_time), parse_time(tf.end_time)
    conds: list[tuple[str, FilterOperator, int]] = []
    if tf.type in ("in/on", "between"):  # overlaps [B.lo, E.hi)
        conds = [(start_key, FilterOperator.LT, e.hi), (end_key, FilterOperator.GT, b.lo)]
    elif tf.type == "before":  # over before E starts, not starting before B
        conds = [(end_key, FilterOperator.LTE, e.lo), (start_key, FilterOperator.GTE, b.lo)]
    else:  # after: starts once B is over, ends by E
        conds = [(start_key, FilterOperator.GTE, b.hi), (end_key, FilterOperator.LTE, e.hi)]
    keep = [MetadataFilter(key=k, operator=op, value=int(v)) for k, op, v in conds
            if NEG_INF < v < POS_INF]  # an infinite bound constrains nothing
    if not keep:
        return None
    return MetadataFilters(filters=keep, condition=FilterCondition.AND)


def event_nodes(index: Any, ids: Any = None) -> list[TextNode]:
    """Events of a chronorag ``EventIndex`` as embedded ``TextNode`` objects for a vector store.

    Parameters
    ----------
    index : EventIndex
        The index whose triple vectors become the nodes' embeddings.
    ids : array-like of int, optional
        The events (default: all).

    Returns
    -------
    list of TextNode
        Text: the dated sentence; embedding: the event's triple vector; metadata:
        ``event_id``, ``subject``, ``relation``, ``object``, ``time`` and the integer
        minutes ``t_lo``/``t_hi`` (an open end is stored as ``2**62``).
    """
    store = index.store
    ids = np.arange(len(store)) if ids is None else np.asarray(ids, dtype=np.int64)
    vecs = index.vectors.vectors
    nodes = []
    for i in ids.tolist():
        ev = store.event(i)
        meta = {"event_id": ev.id, "subject": ev.subject, "relation": ev.relation, "object": ev.object,
                "time": ev.time, START_KEY: int(store.t_lo[i]), END_KEY: int(store.t_hi[i])}
        nodes.append(TextNode(text=ev.verbalize(), id_=f"event-{ev.id}", metadata=meta,
                              embedding=np.asarray(vecs[int(index.triple_of_event[i])], dtype=np.float32).tolist(),
                              excluded_embed_metadata_keys=list(meta), excluded_llm_metadata_keys=list(meta)))
    return nodes


class VectorStoreTemporalRetriever(TemporalRetriever):
    """Dense temporal retrieval over a LlamaIndex vector store, the time filter run by the store.

    Parameters
    ----------
    vector_store : BasePydanticVectorStore
        Holding nodes with integer ``t_lo``/``t_hi`` metadata (see :func:`event_nodes`).
    embed_model : BaseEmbedding or Encoder
        Embeds the query (the model the nodes were embedded with); a chronorag encoder
        (with ``encode(list[str])``) or a LlamaIndex embedding.
    similarity_top_k : int
        Nodes returned.
    time_filter : TimeFilter, dict or MetadataFilters, optional
        Default filter; a per-query ``time_filter`` replaces it.
    start_key, end_key : str
        The metadata fields with the time bounds.
    """

    def __init__(self, vector_store: Any, embed_model: Any, *, similarity_top_k: int = 10,
                 time_filter: Any = None, start_key: str = START_KEY, end_key: str = END_KEY,
                 **kwargs: Any) -> None:
        if not hasattr(vector_store, "query"):
            raise ArgumentTypeError(f"vector_store must be a LlamaIndex vector store, got {type(vector_store).__name__}")
        if not isinstance(similarity_top_k, int) or similarity_top_k < 1:
            raise ConfigError(f"similarity_top_k must be an int >= 1, got {similarity_top_k!r}")
        self._vs = vector_store
        self._embed = embed_model
        self.similarity_top_k = similarity_top_k
        self._keys = (start_key, end_key)
        super().__init__(time_filter=time_filter, **kwargs)

    def _query_vector(self, text: str) -> list[float]:
        if hasattr(self._embed, "encode"):
            return np.asarray(self._embed.encode([text]), dtype=np.float32)[0].tolist()
        return list(self._embed.get_query_embedding(text))

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        from llama_index.core.vector_stores.types import VectorStoreQuery

        tf: TimeFilter | None = self.time_filter_for(query_bundle)
        filters = time_filter_to_metadata_filters(tf, start_key=self._keys[0], end_key=self._keys[1])
        emb = query_bundle.embedding or self._query_vector(query_bundle.query_str)
        res = self._vs.query(VectorStoreQuery(query_embedding=emb, similarity_top_k=self.similarity_top_k,
                                              filters=filters))
        sims = res.similarities or [None] * len(res.nodes or [])
        return [NodeWithScore(node=n, score=None if s is None else float(s)) for n, s in zip(res.nodes or [], sims)]
