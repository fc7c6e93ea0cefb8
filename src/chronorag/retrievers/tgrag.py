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

Graph context (knowledge units of valid nodes) is cut to a token budget (1,600 by
default). Each sub-question keeps its top-``t`` source texts (the paper's setting);
``per_period_texts=False`` interleaves the periods best-first and keeps ``t`` in total,
so T-GRAG reads exactly as many chunks as the vanilla baseline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.indices.property_graph import CustomPGRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from chronorag.retrievers.tgrag_index import TGragIndex

__all__ = [
    "decompose_rule_based",
    "decompose_with_llm",
    "parse_decomposition",
    "SubQuestion",
    "TGragRetriever",
    "TGragPGRetriever",
    "VanillaChunkRetriever",
    "answer_tgrag",
    "DECOMPOSE_PROMPT",
    "SUBANSWER_PROMPT",
    "SYNTHESIS_PROMPT",
]

_YEAR = r"(?:19|20)\d{2}"


@dataclass(frozen=True)
class SubQuestion:
    """One period's sub-question (``period=None``: all periods)."""

    period: str | None
    question: str


def decompose_rule_based(question: str, periods: list[str] | None = None) -> list[SubQuestion]:
    """Split a question into one sub-question per year it mentions.

    Finds years, ranges (``2021-2022``, ``2019 to 2021``: every year in between) and
    lists (``2017 and 2023``, ``2012, 2015``). Each sub-question is the question with
    the other years removed. A question without a year stays whole (all periods).
    Years outside ``periods`` (when given) are dropped; when none is inside, the
    question spans all periods (a report about 2023 discusses its 2025 plans).
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"question must be a non-empty string, got {question!r}")
    years: list[int] = []
    for m in re.finditer(rf"\b({_YEAR})\s*(?:-|–|to|through|until)\s*({_YEAR})\b", question):
        a, b = int(m.group(1)), int(m.group(2))
        if a <= b <= a + 20:
            years.extend(range(a, b + 1))
    years.extend(int(y) for y in re.findall(rf"\b({_YEAR})\b", question))
    ys = sorted(set(years))
    if periods is not None:
        ys = [y for y in ys if str(y) in periods]
    if not ys:
        return [SubQuestion(None, question)]
    if len(ys) == 1:
        return [SubQuestion(str(ys[0]), question)]
    out = []
    conn = r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+)"
    for y in ys:
        q = re.sub(rf"\b{_YEAR}\s*(?:-|–|to|through|until)\s*{_YEAR}\b", str(y), question)
        for other in sorted({int(x) for x in re.findall(rf"\b{_YEAR}\b", q)} - {y}):
            q = re.sub(rf"\b{other}\b{conn}", "", q)   # "2019 and 2022" -> "2022"
            q = re.sub(rf"{conn}\b{other}\b", "", q)   # "2019 and 2022" -> "2019"
            q = re.sub(rf"\s*\b{other}\b", "", q)
        q = re.sub(r"\s{2,}", " ", re.sub(r"\s+([?.,])", r"\1", q)).strip(" ,")
        out.append(SubQuestion(str(y), q))
    return out


DECOMPOSE_PROMPT = """Split the question into sub-questions that each concern a single time period.
Available periods: {periods}.
Write one line per sub-question as [period<SEP>sub-question]. If the question names no time,
write one line [all<SEP>the question unchanged].

Question: {question}"""


def parse_decomposition(text: str, periods: list[str] | None = None) -> list[SubQuestion]:
    """Parse ``[period<SEP>sub-question]`` lines (also ``period: question`` and ``period | question``)."""
    out: list[SubQuestion] = []
    for line in text.splitlines():
        line = line.strip().strip("-*• ").strip()
        m = re.match(r"^\[?\s*([^\]<|:]+?)\s*(?:<SEP>|<sep>|\||:)\s*(.+?)\]?$", line)
        if not m:
            continue
        per, q = m.group(1).strip(), m.group(2).strip().rstrip("]").strip()
        if not q:
            continue
        if per.lower() in ("all", "none", "any", "-"):
            out.append(SubQuestion(None, q))
            continue
        y = re.search(_YEAR, per)
        if y is None or (periods is not None and y.group(0) not in periods):
            continue
        out.append(SubQuestion(y.group(0), q))
    return out


def decompose_with_llm(config: Any, question: str, periods: list[str]) -> list[SubQuestion]:
    """LLM decomposition; falls back to :func:`decompose_rule_based` when the reply has no usable line."""
    from chronorag.integrations.llm import chat

    reply = chat(config, [{"role": "user", "content": DECOMPOSE_PROMPT.format(periods=", ".join(periods), question=question)}])
    subs = parse_decomposition(reply, periods)
    return subs or decompose_rule_based(question, periods)


@dataclass
class _PeriodResult:
    sub: SubQuestion
    chunk_ids: list[int]
    units: list[int]
    valid_nodes: list[int]
    info: dict[str, Any] = field(default_factory=dict)


class TGragRetriever(BaseRetriever):
    """The three-layer interactive retriever with the source-text extractor (a LlamaIndex retriever).

    Parameters
    ----------
    index : TGragIndex
        A loaded T-GRAG index.
    n_nodes, k_units, t_texts : int
        ``n`` (30), ``k`` (15), ``t`` (5).
    context_tokens : int
        Budget for the graph context (knowledge units and relations), default 1,600.
    decompose : {"rules", "llm", "none"}
        Query decomposition; ``"llm"`` needs ``llm``.
    llm : LLMConfig, optional
        Endpoint for ``decompose="llm"``.
    per_period_texts : bool
        Keep ``t`` source texts per sub-question (default, as in the paper) or, when
        false, ``t`` in total interleaved across sub-questions.
    node_scoring : {"max_unit", "node_vector"}
        How ``R_node`` scores a node: by its best-matching knowledge unit (a
        multi-vector node embedding; default) or by one vector of its name and first
        units (``node_vecs``).
    """

    def __init__(self, index: TGragIndex, *, n_nodes: int = 30, k_units: int = 15, t_texts: int = 5,
                 context_tokens: int = 1600, decompose: str = "rules", llm: Any = None,
                 per_period_texts: bool = True, node_scoring: str = "max_unit", **kwargs: Any) -> None:
        if not isinstance(index, TGragIndex):
            raise TypeError(f"index must be a TGragIndex, got {type(index).__name__}")
        for name, v in (("n_nodes", n_nodes), ("k_units", k_units), ("t_texts", t_texts), ("context_tokens", context_tokens)):
            if v < 1:
                raise ValueError(f"{name} must be >= 1, got {v}")
        if decompose not in ("rules", "llm", "none"):
            raise ValueError(f"decompose must be 'rules', 'llm' or 'none', got {decompose!r}")
        if decompose == "llm" and not getattr(llm, "is_configured", False):
            raise ValueError("decompose='llm' needs a configured LLMConfig")
        self._index = index
        self.n_nodes, self.k_units, self.t_texts = n_nodes, k_units, t_texts
        self.context_tokens = context_tokens
        self.decompose = decompose
        self.llm = llm
        self.per_period_texts = per_period_texts
        kg = index.kg
        self._n2u = kg.units_of_node()
        self._nb = kg.neighbours()
        # chunk -> nodes mentioned (through its knowledge units), and unit -> chunk
        self._unit_chunk = np.asarray(kg.unit_chunk, dtype=np.int64)
        chunk_nodes: list[set[int]] = [set() for _ in kg.chunk_text]
        for u in range(len(kg.unit_text)):
            chunk_nodes[kg.unit_chunk[u]].update(kg.unit_nodes(u))
        self._chunk_nodes = chunk_nodes
        if node_scoring not in ("max_unit", "node_vector"):
            raise ValueError(f"node_scoring must be 'max_unit' or 'node_vector', got {node_scoring!r}")
        self.node_scoring = node_scoring
        ptr_u = np.asarray(kg.unit_node_ptr, dtype=np.int64)
        self._unit_node_flat = (np.repeat(np.arange(len(kg.unit_text)), np.diff(ptr_u)),
                                np.asarray(kg.unit_node_idx, dtype=np.int64))
        self._units_by_period: dict[str | None, np.ndarray] = {}
        super().__init__(**kwargs)

    def sub_questions(self, question: str) -> list[SubQuestion]:
        """Decompose ``question`` with the configured method."""
        periods = self._index.kg.periods
        if self.decompose == "none":
            return [SubQuestion(None, question)]
        if self.decompose == "llm":
            return decompose_with_llm(self.llm, question, periods)
        return decompose_rule_based(question, periods)

    def _retrieve_one(self, sub: SubQuestion, qv: np.ndarray) -> _PeriodResult:
        idx, kg = self._index, self._index.kg
        periods = None if sub.period is None else [sub.period]
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
        keep = order[: self.t_texts]
        return _PeriodResult(sub, chunks[keep].tolist(), top_u.tolist(), valid, {"candidate_nodes": cand.tolist()})

    def _period_units(self, periods: list[str] | None) -> np.ndarray:
        key = None if periods is None else periods[0]
        if key not in self._units_by_period:
            per = np.asarray(self._index.kg.chunk_period)[self._unit_chunk]
            self._units_by_period[key] = (np.arange(len(per)) if periods is None
                                          else np.flatnonzero(np.isin(per, periods)))
        return self._units_by_period[key]

    def retrieve_chunks(self, question: str) -> tuple[list[int], list[_PeriodResult]]:
        """Ranked chunk ids for a question and the per-sub-question results."""
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"question must be a non-empty string, got {question!r}")
        subs = self.sub_questions(question)
        enc = self._index.encoder
        vecs = enc.encode([s.question for s in subs])
        results = [self._retrieve_one(s, v) for s, v in zip(subs, vecs)]
        if self.per_period_texts:
            ranked = [c for r in results for c in r.chunk_ids]
        else:  # interleave best-first across periods, t in total
            ranked, depth = [], 0
            while len(ranked) < self.t_texts and any(depth < len(r.chunk_ids) for r in results):
                for r in results:
                    if depth < len(r.chunk_ids) and r.chunk_ids[depth] not in ranked:
                        ranked.append(r.chunk_ids[depth])
                depth += 1
            ranked = ranked[: self.t_texts]
        return ranked, results

    def graph_context(self, results: list[_PeriodResult]) -> str:
        """Knowledge units and relations of the valid nodes, within the token budget."""
        kg = self._index.kg
        lines: list[str] = []
        budget = self.context_tokens
        for r in results:
            for u in r.units:
                line = f"[{kg.chunk_period[kg.unit_chunk[u]]}] {kg.unit_text[u]}"
                cost = len(line.split()) * 4 // 3 + 1  # ~tokens
                if cost > budget:
                    return "\n".join(lines)
                lines.append(line)
                budget -= cost
        return "\n".join(lines)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        kg = self._index.kg
        ranked, results = self.retrieve_chunks(query_bundle.query_str)
        period_of = {c: r.sub.period for r in results for c in r.chunk_ids}
        out = []
        for rank, c in enumerate(ranked):
            node = TextNode(text=kg.chunk_text[c], id_=f"chunk-{c}",
                            metadata={"period": kg.chunk_period[c], "chunk_id": c,
                                      "sub_question_period": period_of.get(c)})
            out.append(NodeWithScore(node=node, score=float(len(ranked) - rank)))
        return out

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._retrieve(query_bundle)


class TGragPGRetriever(CustomPGRetriever):
    """T-GRAG as a sub-retriever of a LlamaIndex ``PropertyGraphIndex`` (over the index's property graph).

    ``init`` takes ``index_dir`` (a T-GRAG index); other keyword arguments go to
    :class:`TGragRetriever`. Returns the source-text chunks as ``NodeWithScore``.
    """

    def init(self, index_dir: str | None = None, **kwargs: Any) -> None:
        if index_dir is None:
            raise ValueError("TGragPGRetriever needs index_dir= (a `chronorag tgrag index` directory)")
        self._tgrag = TGragRetriever(TGragIndex.load(index_dir), **kwargs)

    def custom_retrieve(self, query_str: str) -> list[NodeWithScore]:
        return self._tgrag.retrieve(query_str)


def Counter_like(values: np.ndarray) -> dict[int, int]:  # noqa: N802 - small helper
    """Counts of values (a dict, for lookups in a loop)."""
    u, c = np.unique(values, return_counts=True)
    return dict(zip(u.tolist(), c.tolist()))


class VanillaChunkRetriever(BaseRetriever):
    """Vanilla dense RAG over the same chunks (same embedding model, top-``t``)."""

    def __init__(self, index: TGragIndex, *, t_texts: int = 5, **kwargs: Any) -> None:
        if t_texts < 1:
            raise ValueError(f"t_texts must be >= 1, got {t_texts}")
        self._index = index
        self.t_texts = t_texts
        super().__init__(**kwargs)

    def retrieve_chunks(self, question: str) -> list[int]:
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"question must be a non-empty string, got {question!r}")
        qv = self._index.encoder.encode([question])[0]
        s = self._index.chunk_vecs @ qv
        return np.argsort(-s, kind="stable")[: self.t_texts].tolist()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        kg = self._index.kg
        ids = self.retrieve_chunks(query_bundle.query_str)
        return [NodeWithScore(node=TextNode(text=kg.chunk_text[c], id_=f"chunk-{c}",
                                            metadata={"period": kg.chunk_period[c], "chunk_id": c}),
                              score=float(len(ids) - i)) for i, c in enumerate(ids)]


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


def answer_tgrag(retriever: TGragRetriever, question: str, *, llm: Any = None) -> dict[str, Any]:
    """Retrieve and answer. With ``llm``: per-sub-question answers, then a synthesis.
    Without: the per-period evidence and the best-matching retrieved sentence per
    sub-question (an *extractive* answer, labelled as such)."""
    kg = retriever._index.kg
    ranked, results = retriever.retrieve_chunks(question)
    evidence = [kg.chunk_text[c] for c in ranked]
    if llm is None or not getattr(llm, "is_configured", False):
        subs = []
        for r in results:
            best = kg.unit_text[r.units[0]] if r.units else ""
            subs.append({"period": r.sub.period, "question": r.sub.question, "answer": best})
        final = " ".join(f"[{s['period'] or 'all'}] {s['answer']}" for s in subs if s["answer"])
        return {"answer": final, "mode": "extractive (no LLM): best retrieved sentence per sub-question",
                "sub_answers": subs, "evidence": evidence, "chunk_ids": ranked}
    from chronorag.integrations.llm import chat

    subs = []
    for r in results:
        texts = "\n\n".join(kg.chunk_text[c] for c in r.chunk_ids[: retriever.t_texts])
        prompt = SUBANSWER_PROMPT.format(period=r.sub.period or "all periods", graph=retriever.graph_context([r]),
                                         texts=texts, question=r.sub.question)
        subs.append({"period": r.sub.period, "question": r.sub.question,
                     "answer": chat(llm, [{"role": "user", "content": prompt}]).strip()})
    if len(subs) == 1:
        final = subs[0]["answer"]
    else:
        pairs = "\n".join(f"- ({s['period']}) {s['question']} -> {s['answer']}" for s in subs)
        final = chat(llm, [{"role": "user", "content": SYNTHESIS_PROMPT.format(pairs=pairs, question=question)}]).strip()
    return {"answer": final, "mode": f"LLM ({llm.model})", "sub_answers": subs, "evidence": evidence,
            "chunk_ids": ranked}
