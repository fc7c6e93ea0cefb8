"""LLM-as-judge for free-text answers (T-GRAG's Table 1 style accuracy).

:func:`judge_answer` asks the configured LLM whether a predicted answer agrees with the
gold answer for the question and parses a one-word verdict. A reply that is neither
verdict raises :class:`~chronorag.errors.LLMError` rather than being counted either way.
"""

from __future__ import annotations

import re
from typing import Any

from chronorag.errors import LLMError

__all__ = ["judge_answer", "JUDGE_PROMPT"]

JUDGE_PROMPT = """You grade answers to questions about company reports.

Question: {question}
Reference answer: {gold}
Candidate answer: {predicted}

Does the candidate give the same facts as the reference (numbers, names and periods must agree;
extra correct detail is fine, missing or wrong key facts are not)? Reply with one word: CORRECT or INCORRECT."""


def judge_answer(config: Any, question: str, gold: str, predicted: str) -> bool:
    """True when the LLM judges ``predicted`` to agree with ``gold``.

    Raises
    ------
    ValueError
        For an empty question or gold answer.
    LLMError
        When the endpoint fails or the verdict cannot be read.
    """
    from chronorag.integrations.llm import chat

    for name, v in (("question", question), ("gold", gold)):
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"{name} must be a non-empty string, got {v!r}")
    if not isinstance(predicted, str) or not predicted.strip():
        return False
    reply = chat(config, [{"role": "user", "content": JUDGE_PROMPT.format(
        question=question, gold=gold, predicted=predicted)}], max_tokens=5)
    word = re.search(r"\b(INCORRECT|CORRECT)\b", reply.upper())
    if word is None:
        raise LLMError(f"judge reply is not CORRECT/INCORRECT: {reply!r}")
    return word.group(1) == "CORRECT"
