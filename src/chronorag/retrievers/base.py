"""Conventions shared by chronorag's LlamaIndex retrievers.

- :class:`TimeFilter`: a TempTool-style window (``begin_time``, ``end_time``, ``type``),
  validated once; built from keyword arguments, a dict, or LlamaIndex ``MetadataFilters``
  on the ``time``/``start``/``end`` fields.
- Per-query filters: ``retriever.retrieve("...", time_filter=...)`` (and ``aretrieve``)
  replace, for that query, the filter given at construction (``time_filter=`` or
  ``filters=``); the query travels as a
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

from chronorag.errors import ArgumentTypeError, ConfigError
from chronorag.graphs.time import FILTER_TYPES, parse_time

__all__ = ["TemporalPGRetrieverMixin", "TemporalQueryBundle", "TemporalRetriever", "TimeFilter", "as_time_filter"]

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
            raise ConfigError(f"time filter type must be one of {list(FILTER_TYPES)}, got {self.type!r}")
        b, e = parse_time(self.begin_time), parse_time(self.end_time)  # raises TimeParseError
        empty = b.lo >= e.hi if self.type in ("in/on", "between") and not (b.is_inf or e.is_inf) else b.lo > e.hi
        if empty:
            from chronorag.errors import IntervalOrderError

            raise IntervalOrderError(f"time filter begins after it ends (begin_time={self.begin_time!r}, "
                                     f"end_time={self.end_time!r}): nothing can pass; swap or widen them")

    @property
    def is_open(self) -> bool:
        """True when the filter keeps everything."""
        return self.begin_time == "-inf" and self.end_time == "inf" and self.type in ("in/on", "between")

    def as_kwargs(self) -> dict[str, str]:
        """``{"begin_time", "end_time", "type"}`` for the store's ``filter_time``."""
        return {"begin_time": self.begin_time, "end_time": self.end_time, "type": self.type}


_TIME_KEYS = ("time", "start", "end", "date")


def _op(op: Any) -> str:
    return str(getattr(op, "value", op))


def _next_unit(value: str) -> str:
    """The unit right after ``value`` at its own granularity (``"2014-06"`` -> ``"2014-07"``)."""
    from chronorag.graphs.time import minutes_to_iso

    tp = parse_time(value)
    if tp.is_inf:
        raise ConfigError(f"a strict '>' bound needs a finite time, got {value!r}")
    return minutes_to_iso(tp.hi, tp.granularity)


def _previous_unit(value: str) -> str:
    """The unit right before ``value`` at its own granularity (``"2014-06"`` -> ``"2014-05"``)."""
    from chronorag.graphs.time import minutes_to_iso

    tp = parse_time(value)
    if tp.is_inf or tp.lo <= 0:
        raise ConfigError(f"a strict '<' bound needs a finite time after year 1, got {value!r}")
    return minutes_to_iso(tp.lo - 1, tp.granularity)


def _from_metadata_filters(filters: Any) -> TimeFilter:
    """``MetadataFilters`` on the time fields -> one window (every bound intersected).

    ``>= V`` / ``<= V`` include the whole unit ``V`` (a month, a day...); ``> V`` / ``< V``
    exclude it: ``< "2014-06"`` ends the window with May 2014, ``> "2014-06"`` starts it
    with July 2014, at whatever granularity ``V`` is written.
    """
    from llama_index.core.vector_stores.types import FilterCondition

    if getattr(filters, "condition", FilterCondition.AND) not in (FilterCondition.AND, "and"):
        raise ConfigError("only AND-combined MetadataFilters can be used as a time filter")
    begin, end = "-inf", "inf"

    def later(a: str, b: str) -> str:
        return a if parse_time(a).lo >= parse_time(b).lo else b

    def earlier(a: str, b: str) -> str:
        return a if parse_time(a).hi <= parse_time(b).hi else b

    for f in filters.filters:
        if not hasattr(f, "key"):
            raise ConfigError("nested MetadataFilters are not supported as a time filter")
        if f.key not in _TIME_KEYS:
            raise ConfigError(f"MetadataFilter on {f.key!r} is not a time field; use 'time', 'start' or 'end'")
        v, op = str(f.value), _op(f.operator)
        parse_time(v)  # raises TimeParseError naming the value
        if op == ">=":
            begin = later(begin, v)
        elif op == ">":
            begin = later(begin, _next_unit(v))
        elif op == "<=":
            end = earlier(end, v)
        elif op == "<":
            end = earlier(end, _previous_unit(v))
        elif op == "==":
            begin, end = later(begin, v), earlier(end, v)
        else:
            raise ConfigError(f"MetadataFilter operator {op!r} on {f.key!r} is not supported as a time "
                             f"filter; use ==, >=, >, <= or <")
    return TimeFilter(begin_time=begin, end_time=end, type="in/on")


def as_time_filter(value: Any) -> TimeFilter | None:
    """Normalise ``value`` to a :class:`TimeFilter` (``None`` stays ``None``).

    This is the one definition of chronorag's time-filter contract; every retriever
    normalises through it.

    Accepts a :class:`TimeFilter`, a dict with ``begin_time``/``end_time``/``type``, or
    LlamaIndex ``MetadataFilters`` over ``time``/``start``/``end``/``date`` (AND-combined;
    several bounds intersect).

    Boundaries, at the granularity the bound is written in (year, month, day, hour, minute):

    - ``>= V`` and ``<= V`` include ``V``: ``start <= "2014-06"`` keeps June 2014.
    - ``> V`` and ``< V`` exclude ``V``: ``start < "2014-06"`` keeps events up to
      31 May 2014, ``start > "2014-06"`` events from 1 July 2014.
    - ``== V`` keeps events in/on ``V``.
    - The TempTool types say the same in a :class:`TimeFilter` or dict:
      ``type="before"`` with ``end_time=V`` excludes ``V`` (like ``< V``), ``type="after"``
      with ``begin_time=V`` excludes it (like ``> V``), ``"in/on"``/``"between"`` include
      both bounds.

    Examples
    --------
    >>> from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters
    >>> as_time_filter(MetadataFilters(filters=[MetadataFilter(key="start", value="2014-06", operator="<")]))
    TimeFilter(begin_time='-inf', end_time='2014-05', type='in/on')

    Raises
    ------
    ConfigError
        Anything else (a ``ValueError``), naming what was given.
    TimeParseError
        A bound that is not a time.
    IntervalOrderError
        Bounds that leave an empty window.
    """
    if value is None or isinstance(value, TimeFilter):
        return value
    if isinstance(value, dict):
        unknown = set(value) - {"begin_time", "end_time", "type"}
        if unknown:
            raise ConfigError(f"time_filter keys must be begin_time, end_time, type; got {sorted(unknown)}")
        return TimeFilter(**value)
    if type(value).__name__ == "MetadataFilters":
        return _from_metadata_filters(value)
    raise ConfigError(f"time_filter must be a TimeFilter, a dict or MetadataFilters, got {type(value).__name__}")


@dataclass
class TemporalQueryBundle(QueryBundle):
    """A ``QueryBundle`` that carries a per-query time filter (already normalised by the retriever)."""

    time_filter: Any = None


class TemporalRetriever(BaseRetriever):
    """Base of chronorag's retrievers: per-query time filters and thread-backed async.

    The time-filter contract, the same on every chronorag retriever:

    - ``time_filter=`` (or ``filters=``, as on LlamaIndex's ``VectorIndexRetriever``) at
      construction takes a :class:`TimeFilter`, a dict or ``MetadataFilters`` and is the
      default for every query;
    - ``retrieve(q, time_filter=...)`` / ``aretrieve`` take the same three forms for one
      query, and the per-query filter **replaces** the construction filter for that
      query (it does not intersect with it); the construction filter applies again to
      the next query;
    - boundaries follow :func:`as_time_filter` (strict ``<``/``>`` exclude their unit).

    Subclasses implement ``_retrieve(query_bundle)`` and read the effective filter with
    :meth:`time_filter_for`. A retriever whose filters speak another vocabulary (T-GRAG's
    periods) overrides :meth:`normalize_time_filter`; everything else is shared.
    """

    def __init__(self, *, time_filter: Any = None, filters: Any = None, **kwargs: Any) -> None:
        if filters is not None:
            if time_filter is not None:
                raise ConfigError("give either filters= or time_filter=, not both (they are the same setting)")
            time_filter = filters
        self.time_filter = self.normalize_time_filter(time_filter)
        super().__init__(**kwargs)

    @property
    def filters(self) -> Any:
        """The construction-time filter (``VectorIndexRetriever``'s name for it)."""
        return self.time_filter

    def normalize_time_filter(self, value: Any) -> Any:
        """Validate and normalise a time filter (default: :func:`as_time_filter`)."""
        return as_time_filter(value)

    def time_filter_for(self, query_bundle: QueryBundle) -> Any:
        """The per-query filter when the query carries one (normalised), else the retriever's own."""
        qf = getattr(query_bundle, "time_filter", None)
        return self.normalize_time_filter(qf) if qf is not None else self.time_filter

    def _bundle(self, query: str | QueryBundle, time_filter: Any) -> QueryBundle:
        tf = self.normalize_time_filter(time_filter)
        if isinstance(query, str):
            if not query.strip():
                raise ConfigError("query must be a non-empty string")
            return TemporalQueryBundle(query_str=query, time_filter=tf) if tf is not None else QueryBundle(query)
        if not isinstance(query, QueryBundle):
            raise ArgumentTypeError(f"query must be a str or QueryBundle, got {type(query).__name__}")
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


class TemporalPGRetrieverMixin:
    """The time-filter contract for ``CustomPGRetriever`` subclasses that wrap a :class:`TemporalRetriever`.

    Mix it in *before* ``CustomPGRetriever`` and set ``self._temporal`` in ``init``. Then:

    - ``retrieve(q, time_filter=...)`` / ``aretrieve`` take a per-query filter, as every
      chronorag retriever does (``time_filter=``/``filters=`` at construction go to the
      wrapped retriever through ``init``'s keyword arguments);
    - a :class:`TemporalQueryBundle` handed down by an outer ``PGRetriever`` keeps its filter;
    - the retrieval runs through the wrapped retriever's ``_retrieve``, not its
      ``retrieve``, so LlamaIndex instrumentation and callbacks see **one** retrieval event
      per query (the one ``BaseRetriever.retrieve`` of this sub-retriever, or of the
      outer ``PGRetriever``, emits).
    """

    _temporal: TemporalRetriever

    @property
    def time_filter(self) -> Any:
        """The wrapped retriever's construction-time filter."""
        return self._temporal.time_filter

    @property
    def similarity_top_k(self) -> int:
        """Nodes returned per query (the wrapped retriever's ``similarity_top_k``)."""
        return int(self._temporal.similarity_top_k)  # type: ignore[attr-defined]

    def retrieve(self, str_or_query_bundle: str | QueryBundle, *, time_filter: Any = None) -> list[NodeWithScore]:
        """Retrieve nodes; ``time_filter`` applies to this query only."""
        return super().retrieve(self._temporal._bundle(str_or_query_bundle, time_filter))  # type: ignore[misc]

    async def aretrieve(self, str_or_query_bundle: str | QueryBundle, *,
                        time_filter: Any = None) -> list[NodeWithScore]:
        """Async :meth:`retrieve` (the work runs in a worker thread)."""
        return await super().aretrieve(self._temporal._bundle(str_or_query_bundle, time_filter))  # type: ignore[misc]

    def custom_retrieve(self, query_str: str) -> list[NodeWithScore]:
        return self._temporal._retrieve(QueryBundle(query_str))

    async def acustom_retrieve(self, query_str: str) -> list[NodeWithScore]:
        return await asyncio.to_thread(self.custom_retrieve, query_str)

    def retrieve_from_graph(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._temporal._retrieve(query_bundle)

    async def aretrieve_from_graph(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._temporal._retrieve, query_bundle)
