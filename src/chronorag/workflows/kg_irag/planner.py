"""The no-LLM LLM1_Init: a rule-based parser from a question to a retrieval plan.

It reads the place (code, display name or one of the spec's ``place_aliases``), the event (rule
name or alias), the anchor time (``2013-03-05 14:00``, ``2013-03-05T14:00``, ``2013-03-05 from 2 pm``,
``March 5, 2013 at 14:00``, ``Jul 4 2013 5pm``, ``5 March 2013``, ``the 5th of March, 2013``,
``03/25/2013``, ``2013-03-05`` / ``March 5, 2013`` for daily data; a clock time written apart from
the date, ``on 2013-03-05 at 9``, ``9am``, ``noon``, ``2 in the afternoon``, takes the date's day),
the duration (``for 2 hours``, ``2-hour``, ``90-minute``, ``the 3 hours from``, or a window:
``09:00-13:00``, ``from 9am to 1pm``, ``between 2 and 5 pm``, 24-hour bare hours ``from 13 to 15``,
``from 9h to 11h``, ``between X and Y``), the horizon
(``no more than 12 hours``, ``within 10 days``, ``at most 12 hours``), the question
type (Q2 latest-before, Q3 earliest-after: a question asking for a time, read by
which way it looks from the plan; else Q1) and the Q1 polarity (``avoid`` when the event is
negated just before it is named: "without rain", "free of rain"; else ``detect``) (``avoid``:
yes = no event; ``detect``: yes = the event occurs). The event's name may be inflected ("raining",
"foggy"). "Tomorrow" and other relative days are refused with the records' date range: records
have no "now" to count from. What could be read two ways is refused with the unambiguous form:
``03/12/2013`` (month or day first), ``from 9 to 5`` (no am/pm), ``2-3 hours``; an hour over 12
with am/pm (``13:00 am``) is refused as impossible.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass
from typing import Any

from chronorag.errors import DataFormatError
from chronorag.graphs.time import minutes_to_iso, parse_time
from chronorag.workflows.kg_irag.record_kg import RecordKG

__all__ = ["Plan", "parse_question", "plan_from_dict"]

_MONTHS = {m: i + 1 for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july",
                                              "august", "september", "october", "november", "december"))}
_MON_RE = "|".join(list(_MONTHS) + [m[:3] for m in _MONTHS])

_ISO_DT = re.compile(r"(\d{4}-\d{2}-\d{2})(?:(?:[T ]|,?\s+(?:at|from)\s+)(\d{1,2}):(\d{2})(?:\s*(am|pm)\b)?)?", re.I)
# a clock time written right after a date ("March 5, 2013 at 14:00", "5 March 2013, 2pm")
_DATE_CLOCK = r"(?:,?\s*(?:at|from|,)?\s*(?P<h>\d{1,2})(?::(?P<mi>\d{2}))?\s*(?P<ap>am|pm)?(?![\w-]))?"
_ORD = r"(?:st|nd|rd|th)?"
# dates written with a month name, month first ("March 5, 2013", "Mar 5th 2013") or day first
# ("5 March 2013", "the 5th of March, 2013"), and numeric ones ("03/25/2013"; read only when
# the day is unambiguous)
_NAMED_DT = (re.compile(rf"\b(?P<mon>{_MON_RE})\.?\s+(?P<day>\d{{1,2}}){_ORD},?\s+(?P<year>\d{{4}})" + _DATE_CLOCK, re.I),
             re.compile(rf"\b(?:the\s+)?(?P<day>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<mon>{_MON_RE})\.?,?\s+(?P<year>\d{{4}})"
                        + _DATE_CLOCK, re.I),
             re.compile(r"(?<![\d/.-])(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.](?P<year>\d{4})(?![\d/-]|\.\d)" + _DATE_CLOCK,
                        re.I))
_SPAN = r"(\d+)[\s-]*(hours?|hrs?|h|days?|d|minutes?|mins?)\b"
_HORIZON = re.compile(rf"(?:no more than|at most|within(?: the next)?|up to)\s+{_SPAN}", re.I)
_DURATION = re.compile(_SPAN, re.I)
_Q2 = re.compile(r"\b(latest|leave early|earlier start|looking back)\b", re.I)
_Q3 = re.compile(r"\b(earliest|postpone|soonest|looking ahead|later start)\b", re.I)
_DETECT = re.compile(r"(?:^|[.;:!?]\s+)\s*(will there be|is there going to be|is (?:there )?any|does any|was there|"
                     r"will it|is it going to|does it)\b", re.I)


@dataclass
class Plan:
    """A parsed question: what Psi and the verifier need.

    Times are minutes since 0001-01-01 (see :mod:`chronorag.graphs.time`).
    """

    type: str
    place: str
    event: str
    anchor: int
    duration: int
    horizon: int
    polarity: str = "avoid"
    step: int = 60

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["anchor_iso"] = minutes_to_iso(self.anchor)
        return d

    def describe(self) -> str:
        return (f"{self.type} at {self.place}: {self.event} in [{minutes_to_iso(self.anchor)}, "
                f"+{self.duration} min), horizon {self.horizon} min, polarity {self.polarity}")


def plan_from_dict(d: dict[str, Any], kg: RecordKG) -> Plan:
    """Validate a plan dict (from the state or an LLM) against the KG.

    Raises
    ------
    DataFormatError
        Naming the bad field (unknown place or event, unparseable time, bad type).
    """
    if not isinstance(d, dict):
        raise DataFormatError(f"plan must be an object, got {d!r}")
    qtype = str(d.get("type", "")).lower().strip()
    if qtype not in ("q1", "q2", "q3"):
        raise DataFormatError(f"plan type must be q1, q2 or q3, got {d.get('type')!r}")
    place = _match_place(str(d.get("place", "")), kg)
    if place is None:
        raise DataFormatError(f"plan place {d.get('place')!r} is not one of {kg.places}")
    event = kg.spec.rule(str(d.get("event", ""))).name
    anchor = d.get("anchor")
    if isinstance(anchor, str):
        anchor = parse_time(anchor.replace("Z", "")).lo
    if not isinstance(anchor, int):
        raise DataFormatError(f"plan anchor must be a time, got {d.get('anchor')!r}")
    step = kg.cadence_minutes
    dur = int(d.get("duration") or 0)
    hz = int(d.get("horizon") or 0)
    if dur <= 0:
        raise DataFormatError(f"plan duration must be positive minutes, got {d.get('duration')!r}")
    if qtype != "q1" and hz <= 0:
        raise DataFormatError(f"a {qtype} plan needs a positive horizon in minutes, got {d.get('horizon')!r}")
    pol = str(d.get("polarity") or "avoid")
    if pol not in ("avoid", "detect"):
        raise DataFormatError(f"plan polarity must be avoid or detect, got {pol!r}")
    return Plan(qtype, place, event, int(anchor), dur, hz, pol, step)


def _match_place(text: str, kg: RecordKG) -> str | None:
    places = _places(text, kg)
    return places[0] if places else None


def _mentions(text: str, names: list[tuple[str, str, re.Pattern[str]]]) -> list[tuple[int, str]]:
    """``(position, value)`` of each value's first mention in ``text``, in order of position.

    ``names`` holds ``(name, value, pattern)``; longer names are matched first, and a match inside
    a longer one does not count ("strong winds" is one mention, not also "strong wind")."""
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for _name, value, pattern in sorted(names, key=lambda x: -len(x[0])):
        for m in pattern.finditer(text):
            if not any(a < m.end() and m.start() < b for a, b in taken):
                taken.append((m.start(), m.end()))
                found.append((m.start(), value))
    first: dict[str, int] = {}
    for pos, value in sorted(found):
        first.setdefault(value, pos)
    return sorted((pos, value) for value, pos in first.items())


def _places(text: str, kg: RecordKG) -> list[str]:
    """Every place the text names, in order of first mention (codes and display names)."""
    names = []
    for p in kg.places:
        for name in (p, *([kg.spec.place_names[p]] if p in kg.spec.place_names else []),
                     *kg.spec.place_aliases.get(p, ())):
            # one- and two-letter codes (A, B) match in their own case only, so the article "a" is
            # not place "A"; "jfk" typed in lower case is JFK
            names.append((name, p, re.compile(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])",
                                              0 if len(name) <= 2 else re.I)))
    return [p for _, p in _mentions(text, names)]


def _event_re(name: str) -> str:
    """A pattern for an event name with its last word inflected: "rain" also matches "raining",
    "rained", "rainy"; "fog" also matches "foggy"."""
    return rf"\b{re.escape(name.lower())}(?:s|es|ed|ing|y|[a-z](?:y|ing|ed))?\b"


def _events(text: str, kg: RecordKG) -> list[tuple[int, str]]:
    """Every event the text names, as (position, rule name), one per rule, in order."""
    names = [(n, r.name, re.compile(_event_re(n))) for r in kg.spec.rules for n in (r.name, *r.aliases)]
    return _mentions(text.lower(), names)


# words that turn "rain" into "no rain" when they come shortly before the event's name
_NEGATED = re.compile(r"\b(?:avoid(?:ing)?|without|free\s+of|clear\s+of|not|no|never|dodge|escape|spared?|dry)\b", re.I)


def _polarity(q: str, kg: RecordKG) -> str:
    """Q1 polarity: ``avoid`` (yes = no event) when the event is negated just before it is named
    ("without rain", "free of rain", "not get any rain"), else ``detect`` (yes = the event occurs)."""
    low = q.lower()
    names = [a.lower() for r in kg.spec.rules for a in (r.name, *r.aliases)]
    pos = [m.start() for n in names for m in re.finditer(_event_re(n), low)]
    if not pos:
        return "avoid" if not _DETECT.search(q) else "detect"
    p = min(pos)
    return "avoid" if _NEGATED.search(q[max(0, p - 40):p]) else "detect"


def _span_minutes(n: str, unit: str) -> int:
    u = unit.lower()
    return int(n) * (1440 if u.startswith("d") else 1 if u.startswith("min") else 60)


# a clock time on its own ("09:00", "13:30", "9am", "1 pm", "noon"), read on the day of the date
# written before it (or the question's only date): "2013-01-05 09:00-13:00", "between 9am and 1pm"
_DAYPART = r"in\s+the\s+(?:morning|afternoon|evening)|at\s+night"
_JOIN = r"(?:-|\u2013|\u2014|to|till|until|and|through)"
_CLOCK = re.compile(r"(?<![\d:.])(?:(\d{1,2}):(\d{2})(?:\s*(am|pm)\b)?|(\d{1,2})\s*(am|pm)\b|(noon|midday|midnight)\b|"
                    r"(?<=\bat\s)(\d{1,2})(?:\s*o'?clock)?(?!\s*(?:hours?|hrs?|h\b|days?|d\b|minutes?|mins?|%|[\d:.,/-]))"
                    rf"(?!\s*{_JOIN}\s*\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm|{_DAYPART})\b)|"
                    # a bare hour whose part of the day is written after it ("5 in the afternoon")
                    rf"(\d{{1,2}})(?:\s*o'?clock)?(?=\s+(?:{_DAYPART}))|"
                    # the first hour of a window that writes am/pm once ("2 and 5 pm", "9-11am")
                    rf"(\d{{1,2}})(?=\s*{_JOIN}\s*(\d{{1,2}})(?::\d{{2}})?\s*(am|pm|{_DAYPART})\b))"
                    r"(?![\d:])", re.I)
# two bare hours as a window, with no am/pm or minutes to read them by ("from 9 to 5")
_BARE_HOURS = re.compile(rf"\b(?:from|between)\s+(?:1[0-2]|0?[1-9])\s*{_JOIN}\s*(?:1[0-2]|0?[1-9])\b(?!\s*(?::|\.\d|"
                         rf"am\b|pm\b|o'?clock|{_DAYPART}|hours?|hrs?|h\b|days?|d\b|minutes?|mins?|%|[/-]|"
                         rf"(?:st|nd|rd|th)\b|(?:of\s+)?(?:{_MON_RE})\b))", re.I)
# a window of two bare hours on the 24-hour clock ("from 13 to 15", "between 9 and 17", "from 13h to 15h"):
# read as HH:00 when an hour is over 12 or both are written with "h"; not days ("from 13 to 15 March")
_HOURS_24 = re.compile(rf"\b(from|between)\s+([01]?\d|2[0-4])(h)?\s*({_JOIN})\s*([01]?\d|2[0-4])(h)?\b(?!\s*(?::|\.\d|"
                       rf"am\b|pm\b|o'?clock|{_DAYPART}|hours?|hrs?|days?|d\b|minutes?|mins?|%|[/-]|"
                       # a measurement, not a time: "between 10 and 20 mm", "15 to 20 mph"
                       rf"(?:mm|cm|m|km|in|inch(?:es)?|ft|feet|mi|miles?|mph|kph|km/?h|kmh|knots?|kts?|°|deg(?:rees?)?|"
                       rf"f|c|mb|hpa|percent|per\s*cent|meters?|metres?)\b|°|"
                       rf"(?:of\s+)?(?:{_MON_RE})\b))", re.I)


def _clock_24h(q: str) -> str:
    """``q`` with its 24-hour windows of bare hours written as clock times ("from 13 to 15" is
    "from 13:00 to 15:00"); "from 9 to 5" is left for :data:`_BARE_HOURS` to refuse."""
    def one(m: re.Match[str]) -> str:
        h1, h2 = int(m.group(2)), int(m.group(5))
        if not (max(h1, h2) > 12 or (m.group(3) and m.group(6))):
            return m.group(0)
        return f"{m.group(1)} {h1:02d}:00 {m.group(4)} {h2:02d}:00"
    return _HOURS_24.sub(one, q)


# what joins two clock times into a window: "09:00-13:00", "from 9am to 1pm", "between X and Y", "X until Y",
# "9 in the morning to 1 in the afternoon"
_RANGE_JOIN = re.compile(rf"^\s*(?:o'?clock\s+)?(?:(?:{_DAYPART})\s+)?{_JOIN}\s*$", re.I)
# relative days: the records have no "now" to count from
_RELATIVE_DAY = re.compile(r"\b(today|tonight|tomorrow|yesterday|this (?:morning|afternoon|evening|week)|"
                           r"next (?:week|monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b", re.I)


_MORNING = re.compile(r"am\b|in\s+the\s+morning", re.I)


def _hour_24(h: int, meridiem: str | None, written: str) -> int:
    """Hour ``h`` on the 24-hour clock: as written when no am/pm or part of the day follows it;
    with one ("pm", "in the afternoon", "at night"), an hour of 1-12 in that half of the day (the
    one place where chronorag turns am/pm into hours)."""
    if not meridiem:
        return h
    if not 1 <= h <= 12:
        raise DataFormatError(f"impossible clock time {written!r} in the question")
    return h % 12 + (0 if _MORNING.match(meridiem) else 12)


def _shared_meridiem(h: int, mi: int, h2: int, meridiem: str, written: str) -> int:
    """Minutes after midnight of the first hour of a window that writes am/pm once, after its
    second hour ("2 and 5 pm" is 14:00): that half of the day, or the other one when it would put
    the first hour after the second ("11 to 1 pm" is 11:00)."""
    if not (1 <= h <= 12 and 1 <= h2 <= 12):
        raise DataFormatError(f"impossible clock time {written!r} before {meridiem!r} in the question")
    hour = _hour_24(h, meridiem, written)
    return ((hour + 12) % 24 if h % 12 > h2 % 12 else hour) * 60 + mi


def _clock_minutes(m: re.Match[str]) -> int:
    """Minutes after midnight of a :data:`_CLOCK` match ("at 2 in the afternoon" is 14:00)."""
    if m.group(6):
        return 0 if m.group(6).lower() == "midnight" else 12 * 60
    if m.group(9):  # "2 and 5 pm": the first hour takes the second's am/pm
        return _shared_meridiem(int(m.group(9)), 0, int(m.group(10)), m.group(11), m.group(0))
    h = int(m.group(1) or m.group(4) or m.group(7) or m.group(8))
    mi = int(m.group(2) or 0)
    ap = m.group(3) or m.group(5)
    if m.group(1) and not ap:  # "between 1:30 and 3 pm"
        w = re.match(rf"\s*{_JOIN}\s*(\d{{1,2}})(?::\d{{2}})?\s*(am|pm|{_DAYPART})\b", m.string[m.end():], re.I)
        if w is not None and 1 <= h <= 12:
            return _shared_meridiem(h, mi, int(w.group(1)), w.group(2), m.group(0))
    if not ap and (dp := re.match(rf"\s*(?:o'?clock\s+)?({_DAYPART})\b", m.string[m.end():], re.I)) is not None:
        ap = dp.group(1)  # "at 2 in the afternoon"
    h = _hour_24(h, ap, m.group(0))
    if h > 23 or mi > 59:
        raise DataFormatError(f"impossible clock time {m.group(0)!r} in the question")
    return h * 60 + mi


def _times(text: str) -> list[tuple[int, int, int]]:
    """All time mentions as (start, minute, end) in the question, in order.

    Dates with an optional clock time first; then clock times standing alone, each read on
    the day of the closest date written before it (or the first date when none precedes).
    """
    dated = _dated_times(text)
    out = [(a, t, e) for a, t, e, _c in dated]
    day_only = set()
    for m in _CLOCK.finditer(text):
        if any(a <= m.start() < e for a, _t, e, _c in dated) or not dated:
            continue
        k = max([i for i, d in enumerate(dated) if d[0] < m.start()], default=0)
        out.append((m.start(), dated[k][1] // 1440 * 1440 + _clock_minutes(m), m.end()))
        if not dated[k][3]:  # "on 2013-01-05 between 09:00 and 13:00": the date gives the day only
            day_only.add(dated[k][0])
    return sorted(x for x in out if x[0] not in day_only)


def _named_date(m: re.Match[str]) -> dt.datetime:
    """The day of a :data:`_NAMED_DT` match; a numeric date whose day and month could swap
    ("03/12/2013") is refused, naming both readings."""
    text = m.group(0)[:m.end("year") - m.start()].strip()
    if "mon" in m.re.groupindex:
        mon = _MONTHS.get(m.group("mon").lower().rstrip(".")) or next(
            v for k, v in _MONTHS.items() if k.startswith(m.group("mon").lower()[:3]))
        day = int(m.group("day"))
    else:
        a, b = int(m.group("a")), int(m.group("b"))
        if a <= 12 and b <= 12 and a != b:
            raise DataFormatError(f"the date {text!r} reads as month {a} day {b} or as day {a} month {b}: write it "
                                  f"as {m.group('year')}-{a:02d}-{b:02d} or {m.group('year')}-{b:02d}-{a:02d}")
        mon, day = (a, b) if a <= 12 else (b, a)
    try:
        return dt.datetime(int(m.group("year")), mon, day)
    except ValueError as exc:
        raise DataFormatError(f"impossible date {text!r} in the question: {exc}") from None


def _dated_times(text: str) -> list[tuple[int, int, int, bool]]:
    """Date mentions, with the clock time written right after them, as (start, minute, end,
    has a clock time)."""
    out = []
    for m in _ISO_DT.finditer(text):
        try:
            t = dt.datetime.fromisoformat(m.group(1))
        except ValueError as exc:
            raise DataFormatError(f"impossible date {m.group(1)!r} in the question: {exc}") from None
        if m.group(2):
            h = _hour_24(int(m.group(2)), m.group(4), m.group(0))
            try:
                t = t.replace(hour=h, minute=int(m.group(3)))
            except ValueError:
                raise DataFormatError(f"impossible time {m.group(0)!r} in the question") from None
        out.append((m.start(), parse_time(t).lo, m.end(), bool(m.group(2))))
    for rx in _NAMED_DT:
        for m in rx.finditer(text):
            if any(a <= m.start() < e for a, _t, e, _c in out):
                continue
            t = _named_date(m)
            tail = text[m.end("year"):m.end()].lower()
            # a bare number after the date ("May 5, 2013 3 hours") is not a clock time
            clock = bool(m.group("h") and (m.group("mi") or m.group("ap") or re.search(r"\b(at|from)\b", tail)))
            after = text[m.end():]
            ap = m.group("ap")
            if clock and not ap and not m.group("mi"):
                if re.match(rf"\s*{_JOIN}\s*\d{{1,2}}", after, re.I):
                    clock = False  # "5 March 2013 from 2 to 5 pm": the window's hours are read as clock times
                elif (dp := re.match(rf"\s*(?:o'?clock\s+)?({_DAYPART})\b", after, re.I)) is not None:
                    ap = dp.group(1)  # "at 2 in the afternoon"
            if clock:
                h = _hour_24(int(m.group("h")), ap, m.group(0).strip())
                try:
                    t = t.replace(hour=h, minute=int(m.group("mi") or 0))
                except ValueError:
                    raise DataFormatError(f"impossible time {m.group(0).strip()!r} in the question") from None
            out.append((m.start(), parse_time(t).lo, m.end() if clock else m.end("year"), clock))
    return sorted(out)


def _window(q: str, times: list[tuple[int, int, int]]) -> int:
    """Minutes between the first two times when the question writes them as a window
    ("09:00-13:00", "from 9am to 1pm", "between X and Y"); 0 otherwise. An end at or before
    the start on the same day is read as the next day ("22:00-02:00")."""
    if len(times) < 2:
        return 0
    (_a0, t0, e0), (a1, t1, _e1) = times[0], times[1]
    joined = _RANGE_JOIN.match(q[e0:a1]) is not None
    if not joined and not (re.search(r"\bbetween\b", q[:a1], re.I) and t1 > t0):
        return 0
    if t1 <= t0 and t1 // 1440 == t0 // 1440:
        t1 += 1440
    return t1 - t0


# a question asking for a time, and which way from the plan it looks (generic English, no template words)
_ASKS_TIME = re.compile(r"^\s*when\b|\bwhen\s+(?:could|can|should|would|is|will)\b|"
                        r"\bwhat(?:'s|\s+is|\s+was|\s+would\s+be)?\s+(?:the\s+)?(?:\w+\s+){0,3}(?:time|hour|start|slot|moment)\b|"
                        r"\bwhich\s+(?:\w+\s+)?(?:time|hour|start|slot)\b|\bhow\s+(?:late|early|soon)\b", re.I)
_LATER = re.compile(r"\b(?:after(?:wards)?|later|ahead|postpone|delay|push\s+back|next|following|first|earliest|soonest)\b", re.I)
_EARLIER = re.compile(r"\b(?:before|earlier|back|prior|previous|last|latest|leave\s+early|move\s+up)\b", re.I)


def _qtype(q: str) -> str:
    """Q2 (latest earlier start), Q3 (earliest later start) or Q1 (a yes/no check)."""
    if _Q2.search(q):
        return "q2"
    if _Q3.search(q):
        return "q3"
    if not _ASKS_TIME.search(q):
        return "q1"
    later, earlier = len(_LATER.findall(q)), len(_EARLIER.findall(q))
    if later == earlier:
        raise DataFormatError("the question asks for a time but not whether earlier or later than the plan")
    return "q3" if later > earlier else "q2"


# what a plan cannot hold: (pattern, what it is); each is refused, never dropped
_UNREAD = (
    (re.compile(r"\bhow\s+(?:many|much|long|often)\b", re.I),
     "a count or an amount ({m!r}), but a plan answers yes/no or gives a start time"),
    (re.compile(r"\b(?:more|less|longer|shorter|greater|fewer|worse|better)\s+than\b|"
                r"\b(?:over|under|above|below|exceeding|at\s+least)\s+\d", re.I),
     "a threshold ({m!r}), but the event's rule sets its own"),
    (re.compile(r"\b(?:the\s+)?(?:day|night|morning|evening|week)\s+(?:after|before)\b|"
                r"\b(?:the\s+)?(?:next|following|previous|preceding)\s+(?:day|morning|evening|night)\b", re.I),
     "a date given from another date ({m!r}): write the date itself"),
    (_BARE_HOURS, "clock times without am/pm ({m!r}): write them as e.g. 09:00-17:00 or 9am to 5pm"),
    (re.compile(r"(?:\bbetween\s+\d+\s*and|(?<![\d:/.-])\d+\s*(?:-|\u2013|to|or))\s*\d+\s*"
                r"(?:hours?|hrs?|h|days?|d|minutes?|mins?)\b", re.I),
     "a range of durations ({m!r}): give one duration"),
)
_INTENSITY = re.compile(r"\b(?:heavy|heavily|light|lightly|torrential|severe|extreme|slight|moderate|intense|"
                        r"freezing|little|bit\s+of|lots?\s+of)\s+(?:of\s+)?$", re.I)


def _refuse_unread(q: str, event_at: int) -> None:
    """Refuse, naming it, a part of the question a plan cannot hold: a count, a threshold, a date
    given from another date, or an intensity of the event ("heavy rain" when rain is any rain)."""
    horizons = [(h.start(), h.end()) for h in _HORIZON.finditer(q)]  # "no more than 12 hours" is the horizon
    for pat, what in _UNREAD:
        for m in pat.finditer(q):
            if not any(a <= m.start() < b for a, b in horizons):
                raise DataFormatError("the question has " + what.format(m=m.group(0)))
    inten = _INTENSITY.search(q[max(0, event_at - 30):event_at])
    if inten:
        raise DataFormatError(f"the question asks for an intensity ({inten.group(0).strip()!r}) that the event's rule "
                              "does not read: ask whether the event happens at all")


def parse_question(question: str, kg: RecordKG) -> Plan:
    """Parse a question into a :class:`Plan` without an LLM.

    Raises
    ------
    DataFormatError
        Naming what could not be found (place, event, time, duration, horizon).
    """
    if not isinstance(question, str) or not question.strip():
        raise DataFormatError(f"question must be a non-empty string, got {question!r}")
    q = _clock_24h(" ".join(question.split()))
    places = _places(q, kg)
    if not places:
        other = sorted({*(kg.spec.place_names[p] for p in kg.places if p in kg.spec.place_names),
                        *(a for p in kg.places for a in kg.spec.place_aliases.get(p, ()))})
        raise DataFormatError(f"no known place in the question; places: {kg.places}"
                              + (f" or {other}" if other else ""))
    if len(places) > 1:
        raise DataFormatError(f"the question names {len(places)} places ({', '.join(places)}) and one plan checks "
                              "one place: ask about each place separately")
    place = places[0]
    events = _events(q, kg)
    if not events:
        raise DataFormatError(f"no known event in the question; events: {[r.name for r in kg.spec.rules]}")
    if len(events) > 1:
        raise DataFormatError(f"the question names {len(events)} events ({', '.join(e for _, e in events)}) and one "
                              "plan checks one event: ask about each event separately")
    event = events[0][1]
    _refuse_unread(q, events[0][0])
    times = _times(q)
    if not times:
        rel = _RELATIVE_DAY.search(q)
        if rel:
            lo, hi = kg.time_range()
            raise DataFormatError(f"{rel.group(0)!r} needs a date: these records have no 'now' to count from "
                                  f"(they cover {minutes_to_iso(lo)[:10]} .. {minutes_to_iso(hi)[:10]}); "
                                  "write the date, e.g. 2013-03-05 09:00-13:00")
        raise DataFormatError("no date or time in the question (use e.g. 2013-03-05 14:00 or March 5, 2013 at 14:00)")
    anchor = times[0][1]
    qtype = _qtype(q)
    horizon = 0
    hm = _HORIZON.search(q)
    if hm:
        horizon = _span_minutes(hm.group(1), hm.group(2))
    dur = _window(q, times)
    daily = kg.cadence_minutes >= 1440
    if dur and daily:  # "between 2012-01-11 and 2012-01-14" for daily records: the 14th too
        dur += kg.cadence_minutes
    if not dur:
        for m in _DURATION.finditer(q):
            if hm and hm.start() <= m.start() < hm.end():
                continue
            dur = _span_minutes(m.group(1), m.group(2))
            break
    if dur <= 0 and daily and len(times) == 1 and qtype == "q1":
        dur = kg.cadence_minutes  # "Did it snow in Seattle on 2012-01-17?": that day
    if dur <= 0:
        raise DataFormatError("no trip duration in the question (e.g. 'for 2 hours', 'between X and Y')")
    if qtype != "q1" and horizon <= 0:
        raise DataFormatError("no search horizon in the question (e.g. 'no more than 12 hours')")
    pol = _polarity(q, kg) if qtype == "q1" else "avoid"
    return Plan(qtype, place, event, anchor, dur, horizon, pol, kg.cadence_minutes)
