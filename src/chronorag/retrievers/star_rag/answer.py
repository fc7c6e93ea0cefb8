"""STAR-RAG's reader: ranked answers over retrieved events from an LLM (App. E, in our words)."""

from __future__ import annotations

from typing import Any

from chronorag.errors import ConfigError
from chronorag.graphs.answer_checks import ground_answers, screen_answers
from chronorag.graphs.text import parse_ranked_answers

__all__ = ["ANSWER_PROMPT", "answer_with_llm", "build_answer_messages", "format_events", "ground_answers",
           "parse_ranked_answers", "screen_answers"]


# ------------------------------------------------------------------ answering (App. E)
ANSWER_PROMPT = """You answer questions about dated events from a knowledge graph. Read the
numbered events, then think briefly before answering:
- keep who did what to whom: the subject acts on the object, do not swap them;
- use only events whose action matches the question's action;
- apply the time condition exactly ("before", "after", "first", "last", "in <time>",
  "the same day/month/year as ...") by comparing the dates.

Write one short line starting "Reasoning:", then a line "Answers:" followed by up to
10 candidates, best first, one per line: an entity name as written in the events, or a
date (YYYY-MM-DD, YYYY-MM or YYYY, at the detail the question asks for). Nothing else.

Example
Events:
1. On 2012-03-02, Ministry of Health (Kenya) signed an agreement with Oxfam.
2. On 2012-05-19, Ministry of Health (Kenya) signed an agreement with UNICEF.
3. On 2012-07-08, Ministry of Health (Kenya) signed an agreement with Red Cross.
Question: Who did Kenya's health ministry sign an agreement with last before UNICEF?
Reasoning: The UNICEF agreement is dated 2012-05-19; the only earlier agreement is with Oxfam on 2012-03-02.
Answers:
1. Oxfam
2. Red Cross

Events:
{events}
Question: {question}"""


def format_events(events: list[Any]) -> str:
    """Numbered event lines for :data:`ANSWER_PROMPT`."""
    return "\n".join(f"{i + 1}. {e.verbalize()}" for i, e in enumerate(events))


def build_answer_messages(question: str, events: list[Any]) -> list[dict[str, str]]:
    """Chat messages asking for ranked answers over the retrieved events (App. E, our wording)."""
    if not isinstance(question, str) or not question.strip():
        raise ConfigError(f"question must be a non-empty string, got {question!r}")
    return [{"role": "user", "content": ANSWER_PROMPT.format(events=format_events(events), question=question)}]


def answer_with_llm(llm: Any, question: str, events: list[Any], *, max_tokens: int = 400) -> list[str]:
    """Ask an LLM for up to 10 ranked answers over the retrieved events.

    Parameters
    ----------
    llm : object
        Anything :func:`chronorag.integrations.llm.resolve_llm` accepts (a LlamaIndex
        ``LLM``, a LangChain chat model, ``LLMConfig``, a ``ChatLLM``); ``None`` uses
        ``Settings.llm`` or the ``CHRONORAG_*`` environment and raises when neither is set.
    question : str
        The question.
    events : list of Event
        Retrieved events, best first.

    Raises
    ------
    LLMError
        No LLM configured, an unknown LLM object, or a failed call.
    """
    from chronorag.integrations.llm import resolve_llm

    chat = resolve_llm(llm, required=True)
    reply = chat.complete(build_answer_messages(question, events), max_tokens=max_tokens, template=ANSWER_PROMPT)
    return parse_ranked_answers(reply)
