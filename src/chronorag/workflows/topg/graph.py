"""ToPG Naive, Local and Global modes as LangGraph state machines.

Graph (one for all modes; the mode picks the branch)::

    start -> seed -> (naive) ---------------------------------> answer -> END
                  -> (local) -> local_step -> evaluate -+-> answer
                                    ^-------------------+ (not sufficient, iterations left)
                  -> (global) -> global_anchors -> global_report -> answer

- ``start`` resets every per-run field (so a second question on the same thread of a
  checkpointer gets its own answer) and takes the question from ``question`` or the
  last human message of ``messages``.
- ``seed``: SuggestNaive (k=20); Local prunes the seeds with Select (Alg. 1, lines 2-3).
- ``local_step``: SuggestLocal (GExtract, query-aware transition, PPR; Eq. 8) for every
  current query, then Select.
- ``evaluate``: Eval (LLM) and NextQ, or the no-LLM query expansion.
- ``global_anchors`` / ``global_report``: Alg. 2 and 3 with hierarchical Leiden communities.
- ``answer``: the final answer (LLM) or, without an LLM, the context only, which the
  ``mode`` field says.

Settings come from the runtime context (:class:`~chronorag.workflows.topg.state.ToPGContext`),
else from :func:`build_graph`'s arguments; the index directory from the context or
``$CHRONORAG_INDEX_DIR``.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import replace
from functools import lru_cache
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from chronorag.integrations.llm import ChatLLM, LLMConfig, fallbacks, query_scope, resolve_llm
from chronorag.workflows.common import run_question
from chronorag.workflows.topg import search as S
from chronorag.workflows.topg.index import TopgIndex, load_topg_index
from chronorag.workflows.topg.state import ToPGContext, ToPGInput, ToPGOutput, ToPGState

__all__ = ["MODES", "build_graph", "graph", "graph_global", "graph_local", "graph_naive"]

MODES = ("naive", "local", "global")


@lru_cache(maxsize=8)
def _llm_for_url(url: str) -> ChatLLM:
    chat = resolve_llm(LLMConfig(base_url=url))
    assert chat is not None
    return chat


def build_graph(*, mode: str = "local", index_dir: str | TopgIndex | None = None, llm: Any = None,
                settings: S.ToPGSettings | None = None, checkpointer: Any = None) -> Any:
    """Compile a ToPG graph.

    Parameters
    ----------
    mode : {"naive", "local", "global"}
        Default mode (the context's ``mode`` overrides it per run).
    index_dir : str or TopgIndex, optional
        Index directory (or a loaded index); the context's ``index_dir`` overrides it;
        default ``$CHRONORAG_INDEX_DIR``.
    llm : object, optional
        Anything :func:`~chronorag.integrations.llm.resolve_llm` accepts; ``None`` uses
        ``Settings.llm`` or ``$CHRONORAG_BASE_URL`` when set, else the no-LLM mode.
    settings : ToPGSettings, optional
        Parameters (paper defaults).
    checkpointer : optional
        A LangGraph checkpointer (e.g. ``InMemorySaver``).
    """
    if mode not in MODES:
        raise ValueError(f"unknown ToPG mode {mode!r}; expected one of {MODES}")
    base = settings or S.ToPGSettings()
    fixed_llm = resolve_llm(llm) if llm is not None else None

    def ctx(runtime: Runtime[ToPGContext] | None) -> tuple[str, S.ToPGSettings, ChatLLM | None, TopgIndex]:
        c = getattr(runtime, "context", None) if runtime is not None else None
        m = (c.mode if c is not None and c.mode else mode)
        if m not in MODES:
            raise ValueError(f"unknown ToPG mode {m!r} in the context; expected one of {MODES}")
        st = base
        if c is not None:
            st = replace(base, k=int(c.k), lam=float(c.lam), max_iter=int(c.max_iter),
                         select_threshold=float(c.select_threshold) if c.select_threshold >= 0 else None)
        if c is not None and c.llm_url:
            chat: ChatLLM | None = _llm_for_url(c.llm_url)
        elif fixed_llm is not None:
            chat = fixed_llm
        else:
            chat = resolve_llm(None)
        if (c is None or not c.index_dir) and isinstance(index_dir, TopgIndex):
            return m, st, chat, index_dir
        d = (c.index_dir if c is not None and c.index_dir else None) or index_dir or os.environ.get("CHRONORAG_INDEX_DIR")
        if not d:
            raise ValueError("no ToPG index directory: set index_dir in the context, pass index_dir to "
                             "build_graph, or set CHRONORAG_INDEX_DIR")
        return m, st, chat, load_topg_index(str(d))

    def scope(state: dict[str, Any]) -> Any:
        return query_scope(state.get("info", {}).get("run_id") or "topg")

    def start(state: ToPGState) -> dict[str, Any]:
        q = run_question(state, method="ToPG")
        from chronorag.integrations.llm.ledger import _current_query

        rid = _current_query.get() or f"topg-{uuid.uuid4().hex[:12]}"
        return {"question": q, "queries": [q], "pool": [], "collected": [], "pruned": [], "new": [],
                "scores": {}, "iteration": 0, "done": False, "answer": "", "context": [],
                "proposition_ids": [], "passage_ids": [], "mode": "", "info": {"run_id": rid}}

    def seed(state: ToPGState, runtime: Runtime[ToPGContext]) -> dict[str, Any]:
        m, st, chat, idx = ctx(runtime)
        q = state["question"]
        qv = idx.embed([q])[0]
        ids, sc = idx.graph.suggest_naive(qv, st.k)
        scores = {str(int(i)): float(s) for i, s in zip(ids, sc)}
        info = {**state["info"], "mode": m, "settings": {"k": st.k, "lam": st.lam, "max_iter": st.max_iter}}
        if m != "local":
            return {"collected": ids.tolist(), "scores": scores, "info": info}
        cand = S.seed_candidates(idx, chat, q, qv, st)
        with scope(state):
            kept = S.select(idx, chat, q, qv, cand, st)
        kept_set = set(kept)
        return {"pool": kept, "collected": list(kept), "new": list(kept), "scores": scores, "info": info,
                "pruned": [i for i in cand if i not in kept_set]}

    def local_step(state: ToPGState, runtime: Runtime[ToPGContext]) -> dict[str, Any]:
        _, st, chat, idx = ctx(runtime)
        collected = list(state["collected"])
        pool = list(state["pool"])
        new: list[int] = []
        pruned = list(state.get("pruned", []))
        scores = dict(state.get("scores", {}))
        with scope(state):
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

    def evaluate(state: ToPGState, runtime: Runtime[ToPGContext]) -> dict[str, Any]:
        _, st, chat, idx = ctx(runtime)
        if state["iteration"] >= st.max_iter or not state["new"]:
            return {"done": True}
        with scope(state):
            ans = S.evaluate(idx, chat, state["question"], state["collected"])
            if ans is not None:
                return {"done": True, "answer": ans, "info": {**state["info"], "answered_by": "eval"}}
            qs = S.next_questions(idx, chat, state["question"], state["collected"], state["new"], st)
        return {"queries": qs, "done": False}

    def after_seed(state: ToPGState, runtime: Runtime[ToPGContext]) -> str:
        m = state["info"].get("mode", mode)
        if m == "global":
            return "global_anchors"
        if m == "local" and ctx(runtime)[1].max_iter > 0 and state["pool"]:
            return "local_step"
        return "answer"

    def after_eval(state: ToPGState) -> str:
        return "answer" if state.get("done") else "local_step"

    def global_anchors(state: ToPGState, runtime: Runtime[ToPGContext]) -> dict[str, Any]:
        _, st, chat, idx = ctx(runtime)
        with scope(state):
            out = S.global_anchors(idx, chat, state["question"], st)
        return {"collected": out["anchors"],
                "info": {**state["info"], "sub_questions": out["sub_questions"], "iterations": out["iterations"]}}

    def global_report(state: ToPGState, runtime: Runtime[ToPGContext]) -> dict[str, Any]:
        _, st, chat, idx = ctx(runtime)
        with scope(state):
            rep = S.global_report(idx, chat, state["question"], state["collected"], st)
        return {"context": rep["context"], "answer": rep["answer"],
                "info": {**state["info"], "communities": rep["communities"],
                         "partial_scores": [round(p["score"], 2) for p in rep["partials"]]}}

    def answer(state: ToPGState, runtime: Runtime[ToPGContext]) -> dict[str, Any]:
        m, st, chat, idx = ctx(runtime)
        g = idx.graph
        collected = [int(i) for i in state["collected"]]
        tail = [int(i) for i in state.get("pruned", [])]
        context = state.get("context") or [g.propositions[i] for i in collected]
        ans = state.get("answer") or ""
        if not ans and chat is not None:
            with scope(state):
                ans = S.answer_from(chat, state["question"], context)
        rid = state["info"]["run_id"]
        info = {**state["info"], "n_propositions": len(collected), "iterations": state.get("iteration", 0)
                if m != "global" else state["info"].get("iterations", 0),
                "fallbacks": fallbacks.counts(rid)}
        if chat is not None:
            info["tokens"] = chat.ledger.summary(rid)
            label = f"ToPG {m} with LLM ({chat.name})"
        else:
            label = f"ToPG {m}; {S.NO_LLM_NOTE}"
        out: dict[str, Any] = {"answer": ans, "context": context, "proposition_ids": collected,
                               "passage_ids": S.passage_ranking(idx, collected, tail), "mode": label,
                               "info": info}
        if state.get("messages"):
            out["messages"] = [AIMessage(content=ans or "\n".join(context[:10]))]
            out["seen_messages"] = len(state["messages"]) + 1
        return out

    g = StateGraph(ToPGState, context_schema=ToPGContext, input_schema=ToPGInput, output_schema=ToPGOutput)
    g.add_node("start", start)
    g.add_node("seed", seed)
    g.add_node("local_step", local_step)
    g.add_node("evaluate", evaluate)
    g.add_node("global_anchors", global_anchors)
    g.add_node("global_report", global_report)
    g.add_node("answer", answer)
    g.add_edge(START, "start")
    g.add_edge("start", "seed")
    g.add_conditional_edges("seed", after_seed, ["local_step", "global_anchors", "answer"])
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
