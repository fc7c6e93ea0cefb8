"""Helpers shared by chronorag's LangGraph graphs."""

from __future__ import annotations

from typing import Any

__all__ = ["run_question"]


def _is_human(m: Any) -> bool:
    return getattr(m, "type", None) == "human" or (isinstance(m, dict) and m.get("role") in ("user", "human"))


def _content(m: Any) -> Any:
    return m.content if hasattr(m, "content") else m.get("content")


def run_question(state: dict[str, Any], *, method: str) -> str:
    """The question of this run: a human message added since the last run, else ``question``.

    On a checkpointed thread both ``question`` and ``messages`` persist from earlier runs,
    so a graph records how many messages it has answered in ``seen_messages``; a human
    message past that mark is this run's question, and otherwise the ``question`` input is.

    Raises
    ------
    ValueError
        Neither is given; the message names the keys the graph accepts.
    """
    msgs = list(state.get("messages") or [])
    seen = int(state.get("seen_messages") or 0)
    for m in reversed(msgs[seen:]):
        if _is_human(m) and isinstance(_content(m), str) and _content(m).strip():
            return _content(m).strip()
    q = state.get("question")
    if isinstance(q, str) and q.strip():
        return q.strip()
    raise ValueError(f"{method} input needs a non-empty 'question' string or 'messages' with a human "
                     f"message; got keys {sorted(k for k, v in state.items() if v)}")
