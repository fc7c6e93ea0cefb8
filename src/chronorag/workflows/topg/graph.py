"""ToPG Naive, Local and Global modes as LangGraph state machines.

Graph (one for all modes; the mode picks the branch)::

    start -> seed -> (naive) ---------------------------------> answer -> END
                  -> (local) -> local_step -> evaluate -+-> answer
                                    ^-------------------+ (not sufficient, iterations left)
                  -> (global) -> global_anchors -> global_report -> answer

- ``start`` takes this run's question (:func:`~chronorag.workflows.common.run_question`:
  a new human message, else ``question``), consuming the input so a failed run never
  leaves it behind, and resets every per-run field (a second question on the same thread
  of a checkpointer gets its own answer).
- ``seed``: SuggestNaive (k=20); Local prunes the seeds with Select (Alg. 1, lines 2-3).
- ``local_step``: SuggestLocal (GExtract, query-aware transition, PPR; Eq. 8) for every
  current query, then Select.
- ``evaluate``: Eval (LLM) and NextQ, or the no-LLM query expansion.
- ``global_anchors`` / ``global_report``: Alg. 2 and 3 with hierarchical Leiden communities.
- ``answer``: the final answer (LLM) or, without an LLM, the context only, which the
  ``mode`` field says.

Every node is a module function; settings come from the run context
(:class:`~chronorag.workflows.topg.state.ToPGContext`) over :func:`build_graph`'s arguments,
field by field; the index directory from the context, ``build_graph`` or
``$CHRONORAG_INDEX_DIR`` (read when the run starts).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from chronorag.errors import ConfigError
from chronorag.graphs.text import no_answer_reply
from chronorag.integrations.llm import (
    ChatLLM,
    LLMConfig,
    LLMLike,
    fallbacks,
    query_scope,
    resolve_llm,
)
from chronorag.integrations.llm.ledger import _current_query
from chronorag.workflows.common import index_dir_of, resolve_context, run_question
from chronorag.workflows.topg import search as S
from chronorag.workflows.topg.index import TopgIndex, load_topg_index
from chronorag.workflows.topg.state import ToPGContext, ToPGInput, ToPGOutput, ToPGState

__all__ = [
    "MODES", "after_eval", "after_seed", "answer", "build_graph", "evaluate", "global_anchors",
    "global_report", "graph", "graph_global", "graph_local", "graph_naive", "local_step", "seed", "start",
]

MODES = ("naive", "local", "global")


@lru_cache(maxsize=8)
def _llm_for_url(url: str) -> ChatLLM:
    chat = resolve_llm(LLMConfig(base_url=url))
    assert chat is not None
    return chat


@dataclass(frozen=True)
class _Build:
    """What ``build_graph`` fixes: the default context, the other settings, the LLM and a loaded index."""

    defaults: ToPGContext
    settings: S.ToPGSettings
    llm: Any
    index: TopgIndex | None


@dataclass(frozen=True)
class _Run:
    mode: str
    settings: S.ToPGSettings
    chat: ChatLLM | None
    index: TopgIndex


def _run(runtime: Runtime[ToPGContext], build: _Build) -> _Run:
    """The run's settings (build defaults overridden field by field), LLM and index."""
    c = resolve_context(build.defaults, runtime.context)
    st = replace(build.settings, k=c.k, lam=float(c.lam), max_iter=c.max_iter,
                 select_threshold=None if c.select_threshold is None else float(c.select_threshold))
    if c.llm_url:
        chat: ChatLLM | None = _llm_for_url(c.llm_url)
    else:  # Settings.llm and $CHRONORAG_BASE_URL are read here, when the node runs
        chat = resolve_llm(build.llm)
    if build.index is not None and c.index_dir == build.defaults.index_dir:
        return _Run(c.mode, st, chat, build.index)
    return _Run(c.mode, st, chat, load_topg_index(index_dir_of(c.index_dir, method="ToPG")))


def _scope(state: ToPGState) -> Any:
    return query_scope(state.get("info", {}).get("run_id") or "topg")


def start(state: ToPGState) -> dict[str, Any]:
    """Take this run's question (consuming the input) and reset every per-run field."""
    q, consumed = run_question(state, method="ToPG", echo=True)  # a {"question": ...} joins the transcript too
    rid = _current_query.get() or f"topg-{uuid.uuid4().hex[:12]}"
    return {**consumed, "current": q, "queries": [q], "pool": [], "collected": [], "pruned": [], "new": [],
            "scores": {}, "iteration": 0, "done": False, "answer": "", "context": [],
            "proposition_ids": [], "passage_ids": [], "mode": "", "info": {"run_id": rid}}


def seed(state: ToPGState, runtime: Runtime[ToPGContext], *, build: _Build) -> dict[str, Any]:
    """SuggestNaive (k); Local prunes the seeds with Select (Alg. 1, lines 2-3)."""
    r = _run(runtime, build)
    st, idx = r.settings, r.index
    q = state["current"]
    qv = idx.embed([q])[0]
    ids, sc = idx.graph.suggest_naive(qv, st.k)
    scores = {str(int(i)): float(s) for i, s in zip(ids, sc)}
    info = {**state["info"], "mode": r.mode, "settings": {"k": st.k, "lam": st.lam, "max_iter": st.max_iter}}
    if r.mode != "local":
        return {"collected": ids.tolist(), "scores": scores, "info": info}
    cand = S.seed_candidates(idx, r.chat, q, qv, st)
    with _scope(state):
        kept = S.select(idx, r.chat, q, qv, cand, st)
    kept_set = set(kept)
    return {"pool": kept, "collected": list(kept), "new": list(kept), "scores": scores, "info": info,
            "pruned": [i for i in cand if i not in kept_set]}


def local_step(state: ToPGState, runtime: Runtime[ToPGContext], *, build: _Build) -> dict[str, Any]:
    """SuggestLocal (GExtract, query-aware transition, PPR; Eq. 8) for every current query, then Select."""
    r = _run(runtime, build)
    st, chat, idx = r.settings, r.chat, r.index
    collected = list(state["collected"])
    pool = list(state["pool"])
    new: list[int] = []
    pruned = list(state.get("pruned", []))
    scores = dict(state.get("scores", {}))
    with _scope(state):
        for q in state["queries"]:
            qv = idx.embed([q])[0]
            ids, sc = idx.graph.suggest_local(qv, pool, st.k, exclude=collected + new, **st.walk())
            kept = S.select(idx, chat, q, qv, ids.tolist(), st, walk=True)
            ks = set(kept)
            for i, s in zip(ids.tolist(), sc):
                scores.setdefault(str(i), float(s))
                if i not in ks and i not in pruned:
                    pruned.append(i)
            new.extend(k for k in kept if k not in new)
    it = state["iteration"] + 1
    # Alg. 1: the first iteration seeds the next with the initial pool and the new nodes
    next_pool = (pool + new) if it == 1 else new
    return {"collected": collected + new, "pool": next_pool, "new": new, "pruned": pruned,
            "scores": scores, "iteration": it}


def evaluate(state: ToPGState, runtime: Runtime[ToPGContext], *, build: _Build) -> dict[str, Any]:
    """Eval (LLM) and NextQ, or the no-LLM query expansion."""
    r = _run(runtime, build)
    if state["iteration"] >= r.settings.max_iter or not state["new"]:
        return {"done": True}
    with _scope(state):
        ans = S.evaluate(r.index, r.chat, state["current"], state["collected"])
        if ans is not None:
            return {"done": True, "answer": ans, "info": {**state["info"], "answered_by": "eval"}}
        qs = S.next_questions(r.index, r.chat, state["current"], state["collected"], state["new"], r.settings)
    return {"queries": qs, "done": False}


def after_seed(state: ToPGState, runtime: Runtime[ToPGContext], *, build: _Build) -> str:
    """Route by mode: global anchors, local steps, or straight to the answer."""
    m = state["info"].get("mode", build.defaults.mode)
    if m == "global":
        return "global_anchors"
    if m == "local" and resolve_context(build.defaults, runtime.context).max_iter > 0 and state["pool"]:
        return "local_step"
    return "answer"


def after_eval(state: ToPGState) -> str:
    """Answer when Eval is satisfied or the iterations are spent, else another local step."""
    return "answer" if state.get("done") else "local_step"


def global_anchors(state: ToPGState, runtime: Runtime[ToPGContext], *, build: _Build) -> dict[str, Any]:
    """Alg. 2: anchor propositions for the sub-questions."""
    r = _run(runtime, build)
    with _scope(state):
        out = S.global_anchors(r.index, r.chat, state["current"], r.settings)
    return {"collected": out["anchors"],
            "info": {**state["info"], "sub_questions": out["sub_questions"], "iterations": out["iterations"]}}


def global_report(state: ToPGState, runtime: Runtime[ToPGContext], *, build: _Build) -> dict[str, Any]:
    """Alg. 3: community reports over the anchors (hierarchical Leiden)."""
    r = _run(runtime, build)
    with _scope(state):
        rep = S.global_report(r.index, r.chat, state["current"], state["collected"], r.settings)
    return {"context": rep["context"], "answer": rep["answer"],
            "info": {**state["info"], "communities": rep["communities"],
                     "partial_scores": [round(p["score"], 2) for p in rep["partials"]]}}


def answer(state: ToPGState, runtime: Runtime[ToPGContext], *, build: _Build) -> dict[str, Any]:
    """The final answer (LLM) or, without an LLM, the context only, which ``mode`` says."""
    r = _run(runtime, build)
    m, chat, idx = r.mode, r.chat, r.index
    g = idx.graph
    collected = [int(i) for i in state["collected"]]
    tail = [int(i) for i in state.get("pruned", [])]
    context = state.get("context") or [g.propositions[i] for i in collected]
    ans = state.get("answer") or ""
    if not ans and chat is not None:
        with _scope(state):
            ans = S.answer_from(chat, state["current"], context)
    rid = state["info"]["run_id"]
    info = {**state["info"], "n_propositions": len(collected), "iterations": state.get("iteration", 0)
            if m != "global" else state["info"].get("iterations", 0),
            "fallbacks": fallbacks.counts(rid)}
    if chat is not None:
        info["tokens"] = chat.ledger.summary(rid)
        label = f"ToPG {m} with LLM ({chat.name})"
    else:
        label = f"ToPG {m}; {S.NO_LLM_NOTE}"
    reason = ""
    if chat is None:
        reason = "no LLM: ToPG retrieves the context only and writes no answer"
    elif not ans:
        why = fallbacks.last_detail("topg.answer", rid)
        reason = (f"the LLM's final answer was unusable (counted as topg.answer): {why[:200]}" if why
                  else f"the LLM's Select step kept none of the {len(tail)} retrieved facts, so there was nothing "
                       f"to answer from" if not context and tail
                  else "nothing was retrieved to answer from" if not context else "the LLM gave no answer")
    elif no_answer_reply(ans):  # "The facts do not mention it": an abstention, not an answer
        reason, ans = f"the LLM found no answer in the facts ({ans[:120]!r})", ""
    out: dict[str, Any] = {"answer": ans, "context": context, "proposition_ids": collected,
                           "passage_ids": S.passage_ranking(idx, collected, tail), "mode": label,
                           "abstained": bool(reason), "reason": reason, "info": info}
    # every run ends the transcript with its answer (stream_mode="messages" yields it), also for {"question": ...}
    out["messages"] = [AIMessage(content=ans or (f"No answer: {reason}" + (
        "\nRetrieved facts:\n" + "\n".join(context[:10]) if context else "")))]
    return out


def build_graph(*, mode: str = "local", index_dir: str | TopgIndex | None = None, llm: LLMLike = None,
                settings: S.ToPGSettings | None = None,
                checkpointer: Checkpointer = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile a ToPG graph.

    Parameters
    ----------
    mode : {"naive", "local", "global"}
        Default mode (a run's context ``mode`` overrides it).
    index_dir : str or TopgIndex, optional
        Default index directory (or a loaded index); a run's context ``index_dir``
        overrides it; ``$CHRONORAG_INDEX_DIR`` is read at run time when neither is set.
    llm : object, optional
        Anything :func:`~chronorag.integrations.llm.resolve_llm` accepts; ``None`` uses
        ``Settings.llm`` or ``$CHRONORAG_BASE_URL`` (read per run) when set, else the no-LLM mode.
    settings : ToPGSettings, optional
        Parameters (paper defaults). Its ``k``, ``lam``, ``max_iter`` and
        ``select_threshold`` are the defaults of the run context's fields of those names,
        which override them one by one; the other parameters hold for every run.
    checkpointer : optional
        A LangGraph checkpointer (``InMemorySaver``, ``PostgresSaver``...).

    Raises
    ------
    ConfigError
        Unknown mode or a bad setting.
    LLMError
        ``llm`` is an object of an unknown kind.
    """
    if mode not in MODES:
        raise ConfigError(f"unknown ToPG mode {mode!r}; expected one of {MODES}")
    base = settings or S.ToPGSettings()
    if not isinstance(base, S.ToPGSettings):
        raise ConfigError(f"settings must be a ToPGSettings, got {type(base).__name__}")
    loaded = index_dir if isinstance(index_dir, TopgIndex) else None
    path = None if isinstance(index_dir, TopgIndex) else index_dir
    defaults = ToPGContext(mode=cast(Literal["naive", "local", "global"], mode), index_dir=path, k=base.k,
                           lam=base.lam, max_iter=base.max_iter, select_threshold=base.select_threshold)
    if llm is not None:
        resolve_llm(llm)  # an unknown object fails here, never silently later
    b = _Build(defaults=defaults, settings=base, llm=llm, index=loaded)
    g = StateGraph(ToPGState, context_schema=ToPGContext, input_schema=ToPGInput, output_schema=ToPGOutput)
    g.add_node("start", start)
    g.add_node("seed", partial(seed, build=b))
    g.add_node("local_step", partial(local_step, build=b))
    g.add_node("evaluate", partial(evaluate, build=b))
    g.add_node("global_anchors", partial(global_anchors, build=b))
    g.add_node("global_report", partial(global_report, build=b))
    g.add_node("answer", partial(answer, build=b))
    g.add_edge(START, "start")
    g.add_edge("start", "seed")
    g.add_conditional_edges("seed", partial(after_seed, build=b), ["local_step", "global_anchors", "answer"])
    g.add_edge("local_step", "evaluate")
    g.add_conditional_edges("evaluate", after_eval, ["local_step", "answer"])
    g.add_edge("global_anchors", "global_report")
    g.add_edge("global_report", "answer")
    g.add_edge("answer", END)
    return g.compile(checkpointer=checkpointer)


def run_topg(question: str, *, index_dir: str, mode: str = "local", llm: Any = None,
             settings: S.ToPGSettings | None = None, graph: Any = None) -> dict[str, Any]:
    """Answer one question without LangGraph plumbing (builds or reuses a compiled graph)."""
    gr = graph or build_graph(mode=mode, index_dir=index_dir, llm=llm, settings=settings)
    return gr.invoke({"question": question})


graph_naive = build_graph(mode="naive")
graph_local = build_graph(mode="local")
graph_global = build_graph(mode="global")
graph = graph_local
