"""LangGraph state machine: ``start`` -> ``retrieve`` -> ``answer``.

``retrieve`` runs :class:`~chronorag.retrievers.dense.DenseEventRetriever` over the index
directory named in the run context (``index_dir``), the one given to :func:`build_graph`,
or ``$CHRONORAG_INDEX_DIR``. ``answer`` asks the LLM for ranked answers (any LLM object
:func:`~chronorag.integrations.llm.resolve_llm` accepts; tokens stream with
``stream_mode="messages"``), or, with no LLM, reads the retrieved events under the question's
constraints (:func:`chronorag.workflows.temptool.reading.read_retrieved`: its time window,
entity role and exclusions, over the events of a relation the question can mean; a refusal, with
``reason``, for what a reader of a few events cannot apply) and says so in ``mode``. Every run returns ``abstained`` and ``reason``.

Input is ``{"question": ...}`` or ``{"messages": [...]}`` (a human message added since the
last run is the question; see :func:`chronorag.workflows.common.run_question`), so the graph
drops into a ``MessagesState`` parent graph. Each run starts
from its own question: on a checkpointed thread a second question gets its own answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from chronorag.errors import LLMError
from chronorag.graphs.event_index import EventIndex
from chronorag.graphs.question import parse_question
from chronorag.graphs.text import parse_ranked_answers
from chronorag.integrations.llm import (
    ChatLLM,
    LLMLike,
    raise_if_echo,
    record_fallback,
    resolve_llm,
)
from chronorag.retrievers.dense import DenseEventRetriever
from chronorag.workflows.common import index_dir_of, resolve_context, run_question
from chronorag.workflows.dense_qa.prompts import ANSWER_SYSTEM, ANSWER_USER
from chronorag.workflows.dense_qa.state import QAContext, QAInput, QAOutput, QAState
from chronorag.workflows.temptool.reading import read_retrieved

__all__ = ["answer", "build_graph", "graph", "parse_ranked_lines", "retrieve", "start"]


@lru_cache(maxsize=4)
def _load_index(index_dir: str) -> EventIndex:
    return EventIndex.load(index_dir)


@lru_cache(maxsize=4)
def _reasoner(index_dir: str) -> Any:
    """The TempTool reasoner's question reading over this index (the constrained reader's)."""
    from chronorag.workflows.temptool.reasoner import TemporalReasoner
    from chronorag.workflows.temptool.tools import TemporalKGTools

    return TemporalReasoner(TemporalKGTools(_load_index(index_dir)))


def parse_ranked_lines(text: str) -> list[str]:
    """An LLM's ranked list (the one parser, :func:`chronorag.graphs.text.parse_ranked_answers`)."""
    return parse_ranked_answers(text)


@dataclass(frozen=True)
class _Build:
    """What ``build_graph`` fixes: the default context and the LLM object (resolved per run)."""

    defaults: QAContext
    llm: Any


def _llm(build: _Build) -> ChatLLM | None:
    # Settings.llm and the CHRONORAG_* environment are read here, when the node runs
    return resolve_llm(build.llm)


def start(state: QAState) -> dict[str, Any]:
    """Take this run's question, consuming the input first, and reset the previous run's outputs."""
    q, consumed = run_question(state, method="dense QA", echo=True)  # a {"question": ...} joins the transcript
    return {**consumed, "current": q, "event_ids": [], "answers": [], "evidence": [], "mode": "", "info": {},
            "abstained": False, "reason": ""}


def retrieve(state: QAState, runtime: Runtime[QAContext], *, build: _Build) -> dict[str, Any]:
    """Retrieve the question's events."""
    ctx = resolve_context(build.defaults, runtime.context)
    index = _load_index(index_dir_of(ctx.index_dir, method="dense QA"))
    ids, _ = DenseEventRetriever(index, similarity_top_k=ctx.similarity_top_k).retrieve_event_ids(state["current"])
    return {"event_ids": [int(i) for i in ids]}


def answer(state: QAState, runtime: Runtime[QAContext], *, build: _Build) -> dict[str, Any]:
    """Ranked answers from the LLM (tokens stream), or the no-LLM reader, which ``mode`` names."""
    ctx = resolve_context(build.defaults, runtime.context)
    store = _load_index(index_dir_of(ctx.index_dir, method="dense QA")).store
    events = store.events(state["event_ids"])
    evidence = [e.verbalize() for e in events]
    q = state["current"]
    chat_llm = _llm(build)
    if chat_llm is None:
        # the question's time window, entity role and exclusions applied to the retrieved events of
        # the question's relation;
        # what a reader of a few events cannot apply (counting, first/last, ...) is refused, saying why
        answers, abstained, reason = read_retrieved(_reasoner(index_dir_of(ctx.index_dir, method="dense QA")),
                                                    events, q)
        return {"answers": answers, "evidence": evidence, "abstained": abstained, "reason": reason,
                "mode": "no-LLM constrained reader (the question's window, entity and exclusions applied to "
                        "the retrieved events)",
                "messages": [AIMessage(content="\n".join(answers[:10]) or f"No answer: {reason}")]}
    listing = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(evidence))
    model = chat_llm.langchain()
    user = ANSWER_USER.format(events=listing, question=q)
    reply = model.invoke([SystemMessage(ANSWER_SYSTEM), HumanMessage(user)])
    text = reply.content if isinstance(reply.content, str) else str(reply.content)
    raise_if_echo(text, [{"role": "user", "content": user}], name=chat_llm.name)
    answers = parse_ranked_lines(text)
    if not answers:
        record_fallback("dense_qa.empty_answer", text[:200])
        raise LLMError(f"the LLM returned no answers: {text[:300]!r}")
    # the dense retriever applies none of the question's conditions; the ones the parser cannot
    # represent at all are named, as every LLM path does (the no-LLM reader abstains on them)
    pq = parse_question(q)
    note = "; ".join(x for x in (
        pq.unfiltered_note(filtered_by="the dense retriever", answer_from="the LLM's reading of the retrieved events"),
        pq.sample_note(len(events), reader="the LLM")) if x)
    return {"answers": answers[:10], "evidence": evidence, "mode": f"LLM ({chat_llm.name})",
            "abstained": False, "reason": note,
            "messages": [AIMessage(content="\n".join(answers[:10]))]}


def build_graph(
    index_dir: str | None = None,
    *,
    llm: LLMLike = None,
    similarity_top_k: int = 10,
    checkpointer: Checkpointer = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the dense QA graph.

    Parameters
    ----------
    index_dir : str, optional
        Default index directory; a run's context ``index_dir`` overrides it, and
        ``$CHRONORAG_INDEX_DIR`` is read at run time when neither is set.
    llm : LLM object, optional
        A LlamaIndex ``LLM``, a LangChain chat model, ``LLMConfig`` or ``None`` (then
        ``Settings.llm`` or the ``CHRONORAG_*`` environment, read per run, else the no-LLM reader).
    similarity_top_k : int
        Default events retrieved (the run context may override it).
    checkpointer : langgraph checkpointer, optional
        e.g. ``InMemorySaver()`` or ``PostgresSaver`` for threads.

    Raises
    ------
    ConfigError
        A bad setting.
    LLMError
        ``llm`` is an object of an unknown kind.
    """
    defaults = QAContext(index_dir=index_dir, similarity_top_k=similarity_top_k)
    if llm is not None:
        resolve_llm(llm)  # an unknown object fails here, never silently later
    b = _Build(defaults=defaults, llm=llm)
    g = StateGraph(QAState, context_schema=QAContext, input_schema=QAInput, output_schema=QAOutput)
    g.add_node("start", start)
    g.add_node("retrieve", partial(retrieve, build=b))
    g.add_node("answer", partial(answer, build=b))
    g.add_edge(START, "start")
    g.add_edge("start", "retrieve")
    g.add_edge("retrieve", "answer")
    g.add_edge("answer", END)
    return g.compile(checkpointer=checkpointer)


graph = build_graph()
