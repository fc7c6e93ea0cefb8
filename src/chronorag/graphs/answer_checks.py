"""Checks on an LLM's answers against the events it read and the question it answers.

STAR-RAG's reader and the TempTool agent both keep only answers the retrieved events or
tool rows show (:func:`ground_answers`) and that answer the question as asked
(:func:`screen_answers`); what they drop is counted by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from chronorag.errors import ArgumentTypeError, ConfigError

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


#: "A or B" (not "or not")
_CHOICE_OR = re.compile(r"\S\s+or\s+(?!not\b)\S", re.I)
#: "either ... or" / "whether ... or" ask yes or no ("Did either A or B win?")
_NOT_CHOICE = re.compile(r"\b(?:either|whether)\b", re.I)
#: "out of / among / between A and B", where A is not a time ("between 2019 and 2022" is a span)
_CHOICE_AND = re.compile(
    r"\b(?:out\s+of|among|between)\s+(?!\d|(?:january|february|march|april|may|june|july|august|september|"
    r"october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec|q\d|fy|mid|early|late|the\s+"
    r"(?:years?|months?|weeks?|days?|dates?|\d))\b)[^,?]*?\s(?:and|&)\s+\S", re.I)
_WH_START = re.compile(r"^\W*(?:who|whom|whose|what|which|where|when|how)\b", re.I)
#: a comparison that picks one of the options ("born first", "older", "the most")
_COMPARES = re.compile(r"\b(?:first|last|earlier|earliest|later|latest|older|oldest|younger|youngest|longer|"
                       r"longest|shorter|more|most|less|least|higher|highest|lower|lowest|bigger|biggest|larger|"
                       r"largest|smaller|smallest|better|best|worse|worst|\w+er\s+than)\b", re.I)


def offers_choice(question: str) -> bool:
    """Whether ``question`` asks to choose between named options, so that its answer is one of
    the names it gives: "Which film came out first, A or B?", "Was A or B born first?", "Who
    was born first out of A and B?".

    "A or B" offers a choice in a question that asks which/who/..., or that compares
    ("first", "older", "more") without "either"/"whether" ("Did either A or B win?" and "Did
    he play for A or B?" ask yes or no). "Out of / among / between A and B" offers one only
    in a question that compares, and never when A is a time ("between 2019 and 2022"):
    "Who mediated between Israel and Hamas?" asks for a third party.

    Parameters
    ----------
    question : str
        The question.
    """
    if not isinstance(question, str):
        raise ArgumentTypeError(f"question must be a string, got {type(question).__name__}: {question!r}")
    compares = _COMPARES.search(question) is not None
    if _CHOICE_OR.search(question) and (_WH_START.match(question)
                                        or (compares and not _NOT_CHOICE.search(question))):
        return True
    return compares and _CHOICE_AND.search(question) is not None


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
        raise ArgumentTypeError(f"candidate and question must be strings, got {candidate!r} and {question!r}")
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
        raise ConfigError(f"question must be a non-empty string, got {question!r}")
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
                     r"(?:\s*(thousands?|millions?|mn|billions?|bn|trillions?)\b)?([^\W\d_])?", re.I)
#: month names as dates write them (capitalised: "may" in "the top 12 may change" is no month)
_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December|"
           "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")
#: a day of a written date ("December 31, 2020", "31 December 2020") is a date, not a figure
_DAY_BEFORE = re.compile(rf"\b(?:{_MONTHS})\.?\s+$")
_DAY_AFTER = re.compile(rf"^\s+(?:{_MONTHS})\b")
_SCALE = {"thousand": 1e3, "million": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9, "trillion": 1e12}
#: a table or sentence may state a figure in a unit its header names ("EUR million"), which an
#: answer writes out, or the other way round: a stated number also counts at these scales
_UNIT_SCALES = (1.0, 1e3, 1e6, 1e9, 1e-3, 1e-6, 1e-9)
#: words with which an answer computes a change across the texts ("an increase of 4")
_CHANGE_WORDS = re.compile(r"\b(?:increas|decreas|ris|rose|grew|grow|fell|fall|drop|declin|gain|los|up|down|more|"
                           r"less|fewer|higher|lower|change|differen|compar|growth|gap)\w*", re.I)
#: a piece of text whose numbers may be combined: a line or a sentence
_PIECE_SPLIT = re.compile(r"\n+|(?<=[.;!?])\s+(?=[A-Z(])")


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
        k = _SCALE.get(scale.rstrip("s") if scale != "mn" else scale, 1.0)
        value = float(whole.replace(",", "") + frac) * k
        written = m.group(0)[:len(m.group(0)) - len(m.group(4) or "")]
        out.append((written, value, 0.5 * 10 ** -(len(frac) - 1 if frac else 0) * k))
    return out


def _checked(written: str, value: float) -> bool:
    """Whether an answer's number is worth checking: not a year ("2019"; "2,019" is a count),
    and not a one-digit count or list number ("3", "1."), which a text may write as a word."""
    if written.isdigit() and len(written) == 4 and 1900 <= value <= 2100:
        return False
    return not (written.isdigit() and value < 10)


def _pair_shows(values: Any, v: float, tol: float, *, sums: bool, percent: bool) -> bool:
    """Whether two of the sorted ``values`` differ by ``v``, add up to it (``sums``), or one
    exceeds or falls short of the other by ``v`` percent (``percent``), each within ``tol``.
    Binary search per value: no table of all pairs."""
    import numpy as np

    if values.size < 2:
        return False

    own = np.arange(values.size)

    def hit(lo_t: Any, hi_t: Any) -> bool:  # some value in [lo_t[i], hi_t[i]] other than values[i] itself
        lo, hi = np.searchsorted(values, lo_t, side="left"), np.searchsorted(values, hi_t, side="right")
        return bool(np.any(hi - lo - ((lo <= own) & (own < hi)) > 0))

    if hit(values + v - tol, values + v + tol):  # b - a = v
        return True
    if sums and hit(v - values - tol, v - values + tol):  # a + b = v
        return True
    if not percent:
        return False
    base = np.where(values > 0, values, np.nan)  # a percentage change from a positive value
    return any(f > 0 and hit(base * f - base * tol / 100, base * f + base * tol / 100)  # b = a (1 +- v/100)
               for f in (1 + v / 100, 1 - v / 100))


def checked_numbers(answer: str) -> list[str]:
    """The numbers in ``answer`` that :func:`ungrounded_numbers` checks, as written (not years
    1900-2100, not one-digit integers)."""
    if not isinstance(answer, str):
        raise ArgumentTypeError(f"answer must be a string, got {type(answer).__name__}: {answer!r}")
    return [w for w, v, _ in _numbers(answer, glued=False) if _checked(w, v)]


def ungrounded_numbers(answer: str, texts: Sequence[str], *, question: str = "") -> list[str]:
    """The numbers ``answer`` states that neither ``texts`` nor ``question`` show.

    A number counts as shown when a text states it at the answer's precision ("1.46 million"
    for "1,455,123", "EUR 48.8 billion" for "EUR 48,771 million"; a stated number also at a
    thousand, million or billion times or parts, for a unit named in a table's header), or
    when it is the difference, sum or percentage change of two numbers of one line or
    sentence ("EUR 6,929 (4,187) million": an increase of 2,742). Across sentences (one year's
    figure against another's) only a difference or percentage change counts, and only when the
    answer words a change ("an increase of", "up", "more than"). Years (1900-2100), days of
    written dates, one-digit integers and numbers glued to letters are not checked. A
    reader must not state a figure it was not shown: a model writes plausible figures from
    memory. With many numbers read, a computed-looking figure may match some pair by chance,
    so the check catches invented figures; it does not prove a figure right.

    Parameters
    ----------
    answer : str
        The LLM's answer.
    texts : sequence of str
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
        raise ArgumentTypeError(f"answer must be a string, got {type(answer).__name__}: {answer!r}")
    if isinstance(texts, str):
        raise ArgumentTypeError("texts must be a list of strings (the texts the LLM read), not one string")
    texts = list(texts)
    bad = [t for t in texts if not isinstance(t, str)]
    if bad:
        raise ArgumentTypeError(f"texts must be a list of strings (the texts the LLM read); got an item {bad[0]!r}")
    if not isinstance(question, str):
        raise ArgumentTypeError(f"question must be a string, got {type(question).__name__}: {question!r}")
    wanted = [(w, v, tol) for w, v, tol in _numbers(answer, glued=False) if _checked(w, v)]
    if not wanted:
        return []
    pieces = [np.array(sorted({v for _, v, _ in _numbers(p)}), dtype=float)
              for t in [*texts, question] for p in _PIECE_SPLIT.split(t) if any(ch.isdigit() for ch in p)]
    pieces = [p for p in pieces if p.size]
    every = np.unique(np.concatenate(pieces)) if pieces else np.empty(0)
    across = _CHANGE_WORDS.search(answer) is not None
    out = []
    for w, v, tol in wanted:
        tol = tol * 1.0000001
        found = False
        for k in _UNIT_SCALES:
            vk, tk = v / k, tol / k
            pct = k == 1.0  # a percentage has no unit scale
            if (np.any(np.abs(every - vk) <= tk)
                    or any(_pair_shows(p, vk, tk, sums=True, percent=pct) for p in pieces)
                    or (across and _pair_shows(every, vk, tk, sums=False, percent=pct))):
                found = True
                break
        if not found:
            out.append(w)
    return out
