"""The evaluation runner shared by every method, and the methods registry.

A *method* answers one question dict with a :class:`Prediction` (ranked short
answers, the evidence texts it used, and the tool calls it made). Each method plugs in
through a small adapter: a factory ``factory(index_dir, **options) -> Method`` registered
with :func:`register_method`; the runner knows nothing about any particular method.

:func:`run_eval` runs a method over a question file and writes a *run file*
(:mod:`chronorag.evaluation.runfile`: one record per question with timings, context and
LLM tokens, fallback counts and errors, plus the run's configuration, versions and
metrics) that ``chronorag report`` and ``chronorag ragas`` read. It returns metrics
overall and per ``qtype``; the CLI prints them as a table and, on its last line, as one
JSON object.

What eval guarantees: the output file is only replaced, atomically, once the run is
complete (a crash or kill leaves the previous file intact, and the finished questions in a
hidden ``.NAME.*.partial`` file next to it); a question that raises becomes an error row
(scored as a miss and counted in ``errors``) and the run carries on; an output path equal
to an input is refused; two concurrent runs each write their own partial file, and the
output holds the complete file of whichever finished last, never a mix.

Writing an adapter: ``def _mymethod_factory(index_dir, *, llm_url=None, **_) -> Method`` loads
what it needs once and returns ``method(question_dict) -> Prediction``; register it with
``register_method("mymethod", _mymethod_factory)``. Put the evidence texts the answer was read
from in ``Prediction.evidence`` (context tokens are counted from them), the tool calls in
order in ``Prediction.trace`` (``[{"name", "args"}]``; ``ragas --tool-calls`` scores them), and
either ``info["tokens"]`` or a ``method.ledger`` attribute (the LLMConfig's
:class:`~chronorag.integrations.llm.TokenLedger`) for LLM tokens. Raise on failure: the runner
records the error row; record substitutes with ``record_fallback`` (counted per question).

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
``kg-irag``
    KG-iRAG over a record source (``index_dir`` = ``nyc-weather``, ``nyc-flights``,
    ``seattle-weather``); its Sec. 5.1 metrics come from ``chronorag eval kg-irag``.
``topg-naive``, ``topg-local``, ``topg-global`` and ``dense-passages``
    ToPG over a proposition-graph index (``chronorag topg index``) and the dense passage
    baseline; ``info["passage_ids"]`` feeds ``chronorag eval 2wiki|graphrag-bench``
    (:mod:`chronorag.evaluation.methods.passages`).
"""

from __future__ import annotations

import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chronorag.errors import (
    ArgumentTypeError,
    ConfigError,
    DataFormatError,
    MissingFileError,
    UnknownNameError,
)
from chronorag.graphs.persist import iter_jsonl
from chronorag.graphs.text import count_tokens
from chronorag.graphs.text import tokenizer_name as _tokenizer_name
from chronorag.metrics import evidence_recall, exact_match, hits_at_k, token_f1

__all__ = [
    "METHODS",
    "Method",
    "Prediction",
    "count_tokens",
    "format_table",
    "load_questions",
    "make_method",
    "register_method",
    "run_eval",
]


@dataclass
class Prediction:
    """What a method returns for one question."""

    answers: list[str]
    evidence: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    #: tool calls in the order made, ``[{"name": ..., "args": {...}}]`` (scored by ``ragas --tool-calls``)
    trace: list[dict[str, Any]] = field(default_factory=list)
    #: True when the method declines to answer on purpose (``answers`` is then empty)
    abstained: bool = False
    #: why it abstained, or a caveat about the answer ("" when there is none)
    reason: str = ""


Method = Callable[[dict[str, Any]], Prediction]
METHODS: dict[str, Callable[..., Method]] = {}


def register_method(name: str, factory: Callable[..., Method]) -> None:
    """Register ``factory(index_dir, **options) -> Method`` under ``name``."""
    if not name or not callable(factory):
        raise ConfigError(f"register_method needs a name and a callable, got {name!r}, {factory!r}")
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
        raise MissingFileError(f"no such question file: {p}")
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be >= 1, got {limit}")
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


def _qid(q: dict[str, Any], row: int) -> str:
    v = q.get("quid", q.get("id"))
    return str(v) if v is not None and str(v) != "" else f"row{row}"


def _gold_text(golds: Sequence[str]) -> str:
    return golds[0] if len(golds) == 1 else " or ".join(golds)


def _score(rec: dict[str, Any], q: dict[str, Any], pred: Prediction | None, ks: Sequence[int]) -> None:
    golds = q["answers"]
    answers = pred.answers if pred is not None else []
    for k in ks:
        rec[f"hits@{k}"] = hits_at_k(answers, golds, k)
    rec["em"] = exact_match(answers[0], golds) if answers else 0.0
    rec["f1"] = token_f1(answers[0], golds) if answers else 0.0
    if isinstance(q.get("evidence"), list) and q["evidence"]:
        # k: every text the method read when it says so (T-GRAG reads t per sub-question)
        k = (pred.info.get("evidence_k") if pred is not None else None) or 5
        rec["evidence_recall@5"] = evidence_recall(pred.evidence if pred else [], q["evidence"], k=k)
        rec["gold_evidence"] = q["evidence"]


def _as_prediction(pred: Any) -> Prediction:
    if not isinstance(pred, Prediction):
        raise ArgumentTypeError(f"a method must return a Prediction, got {type(pred).__name__}")
    if isinstance(pred.answers, str) or not all(isinstance(a, str) for a in pred.answers):
        raise ArgumentTypeError(f"Prediction.answers must be a list of strings, got {pred.answers!r:.200}")
    if isinstance(pred.evidence, str) or not all(isinstance(e, str) for e in pred.evidence):
        raise ArgumentTypeError(f"Prediction.evidence must be a list of strings, got {pred.evidence!r:.200}")
    return pred


def run_eval(
    method: Method,
    questions: Iterable[dict[str, Any]],
    *,
    out_path: str | os.PathLike[str] | None = None,
    ks: Sequence[int] = (1, 3, 10),
    progress: bool = True,
    judge: Callable[[str, str, str], Any] | None = None,
    config: dict[str, Any] | None = None,
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> dict[str, Any]:
    """Run ``method`` on every question, write the run file, and compute metrics.

    Guarantees: ``out_path`` is not touched until the run ends, then replaced atomically
    by the complete run file (see :mod:`chronorag.evaluation.runfile`); a question whose
    method raises becomes an error row (scored as a miss, counted in ``errors``) and the
    run carries on; ``out_path`` equal to one of ``inputs`` is refused before any work.
    A ``KeyboardInterrupt`` keeps the finished questions in the partial file.

    Parameters
    ----------
    method : Method
        ``method(question_dict) -> Prediction``. It may carry a ``ledger`` attribute (a
        :class:`~chronorag.integrations.llm.TokenLedger`) for per-question token counts.
    questions : iterable of dict
        Rows from :func:`load_questions`.
    out_path : path, optional
        The run file to write.
    ks : sequence of int
        Cut-offs for Hits@k.
    progress : bool
        Show a progress bar.
    judge : callable, optional
        ``judge(question, gold, predicted) -> JudgeVerdict`` (e.g.
        :class:`~chronorag.evaluation.judge.MajorityJudge`), applied to the first answer.
    config : dict, optional
        Recorded in the run file's last line (dataset, method, index, options ...).
    inputs : sequence of path
        Files and directories the run reads; ``out_path`` may not be one of them.

    Returns
    -------
    dict
        ``n``, ``errors``, ``hits@k``, ``em``, ``f1``, latency p50/p95, context tokens,
        LLM tokens and fallbacks when any, judge accuracy when judged, ``abstained`` (questions
        with no answer) and ``wrong_confident`` (answered, top answer wrong), and ``by_qtype``.
    """
    from chronorag.evaluation.runfile import (
        RUN_FORMAT,
        RunFileWriter,
        check_output_path,
        package_versions,
    )
    from chronorag.integrations.llm import fallbacks, query_scope

    qs = list(questions)
    if not qs:
        raise ConfigError("no questions to evaluate")
    if not ks or any(not isinstance(k, int) or k < 1 for k in ks):
        raise ConfigError(f"ks must be positive integers, got {ks!r}")
    writer = RunFileWriter(check_output_path(out_path, inputs=inputs)) if out_path is not None else None
    run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{id(qs) % 10**6}"
    started = time.time()
    records: list[dict[str, Any]] = []
    iterator: Iterable[tuple[int, dict[str, Any]]] = enumerate(qs)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(qs), desc="evaluating", unit="q")
    ledger = getattr(method, "ledger", None)
    try:
        for i, q in iterator:
            qid = _qid(q, i + 1)
            scope = f"{run_id}/{qid}"
            n_fb = len(fallbacks.records)
            n_led = len(ledger.records) if ledger is not None else 0
            pred: Prediction | None = None
            error = None
            t0 = time.perf_counter()
            try:
                if not q["question"].strip():
                    raise ConfigError("the question is empty")
                with query_scope(scope):
                    pred = _as_prediction(method(q))
            except Exception as exc:  # noqa: BLE001 - one bad question must not end the run
                error = f"{type(exc).__name__}: {exc}"[:2000]
            dt = (time.perf_counter() - t0) * 1000
            rec: dict[str, Any] = {
                "record": "question",
                "quid": q.get("quid", q.get("id")),
                "question": q["question"],
                "qtype": q.get("qtype", q.get("type")),
                "answers": q["answers"],
                "predicted": pred.answers[: max(max(ks), 10)] if pred else [],
                "latency_ms": round(dt, 3),
                "error": error,
            }
            _score(rec, q, pred, ks)
            # abstained: no answer (on purpose or not); wrong_confident: an answer whose top is wrong
            rec["abstained"] = pred is None or bool(pred.abstained) or not pred.answers
            rec["reason"] = (pred.reason if pred is not None else error) or ""
            rec["wrong_confident"] = not rec["abstained"] and not rec.get("hits@1", rec["em"])
            rec["evidence"] = pred.evidence[:10] if pred else []
            rec["context_tokens"] = count_tokens(pred.evidence) if pred else 0
            tokens = (pred.info.get("tokens") if pred else None)
            if tokens is None and ledger is not None and len(ledger.records) > n_led:
                tokens = ledger.summary_since(n_led)  # an error row: what the question spent before it failed
            rec["tokens"] = tokens
            if pred is not None and pred.trace:
                rec["tool_calls"] = pred.trace
            if isinstance(q.get("reference_tool_calls"), list):
                rec["reference_tool_calls"] = q["reference_tool_calls"]
            if judge is not None and pred is not None:
                try:
                    with query_scope(scope):
                        verdict = judge(q["question"], _gold_text(q["answers"]),
                                        pred.answers[0] if pred.answers else "")
                    rec["judge"] = verdict.to_dict() if hasattr(verdict, "to_dict") else {"correct": verdict}
                except Exception as exc:  # noqa: BLE001 - a judge failure is counted, not fatal
                    rec["judge"] = {"correct": None, "error": f"{type(exc).__name__}: {exc}"[:500]}
            fb: dict[str, int] = {}
            for _, kind, _d in fallbacks.records[n_fb:]:
                fb[kind] = fb.get(kind, 0) + 1
            rec["fallbacks"] = fb
            if fb:  # what each substitute replaced (the first 20, 300 characters each)
                rec["fallback_details"] = [[kind, str(d)[:300]] for _, kind, d in fallbacks.records[n_fb:][:20]]
            rec["info"] = pred.info if pred else {}
            records.append(rec)
            if writer is not None:
                writer.write(rec)
            if bar is not None:
                bar.update(1)
                if error:
                    bar.set_postfix(errors=sum(1 for r in records if r["error"]))
        metrics = _aggregate(records, ks)
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in records:
            if r["qtype"] is not None:
                groups[str(r["qtype"])].append(r)
        if groups:
            metrics["by_qtype"] = {g: _aggregate(rs, ks) for g, rs in sorted(groups.items())}
        if writer is not None:
            cfg = dict(config or {})
            cfg.setdefault("ks", list(ks))
            cfg.setdefault("context_tokenizer", _tokenizer_name())
            if judge is not None:
                cfg.setdefault("judge", getattr(judge, "name", type(judge).__name__))
            writer.write({"record": "run", "format": RUN_FORMAT, "run_id": run_id, "config": cfg,
                          "versions": package_versions(), "started": started, "finished": time.time(),
                          "metrics": metrics})
            metrics["run_file"] = str(writer.commit())
        return metrics
    except BaseException as exc:
        if writer is not None:
            writer.abort_noting(exc, command="chronorag eval")
        raise
    finally:
        if bar is not None:
            bar.close()


def _mean(records: list[dict[str, Any]], key: str) -> float:
    return round(sum(r[key] for r in records) / len(records), 4)


def _aggregate(records: list[dict[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    n = len(records)
    lat = sorted(r["latency_ms"] for r in records)
    out: dict[str, Any] = {"n": n, "errors": sum(1 for r in records if r.get("error"))}
    for k in ks:
        out[f"hits@{k}"] = _mean(records, f"hits@{k}")
    with_ev = [r for r in records if "evidence_recall@5" in r]
    if with_ev:  # over the questions that have gold evidence (n_evidence of them)
        out["evidence_recall@5"] = _mean(with_ev, "evidence_recall@5")
        out["n_evidence"] = len(with_ev)
    out["em"] = _mean(records, "em")
    out["f1"] = _mean(records, "f1")
    out["abstained"] = sum(1 for r in records if r.get("abstained"))
    out["wrong_confident"] = sum(1 for r in records if r.get("wrong_confident"))
    out["latency_ms_p50"] = round(statistics.median(lat), 3)
    out["latency_ms_p95"] = round(lat[min(n - 1, int(0.95 * n))], 3)
    out["context_tokens_mean"] = round(sum(r.get("context_tokens", 0) for r in records) / n, 1)
    toks = [r["tokens"] for r in records if isinstance(r.get("tokens"), dict)]
    if toks:
        out["llm_tokens"] = sum(int(t.get("total_tokens", 0)) for t in toks)
    fb = sum(sum(r.get("fallbacks", {}).values()) for r in records)
    if fb:
        out["fallbacks"] = fb
    judged = [r["judge"] for r in records if isinstance(r.get("judge"), dict)]
    if judged:
        ok = [j for j in judged if j.get("correct") is not None]
        out["judge_acc"] = round(sum(1 for j in ok if j["correct"]) / len(ok), 4) if ok else None
        out["judge_failures"] = len(judged) - len(ok)
    return out


def format_table(metrics: dict[str, Any]) -> str:
    """A plain-text table of overall and per-qtype metrics."""
    cols = [c for c in metrics if c.startswith("hits@")] + ["em", "f1", "abstained", "wrong_confident",
                                                             "latency_ms_p50"]
    if "evidence_recall@5" in metrics:
        cols.insert(0, "evidence_recall@5")
    if "judge_acc" in metrics:
        cols.insert(0, "judge_acc")
    rows = [("overall", metrics)] + list(metrics.get("by_qtype", {}).items())
    head = f"{'group':<16}{'n':>6}{'errors':>8}" + "".join(f"{c:>16}" for c in cols)
    lines = [head, "-" * len(head)]
    for name, m in rows:
        lines.append(f"{name:<16}{m['n']:>6}{m.get('errors', 0):>8}" + "".join(f"{str(m.get(c)):>16}" for c in cols))
    return "\n".join(lines)
