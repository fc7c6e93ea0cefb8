"""Text utilities every layer shares: the one token counter and the one ranked-answer parser.

- :func:`count_tokens` counts with tiktoken's ``cl100k_base`` (LlamaIndex's default
  tokenizer, whose vocabulary LlamaIndex ships, so it works offline); without it, it
  counts whitespace words, and :func:`tokenizer_name` says which unit was used.
- :func:`parse_ranked_answers` reads an LLM's ranked answer list, whatever the reader:
  reasoning blocks (``<think>``) and lines before an ``Answers:`` line are dropped;
  numbering, bullets and quotes are removed; items are split on new lines, ``|`` and ``;``.
- :func:`strip_reasoning` removes a reasoning model's ``<think>...</think>`` block.
- :func:`stem_word` is the one word stemmer (Porter, from PyStemmer) that lexical matching
  uses everywhere: relation names in TempTool, question words in T-GRAG's extracts.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from typing import Any

from chronorag.errors import ArgumentTypeError, ConfigError

__all__ = ["count_tokens", "cut_to_tokens", "no_answer_reply", "parse_ranked_answers", "stem_word",
           "strip_reasoning", "tokenizer_name"]

_TOKENIZER: Any = None
_THINK_RE: Any = None


def _tokenizer() -> Any:
    global _TOKENIZER
    if _TOKENIZER is None:
        try:
            import tiktoken

            if "TIKTOKEN_CACHE_DIR" not in os.environ:  # the vocabulary LlamaIndex ships (offline)
                import llama_index.core

                os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(
                    os.path.dirname(llama_index.core.__file__), "_static", "tiktoken_cache")
            _TOKENIZER = tiktoken.get_encoding("cl100k_base")
        except Exception:  # noqa: BLE001 - no tiktoken or no cached vocabulary offline: words, named
            _TOKENIZER = False
    return _TOKENIZER


def count_tokens(text: str | Sequence[str]) -> int:
    """Tokens in ``text`` (a string, or the sum over a sequence of strings).

    tiktoken ``cl100k_base`` when available, else whitespace words (see :func:`tokenizer_name`).
    """
    texts = [text] if isinstance(text, str) else list(text)
    tok = _tokenizer()
    if tok is False:
        return sum(len(str(t).split()) for t in texts)
    return sum(len(tok.encode(str(t), disallowed_special=())) for t in texts)


def tokenizer_name() -> str:
    """The unit :func:`count_tokens` counts in: ``"tiktoken:cl100k_base"`` or ``"whitespace"``."""
    return "tiktoken:cl100k_base" if _tokenizer() else "whitespace"


def cut_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of ``text``, ending at a word, within ``budget`` tokens."""
    if budget <= 0:
        return ""
    if count_tokens(text) <= budget:
        return text
    ends = [m.end() for m in re.finditer(r"\S+", text)]
    lo, hi = 0, len(ends)
    while lo < hi:  # binary search on the number of words
        mid = (lo + hi + 1) // 2
        if count_tokens(text[: ends[mid - 1]]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[: ends[lo - 1]] if lo else ""


_ADVERB = r"(?:(?!only\b)\w+ly\s+)?"  # "does not explicitly state"; "not only" is no refusal
#: phrases that say the material does not answer, whatever the sentence's subject
_NO_ANSWER = re.compile(
    rf"\b(?:not\s+{_ADVERB}(?:stated|mentioned|specified|answered|addressed)|no\s+(?:information|mention|answer)|"
    rf"(?:cannot|can't|unable\s+to)\s+(?:be\s+)?(?:answer|determin)\w*|(?:does|do|did)\s*(?:not|n't)\s+{_ADVERB}answer|"
    r"(?:i\s+)?(?:do\s+not|don't)\s+know|unknown)\b", re.I)
#: phrases that say so only when the reply opens with them or its subject is the material
#: ("The facts do not mention it."; not "Audi did not report a loss", a negative answer)
_NO_ANSWER_WEAK = re.compile(
    rf"\b(?:not\s+{_ADVERB}(?:given|provided|available|found|known|included|listed|reported|disclosed|shown|"
    rf"indicated|covered)|(?:does|do|did)\s*(?:not|n't)\s+{_ADVERB}(?:state|say|mention|specify|contain|include|"
    r"provide|address|cover|give|show|indicate|list|report|tell)|(?:cannot|can't|unable\s+to)\s+(?:find|tell))\b",
    re.I)
_SOURCE_WORDS = re.compile(
    r"\b(?:texts?|reports?|materials?|context|facts?|documents?|passages?|sources?|information|data|study|"
    r"article|records?|events?|evidence|it|this|that|answer|question|figure|number|value|amount)\b", re.I)
_YEARS = re.compile(r"\b(?:19|20)\d{2}\b")


def no_answer_reply(text: str, *, max_chars: int = 160) -> bool:
    """True when a short LLM reply says the material does not answer ("Not stated.", "The facts
    do not mention it.", "The material does not answer the question.", "unknown"): an
    abstention, not an answer.

    A reply that states a figure (digits other than a year or a name's, "A3"), or that is longer than
    ``max_chars``, is an answer that may carry such a phrase in passing. Phrases that also
    state negative facts ("not reported", "did not give") count only when the reply opens with
    them or its subject is the material ("The report does not state ...", not "Audi did not
    report a loss").
    """
    t = " ".join(str(text).split())
    if not t or len(t) > max_chars or re.search(r"(?<![^\W\d_])\d", _YEARS.sub("", t)):  # "A3" is a name
        return False
    if _NO_ANSWER.search(t):
        return True
    m = _NO_ANSWER_WEAK.search(t)
    return m is not None and (not t[:m.start()].strip(" .,;:") or _SOURCE_WORDS.search(t[:m.start()]) is not None)


@functools.lru_cache(maxsize=65536)
def stem_word(tok: str) -> str:
    """Porter stem, so "negotiation", "negotiated" and "negotiate" share one ("negoti").

    The Snowball project's Porter stemmer (PyStemmer, a base dependency: the same stems on
    every install, and ~2 ms to import). Words of four or more letters ending in "ed" lose
    the "d" first, so "sued" and "fined" stem as their base forms ("sue", "fine").

    Parameters
    ----------
    tok : str
        One lower-case word.

    Returns
    -------
    str
        Its stem.
    """
    if not isinstance(tok, str):
        raise ArgumentTypeError(f"stem_word expects a string, got {type(tok).__name__}")
    if len(tok) >= 4 and tok.endswith("ed"):
        tok = tok[:-1]
    return str(_porter().stemWord(tok))


@functools.lru_cache(maxsize=1)
def _porter() -> Any:
    import Stemmer  # PyStemmer

    return Stemmer.Stemmer("porter")


def strip_reasoning(text: str) -> str:
    """Remove reasoning blocks (``<think>...</think>``, ``<thinking>...</thinking>``).

    Reasoning models served without a reasoning parser put their chain of thought in
    the reply text. A block left open (the budget ran out mid-thought) is removed to the
    end; a stray closing tag (the server stripped the opening one) drops what precedes it.

    Examples
    --------
    >>> strip_reasoning("<think>\\nhmm\\n</think>\\n\\n1. Romania")
    '1. Romania'
    """
    global _THINK_RE
    if not isinstance(text, str):
        raise ArgumentTypeError(f"text must be a str, got {type(text).__name__}")
    if _THINK_RE is None:
        _THINK_RE = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|\Z)", re.S | re.I)
    out = _THINK_RE.sub("", text)
    m = re.search(r"</(think|thinking|reasoning)>", out, re.I)
    if m:
        out = out[m.end():]
    return out.strip()


_ANSWERS_LINE = re.compile(r"^\s*(?:final\s+)?answers?\s*:\s*", re.I | re.M)
_REASONING_LINE = re.compile(r"^\s*(?:reasoning|thoughts?)\s*:", re.I)
_NUMBERING = re.compile(r"^\s*(?:\d+[.):]|[-*•]|answer\s*\d*:)\s*", re.I)


def parse_ranked_answers(text: str, *, limit: int = 10) -> list[str]:
    """Parse an LLM's ranked answers, best first, duplicates (case-insensitive) keeping their first rank.

    Parameters
    ----------
    text : str
        The reply. A ``<think>`` block and anything before the last ``Answers:`` line are
        dropped, as are ``Reasoning:`` lines; items are split on new lines, ``|`` and ``;``.
    limit : int
        Most answers returned.
    """
    if not isinstance(text, str):
        raise ArgumentTypeError(f"expected text, got {type(text).__name__}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ConfigError(f"limit must be an integer >= 1, got {limit!r}")
    text = strip_reasoning(text)
    m = list(_ANSWERS_LINE.finditer(text))
    if m:
        text = text[m[-1].end():]
    out: list[str] = []
    seen: set[str] = set()
    for line in re.split(r"\n+|\s*\|\s*|;\s*", text):
        if _REASONING_LINE.match(line):
            continue
        a = _NUMBERING.sub("", line).strip().strip('"\'').strip().rstrip(".")
        if a and a.lower() not in seen:
            seen.add(a.lower())
            out.append(a)
        if len(out) >= limit:
            break
    return out
