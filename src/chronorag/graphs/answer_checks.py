"""Checks on an LLM's answers against the events it read and the question it answers.

STAR-RAG's reader and the TempTool agent both keep only answers the retrieved events or
tool rows show (:func:`ground_answers`) and that answer the question as asked
(:func:`screen_answers`); what they drop is counted by the caller.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["checked_numbers", "ground_answers", "named_in", "offers_choice", "screen_answers", "ungrounded_numbers"]

_DATE = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?)?")


def _iso_date(text: str) -> str:
    """``text`` as an ISO date when all of it is one written date ("February 14, 2011" ->
    ``"2011-02-14"``, "June 2011" -> ``"2011-06"``), else unchanged."""
    if _DATE.fullmatch(text) or not any(ch.isdigit() for ch in text):
        return text
    from chronorag.graphs.question import find_time_mentions

    ms = find_time_mentions(text)
    return str(ms[0].point) if len(ms) == 1 and ms[0].text == text.strip(" .") else text


def ground_answers(answers: list[str], events: list[Any]) -> tuple[list[str], list[str]]:
    """Split an LLM's candidates into those the retrieved events show and the rest.

    A name counts when it is the subject or object of a retrieved event (accents, case and
    punctuation aside; a near spelling, rapidfuzz ratio >= 90, is replaced by the events'
    spelling); a date (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, or written out as
    "February 14, 2011" or "June 2011", kept in ISO form) when it falls within a
    retrieved event's time at that detail; a small count (up to three digits) always. A
    reader must not answer with what it was not shown: a small model often writes dates
    or names that are in no event.

    Parameters
    ----------
    answers : list of str
        Ranked candidates (:func:`answer_with_llm`).
    events : list of Event
        The events the LLM read.

    Returns
    -------
    tuple of (list of str, list of str)
        The grounded candidates in their order (duplicates dropped), and the others.
    """
    from rapidfuzz import fuzz, process

    from chronorag.graphs.linking import link_key

    names: dict[str, str] = {}
    spans: list[tuple[str, str]] = []
    for e in events:
        for n in (e.subject, e.object):
            names.setdefault(link_key(n), n)
        spans.append((str(e.start), str(e.end)))
    keys = list(names)
    kept: list[str] = []
    dropped: list[str] = []
    for a in answers:
        c = _iso_date(a.strip())
        got: str | None = None
        if _DATE.fullmatch(c):
            n = len(c)
            got = c if any(lo[:n] <= c <= hi[:n] for lo, hi in spans if len(lo) >= n and len(hi) >= n) else None
        elif c.isdigit() and len(c) <= 3:
            got = c
        elif keys:
            k = link_key(c)
            if k in names:
                got = names[k]
            else:
                best = process.extractOne(k, keys, scorer=fuzz.ratio, score_cutoff=90)
                got = None if best is None else names[best[0]]
        if got is None:
            dropped.append(a)
        elif got not in kept:
            kept.append(got)
    return kept, dropped


#: "A or B" (not "or not"; not after "either"/"whether", which ask yes or no)
_CHOICE_OR = re.compile(r"\S\s+or\s+(?!not\b)\S", re.I)
_NOT_CHOICE = re.compile(r"\b(?:either|whether)\b", re.I)
#: "out of / among / between A and B", where A is not a time ("between 2019 and 2022" is a span)
_CHOICE_AND = re.compile(
    r"\b(?:out\s+of|among|between)\s+(?!\d|(?:january|february|march|april|may|june|july|august|september|"
    r"october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec|the\s+(?:years?|months?|weeks?|"
    r"days?|dates?))\b)[^,?]*?\s(?:and|&)\s+\S", re.I)


def offers_choice(question: str) -> bool:
    """Whether ``question`` asks to choose between named options ("Which film came out first,
    A or B?", "Who was born first out of A and B?"): its answer is one of the names it gives.

    Parameters
    ----------
    question : str
        The question.
    """
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, got {type(question).__name__}: {question!r}")
    return (_CHOICE_AND.search(question) is not None
            or (_CHOICE_OR.search(question) is not None and _NOT_CHOICE.search(question) is None))
#: endings that make a country's adjective or people ("Iranian", "Iraqi", "Malaysian", "Sudanese")
_DEMONYM_ENDINGS = frozenset({"n", "an", "ian", "i", "ese", "ish"})
#: an ICEWS-style sector name, "Government (Djibouti)"
_SECTOR = re.compile(r"^\s*([^()]+?)\s*\(([^()]+)\)\s*$")
_MINOR = frozenset({"of", "the", "and", "for", "in", "on", "de", "du", "la", "le"})


def named_in(candidate: str, question: str) -> bool:
    """Whether ``question`` names ``candidate``: its words as a whole-word phrase (a sector name
    "X (Country)" also as "X of Country" or "Country's X"), a one-word name with an adjective
    ending ("Iraq" in "Iraqi"), or its capitals' acronym written in capitals ("ECB" for
    "European Central Bank")."""
    from chronorag.graphs.linking import link_key

    if not isinstance(candidate, str) or not isinstance(question, str):
        raise TypeError(f"candidate and question must be strings, got {candidate!r} and {question!r}")
    k = link_key(candidate)
    if not k:
        return False
    qk = f" {link_key(question)} "
    m = _SECTOR.match(candidate)  # "Lawyer/Attorney (South Korea)": also "... of South Korea", "South Korea's ..."
    forms = [k] if m is None else [k, f"{link_key(m[1])} of {link_key(m[2])}", f"{link_key(m[2])} {link_key(m[1])}"]
    if any(f" {f} " in qk for f in forms):
        return True
    qk = qk.strip()
    words = qk.split()
    if " " not in k and len(k) >= 4 and any(w.startswith(k) and w[len(k):] in _DEMONYM_ENDINGS for w in words):
        return True
    caps = [w for w in re.findall(r"[^\W\d_]+", candidate) if w.casefold() not in _MINOR]
    acronym = "".join(w[0] for w in caps)
    return (len(caps) >= 2 and acronym.isupper() and acronym.isalpha()
            and re.search(rf"\b{re.escape(acronym)}\b", question) is not None)


def screen_answers(answers: list[str], question: str, events: list[Any]) -> tuple[list[str], list[tuple[str, str]]]:
    """Drop grounded candidates that cannot answer the question as asked.

    Two checks, for a question that asks to list answers (not a count or a yes/no):

    - **the kind of answer:** a question asking when gets dates only; one asking who or
      which gets no dates;
    - **not the question's own entity:** an answer to "Who visited Iraq in June 2011?" is
      not Iraq. A candidate the question names (its words as a whole-word phrase, "Iraqi" for
      Iraq, "ECB" for European Central Bank) is dropped, unless the question offers a choice
      ("... A or B?") or a retrieved event links the candidate to itself. A small model
      often answers with the entity it was asked about (24 of SmolLM2's 43 wrong MultiTQ
      answers); of the gold answers, 1 of 178 MultiTQ-dev entity questions (as its second
      answer) and none of the free-wording sets' is named in its question.

    Parameters
    ----------
    answers : list of str
        Candidates, best first (the output of :func:`ground_answers`).
    question : str
        The question they answer.
    events : list of Event
        The events the LLM read.

    Returns
    -------
    tuple of (list of str, list of (str, str))
        The kept candidates in their order, and each dropped one with why.
    """
    from chronorag.graphs.linking import link_key
    from chronorag.graphs.question import parse_question

    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"question must be a non-empty string, got {question!r}")
    pq = parse_question(question)
    if pq.operator != "select":
        return list(answers), []
    loops = {link_key(e.subject) for e in events if link_key(e.subject) == link_key(e.object)}
    kept: list[str] = []
    dropped: list[tuple[str, str]] = []
    for a in answers:
        is_date = bool(_DATE.fullmatch(a.strip()))
        if pq.target == "time" and not is_date:
            dropped.append((a, "the question asks when; this is not a date"))
        elif pq.target == "entity" and is_date:
            dropped.append((a, "the question asks who or which; this is a date"))
        elif (pq.target == "entity" and not offers_choice(question) and named_in(a, question)
              and link_key(a) not in loops):
            dropped.append((a, "the question names it: an answer is the other party"))
        else:
            kept.append(a)
    return kept, dropped


#: a written number: "1,455,123", "48.8", "36.1", "14", with an optional scale word after it
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+(?!,?\d)|\d+(?!,?\d))(\.\d+)?(?!\d)"
                     r"(?:\s*(thousand|million|billion|trillion|bn)\b)?([^\W\d_])?", re.I)
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
#: a day of a written date ("December 31, 2020", "31 December 2020") is a date, not a figure
_DAY_BEFORE = re.compile(rf"\b(?:{_MONTHS})\.?\s+$", re.I)
_DAY_AFTER = re.compile(rf"^\s+(?:{_MONTHS})\b", re.I)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "bn": 1e9, "trillion": 1e12}
#: a table or sentence may state a figure in a unit its header names ("EUR million"), which an
#: answer writes out: a stated number also counts at these scales
_UNIT_SCALES = (1.0, 1e3, 1e6, 1e9)


def _numbers(text: str, *, glued: bool = True) -> list[tuple[str, float, float]]:
    """Each written number in ``text``: its text, its value and its written precision (half a
    unit of its last digit: "1.46 million" is 1,460,000 give or take 5,000). The day of a
    written date is not a figure, nor, with ``glued=False``, a number glued to letters ("23rd",
    "A8", "100km"; a text's "320kW" still states 320)."""
    out = []
    for m in _NUMBER.finditer(text):
        whole, frac, scale = m.group(1), m.group(2) or "", (m.group(3) or "").casefold()
        if m.group(4) and not glued:
            continue
        if not frac and not scale and len(whole) <= 2 and (
                _DAY_BEFORE.search(text[max(0, m.start() - 12):m.start()]) or _DAY_AFTER.match(text[m.end():])):
            continue
        k = _SCALE.get(scale, 1.0)
        value = float(whole.replace(",", "") + frac) * k
        out.append((m.group(0)[:len(m.group(0)) - len(m.group(4) or "")], value, 0.5 * 10 ** -(len(frac) - 1 if frac else 0) * k))
    return out


def _checked(written: str, value: float) -> bool:
    """Whether an answer's number is worth checking: not a year ("2019"), and not a one-digit
    count or list number ("3", "1."), which a text may write as a word."""
    bare = written.replace(",", "")
    if bare.isdigit() and len(bare) == 4 and 1900 <= value <= 2100:
        return False
    return not (bare.isdigit() and value < 10)


def checked_numbers(answer: str) -> list[str]:
    """The numbers in ``answer`` that :func:`ungrounded_numbers` checks, as written (not years
    1900-2100, not one-digit integers)."""
    if not isinstance(answer, str):
        raise TypeError(f"answer must be a string, got {type(answer).__name__}: {answer!r}")
    return [w for w, v, _ in _numbers(answer, glued=False) if _checked(w, v)]


def ungrounded_numbers(answer: str, texts: list[str], *, question: str = "") -> list[str]:
    """The numbers ``answer`` states that neither ``texts`` nor ``question`` show.

    A number counts as shown when a text states it at the answer's precision ("1.46 million"
    for "1,455,123", "EUR 48.8 billion" for "EUR 48,771 million"; a stated number also at a
    thousand, million or billion times, for a unit named in a table's header), or when it
    is the difference, sum or percentage change of two stated numbers (an answer may
    compute "an increase of 4" or "up 11.7 percent"). Years (1900-2100) and one-digit
    integers are not checked. A reader must not state a figure it was not shown: a model
    writes plausible figures from memory.

    Parameters
    ----------
    answer : str
        The LLM's answer.
    texts : list of str
        Everything the LLM read.
    question : str, optional
        The question (its own numbers count as shown).

    Returns
    -------
    list of str
        The unshown numbers as the answer writes them, in order (empty when all are shown).
    """
    import numpy as np

    if not isinstance(answer, str):
        raise TypeError(f"answer must be a string, got {type(answer).__name__}: {answer!r}")
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a list of strings (the texts the LLM read), not a string")
    wanted = [(w, v, tol) for w, v, tol in _numbers(answer, glued=False) if _checked(w, v)]
    if not wanted:
        return []
    stated = {v for t in [*texts, question] for _, v, _ in _numbers(t)}
    base = np.array(sorted(stated), dtype=float)
    shown = np.concatenate([base * k for k in _UNIT_SCALES]) if base.size else base
    derived = np.empty(0)
    if base.size:
        a, b = base[:, None], base[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            change = np.where(b != 0, (a / b - 1.0) * 100.0, np.nan)
        sums = np.concatenate([np.abs(a - b).ravel(), (a + b).ravel()])
        derived = np.concatenate([*(sums * k for k in _UNIT_SCALES), np.abs(change).ravel()])
    out = []
    for w, v, tol in wanted:
        tol = tol * 1.0000001
        if np.any(np.abs(shown - v) <= tol) or np.any(np.abs(derived - v) <= tol):
            continue
        out.append(w)
    return out
