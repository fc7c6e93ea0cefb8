"""The reference labeller: gold answers straight from the raw records.

It never touches :class:`~chronorag.workflows.kg_irag.record_kg.RecordKG`, the retrieval operator
or the loop: it parses the raw rows itself (``datetime.fromisoformat``), applies the
spec's thresholds with its own comparison code, and scans the candidate windows one
by one. The KG-iRAG loop is checked against this independent path.

Semantics (shared, documented): a record starting at ``s`` covers ``[s, s + cadence)``;
a trip ``[t, t + duration)`` meets an event when an abnormal record overlaps it; hours
(or days) without any record count as having no event; a missing or out-of-range value
is never abnormal; duplicate rows for one place and start are all scanned (an event in
any of them counts).
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from chronorag.errors import ConfigError
from chronorag.workflows.kg_irag.record_kg import RecordSpec

__all__ = ["NO_ANSWER", "NO_NEED", "ReferenceLabeller", "format_answer_time"]

NO_NEED = "no need"
NO_ANSWER = "no answer"


def format_answer_time(t: dt.datetime, cadence_minutes: int) -> str:
    """Canonical answer text: ``YYYY-MM-DD`` for daily records, ``YYYY-MM-DDTHH:MM`` otherwise."""
    return t.strftime("%Y-%m-%d") if cadence_minutes >= 1440 else t.strftime("%Y-%m-%dT%H:%M")


def _parse(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None, second=0, microsecond=0)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if not isinstance(value, str) or not value.strip():
        return None
    s = value.strip().replace("Z", "")
    try:
        t = dt.datetime.fromisoformat(s)
    except ValueError:
        return None
    return t.replace(tzinfo=None, second=0, microsecond=0)


def _abnormal(rule: Any, value: Any, valid: tuple[float, float] | None, categorical: bool) -> bool:
    if value is None:
        return False
    if categorical:
        if isinstance(value, float) and math.isnan(value):
            return False
        v = str(value)
        th = rule.threshold
        return v in th if rule.op == "in" else (v == th if rule.op == "==" else v != th if rule.op == "!=" else False)
    try:
        x = float(value)
    except (TypeError, ValueError):
        return False
    if math.isnan(x) or (valid is not None and not (valid[0] <= x <= valid[1])):
        return False
    th = float(rule.threshold)
    if rule.op == ">":
        return x > th
    if rule.op == ">=":
        return x >= th
    if rule.op == "<":
        return x < th
    if rule.op == "<=":
        return x <= th
    if rule.op == "==":
        return x == th
    if rule.op == "!=":
        return x != th
    return False


class ReferenceLabeller:
    """Answers Q1/Q2/Q3 and their minimal evidence sets by scanning raw rows.

    Parameters
    ----------
    rows : iterable of mapping
        The raw records (as given to the KG mapper).
    spec : RecordSpec
        Column names, cadence and thresholds.
    """

    def __init__(self, rows: Iterable[Mapping[str, Any]], spec: RecordSpec) -> None:
        self.spec = spec
        self.step = dt.timedelta(minutes=int(spec.duration_minutes))
        self.cadence = int(spec.duration_minutes)
        cat = set(spec.categorical_columns)
        # (place, start) -> set of abnormal event names (union over duplicate rows)
        self.cells: dict[tuple[str, dt.datetime], set[str]] = defaultdict(set)
        for row in rows:
            place = row.get(spec.place_column)
            if place is None or (isinstance(place, float) and math.isnan(place)) or not str(place).strip():
                continue
            t = _parse(row.get(spec.time_column))
            if t is None:
                continue
            cell = self.cells[(str(place).strip(), t)]
            for rule in spec.rules:
                if _abnormal(rule, row.get(rule.column), spec.valid_ranges.get(rule.column), rule.column in cat):
                    cell.add(rule.name)

    def fact_id(self, place: str, t: dt.datetime) -> str:
        """The id the KG gives the record at ``place`` starting at ``t``."""
        return f"{self.spec.source}:{place}@{t.strftime('%Y-%m-%dT%H:%M')}"

    def _starts(self, t: dt.datetime, dur: dt.timedelta) -> list[dt.datetime]:
        # record starts whose [s, s + step) overlaps [t, t + dur); records are grid aligned
        out = []
        s = t
        while s < t + dur:
            out.append(s)
            s += self.step
        return out

    def abnormal_in(self, place: str, event: str, t: dt.datetime, dur: dt.timedelta) -> list[dt.datetime]:
        """Starts of the abnormal ``event`` records overlapping ``[t, t + dur)``."""
        return [s for s in self._starts(t, dur) if event in self.cells.get((place, s), ())]

    def present_in(self, place: str, t: dt.datetime, dur: dt.timedelta) -> list[dt.datetime]:
        """Starts of all records at ``place`` overlapping ``[t, t + dur)``."""
        return [s for s in self._starts(t, dur) if (place, s) in self.cells]

    def candidates(self, qtype: str, t: dt.datetime, horizon: dt.timedelta) -> list[dt.datetime]:
        """Candidate starts, nearest first: ``t - k*step > t - L`` (q2) or ``t + k*step < t + L`` (q3)."""
        out: list[dt.datetime] = []
        k = 1
        while True:
            c = t - k * self.step if qtype == "q2" else t + k * self.step
            if (qtype == "q2" and c <= t - horizon) or (qtype == "q3" and c >= t + horizon):
                return out
            out.append(c)
            k += 1

    def label(self, qtype: str, place: str, event: str, t: dt.datetime, dur: dt.timedelta,
              horizon: dt.timedelta | None = None) -> tuple[Any, list[str]]:
        """Gold answer and minimal evidence ids.

        Returns
        -------
        (answer, evidence)
            ``q1``: ``True`` when the event occurs in the window. ``q2``/``q3``: a
            ``datetime``, ``"no need"`` or ``"no answer"``.
        """
        hits = self.abnormal_in(place, event, t, dur)
        if qtype == "q1":
            if hits:
                return True, [self.fact_id(place, hits[0])]
            return False, [self.fact_id(place, s) for s in self.present_in(place, t, dur)]
        if qtype not in ("q2", "q3"):
            raise ConfigError(f"qtype must be q1, q2 or q3, got {qtype!r}")
        if horizon is None:
            raise ConfigError("q2/q3 need a horizon")
        if not hits:
            return NO_NEED, [self.fact_id(place, s) for s in self.present_in(place, t, dur)]
        refuted = [t]
        answer: Any = NO_ANSWER
        for c in self.candidates(qtype, t, horizon):
            if self.abnormal_in(place, event, c, dur):
                refuted.append(c)
                continue
            answer = c
            break
        # minimal witnesses: greedy interval stabbing over the refuted windows
        wins = sorted(refuted)
        witnesses: list[dt.datetime] = []
        for c in wins:
            if any(c <= w < c + dur for w in witnesses):
                continue
            witnesses.append(self.abnormal_in(place, event, c, dur)[-1])
        ev = [self.fact_id(place, w) for w in sorted(set(witnesses))]
        if isinstance(answer, dt.datetime):
            ev += [self.fact_id(place, s) for s in self.present_in(place, answer, dur)]
        return answer, ev
