"""Sensor-style records as a temporal KG: the deterministic mapper Gamma of KG-iRAG.

A *record* is one row of a time series table: a time, a place and a few measured
values (hourly weather at an airport, departure delays of an hour, a day of rain).
:func:`build_record_kg` maps each record ``d_i`` to an event node ``e_i`` and three
kinds of triples::

    (e_i, occursAt,   [t_s, t_e))      time is first-class: a half-open interval
    (e_i, atLocation, place)
    (e_i, hasValue,   column=value)    one per measured column

Abnormal events (rain, low visibility, strong wind, heavy delay ...) are named by
:class:`EventRule` thresholds over the value columns; a record is abnormal for a rule
when its value passes the rule's test. Thresholds are data, not code: every source
documents its rules and a user can replace them.

The Allen relations ``before/after/during/overlaps/...`` between two events are
answered on demand from their intervals (:meth:`RecordKG.relation`) and never
materialised as all pairs; ``near`` between places is the great-circle distance
(:meth:`RecordKG.near`).

Bring your own data with a small declarative spec (:meth:`RecordSpec.from_mapping`)::

    {"source": "my-sensors", "time": "timestamp", "place": "station",
     "values": ["rain_mm", "gust"], "duration": "30min",
     "events": [{"name": "rain", "column": "rain_mm", "op": ">=", "threshold": 0.2}],
     "places": {"North": [51.5, -0.12]}, "valid_ranges": {"gust": [0, 80]},
     "place_names": {"North": "North Station"}, "place_aliases": {"North": ["Northgate"]}}

and :func:`read_records_csv` for a CSV file. Bad records (unparseable time, missing
place) are skipped and counted in :attr:`RecordKG.report`; a value outside its
``valid_ranges`` (or not a number) is dropped from its record and counted as well.
A missing value never triggers an abnormal event. Rows repeating a place and start are
merged: the first row's values are kept and an event in any of them counts.

Pure Python + numpy; no pandas.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chronorag.errors import (
    ArgumentTypeError,
    ConfigError,
    DataFormatError,
    MissingFileError,
    TimeParseError,
    UnknownNameError,
)
from chronorag.graphs.time import (
    Granularity,
    TimeInterval,
    TimePoint,
    allen_relation,
    minutes_to_iso,
    parse_time,
)

__all__ = [
    "Fact",
    "EventRule",
    "LoadReport",
    "RecordKG",
    "RecordSpec",
    "build_record_kg",
    "haversine_km",
    "parse_duration",
    "read_records_csv",
]

RULE_OPS = (">", ">=", "<", "<=", "==", "!=", "in")

_DUR_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(min|minutes?|m|h|hours?|d|days?)\s*$", re.I)


def parse_duration(value: str | int | float) -> int:
    """Minutes in a duration: an int (minutes) or text like ``"1h"``, ``"30min"``, ``"2 days"``.

    Raises
    ------
    DataFormatError
        For anything else or a non-positive duration.
    """
    if isinstance(value, bool):
        raise DataFormatError(f"duration must be minutes or text like '1h', got {value!r}")
    if isinstance(value, (int, float)):
        if value != value or abs(value) == float("inf"):
            raise DataFormatError(f"duration must be a finite number of minutes, got {value!r}")
        minutes = int(value)
    else:
        m = _DUR_RE.match(str(value))
        if not m:
            raise DataFormatError(f"cannot parse duration {value!r}: use e.g. '30min', '1h', '1d' or minutes")
        n, unit = float(m.group(1)), m.group(2).lower()
        mult = 1 if unit.startswith("m") else 60 if unit.startswith("h") else 1440
        minutes = int(round(n * mult))
    if minutes <= 0:
        raise DataFormatError(f"duration must be positive, got {value!r}")
    if minutes > 10_000_000:  # about 19 years: a record interval, not a typo'd exponent
        raise DataFormatError(f"duration {value!r} is too long for one record; use minutes, hours or days")
    return minutes


def haversine_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Great-circle distance in km between two ``(lat, lon)`` points in degrees."""
    lat1, lon1 = map(math.radians, a)
    lat2, lon2 = map(math.radians, b)
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(h)))


@dataclass(frozen=True)
class EventRule:
    """An abnormal-event threshold: the record is abnormal when ``value <op> threshold``.

    Parameters
    ----------
    name : str
        Event name used in questions (``"rain"``).
    column : str
        Value column tested.
    op : str
        One of ``>, >=, <, <=, ==, !=, in`` (``in``: ``threshold`` is a list of labels).
    threshold : float, str or list
        The threshold (or label, or labels).
    description : str
        One line for docs and prompts (``"precipitation > 0 in/h"``).
    aliases : tuple of str
        Other names a question may use (``"bad visibility"``).
    """

    name: str
    column: str
    op: str
    threshold: Any
    description: str = ""
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name or not self.column:
            raise DataFormatError(f"an event rule needs a name and a column, got {self.name!r}, {self.column!r}")
        if self.op not in RULE_OPS:
            raise DataFormatError(f"event rule {self.name!r}: unknown op {self.op!r}; use one of {RULE_OPS}")
        if self.op == "in" and not isinstance(self.threshold, (list, tuple, frozenset, set)):
            raise DataFormatError(f"event rule {self.name!r}: op 'in' needs a list of labels")

    def test(self, value: Any) -> bool:
        """Whether ``value`` is abnormal; a missing value (None/NaN) never is."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return False
        t = self.threshold
        if self.op == "in":
            return value in t
        if self.op == "==":
            return value == t
        if self.op == "!=":
            return value != t
        try:
            v, t = float(value), float(t)
        except (TypeError, ValueError):
            return False
        return {">": v > t, ">=": v >= t, "<": v < t, "<=": v <= t}[self.op]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description."""
        th = list(self.threshold) if self.op == "in" else self.threshold
        return {"name": self.name, "column": self.column, "op": self.op, "threshold": th,
                "description": self.description, "aliases": list(self.aliases)}


_OPS = (">", ">=", "<", "<=", "==", "!=", "in")
_SPEC_HELP = "see the spec format in the docstring of chronorag.workflows.kg_irag.record_kg"


def _mapping(key: str, v: Any) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise DataFormatError(f"record spec {key!r} must be an object, got {v!r:.80}")
    return v


def _pair(key: str, v: Any) -> tuple[float, float]:
    """Two finite numbers (coordinates, a valid range)."""
    if isinstance(v, (str, Mapping)) or not isinstance(v, Sequence) or len(v) != 2 or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        raise DataFormatError(f"record spec {key!r} must be a list of two numbers, got {v!r:.80}")
    a, b = float(v[0]), float(v[1])
    if not all(abs(x) < float("inf") for x in (a, b)):
        raise DataFormatError(f"record spec {key!r} must hold finite numbers, got {v!r:.80}")
    return a, b


@dataclass(frozen=True)
class RecordSpec:
    """How to read a table of records: columns, record duration, abnormal-event rules.

    Parameters
    ----------
    source : str
        Short name of the data set (also the prefix of event ids).
    time_column, place_column : str
        Columns holding the record's start time (anything :func:`parse_time` reads)
        and its place.
    value_columns : tuple of str
        Measured columns kept as ``hasValue`` triples.
    duration_minutes : int
        Length of the interval each record covers (60 for hourly, 1440 for daily).
    rules : tuple of EventRule
        The abnormal events.
    places : dict
        ``place -> (lat, lon)`` for ``near``; places without coordinates are only near themselves.
    place_names : dict
        ``place -> display name`` used in questions (``"EWR" -> "Newark Liberty Intl"``).
    place_aliases : dict
        ``place -> other names`` a question may use (``"EWR" -> ("Newark",)``), like an event
        rule's aliases.
    valid_ranges : dict
        ``column -> (lo, hi)``; a numeric value outside is dropped (counted in the report).
    categorical_columns : tuple of str
        Columns kept as text (labels such as ``"rain"``), not numbers.
    units : dict
        ``column -> unit`` for verbalised facts.
    """

    source: str
    time_column: str
    place_column: str
    value_columns: tuple[str, ...]
    duration_minutes: int
    rules: tuple[EventRule, ...]
    places: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    place_names: Mapping[str, str] = field(default_factory=dict)
    place_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    valid_ranges: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    categorical_columns: tuple[str, ...] = ()
    units: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.source:
            raise DataFormatError("a record spec needs a source name")
        if not self.value_columns:
            raise DataFormatError(f"record spec {self.source!r}: no value columns")
        if int(self.duration_minutes) <= 0:
            raise DataFormatError(f"record spec {self.source!r}: duration must be positive")
        names = [r.name for r in self.rules]
        if len(set(names)) != len(names):
            raise DataFormatError(f"record spec {self.source!r}: duplicate event rule names {names}")
        for r in self.rules:
            if r.column not in self.value_columns:
                raise DataFormatError(f"record spec {self.source!r}: rule {r.name!r} tests column "
                                      f"{r.column!r}, which is not a value column {list(self.value_columns)}")
        owner: dict[str, str] = {}
        for place, aliases in self.place_aliases.items():
            if (isinstance(aliases, str) or not isinstance(aliases, (tuple, list))
                    or not all(isinstance(a, str) and a.strip() for a in aliases)):
                raise DataFormatError(f"record spec {self.source!r}: place_aliases[{place!r}] must be a list of "
                                      f"non-empty names, got {aliases!r:.80}")
            for a in aliases:
                other = owner.setdefault(a.strip().lower(), place)
                if other != place:
                    raise DataFormatError(f"record spec {self.source!r}: the alias {a!r} names two places "
                                          f"({other!r} and {place!r}); give each alias to one place")
        # lists given directly are kept as tuples, so a spec equals its own round trip
        object.__setattr__(self, "place_aliases", {str(k): tuple(v) for k, v in self.place_aliases.items()})
        if len(self.rules) > 62:
            raise DataFormatError("at most 62 event rules per spec")

    def rule(self, name: str) -> EventRule:
        """The rule called ``name`` (or one of its aliases)."""
        key = name.strip().lower()
        for r in self.rules:
            if key == r.name.lower() or key in (a.lower() for a in r.aliases):
                return r
        raise UnknownNameError(f"unknown event {name!r} in source {self.source!r}; "
                               f"known: {[r.name for r in self.rules]}")

    @classmethod
    def from_mapping(cls, spec: Mapping[str, Any]) -> RecordSpec:
        """Build a spec from the declarative dict form (see the module docstring).

        Raises
        ------
        DataFormatError
            Naming the missing or malformed key.
        """
        if not isinstance(spec, Mapping):
            raise DataFormatError(f"a record spec must be a mapping, got {type(spec).__name__}")
        try:
            return cls._from_mapping(spec)
        except DataFormatError:
            raise
        except (ValueError, TypeError, IndexError, KeyError, OverflowError, AttributeError) as exc:
            raise DataFormatError(f"record spec {str(spec.get('source', ''))[:60]!r}: a bad value "
                                  f"({type(exc).__name__}: {str(exc)[:200]}); {_SPEC_HELP}") from None

    @classmethod
    def _from_mapping(cls, spec: Mapping[str, Any]) -> RecordSpec:
        for key in ("source", "time", "place", "values", "duration"):
            if key not in spec:
                raise DataFormatError(f"record spec lacks {key!r} (needs source, time, place, values, duration, events)")
        values = spec["values"]
        if isinstance(values, str) or not isinstance(values, Sequence):
            raise DataFormatError(f"record spec 'values' must be a list of column names, got {values!r}")
        rules = []
        for i, r in enumerate(spec.get("events", [])):
            if not isinstance(r, Mapping) or not {"name", "column", "op", "threshold"} <= set(r):
                raise DataFormatError(f"record spec event #{i} needs name, column, op and threshold: {r!r}")
            th = r["threshold"]
            if str(r["op"]) not in _OPS:
                raise DataFormatError(f"record spec event {r['name']!r}: op {r['op']!r} is not one of {_OPS}")
            if str(r["op"]) == "in" and not isinstance(th, list):
                raise DataFormatError(f"record spec event {r['name']!r}: op 'in' needs a list threshold, got {th!r}")
            if str(r["op"]) in (">", ">=", "<", "<=") and (isinstance(th, bool) or not isinstance(th, (int, float))
                                                         or th != th or abs(th) == float("inf")):
                raise DataFormatError(f"record spec event {r['name']!r}: op {r['op']!r} needs a finite number "
                                      f"threshold, got {th!r}")
            rules.append(EventRule(str(r["name"]), str(r["column"]), str(r["op"]),
                                   tuple(th) if isinstance(th, list) else th,
                                   str(r.get("description", "")), tuple(r.get("aliases", ()))))
        places = {str(k): _pair(f"places.{k}", v) for k, v in _mapping("places", spec.get("places", {})).items()}
        ranges = {str(k): _pair(f"valid_ranges.{k}", v)
                  for k, v in _mapping("valid_ranges", spec.get("valid_ranges", {})).items()}
        for key in ("place_names", "units"):
            _mapping(key, spec.get(key, {}))
        aliases = {}
        for k, v in _mapping("place_aliases", spec.get("place_aliases", {})).items():
            if isinstance(v, str) or not isinstance(v, Sequence):
                raise DataFormatError(f"record spec place_aliases[{k!r}] must be a list of names, got {v!r:.80}")
            aliases[str(k)] = tuple(v)
        for key in ("categorical", "events"):
            v = spec.get(key, [])
            if isinstance(v, (str, Mapping)) or not isinstance(v, Sequence):
                raise DataFormatError(f"record spec {key!r} must be a list, got {v!r:.80}")
        return cls(source=str(spec["source"]), time_column=str(spec["time"]), place_column=str(spec["place"]),
                   value_columns=tuple(str(v) for v in values), duration_minutes=parse_duration(spec["duration"]),
                   rules=tuple(rules), places=places, place_names=dict(spec.get("place_names", {})),
                   place_aliases=aliases,
                   valid_ranges=ranges, categorical_columns=tuple(spec.get("categorical", ())),
                   units=dict(spec.get("units", {})))

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> RecordSpec:
        """Read the declarative spec from a JSON file (errors name the file)."""
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8-sig"))
        except FileNotFoundError:
            raise MissingFileError(f"no such record spec: {p}") from None
        except json.JSONDecodeError as exc:
            raise DataFormatError(f"{p}: record spec is not JSON: {exc}") from None
        except RecursionError:
            raise DataFormatError(f"{p}: record spec JSON is nested too deeply") from None
        except UnicodeDecodeError as exc:
            raise DataFormatError(f"{p}: record spec is not UTF-8 text ({exc.reason})") from None
        try:
            return cls.from_mapping(data)
        except DataFormatError as exc:
            raise DataFormatError(f"{p}: {exc}") from None

    def to_mapping(self) -> dict[str, Any]:
        """The declarative dict form (round-trips through :meth:`from_mapping`)."""
        return {"source": self.source, "time": self.time_column, "place": self.place_column,
                "values": list(self.value_columns), "duration": self.duration_minutes,
                "events": [r.to_dict() for r in self.rules],
                "places": {k: list(v) for k, v in self.places.items()},
                "place_names": dict(self.place_names),
                "place_aliases": {k: list(v) for k, v in self.place_aliases.items()},
                "valid_ranges": {k: list(v) for k, v in self.valid_ranges.items()},
                "categorical": list(self.categorical_columns), "units": dict(self.units)}


@dataclass
class LoadReport:
    """What Gamma did with the input: rows read, kept, skipped (by reason), values dropped."""

    rows: int = 0
    kept: int = 0
    skipped: Counter = field(default_factory=Counter)
    dropped_values: Counter = field(default_factory=Counter)
    duplicates: int = 0
    examples: list[str] = field(default_factory=list)

    def skip(self, reason: str, detail: str) -> None:
        self.skipped[reason] += 1
        if len(self.examples) < 10:
            self.examples.append(f"{reason}: {detail}")

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "kept": self.kept, "skipped": dict(self.skipped),
                "dropped_values": dict(self.dropped_values), "duplicates": self.duplicates,
                "examples": list(self.examples)}


@dataclass(frozen=True)
class Fact:
    """One event node with its triples: a record at a place over ``[lo, hi)`` minutes."""

    id: str
    place: str
    lo: int
    hi: int
    values: tuple[tuple[str, Any], ...]
    events: tuple[str, ...]

    @property
    def interval(self) -> TimeInterval:
        """The record's interval as a :class:`~chronorag.graphs.time.TimeInterval`."""
        return TimeInterval(TimePoint(self.lo, self.lo + 1, Granularity.MINUTE),
                            TimePoint(self.hi - 1, self.hi, Granularity.MINUTE))

    def triples(self) -> list[tuple[str, str, str]]:
        """Gamma's triples: occursAt, atLocation and one hasValue per value."""
        out = [(self.id, "occursAt", f"[{minutes_to_iso(self.lo)}, {minutes_to_iso(self.hi)})"),
               (self.id, "atLocation", self.place)]
        out += [(self.id, "hasValue", f"{k}={_fmt(v)}") for k, v in self.values]
        return out

    def verbalize(self) -> str:
        """One line for prompts: ``EWR 2013-01-01T05:00-06:00: precip=0.02, visib=3 [rain]``."""
        vals = ", ".join(f"{k}={_fmt(v)}" for k, v in self.values)
        tag = f" [abnormal: {', '.join(self.events)}]" if self.events else " [normal]"
        return f"{self.place} {minutes_to_iso(self.lo)} to {minutes_to_iso(self.hi)}: {vals}{tag}"


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "missing" if math.isnan(v) else f"{v:g}"
    return str(v)


class RecordKG:
    """A temporal KG of records, stored per place as time-sorted columns.

    Build it with :func:`build_record_kg`. Each place holds ``start``/``end`` minute
    arrays, an abnormal-event bit mask per record (bit ``i`` = ``spec.rules[i]``) and
    the value columns, so a window query is two binary searches.
    """

    def __init__(self, spec: RecordSpec, report: LoadReport) -> None:
        self.spec = spec
        self.report = report
        self.start: dict[str, np.ndarray] = {}
        self.end: dict[str, np.ndarray] = {}
        self.mask: dict[str, np.ndarray] = {}
        self.values: dict[str, dict[str, np.ndarray]] = {}

    # ------------------------------------------------------------------ basics
    def __len__(self) -> int:
        return sum(len(a) for a in self.start.values())

    def __repr__(self) -> str:
        return (f"RecordKG(source={self.spec.source!r}, places={len(self.places)}, records={len(self)}, "
                f"triples={self.n_triples})")

    @property
    def places(self) -> list[str]:
        """Places with at least one record, sorted."""
        return sorted(self.start)

    @property
    def n_triples(self) -> int:
        """Number of Gamma triples (3 kinds; one hasValue per value column)."""
        return len(self) * (2 + len(self.spec.value_columns))

    @property
    def cadence_minutes(self) -> int:
        """The record duration (the grid step of candidate windows)."""
        return int(self.spec.duration_minutes)

    def time_range(self, place: str | None = None) -> tuple[int, int]:
        """``(first start, last end)`` in minutes, overall or at one place."""
        ps = [self._check_place(place)] if place is not None else self.places
        return (min(int(self.start[p][0]) for p in ps), max(int(self.end[p][-1]) for p in ps))

    def rule_bit(self, event: str) -> int:
        """The bit mask of event ``event`` (a rule name or alias)."""
        rule = self.spec.rule(event)
        return 1 << [r.name for r in self.spec.rules].index(rule.name)

    def _check_place(self, place: str) -> str:
        if place not in self.start:
            raise UnknownNameError(f"unknown place {place!r} in source {self.spec.source!r}; known: {self.places}")
        return place

    # ------------------------------------------------------------------ facts
    def fact_id(self, place: str, i: int) -> str:
        """Event id of record ``i`` at ``place``: ``source:place@start``."""
        return f"{self.spec.source}:{place}@{minutes_to_iso(int(self.start[place][i]))}"

    def fact(self, place: str, i: int) -> Fact:
        """Record ``i`` at ``place`` as a :class:`Fact`."""
        m = int(self.mask[place][i])
        vals = tuple((c, _py(self.values[place][c][i])) for c in self.spec.value_columns)
        evs = tuple(r.name for b, r in enumerate(self.spec.rules) if m >> b & 1)
        return Fact(self.fact_id(place, i), place, int(self.start[place][i]), int(self.end[place][i]), vals, evs)

    def window(self, place: str, lo: int, hi: int) -> range:
        """Indices of the records at ``place`` whose interval overlaps ``[lo, hi)``."""
        s = self.start[self._check_place(place)]
        # records are sorted by start and all have the spec's duration, so ends are sorted too
        first = int(np.searchsorted(self.end[place], lo, side="right"))
        last = int(np.searchsorted(s, hi, side="left"))
        return range(first, max(first, last))

    def facts(self, place: str, lo: int, hi: int) -> list[Fact]:
        """The facts at ``place`` overlapping ``[lo, hi)``, in time order."""
        return [self.fact(place, i) for i in self.window(place, lo, hi)]

    def iter_triples(self) -> Iterator[tuple[str, str, str]]:
        """Every Gamma triple, place by place in time order (generated, not stored)."""
        for p in self.places:
            for i in range(len(self.start[p])):
                yield from self.fact(p, i).triples()

    # ------------------------------------------------------------------ relations
    def near(self, place: str, radius_km: float) -> list[tuple[str, float]]:
        """Places within ``radius_km`` of ``place`` (itself first), by great-circle distance."""
        self._check_place(place)
        if radius_km < 0:
            raise ConfigError(f"radius_km must be >= 0, got {radius_km}")
        out = [(place, 0.0)]
        here = self.spec.places.get(place)
        if here is None:
            return out
        for p in self.places:
            if p != place and p in self.spec.places:
                d = haversine_km(here, self.spec.places[p])
                if d <= radius_km:
                    out.append((p, d))
        return sorted(out, key=lambda x: (x[1], x[0]))

    @staticmethod
    def relation(a: Fact | tuple[int, int], b: Fact | tuple[int, int]) -> str:
        """Allen relation of ``a`` to ``b`` (facts or ``(lo, hi)`` minute spans), derived on demand."""
        def iv(x: Fact | tuple[int, int]) -> TimeInterval:
            lo, hi = (x.lo, x.hi) if isinstance(x, Fact) else x
            return TimeInterval(TimePoint(lo, lo + 1, Granularity.MINUTE), TimePoint(hi - 1, hi, Granularity.MINUTE))
        return allen_relation(iv(a), iv(b))


def _py(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return v


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, (int, float, np.integer, np.floating)):
        f = float(v)
        return None if math.isnan(f) else f
    s = str(v).strip()
    if s == "" or s.lower() in ("na", "nan", "null", "none"):
        return None
    try:
        f = float(s)
    except ValueError:
        return None
    return None if math.isnan(f) else f


def build_record_kg(records: Iterable[Mapping[str, Any]], spec: RecordSpec) -> RecordKG:
    """Gamma: map records to a :class:`RecordKG`.

    Parameters
    ----------
    records : iterable of mapping
        Rows with the spec's time, place and value columns.
    spec : RecordSpec
        How to read them.

    Returns
    -------
    RecordKG
        With :attr:`RecordKG.report` counting rows read, kept, skipped by reason
        (``bad_time``, ``missing_place``), values dropped per column and exact
        duplicates (same place and start: the first row is kept).
    """
    if not isinstance(spec, RecordSpec):
        raise ArgumentTypeError(f"spec must be a RecordSpec, got {type(spec).__name__}")
    rep = LoadReport()
    dur = int(spec.duration_minutes)
    cols = spec.value_columns
    cat = set(spec.categorical_columns)
    per: dict[str, list[tuple[int, list[Any]]]] = {}
    cache: dict[str, int] = {}
    for row in records:
        rep.rows += 1
        place = row.get(spec.place_column)
        if place is None or (isinstance(place, float) and math.isnan(place)) or not str(place).strip():
            rep.skip("missing_place", f"row {rep.rows}: {spec.place_column}={place!r}")
            continue
        place = str(place).strip()
        raw_t = row.get(spec.time_column)
        key = str(raw_t)
        lo = cache.get(key)
        if lo is None:
            try:
                tp = parse_time(raw_t.replace("Z", "") if isinstance(raw_t, str) else raw_t)  # type: ignore[arg-type]
                if tp.is_inf:
                    raise TimeParseError(f"open time {raw_t!r}")
            except (TimeParseError, TypeError, ValueError):
                rep.skip("bad_time", f"row {rep.rows}: {spec.time_column}={raw_t!r}")
                continue
            lo = tp.lo
            cache[key] = lo
        vals: list[Any] = []
        for c in cols:
            v = row.get(c)
            if c in cat:
                vals.append(None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
                continue
            f = _num(v)
            if f is None and v is not None and str(v).strip().lower() not in ("", "na", "nan", "null", "none") \
                    and not (isinstance(v, float) and math.isnan(v)):
                rep.dropped_values[c] += 1  # not a number
            rng = spec.valid_ranges.get(c)
            if f is not None and rng is not None and not (rng[0] <= f <= rng[1]):
                rep.dropped_values[c] += 1
                f = None
            vals.append(float("nan") if f is None else f)
        per.setdefault(place, []).append((lo, vals))
    kg = RecordKG(spec, rep)
    for place, rows in per.items():
        rows.sort(key=lambda r: r[0])
        keep: list[tuple[int, list[Any]]] = []
        extra: list[tuple[int, list[Any]]] = []  # (kept index, values) of same-start duplicates
        for lo, vals in rows:
            if keep and keep[-1][0] == lo:
                rep.duplicates += 1
                extra.append((len(keep) - 1, vals))
                continue
            if keep and lo < keep[-1][0] + dur:
                rep.duplicates += 1  # overlapping record at one place: keep the earlier one
                continue
            keep.append((lo, vals))
        starts = np.array([r[0] for r in keep], dtype=np.int64)
        kg.start[place] = starts
        kg.end[place] = starts + dur
        mask = np.zeros(len(keep), dtype=np.int64)
        cols_out: dict[str, np.ndarray] = {}
        for j, c in enumerate(cols):
            col = [r[1][j] for r in keep]
            cols_out[c] = np.array(col, dtype=object) if c in cat else np.array(col, dtype=np.float64)
        for b, rule in enumerate(spec.rules):
            arr = cols_out[rule.column]
            if rule.column in cat or rule.op in ("in", "==", "!="):
                hit = np.array([rule.test(v) for v in arr], dtype=bool)
            else:
                with np.errstate(invalid="ignore"):
                    t = float(rule.threshold)
                    hit = {">": arr > t, ">=": arr >= t, "<": arr < t, "<=": arr <= t}[rule.op]
                hit &= ~np.isnan(arr)
            mask |= hit.astype(np.int64) << b
            j = cols.index(rule.column)
            for k, vals in extra:  # an event in any duplicate row counts (values: the first row's)
                if rule.test(vals[j]):
                    mask[k] |= 1 << b
        kg.mask[place] = mask
        kg.values[place] = cols_out
        rep.kept += len(keep)
    if not kg.start:
        raise DataFormatError(f"no usable records for source {spec.source!r}: {rep.as_dict()}")
    return kg


def read_records_csv(path: str | os.PathLike[str], spec: RecordSpec | Mapping[str, Any],
                     *, delimiter: str = ",") -> RecordKG:
    """Read a CSV of records with a declarative spec and build the KG.

    Parameters
    ----------
    path : path
        CSV file with a header row.
    spec : RecordSpec or mapping
        The spec (or its dict form).
    delimiter : str
        Field separator.

    Raises
    ------
    DataFormatError
        When the header lacks a column the spec names.
    """
    sp = spec if isinstance(spec, RecordSpec) else RecordSpec.from_mapping(spec)
    p = Path(path)
    if not p.is_file():
        raise MissingFileError(f"no such records file: {p}")
    with open(p, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh, delimiter=delimiter)
        try:
            header = set(reader.fieldnames or [])
            missing = [c for c in (sp.time_column, sp.place_column, *sp.value_columns) if c not in header]
            if missing:
                raise DataFormatError(f"{p}: columns {missing} named by the spec are not in the header "
                                      f"{sorted(header)}")
            return build_record_kg(reader, sp)
        except csv.Error as exc:  # e.g. a field over the csv module's 131,072-character limit
            raise DataFormatError(f"{p}:{reader.line_num}: unreadable CSV ({exc}); a field that long is "
                                  "usually an unbalanced quote") from None
        except UnicodeDecodeError as exc:
            raise DataFormatError(f"{p}: not UTF-8 text near line {reader.line_num + 1} ({exc.reason})") from None
