"""A naive, LLM-free reader: retrieved events -> ranked answer candidates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chronorag.metrics import normalize_answer

__all__ = ["rank_candidates"]


def rank_candidates(
    events: Sequence[Any], question: str, *, with_time: bool = True
) -> list[str]:
    """Turn retrieved events into ranked answer candidates (a naive, LLM-free reader).

    For each event in rank order it proposes the object, the subject and the date;
    names already written in the question are skipped (the question's anchors are
    rarely its answer). Duplicates keep their best rank.

    Parameters
    ----------
    events : sequence of Event
        Retrieved events, best first (objects with ``subject``, ``object``, ``start``).
    question : str
        The question text.
    with_time : bool
        Also propose each event's date.
    """
    if not isinstance(question, str):
        raise TypeError(f"question must be a str, got {type(question).__name__}")
    qn = f" {normalize_answer(question)} "
    seen: set[str] = set()
    out: list[str] = []
    for ev in events:
        cands = [ev.object, ev.subject] + ([ev.start] if with_time else [])
        for c in cands:
            n = normalize_answer(c)
            if not n or n in seen or f" {n} " in qn:
                continue
            seen.add(n)
            out.append(c)
    return out
