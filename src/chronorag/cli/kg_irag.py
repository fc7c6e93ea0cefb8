"""``chronorag kg-irag generate|ask|eval``: KG-iRAG over weather and flight records."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from chronorag.errors import ConfigError


def _kg_irag_kg(args: argparse.Namespace) -> Any:
    from chronorag.workflows.kg_irag.sources import load_source_kg

    t0 = time.perf_counter()
    kg, rows = load_source_kg(args.source, records=args.records)
    return kg, rows, time.perf_counter() - t0


def _cmd_kg_irag_generate(args: argparse.Namespace) -> int:
    from chronorag.graphs.output import check_output_path
    from chronorag.workflows.kg_irag.questions import generate_questions, write_questions

    check_output_path(args.out, inputs=[args.records, args.source if str(args.source).endswith(".json") else None])
    kg, rows, dt = _kg_irag_kg(args)
    qs = generate_questions(rows, kg.spec, n=args.n, seed=args.seed)
    write_questions(qs, args.out)
    counts: dict[str, int] = {}
    for q in qs:
        counts[q["type"]] = counts.get(q["type"], 0) + 1
    print(json.dumps({"source": kg.spec.source, "out": str(args.out), "questions": len(qs), "by_type": counts,
                      "kg": {"records": len(kg), "triples": kg.n_triples, "build_s": round(dt, 3),
                             "load_report": kg.report.as_dict()}}))
    return 0


def _cmd_kg_irag_ask(args: argparse.Namespace) -> int:
    from chronorag.integrations.llm import LLMConfig
    from chronorag.workflows.kg_irag.graph import build_graph

    if not args.question.strip():
        raise ConfigError("the question is empty")
    kg, _, _ = _kg_irag_kg(args)
    llm = LLMConfig(base_url=args.llm_url) if args.llm_url else None
    g = build_graph(kg=kg, llm=llm, method=args.method, source=kg.spec.source, use_llm=bool(args.llm_url))
    out = g.invoke({"question": args.question})
    res = {k: out.get(k) for k in ("answer", "abstained", "reason", "verified", "rationale", "plan", "iterations",
                                   "stopped_by", "evidence_ids", "llm_errors", "mode", "error")}
    if args.json:
        print(json.dumps(res, ensure_ascii=False))
        return 0 if not out.get("error") else 2
    if out.get("error"):
        raise ConfigError(f"cannot plan the question: {out['error']}")
    print(f"Q: {args.question}\nmethod: {args.method} ({out.get('mode')})")
    print(f"answer: {out['answer']}" + (" (abstained)" if out.get("abstained") else
                                        "" if out.get("verified") else " (unverified)"))
    if out.get("reason"):
        print(f"why: {out['reason']}")
    print(f"rationale: {out['rationale']}")
    print(f"iterations: {out['iterations']} (stopped by {out['stopped_by']}), facts: {len(out['evidence_ids'])}")
    return 0


def _cmd_kg_irag_eval(args: argparse.Namespace) -> int:
    from chronorag.errors import DataFormatError
    from chronorag.evaluation.methods.kg_irag_eval import evaluate
    from chronorag.graphs.output import check_output_path, default_output_path
    from chronorag.graphs.persist import iter_jsonl
    from chronorag.integrations.llm import LLMConfig

    inputs = [args.questions, args.records, args.source if str(args.source).endswith(".json") else None]
    if args.out:
        check_output_path(args.out, inputs=inputs)  # refuse before any work
    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {args.limit}")
    qs = []
    need = ("id", "type", "question", "answer", "place", "event", "anchor", "duration")
    for lineno, row in iter_jsonl(args.questions):
        if not isinstance(row, dict):
            raise DataFormatError(f"{args.questions}:{lineno}: expected a JSON object")
        missing = [k for k in need if k not in row]
        if missing:
            raise DataFormatError(f"{args.questions}:{lineno}: question lacks {missing}; generate questions "
                                  "with `chronorag kg-irag generate`")
        qs.append(row)
        if args.limit and len(qs) >= args.limit:
            break
    kg, _, dt = _kg_irag_kg(args)
    llm = LLMConfig(base_url=args.llm_url) if args.llm_url else None
    # no --out: a new unique file (mkstemp), never a fixed name a link could be planted at
    out = Path(args.out) if args.out else default_output_path(f"kg-irag-{kg.spec.source}-{args.method}")
    try:
        metrics = evaluate(qs, kg=kg, method=args.method, llm=llm, out_path=out, progress=not args.quiet,
                           t_max=args.t_max)
    except BaseException:
        if not args.out and out.exists() and out.stat().st_size == 0:
            out.unlink()  # the empty placeholder of the default path
        raise
    metrics = {"dataset": "kg-irag", "predictions": str(out), "kg_build_s": round(dt, 3), **metrics}
    rows = [("overall", metrics)] + list(metrics["by_type"].items())
    cols = ["accuracy", "em", "f1", "hit_rate", "hallucination_rate", "iterations_mean", "evidence_facts_mean"]
    print(f"{'group':<10}{'n':>6}" + "".join(f"{c:>21}" for c in cols))
    for name, m in rows:
        print(f"{name:<10}{m['n']:>6}" + "".join(f"{m[c]:>21}" for c in cols))
    if metrics.get("errors"):
        print(f"chronorag kg-irag eval: {metrics['errors']} of {metrics['n']} questions failed (scored as "
              f"misses); their rows in {out} have an 'error' field", file=sys.stderr)
    print(json.dumps(metrics, ensure_ascii=False))
    return 0


def _add_kg_irag(sub: Any) -> None:
    from chronorag.workflows.kg_irag.names import METHODS as KG_METHODS

    def src(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--source", default="nyc-weather",
                        help="nyc-weather, nyc-flights, seattle-weather, or a record spec .json (with --records)")
        sp.add_argument("--records", default=None, help="records CSV for a spec .json")

    sp = sub.add_parser("kg-irag", help="KG-iRAG over weather/flight records: generate questions, ask, eval")
    ksub = sp.add_subparsers(dest="kg_command", required=True)
    b = ksub.add_parser("generate", help="generate Q1/Q2/Q3 questions with gold answers and minimal evidence")
    src(b)
    b.add_argument("--n", type=int, default=600)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--out", required=True)
    b.set_defaults(func=_cmd_kg_irag_generate)
    b = ksub.add_parser("ask", help="answer one question")
    b.add_argument("question")
    src(b)
    b.add_argument("--method", default="kg-irag", choices=KG_METHODS)
    b.add_argument("--llm-url", default=None, help="OpenAI-compatible endpoint (default: no-LLM mode)")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=_cmd_kg_irag_ask)
    b = ksub.add_parser("eval", help="evaluate on a question file (also: chronorag eval kg-irag ...)")
    b.add_argument("questions")
    src(b)
    b.add_argument("--method", default="kg-irag", choices=KG_METHODS)
    b.add_argument("--llm-url", default=None)
    b.add_argument("--t-max", type=int, default=6)
    b.add_argument("--limit", type=int, default=None)
    b.add_argument("--out", default=None, help="per-question JSONL")
    b.set_defaults(func=_cmd_kg_irag_eval)
