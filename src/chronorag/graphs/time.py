"""Time model: time points with a granularity, intervals, Allen relations, tool filters.

Every time point covers a half-open range of minutes ``[lo, hi)`` counted on the
proleptic Gregorian calendar (minute 0 is 0001-01-01T00:00). ``"2010"`` covers the
whole year 2010, ``"2010-05-14"`` one day, ``"2010-05-14T09:30"`` one minute.
``"-inf"`` and ``"inf"`` are open ends. Working on minute ranges makes the event
store's time columns plain ``int64`` arrays, so every time filter is a vectorised
comparison.

The temporal filters follow TempTool-R1's tool interface: ``begin_time``,
``end_time`` and a ``type`` in ``{"in/on", "before", "after", "between"}``.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import enum
import re
from dataclasses import dataclass

import numpy as np

from chronorag.errors import ArgumentTypeError, ConfigError, IntervalOrderError, TimeParseError

__all__ = [
    "ALLEN_RELATIONS",
    "FILTER_TYPES",
    "NEG_INF",
    "POS_INF",
    "Granularity",
    "TimeInterval",
    "TimePoint",
    "allen_relation",
    "minutes_to_iso",
    "parse_time",
    "parse_time_mention",
    "temporal_mask",
]

NEG_INF = -(2**62)
POS_INF = 2**62
_MIN_PER_DAY = 1440


class Granularity(enum.IntEnum):
    """Resolution of a time point, from coarse to fine (``INF`` marks an open end)."""

    YEAR = 0
    MONTH = 1
    DAY = 2
    HOUR = 3
    MINUTE = 4
    INF = 9


def _day_minute(d: _dt.date) -> int:
    return (d.toordinal() - 1) * _MIN_PER_DAY


def minutes_to_iso(minute: int, granularity: Granularity = Granularity.MINUTE) -> str:
    """Format a minute count as ISO text truncated to ``granularity``.

    Parameters
    ----------
    minute : int
        Minutes since 0001-01-01T00:00, or ``NEG_INF``/``POS_INF``.
    granularity : Granularity
        How much of the date to print.
    """
    if minute <= NEG_INF:
        return "-inf"
    if minute >= POS_INF:
        return "inf"
    days, rem = divmod(int(minute), _MIN_PER_DAY)
    d = _dt.date.fromordinal(days + 1)
    if granularity == Granularity.YEAR:
        return f"{d.year:04d}"
    if granularity == Granularity.MONTH:
        return f"{d.year:04d}-{d.month:02d}"
    if granularity == Granularity.DAY:
        return d.isoformat()
    h, m = divmod(rem, 60)
    if granularity == Granularity.HOUR:
        return f"{d.isoformat()}T{h:02d}"
    return f"{d.isoformat()}T{h:02d}:{m:02d}"


@dataclass(frozen=True, order=True)
class TimePoint:
    """A time point at a granularity, covering the minutes ``[lo, hi)``.

    Build one with :func:`parse_time`; ``str(point)`` gives canonical ISO text at the
    point's granularity (``"2010-05"``).
    """

    lo: int
    hi: int
    granularity: Granularity

    def __post_init__(self) -> None:
        if self.hi < self.lo:
            raise IntervalOrderError(f"time point with hi={self.hi} < lo={self.lo}")

    @property
    def is_inf(self) -> bool:
        """True for ``-inf`` and ``inf``."""
        return self.granularity == Granularity.INF

    def __str__(self) -> str:
        if self.is_inf:
            return "-inf" if self.lo <= NEG_INF else "inf"
        return minutes_to_iso(self.lo, self.granularity)

    def within(self, other: TimePoint) -> bool:
        """True when this point lies inside ``other`` (``"2010-05-14"`` is within ``"2010-05"``)."""
        return other.lo <= self.lo and self.hi <= other.hi

    def truncate(self, granularity: Granularity) -> TimePoint:
        """The coarser point at ``granularity`` that contains this one.

        Raises
        ------
        ValueError
            If ``granularity`` is finer than this point's own.
        """
        if self.is_inf:
            return self
        granularity = Granularity(granularity)
        if granularity > self.granularity:
            raise TimeParseError(
                f"cannot truncate {self} ({self.granularity.name.lower()}) to the finer "
                f"granularity {granularity.name.lower()}"
            )
        return parse_time(minutes_to_iso(self.lo, granularity))


_ISO_RE = re.compile(
    r"^(?P<y>-?\d{4})(?:-(?P<mo>\d{2})(?:-(?P<d>\d{2})"
    r"(?:[T ](?P<h>\d{2})(?::(?P<mi>\d{2})(?::(?P<s>\d{2})(?:\.\d+)?)?)?"
    r"(?P<tz>Z|[+-]\d{2}:?\d{2})?)?)?)?$"
)


def parse_time(value: str | TimePoint | _dt.date) -> TimePoint:
    """Parse a time expression into a :class:`TimePoint`.

    Accepted forms: ``"2010"``, ``"2010-05"``, ``"2010-05-14"``, ISO datetimes
    (``"2010-05-14T09"``, ``"2010-05-14T09:30"``, ``"2010-05-14 09:30:00"``; seconds
    and a time-zone suffix are accepted and dropped, the point is kept at minute
    granularity), ``"-inf"``/``"inf"``, and ``datetime.date``/``datetime.datetime``.

    Parameters
    ----------
    value : str, TimePoint or datetime.date
        The expression.

    Returns
    -------
    TimePoint

    Raises
    ------
    TimeParseError
        For anything else, naming the value (``"2010-13-01"``, ``"yesterday"``).
    """
    if isinstance(value, TimePoint):
        return value
    if isinstance(value, _dt.datetime):
        value = value.strftime("%Y-%m-%dT%H:%M")
    elif isinstance(value, _dt.date):
        value = value.isoformat()
    if not isinstance(value, str):
        raise TimeParseError(f"expected a time string, got {type(value).__name__}: {value!r}")
    text = value.strip()
    low = text.lower()
    if low in ("-inf", "-infinity"):
        return TimePoint(NEG_INF, NEG_INF, Granularity.INF)
    if low in ("inf", "+inf", "infinity"):
        return TimePoint(POS_INF, POS_INF, Granularity.INF)
    m = _ISO_RE.match(text)
    if not m:
        raise TimeParseError(
            f"cannot parse time {value!r}: expected YYYY, YYYY-MM, YYYY-MM-DD, an ISO "
            "datetime, '-inf' or 'inf'"
        )
    year = int(m["y"])
    if not 1 <= year <= 9999:
        raise TimeParseError(f"cannot parse time {value!r}: year {year} outside 1..9999")
    try:
        if m["mo"] is None:
            lo = _day_minute(_dt.date(year, 1, 1))
            hi = _day_minute(_dt.date(year + 1, 1, 1)) if year < 9999 else lo + 365 * _MIN_PER_DAY
            return TimePoint(lo, hi, Granularity.YEAR)
        month = int(m["mo"])
        if m["d"] is None:
            first = _dt.date(year, month, 1)
            ndays = calendar.monthrange(year, month)[1]
            lo = _day_minute(first)
            return TimePoint(lo, lo + ndays * _MIN_PER_DAY, Granularity.MONTH)
        day = _dt.date(year, month, int(m["d"]))
        lo = _day_minute(day)
        if m["h"] is None:
            return TimePoint(lo, lo + _MIN_PER_DAY, Granularity.DAY)
        hour = int(m["h"])
        if hour > 23:
            raise ConfigError(f"hour {hour} out of range")
        lo += hour * 60
        if m["mi"] is None:
            return TimePoint(lo, lo + 60, Granularity.HOUR)
        minute = int(m["mi"])
        if minute > 59 or (m["s"] is not None and int(m["s"]) > 59):
            raise ConfigError("minute or second out of range")
        lo += minute
        return TimePoint(lo, lo + 1, Granularity.MINUTE)
    except ValueError as exc:  # month 13, Feb 30, hour 25 ...
        raise TimeParseError(f"cannot parse time {value!r}: {exc}") from None


_MONTHS = {
    name.lower(): i
    for i in range(1, 13)
    for name in (calendar.month_name[i], calendar.month_abbr[i])
}
_MONTHS["sept"] = 9
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MENTION_PATTERNS = [
    # 14 May 2010 / 14th of May, 2010
    re.compile(
        rf"^(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<mon>{_MONTH_ALT})\.?,?\s+(?P<y>\d{{4}})$",
        re.IGNORECASE,
    ),
    # May 14, 2010 / May 14th 2010
    re.compile(
        rf"^(?P<mon>{_MONTH_ALT})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{4}})$", re.IGNORECASE
    ),
    # May 2010 / May, 2010 / May of 2010
    re.compile(rf"^(?P<mon>{_MONTH_ALT})\.?,?\s+(?:of\s+)?(?P<y>\d{{4}})$", re.IGNORECASE),
]


def parse_time_mention(text: str) -> TimePoint:
    """Parse a time written the way people write it, or any form :func:`parse_time` takes.

    Adds ``"May 2010"``, ``"14 May 2010"``, ``"May 14, 2010"`` and abbreviated month
    names to the ISO forms. Leading words such as ``"in"``/``"on"`` are ignored.

    Raises
    ------
    TimeParseError
        When ``text`` is not a time.
    """
    if not isinstance(text, str):
        raise TimeParseError(f"expected a time string, got {type(text).__name__}: {text!r}")
    s = re.sub(r"^(?:in|on|at|during)\s+", "", text.strip(), flags=re.IGNORECASE).rstrip(".")
    try:
        return parse_time(s)
    except TimeParseError:
        pass
    for pat in _MENTION_PATTERNS:
        m = pat.match(s)
        if not m:
            continue
        month = _MONTHS[m["mon"].lower().rstrip(".")]
        iso = f"{int(m['y']):04d}-{month:02d}"
        if m.groupdict().get("d"):
            iso += f"-{int(m['d']):02d}"
        try:
            return parse_time(iso)
        except TimeParseError:
            raise TimeParseError(f"cannot parse time {text!r}: no such date {iso}") from None
    raise TimeParseError(f"cannot parse time {text!r}: not a recognised date or date mention")


@dataclass(frozen=True)
class TimeInterval:
    """A closed span from ``start`` to ``end`` (both :class:`TimePoint`).

    It covers the minutes ``[start.lo, end.hi)``. A single time point is the interval
    with ``start == end``.

    Raises
    ------
    IntervalOrderError
        When ``start`` begins after ``end`` has finished.
    """

    start: TimePoint
    end: TimePoint

    def __post_init__(self) -> None:
        if not isinstance(self.start, TimePoint) or not isinstance(self.end, TimePoint):
            raise ArgumentTypeError("TimeInterval needs TimePoint bounds; use TimeInterval.parse(...)")
        if self.start.lo >= self.end.hi and not (self.start.is_inf and self.start == self.end):
            raise IntervalOrderError(
                f"interval begins after it ends: begin={self.start}, end={self.end}"
            )

    @classmethod
    def parse(cls, start: str | TimePoint, end: str | TimePoint | None = None) -> TimeInterval:
        """Build an interval from two time expressions (``end`` defaults to ``start``)."""
        s = parse_time(start)
        return cls(s, s if end is None else parse_time(end))

    @property
    def lo(self) -> int:
        """First minute covered."""
        return self.start.lo

    @property
    def hi(self) -> int:
        """Minute just after the last one covered."""
        return self.end.hi

    def __str__(self) -> str:
        return str(self.start) if self.start == self.end else f"{self.start}/{self.end}"

    def contains(self, other: TimeInterval | TimePoint) -> bool:
        """True when ``other`` lies entirely inside this interval."""
        return self.lo <= other.lo and other.hi <= self.hi


ALLEN_RELATIONS = (
    "before",
    "meets",
    "overlaps",
    "starts",
    "during",
    "finishes",
    "equals",
    "finished_by",
    "contains",
    "started_by",
    "overlapped_by",
    "met_by",
    "after",
)


def allen_relation(a: TimeInterval | TimePoint, b: TimeInterval | TimePoint) -> str:
    """Allen's interval relation of ``a`` to ``b`` (one of :data:`ALLEN_RELATIONS`).

    Both are treated as half-open minute ranges ``[lo, hi)``, so consecutive days
    (``"2010-05-14"`` and ``"2010-05-15"``) *meet*.

    Raises
    ------
    ValueError
        If either side is an open (infinite) point or empty.
    """
    for side, x in (("a", a), ("b", b)):
        if not isinstance(x, (TimeInterval, TimePoint)):
            raise ArgumentTypeError(f"{side} must be a TimeInterval or TimePoint, got {type(x).__name__}")
        if x.lo <= NEG_INF or x.hi >= POS_INF or x.hi <= x.lo:
            raise TimeParseError(f"Allen relations need a finite, non-empty interval; {side}={x}")
    a0, a1, b0, b1 = a.lo, a.hi, b.lo, b.hi
    if a1 < b0:
        return "before"
    if b1 < a0:
        return "after"
    if a1 == b0:
        return "meets"
    if b1 == a0:
        return "met_by"
    if a0 == b0 and a1 == b1:
        return "equals"
    if a0 == b0:
        return "starts" if a1 < b1 else "started_by"
    if a1 == b1:
        return "finishes" if a0 > b0 else "finished_by"
    if b0 < a0 and a1 < b1:
        return "during"
    if a0 < b0 and b1 < a1:
        return "contains"
    return "overlaps" if a0 < b0 else "overlapped_by"


FILTER_TYPES = ("in/on", "before", "after", "between")


def _norm_type(kind: str) -> str:
    k = str(kind).strip().lower().replace(" ", "")
    aliases = {"in/on": "in/on", "in": "in/on", "on": "in/on", "inon": "in/on"}
    k = aliases.get(k, k)
    if k not in FILTER_TYPES:
        raise TimeParseError(f"unknown temporal filter type {kind!r}; expected one of {FILTER_TYPES}")
    return k


def temporal_mask(
    lo: np.ndarray,
    hi: np.ndarray,
    begin_time: str | TimePoint = "-inf",
    end_time: str | TimePoint = "inf",
    type: str = "in/on",
) -> np.ndarray:
    """Which events pass a TempTool-style temporal filter.

    Events cover ``[lo, hi)`` minutes (points and intervals alike). With
    ``B = parse_time(begin_time)`` and ``E = parse_time(end_time)``:

    - ``"in/on"`` and ``"between"``: the event overlaps ``[B.lo, E.hi)``; for a
      single date ``B == E`` this is "happened in/on that date" at its granularity.
    - ``"before"``: the event is over before ``E`` starts (``hi <= E.lo``) and does
      not start before ``B`` (usually ``"-inf"``).
    - ``"after"``: the event starts once ``B`` is over (``lo >= B.hi``) and ends by
      ``E.hi`` (usually ``"inf"``).

    Parameters
    ----------
    lo, hi : numpy.ndarray
        ``int64`` arrays of the events' first minute and the minute after their last.
    begin_time, end_time : str or TimePoint
        Window bounds; ``"-inf"``/``"inf"`` leave a side open.
    type : str
        One of :data:`FILTER_TYPES`.

    Returns
    -------
    numpy.ndarray
        Boolean mask over the events.

    Raises
    ------
    TimeParseError
        For an unparsable bound or unknown ``type``.
    IntervalOrderError
        When the window's begin lies after its end for ``in/on`` or ``between``.
    """
    kind = _norm_type(type)
    b, e = parse_time(begin_time), parse_time(end_time)
    lo = np.asarray(lo)
    hi = np.asarray(hi)
    if kind in ("in/on", "between"):
        if b.lo >= e.hi and not (b.is_inf and e.is_inf and b.lo < e.lo):
            raise IntervalOrderError(f"time window begins after it ends: begin={b}, end={e}")
        return (lo < e.hi) & (hi > b.lo)
    if kind == "before":
        return (hi <= e.lo) & (lo >= b.lo)
    return (lo >= b.hi) & (hi <= e.hi)
