"""Columnar temporal event store.

Events are ``(subject, relation, object, start, end)`` with optional source text and
attributes. Names are interned in integer vocabularies; every column is a NumPy
array, so the store for ICEWS05-15 (461K events) takes a few tens of MB and the
design scales to tens of millions of events (``int32`` ids, ``int64`` minute times).

Indexes (sorted permutations searched with ``numpy.searchsorted``, O(log n) per
lookup): by subject, object, relation, (subject, relation), (relation, object), and
by start time for range queries.
"""

from __future__ import annotations

import array
import difflib
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chronorag.errors import (
    ArgumentTypeError,
    ConfigError,
    DataFormatError,
    IndexFormatError,
    OutOfRangeError,
    UnknownNameError,
)
from chronorag.graphs.persist import write_index, write_json
from chronorag.graphs.time import (
    POS_INF,
    Granularity,
    TimeInterval,
    TimePoint,
    minutes_to_iso,
    parse_time,
    temporal_mask,
)
from chronorag.graphs.verbalize import verbalize_event

__all__ = ["Event", "EventStoreBuilder", "LoadReport", "TemporalEventStore"]

STORE_FORMAT_VERSION = 1
#: The six sorted indexes, saved as ``sidx_<name>.npy`` (see :meth:`TemporalEventStore.write`).
SORTED_INDEX_NAMES = ("s", "o", "r", "sr", "ro", "t")
_COLUMNS = ("subject", "relation", "object", "t_lo", "t_hi", "g_start", "g_end")


@dataclass(frozen=True)
class Event:
    """One event, as returned by :meth:`TemporalEventStore.event`."""

    id: int
    subject: str
    relation: str
    object: str
    start: str
    end: str
    text: str | None = None
    attrs: Mapping[str, Any] | None = None

    @property
    def time(self) -> str:
        """``"2010-08-30"`` for a point event, ``"start/end"`` for an interval."""
        return self.start if self.start == self.end else f"{self.start}/{self.end}"

    def verbalize(self, *, with_time: bool = True) -> str:
        """The event as a sentence (see :func:`chronorag.graphs.verbalize.verbalize_event`)."""
        return verbalize_event(
            self.subject, self.relation, self.object, self.time if with_time else None
        )


@dataclass
class LoadReport:
    """What a loader read: events kept, malformed lines skipped, and a few examples."""

    path: str = ""
    n_lines: int = 0
    n_events: int = 0
    n_skipped: int = 0
    examples: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        s = f"{self.path}: {self.n_events} events from {self.n_lines} lines"
        if self.n_skipped:
            s += f", {self.n_skipped} malformed lines skipped (e.g. {self.examples[0]})"
        return s


class _Vocab:
    """Name <-> id interning."""

    __slots__ = ("ids", "names")

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.names: list[str] = list(names)
        self.ids: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        if len(self.ids) != len(self.names):
            raise IndexFormatError("vocabulary has duplicate names")

    def add(self, name: str) -> int:
        i = self.ids.get(name)
        if i is None:
            i = len(self.names)
            self.ids[name] = i
            self.names.append(name)
        return i


class EventStoreBuilder:
    """Accumulates events, then :meth:`build` freezes them into a store.

    Columns are kept in compact ``array.array`` buffers while adding, so building
    10M events does not hold 10M Python tuples.

    Examples
    --------
    >>> b = EventStoreBuilder()
    >>> b.add("ECB", "Criticize or denounce", "Romania", "2010-08-30")
    0
    >>> store = b.build()
    """

    def __init__(self) -> None:
        self._ent = _Vocab()
        self._rel = _Vocab()
        self._s = array.array("i")
        self._r = array.array("i")
        self._o = array.array("i")
        self._lo = array.array("q")
        self._hi = array.array("q")
        self._gs = array.array("b")
        self._ge = array.array("b")
        self._texts: list[str | None] | None = None
        self._attrs: list[str | None] | None = None
        self._time_cache: dict[str, TimePoint] = {}

    def __len__(self) -> int:
        return len(self._s)

    def _time(self, value: Any) -> TimePoint:
        if isinstance(value, str):
            tp = self._time_cache.get(value)
            if tp is None:
                tp = parse_time(value)
                self._time_cache[value] = tp
            return tp
        return parse_time(value)

    def add(
        self,
        subject: str,
        relation: str,
        object: str,
        start: str | TimePoint,
        end: str | TimePoint | None = None,
        *,
        text: str | None = None,
        attrs: Mapping[str, Any] | None = None,
    ) -> int:
        """Add one event and return its id.

        Parameters
        ----------
        subject, relation, object : str
            Non-empty names, stored byte-exact.
        start : str or TimePoint
            When it happened (or began); any form :func:`~chronorag.graphs.time.parse_time` takes.
        end : str or TimePoint, optional
            When it ended (``"inf"`` for ongoing); defaults to ``start``.
        text : str, optional
            Source text the event came from.
        attrs : mapping, optional
            JSON-serialisable attributes.

        Raises
        ------
        ValueError
            For an empty name, an unparsable time, ``start`` after ``end``, or
            attributes that are not JSON-serialisable.
        """
        for name, value in (("subject", subject), ("relation", relation), ("object", object)):
            if not isinstance(value, str) or not value.strip():
                raise DataFormatError(f"event {name} must be a non-empty string, got {value!r}")
        s = self._time(start)
        e = s if end is None or end == start else self._time(end)
        if s.is_inf and s.lo > 0:
            raise DataFormatError(f"event start cannot be 'inf': {start!r}")
        if s.is_inf and e.is_inf and e.hi <= s.lo:
            raise DataFormatError(
                f"an event at {start!r} with no later end covers no time and could never be "
                "found; give an end time (e.g. start '-inf', end '2010-01-01' for 'until 2010')")
        TimeInterval(s, e)  # validates order
        attrs_json = None
        if attrs is not None:
            if not isinstance(attrs, Mapping):
                raise DataFormatError(f"event attrs must be a mapping, got {type(attrs).__name__}")
            try:
                attrs_json = json.dumps(dict(attrs), ensure_ascii=False, sort_keys=True)
            except TypeError as exc:
                raise DataFormatError(f"event attrs are not JSON-serialisable: {exc}") from None
        if text is not None and not isinstance(text, str):
            raise DataFormatError(f"event text must be a string, got {type(text).__name__}")
        n = len(self._s)
        self._s.append(self._ent.add(subject))
        self._r.append(self._rel.add(relation))
        self._o.append(self._ent.add(object))
        self._lo.append(s.lo)
        self._hi.append(e.hi)
        self._gs.append(int(s.granularity))
        self._ge.append(int(e.granularity))
        if text is not None and self._texts is None:
            self._texts = [None] * n
        if self._texts is not None:
            self._texts.append(text)
        if attrs_json is not None and self._attrs is None:
            self._attrs = [None] * n
        if self._attrs is not None:
            self._attrs.append(attrs_json)
        return n

    def build(self) -> TemporalEventStore:
        """Freeze the events into a :class:`TemporalEventStore` (indexes built)."""
        return TemporalEventStore(
            entities=self._ent.names,
            relations=self._rel.names,
            subject=np.frombuffer(self._s, dtype=np.int32).copy(),
            relation=np.frombuffer(self._r, dtype=np.int32).copy(),
            object=np.frombuffer(self._o, dtype=np.int32).copy(),
            t_lo=np.frombuffer(self._lo, dtype=np.int64).copy(),
            t_hi=np.frombuffer(self._hi, dtype=np.int64).copy(),
            g_start=np.frombuffer(self._gs, dtype=np.int8).copy(),
            g_end=np.frombuffer(self._ge, dtype=np.int8).copy(),
            texts=self._texts,
            attrs=self._attrs,
        )


class _SortedIndex:
    """A permutation sorting one int64 key column, for range lookups."""

    __slots__ = ("keys", "order")

    def __init__(self, keys: np.ndarray) -> None:
        self.order = np.argsort(keys, kind="stable").astype(np.int64)
        self.keys = keys[self.order]

    @classmethod
    def from_array(cls, both: np.ndarray) -> _SortedIndex:
        """An index from a saved ``(2, n)`` array (row 0 the order, row 1 the sorted keys),
        typically memory-mapped: no copy is made."""
        obj = cls.__new__(cls)
        obj.order, obj.keys = both[0], both[1]
        return obj

    def as_array(self) -> np.ndarray:
        """The ``(2, n)`` int64 array :meth:`from_array` reads."""
        return np.stack([self.order, self.keys.astype(np.int64)])

    def lookup(self, key: int) -> np.ndarray:
        a = np.searchsorted(self.keys, key, side="left")
        b = np.searchsorted(self.keys, key, side="right")
        return self.order[a:b]

    def range(self, lo: int, hi: int) -> np.ndarray:
        """Ids whose key is in ``[lo, hi)``, in key order."""
        a = np.searchsorted(self.keys, lo, side="left")
        b = np.searchsorted(self.keys, hi, side="left")
        return self.order[a:b]


class TemporalEventStore:
    """An immutable columnar store of temporal events with lookup indexes.

    Build one with :class:`EventStoreBuilder`, :func:`chronorag.graphs.io.read_events`,
    or :meth:`load` from an index directory. Event ids are ``0..len(store)-1``.
    """

    def __init__(
        self,
        *,
        entities: list[str],
        relations: list[str],
        subject: np.ndarray,
        relation: np.ndarray,
        object: np.ndarray,
        t_lo: np.ndarray,
        t_hi: np.ndarray,
        g_start: np.ndarray,
        g_end: np.ndarray,
        texts: list[str | None] | None = None,
        attrs: list[str | None] | None = None,
        sorted_indexes: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        n = len(subject)
        for name, col in (("relation", relation), ("object", object), ("t_lo", t_lo),
                          ("t_hi", t_hi), ("g_start", g_start), ("g_end", g_end)):
            if len(col) != n:
                raise IndexFormatError(f"column {name} has {len(col)} rows, expected {n}")
        for name, lines in (("texts", texts), ("attrs", attrs)):
            if lines is not None and len(lines) != n:
                raise IndexFormatError(f"column {name} has {len(lines)} rows, expected {n}")
        self._ent = _Vocab(entities)
        self._rel = _Vocab(relations)
        self.subject = subject
        self.relation = relation
        self.object = object
        self.t_lo = t_lo
        self.t_hi = t_hi
        self.g_start = g_start
        self.g_end = g_end
        self._texts = texts
        self._attrs = attrs
        self.load_report: LoadReport | None = None
        self._build_indexes(sorted_indexes)

    # ------------------------------------------------------------------ indexes
    def _build_indexes(self, saved: Mapping[str, np.ndarray] | None = None) -> None:
        if saved is not None:
            n = len(self.subject)
            for name in SORTED_INDEX_NAMES:
                a = saved.get(name)
                if a is None or a.shape != (2, n) or a.dtype != np.int64:
                    raise IndexFormatError(f"sorted index {name!r} is missing or has shape "
                                           f"{getattr(a, 'shape', None)} for {n} events")
                setattr(self, f"_by_{name}", _SortedIndex.from_array(a))
            self._set_time_bounds()
            return
        n_rel = max(len(self._rel.names), 1)
        n_ent = max(len(self._ent.names), 1)
        s = self.subject.astype(np.int64)
        r = self.relation.astype(np.int64)
        o = self.object.astype(np.int64)
        self._by_s = _SortedIndex(s)
        self._by_o = _SortedIndex(o)
        self._by_r = _SortedIndex(r)
        self._by_sr = _SortedIndex(s * n_rel + r)
        self._by_ro = _SortedIndex(r * n_ent + o)
        self._by_t = _SortedIndex(self.t_lo)
        self._set_time_bounds()

    def _set_time_bounds(self) -> None:
        finite = self.t_hi < POS_INF
        dur = (self.t_hi[finite] - self.t_lo[finite]) if finite.any() else np.zeros(1, np.int64)
        self._max_dur = int(dur.max()) if len(dur) else 0
        self._has_open_end = bool((~finite).any())

    # --------------------------------------------------------------- basic info
    def __len__(self) -> int:
        return len(self.subject)

    def __repr__(self) -> str:
        return (
            f"TemporalEventStore({len(self)} events, {len(self._ent.names)} entities, "
            f"{len(self._rel.names)} relations)"
        )

    @property
    def entities(self) -> list[str]:
        """Entity names; an entity's id is its position."""
        return self._ent.names

    @property
    def relations(self) -> list[str]:
        """Relation names; a relation's id is its position."""
        return self._rel.names

    @property
    def has_texts(self) -> bool:
        """True when some event carries source text."""
        return self._texts is not None

    def _lookup(self, vocab: _Vocab, name: str, kind: str) -> int:
        if not isinstance(name, str):
            raise UnknownNameError(f"{kind} name must be a string, got {type(name).__name__}")
        i = vocab.ids.get(name)
        if i is None:
            close = difflib.get_close_matches(name, vocab.names, n=3, cutoff=0.6)
            hint = f"; did you mean {close}?" if close else ""
            raise UnknownNameError(f"unknown {kind} {name!r}{hint}")
        return i

    def entity_id(self, name: str) -> int:
        """Id of an entity name (exact, byte-for-byte).

        Raises
        ------
        UnknownNameError
            With close matches when the name is unknown.
        """
        return self._lookup(self._ent, name, "entity")

    def relation_id(self, name: str) -> int:
        """Id of a relation name (exact). Raises :class:`UnknownNameError` when unknown."""
        return self._lookup(self._rel, name, "relation")

    def _check_ids(self, ids: Any) -> np.ndarray:
        arr = np.asarray(ids, dtype=np.int64).reshape(-1)
        if arr.size and (arr.min() < 0 or arr.max() >= len(self)):
            bad = arr[(arr < 0) | (arr >= len(self))][0]
            raise OutOfRangeError(f"event id {int(bad)} out of range 0..{len(self) - 1}")
        return arr

    # ------------------------------------------------------------------ events
    def start_text(self, i: int) -> str:
        """Start time of event ``i`` as text at its granularity."""
        return minutes_to_iso(int(self.t_lo[i]), Granularity(int(self.g_start[i])))

    def end_text(self, i: int) -> str:
        """End time of event ``i`` as text at its granularity (``"inf"`` when open)."""
        hi = int(self.t_hi[i])
        if hi >= POS_INF:
            return "inf"
        return minutes_to_iso(hi - 1, Granularity(int(self.g_end[i])))

    def time_text(self, i: int) -> str:
        """``"2010-08-30"`` for a point event, ``"start/end"`` for an interval."""
        s, e = self.start_text(i), self.end_text(i)
        return s if s == e else f"{s}/{e}"

    def event(self, i: int) -> Event:
        """The event with id ``i``.

        Raises
        ------
        IndexError
            When ``i`` is not an event id.
        """
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise ArgumentTypeError(f"event id must be an int, got {type(i).__name__}")
        if not 0 <= int(i) < len(self):
            raise OutOfRangeError(f"event id {i} out of range 0..{len(self) - 1}")
        i = int(i)
        attrs = None
        raw = self._attrs[i] if self._attrs is not None else None
        if raw is not None:
            attrs = json.loads(raw)
        return Event(
            id=i,
            subject=self._ent.names[self.subject[i]],
            relation=self._rel.names[self.relation[i]],
            object=self._ent.names[self.object[i]],
            start=self.start_text(i),
            end=self.end_text(i),
            text=None if self._texts is None else self._texts[i],
            attrs=attrs,
        )

    def events(self, ids: Iterable[int]) -> list[Event]:
        """The events with the given ids, in that order."""
        return [self.event(int(i)) for i in self._check_ids(list(ids))]

    def __iter__(self) -> Iterator[Event]:
        for i in range(len(self)):
            yield self.event(i)

    def verbalize(self, i: int, *, with_time: bool = True) -> str:
        """Event ``i`` as a sentence (see :func:`~chronorag.graphs.verbalize.verbalize_event`)."""
        return self.event(i).verbalize(with_time=with_time)

    # ----------------------------------------------------------------- queries
    def find(
        self,
        *,
        subject: str | None = None,
        relation: str | None = None,
        object: str | None = None,
    ) -> np.ndarray:
        """Ids of events matching the given names (any subset), in id order.

        Uses the (subject, relation) or (relation, object) composite index when two
        names are given, else the single-column index; all lookups are binary searches.

        Raises
        ------
        UnknownNameError
            For a name not in the store.
        """
        s = None if subject is None else self.entity_id(subject)
        r = None if relation is None else self.relation_id(relation)
        o = None if object is None else self.entity_id(object)
        n_rel, n_ent = max(len(self._rel.names), 1), max(len(self._ent.names), 1)
        if s is not None and r is not None:
            ids = self._by_sr.lookup(s * n_rel + r)
            if o is not None:
                ids = ids[self.object[ids] == o]
        elif r is not None and o is not None:
            ids = self._by_ro.lookup(r * n_ent + o)
        elif s is not None:
            ids = self._by_s.lookup(s)
            if o is not None:
                ids = ids[self.object[ids] == o]
        elif o is not None:
            ids = self._by_o.lookup(o)
        elif r is not None:
            ids = self._by_r.lookup(r)
        else:
            ids = np.arange(len(self), dtype=np.int64)
        return np.sort(ids)

    def relations_of(self, *, subject: str | None = None, object: str | None = None) -> np.ndarray:
        """Sorted distinct relation ids of the events with this subject and/or object.

        What the TempTool relation aligner asks ("which relations does this entity take
        part in"); a database-backed store answers it without returning the events.

        Raises
        ------
        UnknownNameError
            For a name not in the store.
        ValueError
            When neither ``subject`` nor ``object`` is given.
        """
        if subject is None and object is None:
            raise ConfigError("relations_of needs subject, object or both")
        return np.unique(np.asarray(self.relation[self.find(subject=subject, object=object)], dtype=np.int64))

    def time_range(self, begin_time: str | TimePoint, end_time: str | TimePoint) -> np.ndarray:
        """Ids of events overlapping the window from ``begin_time`` to ``end_time``, by start time.

        Raises
        ------
        TimeParseError, IntervalOrderError
            For a bad bound or a window whose begin lies after its end.
        """
        w = TimeInterval(parse_time(begin_time), parse_time(end_time))
        if self._has_open_end:
            cand = self._by_t.range(-(2**63), w.hi)
        else:
            cand = self._by_t.range(max(w.lo - self._max_dur, -(2**63)), w.hi)
        return cand[self.t_hi[cand] > w.lo]

    def filter_time(
        self,
        ids: np.ndarray,
        *,
        begin_time: str | TimePoint = "-inf",
        end_time: str | TimePoint = "inf",
        type: str = "in/on",
    ) -> np.ndarray:
        """Keep the events of ``ids`` that pass a TempTool filter (see :func:`~chronorag.graphs.time.temporal_mask`)."""
        ids = self._check_ids(ids)
        mask = temporal_mask(self.t_lo[ids], self.t_hi[ids], begin_time, end_time, type)
        return ids[mask]

    def query(
        self,
        *,
        subject: str | None = None,
        relation: str | None = None,
        object: str | None = None,
        begin_time: str | TimePoint = "-inf",
        end_time: str | TimePoint = "inf",
        type: str = "in/on",
    ) -> np.ndarray:
        """Ids of events matching names and a temporal filter, sorted by (start, id)."""
        ids = self.find(subject=subject, relation=relation, object=object)
        ids = self.filter_time(ids, begin_time=begin_time, end_time=end_time, type=type)
        return self.sort_by_time(ids)

    def sort_by_time(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` sorted by start time, then id."""
        ids = self._check_ids(ids)
        return ids[np.lexsort((ids, self.t_lo[ids]))]

    def triple_ids(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct (subject, relation, object) triples.

        Returns
        -------
        first : numpy.ndarray
            For each distinct triple, the id of its first event.
        inverse : numpy.ndarray
            For each event, the index of its triple in ``first``.
        """
        n_rel, n_ent = max(len(self._rel.names), 1), max(len(self._ent.names), 1)
        key = (self.subject.astype(np.int64) * n_rel + self.relation) * n_ent + self.object
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        return first.astype(np.int64), inverse.astype(np.int64)

    def concat(self, other: TemporalEventStore) -> TemporalEventStore:
        """A new store with ``other``'s events appended after this one's.

        Ids of this store's events, entities and relations are unchanged; ``other``'s
        names are mapped into the extended vocabularies. Used for incremental updates.
        """
        if not isinstance(other, TemporalEventStore):
            raise ArgumentTypeError(f"can only concat a TemporalEventStore, got {type(other).__name__}")
        ent, rel = _Vocab(self.entities), _Vocab(self.relations)
        emap = np.array([ent.add(n) for n in other.entities], dtype=np.int32)
        rmap = np.array([rel.add(n) for n in other.relations], dtype=np.int32)
        n0, n1 = len(self), len(other)

        def col(mine: list[str | None] | None, theirs: list[str | None] | None) -> list[str | None] | None:
            if mine is None and theirs is None:
                return None
            head: list[str | None] = list(mine) if mine is not None else [None] * n0
            tail: list[str | None] = list(theirs) if theirs is not None else [None] * n1
            return head + tail

        return TemporalEventStore(
            entities=ent.names, relations=rel.names,
            subject=np.concatenate([self.subject, emap[other.subject] if n1 else other.subject]),
            relation=np.concatenate([self.relation, rmap[other.relation] if n1 else other.relation]),
            object=np.concatenate([self.object, emap[other.object] if n1 else other.object]),
            t_lo=np.concatenate([self.t_lo, other.t_lo]), t_hi=np.concatenate([self.t_hi, other.t_hi]),
            g_start=np.concatenate([self.g_start, other.g_start]),
            g_end=np.concatenate([self.g_end, other.g_end]),
            texts=col(self._texts, other._texts), attrs=col(self._attrs, other._attrs),
        )

    def subset(self, ids: np.ndarray) -> TemporalEventStore:
        """A new store holding only the events ``ids`` (in that order; vocabularies kept whole)."""
        ids = self._check_ids(ids)
        def pick(c: list[str | None] | None) -> list[str | None] | None:
            return None if c is None else [c[int(i)] for i in ids]

        return TemporalEventStore(
            entities=list(self.entities), relations=list(self.relations),
            subject=self.subject[ids], relation=self.relation[ids], object=self.object[ids],
            t_lo=self.t_lo[ids], t_hi=self.t_hi[ids], g_start=self.g_start[ids], g_end=self.g_end[ids],
            texts=pick(self._texts), attrs=pick(self._attrs),
        )

    # ------------------------------------------------------------- persistence
    def write(self, directory: str | os.PathLike[str]) -> None:
        """Write the store's files into an existing directory (not atomic; see :meth:`save`)."""
        d = Path(directory)
        if not d.is_dir():
            raise NotADirectoryError(f"not a directory: {d}")
        np.savez(
            d / "events.npz",
            subject=self.subject, relation=self.relation, object=self.object,
            t_lo=self.t_lo, t_hi=self.t_hi, g_start=self.g_start, g_end=self.g_end,
        )
        # the same columns and the six sorted indexes as plain .npy files, which load()
        # memory-maps: N workers on one index share one page-cached copy
        for name in _COLUMNS:
            np.save(d / f"ev_{name}.npy", np.ascontiguousarray(getattr(self, name)))
        for name in SORTED_INDEX_NAMES:
            np.save(d / f"sidx_{name}.npy", getattr(self, f"_by_{name}").as_array())
        write_json(d / "vocab.json", {"entities": self.entities, "relations": self.relations})
        for name, col in (("texts", self._texts), ("attrs", self._attrs)):
            if col is not None:
                with open(d / f"{name}.jsonl", "w", encoding="utf-8") as fh:
                    fh.writelines(json.dumps(v, ensure_ascii=False) + "\n" for v in col)
        write_json(
            d / "store.json",
            {"format": STORE_FORMAT_VERSION, "n_events": len(self),
             "n_entities": len(self.entities), "n_relations": len(self.relations),
             "fingerprint": self.fingerprint()},
        )

    def fingerprint(self) -> str:
        """A digest of the events and vocabularies (not texts/attrs), stable across saves.

        Files derived from a store (triples, vectors, a rule graph) record it at build
        time, so a loader can tell a file built from another store.
        """
        fp = getattr(self, "_fingerprint", None)
        if fp is None:
            h = hashlib.blake2b(digest_size=16)
            for col in (self.subject, self.relation, self.object, self.t_lo, self.t_hi,
                        self.g_start, self.g_end):
                h.update(np.ascontiguousarray(col).tobytes())
                h.update(b"|")
            h.update(json.dumps([self.entities, self.relations], ensure_ascii=False).encode("utf-8"))
            fp = self._fingerprint = h.hexdigest()
        return fp

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write an index directory holding only this store, through :func:`~chronorag.graphs.persist.write_index`.

        Atomic and crash-safe; refuses a non-empty directory that is not a chronorag index.
        """
        with write_index(directory) as tmp:
            self.write(tmp)

    @classmethod
    def load(cls, directory: str | os.PathLike[str] | Any, *, mmap: bool = True) -> TemporalEventStore:
        """Load a store written by :meth:`write`/:meth:`save`.

        ``directory`` is an index directory, or an opened
        :class:`~chronorag.graphs.index_files.IndexFiles` (one version, fingerprint-checked).
        With ``mmap`` (default) and an index that has them, the columns (``ev_*.npy``) and
        the six sorted indexes (``sidx_*.npy``) are memory-mapped read-only: nothing is
        sorted at load, and every process on the same index shares one copy in the page
        cache. Indexes written before these files existed are read from ``events.npz``
        and their sorted indexes rebuilt, as before.

        Raises
        ------
        IndexFormatError
            When files are missing, damaged, of another format version, or from another store.
        """
        from chronorag.graphs.index_files import IndexFiles

        files = IndexFiles.open(directory)
        shown = files.shown
        if not files.has("store.json"):
            raise IndexFormatError(f"{shown} is not a chronorag event store (no store.json); build one "
                                   f"with `chronorag ingest KG --out {shown}`")
        meta = files.json("store.json")
        if not isinstance(meta, dict) or meta.get("format") != STORE_FORMAT_VERSION:
            fmt = meta.get("format") if isinstance(meta, dict) else None
            raise IndexFormatError(
                f"{shown}: store format {fmt!r}, this chronorag reads {STORE_FORMAT_VERSION}; rebuild it "
                f"with `chronorag ingest KG --out {shown}`"
            )
        saved = None
        if mmap and all(files.has(f"ev_{c}.npy") for c in _COLUMNS) and all(
                files.has(f"sidx_{c}.npy") for c in SORTED_INDEX_NAMES):
            cols = {c: files.npy_mapped(f"ev_{c}.npy", ndim=1) for c in _COLUMNS}
            saved = {c: files.npy_mapped(f"sidx_{c}.npy", ndim=2) for c in SORTED_INDEX_NAMES}
            if files.has("events.npz"):  # kept for mmap=False loads: damage there is found now too
                files.check("events.npz")
        else:
            cols = files.npz("events.npz", keys=_COLUMNS)
        vocab = files.json("vocab.json")
        extra: dict[str, list[str | None] | None] = {}
        for name in ("texts", "attrs"):
            extra[name] = files.jsonl(f"{name}.jsonl") if files.has(f"{name}.jsonl") else None
        try:
            store = cls(entities=vocab["entities"], relations=vocab["relations"], **cols,
                        texts=extra["texts"], attrs=extra["attrs"], sorted_indexes=saved)
        except (IndexFormatError, KeyError, TypeError, ValueError, IndexError) as exc:
            raise IndexFormatError(f"{shown}: events.npz, vocab.json and store.json do not match "
                                   f"({exc}); rebuild the index: `chronorag ingest KG --out {shown}`") from None
        if len(store) != meta.get("n_events"):
            raise IndexFormatError(f"{shown}: {len(store)} events read, store.json says {meta.get('n_events')}; "
                                   f"rebuild the index: `chronorag ingest KG --out {shown}`")
        fp = meta.get("fingerprint")
        if fp is not None and fp != store.fingerprint():
            raise IndexFormatError(
                f"{shown}: events.npz/vocab.json do not belong to this store.json (fingerprint "
                f"{store.fingerprint()}, store.json says {fp}); a file was copied from another "
                f"index; rebuild the index: `chronorag ingest KG --out {shown}`")
        if len(store) and (min(int(store.subject.min()), int(store.object.min()), int(store.relation.min())) < 0
                           or max(int(store.subject.max()), int(store.object.max())) >= len(store.entities)
                           or int(store.relation.max()) >= len(store.relations)):
            raise IndexFormatError(f"{shown}: events.npz refers to names missing from vocab.json; "
                                   f"rebuild the index: `chronorag ingest KG --out {shown}`")
        return store
