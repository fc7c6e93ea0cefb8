"""The evaluation runner shared by every method, and the methods registry.

A *method* answers one question dict with a :class:`Prediction` (ranked short
answers plus the evidence texts it used). :func:`run_eval` runs a method over a
question file, writes predictions as JSONL, and returns metrics overall and per
``qtype``; the CLI prints them as a table and, on its last line, as one JSON object.

Methods registered here (others add themselves with :func:`register_method`):

``dense``
    :class:`~chronorag.retrievers.dense.DenseEventRetriever` top-10 events read by
    :func:`rank_candidates` (no LLM): the time-blind baseline.
``tools``
    TempTool-R1: the no-LLM temporal reasoner over the three tools, or, with
    ``llm_url``, the LangGraph tool-calling agent.
``t-grag`` and ``vanilla``
    T-GRAG over a time-sliced index (``chronorag tgrag index``) and the dense chunk
    baseline; answers by the LLM, or extractive without one.
``star-rag`` (and the ablations ``star-rag-uniform``, ``star-rag-norule``)
    STAR-RAG retrieval; answers by the LLM, or by the temporal reasoner reading only
    the retrieved events (no LLM).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chronorag.errors import DataFormatError, UnknownNameError
from chronorag.graphs.persist import iter_jsonl
from chronorag.metrics import evidence_recall, exact_match, hits_at_k, normalize_answer, token_f1

__all__ = [
    "METHODS",
    "Method",
    "Prediction",
    "format_table",
    "load_questions",
    "make_method",
    "rank_candidates",
    "register_method",
    "run_eval",
]


@dataclass
class Prediction:
    """What a method returns for one question."""

    answers: list[str]
    evidence: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


Method = Callable[[dict[str, Any]], Prediction]
METHODS: dict[str, Callable[..., Method]] = {}


def register_method(name: str, factory: Callable[..., Method]) -> None:
    """Register ``factory(index_dir, **options) -> Method`` under ``name``."""
    if not name or not callable(factory):
        raise ValueError(f"register_method needs a name and a callable, got {name!r}, {factory!r}")
    METHODS[name] = factory


def make_method(name: str, index_dir: str | os.PathLike[str], **options: Any) -> Method:
    """Build a registered method over an index directory."""
    if name not in METHODS:
        raise UnknownNameError(f"unknown method {name!r}; available: {sorted(METHODS)}")
    return METHODS[name](index_dir, **options)


def load_questions(path: str | os.PathLike[str], *, limit: int | None = None) -> list[dict[str, Any]]:
    """Read a JSONL(.gz) question file; each row needs ``question`` and an ``answers`` list.

    Raises
    ------
    DataFormatError
        Naming ``file:line`` for a row that is not JSON or lacks those fields.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such question file: {p}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    rows: list[dict[str, Any]] = []
    for lineno, row in iter_jsonl(p):
        if not isinstance(row, dict) or not isinstance(row.get("question"), str):
            raise DataFormatError(f"{p}:{lineno}: row has no 'question' string")
        answers = row.get("answers", row.get("answer"))
        if isinstance(answers, str):
            answers = [answers]
        if not isinstance(answers, list) or not answers:
            raise DataFormatError(f"{p}:{lineno}: row has no non-empty 'answers' list")
        row["answers"] = [str(a) for a in answers]
        rows.append(row)
        if limit is not None and len(rows) >= limit:
            break
    return rows


def rank_candidates(
    events: Sequence[Any], question: str, *, with_time: bool = True
) -> list[str]:
    """Turn retrieved events into ranked answer candidates (a naive, LLM-free reader).

    For each event in rank order it proposes the object, the subject and the date;
    names already written in the question are skipped (the question's anchors are
    rarely its answer). Duplicates keep their best rank.

    Parameters
    ----------
    events : sequence of Event
        Retrieved events, best first (objects with ``subject``, ``object``, ``start``).
    question : str
        The question text.
    with_time : bool
        Also propose each event's date.
    """
    qn = f" {normalize_answer(question)} "
    seen: set[str] = set()
    out: list[str] = []
    for ev in events:
        cands = [ev.object, ev.subject] + ([ev.start] if with_time else [])
        for c in cands:
            n = normalize_answer(c)
            if not n or n in seen or f" {n} " in qn:
                continue
            seen.add(n)
            out.append(c)
    return out


def run_eval(
    method: Method,
    questions: Iterable[dict[str, Any]],
    *,
    out_path: str | os.PathLike[str] | None = None,
    ks: Sequence[int] = (1, 3, 10),
    progress: bool = True,
) -> dict[str, Any]:
    """Run ``method`` on every question and compute metrics.

    Returns
    -------
    dict
        ``n``, ``hits@k`` for each k, ``em``, ``f1``, ``latency_ms_p50``/``p95``, and
        ``by_qtype`` with the same per ``qtype`` (when the questions have one).
    """
    qs = list(questions)
    if not qs:
        raise ValueError("no questions to evaluate")
    if not ks or any(not isinstance(k, int) or k < 1 for k in ks):
        raise ValueError(f"ks must be positive integers, got {ks!r}")
    records: list[dict[str, Any]] = []
    iterator: Iterable[dict[str, Any]] = qs
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(qs, desc="evaluating", unit="q")
    out_fh = open(out_path, "w", encoding="utf-8") if out_path is not None else None
    try:
        for q in iterator:
            t0 = time.perf_counter()
            pred = method(q)
            dt = (time.perf_counter() - t0) * 1000
            golds = q["answers"]
            rec = {
                "quid": q.get("quid", q.get("id")),
                "question": q["question"],
                "qtype": q.get("qtype", q.get("type")),
                "answers": golds,
                "predicted": pred.answers[: max(ks)],
                "latency_ms": round(dt, 3),
                **{f"hits@{k}": hits_at_k(pred.answers, golds, k) for k in ks},
                "em": exact_match(pred.answers[0], golds) if pred.answers else 0.0,
                "f1": token_f1(pred.answers[0], golds) if pred.answers else 0.0,
                "evidence": pred.evidence[:10],
                "info": pred.info,
            }
            if isinstance(q.get("evidence"), list) and q["evidence"]:
                # k: the texts the method read when it says so (T-GRAG reads t per sub-question)
                rec["evidence_recall@5"] = evidence_recall(pred.evidence, q["evidence"],
                                                           k=pred.info.get("evidence_k") or 5)
                rec["gold_evidence"] = q["evidence"]
            records.append(rec)
            if out_fh is not None:
                out_fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    finally:
        if out_fh is not None:
            out_fh.close()
    metrics = _aggregate(records, ks)
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r["qtype"] is not None:
            groups[str(r["qtype"])].append(r)
    if groups:
        metrics["by_qtype"] = {g: _aggregate(rs, ks) for g, rs in sorted(groups.items())}
    return metrics


def _aggregate(records: list[dict[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    n = len(records)
    lat = sorted(r["latency_ms"] for r in records)
    out: dict[str, Any] = {"n": n}
    for k in ks:
        out[f"hits@{k}"] = round(sum(r[f"hits@{k}"] for r in records) / n, 4)
    if all("evidence_recall@5" in r for r in records):
        out["evidence_recall@5"] = round(sum(r["evidence_recall@5"] for r in records) / n, 4)
    out["em"] = round(sum(r["em"] for r in records) / n, 4)
    out["f1"] = round(sum(r["f1"] for r in records) / n, 4)
    out["latency_ms_p50"] = round(statistics.median(lat), 3)
    out["latency_ms_p95"] = round(lat[min(n - 1, int(0.95 * n))], 3)
    return out


def format_table(metrics: dict[str, Any]) -> str:
    """A plain-text table of overall and per-qtype metrics."""
    cols = [c for c in metrics if c.startswith("hits@")] + ["em", "f1", "latency_ms_p50"]
    if "evidence_recall@5" in metrics:
        cols.insert(0, "evidence_recall@5")
    rows = [("overall", metrics)] + list(metrics.get("by_qtype", {}).items())
    head = f"{'group':<16}{'n':>6}" + "".join(f"{c:>16}" for c in cols)
    lines = [head, "-" * len(head)]
    for name, m in rows:
        lines.append(f"{name:<16}{m['n']:>6}" + "".join(f"{m[c]:>16}" for c in cols))
    return "\n".join(lines)


def _dense_factory(index_dir: str | os.PathLike[str], *, top_k: int = 10,
                   llm_url: str | None = None, **_: Any) -> Method:
    if llm_url is not None:
        raise ValueError("method 'dense' has no LLM mode; drop --llm-url")
    from chronorag.retrievers.dense import DenseEventRetriever
    from chronorag.retrievers.event_index import EventIndex

    index = EventIndex.load(index_dir)
    retriever = DenseEventRetriever(index, similarity_top_k=top_k)

    def method(q: dict[str, Any]) -> Prediction:
        ids, scores = retriever.retrieve_event_ids(q["question"])
        events = index.store.events(ids)
        return Prediction(
            answers=rank_candidates(events, q["question"]),
            evidence=[e.verbalize() for e in events],
            info={"event_ids": [int(i) for i in ids]},
        )

    return method


register_method("dense", _dense_factory)


def _tools_factory(index_dir: str | os.PathLike[str], *, llm_url: str | None = None, llm: Any = None,
                   protocol: str | None = None, max_tool_calls: int = 8, deadline_s: float | None = None,
                   **_: Any) -> Method:
    """TempTool: the no-LLM reasoner, or the agent graph when an LLM is given (``llm_url`` or ``llm``).

    A question with an invalid date raises :class:`~chronorag.errors.TimeParseError`; a
    time outside the graph's span gives no answers and says why in ``info["note"]``.
    With an LLM, every LLM failure (connection refused, HTTP 5xx, timeout, an empty
    reply) raises :class:`~chronorag.errors.LLMError` naming the endpoint; a question
    gets at most ``deadline_s`` seconds (default 300).
    """
    from chronorag.errors import TimeParseError
    from chronorag.integrations.llm import LLMConfig, fallbacks, query_scope, resolve_llm
    from chronorag.integrations.temporal_tools import TemporalKGTools
    from chronorag.retrievers.event_index import EventIndex
    from chronorag.workflows.temptool.reasoner import TemporalReasoner
    from chronorag.workflows.temptool.state import DEFAULT_DEADLINE_S

    chat = resolve_llm(LLMConfig(base_url=llm_url) if llm_url else llm, use_env=False)
    if chat is None:
        if protocol not in (None, "planner"):
            raise ValueError(f"protocol {protocol!r} needs an LLM: pass --llm-url")
        reasoner = TemporalReasoner(TemporalKGTools(EventIndex.load(index_dir)))

        def method(q: dict[str, Any]) -> Prediction:
            res = reasoner.answer(q["question"])
            if res.error and res.error.startswith("invalid date"):
                raise TimeParseError(f"question {q['question']!r}: {res.error}")
            return Prediction(answers=res.answers, evidence=res.evidence,
                              info={"mode": "no-LLM reasoner", "calls": res.calls, "note": res.note,
                                    "plan": res.plan.describe() if res.plan else None})

        return method

    from chronorag.workflows.temptool.graph import build_graph

    graph = build_graph(str(index_dir), llm=chat, protocol=protocol, max_tool_calls=max_tool_calls,
                        deadline_s=deadline_s or DEFAULT_DEADLINE_S)

    def agent_method(q: dict[str, Any]) -> Prediction:
        qid = str(q.get("quid", q.get("id", q["question"])))
        with query_scope(qid):
            out = graph.invoke({"question": q["question"]})
        return Prediction(answers=out.get("answers", []),
                          evidence=[str(m.content) for m in out.get("messages", []) if m.type == "tool"],
                          info={"mode": out.get("mode"), "tool_calls": out.get("tool_calls", 0),
                                "stopped": out.get("stopped"), "note": out.get("note", ""),
                                "tokens": chat.ledger.summary(qid), "fallbacks": fallbacks.counts(qid)})

    return agent_method


register_method("tools", _tools_factory)


def _star_factory(index_dir: str | os.PathLike[str], *, llm_url: str | None = None,
                  personalization: str = "star", use_rule_graph: bool = True, **_: Any) -> Method:
    """STAR-RAG retrieval; answers from the LLM, or (no LLM) the temporal reasoner reading
    only the retrieved events, falling back to :func:`rank_candidates`."""
    from chronorag.integrations.llm import LLMConfig
    from chronorag.integrations.temporal_tools import TemporalKGTools
    from chronorag.retrievers.event_index import EventIndex
    from chronorag.retrievers.star_rag import StarRAGRetriever, answer_with_llm
    from chronorag.workflows.temptool.reasoner import TemporalReasoner

    index = EventIndex.load(index_dir)
    retriever = StarRAGRetriever(index, personalization=personalization, use_rule_graph=use_rule_graph)
    cfg = LLMConfig(base_url=llm_url) if llm_url else None
    tools = TemporalKGTools(index) if cfg is None else None
    reasoner = TemporalReasoner(tools) if tools is not None else None

    def method(q: dict[str, Any]) -> Prediction:
        ids, info = retriever.retrieve_event_ids(q["question"])
        events = index.store.events(ids)
        evidence = [e.verbalize() for e in events]
        meta = {"event_ids": ids.tolist(), "seeds": info.get("seeds", []), "top_rules": info.get("top_rules", [])}
        if cfg is not None:
            qid = str(q.get("quid", q.get("id", q["question"])))
            with cfg.ledger.query(qid):
                answers = answer_with_llm(cfg, q["question"], events)
            return Prediction(answers=answers, evidence=evidence, info={**meta, "tokens": cfg.ledger.summary(qid)})
        with tools.restricted(ids):
            res = reasoner.answer(q["question"])
        answers = list(res.answers)
        for a in rank_candidates(events, q["question"]):
            if a not in answers:
                answers.append(a)
        return Prediction(answers=answers, evidence=evidence,
                          info={**meta, "reader": "temporal reasoner over retrieved events" if res.answers
                                else "entities and dates of retrieved events"})

    return method


def _star_uniform_factory(index_dir: str | os.PathLike[str], **kw: Any) -> Method:
    return _star_factory(index_dir, personalization="uniform", **kw)


def _star_norule_factory(index_dir: str | os.PathLike[str], **kw: Any) -> Method:
    return _star_factory(index_dir, use_rule_graph=False, **kw)


register_method("star-rag", _star_factory)
register_method("star-rag-uniform", _star_uniform_factory)
register_method("star-rag-norule", _star_norule_factory)


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
    from chronorag.retrievers.tgrag_index import TGragIndex

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
        return Prediction(answers=[out["answer"]] if out["answer"] else [], evidence=out["evidence"], info=info)

    return method


def _vanilla_factory(index_dir: str | os.PathLike[str], **kw: Any) -> Method:
    return _tgrag_factory(index_dir, vanilla=True, **kw)


register_method("t-grag", _tgrag_factory)
register_method("vanilla", _vanilla_factory)
