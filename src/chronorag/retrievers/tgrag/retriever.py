"""T-GRAG query side: temporal query decomposition, the three-layer retriever, source texts, generation.

For each sub-question (one period, or all periods when the question has no time):

- ``R_time``: the period's subgraph (its entity nodes and chunks);
- ``R_node``: the top-``n`` (30) nodes by cosine between the query and the node's
  knowledge in that period (each node is represented by its knowledge units and
  scored by the best of them; ``node_scoring="node_vector"`` uses one vector per node);
- ``R_knowledge``: the top-``k`` (15) knowledge units held by those candidate nodes;
  the nodes holding them are the *valid nodes*;
- source texts: the period's chunks scored by ``4 * (cosine of the best top-k
  knowledge unit they hold) + 0.1 * (valid nodes they mention) + 0.05 * (1-hop
  neighbours of valid nodes they mention)``, ties broken by chunk cosine; the top-``t``
  (5) are kept.

The generator reads Eq. 8's ``K_valid`` (those knowledge units), ``R_valid`` (the
relations of the valid nodes) and ``D_valid`` (the source texts), within a token budget
(1,600 by default; see ``budget_scope`` in :class:`TGragRetriever` for what it covers).
Each sub-question keeps its top-``t`` source texts (the paper's setting);
``per_period_texts=False`` interleaves the periods best-first and keeps ``t`` in total,
so T-GRAG reads exactly as many chunks as the vanilla baseline.

Decomposition: with an LLM, the LLM's (Sec. 2.2; :func:`decompose_with_llm`, which
retries an unusable reply once and then falls back to the rules, recording
``"tgrag.decompose_rules"``); without one, :func:`decompose_rule_based`. Results say
which one ran.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from llama_index.core.indices.property_graph import CustomPGRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from chronorag.errors import ArgumentTypeError, ConfigError, LLMError, TimeParseError
from chronorag.graphs.text import count_tokens
from chronorag.graphs.text import cut_to_tokens as _cut_to_tokens
from chronorag.graphs.time import parse_time, temporal_mask
from chronorag.retrievers.base import (
    TemporalPGRetrieverMixin,
    TemporalRetriever,
    TimeFilter,
    as_time_filter,
)
from chronorag.retrievers.tgrag.index import TGragIndex

__all__ = ["EXCLUDED_LLM_METADATA", "TGragPGRetriever", "TGragRetriever", "VanillaChunkRetriever",
           "count_tokens", "periods_from_filter"]

from chronorag.retrievers.tgrag.decomposition import (
    SubQuestion,
    _periods_of,
    decompose_rule_based,
    decompose_with_llm,
)


@dataclass
class _PeriodResult:
    sub: SubQuestion
    chunk_ids: list[int]
    units: list[int]
    valid_nodes: list[int]
    info: dict[str, Any] = field(default_factory=dict)
    chunk_cos: list[float] = field(default_factory=list)
    chunk_score: list[float] = field(default_factory=list)
    decomposition: str = "rules"


#: metadata of returned nodes that is for programs, not for the LLM's prompt
EXCLUDED_LLM_METADATA = ["chunk_id", "sub_question_period", "tgrag_score", "decomposition"]



def periods_from_filter(time_filter: Any, periods: list[str]) -> list[str] | None:
    """The periods a time filter allows (``None``: no filter).

    ``time_filter`` is, as on every chronorag retriever, a
    :class:`~chronorag.retrievers.base.TimeFilter`, a dict or ``MetadataFilters`` on
    ``time``/``start``/``end`` (a period is kept when its span passes the filter, with the
    boundaries of :func:`~chronorag.retrievers.base.as_time_filter`: ``start < "2021"``
    keeps the periods up to 2020); or, in T-GRAG's own vocabulary, a period (``"2019"``),
    a list of periods, a range ``"2019-2021"``, or ``MetadataFilters`` on the ``period``
    key (operators ``==``, ``!=``, ``in``, ``nin``, ``>``, ``>=``, ``<``, ``<=``;
    ``AND``/``OR`` conditions).
    """
    if time_filter is None:
        return None
    if isinstance(time_filter, (TimeFilter, dict)) or _on_time_keys(time_filter):
        return _periods_in_window(as_time_filter(time_filter), periods)
    if isinstance(time_filter, str):
        got = _periods_of(time_filter, periods)
        if got is None:
            return None
        if not got:
            raise ConfigError(f"time_filter {time_filter!r} names no indexed period; periods: {periods}")
        return got
    if isinstance(time_filter, (list, tuple, set)):
        bad = [p for p in time_filter if str(p) not in periods]
        if bad:
            raise ConfigError(f"time_filter names periods that are not indexed: {bad}; periods: {periods}")
        return [p for p in periods if p in {str(x) for x in time_filter}]
    from llama_index.core.vector_stores.types import MetadataFilters

    if not isinstance(time_filter, MetadataFilters):
        raise ArgumentTypeError("time_filter must be a TimeFilter, a dict, a period, a list of periods or "
                                f"LlamaIndex MetadataFilters, got {type(time_filter).__name__} {time_filter!r}")

    def ok(p: str, f: Any) -> bool:
        if isinstance(f, MetadataFilters):
            res = [ok(p, g) for g in f.filters]
            return all(res) if str(f.condition).lower().endswith("and") else any(res)
        if f.key != "period":
            raise ConfigError(f"T-GRAG filters on the 'period' metadata key only, got {f.key!r}")
        op, v = str(getattr(f.operator, "value", f.operator)), f.value
        vals = [str(x) for x in v] if isinstance(v, (list, tuple)) else [str(v)]
        table = {"==": p == vals[0], "!=": p != vals[0], "in": p in vals, "nin": p not in vals,
                 ">": p > vals[0], ">=": p >= vals[0], "<": p < vals[0], "<=": p <= vals[0]}
        if op not in table:
            raise ConfigError(f"unsupported operator {op!r} on 'period'")
        # a value that is no indexed period ("2030", "twenty19") matched nothing, silently
        # ("!= 2030" or "nin" keeps everything, which is what it says; a bound may be any date)
        bad = [x for x in vals if x not in periods and (op in ("==", "in") or (
            op in (">", ">=", "<", "<=") and not re.fullmatch(r"\d{4}(?:-\d{2}(?:-\d{2})?)?", x)))]
        if bad:
            raise ConfigError(f"the 'period' filter names {', '.join(map(repr, bad))}, not an indexed period; "
                              f"periods: {periods}")
        return table[op]

    return [p for p in periods if ok(p, time_filter)]


def _encoder_of(index: TGragIndex) -> Any:
    """The index's query encoder (an index loaded without one cannot be queried)."""
    if index.encoder is None:
        raise ConfigError("this T-GRAG index has no query encoder; load it with TGragIndex.load(dir) "
                          "or build it with build_tgrag_index")
    return index.encoder


def _on_time_keys(value: Any) -> bool:
    """MetadataFilters whose keys are all time fields (``time``/``start``/``end``/``date``)."""
    keys: list[str] = []

    def walk(f: Any) -> None:
        for g in getattr(f, "filters", []):
            if hasattr(g, "filters"):
                walk(g)
            else:
                keys.append(str(getattr(g, "key", "")))

    if type(value).__name__ != "MetadataFilters":
        return False
    walk(value)
    if keys and all(k in ("time", "start", "end", "date") for k in keys):
        return True
    if any(k in ("time", "start", "end", "date") for k in keys):
        raise ConfigError(f"MetadataFilters mix time keys and other keys ({sorted(set(keys))}); filter on "
                         "'period' or on 'time'/'start'/'end', not both")
    return False


def _periods_in_window(tf: TimeFilter | None, periods: list[str]) -> list[str] | None:
    if tf is None:
        return None
    spans = []
    for p in periods:
        try:
            spans.append(parse_time(str(p)))
        except TimeParseError:
            raise ConfigError(f"period {p!r} is not a time (a year, month or day), so a TimeFilter cannot "
                             "select it; filter on the 'period' key instead") from None
    lo = np.array([t.lo for t in spans], dtype=np.int64)
    hi = np.array([t.hi for t in spans], dtype=np.int64)
    keep = temporal_mask(lo, hi, tf.begin_time, tf.end_time, tf.type)
    return [p for p, k in zip(periods, keep.tolist()) if k]


class TGragRetriever(TemporalRetriever):
    """The three-layer interactive retriever with the source-text extractor (a LlamaIndex retriever).

    Parameters
    ----------
    index : TGragIndex
        A loaded T-GRAG index.
    n_nodes, k_units : int
        ``n`` (30) candidate nodes and ``k`` (15) knowledge units.
    similarity_top_k : int
        ``t`` (5): source texts per sub-question (or in total, see ``per_period_texts``).
        ``t_texts`` is accepted as its older name.
    context_tokens : int
        Token budget of the context (default 1,600, the paper's), counted with
        :func:`count_tokens`.
    budget_scope : {"graph", "all"}
        What the budget covers. ``"all"`` (the paper's wording: "the total number of
        retrieved context tokens is limited to 1600") fills it with the knowledge units
        ``K_valid``, then the relations ``R_valid``, then the source texts ``D_valid``
        (cut to fit). ``"graph"`` (default, a documented deviation) applies it to
        ``K_valid`` + ``R_valid`` only and passes the ``t`` source texts whole: with the
        paper's 1,000-token chunks and ``t=5`` the texts alone are ~5,000 tokens, so
        ``"all"`` leaves at most one text; BENCHMARKS.md measures what that costs.
    decompose : {"llm", "rules", "none"}, optional
        Temporal query decomposition. Default: ``"llm"`` (Sec. 2.2, retried once, then
        the rules with a recorded fallback) when an LLM is given, else ``"rules"``.
    llm : object, optional
        Any LLM :func:`~chronorag.integrations.llm.resolve_llm` accepts.
    per_period_texts : bool
        Keep ``t`` source texts per sub-question (default, as in the paper) or ``t`` in
        total, interleaved across sub-questions.
    node_scoring : {"max_unit", "node_vector"}
        How ``R_node`` scores a node: by its best-matching knowledge unit (default) or by
        one vector of its name and first units.
    time_filter, filters : optional
        A default filter: a ``TimeFilter``, dict or ``MetadataFilters`` as on every chronorag
        retriever, or a period, list or range (see :func:`periods_from_filter`). A
        per-query filter given to :meth:`retrieve` / :meth:`aretrieve` (``time_filter=``)
        replaces it for that query.

    Notes
    -----
    Returned nodes are the source texts, best first; ``score`` is the cosine
    similarity between the text and its sub-question (a similarity, not a rank; the
    structural T-GRAG score that ranks them is ``metadata["tgrag_score"]``). Metadata
    the LLM need not see is in ``excluded_llm_metadata_keys``.
    """

    def __init__(self, index: TGragIndex, *, n_nodes: int = 30, k_units: int = 15, similarity_top_k: int = 5,
                 t_texts: int | None = None, context_tokens: int = 1600, budget_scope: str = "graph",
                 decompose: str | None = None, llm: Any = None, per_period_texts: bool = True,
                 node_scoring: str = "max_unit", time_filter: Any = None, **kwargs: Any) -> None:
        from chronorag.integrations.llm import resolve_llm

        if not isinstance(index, TGragIndex):
            raise ArgumentTypeError(f"index must be a TGragIndex, got {type(index).__name__}")
        if t_texts is not None:
            similarity_top_k = t_texts
        for name, v in (("n_nodes", n_nodes), ("k_units", k_units), ("similarity_top_k", similarity_top_k),
                        ("context_tokens", context_tokens)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name} must be an integer >= 1, got {v!r}")
        if decompose not in (None, "rules", "llm", "none"):
            raise ConfigError(f"decompose must be 'llm', 'rules' or 'none', got {decompose!r}")
        if budget_scope not in ("graph", "all"):
            raise ConfigError(f"budget_scope must be 'graph' or 'all', got {budget_scope!r}")
        self.llm = resolve_llm(llm, use_env=False)
        if decompose == "llm" and self.llm is None:
            raise LLMError("decompose='llm' needs an LLM: pass llm= (a LlamaIndex LLM, a LangChain chat "
                           "model or a configured LLMConfig)")
        self._index = index
        self.n_nodes, self.k_units = n_nodes, k_units
        self.similarity_top_k = similarity_top_k
        self.context_tokens = context_tokens
        self.budget_scope = budget_scope
        self.decompose = decompose or ("llm" if self.llm is not None else "rules")
        self.per_period_texts = per_period_texts
        kg = index.kg
        self._n2u = kg.units_of_node()
        self._nb = kg.neighbours()
        self._edges_of: list[list[int]] = [[] for _ in kg.node_name]
        for e, (a, b, _, _) in enumerate(kg.edges):
            self._edges_of[a].append(e)
            self._edges_of[b].append(e)
        # chunk -> nodes mentioned (through its knowledge units), and unit -> chunk
        self._unit_chunk = np.asarray(kg.unit_chunk, dtype=np.int64)
        chunk_nodes: list[set[int]] = [set() for _ in kg.chunk_text]
        for u in range(len(kg.unit_text)):
            chunk_nodes[kg.unit_chunk[u]].update(kg.unit_nodes(u))
        self._chunk_nodes = chunk_nodes
        if node_scoring not in ("max_unit", "node_vector"):
            raise ConfigError(f"node_scoring must be 'max_unit' or 'node_vector', got {node_scoring!r}")
        self.node_scoring = node_scoring
        ptr_u = np.asarray(kg.unit_node_ptr, dtype=np.int64)
        self._unit_node_flat = (np.repeat(np.arange(len(kg.unit_text)), np.diff(ptr_u)),
                                np.asarray(kg.unit_node_idx, dtype=np.int64))
        self._units_by_period: dict[tuple[str, ...] | None, np.ndarray] = {}
        super().__init__(time_filter=time_filter, **kwargs)

    @property
    def t_texts(self) -> int:
        """Older name of :attr:`similarity_top_k`."""
        return self.similarity_top_k

    def sub_questions(self, question: str) -> list[SubQuestion]:
        """Decompose ``question`` with the configured method."""
        return self.decomposition(question)[0]

    def decomposition(self, question: str) -> tuple[list[SubQuestion], str]:
        """Sub-questions and which decomposition made them (``"llm"``, ``"rules"``,
        ``"rules (LLM fallback)"`` or ``"none"``)."""
        periods = self._index.kg.periods
        if self.decompose == "none":
            return [SubQuestion(None, question)], "none"
        if self.decompose == "llm":
            return decompose_with_llm(self.llm, question, periods)
        return decompose_rule_based(question, periods), "rules"

    def _retrieve_one(self, sub: SubQuestion, qv: np.ndarray, allowed: list[str] | None) -> _PeriodResult:
        idx, kg = self._index, self._index.kg
        if sub.period is None:
            periods = allowed
        else:
            periods = [sub.period]
        nodes = kg.nodes_in_periods(periods)                       # R_time
        if len(nodes) == 0:
            return _PeriodResult(sub, [], [], [], {"note": f"no nodes in period {sub.period}"})
        ptr, units = self._n2u
        if self.node_scoring == "max_unit":
            # a node is represented by its knowledge units; its score is the best of them
            per_units = self._period_units(periods)
            ucos_all = np.full(len(kg.unit_text), -np.inf)
            ucos_all[per_units] = idx.unit_vecs[per_units] @ qv
            node_best = np.full(len(kg.node_name), -np.inf)
            np.maximum.at(node_best, self._unit_node_flat[1], ucos_all[self._unit_node_flat[0]])
            ns = node_best[nodes]
        else:
            ns = idx.node_vecs[nodes] @ qv
        k = min(self.n_nodes, len(nodes))                          # R_node
        cand = nodes[np.argsort(-ns, kind="stable")[:k]]
        cu = np.unique(np.concatenate([units[ptr[n]: ptr[n + 1]] for n in cand]))
        if cu.size == 0:
            return _PeriodResult(sub, [], [], [], {"note": "candidate nodes hold no knowledge"})
        us = idx.unit_vecs[cu] @ qv                                # R_knowledge
        order_u = np.argsort(-us, kind="stable")[: self.k_units]
        top_u, top_cos = cu[order_u], us[order_u]
        cand_set = set(cand.tolist())
        valid = sorted({n for u in top_u for n in kg.unit_nodes(int(u)) if n in cand_set})
        vset = set(valid)
        nbrs = set().union(*(self._nb[n] for n in valid)) - vset if valid else set()
        chunks = kg.chunks_in_periods(periods)                     # source texts
        unit_score: dict[int, float] = {}
        for u, c in zip(top_u.tolist(), top_cos.tolist()):
            ch = int(self._unit_chunk[u])
            unit_score[ch] = max(unit_score.get(ch, 0.0), c)
        ccos = idx.chunk_vecs[chunks] @ qv
        scores = np.array([4.0 * unit_score.get(int(c), 0.0) + 0.1 * len(self._chunk_nodes[c] & vset)
                           + 0.05 * len(self._chunk_nodes[c] & nbrs) for c in chunks])
        order = np.lexsort((-ccos, -scores))
        keep = order[: self.similarity_top_k]
        return _PeriodResult(sub, chunks[keep].tolist(), top_u.tolist(), valid,
                             {"candidate_nodes": cand.tolist()}, chunk_cos=ccos[keep].tolist(),
                             chunk_score=scores[keep].tolist())

    def _period_units(self, periods: list[str] | None) -> np.ndarray:
        key = None if periods is None else tuple(periods)
        if key not in self._units_by_period:
            per = np.asarray(self._index.kg.chunk_period)[self._unit_chunk]
            self._units_by_period[key] = (np.arange(len(per)) if periods is None
                                          else np.flatnonzero(np.isin(per, list(periods))))
        return self._units_by_period[key]

    def retrieve_chunks(self, question: str, *, time_filter: Any = None) -> tuple[list[int], list[_PeriodResult]]:
        """Ranked chunk ids for a question and the per-sub-question results.

        ``time_filter`` (or the retriever's default) keeps only the periods it allows:
        sub-questions about other periods are dropped, and "all periods" means the
        allowed ones.
        """
        if not isinstance(question, str) or not question.strip():
            raise ConfigError(f"question must be a non-empty string, got {question!r}")
        kg = self._index.kg
        allowed = periods_from_filter(time_filter if time_filter is not None else self.time_filter, kg.periods)
        subs, how = self.decomposition(question)
        if allowed is not None:
            subs = [s for s in subs if s.period is None or s.period in allowed]
        if not subs:
            return [], []
        vecs = _encoder_of(self._index).encode([s.question for s in subs])
        results = [self._retrieve_one(s, v, allowed) for s, v in zip(subs, vecs)]
        for r in results:
            r.decomposition = how
        if self.per_period_texts:
            ranked = list(dict.fromkeys(c for r in results for c in r.chunk_ids))
        else:  # interleave best-first across periods, t in total
            ranked, depth = [], 0
            while len(ranked) < self.similarity_top_k and any(depth < len(r.chunk_ids) for r in results):
                for r in results:
                    if depth < len(r.chunk_ids) and r.chunk_ids[depth] not in ranked:
                        ranked.append(r.chunk_ids[depth])
                depth += 1
            ranked = ranked[: self.similarity_top_k]
        return ranked, results

    # -------------------------------------------------------------- context (Eq. 8)
    def knowledge_lines(self, results: list[_PeriodResult]) -> list[str]:
        """``K_valid``: the top-k knowledge units of each sub-question, with their period."""
        kg = self._index.kg
        return [f"[{kg.chunk_period[kg.unit_chunk[u]]}] {kg.unit_text[u]}" for r in results for u in r.units]

    def relation_lines(self, results: list[_PeriodResult], *, limit: int = 30) -> list[str]:
        """``R_valid``: relations of the valid nodes (both ends valid first, then by weight)."""
        kg = self._index.kg
        out: list[str] = []
        for r in results:
            vset = set(r.valid_nodes)
            es = {e for n in r.valid_nodes for e in self._edges_of[n]}
            ranked = sorted(es, key=lambda e: (-(kg.edges[e][0] in vset and kg.edges[e][1] in vset),
                                               -kg.edges[e][3], e))
            for e in ranked[:limit]:
                a, b, desc, _ = kg.edges[e]
                out.append(f"[{kg.node_period[a]}] {kg.node_name[a]} -- {desc} -- {kg.node_name[b]}")
        return out

    def build_context(self, results: list[_PeriodResult], *, scope: str | None = None) -> dict[str, Any]:
        """The generator's input (Eq. 8): ``K_valid``, ``R_valid`` and ``D_valid`` within the budget.

        Parameters
        ----------
        results : list
            Per-period retrieval results (:meth:`retrieve_chunks`).
        scope : {"graph", "all"}, optional
            What the budget covers, for this call only (default: ``budget_scope``).

        Returns
        -------
        dict
            ``graph`` (the K and R lines kept), ``texts`` (source texts kept, the last
            possibly cut), ``chunk_ids`` (of those texts), ``tokens`` (graph, texts) and
            ``scope``.
        """
        scope = self.budget_scope if scope is None else scope
        if scope not in ("graph", "all"):
            raise ConfigError(f"scope must be 'graph' or 'all', got {scope!r}")
        kg = self._index.kg
        budget = self.context_tokens
        graph: list[str] = []
        used_graph = 0
        for line in self.knowledge_lines(results) + self.relation_lines(results):
            cost = count_tokens(line) + 1
            if used_graph + cost > budget:
                break
            graph.append(line)
            used_graph += cost
        texts, ids, used_texts = [], [], 0
        room = budget - used_graph if scope == "all" else None
        for r in results:
            for c in r.chunk_ids:
                if c in ids:
                    continue
                t = kg.chunk_text[c]
                if room is not None:
                    t = _cut_to_tokens(t, room - used_texts)
                    if not t:
                        break
                texts.append(t)
                ids.append(c)
                used_texts += count_tokens(t)
        return {"graph": "\n".join(graph), "texts": texts, "chunk_ids": ids,
                "tokens": {"graph": used_graph, "texts": used_texts}, "scope": scope}

    def graph_context(self, results: list[_PeriodResult]) -> str:
        """``K_valid`` and ``R_valid`` lines within the token budget."""
        return self.build_context(results)["graph"]

    # -------------------------------------------------------------- LlamaIndex API
    def normalize_time_filter(self, value: Any) -> Any:
        """Any filter :func:`periods_from_filter` takes -> the list of periods it allows
        (``None``: no filter); raises on a period the index lacks."""
        return periods_from_filter(value, self._index.kg.periods)

    def _nodes(self, query_str: str, time_filter: Any = None) -> list[NodeWithScore]:
        kg = self._index.kg
        ranked, results = self.retrieve_chunks(query_str, time_filter=time_filter)
        info: dict[int, tuple[str | None, float, float, str]] = {}
        for r in results:
            for c, cos, sc in zip(r.chunk_ids, r.chunk_cos, r.chunk_score):
                info.setdefault(c, (r.sub.period, cos, sc, r.decomposition))
        out = []
        for c in ranked:
            per, cos, sc, how = info[c]
            node = TextNode(text=kg.chunk_text[c], id_=f"chunk-{c}",
                            metadata={"period": kg.chunk_period[c], "chunk_id": c, "sub_question_period": per,
                                      "tgrag_score": round(float(sc), 6), "decomposition": how},
                            excluded_llm_metadata_keys=list(EXCLUDED_LLM_METADATA),
                            excluded_embed_metadata_keys=list(EXCLUDED_LLM_METADATA))
            out.append(NodeWithScore(node=node, score=float(cos)))
        return out

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(query_bundle.query_str, self.time_filter_for(query_bundle))


class TGragPGRetriever(TemporalPGRetrieverMixin, CustomPGRetriever):
    """T-GRAG as a sub-retriever of a LlamaIndex ``PropertyGraphIndex``.

    Contract: it retrieves from the **T-GRAG index at** ``index_dir`` (its vectors and
    time-sliced KG), **not** from the ``graph_store`` it is attached to, which it never
    reads: the T-GRAG layers need the knowledge-unit and chunk vectors, which a
    property graph does not hold. Attach it to the graph exported from that index
    (``TGragIndex.property_graph()``) so the two describe the same data.

    ``init`` takes ``index_dir``; other keyword arguments (``similarity_top_k``,
    ``time_filter``/``filters``, ...) go to :class:`TGragRetriever`. ``retrieve(q,
    time_filter=...)`` filters one query, as on every chronorag retriever. Returns the
    source-text chunks as ``NodeWithScore`` (cosine scores; one retrieval event per query).
    """

    reads_graph_store = False

    def init(self, index_dir: str | None = None, **kwargs: Any) -> None:
        if index_dir is None:
            raise ConfigError("TGragPGRetriever needs index_dir= (a `chronorag tgrag index` directory); "
                             "it does not read the attached graph_store")
        self._tgrag = self._temporal = TGragRetriever(TGragIndex.load(index_dir), **kwargs)


class VanillaChunkRetriever(TemporalRetriever):
    """Vanilla dense RAG over the same chunks (same embedding model, top-``similarity_top_k``).

    Scores are cosine similarities; ``time_filter`` (default or per query) restricts the
    chunks to the allowed periods.
    """

    def __init__(self, index: TGragIndex, *, similarity_top_k: int = 5, t_texts: int | None = None,
                 time_filter: Any = None, **kwargs: Any) -> None:
        if t_texts is not None:
            similarity_top_k = t_texts
        if isinstance(similarity_top_k, bool) or not isinstance(similarity_top_k, int) or similarity_top_k < 1:
            raise ConfigError(f"similarity_top_k must be an integer >= 1, got {similarity_top_k!r}")
        self._index = index
        self.similarity_top_k = similarity_top_k
        super().__init__(time_filter=time_filter, **kwargs)

    def normalize_time_filter(self, value: Any) -> Any:
        """Any filter :func:`periods_from_filter` takes -> the list of periods it allows."""
        return periods_from_filter(value, self._index.kg.periods)

    @property
    def t_texts(self) -> int:
        """Older name of :attr:`similarity_top_k`."""
        return self.similarity_top_k

    def retrieve_scored(self, question: str, *, time_filter: Any = None) -> tuple[list[int], list[float]]:
        """Top chunk ids and their cosine similarities."""
        if not isinstance(question, str) or not question.strip():
            raise ConfigError(f"question must be a non-empty string, got {question!r}")
        kg = self._index.kg
        allowed = periods_from_filter(time_filter if time_filter is not None else self.time_filter, kg.periods)
        qv = _encoder_of(self._index).encode([question])[0]
        s = self._index.chunk_vecs @ qv
        if allowed is not None:
            s = np.where(np.isin(np.asarray(kg.chunk_period), allowed), s, -np.inf)
        ids = [int(i) for i in np.argsort(-s, kind="stable")[: self.similarity_top_k] if np.isfinite(s[i])]
        return ids, [float(s[i]) for i in ids]

    def retrieve_chunks(self, question: str, *, time_filter: Any = None) -> list[int]:
        """Top chunk ids."""
        return self.retrieve_scored(question, time_filter=time_filter)[0]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        kg = self._index.kg
        ids, scores = self.retrieve_scored(query_bundle.query_str, time_filter=self.time_filter_for(query_bundle))
        return [NodeWithScore(node=TextNode(text=kg.chunk_text[c], id_=f"chunk-{c}",
                                            metadata={"period": kg.chunk_period[c], "chunk_id": c},
                                            excluded_llm_metadata_keys=["chunk_id"],
                                            excluded_embed_metadata_keys=["chunk_id"]),
                              score=sc) for c, sc in zip(ids, scores)]
