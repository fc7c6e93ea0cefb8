"""T-GRAG generation (Eq. 8): one answer per sub-question, then a synthesis; a no-LLM mode without one."""

from __future__ import annotations

import math
import re
import weakref
from typing import Any

from chronorag.errors import LLMEchoError, LLMError
from chronorag.graphs.answer_checks import checked_numbers, ungrounded_numbers
from chronorag.graphs.text import no_answer_reply, stem_word
from chronorag.retrievers.tgrag.decomposition import (
    comparison_note,
    looks_ahead,
    present_note,
    uncovered,
    uncovered_years,
    unread_conditions,
)
from chronorag.retrievers.tgrag.retriever import TGragRetriever, _PeriodResult

__all__ = ["SUBANSWER_PROMPT", "SYNTHESIS_PROMPT", "answer_tgrag"]

SUBANSWER_PROMPT = """Answer the question for {period} using only the material below.

Facts from the {period} knowledge graph:
{graph}

Source texts:
{texts}

Question: {question}
Answer briefly; say "not stated" if the material does not answer it."""

SYNTHESIS_PROMPT = """A question was split by time period and each part was answered separately.

{pairs}

Original question: {question}
Write the final answer, combining the parts and keeping every number and period exact."""


# words that say nothing about what a sentence must contain to answer a question
_FUNCTION_WORDS = frozenset("""
a an the of in on at to for from by with about as and or but not no nor is are was were be been being do does
did done have has had what which who whom whose when where why how many much this that these those it its
their there here than then into over under between during before after per each any all some more most less
least other such only own same so too very can could should would will may might must shall also both
mentioned according report reports reported year years total number company group respectively""".split())
_NUMBER_QUESTION = re.compile(r"^\s*(?:how\s+(?:many|much)|what\s+(?:was|were|is|are)\s+the\s+"
                              r"(?:number|total|amount|share|percentage|proportion|rate))\b", re.I)
_YEAR_RE = re.compile(r"\b(?:19|20)\d{2}\b")
#: a quantity: digits not glued to letters ("1,614,231", "61", "6.35"; not the model name "R8")
_QUANTITY_RE = re.compile(r"(?<![A-Za-z\d])\d[\d,.]*(?![A-Za-z\d])")


def _short_answer(a: Any) -> str:
    text = " ".join(str(a).split())
    return repr(text if len(text) <= 80 else text[:77] + "...")


#: a question word is "informative" when fewer than this share of the index's sentences hold it
#: ("Audi" in Audi's reports is not; "deliver" is; 0.1 lost "board" and "management" in the
#: demo's small reports, 0.3 and 0.5 gave the same answers on Time-LongQA dev)
_INFORMATIVE_DF = 0.3


#: per index KG: (number of sentences when counted, stem -> sentences holding it, sample size);
#: weak keys, so a dropped index takes its counts with it
_DF_CACHE: weakref.WeakKeyDictionary[Any, tuple[int, dict[str, int], int]] = weakref.WeakKeyDictionary()


#: a word: three or more letters, an ampersand term ("R&D", "M&A") or letters with digits ("CO2", "Q4")
_WORD_RE = re.compile(r"[a-z][a-z-]{2,}|[a-z\d]*[a-z][a-z\d]*&[a-z\d&]+|[a-z]+\d[a-z\d]*")


def _stems(text: str) -> set[str]:
    words = [w for w in _WORD_RE.findall(text.lower()) if w not in _FUNCTION_WORDS]
    return {stem_word(w) if w.isalpha() or "-" in w else w for w in words}


def _shares_stem(need: set[str], have: set[str]) -> bool:
    """True when a stem of ``need`` is in ``have``, or one is a prefix (4+ letters) of the other:
    the Porter stems of "deliveries" and "delivered" are "deliveri" and "deliv"."""
    return bool(need & have) or any(
        min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)) for a in need for b in have)


def _doc_freq(kg: Any) -> tuple[dict[str, int], int]:
    """Stem -> number of sentences holding it, over up to 4,000 of the index's sentences
    (evenly spaced; cached per KG until sentences are added to it)."""
    n = len(kg.unit_text)
    cached = _DF_CACHE.get(kg)
    if cached is not None and cached[0] == n:
        return cached[1], cached[2]
    step = max(1, n // 4000)
    df: dict[str, int] = {}
    sample = range(0, n, step)
    for u in sample:
        for t in _stems(kg.unit_text[u]):
            df[t] = df.get(t, 0) + 1
    _DF_CACHE[kg] = (n, df, max(1, len(sample)))
    return df, max(1, len(sample))


#: forward-looking wording: a plan, a target or an outlook, not the figure of the report's year
_FORECAST = re.compile(r"\b(?:expects?|expecting|expected\s+to|anticipates?|anticipating|anticipated\s+to|likely\s+to|"
                       r"forecasts?|forecasting|forecast\s+to|outlook|targets?\s+(?:of|for|to|a|an)|targeting|"
                       r"plans?\s+to|planning\s+to|aims?\s+to|aiming|intends?\s+to|will|projected\s+to|guidance|"
                       r"ambitions?|goals?\s+(?:of|for|is|are|to))\b", re.I)
#: a part of a year, by its canonical key: a quarter, a half, the end of the year, a month
_PARTS_OF_YEAR = (
    (re.compile(r"\b(?:first|1st)\s+quarter\b|\bq1\b", re.I), "q1"),
    (re.compile(r"\b(?:second|2nd)\s+quarter\b|\bq2\b", re.I), "q2"),
    (re.compile(r"\b(?:third|3rd)\s+quarter\b|\bq3\b", re.I), "q3"),
    (re.compile(r"\b(?:fourth|4th|final|last)\s+quarter\b|\bq4\b", re.I), "q4"),
    (re.compile(r"\b(?:first\s+half|(?<!second\s)half[-\s]year|first\s+six\s+months|h1)\b", re.I), "h1"),
    (re.compile(r"\b(?:second\s+half|h2)\b", re.I), "h2"),
    (re.compile(r"\b(?:first\s+nine\s+months|nine[-\s]month)\b", re.I), "9m"),
    (re.compile(r"\b(?:(?:at\s+the\s+)?end\s+of\s+(?:the\s+)?(?:year|fiscal\s+year|reporting\s+period|\d{4})|"
                r"year[-\s]end|as\s+(?:of|at)\s+december\s+31|december\s+31)\b", re.I), "end"),
    *((re.compile(rf"\b{m}\b", re.I), m) for m in ("january", "february", "march", "april", "june", "july", "august",
                                                   "september", "october", "november", "december")),
)
#: the parts a sentence may not mention when the question names none: quarters, halves, nine months
_SUB_YEAR_KEYS = frozenset({"q1", "q2", "q3", "q4", "h1", "h2", "9m"})
#: spaCy entity types whose names a question may use to name what it asks about
_NAME_TYPES = frozenset({"ORG", "PERSON", "GPE", "NORP", "LOC", "FAC", "PRODUCT"})
#: per index KG: lower-cased entity names (see :func:`_names`)
_NAME_CACHE: weakref.WeakKeyDictionary[Any, tuple[int, frozenset[str], frozenset[str]]] = weakref.WeakKeyDictionary()


def _parts_of_year(text: str) -> set[str]:
    return {key for pat, key in _PARTS_OF_YEAR if pat.search(text)}


def _names(kg: Any) -> tuple[frozenset[str], frozenset[str]]:
    """The KG's entity names (lower case) and every lower-case word of its sentences (cached per KG)."""
    n = len(kg.unit_text)
    cached = _NAME_CACHE.get(kg)
    if cached is not None and cached[0] == n:
        return cached[1], cached[2]
    names = frozenset(str(x).lower() for x, t in zip(kg.node_name, kg.node_type)
                      if t in _NAME_TYPES and re.fullmatch(r"[^\W\d_](?:[^\W\d_]|[&.' -]){2,}", str(x)))
    vocab = frozenset(w for text in kg.unit_text for w in re.findall(r"[\w&-]+", text.lower()))
    _NAME_CACHE[kg] = (n, names, vocab)
    return names, vocab


def _named(kg: Any, question: str, df: dict[str, int], n: int) -> list[str]:
    """The names a question uses, one of which an answer must mention: the KG's entity names
    it writes as names ("China", "Ducati"; any case in a question typed all in lower case) and
    capitalised words no sentence of the index holds ("Tesla" in Audi's reports), leaving out
    names most sentences hold ("Audi") and the question's first word."""
    names, vocab = _names(kg)
    toks = re.findall(r"[\w&-]+(?:'s)?", question)
    low = [re.sub(r"'s$", "", t.lower()) for t in toks]
    # a plural of a name or a word the sentences use ("Lamborghinis") is that name or word
    low = [w[:-1] if w.endswith("s") and w not in vocab and w[:-1] in vocab else w for w in low]
    typed_lower = not any(t[:1].isupper() for t in toks[1:])
    found: list[str] = []
    taken: set[int] = set()
    for size in (4, 3, 2, 1):
        for i in range(len(low) - size + 1):
            span = " ".join(low[i:i + size])
            if taken & set(range(i, i + size)) or span not in names:
                continue
            if not typed_lower and not all(t[:1].isupper() or t.lower() in _FUNCTION_WORDS for t in toks[i:i + size]):
                continue  # "the status of the sites": words a heading capitalised, not names
            if typed_lower and any(df.get(stem_word(w), 0) / n >= _RARE_NAME_DF for w in low[i:i + size]
                                   if w not in _FUNCTION_WORDS):
                continue  # "vehicle production": in a question without capitals only rare names count
            if i == 0 and size == 1 and not typed_lower:
                continue
            rare = [w for w in low[i:i + size] if w not in _FUNCTION_WORDS and df.get(stem_word(w), 0) / n < _INFORMATIVE_DF]
            if not rare:
                continue  # "Audi" in Audi's reports: every answer is about it
            found.append(" ".join(rare))  # "Audi Supervisory Board": "supervisory board"
            taken |= set(range(i, i + size))
    for i, (t, w) in enumerate(zip(toks, low)):
        if i and i not in taken and t[:1].isupper() and w.isalpha() and w not in _FUNCTION_WORDS and w not in vocab:
            found.append(w)
    return found


#: in a question typed without capitals, a KG name counts only when its words are this rare
_RARE_NAME_DF = 0.02


def _mentions(have: set[str], name_stems: set[str]) -> bool:
    """True when the stems ``have`` of a sentence hold a word of a name, given by its stems (its
    rare words: "Audi Sport" for "sport gmbh", "Hungary" for "győr hungary")."""
    return not name_stems or any(_shares_stem({t}, have) for t in name_stems)


#: a question that asks for somebody ("Who chaired ...?", "In 2021, who ..."): a sentence naming a
#: person or an organisation the question does not name is preferred
_WHO_QUESTION = re.compile(r"(?:^|[,;:]\s*)(?:who|whom)\b", re.I)
#: a question whose answer may itself be a name ("Which market ...?", "What model ...?"): a name the
#: question does not use is no sign that a sentence is about something else
_ASKS_NAME = re.compile(r"\b(?:who|whom|whose|which|where)\b|^\W*(?:in\s+\d{4},?\s+)?what\s+(?!(?:was|were|is|are|did|does|do|"
                        r"has|have|had|percentage|share|number|amount|proportion|rate|total)\b)", re.I)
#: a question word: a question without one is a keyword query ("audi revenue 2021")
_WH_WORD = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how)\b", re.I)
#: spaCy entity types that name what a sentence is about: a company, a brand, a place, a market
_SUBJECT_TYPES = frozenset({"ORG", "GPE", "LOC", "NORP", "FAC", "PRODUCT"})


def _name_stems(kg: Any, node: int, df: dict[str, int], n: int) -> tuple[set[str], set[str]] | None:
    """A node's name as (all stems, rare stems), or None when it is no name: a number spaCy took
    for an organisation ("EUR 53,068"); a footnote glued to a name ("Audi3") is dropped."""
    name = re.sub(r"(?<=[^\W\d_])[\d\u00b2\u00b3\u00b9\u2070-\u2079]+\b", "", str(kg.node_name[node]))
    if re.search(r"\d", name):
        return None
    stems = _stems(name)
    return (stems, {t for t in stems if df.get(t, 0) / n < _INFORMATIVE_DF}) if stems else None


def _off_subject(kg: Any, u: int, q_stems: set[str], df: dict[str, int], n: int) -> bool:
    """True when sentence ``u`` is about another subject than the question: it names a company,
    brand, place or market whose rare words the question does not use ("Lamborghini handed 9,233
    vehicles over" for Audi's deliveries) and none that the question uses or that most of the
    index's sentences share ("Audi" in Audi's reports, the implied subject of "operating profit
    2021"). A sentence that names Audi beside Lamborghini and Ducati is not off the subject, and
    an organisation written as an acronym ("NEDC", "ROS": mostly a term the sentence defines) is
    no subject."""
    foreign = False
    for node in kg.unit_nodes(u):
        typ = kg.node_type[node]
        got = _name_stems(kg, node, df, n) if typ in _SUBJECT_TYPES else None
        if got is None or (typ == "ORG" and str(kg.node_name[node]).isupper()):
            continue
        if not got[1] or got[1] & q_stems:
            return False
        foreign = True
    return foreign


def _names_other(kg: Any, u: int, q_stems: set[str], df: dict[str, int], n: int) -> bool:
    """True when sentence ``u`` names a person or an organisation the question does not: a
    candidate answer to "Who ...?" ("Markus Duesmann", "Ducati is the exclusive supplier")."""
    for node in kg.unit_nodes(u):
        got = _name_stems(kg, node, df, n) if kg.node_type[node] in ("PERSON", "ORG") else None
        if got is not None and got[1] and not got[1] & q_stems:
            return True
    return False


def _extract(kg: Any, r: _PeriodResult, periods: list[str]) -> tuple[str, str]:
    """The retrieved sentence that best covers ``r``'s sub-question, and why none can.

    A sentence must hold one of the question's informative words (see
    :data:`_INFORMATIVE_DF`), a quantity when the question asks "how many" / "how much" (digits
    not glued to letters: a model name such as "R8" is not one), one of the names the question
    uses (:func:`_named`: "BMW", "China"), the quarter or half-year the question names and none it
    does not ("Q4" for a year's figure; "the end of 2020" or a month only counts towards the
    score), and, for a
    question over all periods, every year it names that no indexed period covers ("in 2035" in
    reports of 2019-2023). Unless the question asks about plans, a sentence that looks ahead
    (an outlook, a target, "will", "expects") or names a year after its report's is skipped:
    the 2022 report's "deliveries are likely to amount to 1.8 to 1.9 million" is no 2022
    figure. Of those left, the one holding the most of the question's informative words, each
    weighted by its rarity in the index (``1 + log(n / (1 + df))``), wins; ties go to the
    better-ranked sentence. Two preferences come first: for "how many" / "how much" and keyword
    queries, a sentence about the question's subject (:func:`_off_subject`: not Lamborghini's
    deliveries for Audi's), and for "Who ...?" one that names a person or an organisation the
    question does not (:func:`_names_other`).
    """
    df, n = _doc_freq(kg)
    q = r.sub.question
    q_all = _stems(q)
    need = {t for t in q_all if df.get(t, 0) / n < _INFORMATIVE_DF}
    number = _NUMBER_QUESTION.search(q) is not None
    ahead = looks_ahead(q)
    # a year no report covers must be in the sentence when the question is over all periods ("in
    # 2035") or looks ahead to it ("What target did Audi set in 2019 for 2025?"); "in 2019 and
    # 2030" asks for two periods, and the answer says that 2030 is not covered
    foreign = sorted({y for y in _YEAR_RE.findall(q) if y not in periods and y != r.sub.period}) \
        if r.sub.period is None or ahead else []
    named = _named(kg, q, df, n)
    named_stems = [_stems(x) for x in named]  # once per question, not per sentence
    parts = _parts_of_year(q)
    later_than = int(r.sub.period) if r.sub.period and r.sub.period.isdigit() else None
    weight = {t: math.log(n / (1 + df.get(t, 0))) + 1.0 for t in need}
    who = _WHO_QUESTION.search(q) is not None
    # the question's own names: the rare stems of its capitalised words after the first ("Europcar's",
    # which spaCy may not have tagged)
    capital = {t for w in re.findall(r"(?<=\s)[A-Z][\w&-]+", q) for t in _stems(w) if df.get(t, 0) / n < _INFORMATIVE_DF}
    # a figure is somebody's figure: for "how many/much" and keyword queries ("operating profit 2021"),
    # a sentence about another subject than the question's loses to one about it
    q_stems = q_all if (number or not _WH_WORD.search(q)) and not _ASKS_NAME.search(q) else None
    best: tuple[tuple[bool, bool, float], str] | None = None
    skipped: dict[str, int] = {}
    for u in r.units:
        text = kg.unit_text[u]
        have = _stems(text)
        if need and not _shares_stem(need, have):
            continue
        if number and not _QUANTITY_RE.search(_YEAR_RE.sub("", text)):
            continue
        if any(y not in text for y in foreign):
            continue
        text_parts = _parts_of_year(text)
        why = ("a name of the question" if named and not any(_mentions(have, x) for x in named_stems) else
               "the part of the year asked" if not (parts & _SUB_YEAR_KEYS) <= text_parts else
               "a part of the year not asked" if not parts and text_parts & _SUB_YEAR_KEYS else
               "a forecast" if not ahead and (_FORECAST.search(text) or (later_than is not None and any(
                   int(y) > later_than for y in _YEAR_RE.findall(text)))) else "")
        if why:
            skipped[why] = skipped.get(why, 0) + 1
            continue
        cover = sum(w for t, w in weight.items() if _shares_stem({t}, have)) + len(parts & text_parts)
        # prefer a sentence about the question's subject, and for "who" one that names somebody
        own = q_stems is None or bool(capital & have) or not _off_subject(kg, u, q_stems, df, n)
        names_one = not who or _names_other(kg, u, q_all, df, n)
        if best is None or (own, names_one, cover) > best[0]:
            best = ((own, names_one, cover), text)  # strictly more: a tie keeps the better-ranked sentence
    if best is not None:
        return best[1], ""
    if not r.units:
        return "", "nothing was retrieved"
    wants = ([f"a word of the question ({', '.join(sorted(need))})"] if need else []) + (
        ["a number"] if number else []) + ([f"the year(s) {', '.join(foreign)} (no report covers them)"]
                                           if foreign else []) + (
        [f"one of the names {', '.join(map(repr, named))}" if len(named) > 1 else f"the name {named[0]!r}"]
        if named else []) + (
        [f"the part of the year asked ({', '.join(sorted(parts & _SUB_YEAR_KEYS))})"] if parts & _SUB_YEAR_KEYS else [])
    why = f"none of the {len(r.units)} retrieved sentences holds " + " and ".join(wants)
    left = {"a forecast": "were forecasts or targets", "a part of the year not asked":
            "gave a quarter's or a half-year's figure", "a name of the question": "lacked a name of the question",
            "the part of the year asked": "lacked the part of the year asked"}
    if skipped:
        why += " (" + ", ".join(f"{k} that {left[w]}" for w, k in skipped.items()) + ")"
    return "", why


#: a sub-answer the LLM did not give: its reply repeated the prompt (counted as ``llm.echo``)
_ECHOED = "\x00echo"


def _sub_answer(chat: Any, retriever: TGragRetriever, r: _PeriodResult) -> tuple[dict[str, Any], str]:
    """One sub-question's context and answer (:data:`_ECHOED` when the reply repeated the
    prompt: that period is unanswered, the others still count). A prompt over the model's context window is
    retried once with the whole context (graph lines and source texts) cut to the token
    budget, counted as the ``tgrag.context_cut`` fallback; a second overflow is an
    :class:`LLMError` naming the budget to lower."""
    from chronorag.integrations.llm import is_context_overflow, record_fallback

    def ask(ctx: dict[str, Any]) -> str:
        prompt = SUBANSWER_PROMPT.format(period=r.sub.period or "all periods", graph=ctx["graph"],
                                         texts="\n\n".join(ctx["texts"]), question=r.sub.question)
        return str(chat.complete([{"role": "user", "content": prompt}],
                                 template=(SUBANSWER_PROMPT, SYNTHESIS_PROMPT))).strip()

    ctx = retriever.build_context([r])
    try:
        return ctx, ask(ctx)
    except LLMEchoError:
        return ctx, _ECHOED  # this period unanswered; the other periods still count
    except LLMError as exc:
        if ctx["scope"] == "all" or not is_context_overflow(exc):
            raise
        record_fallback("tgrag.context_cut", f"the prompt exceeded the model's context window; retried with the "
                        f"whole context cut to {retriever.context_tokens} tokens ({str(exc)[:200]})")
    ctx = retriever.build_context([r], scope="all")
    try:
        return ctx, ask(ctx)
    except LLMEchoError:
        return ctx, _ECHOED
    except LLMError as exc:
        if not is_context_overflow(exc):
            raise
        raise LLMError(f"T-GRAG: the sub-question prompt does not fit the model's context window even with its "
                       f"whole context cut to context_tokens={retriever.context_tokens}; build the retriever with "
                       f"a smaller context_tokens, or serve the model with a larger window ({str(exc)[:200]})") from exc


def answer_tgrag(retriever: TGragRetriever, question: str, *, llm: Any = None,
                 time_filter: Any = None) -> dict[str, Any]:
    """Retrieve and answer (Eq. 8).

    With an LLM (``llm=``, else the retriever's, else LlamaIndex ``Settings.llm``; any
    object :func:`~chronorag.integrations.llm.resolve_llm` accepts): one answer per
    sub-question from ``K_valid`` + ``R_valid`` + ``D_valid`` within the token budget,
    then a synthesis when there are several (a synthesis that says there is no answer although
    some periods were answered is counted as ``tgrag.synthesis`` and the stated sub-answers,
    joined, are the answer). A sub-question prompt longer than the model's
    context window is retried once with everything cut to the budget (the
    ``tgrag.context_cut`` fallback, counted). A figure in the answer that no text the LLM
    read shows (:func:`~chronorag.graphs.answer_checks.ungrounded_numbers`: at the answer's
    precision, or computed from two figures of one sentence, or across sentences when the answer
    words a change) is counted as
    ``tgrag.ungrounded``: the answer is withheld when none of its figures is shown, and
    carries an "unverified" reason when some are not. Without one: the best-matching knowledge
    unit per sub-question (an *extractive* answer, labelled as such in ``mode``).

    What per-period retrieval cannot apply
    (:func:`~chronorag.retrievers.tgrag.decomposition.unread_conditions`: "last year", "which
    year ... the most", "except 2020", a yes/no comparison for the extractive reader) is refused
    without an LLM, the per-period sentences kept in ``sub_answers``, and named in ``reason``
    beside an LLM's answer. An open range no indexed period falls in ("before 2012" over reports
    from 2012) is refused in both modes, before any LLM call.

    Returns
    -------
    dict
        ``answer``, ``mode``, ``decomposition`` (which one ran), ``sub_answers``,
        ``abstained`` (no answer) and ``reason`` (why), ``evidence`` (every source text the
        answer was built from), ``chunk_ids``.

    Raises
    ------
    LLMError
        ``llm`` is of an unknown kind, or an LLM call failed.
    """
    from chronorag.integrations.llm import resolve_llm

    chat = resolve_llm(llm, use_env=False) if llm is not None else (retriever.llm or resolve_llm(None, use_env=False))
    kg = retriever._index.kg
    mode = ("extractive (no LLM): best retrieved sentence per sub-question that holds the question's "
            "informative words") if chat is None else f"LLM ({chat.name})"
    periods = list(kg.periods)
    unread = unread_conditions(question, periods, extractive=chat is None)
    if uncovered(question, periods):  # "before 2012" over reports from 2012: nothing can show it
        return {"answer": "", "mode": mode, "decomposition": "none", "sub_answers": [], "abstained": True,
                "reason": "cannot answer: " + "; ".join(unread), "evidence": [], "chunk_ids": []}
    ranked, results = retriever.retrieve_chunks(question, time_filter=time_filter)
    how = results[0].decomposition if results else retriever.decompose
    # "in 2019 and 2030" over reports of 2012-2023: 2019 is answered, 2030 said to be uncovered
    outside = uncovered_years(question, periods) if any(r.sub.period for r in results) else []
    beyond = (f"no report covers {', '.join(outside)} (the reports cover {periods[0]} to {periods[-1]})"
              if outside else "")
    if chat is None:
        subs, missing = [], []
        for r in results:
            best, why = _extract(kg, r, periods)
            subs.append({"period": r.sub.period, "question": r.sub.question, "answer": best})
            if why:
                missing.append(f"[{r.sub.period or 'all'}] {why}")
        final = " ".join(f"[{s['period'] or 'all'}] {s['answer'] or '(not found)'}" for s in subs)
        found = any(s["answer"] for s in subs)
        if beyond:
            missing.append(beyond)
        reason = "; ".join(missing)
        if found and missing:
            reason = "partial answer: " + reason
        if unread:  # a sentence per period would answer another question: refuse, keeping the sentences
            found, reason = False, "cannot represent: " + "; ".join(unread)
        elif found:
            reason = "; ".join(p for p in (reason, comparison_note(question), present_note(question, periods)) if p)
        return {"answer": final if found else "", "mode": mode,
                "decomposition": how, "sub_answers": subs, "abstained": not found,
                "reason": reason if results else "no sub-question retrieved anything",
                "evidence": [kg.chunk_text[c] for c in ranked], "chunk_ids": ranked}
    subs, evidence, used_ids, graph_lines = [], [], [], []
    synthesis = ""
    for r in results:
        ctx, answer = _sub_answer(chat, retriever, r)
        graph_lines.append(ctx["graph"])
        for c, t in zip(ctx["chunk_ids"], ctx["texts"]):
            if c not in used_ids:
                used_ids.append(c)
                evidence.append(t)
        subs.append({"period": r.sub.period, "question": r.sub.question, "answer": answer})
    echoed = [s for s in subs if s["answer"] == _ECHOED]
    for s in echoed:
        s["answer"] = ""
    unstated = [s for s in subs if s not in echoed and no_answer_reply(str(s["answer"]))]
    stated = [s for s in subs if s not in unstated and s not in echoed]
    if not stated:
        final = ""
    elif len(subs) == 1:
        final = str(subs[0]["answer"])
    else:
        pairs = "\n".join(f"- ({s['period']}) {s['question']} -> {s['answer'] or 'not stated'}" for s in subs)
        joined = " ".join(f"[{s['period'] or 'all'}] {s['answer']}" for s in stated)  # when the synthesis fails
        try:
            final = chat.complete([{"role": "user", "content": SYNTHESIS_PROMPT.format(pairs=pairs, question=question)}],
                                  template=(SYNTHESIS_PROMPT, SUBANSWER_PROMPT)).strip()
        except LLMEchoError:  # counted as llm.echo: the stated sub-answers, joined, are the answer
            final = joined
        else:
            if no_answer_reply(final):  # the parts were answered but the synthesis says they were not
                from chronorag.integrations.llm import record_fallback

                record_fallback("tgrag.synthesis", f"the synthesis found no answer: {_short_answer(final)}")
                synthesis = (f"the LLM's synthesis said there is no answer ({_short_answer(final)}); the stated "
                             f"sub-answers are given as they are (counted as tgrag.synthesis)")
                final = joined
    figures = ""
    if final:  # a figure no retrieved text states is the model's, not the reports'
        unshown = ungrounded_numbers(final, [*graph_lines, *evidence], question=question)
        if unshown:
            from chronorag.integrations.llm import record_fallback

            listed = ", ".join(unshown)
            record_fallback("tgrag.ungrounded", f"figure(s) in no retrieved text: {listed}")
            if len(unshown) == len(checked_numbers(final)):
                final, stated = "", []
                figures = (f"the LLM's answer states figures that no retrieved text holds ({listed}); "
                           f"withheld (counted as tgrag.ungrounded)")
            else:
                figures = (f"unverified: the figure(s) {listed} in the answer are in no retrieved text "
                           f"(counted as tgrag.ungrounded)")
    reason = ""
    if unstated or echoed:  # the prompt asks for "not stated" when the material does not answer
        parts = ([("the LLM found no answer in the retrieved material for "
                   + ", ".join(str(s["period"] or "all periods") for s in unstated)
                   + f" ({_short_answer(unstated[0]['answer'])})")] if unstated else []) + (
            [("the LLM repeated the prompt instead of answering for "
              + ", ".join(str(s["period"] or "all periods") for s in echoed) + " (counted as llm.echo)")]
            if echoed else [])
        reason = "; ".join(parts)
        if stated:
            reason = "partial answer: " + reason
    elif not final and not figures:
        reason = ("the LLM gave an empty answer" if subs else "no sub-question retrieved anything")
    unapplied = ("the retrieval did not apply " + "; ".join(unread)
                 + " (the answer is the LLM's reading of the retrieved reports)") if unread else ""
    now = present_note(question, periods) if final else ""
    if beyond and final and not reason.startswith("partial answer"):
        beyond = "partial answer: " + beyond
    reason = "; ".join(p for p in (reason, beyond, synthesis if final else "", figures, unapplied, now) if p)
    return {"answer": final, "mode": mode, "decomposition": how, "sub_answers": subs,
            "abstained": not final, "reason": reason, "evidence": evidence, "chunk_ids": used_ids}
