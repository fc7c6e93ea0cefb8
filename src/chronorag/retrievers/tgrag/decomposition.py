"""T-GRAG temporal query decomposition (Sec. 2.2): one sub-question per period, by rules or an LLM."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Any

from chronorag.errors import ArgumentTypeError, ConfigError, LLMError

__all__ = ["DECOMPOSE_PROMPT", "SubQuestion", "decompose_rule_based", "decompose_with_llm", "parse_decomposition",
           "comparison_note", "looks_ahead", "open_range", "present_note", "report_position", "uncovered",
           "uncovered_years", "unread_conditions"]

_YEAR = r"(?:19|20)\d{2}"
#: a year as users write it: "2019", "FY2019", "FY 2019", "fiscal 2019"
_YEAR_MENTION = re.compile(rf"(?:\bFY\s?|(?<![\w]))({_YEAR})\b", re.I)
#: a year range: "2019-2021", "2019 to 2021", "2019 through 2021"
_RANGE = re.compile(rf"\b({_YEAR})\s*(?:-|–|to|through|until)\s*({_YEAR})\b")
#: "between 2015 and 2017" is a range, unless the question compares or asks for a change, where it
#: names the two years compared ("How did X change between 2019 and 2022?", Time-LongQA's wording)
_BETWEEN = re.compile(rf"\bbetween\s+(?:FY\s?)?({_YEAR})\s+and\s+(?:FY\s?)?({_YEAR})\b", re.I)
_CHANGE = re.compile(r"compar|chang|evol|differ|progress|develop|shift|gr[eo]w|improv|increas|decreas|\bvs\b|versus|"
                     r"trend|reduc|\bris(?:e|en)\b|\brose\b|declin|expand|transition|advance", re.I)
#: "before 2019", "since 2018", "after 2021", "until 2014": one side of a range, bare year only
#: ("by the end of 2014" and "as of 2012" are that year's report, as Time-LongQA asks them)
_OPEN_RANGE = re.compile(rf"\b(before|prior\s+to|earlier\s+than|after|later\s+than|since|until|till|up\s+to)"
                         rf"\s+(?:the\s+year\s+)?(?:FY\s?)?({_YEAR})\b", re.I)
_OPEN_OPS = {"before": "<", "prior to": "<", "earlier than": "<", "after": ">", "later than": ">",
             "since": ">=", "until": "<=", "till": "<=", "up to": "<="}
#: the same written around the year: "post-2020", "pre 2015", "2020 onwards", "from 2020 on",
#: "2019 and later", "2016 or earlier"
_OPEN_AROUND = [
    (re.compile(rf"\bpost[-\s]?({_YEAR})\b", re.I), ">"),
    (re.compile(rf"\bpre[-\s]?({_YEAR})\b", re.I), "<"),
    (re.compile(rf"(?:\bfrom\s+)?\b({_YEAR})\s+(?:on(?=\s*(?:[,.;:?!)]|$))|onwards?\b|and\s+(?:later|after|beyond)\b|"
                rf"or\s+later\b)", re.I), ">="),
    (re.compile(rf"\b({_YEAR})\s+(?:and|or)\s+(?:earlier|before)\b", re.I), "<="),
]
#: a two-digit year: "'19", "’19", "FY19" (00-49: 20xx, else 19xx)
_SHORT_YEAR = re.compile(r"(?:(?<![\w'’])['’](\d{2})(?![\w'’])|\bFY\s?(\d{2})\b)", re.I)
#: a decade: "the 2010s", "the '90s"
_DECADE = re.compile(r"\b((?:19|20)\d)0['’]?s\b")
#: a report by its position: "the latest report", "the last three reports", "the earliest report"
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_POSITION = re.compile(r"\b(latest|newest|most\s+recent|last|current|earliest|oldest|first)\s+(?:(\d+|two|three|four|"
                       r"five|six|seven|eight|nine|ten)\s+)?(?:annual\s+|sustainability\s+)?reports?\b", re.I)


def _century(two: str) -> str:
    return ("20" if int(two[0]) < 5 else "19") + two


#: a year counted from another: "the year after 2019", "two years before 2021", "a year later than 2018"
_COUNTED_YEAR = re.compile(rf"\b(?:(?:in|during|for|over)\s+)?(?:(a|one|the)\s+(?:fiscal\s+|financial\s+)?year|(the\s+)?"
                           rf"(two|three|four|five|six|seven|eight|nine|ten|\d{{1,2}})\s+(?:fiscal\s+|financial\s+)?years)"
                           rf"\s+(after|following|later\s+than|before|preceding|prior\s+to|earlier\s+than)\s+"
                           rf"(?:FY\s?)?({_YEAR})\b", re.I)


def _counted_year(m: re.Match[str]) -> str:
    """"the year after 2019" -> "in 2020", "two years after 2019" -> "in 2021", "the two years
    after 2019" -> "in 2020-2021" (a span)."""
    n = (m.group(3) or "").lower()
    k = 1 if m.group(1) else int(n) if n.isdigit() else _NUMBERS[n]
    later = m.group(4).lower().split()[0] in ("after", "following", "later")
    y = int(m.group(5))
    if m.group(2):  # "the three years following 2018": every one of them
        a, b = (y + 1, y + k) if later else (y - k, y - 1)
        return f"in {a}-{b}"
    return f"in {y + (k if later else -k)}"


def _expand_years(question: str) -> str:
    """Two-digit years, decades and counted years written out: "in '19" -> "in 2019", "FY19" ->
    "FY2019", "the '90s" -> "the 1990s", "the year after 2019" -> "in 2020", "two years before
    2021" -> "in 2019"."""
    q = re.sub(r"(?<![\w'’])['’](\d)0s\b", lambda m: _century(m.group(1) + "0") + "s", question)
    q = _SHORT_YEAR.sub(lambda m: ("FY" if m.group(2) else "") + _century(m.group(1) or m.group(2)), q)
    return _COUNTED_YEAR.sub(_counted_year, q)


def _decade_years(question: str) -> list[int]:
    return [y for m in _DECADE.finditer(question) for y in range(int(m.group(1)) * 10, int(m.group(1)) * 10 + 10)]


def report_position(question: str, periods: list[str]) -> tuple[str, list[str]] | None:
    """The periods a question names by position ("the latest report", "the last three reports",
    "the earliest report"), when it names no year; ``None`` otherwise."""
    question = _expand_years(question)
    m = _POSITION.search(question)
    if m is None or _years(question) or _decade_years(question) or not periods:
        return None
    n = m.group(2)
    k = int(n) if n and n.isdigit() else _NUMBERS.get((n or "").lower(), 1)
    late = m.group(1).lower() not in ("earliest", "oldest", "first")
    return " ".join(m.group(0).split()), (periods[-k:] if late else periods[:k])


def _one_year(m: re.Match[str], *, year: int) -> str:
    """A range match written as one of its years (what is before the first year kept, "between" as "in")."""
    return m.group(0)[: m.start(1) - m.start(0)].replace("between", "in") + str(year)


def _years(question: str) -> list[int]:
    return [int(y) for y in _YEAR_MENTION.findall(question)]


def open_range(question: str, periods: list[str]) -> tuple[str, list[str]] | None:
    """The periods an open time range selects ("before 2019": every indexed year before 2019).

    Read only when the question names one year, so "since 2006 up to 2014" and "by 2021
    since 2018" stay the years they name.

    Returns
    -------
    (str, list of str) or None
        The words read ("before 2019") and the indexed periods in that range (possibly
        none); ``None`` when the question has no such range.
    """
    question = _expand_years(question)
    if len(set(_years(question))) != 1:
        return None
    m = _OPEN_RANGE.search(question)
    if m is not None:
        op, year = _OPEN_OPS[" ".join(m.group(1).lower().split())], int(m.group(2))
    else:
        found = next(((m, op) for pat, op in _OPEN_AROUND if (m := pat.search(question))), None)
        if found is None:
            return None
        m, op = found
        year = int(m.group(1))
    test = {"<": year.__gt__, "<=": year.__ge__, ">": year.__lt__, ">=": year.__le__}[op]
    return " ".join(m.group(0).split()), [p for p in periods if p.isdigit() and test(int(p))]


@dataclass(frozen=True)
class SubQuestion:
    """One period's sub-question (``period=None``: all periods)."""

    period: str | None
    question: str


def decompose_rule_based(question: str, periods: list[str] | None = None) -> list[SubQuestion]:
    """Split a question into one sub-question per year it mentions.

    Finds years, ranges (``2021-2022``, ``2019 to 2021``: every year in between) and
    lists (``2017 and 2023``, ``2012, 2015``). Each sub-question is the question with
    the other years removed. A question without a year stays whole (all periods).
    Years outside ``periods`` (when given) are dropped; when none is inside, the
    question spans all periods (a report about 2023 discusses its 2025 plans). With
    ``periods``, an open range around the one year a question names ("before 2019",
    "since 2018", "until 2014", "post-2020", "2020 onwards"; :func:`open_range`) gives one
    sub-question per indexed year in it, the range written as that year ("... in 2017?"),
    and none when no indexed year is in it (nothing is retrieved for "before 2012" over
    reports from 2012). Two-digit years ("'19", "FY19") are read as years, a decade ("the
    2010s") as its years, and a report named by position ("the latest report", "the last
    three reports", :func:`report_position`) as those periods.
    """
    if not isinstance(question, str) or not question.strip():
        raise ConfigError(f"question must be a non-empty string, got {question!r}")
    question = _expand_years(question)
    ranged = open_range(question, periods) if periods is not None else None
    if ranged is not None:  # "before 2019": one sub-question per indexed year in range, if any
        words, inside = ranged
        return [SubQuestion(p, re.sub(re.escape(words).replace(r"\ ", r"\s+"), f"in {p}", question, count=1,
                                      flags=re.I)) for p in inside]
    placed = report_position(question, periods) if periods is not None else None
    if placed is not None:  # "the latest report": that report
        return [SubQuestion(p, question) for p in placed[1]]
    years: list[int] = list(_decade_years(question))
    ranges = [_RANGE] + ([_BETWEEN] if not _CHANGE.search(question) else [])
    for pat in ranges:
        for m in pat.finditer(question):
            a, b = int(m.group(1)), int(m.group(2))
            if a <= b <= a + 20:
                years.extend(range(a, b + 1))
    years.extend(_years(question))
    ys = sorted(set(years))
    if periods is not None:
        ys = [y for y in ys if str(y) in periods]
    if not ys:
        return [SubQuestion(None, question)]
    if len(ys) == 1:
        return [SubQuestion(str(ys[0]), question)]
    out = []
    conn = r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+)"
    for y in ys:
        q = question
        for pat in ranges:  # "2019-2021" -> "2020", "between 2016 and 2018" -> "in 2017"
            q = pat.sub(partial(_one_year, year=y), q)
        for other in sorted({int(x) for x in re.findall(rf"\b{_YEAR}\b", q)} - {y}):
            q = re.sub(rf"\b{other}\b{conn}", "", q)   # "2019 and 2022" -> "2022"
            q = re.sub(rf"{conn}\b{other}\b", "", q)   # "2019 and 2022" -> "2019"
            q = re.sub(rf"\s*\b{other}\b", "", q)
        q = re.sub(r"\s{2,}", " ", re.sub(r"\s+([?.,])", r"\1", q)).strip(" ,")
        out.append(SubQuestion(str(y), q))
    return out


#: a time relative to now, which no report's year pins down ("last year", "recently")
_RELATIVE = re.compile(
    r"\b(?:last|this|next|previous|past|coming|current)\s+(?:(?:few|couple\s+of|several|two|three|four|five|"
    r"\d+)\s+)?(?:fiscal\s+)?(?:years?|quarters?|months?|weeks?|decade)\b|\b(?:recent(?:ly)?|lately|"
    r"(?:\w+\s+)?years?\s+ago)\b", re.I)
#: the present ("currently", "today"): read over every report, and said so (:func:`present_note`)
_NOW = re.compile(r"\b(?:currently|nowadays|these\s+days|right\s+now|now|today|at\s+present|presently|"
                  r"at\s+the\s+moment)\b", re.I)
#: a question about the period itself with a superlative ("which year ... the most")
_WHICH_PERIOD = re.compile(r"\b(?:(?:which|what)\s+(?:fiscal\s+|annual\s+)?(?:year|report|period)|when)\b", re.I)
_SUPERLATIVE = re.compile(r"\b(?:most|least|fewest|highest|lowest|largest|smallest|biggest|best|worst|peak(?:ed)?|"
                          r"record|max(?:imum)?|min(?:imum)?)\b", re.I)
_TREND = re.compile(r"\bover\s+the\s+(?:years|decade|period)\b|\btrend(?:s|ed)?\b|\byear[\s-]+(?:over|on)[\s-]+year\b"
                    r"|\bevery\s+year\b|\beach\s+year\b", re.I)
#: a yes/no question that compares ("Did Audi deliver more cars in 2021 than in 2020?")
_YES_NO_COMPARE = re.compile(
    r"^\W*(?:did|does|do|was|were|is|are|has|have|had)\b.*\b(?:more|less|fewer|higher|lower|larger|smaller|bigger|"
    r"better|worse|increase[sd]?|decrease[sd]?|gr[eo]w(?:n)?|rise|rose|fall|fell|drop(?:ped)?|improve[sd]?|"
    r"worsen(?:ed|s)?|change[sd]?|go(?:ne)?\s+(?:up|down)|went\s+(?:up|down)|decline[sd]?|climb(?:ed|s)?|"
    r"jump(?:ed|s)?|shr[iau]nk(?:s)?|double[sd]?|halve[sd]?|reduce[sd]?)\b", re.I | re.S)
_EXCLUDED_YEAR = re.compile(rf"\b(?:except|excluding|not\s+counting|other\s+than|apart\s+from|aside\s+from|besides|"
                            rf"but\s+not|without|leaving\s+out|minus|save\s+for|with\s+the\s+exception\s+of)"
                            rf"\s+(?:in\s+|for\s+)?(?:the\s+year\s+)?(?:FY\s?)?{_YEAR}\b", re.I)


def _span(periods: list[str]) -> str:
    return "no period" if not periods else periods[0] if len(periods) == 1 else f"{periods[0]} to {periods[-1]}"


#: a question about plans ("will", "target", "by 2030"): the reports state them for later years
_FORWARD = re.compile(r"\b(?:will|shall|plan(?:s|ned)?|target(?:s|ed)?|goals?|aims?|expect(?:s|ed)?|forecast|"
                      r"intend(?:s|ed)?|projected|outlook|ambitions?|strateg(?:y|ies))\b", re.I)


#: a question that asks for a change or a comparison the per-period sentences only show
_COMPARISON = re.compile(
    r"\bhow\s+(?:much|many|far|strongly|sharply)\s+(?:did|has|have|had|does|do|was|were|is|are)\s+(?:[\w'’-]+\s+){0,3}?"
    r"(?:change[sd]?|increase[sd]?|decrease[sd]?|gr[eo]w(?:n)?|rise|rose|risen|fall|fell|fallen|drop(?:ped)?|"
    r"decline[sd]?|improve[sd]?|shr[iau]nk)\b|"
    r"\b(?:which|what)\s+(?:fiscal\s+)?(?:year|period|report)\b[^?]*?\b(?:higher|lower|more|less|fewer|larger|"
    r"smaller|bigger|better|worse|greater)\b|\bcompared\s+(?:with|to)\b|\bversus\b|\bvs\.?(?=\s)|"
    r"\b(?:difference|percentage\s+change|growth\s+rate)\s+(?:between|from)\b", re.I)


def comparison_note(question: str) -> str:
    """A note for the extractive reader when the question asks for a change or a comparison
    ("how much did revenue change from 2020 to 2021", "which year was higher"): the sentence
    of each period is given, the comparison is not computed; ``""`` otherwise."""
    m = _COMPARISON.search(question)
    return (f"not computed: the question asks for a comparison ({' '.join(m.group(0).split())!r}); the answer is "
            f"the sentence read for each period, and the extractive reader does not compare them") if m else ""


def uncovered_years(question: str, periods: list[str]) -> list[str]:
    """Years the question names as periods that no report covers ("2030" in "revenue in 2019 and
    2030" over reports of 2012-2023); none for an open range it reads ("after 2011") or a year a
    question about plans looks ahead to ("its 2025 target")."""
    q = _expand_years(question)
    years = sorted(int(p) for p in periods if p.isdigit())
    if not years or len(years) != len(periods) or open_range(q, periods) is not None:
        return []
    ahead = looks_ahead(q)
    return [str(y) for y in sorted(set(_years(q))) if str(y) not in periods and not (ahead and y > years[-1])]


def looks_ahead(question: str) -> bool:
    """True when the question asks about plans, targets or expectations ("will", "target", "plan")."""
    return _FORWARD.search(question) is not None


def uncovered(question: str, periods: list[str]) -> str:
    """The words of a time no report covers ("before 2012", "the 1990s" over reports of
    2012-2023), ``""`` when there is none. A time after the last report in a question about
    plans ("What does Audi plan after 2025?") is left to the reports, which state their targets."""
    question = _expand_years(question)
    years = [int(p) for p in periods if p.isdigit()]
    if not years:
        return ""
    ranged = open_range(question, periods)
    if ranged is not None and not ranged[1]:  # empty: wholly before the first report or after the last
        return "" if _op_of(ranged[0]) in (">", ">=") and _FORWARD.search(question) else ranged[0]
    decade = _DECADE.search(question)
    if decade and not _years(question):
        ys = _decade_years(question)
        if not any(y in years for y in ys) and not (min(ys) > years[-1] and _FORWARD.search(question)):
            return decade.group(0)
    return ""


def _op_of(words: str) -> str:
    """The comparison an open-range phrase makes ("after 2023" -> ">")."""
    m = _OPEN_RANGE.search(words)
    if m is not None:
        return _OPEN_OPS[" ".join(m.group(1).lower().split())]
    return next((op for pat, op in _OPEN_AROUND if pat.search(words)), "")


def present_note(question: str, periods: list[str]) -> str:
    """A note for a question in the present tense without a year ("How much water does Audi
    currently need?"): every report is searched, and each describes its own present; ``""``
    when the question names a year or no present."""
    m = _NOW.search(question) if not _years(question) else None
    return (f"{' '.join(m.group(0).split())!r} was read over every report ({_span(periods)}); name a year "
            f"for that report's figures") if m else ""


def unread_conditions(question: str, periods: list[str], *, extractive: bool = True) -> list[str]:
    """Conditions of ``question`` that T-GRAG's per-period retrieval cannot apply.

    Each is a phrase and why, for ``reason``: an open range no indexed period falls in
    ("before 2012" over reports of 2012-2023), a year left out ("except 2020": it would be
    retrieved like the others), and, when the question names no year, a time relative to
    now ("last year", "recently"), a superlative over periods ("which year ... the most")
    or a trend ("over the years"). With ``extractive`` (the no-LLM reader, one sentence per
    period) also a yes/no comparison ("Did Audi deliver more cars in 2021 than in 2020?"),
    which the sentences show but the reader does not decide.

    Returns
    -------
    list of str
        Empty when T-GRAG reads every time condition it sees.
    """
    if not isinstance(question, str) or not question.strip():
        raise ConfigError(f"question must be a non-empty string, got {question!r}")
    question = _expand_years(question)
    out: list[str] = []
    gone = uncovered(question, periods)
    if gone:
        out.append(f"{gone!r}: no report covers it (the reports cover {_span(periods)})")
    m = _EXCLUDED_YEAR.search(question)
    if m:
        out.append(f"leaving out a year {' '.join(m.group(0).split())!r}: name the years you want")
    if not _years(question) and not _decade_years(question):
        m = _RELATIVE.search(question) if report_position(question, periods) is None else None
        if m:
            out.append(f"a time relative to now {' '.join(m.group(0).split())!r}: name the year "
                       f"(the reports cover {_span(periods)})")
        w, sup = _WHICH_PERIOD.search(question), _SUPERLATIVE.search(question)
        if w and sup:
            out.append(f"a comparison of periods ({' '.join(w.group(0).split())!r} ... {sup.group(0)!r}): retrieval "
                       f"ranks sentences over all reports at once and does not compare them")
        m = _TREND.search(question)
        if m:
            out.append(f"a trend {' '.join(m.group(0).split())!r}: name the years to compare")
    if extractive and _YES_NO_COMPARE.search(question):
        out.append("a yes/no comparison: the sentence per period is in sub_answers, but the extractive "
                   "reader does not compare them")
    return out


DECOMPOSE_PROMPT = """Split the question into sub-questions that each concern a single time period.
Available periods: {periods}.
Write one line per sub-question as [period<SEP>sub-question], each sub-question a full question
ending with "?". Use only periods the question asks about. If the question names no time,
write one line [all<SEP>the question unchanged].

Question: {question}"""

DECOMPOSE_RETRY = ("That reply had no line I could use. Reply again with only lines of the form "
                   "[period<SEP>sub-question], one period per line, periods from: {periods}.")

_ITEM = re.compile(r"\[\s*([^\[\]<|]+?)\s*(?:<SEP>|<sep>)\s*(.+?)\s*\]", re.S)


def _periods_of(label: str, periods: list[str] | None) -> list[str] | None:
    """Periods named by a label: ``"2019"``, a range ``"2021-2022"`` / ``"2021 to 2022"``,
    a list ``"2017, 2019"``; ``[]`` when it names none of ``periods``; ``None`` for "all"."""
    lab = label.strip().strip("\"'").strip()
    if lab.lower() in ("all", "none", "any", "-", "all periods"):
        return None
    years: list[int] = []
    for m in re.finditer(rf"\b({_YEAR})\s*(?:-|–|to|through|until)\s*({_YEAR})\b", lab):
        a, b = int(m.group(1)), int(m.group(2))
        if a <= b <= a + 20:
            years.extend(range(a, b + 1))
    years.extend(int(y) for y in re.findall(rf"\b({_YEAR})\b", lab))
    if not years and periods is not None and lab in periods:  # a non-year period name
        return [lab]
    out = [str(y) for y in sorted(set(years))]
    return [y for y in out if periods is None or y in periods]


def parse_decomposition(text: str, periods: list[str] | None = None) -> list[SubQuestion]:
    """Parse an LLM decomposition into sub-questions.

    Accepts the paper's format, several items on one line with quoted questions
    (``[2017<SEP>"..."] [2023<SEP>"..."]``), one ``[period<SEP>question]`` per line, and
    the looser ``period: question`` / ``period | question`` lines. A period may be a
    range (``2021-2022`` gives one sub-question per year in it) or a list. Items whose
    periods are all outside ``periods`` are dropped; ``all`` gives a sub-question over
    every period. Reasoning blocks are ignored.
    """
    from chronorag.integrations.llm import strip_reasoning

    if not isinstance(text, str):
        raise ArgumentTypeError(f"expected the LLM's reply text, got {type(text).__name__}")
    body = strip_reasoning(text)
    items: list[tuple[str, str]] = []
    for line in body.splitlines():
        found = [(m.group(1), m.group(2)) for m in _ITEM.finditer(line)]
        if found:
            items.extend(found)
            continue
        line = line.strip().strip("-*• ").strip()
        m = re.match(r"^\[?\s*([^\]<|:]+?)\s*(?:<SEP>|<sep>|\||:)\s*(.+?)\]?$", line)
        if m:
            items.append((m.group(1), m.group(2)))
    out: list[SubQuestion] = []
    for label, q in items:
        q = q.strip().rstrip("]").strip().strip("\"'“”").strip()
        if not re.search(r"[^\W\d_]", q):  # "2019", "?": no question at all
            continue
        pers = _periods_of(label, periods)
        if pers is None:
            sub = SubQuestion(None, q)
            if sub not in out:
                out.append(sub)
            continue
        for p in pers:
            sub = SubQuestion(p, q)
            if sub not in out:
                out.append(sub)
    return out


#: a sub-question is a question: it ends with "?" or opens with a question word or a request
_QUESTION_START = re.compile(
    r"^\W*(?:who|whom|whose|what|when|where|which|why|how|is|are|was|were|do|does|did|has|have|had|can|could|"
    r"will|would|should|list|name|describe|give|state|tell|compare|summari[sz]e|explain)\b",
    re.I)


def _is_question(text: str) -> bool:
    return text.rstrip().endswith("?") or _QUESTION_START.match(text) is not None


def decompose_with_llm(llm: Any, question: str, periods: list[str]) -> tuple[list[SubQuestion], str]:
    """LLM decomposition (Sec. 2.2), retried once on an unusable reply.

    A sub-question that shares no word of four or more letters with the question (a bare
    "2019", an unrelated question) or is not a question ("2013 Audi A8": no "?" and no
    question word) is not usable. When the question names years the index holds, the
    decomposition must ask about at least one of them: SmolLM2 split "... as of 2012?" into
    "2013 Audi A8", "2014 Audi A6" and nine more such lines, none about 2012.

    Returns
    -------
    (list of SubQuestion, str)
        The sub-questions and which decomposition produced them: ``"llm"``, or
        ``"rules (LLM fallback)"`` when the LLM's reply had no usable line twice (or
        the call failed); that fallback is recorded as ``"tgrag.decompose_rules"``.
    """
    from chronorag.integrations.llm import record_fallback, resolve_llm

    chat = resolve_llm(llm, required=True)
    msgs = [{"role": "user", "content": DECOMPOSE_PROMPT.format(periods=", ".join(periods), question=question)}]
    last, why = "", "no [period<SEP>sub-question] line"
    named = {s.period for s in decompose_rule_based(question, periods) if s.period is not None}
    # a sub-question must restate the question: one of its words of 4+ letters
    words = set(re.findall(r"[^\W\d_]{4,}", question.lower()))
    try:
        for _attempt in range(2):
            last = chat.complete(msgs)
            parsed = parse_decomposition(last, periods)
            subs = [s for s in parsed if words & set(re.findall(r"[^\W\d_]{4,}", s.question.lower()))]
            asked = [s for s in subs if _is_question(s.question)]
            if named and not any(s.period is None or s.period in named for s in asked):
                why = (f"no sub-question asks about {', '.join(sorted(named))}, the year(s) the question names"
                       if asked else "no line is a question" if subs else
                       "no sub-question shares a word with the question" if parsed else why)
                asked = []
            elif not asked:
                why = "no line is a question" if subs else (
                    "no sub-question shares a word with the question" if parsed else why)
            if asked:
                return asked, "llm"
            msgs = [*msgs, {"role": "assistant", "content": last[:2000]},
                    {"role": "user", "content": DECOMPOSE_RETRY.format(periods=", ".join(periods))}]
    except LLMError as exc:
        last, why = f"call failed: {exc}", "the call failed"
    record_fallback("tgrag.decompose_rules", f"{question[:100]!r}: {why}: {last[:200]!r}")
    return decompose_rule_based(question, periods), "rules (LLM fallback)"
