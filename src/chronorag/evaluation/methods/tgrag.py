"""The ``t-grag`` method and the ``vanilla`` dense chunk baseline over a T-GRAG index."""

from __future__ import annotations

import os
from typing import Any

from chronorag.evaluation.runner import Method, Prediction, register_method


def _tgrag_factory(index_dir: str | os.PathLike[str], *, llm_url: str | None = None, llm: Any = None,
                   vanilla: bool = False, **_: Any) -> Method:
    """T-GRAG (or the vanilla dense baseline) over a T-GRAG index; answers extractive without an LLM.

    With an LLM the decomposition is the LLM's (retried once, then the rules with a
    recorded fallback); ``info["decomposition"]`` says which ran. ``evidence`` is every
    source text the method read, and evidence recall counts all of them
    (``info["evidence_k"]``), so dual and multi questions are not cut at 5.
    """
    from chronorag.integrations.llm import LLMConfig, fallbacks, query_scope, resolve_llm
    from chronorag.retrievers.tgrag import TGragRetriever, VanillaChunkRetriever, answer_tgrag
    from chronorag.retrievers.tgrag.index import TGragIndex

    index = TGragIndex.load(index_dir)
    chat = resolve_llm(LLMConfig(base_url=llm_url) if llm_url else llm, use_env=False)
    if vanilla:
        r = VanillaChunkRetriever(index)

        def vmethod(q: dict[str, Any]) -> Prediction:
            ids = r.retrieve_chunks(q["question"])
            texts = [index.kg.chunk_text[c] for c in ids]
            info: dict[str, Any] = {"chunk_ids": ids, "evidence_k": len(texts)}
            if chat is not None:
                qid = str(q.get("quid", q.get("id", q["question"])))
                with query_scope(qid):
                    ans = chat.complete([{"role": "user", "content": "Answer from these texts only.\n\n"
                                          + "\n\n".join(texts) + f"\n\nQuestion: {q['question']}"}])
                return Prediction(answers=[ans.strip()], evidence=texts,
                                  info={**info, "tokens": chat.ledger.summary(qid)})
            return Prediction(answers=[], evidence=texts, info={**info, "mode": "retrieval only"})

        if chat is not None:
            vmethod.ledger = chat.ledger  # type: ignore[attr-defined]  # the runner's tokens for an error row
        return vmethod
    t = TGragRetriever(index, llm=chat)

    def method(q: dict[str, Any]) -> Prediction:
        qid = str(q.get("quid", q.get("id", q["question"])))
        with query_scope(qid):
            out = answer_tgrag(t, q["question"], llm=chat)
        info = {"mode": out["mode"], "decomposition": out["decomposition"], "sub_answers": out["sub_answers"],
                "chunk_ids": out["chunk_ids"], "evidence_k": len(out["evidence"])}
        if chat is not None:
            info.update(tokens=chat.ledger.summary(qid), fallbacks=fallbacks.counts(qid))
        return Prediction(answers=[out["answer"]] if out["answer"] else [], evidence=out["evidence"], info=info,
                          abstained=bool(out["abstained"]), reason=str(out["reason"]))

    if chat is not None:
        method.ledger = chat.ledger  # type: ignore[attr-defined]  # the runner's tokens for an error row
    return method


def _vanilla_factory(index_dir: str | os.PathLike[str], **kw: Any) -> Method:
    return _tgrag_factory(index_dir, vanilla=True, **kw)


register_method("t-grag", _tgrag_factory)
register_method("vanilla", _vanilla_factory)
