"""T-GRAG temporal query decomposition (Sec. 2.2): one sub-question per period, by rules or an LLM."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from chronorag.errors import LLMError

__all__ = ["DECOMPOSE_PROMPT", "SubQuestion", "decompose_rule_based", "decompose_with_llm", "parse_decomposition"]

_YEAR = r"(?:19|20)\d{2}"


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
    question spans all periods (a report about 2023 discusses its 2025 plans).
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"question must be a non-empty string, got {question!r}")
    years: list[int] = []
    for m in re.finditer(rf"\b({_YEAR})\s*(?:-|–|to|through|until)\s*({_YEAR})\b", question):
        a, b = int(m.group(1)), int(m.group(2))
        if a <= b <= a + 20:
            years.extend(range(a, b + 1))
    years.extend(int(y) for y in re.findall(rf"\b({_YEAR})\b", question))
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
        q = re.sub(rf"\b{_YEAR}\s*(?:-|–|to|through|until)\s*{_YEAR}\b", str(y), question)
        for other in sorted({int(x) for x in re.findall(rf"\b{_YEAR}\b", q)} - {y}):
            q = re.sub(rf"\b{other}\b{conn}", "", q)   # "2019 and 2022" -> "2022"
            q = re.sub(rf"{conn}\b{other}\b", "", q)   # "2019 and 2022" -> "2019"
            q = re.sub(rf"\s*\b{other}\b", "", q)
        q = re.sub(r"\s{2,}", " ", re.sub(r"\s+([?.,])", r"\1", q)).strip(" ,")
        out.append(SubQuestion(str(y), q))
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
        raise TypeError(f"expected the LLM's reply text, got {type(text).__name__}")
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
