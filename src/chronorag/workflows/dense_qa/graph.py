"""LangGraph state machine: ``retrieve`` -> ``answer``.

``retrieve`` runs :class:`~chronorag.retrievers.dense.DenseEventRetriever` over the index
directory named in the run context (``index_dir``), the one given to :func:`build_graph`,
or ``$CHRONORAG_INDEX_DIR``. ``answer`` asks the LLM for ranked answers (any LLM object
:func:`~chronorag.integrations.llm.resolve_llm` accepts; tokens stream with
``stream_mode="messages"``), or, with no LLM, ranks the retrieved events' entities and
dates with :func:`chronorag.retrievers.reader.rank_candidates` and says so in ``mode``.

Input is ``{"question": ...}`` or ``{"messages": [...]}`` (a human message added since the
last run is the question; see :func:`chronorag.workflows.common.run_question`), so the graph
drops into a ``MessagesState`` parent graph. Each run starts
from its own question: on a checkpointed thread a second question gets its own answer.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from chronorag.errors import LLMError
from chronorag.graphs.event_index import EventIndex
from chronorag.integrations.llm import record_fallback, resolve_llm, strip_reasoning
from chronorag.retrievers.dense import DenseEventRetriever
from chronorag.retrievers.reader import rank_candidates
from chronorag.workflows.common import run_question
from chronorag.workflows.dense_qa.prompts import ANSWER_SYSTEM, ANSWER_USER
from chronorag.workflows.dense_qa.state import QAContext, QAInput, QAOutput, QAState

__all__ = ["build_graph", "graph", "parse_ranked_lines"]


@lru_cache(maxsize=4)
def _load_index(index_dir: str) -> EventIndex:
    return EventIndex.load(index_dir)


def parse_ranked_lines(text: str) -> list[str]:
    """Parse an LLM's ranked list: one answer per line, numbering and bullets removed.

    Reasoning blocks (``<think>...</think>``) are dropped first.
    """
    out: list[str] = []
    for line in strip_reasoning(text).splitlines():
        s = re.sub(r"^\s*(?:\d+[.)]|[-*•])\s*", "", line).strip().strip('"')
        if s and s not in out:
            out.append(s)
    return out


def build_graph(
    index_dir: str | None = None,
    *,
    llm: Any = None,
    similarity_top_k: int = 10,
    checkpointer: Any = None,
) -> Any:
    """Compile the dense QA graph.

    Parameters
    ----------
    index_dir : str, optional
        Index directory; the run context's ``index_dir`` or ``$CHRONORAG_INDEX_DIR`` otherwise.
    llm : LLM object, optional
        A LlamaIndex ``LLM``, a LangChain chat model, ``LLMConfig`` or ``None`` (then
        ``Settings.llm`` or the ``CHRONORAG_*`` environment, else the no-LLM reader).
    similarity_top_k : int
        Events retrieved (the run context may override it).
    checkpointer : langgraph checkpointer, optional
        e.g. ``InMemorySaver()`` for threads.
    """
    if not isinstance(similarity_top_k, int) or similarity_top_k < 1:
        raise ValueError(f"similarity_top_k must be an int >= 1, got {similarity_top_k!r}")
    chat_llm = resolve_llm(llm)

    def index(ctx: QAContext) -> EventIndex:
        d = ctx.get("index_dir") or index_dir or os.environ.get("CHRONORAG_INDEX_DIR")
        if not d:
            raise ValueError("no index directory: set index_dir in the run context, pass it to "
                             "build_graph, or set CHRONORAG_INDEX_DIR")
        return _load_index(str(d))

    def _ctx(runtime: Runtime[QAContext] | None) -> QAContext:
        c = getattr(runtime, "context", None) or {}
        return c if isinstance(c, dict) else dict(vars(c))

    def retrieve(state: QAState, runtime: Runtime[QAContext]) -> dict[str, Any]:
        ctx = _ctx(runtime)
        q = run_question(state, method="dense QA")
        k = int(ctx.get("similarity_top_k") or similarity_top_k)
        if k < 1:
            raise ValueError(f"similarity_top_k must be >= 1, got {k}")
        ids, _ = DenseEventRetriever(index(ctx), similarity_top_k=k).retrieve_event_ids(q)
        # every field of the previous run on this thread is replaced here
        return {"question": q, "event_ids": [int(i) for i in ids], "answers": [], "evidence": [],
                "mode": "", "info": {}}

    def answer(state: QAState, runtime: Runtime[QAContext]) -> dict[str, Any]:
        store = index(_ctx(runtime)).store
        events = store.events(state["event_ids"])
        evidence = [e.verbalize() for e in events]
        q = state["question"]
        seen = len(state.get("messages") or []) + 1  # this run's messages and its answer
        if chat_llm is None:
            answers = rank_candidates(events, q)
            return {"answers": answers, "evidence": evidence,
                    "mode": "no-LLM reader (entities and dates of the retrieved events)",
                    "messages": [AIMessage(content="\n".join(answers[:10]) or "No answer found.")],
                    "seen_messages": seen}
        listing = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(evidence))
        model = chat_llm.langchain()
        reply = model.invoke([SystemMessage(ANSWER_SYSTEM),
                              HumanMessage(ANSWER_USER.format(events=listing, question=q))])
        text = reply.content if isinstance(reply.content, str) else str(reply.content)
        answers = parse_ranked_lines(text)
        if not answers:
            record_fallback("dense_qa.empty_answer", text[:200])
            raise LLMError(f"the LLM returned no answers: {text[:300]!r}")
        return {"answers": answers[:10], "evidence": evidence, "mode": f"LLM ({chat_llm.name})",
                "messages": [AIMessage(content="\n".join(answers[:10]))], "seen_messages": seen}

    g = StateGraph(QAState, context_schema=QAContext, input_schema=QAInput, output_schema=QAOutput)
    g.add_node("retrieve", retrieve)
    g.add_node("answer", answer)
    g.add_edge(START, "retrieve")
    g.add_edge("retrieve", "answer")
    g.add_edge("answer", END)
    return g.compile(checkpointer=checkpointer)


graph = build_graph()
