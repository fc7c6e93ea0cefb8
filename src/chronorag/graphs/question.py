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
  ``(in|on) the same day|month|year as|of|with <anchor phrase>``; calendar windows
  (halves, quarters, decades, centuries, year ranges, relative dates, "since"/"until" a
  window, "pre-2014").
- anything else the question asks for is reported in ``unsupported``, never dropped.
- qtype: ``equal``, ``before_after``, ``first_last``, ``equal_multi``, ``after_first``,
  ``before_last`` derived from the above, as MultiTQ labels them.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from dataclasses import dataclass, field

from chronorag.errors import ConfigError, TimeParseError
from chronorag.graphs.time import Granularity, TimePoint, parse_time, parse_time_mention

__all__ = ["TemporalQuestion", "TimeMention", "parse_question", "find_time_mentions", "QTYPES", "OPERATORS"]

OPERATORS = ("select", "count", "most_frequent", "exists")
QTYPES = ("equal", "before_after", "first_last", "equal_multi", "after_first", "before_last")

_MON = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
        r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
#: "the year (of)" before a year, as MultiTQ writes it ("in June, the year of 2006", "the year 2010-10")
_THE_YEAR = r"(?:(?:in\s+)?(?:the\s+)?year\s+(?:of\s+)?)"
_TIME_PATTERNS = [
    rf"{_THE_YEAR}?\d{{4}}-\d{{1,2}}-\d{{1,2}}(?!\d)", rf"{_THE_YEAR}?\d{{4}}-\d{{1,2}}(?![\d-])",
    rf"\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+{_MON},?\s+{_THE_YEAR}?\d{{4}}",
    rf"{_MON}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{_THE_YEAR}?\d{{4}}",
    rf"{_MON},?\s+(?:of\s+)?{_THE_YEAR}?\d{{4}}",
    r"(?:the\s+year\s+(?:of\s+)?)?\b(?:19|20)\d{2}\b(?!-\d)",
]
_TIME_RE = re.compile("(?:" + "|".join(f"(?:{p})" for p in _TIME_PATTERNS) + ")", re.I)
_PREP_RE = re.compile(r"(?:\b(in|on|during|throughout|through|within|over|across|for|before|after|since|until|till|"
                      r"by|from|prior to|between|and|at|no later than|not later than|up to|earlier than|later than)"
                      r"\s+(?:the\s+)?)$", re.I)


def _time_core(raw: str) -> str:
    """A written time without "the year (of)": "June, the year of 2006" -> "June 2006"."""
    core = " ".join(re.sub(rf",?\s*\b(?:of\s+)?{_THE_YEAR}", " ", raw, flags=re.I).split())
    if re.fullmatch(r"\d{4}-\d{1,2}(?:-\d{1,2})?", core):  # "2013-07-2" is 2013-07-02
        core = "-".join([core[:4]] + [p.zfill(2) for p in core[5:].split("-")])
    return core


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
    operator : {"select", "count", "most_frequent", "exists"}
        What to do with the matching events: list the answers (``select``), count them
        ("how many times"), the answer with most events ("most often"), or yes/no
        ("Did X visit Y in 2014?").
    exclude : list of str
        Phrases to leave out of the answers ("other than China", "apart from Hamas").
    window : (begin, end, type) or None
        A calendar window read from the question ("the second half of 2014" ->
        ``("2014-07", "2014-12", "between")``, "since March 2014", "last month"), in the
        tools' filter form. When set it replaces the ``times``-derived window.
    window_text : str or None
        The words the window was read from.
    offset : (n, unit, direction) or None
        "two weeks after X": ``(14, "day", "after")``; units ``day``, ``month``, ``year``.
    reference : str or None
        The reference date relative dates were resolved against (stated in answers).
    unsupported : list of str
        What the question says that this parse cannot represent (an ambiguous numeric
        date, a relative date without a reference date, a day without a year that the
        KG's range does not make unique, an unparsed number, an order other than first or
        last, and any condition left once the represented parts are cut, in the question,
        its anchor or its exclusions: a negation, a count condition, a comparison, a
        season, a time given by an event, ...); a caller must abstain and report them.
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
    operator: str = "select"
    exclude: list[str] = field(default_factory=list)
    window: tuple[str, str, str] | None = None
    window_text: str | None = None
    offset: tuple[int, str, str] | None = None
    reference: str | None = None
    unsupported: list[str] = field(default_factory=list)
    count_distinct: bool = False

    def unfiltered_note(self, *, filtered_by: str, answer_from: str) -> str:
        """What an LLM path says beside its answer when part of the question went unread.

        A reader without an LLM abstains on :attr:`unsupported`; an LLM may have read those
        conditions itself, so its answer stands with this note: ``filtered_by`` could not
        apply them, and the answer is ``answer_from``.

        Parameters
        ----------
        filtered_by : str
            What retrieved the evidence, e.g. ``"the retriever"`` or ``"the tools"``.
        answer_from : str
            Whose reading the answer is, e.g. ``"the LLM's reading of the retrieved events"``.

        Returns
        -------
        str
            ``""`` when every condition was represented.
        """
        if not self.unsupported:
            return ""
        return f"{filtered_by} cannot filter on {'; '.join(self.unsupported)} (the answer is {answer_from})"

    def sample_note(self, n_events: int, *, reader: str) -> str:
        """What an answer read over retrieved events says when the question asks for an order
        or an anchor ("first", "last before X", "after X"): those are read over a sample of the
        KG's events, and an event the retriever did not return could change them; ``""``
        for other questions.

        Parameters
        ----------
        n_events : int
            How many events the reader saw.
        reader : str
            Who read them, e.g. ``"the LLM"``.
        """
        if not (self.ordinal or self.anchor):
            return ""
        what = f"'{self.ordinal}'" if self.ordinal else "the anchor condition"
        return (f"{what} was read by {reader} over the {n_events} retrieved events: an event the retriever "
                f"did not return could change it")


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
        core = _time_core(raw)
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
    (re.compile(r"\b(?:what|which)\s+(?:(?:was|is)\s+the\s+(?:\w+\s+)?)?year\b|\bin\s+what\s+year\b|\byear\s+(?:did|was|were|when)\b", re.I), Granularity.YEAR),
    (re.compile(r"\b(?:what|which)\s+(?:(?:was|is)\s+the\s+(?:\w+\s+)?)?month\b|\b(?:exact|specific|particular)\s+month\b|\bmonth\s+(?:did|was|when|in which)\b", re.I), Granularity.MONTH),
    (re.compile(r"^\s*when\b|\b(?:what|which)\s+(?:(?:was|is|were)\s+the\s+(?:\w+\s+)?(?=(?:day|date)\b))?(?:day|date|time)\b|\bexact\s+(?:date|day|time)\b|\bwhen\s+(?:did|was|were|does|has|had)\b", re.I), Granularity.DAY),
]
#: "first"/"last" before a period noun is a calendar phrase ("the last quarter", "the first half of
#: May", "last night", "his first year in office"), not an order; "at the latest/earliest" is a bound
_PERIOD_AFTER = (r"(?!\s+(?:half|quarter|week|weekend|fortnight|night|month|year|decade|days|weeks|months|years|"
                 r"few|couple|several|\d+|two|three|four|five|six|seven|eight|nine|ten)\b"
                 r"(?!\s+(?:when|that|in\s+which)\b))")  # "the last year when X was Y" asks for an order
_FIRST = re.compile(rf"(?<!\bat the )\b(?:first|earliest|initial(?:ly)?|for the first time)\b{_PERIOD_AFTER}", re.I)
#: a day of a month left over once the dates were read ("between the 1st and 10th of May 2014",
#: "from May 1st to May 10th, 2014"): a day range the parser does not read
_LEFT_DAY = re.compile(rf"\b{_MON}\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON}(?!\w)"
                       r"|\b(?:between|from)\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\b"
                       rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s*(?:and|to|through|until|till|-)\s*(?:the\s+)?(?:\d|{_MON}(?!\w))"
                       r"|\b\d{1,2}(?:st|nd|rd|th)?\s*[-\u2013]\s*(?!\S)", re.I)
#: an order other than first or last ("the second country to ...", "visit third", "the 4th",
#: "second-to-last", "penultimate"): the tools and readers rank only first and last, so such a
#: question is reported in ``unsupported`` rather than answered as if it asked for one of those
_NTH = re.compile(
    r"(?<![\w-])(?:(?:second|next|one)[\s-]+(?:to|before)[\s-]+(?:the[\s-]+)?last|last[\s-]+but[\s-]+one"
    r"|second[\s-]+(?:last|latest|most\s+recent)|(?:ante)?penultimate"
    r"|(?<!\ba\s)(?<!\bper\s)(?<!\bone\s)second(?!-hand)|(?<!')third(?!')(?!\s+(?:party|parties|location|world|sector|way))(?!(?<!\bthe\sthird)\s+countr)|fourth|fifth|sixth|seventh|eighth|ninth|tenth"
    r"|\d*(?:1[1-3]th|[02-9]?(?:2nd|3rd|[4-9]th|0th)|[02-9]1st))(?!\w)", re.I)
_LAST = re.compile(rf"(?<!\bat the )\b(?:last|latest|most recent(?:ly)?|final(?:ly)?|for the last time)\b{_PERIOD_AFTER}",
                   re.I)
_NUMBER_WORD = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|several)"
#: conditions left in the question after every part the parser represents was cut from it: a
#: plan would ignore them and answer another question, so each is reported in ``unsupported``
_RESIDUE = [
    (re.compile(r"\b(?:not|never|no\s+longer|no\s+one|nobody|neither|nor|fail(?:s|ed)?\s+to)\b"
                r"|\bwithout\b(?!\s+(?-i:[A-Z])|\s+portfolio\b)", re.I),  # not "Reporters Without Borders", "minister without portfolio"
     "a negation"),
    (re.compile(rf"\b(?:at\s+(?:least|most)|more\s+than|fewer\s+than|less\s+than|over|under|exactly|only)\s+"
                rf"(?:{_NUMBER_WORD}\s+times|once|twice)\b|\b(?:{_NUMBER_WORD}\s+times|once|twice|thrice|repeatedly|again|"
                rf"(?:multiple|many)\s+times)\b", re.I),
     "a count condition"),
    (re.compile(r"\b(?:more|less)\s+(?:often|frequently)\s+than\b|\bas\s+(?:often|frequently)\s+as\b", re.I),
     "a comparison of counts"),
    (re.compile(r"\b(?:which|what)\s+(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\s+[a-z]\w*|"
                r"\b(?:top|first|last|latest)\s+(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?!days|weeks|months|"
                r"years|quarters)\w+", re.I),
     "a number of answers (the answer is a ranked list; read its head)"),
    (re.compile(r"\b(?:who|whom|what|which)\s+else\b", re.I), "'else' (it refers to an earlier answer)"),
    (re.compile(r"\b(?:in\s+the\s+(?:morning|afternoon|evening)|at\s+(?:night|noon|midnight|dawn|dusk))\b", re.I),
     "a time of day (the KG's events carry dates)"),
    (re.compile(r"\b(?:christmas|easter|ramadan|eid|thanksgiving|new\s+year'?s?(?:\s+(?:day|eve))?|hanukkah|diwali)\b"
                r"(?!\s+(?-i:[A-Z]))", re.I), "a holiday; give the dates"),  # not "Christmas Island", "New Year Party"
    (re.compile(rf"\b(?:early|mid|middle|late)[\s-]+(?:of\s+)?{_MON}(?!\w)|\b(?:start|beginning|end|middle)\s+of\s+"
                r"the\s+(?:year|month|week)\b", re.I), "a part of a month or of an unnamed period"),
    (re.compile(r"(?<!\bat\s)\b(?:least|fewest)\b", re.I), "'least' (only 'most often' is read)"),
    (re.compile(r"\bboth\b", re.I), "'both ... and' (events with two entities at once)"),
    # a choice between names or times ("China or Japan"); "criticize or denounce" is a relation name
    (re.compile(r"\beither\b|\b[A-Z][\w.'-]*\)?\s+or\s+(?:the\s+)?[A-Z0-9]"), "a choice ('or')"),
    (re.compile(r"\b(?:every|each|per)\s+(?:year|month|week|day|quarter)\b|\ba\s+(?:year|month|week|day)\b(?!\s+(?:after|before|later|earlier|ago))|\b(?:annually|yearly|monthly|weekly|daily)\b",
                re.I), "a per-period reading"),
    (re.compile(r"(?<!\bmost\s)\b(?:recently|lately|nowadays|these\s+days|currently|right\s+now)\b"
                r"|\b(?:last|past|previous|recent|coming|next)\s+(?:few|couple\s+of|several|many)\s+\w+|\brecent\s+"
                r"(?:years|months|weeks|days)\b|\bdecades?\b|\bago\b|\bthis\s+(?:week|morning|afternoon|evening|"
                r"quarter)\b|\b(?:next|coming|following)\s+(?:day|week|month|year|quarter)\b|\btomorrow\b", re.I),
     "a vague or relative time it cannot read; give a date or a window"),
    (re.compile(rf"\b(?:last|this|next)\s+{_MON}(?!\w)", re.I), "a relative month; add the year"),
    (re.compile(r"\bhow\s+long\b", re.I), "a duration (the tools give dates, not lengths)"),
    (re.compile(r"\b(?:the\s+)?ones\b", re.I), "a reference it cannot resolve ('the ones')"),
    (re.compile(r"\bby\s+the\s+time\b|\bupon\s+(?:his|her|their|its|the)\b|\bon\s+the\s+eve\s+of\b|"
                r"\b(?:at|by|near|towards?)\s+the\s+(?:start|end|beginning|close)\s+of\s+(?:his|her|their|its)\b|"
                r"\b(?:in|during)\s+(?:his|her|their|its)\s+(?:(?:first|last|final|second)\s+)?(?:years?|months?|weeks?|"
                r"days?|term|tenure|presidency|time)\b|\bin\s+(?:office|power)\b|"
                r"\bthe\s+(?:day|week|month|night|morning|evening)\s+(?:that\s+|when\s+)?(?-i:[A-Z])\w*", re.I),
     "a time given by an event"),
    (re.compile(r"\b(?:first|second|last|latter)\s+(?:half|fortnight|week|weeks|days|\w+\s+days)\s+of\b|"
                r"\b(?:first|second|third|fourth|last|latter)\s+(?:half|quarter)\b|"
                r"\b(?:last|this|next|past|previous|coming)\s+(?:quarter|weekend|fortnight|night)\b|\bat\s+the\s+earliest\b",
                re.I), "a part of a period, or a bound, it cannot read; give the dates"),
    (re.compile(r"\b(?:the\s+)?number\s+of\s+(?!times\b)\w+", re.I), "a count ('the number of'); ask 'how many times'"),
    (re.compile(r"\bmore\s+than\s+any(?:one|body|\s+other)\b|\b(?:the\s+)?(?:highest|largest|biggest|greatest|lowest|"
                r"smallest)\s+(?:number|amount|count|share)\s+of\b", re.I),
     "a superlative it cannot read (only 'most often' is)"),
    (re.compile(r"\band\s+then\b|\bafter\s+that\b", re.I), "two events in sequence ('and then')"),
    (re.compile(r"\band\s+(?:also\s+)?(?-i:[a-z]+(?:ed|es))\s+(?:the\s+)?(?-i:[A-Z])\w*"),
     "two events ('and' joins a second action)"),
    (re.compile(r"\bonly\s+(?-i:[A-Z])|\b(?:all|each|every\s+one|both)\s+of\s+(?!\d|the\s+year|(?:19|20)\d\d)", re.I),
     "a condition on several entities at once ('only X', 'all of')"),
    (re.compile(r"\b(?!(?:month|year|day|date|time|period|week|moment|the|and|or|but|so|is|was)\s)\w+\s+when\s+"
                r"(?!(?:was|were|is|are|did|does|do|has|have|had)\b)\w+|\bahead\s+of\b|\bin\s+the\s+(?:wake|aftermath|run-up)\s+(?:of|to)\b|"
                r"\bthe\s+same\s+(?:week|quarter|decade)\b", re.I), "a time given by an event"),
    (re.compile(r"\b(?:more|less|fewer)\s+than\s+(?:the\s+)?[A-Z]|\bthe\s+only\b"), "a comparison"),
    (re.compile(r"\b(?:spring|summer|autumn|winter)\b(?!\s+(?-i:[A-Z]))|\b(?:in|during|over)\s+(?:the\s+)?fall\b", re.I),
     "a season; name the months"),
    (re.compile(r"\b(?:weekends?|weekdays?|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?)\b"
                r"(?!\s+(?-i:[A-Z]))", re.I), "a day of the week"),  # not "the Sunday Times", "Good Friday Agreement"
    (re.compile(r"\b(?:during|while|throughout|until|till|since|whenever)\b(?:\s+[\w'-]+){0,3}", re.I),
     "a time condition it cannot read (an event, or a date without its year)"),
    (re.compile(r"\b(?:weeks?|days|hours?)\s+of\b|\b(?:each|every)\s+time\b|\b(?:first|last|final)\s+"
                r"(?:\w+\s+)?(?:months|weeks|days|years)\b", re.I),
     "a part of a period or a repetition it cannot read"),
]
#: residue kinds whose words are written capitalised anyway, so a capital does not make them a name
_CAPITALISED = ("a day of the week", "a holiday; give the dates", "a part of a month or of an unnamed period",
                "a choice ('or')")
#: read on the whole question, since the anchor reading cuts "after X" away: "the week after the
#: G20", "immediately after Putin" would become a plain "after"
_RAW_RESIDUE = [
    (re.compile(r"\b(?:shortly|soon|long|well)\s+(?:after|before)\b"
                r"|\b(?:the|in\s+the|on\s+the|within\s+the)\s+(?:day|week|month|year)s?\s+(?:after|before|following)\b",
                re.I), "a distance from the anchor it cannot read; give a window"),
    (re.compile(r"\bhalf\s+(?:a|an)\s+(?:year|month|week|day)\b|\b(?:one|two|three|a)\s+and\s+a\s+half\s+\w+|"
                r"\b(?:a\s+couple\s+of|a\s+few|several|some|many)\s+(?:days|weeks|months|years)\s+(?:after|before|later|"
                r"earlier)\b|(?<!\d\s)(?<!\w\s)\b(?:days|weeks|months|years)\s+(?:after|before|later|earlier)\b", re.I),
     "a distance from the anchor it cannot read; give a window"),
    # "Did North Korea stop criticizing South Korea?": read without the verb, "yes" would mean the opposite
    # ("start negotiating" is the first time, which the order reads)
    (re.compile(r"\b(?i:stop|stops|stopped|stopping|cease|ceases|ceased|ceasing|quit|quits|quitting|keep|keeps|kept|"
                r"keeping|continue|continues|continued|continuing|resume|resumes|resumed|resuming|still)\s+"
                r"(?:to\s+[a-z]+|(?!(?:during|morning|evening|nothing|something|anything|everything|being)\b)[a-z]+ing)\b"),
     "a change over time (stopping, keeping on, resuming)"),
    (re.compile(r"\b(?:busiest|quietest|most\s+active|least\s+active)\b|\b(?:which|what)\s+(?:\w+\s+)?"
                r"(?:month|quarter|week|day|year|season)\b[^?]*\b(?:most|least|fewest)\b(?!\s+recent)", re.I),
     "a count per period ('the busiest month'): counts are per entity, not per period"),
    (re.compile(r"[,;]\s*(?:and|but|also)\s+(?:how|what|which|who|whom|when|where|did|does|has|was|were)\b|"
                r"\?\s+(?:and\s+)?(?:(?:can|could|would|will)\s+you\s+(?:also\s+)?(?:tell|show|give)\s+me\s+)?"
                r"(?:how|what|which|who|whom|when|where|did|does|has|was|were)\b[^?]*\?", re.I),
     "two questions in one; ask each separately"),
]
#: "right before X" is the last event before X, "immediately after X" the first after it
_RIGHT_NEXT = re.compile(r"\b(?:immediately|right|just|directly)\s+(before|after)\b", re.I)
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
_YEAR_WORD = re.compile(r"\b([A-Za-z]{3,9})\.?,?\s+(?:of\s+)?(?:19|20)\d{2}\b")
#: ICEWS sector names ("the owner or operator of Italy") are names, not a choice
_OWNER_OR = re.compile(r"\bowner\s+or\s+operator\b", re.I)
_SAME = re.compile(r"\b(?:in|on|during|at)?\s*the\s+same\s+(day|month|year|time)\b\s*(?:as|of|with|that|when)?\s*", re.I)
_ANCHOR_CUT = re.compile(
    r"\s*,\s*|\s+(?=(?:who|whom|which|what|when|with whom|to whom|with which|to which|from which|by whom)\b)"
    r"|\s+(?:did so|did|does|do|had|has|was|were)\s*$", re.I)
#: a wh-phrase and an auxiliary ("Who did", "With which country has"): the answer is an object
_AUX_HEAD = (r"(?:(?:with|to|from|for|by|against|on|about|at)\s+)?(?:who|whom|which\s+\w+|what\s+\w+)\s+"
             r"(?:did|does|do|would|will|has|have|had|could|might|was|were|is)")
_AUX_SUBJ = re.compile(rf"^{_AUX_HEAD}\s+(?!the\s+(?:first|last)\b)", re.I)
_PASSIVE = re.compile(r"\b(?:was|were|been|be|is|are)\s+(?:\w+\s+){0,2}?\w+ed\s+(?:\w+\s+){0,2}?by\b|\bby\s+whom\b", re.I)


def _strip(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip(" ,.?;:")


# ---------------------------------------------------------------- calendar pre-pass
_MONTH_NUM = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
_NUM_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
              "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a few": 3, "several": 3}
_NUM = r"(?:\d{1,3}|a few|several|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(days?|weeks?|months?|years?)"
_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
        "last": 0, "final": 0}
_YEAR = r"((?:19|20)\d{2})"
_PRE = r"(?:\b(?:in|during|over|within|for|throughout|across|at)\s+)?(?:the\s+)?"


def _mon(word: str) -> int:
    return _MONTH_NUM[word.lower()[:3]]


def _num(word: str) -> int:
    w = word.lower()
    return int(w) if w.isdigit() else _NUM_WORDS[w]


def _unit_days(n: int, unit: str) -> tuple[int, str]:
    u = unit.lower().rstrip("s")
    if u == "week":
        return 7 * n, "day"
    return n, u


def _shift(d: _dt.date, n: int, unit: str) -> _dt.date:
    """``d`` moved by ``n`` days, months or years (clamped to the month's last day)."""
    if unit == "day":
        return d + _dt.timedelta(days=n)
    months = n * (12 if unit == "year" else 1)
    y, m = divmod(d.month - 1 + months, 12)
    y += d.year
    last = calendar.monthrange(y, m + 1)[1]
    return _dt.date(y, m + 1, min(d.day, last))


def _iso(d: _dt.date, unit: str) -> str:
    return f"{d.year:04d}" if unit == "year" else f"{d.year:04d}-{d.month:02d}" if unit == "month" else d.isoformat()


def _days_in_span(month: int, day: int, span: tuple[int, int]) -> list[_dt.date]:
    """Dates ``month``-``day`` of any year inside the KG span (minutes)."""
    lo = _dt.date.fromordinal(span[0] // 1440 + 1)
    hi = _dt.date.fromordinal(max(span[0], span[1] - 1) // 1440 + 1)
    out = []
    for y in range(lo.year, hi.year + 1):
        try:
            d = _dt.date(y, month, day)
        except ValueError:
            continue
        if lo <= d <= hi:
            out.append(d)
    return out


_EXCLUDE_WORDS = ("other than", "apart from", "aside from", "except", "except for", "excluding", "besides",
                  "not counting", "leaving out", "but not", "not including")
#: a preposition right before a calendar window: "since"/"until" bound it, the rest cannot be read
_WINDOW_PREP = re.compile(
    r"\b(since|from|until|till|through|up\s+to|before|after|prior\s+to|by|no\s+later\s+than|not\s+later\s+than|"
    r"not\s+after|no\s+earlier\s+than|not\s+earlier\s+than|no\s+sooner\s+than|not\s+before|earlier\s+than|"
    r"later\s+than|other\s+than|apart\s+from|aside\s+from|except(?:\s+for)?|excluding|besides|not\s+counting|"
    r"leaving\s+out|but\s+not|not\s+including)(?:\s+(?:in|during|on|at))?(?:\s+the)?\s*$", re.I)


def _calendar(s: str, q: TemporalQuestion, reference: _dt.date | None,
              span: tuple[int, int] | None) -> str:
    """Read calendar phrases into ``q.window`` (or ``q.unsupported``) and cut them from ``s``."""
    found: list[tuple[int, int]] = []
    edit: dict[tuple[int, int], str] = {}  # spans rewritten rather than cut

    def take(m: re.Match[str], begin: str, end: str, kind: str = "between") -> None:
        text, start = m.group(0).strip(), m.start()
        pre = _WINDOW_PREP.search(s[:start])
        if pre and pre.group(1).lower() == "from" and (
                re.search(r"\bfrom\s+(?:in|during|on|at)\b", pre.group(0), re.I) or re.search(
                    r"\b(?:visits?|calls?|messages?|letters?|requests?|invitations?|delegations?|criticism|praise|"
                    r"support|threats?|appeals?|statements?|aid|help|word|news)\s*$", s[: pre.start()], re.I)):
            pre = None  # "a visit from in Q3 2014", "a call from last month": the source's "from", no bound
        if pre:  # "since last year", "until the end of 2012", "other than last year", "before Q3 2013"
            word = " ".join(pre.group(1).lower().split())
            text, start = f"{pre.group(1)} {text}", pre.start()
            fuzzy = re.search(r"\b(?:end|start|beginning|early|mid|middle|late)\b", text, re.I)
            if word in ("since", "from") and not re.match(r"\s*(?:to|until|till|through|and)\b", s[m.end():], re.I):
                end, kind = "inf", "between"
            elif word in ("until", "till", "through", "up to", "no later than", "not later than", "not after"):
                begin, kind = "-inf", "between"
            elif word in ("no earlier than", "not earlier than", "no sooner than", "not before"):
                end, kind = "inf", "between"
            elif word in ("before", "prior to", "earlier than", "after", "later than") and not fuzzy:
                # "before 18.03.2005", "after Q3 2013": the window's bound as a written time, read
                # with the rest of the question's times ("before" its start, "after" its end)
                after = word in ("after", "later than")
                edit[(start, m.end())] = f" {'after' if after else 'before'} {end if after else begin} "
                found.append((start, m.end()))
                return
            else:
                why = ("excluding a time: ask about the window you want" if word in _EXCLUDE_WORDS else
                       f"a window after {word!r} is not read; write the date")
                q.unsupported.append(f"{text!r}: {why}")
                found.append((start, m.end()))
                return
        if q.window is None:
            q.window, q.window_text = (begin, end, kind), text
        else:
            q.unsupported.append(f"a second time window {text!r}")
        found.append((start, m.end()))

    def free(m: re.Match[str]) -> bool:
        return not any(a < m.end() and m.start() < b for a, b in found)

    # ambiguous or numeric dates: 03/04/2014, 3.4.2014, 2014/03/04
    for m in re.finditer(r"\b(?:on\s+|in\s+)?(\d{1,2})[/.](\d{1,2})[/.]((?:19|20)\d{2})\b", s):
        a, b, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        readings = []
        for mo, d in ((a, b), (b, a)):  # month-first, then day-first
            try:
                readings.append(_dt.date(y, mo, d))
            except ValueError:
                pass
        readings = list(dict.fromkeys(readings))
        if len(readings) == 1:
            take(m, readings[0].isoformat(), readings[0].isoformat(), "in/on")
        elif not readings:
            q.invalid_times.append(m.group(0).strip())
            found.append((m.start(), m.end()))
        else:
            q.unsupported.append(
                f"ambiguous date {m.group(0).strip()!r}: {readings[0].isoformat()} (month first) or "
                f"{readings[1].isoformat()} (day first); write it as YYYY-MM-DD")
            found.append((m.start(), m.end()))
    # halves and quarters: "the second half of 2014", "Q3 2014", "the first quarter of 2014"
    for m in re.finditer(rf"{_PRE}(?:(first|second|1st|2nd|last)\s+half\s+(?:of\s+)?|h([12])\s+(?:of\s+)?)"
                         rf"{_THE_YEAR}?{_YEAR}\b", s, re.I):
        if free(m):
            h = int(m.group(2)) if m.group(2) else 1 if m.group(1).lower() in ("first", "1st") else 2
            yr = m.group(3)
            take(m, f"{yr}-{1 if h == 1 else 7:02d}", f"{yr}-{6 if h == 1 else 12:02d}")
    # year ranges: "2010-2012", "in 2010–2012"
    for m in re.finditer(rf"{_PRE}{_YEAR}\s*[-\u2013]\s*{_YEAR}\b", s, re.I):
        if free(m):
            if int(m.group(1)) <= int(m.group(2)):
                take(m, m.group(1), m.group(2))
            else:
                q.unsupported.append(f"year range {m.group(0).strip()!r} runs backwards")
                found.append((m.start(), m.end()))
    # "pre-2014", "post-2010", "from 2012 onwards"
    for m in re.finditer(rf"\b(pre|post)-?{_YEAR}\b|\b(?:from\s+|in\s+)?{_YEAR}\s+(?:on(?:wards?)?|and\s+(?:later|after))\b",
                         s, re.I):
        if free(m):
            if m.group(1):
                yr = int(m.group(2))
                if m.group(1).lower() == "pre":
                    take(m, "-inf", str(yr - 1))
                else:
                    take(m, str(yr + 1), "inf")
            else:
                take(m, m.group(3), "inf")
    for m in re.finditer(rf"{_PRE}(?:(first|second|third|fourth|1st|2nd|3rd|4th|last|final)\s+quarter\s+(?:of\s+)?|q([1-4])\s+(?:of\s+)?){_THE_YEAR}?{_YEAR}\b",
                         s, re.I):
        if free(m):
            k = int(m.group(2)) if m.group(2) else (_ORD[m.group(1).lower()] or 4)
            yr = m.group(3)
            take(m, f"{yr}-{3 * k - 2:02d}", f"{yr}-{3 * k:02d}")
    # "since <time>": inclusive, open-ended
    for m in re.finditer(r"\bsince\s+(?:the\s+(?:start|beginning)\s+of\s+)?(" + _TIME_RE.pattern + ")", s, re.I):
        if free(m):
            try:
                tp = parse_time_mention(_time_core(m.group(1)))
            except TimeParseError:
                continue
            take(m, str(tp), "inf")
    # inclusive bounds: "until / up to / no later than <time>" runs to its end, "no earlier than / not before
    # <time>" from its start ("no earlier than December 2014" was read as "before December 2014")
    for m in re.finditer(r"\b(until|till|through|up\s+to|no\s+later\s+than|not\s+later\s+than|not\s+after|"
                         r"no\s+earlier\s+than|not\s+earlier\s+than|no\s+sooner\s+than|not\s+before)\s+(?:in\s+)?("
                         + _TIME_RE.pattern + ")", s, re.I):
        if free(m) and not re.search(r"\b(?:from|between)\s+(?:the\s+)?(?:" + _TIME_RE.pattern + r")\s*$",
                                     s[:m.start()], re.I):  # "from X until Y" is a range
            try:
                tp = parse_time_mention(_time_core(m.group(2)))
            except TimeParseError:
                continue
            if re.search(r"earlier|sooner|before", m.group(1), re.I):
                take(m, str(tp), "inf")
            else:
                take(m, "-inf", str(tp))
    # centuries: "in the 15th century", "during the 19th century"
    for m in re.finditer(r"\b(?:in|during|over|throughout|across)?\s*(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)[\s-]+century\b",
                         s, re.I):
        if free(m):
            n = int(m.group(1))
            take(m, f"{(n - 1) * 100 + 1:04d}", f"{n * 100:04d}")
    # decades: "in the 2010s", "during the 1990s"
    for m in re.finditer(r"\b(?:in|during|over|throughout|across)?\s*(?:the\s+)?((?:19|20)\d)0'?s\b", s, re.I):
        if free(m):
            take(m, f"{m.group(1)}0", f"{m.group(1)}9")
    for m in re.finditer(rf"{_PRE}(?:early|mid|middle\s+of|late|end\s+of|start\s+of|beginning\s+of)[\s-]+(?:the\s+)?"
                         rf"{_MON},?\s+{_YEAR}\b", s, re.I):
        if free(m):  # "mid-March 2014": which days is a convention the parser does not pick
            q.unsupported.append(f"part of a month {m.group(0).strip()!r}: give the days")
            found.append((m.start(), m.end()))
    for m in re.finditer(rf"{_PRE}(early|mid|middle of|late|end of|start of|beginning of)[\s-]+{_YEAR}\b", s, re.I):
        if free(m):
            part, yr = m.group(1).lower(), m.group(2)
            lo, hi = {"early": (1, 4), "start of": (1, 3), "beginning of": (1, 3), "mid": (5, 8),
                      "middle of": (5, 8), "late": (9, 12), "end of": (10, 12)}[part]
            take(m, f"{yr}-{lo:02d}", f"{yr}-{hi:02d}")
    # month ranges: "between March and May 2014", "from March to May 2014", "March-May 2014"
    mr = (rf"(?:\b(?:between|from)\s+)?{_MON}\s*(?:(?:and|to|through|until|till)|[-\u2013])\s*{_MON},?\s+{_YEAR}\b")
    for m in re.finditer(mr, s, re.I):
        if free(m):
            words = re.findall(_MON, m.group(0), re.I)
            yr = m.group(m.lastindex or 0)
            a, b = _mon(words[0]), _mon(words[1])
            if a <= b:
                take(m, f"{yr}-{a:02d}", f"{yr}-{b:02d}")
            else:
                q.unsupported.append(f"month range {m.group(0).strip()!r} runs backwards")
                found.append((m.start(), m.end()))
    # relative dates, against the reference date
    for m in re.finditer(r"\b(?:the\s+)?day\s+(?:before\s+yesterday|after\s+tomorrow)\b", s, re.I):
        q.unsupported.append(f"relative date {m.group(0).strip()!r}: write the date")
        found.append((m.start(), m.end()))
    rel_pats = [
        (rf"{_PRE}(?:past|last|previous|preceding)\s+({_NUM})\s+{_UNIT}\b", "past"),
        (rf"{_PRE}(?:past|last|previous)\s+(day|week|month|year)\b", "last1"),
        (rf"\b({_NUM})\s+{_UNIT}\s+ago\b", "ago"),
        (r"\b(?:in\s+|during\s+)?(this|current)\s+(year|month)\b", "this"),
        (r"\b(yesterday|today)\b", "day"),
    ]
    for pat, kind in rel_pats:
        for m in re.finditer(pat, s, re.I):
            if not free(m):
                continue
            if kind == "last1" and re.search(r"\bthe\s+last\b", m.group(0), re.I) and re.match(
                    r"\s*(?:when|that|in\s+which|during\s+which|of|for|where)\b|\s*[A-Z]", s[m.end():]):
                continue  # "the last year when X was Y", "the last year X held it": an order, not a date
            if reference is None:
                q.unsupported.append(f"relative date {m.group(0).strip()!r} needs a reference date")
                found.append((m.start(), m.end()))
                continue
            ref = reference
            q.reference = ref.isoformat()
            g = [x for x in m.groups() if x]
            if kind == "past":
                n, unit = _unit_days(_num(g[0]), g[1])
                since = _shift(ref, -n, unit)
                take(m, since.isoformat(), ref.isoformat())
            elif kind == "last1":
                unit = g[0].lower()
                if unit == "week":
                    take(m, (ref - _dt.timedelta(days=7)).isoformat(), ref.isoformat())
                elif re.search(r"\bpast\b|\bthe\s+last\b", m.group(0), re.I):
                    # "over the past year", "in the last month": the span up to the reference date;
                    # "last year", "the previous month": the calendar period before it (below)
                    take(m, _shift(ref, -1, unit).isoformat(), ref.isoformat())
                else:
                    when = _shift(ref, -1, unit)
                    t = _iso(when, unit)
                    take(m, t, t, "in/on")
            elif kind == "ago":
                n, unit = _unit_days(_num(g[0]), g[1])
                when = _shift(ref, -n, unit)
                t = _iso(when, unit)
                take(m, t, t, "in/on")
            elif kind == "this":
                t = _iso(ref, g[1].lower())
                take(m, t, t, "in/on")
            else:
                when = ref if g[0].lower() == "today" else ref - _dt.timedelta(days=1)
                take(m, when.isoformat(), when.isoformat(), "in/on")
    # a day or a month without a year: "on 3 April", "April 3rd", "in March"
    dm = [rf"\b(?:on\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MON})(?![\w])(?!,?\s*(?:of\s+)?{_THE_YEAR}?\d{{4}})",
          rf"\b(?:on\s+)?({_MON})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!,?\s*{_THE_YEAR}?\d{{4}})(?!\s*(?:and|to|-)\s)"]
    for i, pat in enumerate(dm):
        for m in re.finditer(pat, s, re.I):
            if not free(m):
                continue
            day, mon = (m.group(1), m.group(2)) if i == 0 else (m.group(2), m.group(1))
            mo, d = _mon(mon), int(day)
            cands = _days_in_span(mo, d, span) if span is not None else []
            if len(cands) == 1:
                take(m, cands[0].isoformat(), cands[0].isoformat(), "in/on")
            else:
                why = ("the KG's range is unknown" if span is None else
                       "no such day in the KG's range" if not cands else
                       f"{len(cands)} years in the KG's range have it")
                q.unsupported.append(f"date without a year {m.group(0).strip()!r}: {why}; add the year")
                found.append((m.start(), m.end()))
    for m in re.finditer(rf"\b(?:in|during)\s+({_MON})\b(?!\.?\s*,?\s*(?:of\s+)?{_THE_YEAR}?\d)(?!\s*(?:and|to|-)\s)", s, re.I):
        if not free(m) or m.group(1).lower() == "may" and not m.group(1)[0].isupper():
            continue
        mo = _mon(m.group(1))
        years = sorted({d.year for d in _days_in_span(mo, 1, span)} | {d.year for d in _days_in_span(mo, 28, span)}) \
            if span is not None else []
        if len(years) == 1:
            take(m, f"{years[0]}-{mo:02d}", f"{years[0]}-{mo:02d}", "in/on")
        else:
            q.unsupported.append(f"month without a year {m.group(0).strip()!r}: "
                                 f"{'the KG range is unknown' if span is None else 'not unique in the KG range'}; add the year")
            found.append((m.start(), m.end()))
    # "two weeks after X" / "3 days before 2014-05-01": an offset from the anchor
    for m in re.finditer(rf"\b(?:(within|in the)\s+)?({_NUM})\s+{_UNIT}\s+(after|before|later than|earlier than|following|prior to)\b",
                         s, re.I):
        if not free(m):
            continue
        n, unit = _unit_days(_num(m.group(2)), m.group(3))
        direction = "after" if m.group(4).lower() in ("after", "later than", "following") else "before"
        q.offset = (n, unit + ("-within" if m.group(1) else ""), direction)
        # keep the preposition so the anchor reading still sees "after X"
        found.append((m.start(), m.end() - len(m.group(4))))
    for a, b in sorted(found, reverse=True):
        s = s[:a] + edit.get((a, b), " ") + s[b:]
    return s


#: a word that makes an excluded phrase a time ("other than the summer", "except March")
_TIME_WORD = re.compile(rf"\b(?:quarter|half|month|year|week|day|spring|summer|autumn|winter|{_MON})s?\b", re.I)
_EXCLUDE = re.compile(
    r"(?:,\s*)?\b(?:other than|apart from|aside from|except(?:\s+for)?|excluding|besides|not counting|"
    r"leaving out|but not|not including)\s+(?:the\s+)?", re.I)
_EXCL_END = re.compile(r"\s*,|\s+(?=(?:who|whom|which|what|when|in|on|during|before|after|since|between|"
                       r"from|by|did|does|do|has|have|had|was|were|is|are|most|first|last)\b)|\s*\?|$", re.I)
#: inside a capitalised name, the first lower-case word that is no name connector ends it
_NAME_ENDS = re.compile(r"\s(?!(?:of|the|and|de|al|el|du|la|le|von|van|der|bin|ibn|da|do|dos|das|del|y|for|on|in|"
                        r"at|to)\b)(?-i:[a-z])[\w'-]*")
#: the question asks with an auxiliary after its wh-phrase ("Who did X ..."): its answer is an object
_AUX_ASK = re.compile(rf"^\s*{_AUX_HEAD}\b", re.I)
_COUNT = re.compile(r"\bhow\s+(?:many\s+times|often|frequently)\b|\b(?:the\s+)?number\s+of\s+times\b|"
                    r"\bhow\s+many\s+(?:(?:different|distinct|separate)\s+)?(\w+)\b|\bcount\s+(?:of\s+|the\s+)?", re.I)
_MOST = re.compile(r"\b(?:the\s+)?most\s+(?:often|frequently|times|commonly|regularly)\b|"
                   r"\bmost\s+frequent(?:ly)?\b|\b(?:the\s+)?most\b(?!\s+recent)(?=[\s\w]*\??\s*$)", re.I)
_EXISTS = re.compile(r"^\s*(?:(?:is\s+it\s+true|was\s+it\s+the\s+case)\s+that\s+|"
                     r"(?:did|does|do|has|have|had|was|were|is|are|will|would)\s+(?!there\s+be\b))", re.I)
_WH = re.compile(r"\b(?:who|whom|whose|which|what|when|where|how)\b", re.I)


# ---------------------------------------------------------------- wording pre-pass
# English contractions (only the unambiguous ones: "'s" only after a wh-word or pronoun,
# where it is "is", never a possessive)
_CONTRACTIONS = [
    (re.compile(r"\b(who|what|when|where|which|how|that|it|there|here)'s\b", re.I), r"\1 is"),
    (re.compile(r"\bwon't\b", re.I), "will not"), (re.compile(r"\bcan't\b", re.I), "cannot"),
    (re.compile(r"\b(\w+)n't\b", re.I), r"\1 not"), (re.compile(r"\b(\w+)'re\b", re.I), r"\1 are"),
    (re.compile(r"\b(\w+)'ve\b", re.I), r"\1 have"), (re.compile(r"\b(\w+)'ll\b", re.I), r"\1 will"),
    (re.compile(r"\b(who|what|when|where|which|how|i|you|we|they)'d\b", re.I), r"\1 would"),
]
_QSTART = (r"(?:who|whom|whose|which|what|when|where|how|did|does|do|has|have|had|was|were|is|are|will|would|"
           r"could|can|in|on|during|between|from|since|before|after|by|apart|other|except|excluding|besides)\b")
# requests wrapped around a question: greetings, "could you (please) tell me", "I'd like to know",
# "do you know", "Question: ..." / "Quick question - ..." (a short lead-in ended by a colon or a dash)
_PREAMBLES = [
    re.compile(r"^\s*(?:hey|hi|hello|ok|okay|so|well|um+|uh+|yo|dear\s+\w+|thanks)\b\s*[,!.]?\s+", re.I),
    re.compile(r"^\s*[^?:;,]{1,40}?(?::|\s[-\u2013\u2014]+)\s+(?=" + _QSTART + ")", re.I),
    re.compile(r"^\s*(?:(?:could|can|would|will)\s+you\s+)?(?:please\s+)?(?:tell|let|show|remind|find\s+out\s+for)\s+"
               r"me(?:\s+know)?\s*,?\s*", re.I),
    re.compile(r"^\s*(?:do|does)\s+(?:you|anyone|anybody|somebody|someone)\s+(?:happen\s+to\s+)?know\s*,?\s*", re.I),
    re.compile(r"^\s*i\s+(?:would\s+)?(?:like|want|need|wish|wanted)\s+to\s+(?:know|find\s+out|ask)\s*[:,]?\s*", re.I),
    re.compile(r"^\s*i\s+(?:am\s+|was\s+)?wonder(?:ing)?\s*,?\s*", re.I),
    re.compile(r"^\s*(?:any\s+idea|no\s+idea)\s*,?\s*", re.I),
    # a longer lead-in ended by a colon ("Quick one for a pub quiz tonight, lol: which ...")
    re.compile(r"^\s*[^?:;]{1,120}?:\s+(?=" + _QSTART + ")", re.I),
    re.compile(r"^\s*(?:(?:so|and|ok|okay)\s*,?\s+)?(?:my|the|our|a)\s+(?:\w+\s+)?question\s+(?:is|was)\s*[,:]?\s*", re.I),
    # a clause that asks to know, before the question it asks ("My professor asked me to find out who ...",
    # "For my report I need to know when ..."); not a question that itself starts with a question word
    re.compile(r"^(?!\s*" + _QSTART + r")\s*[^?]{0,100}?\b(?:find\s+out|know|tell\s+(?:me|us)|wonder(?:ing)?|curious|"
               r"figure\s+out|learn|check)\s*[,:]?\s+(?=(?:who|whom|whose|which|what|when|where|how|whether|if)\b)", re.I),
    re.compile(r"^\s*i\s+(?:need|want|would\s+like|am\s+looking\s+for)\s+(?:to\s+(?:know|find)\s+)?the\s+(?:exact\s+)?"
               r"(?:date|day)\s+(?=when\b)", re.I),
]
# a request or thanks after the question ("... - do you happen to know?", "..., any idea?", "? Thanks!")
_TAGS_AFTER = re.compile(r"(?:\s*[-\u2013\u2014,;]\s*|\?\s*)(?:(?:do|does|would|could|can)\s+(?:you|anyone|anybody|someone|"
                         r"somebody)\s+(?:happen\s+to\s+)?(?:know|tell\s+me|help(?:\s+me)?)(?:\s+(?:it|that|this|please|"
                         r"by\s+any\s+chance|for\s+sure))?|any\s+idea|"
                         r"(?:many\s+)?thanks|thank\s+you|cheers)(?:\s+(?:a\s+lot|so\s+much|very\s+much|in\s+advance|again))*\W*$", re.I)
_INDIRECT_YN = re.compile(r"^\s*(?:if|whether)\s+", re.I)
_FILLERS = re.compile(r"(?:,\s*)?\bplease\b,?|\bat\s+all\b|\bkindly\b|\b(?:actually|exactly|really)\b", re.I)


def _in_name(m: re.Match[str], s: str, *, entity: bool = False) -> bool:
    """A capitalised match after the question's first word is part of a name ("the Korean
    People's First Party", "the Second Vatican Council", "the Daily Monitor"), and so is a
    numbered ordinal before a capitalised word ("the US 1st Marine Expeditionary Force").
    In an ``entity`` phrase (an anchor or an exclusion) a capital anywhere starts a name.
    A cue written all in capitals ("NOT", "LAST", "AT LEAST TWICE") is emphasis, not a name."""
    word = m.group(0)
    if word[:1].isdigit():
        return bool(re.match(r"\s+[A-Z]", s[m.end():]))
    head = word.split()[0] if word.strip() else word
    if sum(c.isalpha() for c in head) > 1 and head.upper() == head:
        return False
    return word[:1].isupper() and (entity or bool(s[: m.start()].strip()))


def _cue(pat: re.Pattern[str], s: str) -> bool:
    """``pat`` occurs in ``s`` outside a name."""
    return any(not _in_name(m, s) for m in pat.finditer(s))


#: two days written with one year, after the second ("between 1 July and 31 August 2014", "from
#: March 3 to 5, 2014", "between 3 and 5 March 2014")
_DAY_RANGE = re.compile(
    rf"\b(?P<prep>between|from)\s+(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?(?:\s+(?P<m1>{_MON}))?|"
    rf"(?P<m1b>{_MON})\s+(?P<d1b>\d{{1,2}})(?:st|nd|rd|th)?)\s+(?P<join>and|to|until|till|through|-)\s+"
    rf"(?:(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<m2>{_MON})|(?P<m2b>{_MON})\s+(?P<d2b>\d{{1,2}})(?:st|nd|rd|th)?|"
    rf"(?P<d2c>\d{{1,2}})(?:st|nd|rd|th)?),?\s+(?P<y>(?:19|20)\d{{2}})\b", re.I)


def _day_range_years(m: re.Match[str]) -> str:
    """:data:`_DAY_RANGE` rewritten with both dates in full; the first date takes the year before
    when it falls after the second ("from 20 December to 5 January 2015")."""
    d1, m1 = (m["d1"], m["m1"]) if m["d1"] else (m["d1b"], m["m1b"])
    if m["d2"]:
        d2, m2 = m["d2"], m["m2"]
    elif m["m2b"]:
        d2, m2 = m["d2b"], m["m2b"]
    else:
        d2, m2 = m["d2c"], m1
    m1 = m1 or m2
    if not (m1 and m2):
        return m.group(0)
    y2 = int(m["y"])
    y1 = y2 - 1 if (_mon(m1), int(d1)) > (_mon(m2), int(d2)) else y2
    join = "and" if m["prep"].lower() == "between" else "to"
    return f"{m['prep']} {int(d1)} {m1} {y1} {join} {int(d2)} {m2} {y2}"


def _wording(s: str, q: TemporalQuestion) -> str:
    """Expand contractions and strip the requests wrapped around the question ("Could you
    please tell me ...", "Quick question - ...", "hey, ..."); "tell me if/whether X ..." is a
    yes/no question."""
    for pat, rep in _CONTRACTIONS:
        s = pat.sub(rep, s)
    # "in the period 2014-03-01 to 2014-03-31" is "from ... to ..."; "in the period between" is "between"
    s = re.sub(r"\b(?:in|during|over|within|for)\s+the\s+(?:period|time\s+frame|timeframe|time\s+span)\s+"
               r"(?=(?:from|between)\b)", " ", s, flags=re.I)
    s = re.sub(r"\b(?:in|during|over|within|for)\s+the\s+(?:period|time\s+frame|timeframe|time\s+span)\s+(?:of\s+)?"
               r"(?=[\w.,/ -]+?\s+(?:to|until|till|through)\s)", " from ", s, flags=re.I)
    s = _FILLERS.sub(" ", s)
    s = _DAY_RANGE.sub(_day_range_years, s)  # "between 1 July and 31 August 2014": the year of both
    if (tag := _TAGS_AFTER.search(s)) is not None and tag.start() > 0:
        s = s[:tag.start()] + "?"
    changed = True
    while changed:
        changed = False
        for pat in _PREAMBLES:
            m = pat.match(s)
            if m and m.end() < len(s.strip()):
                s, changed = " " + s[m.end():], True
    s = re.sub(r"^(\s*(?:if|whether))\s+or\s+not\b", r"\1", s, flags=re.I)  # "whether or not X ..."
    m = _INDIRECT_YN.match(s)
    if m:
        q.operator = "exists"
        s = " " + s[m.end():]
    # a negative yes/no question asks the same as the positive one: "Didn't X meet Y?",
    # "Isn't it true that ...?" (the answer "yes" means X met Y either way)
    s = re.sub(r"^(\s*(?:did|does|do|has|have|had|was|were|is|are))\s+not\b(?=\s+(?:it\s+true\b|[A-Z]|the\b))",
               r"\1", s, flags=re.I)
    s = re.sub(r"^(\s*(?:is|was))\s+it\s+not\s+true\b", r"\1 it true", s, flags=re.I)
    return s


def _operators(s: str, q: TemporalQuestion) -> str:
    """Read exclusion, counting, most-frequent and yes/no cues into ``q`` and cut them from ``s``."""
    while True:
        m = _EXCLUDE.search(s)
        if not m:
            break
        rest = s[m.end():]
        e = _EXCL_END.search(rest)
        stop = e.start() if e else len(rest)
        # "Who besides the United States criticized Iran": a name ends at its first lower-case word
        named = re.match(r"\s*(?-i:[A-Z])", rest[:stop]) and re.search(_NAME_ENDS, rest[:stop])
        if named:
            stop, e = named.start(), None
        phrase = _strip(rest[:stop])
        words = " ".join(m.group(0).lower().replace(",", " ").split())
        subject_answer = not _AUX_ASK.match(s[: m.start()]) and not _PASSIVE.search(s)
        if words == "but not" and subject_answer and phrase:
            # "Who criticised Iran but not Japan": who did not criticise Japan (a negation), not an
            # answer to leave out
            q.unsupported.append(f"a negation: 'but not {phrase}'")
            s = s[: m.start()] + " " + rest[stop:]
            continue
        for p in (_strip(x) for x in re.split(r"\s*,\s*|\s+(?:and|or|nor)\s+", phrase) if phrase):
            if _TIME_RE.search(p) or _TIME_WORD.search(p):
                # "not counting 2014", "except the summer": a time left out is no entity to exclude,
                # and no window either
                q.unsupported.append(f"excluding a time {p!r}: ask about the window you want")
            elif p:
                q.exclude.append(p)
        # "Who, other than X, did Y ...": the clause's closing comma goes with it
        tail = rest[e.end():] if e and e.group(0).strip() == "," and m.group(0).lstrip().startswith(",") else \
            rest[stop:]
        s = s[: m.start()] + " " + tail
    m = _COUNT.search(s)
    if m:
        q.operator = "count"
        noun = m.group(1)
        if noun and noun.lower() not in ("times",):
            q.count_distinct = True  # "how many countries did X visit": count the distinct answers
            s = s[: m.start()] + " who " + s[m.end():]
        else:
            s = s[: m.start()] + " " + s[m.end():]
        return s
    m = _MOST.search(s)
    if m:
        q.operator = "most_frequent"
        return s[: m.start()] + " " + s[m.end():]
    m = _EXISTS.match(s)
    if q.operator == "exists" or (m and not _WH.search(s[:60])):
        q.operator = "exists"
        if m and re.match(r"\s*(?:is|was)\s+it\b", m.group(0), re.I):  # "is it true that": a frame, not the event
            s = " " + s[m.end():]
    return s


def parse_question(text: str, *, reference: str | _dt.date | None = None,
                   span: tuple[int, int] | None = None) -> TemporalQuestion:
    """Parse a temporal question into a :class:`TemporalQuestion` skeleton.

    Parameters
    ----------
    text : str
        The question.
    reference : str or datetime.date, optional
        The date relative phrases ("last year", "two weeks ago") are resolved against;
        default: the last day of ``span`` when given, else they are reported in
        ``unsupported``.
    span : (int, int), optional
        The KG's time range in minutes ``[lo, hi)``; a date without a year is resolved
        only when exactly one year of this range has it.

    Raises
    ------
    ValueError
        For an empty or non-string question, or a reference that is not a date.
    """
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"question must be a non-empty string, got {text!r}")
    ref: _dt.date | None = None
    if reference is not None:
        if isinstance(reference, _dt.date):
            ref = reference
        else:
            try:
                ref = _dt.date.fromordinal(parse_time(str(reference)).lo // 1440 + 1)
            except TimeParseError as exc:
                raise ConfigError(f"reference date {reference!r} is not a date (YYYY-MM-DD): {exc}") from None
    elif span is not None:
        ref = _dt.date.fromordinal(max(span[0], span[1] - 1) // 1440 + 1)
    q = TemporalQuestion(text=text)
    s = " " + _strip(text.replace("\u00a0", " ").replace("\u2019", "'")) + " "
    s = " " + _strip(_wording(s, q)) + " "
    s = " " + _calendar(s, q, ref, span) + " "
    s = " " + _operators(s, q) + " "

    for pat, gran in _TIME_TARGET:
        if pat.search(s):
            q.target, q.granularity = "time", gran
            break
    if _cue(_FIRST, s):
        q.ordinal = "first"
    elif _cue(_LAST, s):
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
        elif preps[0] in ("before", "until", "till", "by", "prior to", "no later than", "not later than", "up to",
                          "earlier than"):
            q.constraint = "before"
        elif preps[0] in ("after", "since", "later than"):
            q.constraint = "after"
        else:
            q.constraint = "in"
    for t in times:  # "around 10 May 2014", "in about 2012": a window the question leaves to the reader
        approx = not t.prep and re.search(r"\b(?:around|roughly|approximately|circa|about|near|close\s+to)\s+(?:the\s+)?$",
                           s[: t.start], re.I)
        if approx:
            q.unsupported.append(f"an approximate time {approx.group(0) + t.text!r}: "
                                 f"give the window you mean ('between ... and ...')")
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
    if q.window is not None:
        if q.constraint in ("in", "between") or (q.constraint in ("before", "after") and q.times):
            q.unsupported.append(f"two time conditions: {q.window_text!r} and "
                                 f"{', '.join(repr(t.text) for t in q.times)}")
        elif q.constraint == "none":
            q.constraint = "in" if q.window[2] == "in/on" else "between"
    s = re.sub(r"\s*,?\s+or\s+not\s*$", "", s, flags=re.I) if q.operator == "exists" else s  # "..., or not?"
    s = re.sub(r"\b(?:so\s+far|to\s+date|ever)\b", " ", s, flags=re.I)  # up to the data's end: no bound
    if q.operator == "exists":  # "Did X visit Y once in 2013?" asks whether it happened
        s = re.sub(r"(?<!\bthan\s)(?<!\bonly\s)(?<!\bjust\s)(?<!\bexactly\s)\b(?:at\s+least\s+)?once\b", " ", s,
                   flags=re.I)
    # the anchor and the exclusions are checked too: "before his second visit to China",
    # "after Israel never did", "except during the summer"; (text, is an entity phrase),
    # with "owner or operator" blanked out (same length, so match positions hold)
    parts = [(_OWNER_OR.sub(lambda m: " " * len(m.group(0)), t), t is not s)
             for t in (s, *([q.anchor] if q.anchor else []), *q.exclude)]
    if q.anchor and re.search(r"\b(?:before|after|prior\s+to|following)\b", q.anchor, re.I):
        q.unsupported.append(f"two anchors in {q.anchor!r}: ask about one")
    if re.search(r"\bbetween\b", s, re.I):
        q.unsupported.append("'between' two things it cannot read as times; write both dates")
    for text, entity in parts:
        for m in _NTH.finditer(text):
            word = m.group(0)
            if _in_name(m, text, entity=entity):
                continue
            if not entity and re.search(r"last|latest|recent", word, re.I):  # "second-to-last" is not "last"
                q.ordinal = None
            q.unsupported.append(f"the order {word.strip()!r}: only the first and the last can be read; "
                                 f"ask for the first or the last, or narrow the time window")
    m = _LEFT_DAY.search(s)
    if m:
        q.unsupported.append(f"a date it cannot read {m.group(0).strip()!r}: write each day with its month and year")
    elif re.search(r"(?<![\w-])1st(?!\w)", s) and not q.ordinal and not re.search(r"1st\s+[A-Z]", s):
        q.ordinal = "first"  # "the 1st to praise Japan" (not the day of a date, read above)
    for pat, what in _RESIDUE:
        for text, entity in parts:
            m = next((m for m in pat.finditer(text)
                      if what in _CAPITALISED or not _in_name(m, text, entity=entity)), None)
            if m:
                q.unsupported.append(f"{what}: {m.group(0).strip()!r}")
                break
    for pat, what in _RAW_RESIDUE:
        m = pat.search(q.text)
        if m:
            q.unsupported.append(f"{what}: {m.group(0).strip()!r}")
    m = _RIGHT_NEXT.search(q.text)
    if m and q.anchor is not None:
        want = "last" if m.group(1).lower() == "before" else "first"
        if q.ordinal in (None, want):
            q.ordinal = want
        else:
            q.unsupported.append(f"{m.group(0).strip()!r} together with the order {q.ordinal!r}")
    for m in _YEAR_WORD.finditer(q.text):  # "Marhc 2014" would widen to the whole year
        word = m.group(1).lower()
        if re.fullmatch(_MON, word) or not any(word[0] == n[0] for n in _MONTH_NAMES):
            continue
        from rapidfuzz.distance import (
            OSA,  # only for a word before a year; a swap counts as one edit
        )

        near = [n for n in _MONTH_NAMES if word[0] == n[0] and OSA.distance(word, n) <= (1 if len(n) <= 5 else 2)]
        if near:
            q.unsupported.append(f"{m.group(1)!r} looks like a misspelt month ({near[0].capitalize()}?); "
                                 f"write the month")
    if _cue(_FIRST, s) and _cue(_LAST, s):
        q.unsupported.append("two orders, first and last: ask for one at a time")
    two_sided = (q.constraint in ("before", "after") and q.anchor is None and q.window is None
                 and len(q.times) == 2 and _two_sided(q))  # "after 2012 and before 2014": the window between
    if q.constraint in ("before", "after") and q.anchor is None and q.window is None and len(q.times) > 1 \
            and not two_sided:
        q.unsupported.append(f"two time conditions {', '.join(repr(t.text) for t in q.times)}: "
                             f"give one range ('between ... and ...')")
    if q.constraint == "in" and q.window is None and len(q.times) > 1:
        q.unsupported.append(f"several times {', '.join(repr(t.text) for t in q.times)}: ask about one time, "
                             f"or give a range ('between ... and ...')")
    left = re.findall(r"(?<![\w.-])\d+(?:[/.:]\d+)*(?![\w-])", s)
    if left:
        q.unsupported.append(f"unparsed number(s) {', '.join(repr(x) for x in left)}")
    q.subject_cue = bool(_AUX_SUBJ.search(s)) and q.target == "entity"
    q.passive = bool(_PASSIVE.search(s))
    q.main = s
    q.qtype = _qtype(q)
    return q


_OPENS = {"after": 1, "since": 0, "from": 0}
_CLOSES = {"before": -1, "prior to": -1, "until": 0, "till": 0, "by": 0, "through": 0}
_GRAN_UNIT = {Granularity.YEAR: "year", Granularity.MONTH: "month", Granularity.DAY: "day"}


def _two_sided(q: TemporalQuestion) -> bool:
    """Read "after 2012 and before 2014" (either order, "but", "since ... until ...") as the
    window between the two times, each bound strict or not as its word says; an empty window
    is reported in ``unsupported``. Other pairs are left as they are (False)."""
    a, b = sorted(q.times, key=lambda t: t.start)
    preps = {a.prep.lower(), b.prep.lower()}
    joined = (rf"\b{re.escape(a.prep)}\s+(?:the\s+)?{re.escape(a.text)}\s*,?\s*(?:(?:and|but)\s+)?(?:also\s+)?"
              rf"{re.escape(b.prep)}\s+(?:the\s+)?{re.escape(b.text)}")
    if not re.search(joined, q.text, re.I):  # the two bounds written together, nothing between
        return False
    lo = next((t for t in (a, b) if t.prep.lower() in _OPENS), None)
    hi = next((t for t in (a, b) if t.prep.lower() in _CLOSES), None)
    if lo is None or hi is None or lo is hi or len(preps) != 2:
        return False
    if lo.point.granularity not in _GRAN_UNIT or hi.point.granularity not in _GRAN_UNIT:
        return False
    lo_unit, hi_unit = _GRAN_UNIT[lo.point.granularity], _GRAN_UNIT[hi.point.granularity]
    begin = _shift(_dt.date.fromordinal(lo.point.lo // 1440 + 1), _OPENS[lo.prep.lower()], lo_unit)
    end = _shift(_dt.date.fromordinal(hi.point.lo // 1440 + 1), _CLOSES[hi.prep.lower()], hi_unit)
    if hi_unit == "month" and _CLOSES[hi.prep.lower()] == 0:  # "until June 2014": to its end
        end = end.replace(day=calendar.monthrange(end.year, end.month)[1])
    elif hi_unit == "year" and _CLOSES[hi.prep.lower()] == 0:
        end = end.replace(month=12, day=31)
    text = f"{lo.prep} {lo.text} and {hi.prep} {hi.text}"
    if (begin.year, begin.month if lo_unit != "year" else 1) > (end.year, end.month if hi_unit != "year" else 12) \
            or (lo_unit == hi_unit == "day" and begin > end):
        q.unsupported.append(f"an empty window {text!r}")
        return True
    q.window = (_iso(begin, lo_unit), _iso(end, hi_unit), "between")
    q.window_text = text
    q.constraint = "between"
    return True


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
