"""Evaluation metrics shared by every method.

- :func:`answer_matches` / :func:`hits_at_k`: ranked answers against gold answers.
  Entity names match exactly after normalisation (case, punctuation, articles and
  spacing removed; a non-breaking space counts as a space). Times match at the
  *gold's* granularity: gold ``"2010-05"`` accepts ``"2010-05"``, ``"May 2010"`` and
  ``"2010-05-14"`` (a day inside that month) but not ``"2010"``.
- :func:`exact_match` and :func:`token_f1`: SQuAD-style EM and token F1.
- :func:`evidence_recall`: whether every gold evidence passage is found in the
  retrieved texts (:func:`passage_found`: normalised substring, or >= 0.8 of its content
  words inside one window twice its length, with every year it names present).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

from chronorag.errors import ArgumentTypeError, ConfigError, TimeParseError
from chronorag.graphs.time import TimePoint, parse_time_mention

__all__ = [
    "answer_matches",
    "evidence_recall",
    "exact_match",
    "hits_at_k",
    "normalize_answer",
    "passage_found",
    "token_f1",
    "token_overlap",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower-case, drop punctuation and articles, collapse spaces."""
    if not isinstance(text, str):
        raise ArgumentTypeError(f"answer must be a string, got {type(text).__name__}: {text!r}")
    s = text.replace("\u00a0", " ").lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def _as_time(text: str) -> TimePoint | None:
    try:
        tp = parse_time_mention(text)
    except TimeParseError:
        return None
    return None if tp.is_inf else tp


def answer_matches(prediction: str, gold: str) -> bool:
    """Does one predicted answer match one gold answer?

    A gold that parses as a time (``"2010"``, ``"2010-05"``, ``"2010-05-14"``) is
    matched at its own granularity: the prediction must be a time at least as fine
    whose truncation equals the gold. Otherwise names are compared after
    :func:`normalize_answer`.
    """
    if not isinstance(prediction, str) or not isinstance(gold, str):
        raise ArgumentTypeError(f"answers must be strings, got {prediction!r} and {gold!r}")
    g = _as_time(gold)
    if g is not None:
        p = _as_time(prediction)
        if p is None or p.granularity < g.granularity:
            return False
        return p.truncate(g.granularity) == g
    return normalize_answer(prediction) == normalize_answer(gold) != ""


def hits_at_k(ranked: Sequence[str], golds: Sequence[str], k: int = 1) -> float:
    """1.0 when any of the top-``k`` ranked answers matches any gold answer, else 0.0."""
    if not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a positive integer, got {k!r}")
    if isinstance(ranked, str) or isinstance(golds, str):
        raise ArgumentTypeError("ranked and golds must be sequences of strings, not strings")
    if not golds:
        raise ConfigError("golds is empty: a question needs at least one gold answer")
    return float(any(answer_matches(p, g) for p in list(ranked)[:k] for g in golds))


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    """SQuAD exact match against any gold answer."""
    if isinstance(golds, str):
        raise ArgumentTypeError("golds must be a sequence of strings")
    p = normalize_answer(prediction)
    return float(any(p == normalize_answer(g) for g in golds))


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    """Best SQuAD token F1 against the gold answers."""
    if isinstance(golds, str):
        raise ArgumentTypeError("golds must be a sequence of strings")
    best = 0.0
    ptoks = normalize_answer(prediction).split()
    for g in golds:
        gtoks = normalize_answer(g).split()
        if not ptoks or not gtoks:
            best = max(best, float(ptoks == gtoks))
            continue
        common = sum((Counter(ptoks) & Counter(gtoks)).values())
        if common == 0:
            continue
        prec, rec = common / len(ptoks), common / len(gtoks)
        best = max(best, 2 * prec * rec / (prec + rec))
    return best


def token_overlap(passage: str, text: str) -> float:
    """Share of ``passage``'s normalised tokens (with multiplicity) that occur in ``text``."""
    ptoks = normalize_answer(passage).split()
    if not ptoks:
        return 0.0
    ttoks = Counter(normalize_answer(text).split())
    return sum((Counter(ptoks) & ttoks).values()) / len(ptoks)


_STOP = frozenset(
    "a an the of and or in on at to for by with from as is are was were be been its it this that these those "
    "which who whom than then also into over per their his her our we they he she has have had not".split())
_YEAR_TOKEN = re.compile(r"^(?:19|20)\d{2}$")


def _best_window(need: Counter[str], toks: list[str], width: int) -> int:
    """Most passage content tokens (with multiplicity) inside any ``width``-token window."""
    have: Counter[str] = Counter()
    matched = best = 0
    for i, w in enumerate(toks):
        if w in need:
            if have[w] < need[w]:
                matched += 1
            have[w] += 1
        if i >= width:
            old = toks[i - width]
            if old in need:
                have[old] -= 1
                if have[old] < need[old]:
                    matched -= 1
        best = max(best, matched)
    return best


def passage_found(passage: str, text: str, *, min_overlap: float = 0.8) -> bool:
    """Is a gold evidence passage present in a retrieved text?

    Found when the normalised passage is a substring of the normalised text, or when
    (a) at least ``min_overlap`` of the passage's content words (stop words dropped,
    with multiplicity) occur *together*, inside one window of the text twice the
    passage's length (min. 20 words), and (b) every year the passage names occurs in
    the text. Words scattered over a long chunk do not count, nor does the same
    statement about another year. Passages with under three content words need the
    substring. (The window, rather than exact n-grams, is deliberate: Time-LongQA's
    dual/multi evidence passages are paraphrases of the reports, not quotes.)
    """
    if not isinstance(passage, str) or not isinstance(text, str):
        raise ArgumentTypeError("passage and text must be strings")
    p, t = normalize_answer(passage), normalize_answer(text)
    if not p:
        return False
    if p in t:
        return True
    ptoks, ttoks = p.split(), t.split()
    content = [w for w in ptoks if w not in _STOP]
    if len(content) < 3:
        return False
    tset = set(ttoks)
    if any(_YEAR_TOKEN.match(w) and w not in tset for w in ptoks):
        return False
    width = max(20, 2 * len(ptoks))
    return _best_window(Counter(content), ttoks, width) / len(content) >= min_overlap


def evidence_recall(
    retrieved: Sequence[str], evidence: Sequence[str], *, k: int | None = None,
    min_overlap: float = 0.8,
) -> float:
    """1.0 when every gold evidence passage is found (:func:`passage_found`) in one of the
    top-``k`` retrieved texts (all of them when ``k`` is ``None``), else 0.0.

    This is the one evidence-recall used by ``chronorag eval`` and
    ``benchmarks/bench_tgrag.py``; both pass every text a method read.
    """
    if isinstance(retrieved, str) or isinstance(evidence, str):
        raise ArgumentTypeError("retrieved and evidence must be sequences of strings")
    if not 0 < min_overlap <= 1:
        raise ConfigError(f"min_overlap must be in (0, 1], got {min_overlap}")
    if k is not None and k < 1:
        raise ConfigError(f"k must be a positive integer, got {k!r}")
    texts = list(retrieved)[:k] if k is not None else list(retrieved)
    for passage in evidence:
        if not normalize_answer(passage):
            continue
        if not any(passage_found(passage, t, min_overlap=min_overlap) for t in texts):
            return 0.0
    return 1.0
