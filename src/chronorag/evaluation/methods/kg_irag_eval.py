"""Metrics of KG-iRAG runs (Sec. 5.1) over generated questions.

Per question:

``accuracy``
    The answer equals the gold label (``yes``/``no``, ``no need``, ``no answer`` or the
    same start time, compared in canonical form).
``em``
    Exact string match of the raw answer text with the gold text (case and outer
    spaces ignored).
``f1``
    For two times: the overlap F1 of the answer window ``[t', t' + duration)`` and the
    gold window (partial credit for a near miss); otherwise 1 when the labels are equal.
``hit_rate``
    Jaccard overlap of the retrieved fact ids and the question's minimal evidence SD;
    ``sd_recall`` is the share of SD retrieved.
``hallucination``
    Sec. 5.1, operationally: Q1 -- a wrong yes/no. Q2/Q3 -- (a) an answer time whose
    window is not inside the retrieved evidence, (b) a wrong answer, or (c) the
    controller kept retrieving after the evidence already settled the question
    (iterations beyond the first certified one). ``hallucination_rate_ab`` leaves (c) out.
``iterations``, ``evidence_facts``, ``evidence_tokens``
    Retrieval steps, facts in the final evidence, and its size in ``cl100k_base``
    tokens (``tiktoken``; the unit is reported, words when tiktoken is unavailable).
"""

from __future__ import annotations

import os
import statistics
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from chronorag.errors import ConfigError
from chronorag.graphs.output import OutputFile
from chronorag.graphs.time import parse_time
from chronorag.integrations.llm import fallbacks, query_scope, resolve_llm
from chronorag.workflows.kg_irag.engine import normalize_answer
from chronorag.workflows.kg_irag.planner import Plan
from chronorag.workflows.kg_irag.record_kg import RecordKG
from chronorag.workflows.kg_irag.reference import NO_ANSWER, NO_NEED

__all__ = ["aggregate", "evaluate", "score_one", "token_counter"]

_LABELS = ("yes", "no", NO_NEED, NO_ANSWER)
#: the scores of an error row: a miss (and a hallucination, as any wrong answer)
_MISS = {"accuracy": 0.0, "em": 0.0, "f1": 0.0, "hit_rate": 0.0, "sd_recall": 0.0, "hallucination": 1.0,
         "hallucination_ab": 1.0, "hal_a": 0.0, "hal_b": 1.0, "hal_c": 0.0}


def token_counter() -> tuple[Any, str]:
    """``(count(text) -> int, unit)``: the one token counter, :func:`chronorag.graphs.text.count_tokens`."""
    from chronorag.graphs.text import count_tokens, tokenizer_name

    return count_tokens, tokenizer_name()


def _plan_of(q: Mapping[str, Any], kg: RecordKG) -> Plan:
    return Plan(q["type"], q["place"], q["event"], parse_time(q["anchor"]).lo, int(q["duration"]),
                int(q.get("horizon") or 0), q.get("polarity", "avoid"), kg.cadence_minutes)


def score_one(q: Mapping[str, Any], out: Mapping[str, Any], kg: RecordKG) -> dict[str, Any]:
    """Score one graph output against a generated question (see module doc)."""
    plan = _plan_of(q, kg)
    gold = str(q["answer"])
    raw = str(out.get("answer") or "")
    pred = normalize_answer(raw, plan)
    acc = float(pred is not None and pred == normalize_answer(gold, plan))
    em = float(raw.strip().lower() == gold.strip().lower())
    if pred is not None and pred not in _LABELS and gold not in _LABELS:
        a, b = parse_time(pred).lo, parse_time(gold).lo
        ov = max(0, min(a, b) + plan.duration - max(a, b))
        f1 = ov / plan.duration
    else:
        f1 = acc
    ids = set(out.get("evidence_ids") or [])
    sd = set(q.get("evidence") or [])
    hit = len(ids & sd) / len(ids | sd) if ids | sd else 1.0
    rec = len(ids & sd) / len(sd) if sd else 1.0
    hal_a = hal_c = 0.0
    hal_b = 1.0 - acc
    if plan.type != "q1":
        if pred is not None and pred not in _LABELS:
            lo = parse_time(pred).lo
            wins = sorted(tuple(w) for w in out.get("windows") or [])
            covered, cur = False, None
            for w0, w1 in wins:  # union of the retrieved windows
                if cur is not None and w0 <= cur[1]:
                    cur = (cur[0], max(cur[1], w1))
                else:
                    cur = (w0, w1)
                if cur[0] <= lo and lo + plan.duration <= cur[1]:
                    covered = True
            hal_a = 0.0 if covered else 1.0
        first = int(out.get("first_certified", -1))
        if first >= 0 and int(out.get("iterations") or 0) > first + 1:
            hal_c = 1.0
    hal = float(max(hal_b, hal_a, hal_c)) if plan.type != "q1" else hal_b
    return {"accuracy": acc, "em": em, "f1": round(f1, 4), "hit_rate": round(hit, 4), "sd_recall": round(rec, 4),
            "hallucination": hal, "hallucination_ab": float(max(hal_a, hal_b)),
            "hal_a": hal_a, "hal_b": hal_b, "hal_c": hal_c}


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Means (and latency percentiles) over scored records."""
    n = len(records)
    if n == 0:
        return {"n": 0}

    def mean(k: str) -> float:
        return round(sum(float(r[k]) for r in records) / n, 4)

    lat = sorted(r["latency_ms"] for r in records)
    out = {"n": n, "accuracy": mean("accuracy"), "em": mean("em"), "f1": mean("f1"), "hit_rate": mean("hit_rate"),
           "sd_recall": mean("sd_recall"), "hallucination_rate": mean("hallucination"),
           "hallucination_rate_ab": mean("hallucination_ab"), "iterations_mean": mean("iterations"),
           "evidence_facts_mean": mean("evidence_facts"), "evidence_tokens_mean": mean("evidence_tokens"),
           "latency_ms_p50": round(statistics.median(lat), 3), "latency_ms_p95": round(lat[min(n - 1, int(0.95 * n))], 3)}
    if any("llm_total_tokens" in r for r in records):
        out["llm_calls_mean"] = round(sum(r.get("llm_calls", 0) for r in records) / n, 4)
        out["llm_tokens_mean"] = round(sum(r.get("llm_total_tokens", 0) for r in records) / n, 2)
        out["llm_errors"] = sum(r.get("llm_errors", 0) for r in records)
    return out


def evaluate(questions: Iterable[Mapping[str, Any]], *, kg: RecordKG, method: str = "kg-irag", llm: Any = None,
             out_path: str | os.PathLike[str] | None = None, progress: bool = False,
             **settings: Any) -> dict[str, Any]:
    """Run the graph (``method``) on generated questions and compute the metrics.

    Parameters
    ----------
    questions : iterable of mapping
        Rows from :func:`~chronorag.workflows.kg_irag.questions.generate_questions`.
    kg : RecordKG
        The KG of the questions' source.
    method : str
        ``kg-irag``, ``single-pass``, ``limited`` or ``no-check``.
    llm : object, optional
        An LLM for LLM1/LLM2 (anything ``resolve_llm`` takes); ``None`` = no-LLM mode
        (the environment is not consulted).
    out_path : path, optional
        Write one JSON record per question, through
        :class:`chronorag.graphs.output.OutputFile` (partial file, moved into place at the
        end; the caller checks the path against its inputs first). A question that raises
        becomes an error row (scored as a miss) and is counted in ``errors``.
    **settings
        Graph settings (``t_max``, ``theta``, ``gamma``, ``lam``, ...).

    Returns
    -------
    dict
        Overall metrics, ``by_type`` (q1, q2, q3), ``method``, ``mode`` and ``token_unit``.
    """
    from chronorag.workflows.kg_irag.graph import build_graph

    qs = list(questions)
    if not qs:
        raise ConfigError("no questions to evaluate")
    for i, q in enumerate(qs):
        missing = [k for k in ("id", "type", "question", "answer", "place", "event", "anchor", "duration")
                   if k not in q]
        if missing:
            raise ConfigError(f"question #{i} lacks {missing}; generate questions with `chronorag kg-irag generate`")
    chat = resolve_llm(llm) if llm is not None else None
    g = build_graph(kg=kg, llm=chat, method=method, use_llm=chat is not None, source=kg.spec.source, **settings)
    count, unit = token_counter()
    records = []
    it: Iterable[Mapping[str, Any]] = qs
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(qs, desc=f"kg-irag eval ({method})", unit="q")
    out_file = OutputFile(out_path) if out_path is not None else None
    try:
        for q in it:
            qid = str(q["id"])
            t0 = time.perf_counter()
            try:
                with query_scope(qid):
                    out = g.invoke({"question": q["question"]})
                rec = {"id": qid, "type": q["type"], "question": q["question"], "gold": q["answer"],
                       "answer": out.get("answer"), "latency_ms": round((time.perf_counter() - t0) * 1000, 3),
                       "iterations": int(out.get("iterations") or 0), "stopped_by": out.get("stopped_by"),
                       "evidence_facts": len(out.get("evidence_ids") or []),
                       "evidence_tokens": sum(count(t) for t in out.get("evidence") or []),
                       **score_one(q, out, kg), "error": None}
            except Exception as exc:  # noqa: BLE001 - one bad question must not end the run
                out = {}
                rec = {"id": qid, "type": q["type"], "question": q["question"], "gold": q["answer"],
                       "answer": None, "latency_ms": round((time.perf_counter() - t0) * 1000, 3),
                       "iterations": 0, "stopped_by": None, "evidence_facts": 0, "evidence_tokens": 0,
                       **_MISS, "error": f"{type(exc).__name__}: {exc}"[:2000]}
            if chat is not None:
                led = chat.ledger.summary(qid)
                rec.update({"llm_calls": led["calls"], "llm_total_tokens": led["total_tokens"],
                            "llm_prompt_tokens": led["prompt_tokens"], "llm_errors": len(out.get("llm_errors") or []),
                            "fallbacks": fallbacks.counts(qid)})
            records.append(rec)
            if out_file is not None:
                out_file.write_row({**rec, "rationale": out.get("rationale"),
                                    "evidence_ids": out.get("evidence_ids")})
        if out_file is not None:
            out_file.commit()
    except BaseException as exc:
        if out_file is not None:
            out_file.abort_noting(exc, command="chronorag kg-irag eval")
        raise
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[r["type"]].append(r)
    return {"method": method, "mode": "llm" if chat is not None else "no-llm", "source": kg.spec.source,
            "token_unit": unit, **aggregate(records), "errors": sum(1 for r in records if r.get("error")),
            "by_type": {k: aggregate(v) for k, v in sorted(groups.items())}}
