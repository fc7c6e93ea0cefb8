"""Conventions shared by chronorag's LlamaIndex retrievers.

- :class:`TimeFilter`: a TempTool-style window (``begin_time``, ``end_time``, ``type``),
  validated once; built from keyword arguments, a dict, or LlamaIndex ``MetadataFilters``
  on the ``time``/``start``/``end`` fields.
- Per-query filters: ``retriever.retrieve("...", time_filter=...)`` (and ``aretrieve``) on
  top of the filter given at construction; the query travels as a
  :class:`TemporalQueryBundle`, so LlamaIndex callbacks and instrumentation still see
  one ordinary retrieval per query.
- Real async: ``aretrieve`` runs the (CPU-bound) retrieval in a worker thread, so
  ``asyncio.gather`` over several queries runs them concurrently instead of one by one.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from chronorag.graphs.time import FILTER_TYPES, parse_time

__all__ = ["TemporalQueryBundle", "TemporalRetriever", "TimeFilter", "as_time_filter"]

FilterType = Literal["in/on", "before", "after", "between"]


@dataclass(frozen=True)
class TimeFilter:
    """A TempTool-style time window: keep events ``type`` the window ``[begin_time, end_time]``.

    Parameters
    ----------
    begin_time, end_time : str
        ``"2014"``, ``"2014-03"``, ``"2014-03-05"`` ..., or ``"-inf"``/``"inf"`` for an open side.
    type : {"in/on", "before", "after", "between"}
        How events relate to the window (see :func:`chronorag.graphs.time.temporal_mask`).

    Examples
    --------
    >>> TimeFilter(begin_time="2014", end_time="2014").as_kwargs()["type"]
    'in/on'
    """

    begin_time: str = "-inf"
    end_time: str = "inf"
    type: FilterType = "in/on"

    def __post_init__(self) -> None:
        if self.type not in FILTER_TYPES:
            raise ValueError(f"time filter type must be one of {list(FILTER_TYPES)}, got {self.type!r}")
        b, e = parse_time(self.begin_time), parse_time(self.end_time)  # raises TimeParseError
        if b.lo > e.hi:
            from chronorag.errors import IntervalOrderError

            raise IntervalOrderError(f"time filter begins ({self.begin_time!r}) after it ends "
                                     f"({self.end_time!r}); swap them")

    @property
    def is_open(self) -> bool:
        """True when the filter keeps everything."""
        return self.begin_time == "-inf" and self.end_time == "inf" and self.type in ("in/on", "between")

    def as_kwargs(self) -> dict[str, str]:
        """``{"begin_time", "end_time", "type"}`` for the store's ``filter_time``."""
        return {"begin_time": self.begin_time, "end_time": self.end_time, "type": self.type}


def _from_metadata_filters(filters: Any) -> TimeFilter:
    from llama_index.core.vector_stores.types import FilterCondition, FilterOperator

    if getattr(filters, "condition", FilterCondition.AND) not in (FilterCondition.AND, "and"):
        raise ValueError("only AND-combined MetadataFilters can be used as a time filter")
    begin, end = "-inf", "inf"
    for f in filters.filters:
        if not hasattr(f, "key"):
            raise ValueError("nested MetadataFilters are not supported as a time filter")
        if f.key not in ("time", "start", "end", "date"):
            raise ValueError(f"MetadataFilter on {f.key!r} is not a time field; use 'time', 'start' or 'end'")
        v = str(f.value)
        op = f.operator
        if op in (FilterOperator.GTE, FilterOperator.GT):
            begin = v
        elif op in (FilterOperator.LTE, FilterOperator.LT):
            end = v
        elif op == FilterOperator.EQ:
            begin = end = v
        else:
            raise ValueError(f"MetadataFilter operator {op!r} on {f.key!r} is not supported as a time "
                             f"filter; use ==, >=, >, <= or <")
    return TimeFilter(begin_time=begin, end_time=end, type="in/on")


def as_time_filter(value: Any) -> TimeFilter | None:
    """Normalise ``value`` to a :class:`TimeFilter` (``None`` stays ``None``).

    Accepts a :class:`TimeFilter`, a dict with ``begin_time``/``end_time``/``type``, or
    LlamaIndex ``MetadataFilters`` over ``time``/``start``/``end`` (``>=``/``>`` set the
    beginning, ``<=``/``<`` the end, ``==`` both).

    Raises
    ------
    ValueError
        Anything else, naming what was given.
    """
    if value is None or isinstance(value, TimeFilter):
        return value
    if isinstance(value, dict):
        unknown = set(value) - {"begin_time", "end_time", "type"}
        if unknown:
            raise ValueError(f"time_filter keys must be begin_time, end_time, type; got {sorted(unknown)}")
        return TimeFilter(**value)
    if type(value).__name__ == "MetadataFilters":
        return _from_metadata_filters(value)
    raise ValueError(f"time_filter must be a TimeFilter, a dict or MetadataFilters, got {type(value).__name__}")


@dataclass
class TemporalQueryBundle(QueryBundle):
    """A ``QueryBundle`` that carries a per-query time filter (already normalised by the retriever)."""

    time_filter: Any = None


class TemporalRetriever(BaseRetriever):
    """Base of chronorag's retrievers: per-query time filters and thread-backed async.

    Subclasses implement ``_retrieve(query_bundle)`` and read the effective filter with
    :meth:`time_filter_for`. A retriever whose filters speak another vocabulary (T-GRAG's
    periods) overrides :meth:`normalize_time_filter`; everything else is shared.
    """

    def __init__(self, *, time_filter: Any = None, **kwargs: Any) -> None:
        self.time_filter = self.normalize_time_filter(time_filter)
        super().__init__(**kwargs)

    def normalize_time_filter(self, value: Any) -> Any:
        """Validate and normalise a time filter (default: :func:`as_time_filter`)."""
        return as_time_filter(value)

    def time_filter_for(self, query_bundle: QueryBundle) -> Any:
        """The per-query filter when the query carries one, else the retriever's own."""
        qf = getattr(query_bundle, "time_filter", None)
        return qf if qf is not None else self.time_filter

    def _bundle(self, query: str | QueryBundle, time_filter: Any) -> QueryBundle:
        tf = self.normalize_time_filter(time_filter)
        if isinstance(query, str):
            if not query.strip():
                raise ValueError("query must be a non-empty string")
            return TemporalQueryBundle(query_str=query, time_filter=tf) if tf is not None else QueryBundle(query)
        if not isinstance(query, QueryBundle):
            raise TypeError(f"query must be a str or QueryBundle, got {type(query).__name__}")
        if tf is None:
            return query
        return TemporalQueryBundle(query_str=query.query_str, custom_embedding_strs=query.custom_embedding_strs,
                                   embedding=query.embedding, time_filter=tf)

    def retrieve(self, str_or_query_bundle: str | QueryBundle, *, time_filter: Any = None) -> list[NodeWithScore]:
        """Retrieve nodes; ``time_filter`` (a :class:`TimeFilter`, dict or ``MetadataFilters``)
        applies to this query only."""
        return super().retrieve(self._bundle(str_or_query_bundle, time_filter))

    async def aretrieve(self, str_or_query_bundle: str | QueryBundle, *,
                        time_filter: Any = None) -> list[NodeWithScore]:
        """Async :meth:`retrieve` (runs in a worker thread, so ``gather`` is concurrent)."""
        return await super().aretrieve(self._bundle(str_or_query_bundle, time_filter))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)
