"""Temporal question parser: question text -> a typed skeleton of a tool program.

Pure text processing (regular expressions over question *forms*, no KG access). The
skeleton says what is asked and under which temporal condition; a grounder
(:mod:`chronorag.workflows.temptool.reasoner`) then finds the entity and relation
phrases in the clauses against the KG vocabulary and runs the tools.

Question forms handled (MultiTQ's six types and the usual paraphrases):

- target: ``who``/``whom``/``which <noun>``/``what <noun>`` -> an entity;
  ``when``/``what date``/``which day`` -> a day, ``which|what month`` -> a month,
  ``which|what year`` -> a year.
- ordinal: ``first``/``earliest`` and ``last``/``latest``/``most recent``.
- constraint: ``in|on|during <time>``, ``before|after|since|until|by <time>``,
  ``between <time> and <time>``, ``before|after <anchor phrase>`` (an anchor event),
  ``(in|on) the same day|month|year as|of|with <anchor phrase>``.
- qtype: ``equal``, ``before_after``, ``first_last``, ``equal_multi``, ``after_first``,
  ``before_last`` derived from the above, as MultiTQ labels them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from chronorag.errors import TimeParseError
from chronorag.graphs.time import Granularity, TimePoint, parse_time_mention

__all__ = ["TemporalQuestion", "TimeMention", "parse_question", "find_time_mentions", "QTYPES"]

QTYPES = ("equal", "before_after", "first_last", "equal_multi", "after_first", "before_last")

_MON = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
        r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_TIME_PATTERNS = [
    r"\d{4}-\d{2}-\d{2}", r"\d{4}-\d{2}",
    rf"\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+{_MON},?\s+\d{{4}}",
    rf"{_MON}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}",
    rf"{_MON},?\s+(?:of\s+)?\d{{4}}",
    r"(?:the\s+year\s+(?:of\s+)?)?\b(?:19|20)\d{2}\b",
]
_TIME_RE = re.compile("(?:" + "|".join(f"(?:{p})" for p in _TIME_PATTERNS) + ")", re.I)
_PREP_RE = re.compile(r"(?:\b(in|on|during|before|after|since|until|by|from|prior to|between|and|at)\s+(?:the\s+)?)$", re.I)


@dataclass(frozen=True)
class TimeMention:
    """A time written in the question, with the preposition before it."""

    text: str
    point: TimePoint
    prep: str
    start: int
    end: int


@dataclass
class TemporalQuestion:
    """The skeleton of a temporal question.

    Attributes
    ----------
    text : str
        The question.
    target : {"entity", "time"}
        What is asked for.
    granularity : Granularity or None
        For a time target: the answer's granularity.
    ordinal : {"first", "last"} or None
        "the first/last to ..." .
    constraint : {"none", "in", "before", "after", "between", "same"}
        The temporal condition.
    times : list of TimeMention
        Times written in the question.
    same_granularity : Granularity or None
        For ``constraint == "same"``: day, month or year.
    anchor : str or None
        Anchor phrase of ``before/after <anchor>`` or ``same ... as <anchor>``.
    main : str
        The main clause with times, the anchor clause and question scaffolding removed.
    subject_cue : bool
        True when the wording puts the known entity before an auxiliary verb
        ("which country did X visit"): X is the subject and the answer the object.
    passive : bool
        "was ... by X" wording: X is the subject.
    qtype : str
        One of :data:`QTYPES`.
    invalid_times : list of str
        Date-like mentions that are not valid dates (``"2014-13-45"``); a caller must
        report them rather than answer over all time.
    """

    text: str
    target: str = "entity"
    granularity: Granularity | None = None
    ordinal: str | None = None
    constraint: str = "none"
    times: list[TimeMention] = field(default_factory=list)
    same_granularity: Granularity | None = None
    anchor: str | None = None
    main: str = ""
    subject_cue: bool = False
    passive: bool = False
    qtype: str = "equal"
    invalid_times: list[str] = field(default_factory=list)


# a year outside 1900-2099 counts only right after a time preposition ("in 1850")
_OTHER_YEAR = re.compile(r"\b(?:in|on|during|before|after|since|until|by|between|from|and|year)\s+"
                         r"(?:the\s+year\s+(?:of\s+)?)?((?:1\d|2[1-9])\d{2})\b(?!-)", re.I)


def find_time_mentions(text: str, *, invalid: list[str] | None = None) -> list[TimeMention]:
    """All dates, months and years written in ``text``, left to right.

    Years 1900-2099 are recognised anywhere; other four-digit years only after a time
    preposition ("in 1850"). A date-like mention that is not a valid date
    ("2014-13-45") is appended to ``invalid`` when a list is given (never silently
    dropped by :func:`parse_question`).
    """
    out: list[TimeMention] = []
    matches = [(m.start(), m.end(), m.group(0)) for m in _TIME_RE.finditer(text)]
    taken = [(a, b) for a, b, _ in matches]
    for m in _OTHER_YEAR.finditer(text):
        a, b = m.start(1), m.end(1)
        if not any(a < y and x < b for x, y in taken):
            matches.append((a, b, m.group(1)))
    for bad in re.finditer(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{4}-\d{1,2}\b", text):
        if not any(x <= bad.start() and bad.end() <= y for x, y in taken):
            matches.append((bad.start(), bad.end(), bad.group(0)))
    for start0, end0, raw in sorted(matches):
        core = re.sub(r"^the\s+year\s+(?:of\s+)?", "", raw, flags=re.I)
        if re.fullmatch(r"\d{4}-\d{1,2}(?:-\d{1,2})?", core):  # "2013-07-2" is 2013-07-02
            core = "-".join([core[:4]] + [p.zfill(2) for p in core[5:].split("-")])
        try:
            tp = parse_time_mention(core)
        except TimeParseError:
            if invalid is not None and re.search(r"\d", core):
                invalid.append(raw)
            continue
        pm = _PREP_RE.search(text[:start0])
        prep = pm.group(1).lower() if pm else ""
        start = pm.start() if pm else start0
        out.append(TimeMention(text=raw, point=tp, prep=prep, start=start, end=end0))
    return out


_TIME_TARGET = [
    (re.compile(r"\b(?:what|which)\s+year\b|\bin\s+what\s+year\b|\byear\s+(?:did|was|were|when)\b", re.I), Granularity.YEAR),
    (re.compile(r"\b(?:what|which)\s+month\b|\b(?:exact|specific|particular)\s+month\b|\bmonth\s+(?:did|was|when|in which)\b", re.I), Granularity.MONTH),
    (re.compile(r"^\s*when\b|\b(?:what|which)\s+(?:day|date|time)\b|\bexact\s+(?:date|day|time)\b|\bwhen\s+(?:did|was|were|does|has|had)\b", re.I), Granularity.DAY),
]
_FIRST = re.compile(r"\b(?:first|earliest|initial(?:ly)?|for the first time)\b", re.I)
_LAST = re.compile(r"\b(?:last|latest|most recent(?:ly)?|final(?:ly)?|for the last time)\b", re.I)
_SAME = re.compile(r"\b(?:in|on|during|at)?\s*the\s+same\s+(day|month|year|time)\b\s*(?:as|of|with|that|when)?\s*", re.I)
_ANCHOR_CUT = re.compile(
    r"\s*,\s*|\s+(?=(?:who|whom|which|what|when|with whom|to whom|with which|to which|from which|by whom)\b)"
    r"|\s+(?:did so|did|does|do|had|has|was|were)\s*$", re.I)
_AUX_SUBJ = re.compile(
    r"^(?:(?:with|to|from|for|by|against|on|about|at)\s+)?(?:who|whom|which\s+\w+|what\s+\w+)\s+(?:did|does|do|would|will|has|have|had|could|might|was|were|is)\s+(?!the\s+(?:first|last)\b)",
    re.I)
_PASSIVE = re.compile(r"\b(?:was|were|been|be|is|are)\s+(?:\w+\s+){0,2}?\w+ed\s+(?:\w+\s+){0,2}?by\b|\bby\s+whom\b", re.I)


def _strip(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip(" ,.?;:")


def parse_question(text: str) -> TemporalQuestion:
    """Parse a temporal question into a :class:`TemporalQuestion` skeleton.

    Raises
    ------
    ValueError
        For an empty or non-string question.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"question must be a non-empty string, got {text!r}")
    q = TemporalQuestion(text=text)
    s = " " + _strip(text.replace("\u00a0", " ")) + " "

    for pat, gran in _TIME_TARGET:
        if pat.search(s):
            q.target, q.granularity = "time", gran
            break
    if _FIRST.search(s):
        q.ordinal = "first"
    elif _LAST.search(s):
        q.ordinal = "last"

    # "the same day/month/year as X": anchor is the rest of that clause
    m = _SAME.search(s)
    if m:
        unit = m.group(1).lower()
        q.constraint = "same"
        q.same_granularity = {"day": Granularity.DAY, "month": Granularity.MONTH,
                              "year": Granularity.YEAR, "time": Granularity.DAY}[unit]
        rest = s[m.end():]
        cut = _ANCHOR_CUT.search(rest)
        anchor = rest[: cut.start()] if cut else rest
        q.anchor = _strip(anchor) or None
        s = s[: m.start()] + " " + (rest[cut.end():] if cut else "")

    # explicit times
    times = find_time_mentions(s, invalid=q.invalid_times)
    q.times = times
    if times and q.constraint == "none":
        preps = [t.prep for t in times]
        if len(times) >= 2 and ("between" in preps or "from" in preps):
            q.constraint = "between"
        elif preps[0] in ("before", "until", "by", "prior to"):
            q.constraint = "before"
        elif preps[0] in ("after", "since"):
            q.constraint = "after"
        else:
            q.constraint = "in"
    for t in sorted(times, key=lambda t: -t.start):
        s = s[: t.start] + " " + s[t.end:]

    # "before/after <anchor phrase>" with no explicit time there
    if q.constraint in ("none", "in") and q.anchor is None:
        m = re.search(r"\b(before|after|prior to|following)\s+", s, re.I)
        if m:
            word = m.group(1).lower()
            rest = s[m.end():]
            cut = _ANCHOR_CUT.search(rest)
            anchor = _strip(rest[: cut.start()] if cut else rest)
            anchor = re.sub(r"\s+(?:did so|did|does|had|has|did it)$", "", anchor, flags=re.I)
            if anchor:
                had_time = q.constraint == "in"
                q.constraint = "before" if word in ("before", "prior to") else "after"
                q.anchor = anchor
                s = s[: m.start()] + " " + (rest[cut.end():] if cut else "")
                if had_time:  # "after X ... in 2007": keep the time as a window too
                    pass

    s = _strip(s)
    q.subject_cue = bool(_AUX_SUBJ.search(s)) and q.target == "entity"
    q.passive = bool(_PASSIVE.search(s))
    q.main = s
    q.qtype = _qtype(q)
    return q


def _qtype(q: TemporalQuestion) -> str:
    if q.constraint == "same" or (q.constraint == "in" and q.ordinal and q.target == "entity"):
        return "equal_multi"
    if q.constraint in ("before", "after") and q.anchor is not None and q.ordinal:
        return "before_last" if q.constraint == "before" else "after_first"
    if q.constraint in ("before", "after"):
        return "before_after"
    if q.ordinal:
        return "first_last"
    return "equal"
