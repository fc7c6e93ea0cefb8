"""LLM-as-judge for free-text answers (T-GRAG's Table 1 protocol: majority of three calls).

:func:`judge_answer` asks the LLM once whether a predicted answer states the same facts as
the gold answer. :class:`MajorityJudge` asks ``votes`` times (three by default) and takes
the majority; ``chronorag eval --judge`` uses it and reports judge accuracy next to the
string metrics.

Every call goes through :func:`~chronorag.integrations.llm.resolve_llm`: structured
output (a JSON schema sent as ``response_format``, which vLLM enforces), reasoning blocks
(``<think>...</think>``) stripped, one retry on an unparseable reply. A call that still
fails is recorded as the fallback ``judge.failed_call`` and does not vote; when no call
gives a verdict the question's verdict is ``None`` (a *judge failure*, counted in the
metrics, never scored as right or wrong).

Majority voting only helps when the calls can differ: serve the judge with a temperature
above 0 (``CHRONORAG_TEMPERATURE=0.7``); at temperature 0 the three calls agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from chronorag.errors import ConfigError, LLMError

__all__ = ["JUDGE_PROMPT", "JUDGE_SCHEMA", "JudgeVerdict", "MajorityJudge", "judge_answer"]

JUDGE_PROMPT = """You are grading an answer to a question against a reference answer.

Question: {question}
Reference answer: {gold}
Candidate answer: {predicted}

Count the candidate as correct when it states the same key facts as the reference: names,
numbers, dates and periods must agree. Extra correct detail is fine; a missing or wrong key
fact is not. Reply with a JSON object {{"verdict": "CORRECT"}} or {{"verdict": "INCORRECT"}}."""

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["CORRECT", "INCORRECT"]}},
    "required": ["verdict"],
    "additionalProperties": False,
}

_WORD = re.compile(r"\b(INCORRECT|CORRECT)\b")


def _check(question: Any, gold: Any) -> None:
    for name, v in (("question", question), ("gold", gold)):
        if not isinstance(v, str) or not v.strip():
            raise ConfigError(f"{name} must be a non-empty string, got {v!r}")


def _verdict(value: Any) -> bool:
    """Read a verdict from the parsed JSON (or, tolerated, a bare word)."""
    if isinstance(value, dict):
        value = value.get("verdict")
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        m = _WORD.search(value.upper())
        if m:
            return m.group(1) == "CORRECT"
    raise LLMError(f"judge reply has no CORRECT/INCORRECT verdict: {value!r:.200}")


def judge_answer(llm: Any, question: str, gold: str, predicted: str) -> bool:
    """True when one LLM call judges ``predicted`` to agree with ``gold``.

    Parameters
    ----------
    llm : LLM object
        Anything :func:`~chronorag.integrations.llm.resolve_llm` accepts (required).

    Raises
    ------
    ValueError
        For an empty question or gold answer.
    LLMError
        When the endpoint fails or no verdict can be read after one retry.
    """
    from chronorag.integrations.llm import resolve_llm

    _check(question, gold)
    if not isinstance(predicted, str) or not predicted.strip():
        return False
    chat = resolve_llm(llm, required=True, use_env=False)
    msgs = [{"role": "user", "content": JUDGE_PROMPT.format(question=question, gold=gold, predicted=predicted)}]
    fmt = {"type": "json_schema", "json_schema": {"name": "judge_verdict", "schema": JUDGE_SCHEMA}}
    text = chat.complete(msgs, response_format=fmt)
    try:
        return _read_verdict(text)
    except LLMError:
        first = text
    retry = [*msgs, {"role": "assistant", "content": first[:2000]},
             {"role": "user", "content": 'Reply with only {"verdict": "CORRECT"} or {"verdict": "INCORRECT"}.'}]
    try:
        return _read_verdict(chat.complete(retry, response_format=fmt))
    except LLMError as exc:
        raise LLMError(f"judge gave no CORRECT/INCORRECT verdict: first reply {first[:200]!r}; "
                       f"retry: {exc}") from exc


def _read_verdict(text: str) -> bool:
    """The verdict in a (reasoning-stripped) reply: the JSON object, else a bare word."""
    from chronorag.integrations.llm.config import _json_from_text

    try:
        return _verdict(_json_from_text(text))
    except (ValueError, LLMError):
        return _verdict(text)


@dataclass
class JudgeVerdict:
    """The outcome of judging one answer: ``correct`` is None when the judge failed."""

    correct: bool | None
    votes: list[bool] = field(default_factory=list)
    failed_calls: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"correct": self.correct, "votes": self.votes, "failed_calls": self.failed_calls,
                "error": self.error}


class MajorityJudge:
    """Majority vote of ``votes`` judge calls per answer.

    Parameters
    ----------
    llm : LLM object
        Anything :func:`~chronorag.integrations.llm.resolve_llm` accepts.
    votes : int
        Calls per answer (odd; 3 as in T-GRAG's protocol).
    """

    def __init__(self, llm: Any, *, votes: int = 3) -> None:
        from chronorag.integrations.llm import resolve_llm

        if not isinstance(votes, int) or votes < 1 or votes % 2 == 0:
            raise ConfigError(f"votes must be a positive odd integer, got {votes!r}")
        self.llm = resolve_llm(llm, required=True, use_env=False)
        self.votes = votes

    @property
    def name(self) -> str:
        return f"majority-of-{self.votes} {self.llm.name}"

    def __call__(self, question: str, gold: str, predicted: str) -> JudgeVerdict:
        """Judge one answer. An empty prediction is incorrect without any call."""
        from chronorag.integrations.llm import record_fallback

        _check(question, gold)
        if not isinstance(predicted, str) or not predicted.strip():
            return JudgeVerdict(correct=False)
        votes: list[bool] = []
        failed, last = 0, None
        for _ in range(self.votes):
            try:
                votes.append(judge_answer(self.llm, question, gold, predicted))
            except LLMError as exc:
                failed += 1
                last = str(exc)
                record_fallback("judge.failed_call", last)
        if not votes:
            return JudgeVerdict(correct=None, failed_calls=failed, error=last)
        yes = sum(votes)
        # ties (possible only when calls failed) count as incorrect: the judge was not convinced
        return JudgeVerdict(correct=yes * 2 > len(votes), votes=votes, failed_calls=failed, error=last)
