"""Dense event retriever: the time-blind baseline every temporal method is compared with.

The query is embedded, the nearest distinct (subject, relation, object) triples are
found with FAISS, and their events are returned as ``NodeWithScore`` objects whose
text is the dated event sentence. Events of one triple share its cosine score;
within a triple the most recent events come first. A TempTool-style time filter
(:class:`~chronorag.retrievers.base.TimeFilter`) restricts the events, per retriever or
per query.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from chronorag.errors import ArgumentTypeError, ConfigError
from chronorag.graphs.event_index import EventIndex
from chronorag.retrievers.base import TemporalRetriever, TimeFilter, as_time_filter

__all__ = ["DenseEventRetriever", "event_node", "flat_metadata"]


def flat_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """Metadata a flat-metadata vector store accepts (values ``str``, ``int``, ``float`` or ``None``).

    Lists and tuples become comma-joined strings (``[3, 17]`` -> ``"3,17"``), other values
    their ``str``; numpy scalars become Python numbers. LlamaIndex's
    ``node_to_metadata_dict(node, flat_metadata=True)`` (used by Chroma, Qdrant, ...) then
    takes the node as it is.
    """
    out: dict[str, Any] = {}
    for k, v in meta.items():
        if isinstance(v, np.generic):
            v = v.item()
        if v is None or isinstance(v, (str, int, float)):
            out[k] = v
        elif isinstance(v, (list, tuple, np.ndarray)):
            out[k] = ",".join(str(x.item() if isinstance(x, np.generic) else x) for x in v)
        else:
            out[k] = str(v)
    return out


def event_node(index: EventIndex, event_id: int, score: float, **extra: Any) -> NodeWithScore:
    """A ``NodeWithScore`` for one event: dated sentence as text, fields as flat metadata
    (see :func:`flat_metadata`), all hidden from the LLM and the embedder."""
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
    meta = flat_metadata(meta)
    node = TextNode(text=ev.verbalize(), id_=f"event-{ev.id}", metadata=meta,
                    excluded_embed_metadata_keys=list(meta), excluded_llm_metadata_keys=list(meta))
    return NodeWithScore(node=node, score=float(score))


class DenseEventRetriever(TemporalRetriever):
    """LlamaIndex retriever: cosine over triple embeddings, expanded to events.

    Parameters
    ----------
    index : EventIndex
        A loaded index directory.
    similarity_top_k : int
        Number of events returned (default 10).
    triple_top_k : int
        Triples fetched from FAISS before expansion (default ``4 * similarity_top_k``).
    time_filter, filters : TimeFilter, dict or MetadataFilters, optional
        A default time filter for every query (``filters=`` is the same setting under
        ``VectorIndexRetriever``'s name); ``retrieve(q, time_filter=...)`` replaces it for
        one query.
    begin_time, end_time, type : str, optional
        Shorthand for ``time_filter=TimeFilter(begin_time, end_time, type)``.

    Notes
    -----
    Scores are cosine similarities of the event's (dateless) triple to the query. The
    node text is the dated event sentence; the structured fields ride in metadata that
    is hidden from the LLM and the embedder.

    Examples
    --------
    >>> r = DenseEventRetriever(index, similarity_top_k=5)  # doctest: +SKIP
    >>> r.retrieve("Who did the ECB criticize?", time_filter={"begin_time": "2012", "end_time": "2012"})  # doctest: +SKIP
    """

    def __init__(
        self,
        index: EventIndex,
        *,
        similarity_top_k: int = 10,
        triple_top_k: int | None = None,
        time_filter: Any = None,
        begin_time: str | None = None,
        end_time: str | None = None,
        type: str | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(index, EventIndex):
            raise ArgumentTypeError(f"index must be an EventIndex, got {type_name(index)}")
        if not isinstance(similarity_top_k, int) or similarity_top_k < 1:
            raise ConfigError(f"similarity_top_k must be an int >= 1, got {similarity_top_k!r}")
        if triple_top_k is not None and (not isinstance(triple_top_k, int) or triple_top_k < 1):
            raise ConfigError(f"triple_top_k must be an int >= 1, got {triple_top_k!r}")
        if begin_time is not None or end_time is not None or type is not None:
            if time_filter is not None:
                raise ConfigError("give either time_filter or begin_time/end_time/type, not both")
            time_filter = TimeFilter(begin_time=begin_time or "-inf", end_time=end_time or "inf",
                                     type=type or "in/on")  # type: ignore[arg-type]
        self._index = index
        self.similarity_top_k = similarity_top_k
        self.triple_top_k = triple_top_k or 4 * similarity_top_k
        super().__init__(time_filter=time_filter, **kwargs)

    def retrieve_event_ids(self, query: str, *, time_filter: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Ranked ``(event_ids, scores)`` for a query string."""
        tf = as_time_filter(time_filter) or self.time_filter
        store = self._index.store
        flt = None
        if tf is not None and not tf.is_open:
            kw = tf.as_kwargs()
            flt = lambda evs: store.filter_time(evs, **kw)  # noqa: E731
        scores, rows = self._index.search_triples(query, self.triple_top_k)
        ids, pos = self._index.expand_triples(rows, self.similarity_top_k, event_filter=flt)
        if flt is not None and len(ids) < self.similarity_top_k:
            # too few of the best triples over all time fall in the window (a short one): the top k
            # among the triples with an event in it, as VectorIndexRetriever with filters gives
            _, subset = self._index.triples_in_time(**tf.as_kwargs())  # type: ignore[union-attr]
            scores, rows = self._index.search_triples(query, self.triple_top_k, subset=subset)
            ids, pos = self._index.expand_triples(rows, self.similarity_top_k, event_filter=flt)
        return ids, scores[pos].astype(np.float64)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        ids, scores = self.retrieve_event_ids(query_bundle.query_str,
                                              time_filter=self.time_filter_for(query_bundle))
        return [event_node(self._index, i, s) for i, s in zip(ids, scores)]


def type_name(x: Any) -> str:
    """Name of ``x``'s type, for error messages."""
    return type(x).__name__
