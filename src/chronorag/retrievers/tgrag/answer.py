"""T-GRAG generation (Eq. 8): one answer per sub-question, then a synthesis; a no-LLM mode without one."""

from __future__ import annotations

from typing import Any

from chronorag.errors import LLMError
from chronorag.retrievers.tgrag.retriever import TGragRetriever, _PeriodResult

__all__ = ["SUBANSWER_PROMPT", "SYNTHESIS_PROMPT", "answer_tgrag"]

SUBANSWER_PROMPT = """Answer the question for {period} using only the material below.

Facts from the {period} knowledge graph:
{graph}

Source texts:
{texts}

Question: {question}
Answer briefly; say "not stated" if the material does not answer it."""

SYNTHESIS_PROMPT = """A question was split by time period and each part was answered separately.

{pairs}

Original question: {question}
Write the final answer, combining the parts and keeping every number and period exact."""


def _sub_answer(chat: Any, retriever: TGragRetriever, r: _PeriodResult) -> tuple[dict[str, Any], str]:
    """One sub-question's context and answer. A prompt over the model's context window is
    retried once with the whole context (graph lines and source texts) cut to the token
    budget, counted as the ``tgrag.context_cut`` fallback; a second overflow is an
    :class:`LLMError` naming the budget to lower."""
    from chronorag.integrations.llm import is_context_overflow, record_fallback

    def ask(ctx: dict[str, Any]) -> str:
        prompt = SUBANSWER_PROMPT.format(period=r.sub.period or "all periods", graph=ctx["graph"],
                                         texts="\n\n".join(ctx["texts"]), question=r.sub.question)
        return str(chat.complete([{"role": "user", "content": prompt}])).strip()

    ctx = retriever.build_context([r])
    try:
        return ctx, ask(ctx)
    except LLMError as exc:
        if ctx["scope"] == "all" or not is_context_overflow(exc):
            raise
        record_fallback("tgrag.context_cut", f"the prompt exceeded the model's context window; retried with the "
                        f"whole context cut to {retriever.context_tokens} tokens ({str(exc)[:200]})")
    ctx = retriever.build_context([r], scope="all")
    try:
        return ctx, ask(ctx)
    except LLMError as exc:
        if not is_context_overflow(exc):
            raise
        raise LLMError(f"T-GRAG: the sub-question prompt does not fit the model's context window even with its "
                       f"whole context cut to context_tokens={retriever.context_tokens}; build the retriever with "
                       f"a smaller context_tokens, or serve the model with a larger window ({str(exc)[:200]})") from exc


def answer_tgrag(retriever: TGragRetriever, question: str, *, llm: Any = None,
                 time_filter: Any = None) -> dict[str, Any]:
    """Retrieve and answer (Eq. 8).

    With an LLM (``llm=``, else the retriever's, else LlamaIndex ``Settings.llm``; any
    object :func:`~chronorag.integrations.llm.resolve_llm` accepts): one answer per
    sub-question from ``K_valid`` + ``R_valid`` + ``D_valid`` within the token budget,
    then a synthesis when there are several. A sub-question prompt longer than the model's
    context window is retried once with everything cut to the budget (the
    ``tgrag.context_cut`` fallback, counted). Without one: the best-matching knowledge
    unit per sub-question (an *extractive* answer, labelled as such in ``mode``).

    Returns
    -------
    dict
        ``answer``, ``mode``, ``decomposition`` (which one ran), ``sub_answers``,
        ``abstained`` (no answer) and ``reason`` (why), ``evidence`` (every source text the
        answer was built from), ``chunk_ids``.

    Raises
    ------
    LLMError
        ``llm`` is of an unknown kind, or an LLM call failed.
    """
    from chronorag.integrations.llm import resolve_llm

    chat = resolve_llm(llm, use_env=False) if llm is not None else (retriever.llm or resolve_llm(None, use_env=False))
    kg = retriever._index.kg
    ranked, results = retriever.retrieve_chunks(question, time_filter=time_filter)
    how = results[0].decomposition if results else retriever.decompose
    if chat is None:
        subs = []
        for r in results:
            best = kg.unit_text[r.units[0]] if r.units else ""
            subs.append({"period": r.sub.period, "question": r.sub.question, "answer": best})
        final = " ".join(f"[{s['period'] or 'all'}] {s['answer']}" for s in subs if s["answer"])
        return {"answer": final, "mode": "extractive (no LLM): best retrieved sentence per sub-question",
                "decomposition": how, "sub_answers": subs, "abstained": not final,
                "reason": "" if final else "no knowledge unit was retrieved for any sub-question",
                "evidence": [kg.chunk_text[c] for c in ranked], "chunk_ids": ranked}
    subs, evidence, used_ids = [], [], []
    for r in results:
        ctx, answer = _sub_answer(chat, retriever, r)
        for c, t in zip(ctx["chunk_ids"], ctx["texts"]):
            if c not in used_ids:
                used_ids.append(c)
                evidence.append(t)
        subs.append({"period": r.sub.period, "question": r.sub.question, "answer": answer})
    if len(subs) == 1:
        final = str(subs[0]["answer"])
    elif not subs:
        final = ""
    else:
        pairs = "\n".join(f"- ({s['period']}) {s['question']} -> {s['answer']}" for s in subs)
        final = chat.complete([{"role": "user", "content": SYNTHESIS_PROMPT.format(pairs=pairs, question=question)}]).strip()
    reason = ""
    if not final:
        reason = ("the LLM gave an empty answer" if subs else "no sub-question retrieved anything")
    return {"answer": final, "mode": f"LLM ({chat.name})", "decomposition": how, "sub_answers": subs,
            "abstained": not final, "reason": reason, "evidence": evidence, "chunk_ids": used_ids}
