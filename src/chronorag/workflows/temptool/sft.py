"""Chat-format SFT records in TempTool's tagged protocol, from agent traces and CronQuestions.

A record is ``{"messages": [system, user, assistant, user(<obs>), assistant, ...]}``:
assistant turns hold ``<think>``/``<tool_call>`` and finally ``<response>``; tool
results come back as user turns wrapped in ``<obs>``. Only trajectories whose answer
is correct are kept (the caller passes the gold answers, or the source marks it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from chronorag.errors import ArgumentTypeError, ConfigError, DataFormatError, MissingFileError
from chronorag.graphs.persist import iter_jsonl
from chronorag.metrics import answer_matches
from chronorag.workflows.temptool.tagged_protocol import (
    format_obs,
    format_response,
    format_tool_calls,
)

__all__ = ["trajectory_to_record", "cronquestions_records", "reasoner_records", "write_jsonl"]


def trajectory_to_record(
    question: str,
    steps: Sequence[tuple[list[dict[str, Any]], str, str | None]],
    answers: Sequence[str],
    *,
    system_prompt: str,
    final_think: str | None = None,
) -> dict[str, Any]:
    """Build one SFT record.

    Parameters
    ----------
    question : str
        The user question.
    steps : sequence of (calls, observation, think)
        Each turn's tool calls (``{"name", "arguments"}``), the observation they
        produced, and an optional thought.
    answers : sequence of str
        The final ranked answers (non-empty).
    system_prompt : str
        The agent's system prompt (e.g. the tagged-protocol prompt).
    final_think : str, optional
        Thought before the response.
    """
    if not question or not isinstance(question, str):
        raise ConfigError(f"question must be a non-empty string, got {question!r}")
    if not answers:
        raise ConfigError("a record needs at least one answer")
    msgs: list[dict[str, str]] = [{"role": "system", "content": system_prompt},
                                  {"role": "user", "content": question}]
    for calls, obs, think in steps:
        if not calls:
            raise ConfigError("each step needs at least one tool call")
        msgs.append({"role": "assistant", "content": format_tool_calls(calls, think or "I need more facts.")})
        msgs.append({"role": "user", "content": format_obs(obs)})
    think = final_think or "The observations answer the question."
    msgs.append({"role": "assistant", "content": format_response(list(answers), think)})
    return {"messages": msgs}


_ACTION = re.compile(r"^\$?\s*(\w+)\((.*)\)\s*\$?$", re.S)


def _parse_action(action: str) -> tuple[str, list[str]]:
    m = _ACTION.match(action.strip())
    if not m:
        raise DataFormatError(f"unreadable action {action!r}")
    return m.group(1), [a.strip() for a in m.group(2).split(",")]


def _window(time: str) -> dict[str, str]:
    t = time.strip()
    if not t or "no time" in t.lower():
        return {"begin_time": "-inf", "end_time": "inf", "type": "in/on"}
    return {"begin_time": t, "end_time": t, "type": "in/on"}


def _convert_call(name: str, args: list[str]) -> dict[str, Any] | None:
    if name in ("get_tail_entity", "get_head_entity") and len(args) >= 3:
        known, rel, time = args[0], ", ".join(args[1:-1]), args[-1]
        key = "head" if name == "get_tail_entity" else "tail"
        tool = "Get_tail_entity" if name == "get_tail_entity" else "Get_head_entity"
        return {"name": tool, "arguments": {key: known, "rel": rel, **_window(time)}}
    if name == "get_time" and len(args) >= 3:
        return {"name": "Get_time", "arguments": {"head": args[0], "rel": ", ".join(args[1:-1]),
                                                 "tail": args[-1]}}
    return None


def cronquestions_records(path: str | os.PathLike[str], *, system_prompt: str) -> Iterator[dict[str, Any]]:
    """Convert ``tool_trajectories_sample.jsonl`` (CronQuestions, ARI-style actions) to SFT records.

    Tool actions become ``Get_*`` calls; list operations (``get_first``, ``get_before``
    ...) become the next thought; ``answer(X)`` becomes the response. Trajectories
    marked incorrect (``result`` false) or holding an unconvertible action are skipped.
    """
    p = Path(path)
    if not p.is_file():
        raise MissingFileError(f"no such trajectory file: {p}")
    for lineno, row in iter_jsonl(p):  # file:line for bad JSON, deep nesting, bad gzip or UTF-8
        try:
            hist = row["process"]["history"]
            q = row["question"].get("paraphrases", [row["question"]["question"]])[0]
            if not isinstance(hist, list) or not isinstance(q, str):
                raise ArgumentTypeError("history must be a list and the question a string")
        except (KeyError, TypeError, IndexError, AttributeError) as exc:
            raise DataFormatError(f"{p}:{lineno}: not a trajectory record ({type(exc).__name__}: {exc})") from None
        if not row.get("result"):
            continue
        steps: list[tuple[list[dict[str, Any]], str, str | None]] = []
        pending_think: list[str] = []
        answer = None
        ok = True
        pairs = [h for h in hist if isinstance(h, list) and len(h) == 2 and isinstance(h[0], str)]
        for (tag, action), (_, response) in zip(pairs[0::2], pairs[1::2]):
            if not tag.startswith("Action"):
                ok = False
                break
            if not isinstance(action, str) or not isinstance(response, str):
                raise DataFormatError(f"{p}:{lineno}: an action or its response is not a string")
            name, args = _parse_action(action)
            if name == "answer":
                answer = ", ".join(args)
                break
            call = _convert_call(name, args)
            if call is None:
                pending_think.append(f"Apply {name} to the candidates ({', '.join(args)}).")
                continue
            think = " ".join(pending_think) or None
            pending_think = []
            obs = re.sub(r"\nentities = .*$", "", response.strip(), flags=re.S)
            steps.append(([call], obs, think))
        if not ok or not steps or not answer:
            continue
        yield trajectory_to_record(q, steps, [answer], system_prompt=system_prompt,
                                   final_think=" ".join(pending_think) or None)


def reasoner_records(reasoner: Any, questions: Iterable[dict[str, Any]], *,
                     system_prompt: str) -> Iterator[dict[str, Any]]:
    """SFT records from the no-LLM reasoner's trajectories, keeping correct ones only (Hits@1)."""
    for q in questions:
        res = reasoner.answer(q["question"])
        if not res.answers or not any(answer_matches(res.answers[0], g) for g in q["answers"]):
            continue
        steps = []
        for c in res.calls:
            out = reasoner.tools.call(c["name"], c["arguments"])
            steps.append(([{"name": c["name"], "arguments": c["arguments"]}], out.observation, None))
        yield trajectory_to_record(q["question"], steps, res.answers[:3], system_prompt=system_prompt)


def write_jsonl(records: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> int:
    """Write records as JSONL through the one output writer; returns how many.

    :func:`chronorag.graphs.output.write_jsonl`: a partial file moved over ``path`` only
    when every record was written, so a failure (a bad input line) leaves ``path`` as it was.
    """
    from chronorag.graphs.output import write_jsonl as _write

    return _write(records, path)
