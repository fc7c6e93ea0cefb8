"""LlamaIndex retriever over ToPG's Naive and Local modes.

Each retrieved proposition becomes a ``NodeWithScore``: the proposition as text, its
passage id, passage title and proposition id as metadata (hidden from the LLM and the
embedder), and its cosine similarity to the query as score. Local mode returns the
propositions in the order the Suggestion-Selection cycles collected them (seeds first).

Examples
--------
>>> from llama_index.core.query_engine import RetrieverQueryEngine  # doctest: +SKIP
>>> engine = RetrieverQueryEngine.from_args(ToPGRetriever("idx", mode="local"), llm=my_llm)
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from typing import Any

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from chronorag.workflows.topg.index import TopgIndex, load_topg_index
from chronorag.workflows.topg.search import ToPGSettings

__all__ = ["ToPGRetriever"]

_META = ["proposition_id", "passage_id", "passage_title", "mode"]


class ToPGRetriever(BaseRetriever):
    """ToPG propositions as LlamaIndex nodes.

    Parameters
    ----------
    index : TopgIndex or path-like
        A loaded index or an index directory (``chronorag topg index``).
    mode : {"naive", "local"}
        SuggestNaive only, or Suggestion-Selection cycles (Alg. 1).
    similarity_top_k : int
        Propositions returned (default 20, the paper's k).
    max_iter, lam : optional
        Local-mode iterations and structural weight (defaults 3 and 0.5).
    llm : object, optional
        LLM for Select/Eval/NextQ (anything ``resolve_llm`` accepts); ``None`` = the
        environment's, else the no-LLM heuristics.
    """

    def __init__(self, index: TopgIndex | str | os.PathLike[str], *, mode: str = "local",
                 similarity_top_k: int = 20, max_iter: int | None = None, lam: float | None = None,
                 llm: Any = None, **kwargs: Any) -> None:
        if mode not in ("naive", "local"):
            raise ValueError(f"ToPGRetriever mode must be 'naive' or 'local', got {mode!r} "
                             f"(Global mode answers through the LangGraph graph)")
        if not isinstance(similarity_top_k, int) or similarity_top_k < 1:
            raise ValueError(f"similarity_top_k must be a positive int, got {similarity_top_k!r}")
        self._index = index if isinstance(index, TopgIndex) else load_topg_index(index)
        st = ToPGSettings(k=similarity_top_k)
        if max_iter is not None:
            st = replace(st, max_iter=int(max_iter))
        if lam is not None:
            st = replace(st, lam=float(lam))
        from chronorag.workflows.topg.graph import build_graph

        self.mode = mode
        self.similarity_top_k = similarity_top_k
        self._graph = build_graph(mode=mode, index_dir=self._index, llm=llm, settings=st)
        super().__init__(**kwargs)

    def _run(self, query: str) -> dict[str, Any]:
        return self._graph.invoke({"question": query})

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        out = self._run(query_bundle.query_str)
        g = self._index.graph
        ids = [int(i) for i in out["proposition_ids"]][: self.similarity_top_k]
        if not ids:
            return []
        cos = g.cosine(self._index.embed([query_bundle.query_str])[0], np.asarray(ids))
        nodes = []
        for pid, s in zip(ids, cos):
            pas = int(g.prop_passage[pid])
            meta = {"proposition_id": pid, "passage_id": pas, "passage_title": g.passages[pas]["title"],
                    "mode": self.mode}
            node = TextNode(text=g.propositions[pid], id_=f"topg-prop-{pid}", metadata=meta,
                            excluded_llm_metadata_keys=list(_META), excluded_embed_metadata_keys=list(_META))
            nodes.append(NodeWithScore(node=node, score=float(s)))
        return nodes

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)
