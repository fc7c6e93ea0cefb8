"""Retrieval metrics for passage corpora: 2WikiMultihopQA and GraphRAG-Bench (Medical).

2Wiki (``chronorag eval 2wiki``)
    The gold passages of a question are the corpus passages whose title equals the
    subject of one of its evidence triples. ``passage_recall@k`` is the share of gold
    passages among a method's first ``k`` passages; ``answer_in_context`` is 1 when the
    gold answer string (case- and space-insensitive) occurs in the method's final
    context, the no-LLM stand-in for exact match.

GraphRAG-Bench (``chronorag eval graphrag-bench``)
    Evidence recall at equal context tokens: a method's ranked units (propositions for
    ToPG, chunks for dense retrieval) are taken in order while they fit in
    ``token_budget`` words. A gold evidence sentence counts as covered only when **one**
    retrieved unit holds at least ``coverage_threshold`` (0.8) of the sentence's content
    words (lower-cased, stop words removed, plural ``s`` stripped); words scattered over
    several units do not count (:func:`evidence_covered`).
"""

from __future__ import annotations

import os
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chronorag.errors import ConfigError, DataFormatError
from chronorag.graphs.persist import iter_jsonl

__all__ = ["content_words", "evidence_covered", "gold_passages_2wiki", "load_passage_questions",
           "run_passage_eval"]

STOP = frozenset(
    "a an the of in on at to for from by with and or but is are was were be been being as that this these "
    "those it its into than then there their they them he she his her who whom which what when where how "
    "why can could may might will would should do does did has have had not no nor so such also any all "
    "some more most other about over under between after before during".split())


def content_words(text: str) -> set[str]:
    """Lower-cased content words of ``text`` (stop words dropped, a final plural ``s`` stripped)."""
    out = set()
    for w in re.findall(r"[0-9a-z]+", text.casefold()):
        if w in STOP:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w)
    return out


def evidence_covered(evidence: str, units: Sequence[str], *, threshold: float = 0.8) -> bool:
    """True when a single unit holds at least ``threshold`` of the evidence's content words."""
    need = content_words(evidence)
    if not need:
        return False
    for u in units:
        have = content_words(u)
        if len(need & have) / len(need) >= threshold:
            return True
    return False


def _norm(s: str) -> str:
    return " ".join(s.casefold().split())


def gold_passages_2wiki(question: dict[str, Any], title_to_ids: dict[str, list[int]]) -> set[int]:
    """Passage ids whose title is the subject of one of the question's evidence triples."""
    ev = question.get("evidence")
    if not isinstance(ev, list):
        raise DataFormatError(f"2wiki question {question.get('id')!r} has no evidence triples")
    out: set[int] = set()
    for t in ev:
        if isinstance(t, (list, tuple)) and t:
            out.update(title_to_ids.get(str(t[0]), []))
    return out


def _take_budget(units: Sequence[str], budget: int) -> list[str]:
    out: list[str] = []
    used = 0
    for u in units:
        n = len(u.split())
        if out and used + n > budget:
            break
        out.append(u)
        used += n
    return out


def _pct(xs: list[float]) -> float:
    return round(100.0 * sum(xs) / len(xs), 2) if xs else 0.0


def load_passage_questions(path: str | os.PathLike[str], *, limit: int | None = None) -> list[dict[str, Any]]:
    """Read 2Wiki / GraphRAG-Bench questions; each row needs a non-empty ``question`` string.

    Raises
    ------
    DataFormatError
        Naming ``file:line`` for a row that is not an object or has no question.
    """
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {limit}")
    rows: list[dict[str, Any]] = []
    for lineno, r in iter_jsonl(questions_path := Path(path)):
        if not isinstance(r, dict) or not isinstance(r.get("question"), str) or not r["question"].strip():
            raise DataFormatError(f"{questions_path}:{lineno}: row has no 'question' string")
        r["_line"] = lineno
        rows.append(r)
        if limit is not None and len(rows) >= limit:
            break
    if not rows:
        raise DataFormatError(f"{path} holds no questions")
    return rows


def run_passage_eval(dataset: str, index_dir: str | os.PathLike[str], questions: str | os.PathLike[str], *,
                     method: str = "topg-local", llm_url: str | None = None, limit: int | None = None,
                     out_path: str | os.PathLike[str] | None = None, token_budget: int | None = None,
                     progress: bool = True, **options: Any) -> dict[str, Any]:
    """Evaluate a registered passage method on 2Wiki or GraphRAG-Bench questions.

    The run file (``out_path``) goes through :class:`chronorag.graphs.output.OutputFile`:
    checked against the inputs and the index before any work, written to a partial
    file flushed per question, moved into place when the run ends. A question whose
    method raises becomes an error row (``"error"``), scored 0 and counted in ``errors``.

    Returns
    -------
    dict
        Metrics overall and ``by_type``, ``errors``, latency percentiles (ms), and the
        context size.
    """
    from chronorag.evaluation import make_method
    from chronorag.graphs.output import OutputFile, check_output_path
    from chronorag.workflows.topg.index import load_topg_index

    if dataset not in ("2wiki", "graphrag-bench"):
        raise ConfigError(f"unknown passage dataset {dataset!r}; expected '2wiki' or 'graphrag-bench'")
    if out_path is not None:
        check_output_path(out_path, inputs=[questions, index_dir])
    rows = load_passage_questions(questions, limit=limit)
    idx = load_topg_index(index_dir)
    g = idx.graph
    title_to_ids: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(g.passages):
        title_to_ids[p["title"]].append(i)
    fn = make_method(method, index_dir, llm_url=llm_url, **options)
    budget = int(token_budget or 1000)
    keys = (["passage_recall@2", "passage_recall@5", "answer_in_context"] if dataset == "2wiki"
            else ["evidence_recall"])
    recs: list[dict[str, Any]] = []
    it: Any = rows
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(rows, desc=f"{dataset} {method}", unit="q")
    out = OutputFile(out_path) if out_path is not None else None
    try:
        for q in it:
            qtype = str(q.get("question_type") or q.get("type") or "all")
            rec: dict[str, Any] = {"id": q.get("id"), "type": qtype, "question": q["question"], "error": None}
            t0 = time.perf_counter()
            extra: dict[str, Any] = {}
            try:
                pred = fn({"question": q["question"], "answers": [str(q.get("answer", ""))]})
                rec["ms"] = (time.perf_counter() - t0) * 1000
                rec["context_words"] = sum(len(x.split()) for x in pred.evidence)
                pids = [int(x) for x in pred.info.get("passage_ids", [])]
                if dataset == "2wiki":
                    gold = gold_passages_2wiki(q, title_to_ids)
                    for k in (2, 5):
                        rec[f"passage_recall@{k}"] = len(gold & set(pids[:k])) / len(gold) if gold else 0.0
                    ctx = _norm(" ".join(pred.evidence))
                    rec["answer_in_context"] = float(bool(q.get("answer")) and _norm(str(q["answer"])) in ctx)
                    rec["n_gold"] = len(gold)
                else:
                    units = _take_budget(pred.evidence, budget)
                    ev = q.get("evidence") if isinstance(q.get("evidence"), list) else []
                    ev = [e for e in ev if isinstance(e, str) and e.strip()]
                    cov = [evidence_covered(e, units) for e in ev]
                    rec["evidence_recall"] = sum(cov) / len(cov) if cov else 0.0
                    rec["context_words"] = sum(len(u.split()) for u in units)
                extra = {"passage_ids": pids[:10], "answers": pred.answers[:1], "mode": pred.info.get("mode", "")}
            except Exception as exc:  # noqa: BLE001 - one bad question must not end the run
                rec["ms"] = (time.perf_counter() - t0) * 1000
                rec["error"] = f"{type(exc).__name__}: {exc}"[:2000]
                rec["context_words"] = 0
                for key in keys:
                    rec[key] = 0.0
            recs.append(rec)
            if out is not None:
                out.write_row({**rec, **extra, "line": q["_line"]})
        if out is not None:
            out.commit()
    except BaseException as exc:
        if out is not None:
            out.abort_noting(exc, command="chronorag eval")
        raise

    def agg(rs: list[dict[str, Any]]) -> dict[str, Any]:
        res: dict[str, Any] = {k: _pct([r[k] for r in rs]) for k in keys}
        res["n"] = len(rs)
        res["errors"] = sum(1 for r in rs if r["error"])
        return res

    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in recs:
        by_type[r["type"]].append(r)
    ms = sorted(r["ms"] for r in recs)
    metrics: dict[str, Any] = {
        "dataset": dataset, "method": method, "options": options, "index": str(Path(index_dir)),
        **agg(recs), "by_type": {t: agg(rs) for t, rs in sorted(by_type.items())},
        "latency_ms_p50": round(statistics.median(ms), 2),
        "latency_ms_p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 2),
        "context_words_mean": round(statistics.mean(r["context_words"] for r in recs), 1),
    }
    if out_path is not None:
        metrics["run_file"] = str(out_path)
    if dataset == "graphrag-bench":
        metrics["token_budget"] = budget
    return metrics


def topg_method(index_dir: str | os.PathLike[str], *, method: str = "topg-local", llm_url: str | None = None,
                max_iter: int | None = None, lam: float | None = None, k: int | None = None,
                dense_k: int = 10, report_tokens: int | None = None, link_per_entity: int | None = None,
                **_: Any) -> Any:
    """A :data:`chronorag.evaluation.Method` for ToPG (naive/local/global) or dense passages.

    ``dense-passages`` ranks passages by cosine with the index's encoder (the vanilla
    baseline); its context is the top ``dense_k`` passages. ``link_per_entity=0`` turns
    off the no-LLM entity-linked seeding (the ``topg-local-noseed`` ablation). Without an
    LLM the ``mode`` string says what stands in for the LLM: Select is a capitalised-name
    match plus "keep the top ``select_keep`` walk suggestions", seeding is entity-linked.
    """
    from dataclasses import replace

    from chronorag.evaluation import Prediction
    from chronorag.workflows.topg.graph import build_graph
    from chronorag.workflows.topg.index import load_topg_index
    from chronorag.workflows.topg.search import ToPGSettings

    idx = load_topg_index(index_dir)
    if method == "dense-passages":
        def dense(q: dict[str, Any]) -> Prediction:
            ids, sc = idx.graph.search_passages(idx.embed([q["question"]])[0], dense_k)
            texts = [(f"{idx.graph.passages[i]['title']}: " if idx.graph.passages[i]["title"] else "")
                     + idx.graph.passages[i]["text"] for i in ids.tolist()]
            return Prediction(answers=[], evidence=texts, reason="dense passage retrieval writes no answer",
                              info={"passage_ids": ids.tolist(), "scores": sc.tolist(),
                                    "mode": "dense passage retrieval (no LLM)"})
        return dense
    mode = method.removeprefix("topg-")
    st = ToPGSettings()
    given: dict[str, Any] = {k_: v for k_, v in (("max_iter", max_iter), ("lam", lam), ("k", k),
                                                  ("report_tokens", report_tokens),
                                                  ("link_per_entity", link_per_entity)) if v is not None}
    st = replace(st, **given)
    no_llm_mode = (f"no-LLM ToPG {mode}: Select = capitalised-name match + keep the top {st.select_keep} walk "
                   f"suggestions; seeding = " + ("entity-linked propositions + SuggestNaive"
                                                 if st.link_per_entity > 0 else "SuggestNaive only (no entity linking)"))
    llm = None
    if llm_url:
        from chronorag.integrations.llm import LLMConfig

        llm = LLMConfig(base_url=llm_url)
    gr = build_graph(mode=mode, index_dir=str(index_dir), llm=llm, settings=st)

    def run(q: dict[str, Any]) -> Prediction:
        out = gr.invoke({"question": q["question"]})
        # the graph says why it gave no answer; without an LLM ToPG retrieves only, by design, and
        # that is scored as retrieval, not as an abstention (the reason still says so)
        reason = str(out.get("reason") or "")
        return Prediction(answers=[out["answer"]] if out.get("answer") else [], evidence=list(out["context"]),
                          abstained=bool(reason) and bool(llm_url), reason=reason,
                          info={"passage_ids": out["passage_ids"], "proposition_ids": out["proposition_ids"],
                                "mode": out["mode"] if llm_url else no_llm_mode,
                                **{k_: v for k_, v in out["info"].items()
                                                         if k_ in ("tokens", "fallbacks", "iterations")}})

    if llm is not None:
        run.ledger = llm.ledger  # type: ignore[attr-defined]  # the runner's tokens for an error row
    return run
