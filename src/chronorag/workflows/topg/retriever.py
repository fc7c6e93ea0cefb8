"""LlamaIndex retriever over ToPG's Naive and Local modes (retrieval only: no answer call).

Each retrieved proposition becomes a ``NodeWithScore``: the proposition as text, its
passage id, passage title and proposition id as metadata (hidden from the LLM and the
embedder), and its cosine similarity to the query as score. Local mode returns the
propositions in the order the Suggestion-Selection cycles collected them (seeds first).

The retriever runs the ToPG graph up to, not including, its ``answer`` node: no answer
is generated. In Local mode with an LLM the retrieval steps themselves (Select, Eval,
NextQ of Alg. 1) still call it; without one they use the no-LLM heuristics.

Time filters follow the contract of every chronorag retriever
(:class:`~chronorag.retrievers.base.TemporalRetriever`): ``time_filter=``/``filters=`` at
construction, ``retrieve(q, time_filter=...)`` per query (it replaces the default), as a
``TimeFilter``, a dict or ``MetadataFilters``. A proposition is dated by the dates it
mentions, else by those of its passage (``"Blue Harbor is a 1961 drama film"`` -> 1961);
under a filter it is kept when one of its dates passes, and undated propositions are
dropped. Naive mode searches only the propositions that pass; Local mode walks the whole
graph and filters what it collected.

Examples
--------
>>> from llama_index.core.query_engine import RetrieverQueryEngine  # doctest: +SKIP
>>> engine = RetrieverQueryEngine.from_args(ToPGRetriever("idx", mode="local"), llm=my_llm)
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

import numpy as np
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from chronorag.errors import ConfigError
from chronorag.graphs.question import find_time_mentions
from chronorag.graphs.time import temporal_mask
from chronorag.retrievers.base import TemporalRetriever, TimeFilter
from chronorag.workflows.topg.index import TopgIndex, load_topg_index
from chronorag.workflows.topg.search import ToPGSettings

__all__ = ["ToPGRetriever", "proposition_dates"]

_META = ["proposition_id", "passage_id", "passage_title", "mode"]


def proposition_dates(index: TopgIndex) -> list[list[tuple[int, int]]]:
    """For each proposition, the ``[lo, hi)`` minute spans of the dates it mentions (else
    those its passage mentions; ``[]`` when neither mentions one)."""
    g = index.graph
    passage_spans: dict[int, list[tuple[int, int]]] = {}
    out: list[list[tuple[int, int]]] = []
    for pid, text in enumerate(g.propositions):
        spans = [(m.point.lo, m.point.hi) for m in find_time_mentions(text)]
        if not spans:
            pas = int(g.prop_passage[pid])
            if pas not in passage_spans:
                passage_spans[pas] = [(m.point.lo, m.point.hi)
                                      for m in find_time_mentions(g.passages[pas].get("text", ""))]
            spans = passage_spans[pas]
        out.append(spans)
    return out


class ToPGRetriever(TemporalRetriever):
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
        environment's, else the no-LLM heuristics. It never writes an answer here.
    time_filter, filters : TimeFilter, dict or MetadataFilters, optional
        Default time filter (module docstring); a per-query one replaces it.
    """

    def __init__(self, index: TopgIndex | str | os.PathLike[str], *, mode: str = "local",
                 similarity_top_k: int = 20, max_iter: int | None = None, lam: float | None = None,
                 llm: Any = None, time_filter: Any = None, **kwargs: Any) -> None:
        if mode not in ("naive", "local"):
            raise ConfigError(f"ToPGRetriever mode must be 'naive' or 'local', got {mode!r} "
                             f"(Global mode answers through the LangGraph graph)")
        if isinstance(similarity_top_k, bool) or not isinstance(similarity_top_k, int) or similarity_top_k < 1:
            raise ConfigError(f"similarity_top_k must be a positive int, got {similarity_top_k!r}")
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
        self._dates: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        super().__init__(time_filter=time_filter, **kwargs)

    def _date_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Flat ``(proposition id, lo, hi)`` arrays of every proposition's dates (built once)."""
        if self._dates is None:
            spans = proposition_dates(self._index)
            pid = np.repeat(np.arange(len(spans)), [len(s) for s in spans]).astype(np.int64)
            flat = [x for s in spans for x in s]
            lo = np.array([a for a, _ in flat], dtype=np.int64)
            hi = np.array([b for _, b in flat], dtype=np.int64)
            self._dates = (pid, lo, hi)
        return self._dates

    def allowed(self, time_filter: TimeFilter | None) -> np.ndarray | None:
        """Boolean mask of the propositions a filter keeps (``None``: no filter)."""
        if time_filter is None or time_filter.is_open:
            return None
        pid, lo, hi = self._date_table()
        ok = np.zeros(self._index.graph.n_props, dtype=bool)
        if len(pid):
            ok[pid[temporal_mask(lo, hi, time_filter.begin_time, time_filter.end_time, time_filter.type)]] = True
        return ok

    def proposition_ids(self, query: str, *, time_filter: Any = None) -> list[int]:
        """Ranked proposition ids for ``query`` (no answer is generated)."""
        tf = self.normalize_time_filter(time_filter) if time_filter is not None else self.time_filter
        keep = self.allowed(tf)
        g = self._index.graph
        if self.mode == "naive" and keep is not None:
            ids, _ = g.suggest_naive(self._index.embed([query])[0], self.similarity_top_k,
                                     exclude=np.flatnonzero(~keep).tolist())
            return [int(i) for i in ids]
        collected: list[int] = []
        for update in self._graph.stream({"question": query}, stream_mode="updates",
                                         interrupt_before=["answer"]):
            for node_out in update.values():
                if isinstance(node_out, dict) and "collected" in node_out:
                    collected = [int(i) for i in node_out["collected"]]
        if keep is not None:
            collected = [i for i in collected if keep[i]]
        return collected[: self.similarity_top_k]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        ids = self.proposition_ids(query_bundle.query_str, time_filter=self.time_filter_for(query_bundle))
        if not ids:
            return []
        g = self._index.graph
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
