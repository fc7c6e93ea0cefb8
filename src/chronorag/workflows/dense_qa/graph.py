"""LangGraph state machine: ``retrieve`` -> ``answer``.

``retrieve`` runs :class:`~chronorag.retrievers.dense.DenseEventRetriever` over the index
directory in ``CHRONORAG_INDEX_DIR`` (or the one given to :func:`build_graph`).
``answer`` asks the configured LLM (``CHRONORAG_BASE_URL``) for ranked answers, or,
with no endpoint, ranks the retrieved events' entities and dates with
:func:`chronorag.retrievers.reader.rank_candidates` and says so in ``mode``.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any

from langgraph.graph import END, START, StateGraph

from chronorag.errors import LLMError
from chronorag.retrievers.reader import rank_candidates
from chronorag.retrievers.event_index import EventIndex
from chronorag.integrations.llm import LLMConfig, chat
from chronorag.retrievers.dense import DenseEventRetriever
from chronorag.workflows.dense_qa.prompts import ANSWER_SYSTEM, ANSWER_USER
from chronorag.workflows.dense_qa.state import QAInput, QAOutput, QAState

__all__ = ["build_graph", "graph", "parse_ranked_lines"]


@lru_cache(maxsize=4)
def _load_index(index_dir: str) -> EventIndex:
    return EventIndex.load(index_dir)


def parse_ranked_lines(text: str) -> list[str]:
    """Parse an LLM's ranked list: one answer per line, numbering and bullets removed."""
    out: list[str] = []
    for line in text.splitlines():
        s = re.sub(r"^\s*(?:\d+[.)]|[-*•])\s*", "", line).strip().strip('"')
        if s and s not in out:
            out.append(s)
    return out


def build_graph(index_dir: str | None = None, *, llm: LLMConfig | None = None, top_k: int = 10) -> Any:
    """Compile the dense QA graph.

    Parameters
    ----------
    index_dir : str, optional
        Index directory; defaults to ``$CHRONORAG_INDEX_DIR`` (read at first use).
    llm : LLMConfig, optional
        Endpoint settings; defaults to the environment's (``CHRONORAG_*``).
    top_k : int
        Events retrieved.
    """
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")

    def index() -> EventIndex:
        d = index_dir or os.environ.get("CHRONORAG_INDEX_DIR")
        if not d:
            raise ValueError("no index directory: pass index_dir or set CHRONORAG_INDEX_DIR")
        return _load_index(str(d))

    def retrieve(state: QAState) -> dict[str, Any]:
        q = state.get("question", "")
        if not isinstance(q, str) or not q.strip():
            raise ValueError(f"question must be a non-empty string, got {q!r}")
        ids, _ = DenseEventRetriever(index(), similarity_top_k=top_k).retrieve_event_ids(q)
        return {"event_ids": [int(i) for i in ids]}

    def answer(state: QAState) -> dict[str, Any]:
        store = index().store
        events = store.events(state["event_ids"])
        evidence = [e.verbalize() for e in events]
        cfg = llm or LLMConfig()
        if not cfg.is_configured:
            return {"answers": rank_candidates(events, state["question"]), "evidence": evidence,
                    "mode": "no-LLM reader (entities and dates of the retrieved events)"}
        listing = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(evidence))
        reply = chat(cfg, [{"role": "system", "content": ANSWER_SYSTEM},
                           {"role": "user", "content": ANSWER_USER.format(events=listing, question=state["question"])}])
        answers = parse_ranked_lines(reply)
        if not answers:
            raise LLMError(f"the LLM returned no answers: {reply!r}")
        return {"answers": answers[:10], "evidence": evidence, "mode": f"LLM ({cfg.model})"}

    g = StateGraph(QAState, input_schema=QAInput, output_schema=QAOutput)
    g.add_node("retrieve", retrieve)
    g.add_node("answer", answer)
    g.add_edge(START, "retrieve")
    g.add_edge("retrieve", "answer")
    g.add_edge("answer", END)
    return g.compile()


graph = build_graph()
