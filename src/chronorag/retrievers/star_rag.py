"""STAR-RAG retriever: dense anchors -> seeded PPR on the rule graph -> candidate events -> re-rank.

Per query (Alg. 1, Sec. 3.3):

1. the top-``k1`` (10) anchor events by cosine (each distinct triple's sentence is
   embedded once; events of one triple are taken most recent first);
2. the personalization vector of App. C over the rule nodes supporting the anchors
   (or uniform, ``personalization="uniform"``), diffused by personalized PageRank
   (``alpha=0.2``, tolerance ``1e-5``);
3. the top-``k2`` (20) rule nodes by PPR mass; their supporting events, plus anchors
   whose rule nodes are not in the rule graph (passed through, App. G), are the
   candidates;
4. candidates are re-ranked by cosine to the query; equal cosines (events of the same
   triple) are ordered by the PPR mass of their best rule node, then recency; an
   optional ``ppr_weight`` adds ``ppr_weight * pi/max(pi)`` to the cosine. The top
   ``k1`` are returned.

``use_rule_graph=False`` is the paper's "no-rule" ablation (the anchors only).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.indices.property_graph import CustomPGRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from chronorag.graphs.rule_graph import RuleGraph
from chronorag.retrievers.dense import event_node
from chronorag.retrievers.event_index import EventIndex

__all__ = ["StarRAGRetriever", "StarRAGPGRetriever", "PERSONALIZATIONS"]

PERSONALIZATIONS = ("star", "uniform")


class StarRAGRetriever(BaseRetriever):
    """LlamaIndex retriever implementing STAR-RAG over an :class:`EventIndex` and a :class:`RuleGraph`.

    Parameters
    ----------
    index : EventIndex
        Events, triple vectors and the query encoder.
    rule_graph : RuleGraph, optional
        Defaults to the one saved in the index directory (``chronorag star-rag build``).
    k1, k2 : int
        Anchors/results (10) and rule nodes kept after PPR (20).
    alpha, tol : float
        PPR restart probability (0.2) and tolerance (1e-5).
    theta, beta, tau : float
        Personalization parameters (0.6, 0.7, ``1/|U_seed|``).
    personalization : {"star", "uniform"}
        App. C vector or the uniform ablation.
    use_rule_graph : bool
        ``False``: dense anchors only (ablation).
    ppr_weight : float
        Weight of normalised PPR mass added to the cosine in the re-rank (0 = the paper).
    """

    def __init__(
        self,
        index: EventIndex,
        rule_graph: RuleGraph | None = None,
        *,
        k1: int = 10,
        k2: int = 20,
        alpha: float = 0.2,
        tol: float = 1e-5,
        theta: float = 0.6,
        beta: float = 0.7,
        tau: float | None = None,
        personalization: str = "star",
        use_rule_graph: bool = True,
        ppr_weight: float = 0.0,
        **kwargs: Any,
    ) -> None:
        if not isinstance(index, EventIndex):
            raise TypeError(f"index must be an EventIndex, got {type(index).__name__}")
        if k1 < 1 or k2 < 1:
            raise ValueError(f"k1 and k2 must be >= 1, got k1={k1}, k2={k2}")
        if personalization not in PERSONALIZATIONS:
            raise ValueError(f"personalization must be one of {PERSONALIZATIONS}, got {personalization!r}")
        if not 0 < alpha <= 1 or tol <= 0:
            raise ValueError(f"need 0 < alpha <= 1 and tol > 0, got alpha={alpha}, tol={tol}")
        if ppr_weight < 0:
            raise ValueError(f"ppr_weight must be >= 0, got {ppr_weight}")
        if rule_graph is None and use_rule_graph:
            if index.path is None:
                raise ValueError("pass rule_graph= (the index has no directory to load one from)")
            rule_graph = RuleGraph.load(index.path)
        self._index = index
        self.rule_graph = rule_graph
        self.k1, self.k2 = k1, k2
        self.alpha, self.tol, self.theta, self.beta, self.tau = alpha, tol, theta, beta, tau
        self.personalization = personalization
        self.use_rule_graph = use_rule_graph
        self.ppr_weight = ppr_weight
        self._node_triples: tuple[np.ndarray, np.ndarray] | None = None
        super().__init__(**kwargs)

    # ----------------------------------------------------------------- steps
    def anchors(self, sims: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k1`` anchor events and their cosines, from the query's cosine to every triple."""
        idx = self._index
        k = min(self.k1, len(sims))
        rows = np.argpartition(-sims, k - 1)[:k]
        rows = rows[np.lexsort((rows, -sims[rows]))]
        ids, pos = idx.expand_triples(rows, self.k1)
        return ids, sims[rows][pos]

    def retrieve_event_ids(self, query: str) -> tuple[np.ndarray, dict[str, Any]]:
        """Ranked event ids and per-event details (``cosine``, ``ppr``, ``rule_nodes``)."""
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"query must be a non-empty string, got {query!r}")
        idx = self._index
        qv = idx.encoder.encode([query])[0]
        sims = idx.vectors.vectors @ qv  # exact cosine to every triple (one pass, as in App. H)
        anchors, a_cos = self.anchors(sims)
        info: dict[str, Any] = {"anchors": anchors.tolist(), "seeds": [], "top_rules": [], "ppr": {}}
        rg = self.rule_graph
        if not self.use_rule_graph or rg is None or len(anchors) == 0:
            info["cosine"] = dict(zip(anchors.tolist(), a_cos.tolist()))
            return anchors, info
        seeds, gamma = rg.personalization(anchors, theta=self.theta, beta=self.beta, tau=self.tau,
                                          uniform=self.personalization == "uniform")
        in_graph = rg.in_graph
        passed = [int(a) for a, nodes in zip(anchors, rg.nodes_of_events(anchors)) if not in_graph[nodes].any()]
        if len(seeds) == 0:
            info["cosine"] = dict(zip(anchors.tolist(), a_cos.tolist()))
            info["passed_through"] = anchors.tolist()
            return anchors, info
        pi = rg.ppr(seeds, gamma, alpha=self.alpha, tol=self.tol)
        top = np.argsort(-pi, kind="stable")[: self.k2]
        top = top[pi[top] > 0]
        # work per distinct triple: all events of a triple share its rule nodes and cosine
        ptr, node_triples = self._triple_tables()
        parts = [node_triples[ptr[u]: ptr[u + 1]] for u in top]
        parts.append(idx.triple_of_event[np.array(passed, dtype=np.int64)])
        cand_t = np.unique(np.concatenate(parts))
        node_rank = np.zeros(rg.n_nodes)
        node_rank[top] = pi[top]
        t_ppr = rg.max_over_event_nodes(idx.triples[cand_t], node_rank)
        cos = sims[cand_t]
        score = cos + (self.ppr_weight * t_ppr / t_ppr.max() if self.ppr_weight and t_ppr.max() > 0 else 0.0)
        m = min(len(cand_t), self.k1)
        pre = np.argpartition(-score, m - 1)[:m] if len(cand_t) > m else np.arange(len(cand_t))
        # ties at the cut: include every triple scoring as high as the m-th
        cut = score[pre].min()
        pre = np.flatnonzero(score >= cut)
        order = pre[np.lexsort((cand_t[pre], -t_ppr[pre], -score[pre]))]
        ranked = cand_t[order]
        ids, pos = idx.expand_triples(ranked, self.k1)
        keys = ids.tolist()
        info.update(seeds=seeds.tolist(), top_rules=top.tolist(), passed_through=passed,
                    cosine=dict(zip(keys, cos[order][pos].tolist())),
                    ppr=dict(zip(keys, t_ppr[order][pos].tolist())), n_candidate_triples=int(len(cand_t)))
        return ids, info

    def _triple_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR rule node -> distinct triples it supports (built once per retriever)."""
        if self._node_triples is None:
            rg, idx = self.rule_graph, self._index
            counts = rg.support_ptr[1:] - rg.support_ptr[:-1]
            node_of = np.repeat(np.arange(rg.n_nodes, dtype=np.int64), counts)
            tri = idx.triple_of_event[rg.support_idx]
            key = np.unique(node_of * len(idx.triples) + tri)
            nodes, triples = np.divmod(key, len(idx.triples))
            ptr = np.zeros(rg.n_nodes + 1, dtype=np.int64)
            np.add.at(ptr, nodes + 1, 1)
            self._node_triples = (np.cumsum(ptr), triples)
        return self._node_triples

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        ids, info = self.retrieve_event_ids(query_bundle.query_str)
        rg = self.rule_graph
        out = []
        for e in ids.tolist():
            nodes = rg.nodes_of_events([e])[0].tolist() if rg is not None else []
            cos = info["cosine"].get(e, 0.0)
            out.append(event_node(self._index, e, cos, cosine=cos, ppr=info["ppr"].get(e, 0.0),
                                  rule_nodes=nodes))
        return out

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._retrieve(query_bundle)


class StarRAGPGRetriever(CustomPGRetriever):
    """STAR-RAG as a sub-retriever of a LlamaIndex ``PropertyGraphIndex``.

    ``init`` takes ``index_dir`` (an index directory with a rule graph), or builds
    everything from the property graph itself: events are read back with
    :func:`~chronorag.integrations.property_graph.store_from_property_graph`, embedded
    with ``encoder`` and a rule graph is built. Other keyword arguments go to
    :class:`StarRAGRetriever`.
    """

    def init(self, index_dir: str | os.PathLike[str] | None = None, encoder: Any = "minilm",
             work_dir: str | os.PathLike[str] | None = None, **kwargs: Any) -> None:
        if index_dir is not None:
            index = EventIndex.load(index_dir)
            rg = RuleGraph.load(index_dir) if kwargs.get("use_rule_graph", True) else None
        else:
            import tempfile

            from chronorag.graphs.rule_graph import build_rule_graph
            from chronorag.integrations.property_graph import store_from_property_graph
            from chronorag.retrievers.event_index import build_event_index

            store = store_from_property_graph(self.graph_store)
            if len(store) == 0:
                raise ValueError("the property graph holds no chronorag events (export them first)")
            out = work_dir or tempfile.mkdtemp(prefix="chronorag-pg-")
            index = build_event_index(store, out, encoder=encoder, progress=False)
            rg = build_rule_graph(store)
            rg.save(out)
        self._star = StarRAGRetriever(index, rg, **kwargs)

    def custom_retrieve(self, query_str: str) -> list[NodeWithScore]:
        return self._star.retrieve(query_str)


ANSWER_PROMPT = """Below are dated events from a knowledge graph, most relevant first.

{events}

Question: {question}

Use the dates: "before", "after", "first", "last" and "in <time>" restrict which events count.
Give 10 candidate answers, best first, one per line, each a short entity name or a date
(YYYY-MM-DD, YYYY-MM or YYYY, matching what the question asks for). No explanations."""


def format_events(events: list[Any]) -> str:
    """Numbered event lines for :data:`ANSWER_PROMPT`."""
    return "\n".join(f"{i + 1}. {e.verbalize()}" for i, e in enumerate(events))


def parse_ranked_answers(text: str, *, limit: int = 10) -> list[str]:
    """Parse the LLM's ranked list (numbering, bullets, quotes and a trailing period removed)."""
    import re

    if not isinstance(text, str):
        raise TypeError(f"expected text, got {type(text).__name__}")
    out: list[str] = []
    for line in re.split(r"\n+|\s*\|\s*", text):
        a = re.sub(r"^\s*(?:\d+[.):]|[-*•]|answer\s*\d*:)\s*", "", line, flags=re.I).strip().strip('"\'').rstrip(".")
        if a and a.lower() not in {x.lower() for x in out}:
            out.append(a)
        if len(out) >= limit:
            break
    return out


def answer_with_llm(config: Any, question: str, events: list[Any]) -> list[str]:
    """Ask the configured LLM for 10 ranked answers over the retrieved events."""
    from chronorag.integrations.llm import chat

    prompt = ANSWER_PROMPT.format(events=format_events(events), question=question)
    return parse_ranked_answers(chat(config, [{"role": "user", "content": prompt}]))
