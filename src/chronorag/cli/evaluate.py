"""``chronorag eval``, ``chronorag ragas`` and ``chronorag report``: run files and what reads them."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from chronorag.cli._common import (
    _deadline_opt,
    _sha256,
)
from chronorag.errors import ConfigError


def _cmd_eval(args: argparse.Namespace) -> int:
    from chronorag.evaluation import format_table, load_questions, make_method, run_eval
    from chronorag.evaluation.runfile import check_output_path, default_run_path

    inputs = [args.questions, args.index_dir]
    if args.out:
        check_output_path(args.out, inputs=inputs)  # refuse before loading anything
    if args.dataset in ("2wiki", "graphrag-bench"):
        from chronorag.evaluation.methods.passages import run_passage_eval

        opts = {k: v for k, v in (("max_iter", args.max_iter), ("lam", args.lam)) if v is not None}
        out = Path(args.out) if args.out else default_run_path(args.dataset, args.method)
        try:
            metrics = run_passage_eval(args.dataset, args.index_dir, args.questions, method=args.method,
                                       llm_url=args.llm_url, limit=args.limit, out_path=out,
                                       token_budget=args.token_budget, progress=not args.quiet, **opts)
        except BaseException:
            if not args.out and out.exists() and out.stat().st_size == 0:
                out.unlink()  # the empty placeholder of the default path
            raise
        if metrics["errors"]:
            print(f"chronorag eval: {metrics['errors']} of {metrics['n']} questions failed (scored as misses); "
                  f"their rows in {out} have an 'error' field", file=sys.stderr)
        print(json.dumps(metrics, ensure_ascii=False))
        return 0
    if args.judge and not args.llm_url:
        raise ConfigError("--judge needs an LLM: pass --llm-url URL (an OpenAI-compatible endpoint)")
    questions = load_questions(args.questions, limit=args.limit)
    method = make_method(args.method, args.index_dir, llm_url=args.llm_url, **_deadline_opt(args))
    judge = None
    if args.judge:
        from chronorag.evaluation.judge import MajorityJudge
        from chronorag.integrations.llm import LLMConfig

        judge = MajorityJudge(LLMConfig(base_url=args.llm_url), votes=args.judge_votes)
    out = Path(args.out) if args.out else default_run_path(args.dataset, args.method)
    stale = sorted(out.parent.glob(f".{out.name}.*.partial"))
    if stale:  # left by interrupted (or still running) runs; never deleted for the user
        print(f"chronorag eval: note: {len(stale)} partial file(s) from interrupted or concurrent runs next to "
              f"{out}: {', '.join(p.name for p in stale[:3])}", file=sys.stderr)
    config = {"dataset": args.dataset, "method": args.method, "index_dir": str(Path(args.index_dir).resolve()),
              "questions": str(Path(args.questions).resolve()), "questions_sha256": _sha256(args.questions),
              "limit": args.limit, "llm_url": args.llm_url, "command": "chronorag " + " ".join(getattr(args, "argv", None) or [])}
    try:
        metrics = run_eval(method, questions, out_path=out, progress=not args.quiet, judge=judge,
                           config=config, inputs=inputs)
    except BaseException as exc:
        if not args.out and out.exists() and out.stat().st_size == 0:
            out.unlink()  # the empty placeholder of the default path
        if not isinstance(exc, KeyboardInterrupt):
            raise
        for note in getattr(exc, "__notes__", []):
            print(note, file=sys.stderr)
        print(f"chronorag eval: interrupted; {out} was not changed", file=sys.stderr)
        return 130
    metrics = {"dataset": args.dataset, "method": args.method, "predictions": str(out), **metrics}
    print(format_table(metrics))
    if metrics["errors"]:
        print(f"chronorag eval: {metrics['errors']} of {metrics['n']} questions failed (scored as misses); "
              f"their rows in {out} have an 'error' field", file=sys.stderr)
    print(json.dumps(metrics, ensure_ascii=False))
    return 0


def _cmd_ragas(args: argparse.Namespace) -> int:
    from chronorag.errors import DataFormatError
    from chronorag.evaluation.ragas import load_predictions, ragas_scores, tool_call_scores

    if args.reference and not args.tool_calls:
        raise ConfigError("--reference is for --tool-calls (the reference tool-call traces)")
    rows = load_predictions(args.predictions, include_errors=True)  # every line validated first
    scorable = [r for r in rows if not r.get("error")]
    if not scorable:
        raise DataFormatError(f"{args.predictions}: every question is an error row; nothing to score")
    if args.tool_calls:
        scores = tool_call_scores(scorable, reference=args.reference, progress=not args.quiet)
    else:
        scores = ragas_scores(scorable, llm=args.llm_url, embedding_url=args.embedding_url,
                              embedding_model=args.embedding_model, progress=not args.quiet)
    for reason in dict.fromkeys(scores.get("skipped", {}).values()):
        names = [m for m, r in scores["skipped"].items() if r == reason]
        print(f"chronorag ragas: skipped {', '.join(names)}: {reason}", file=sys.stderr)
    print(json.dumps({"predictions": str(args.predictions), "skipped_error_rows": len(rows) - len(scorable),
                      **scores}))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from chronorag.evaluation.report import build_report

    t0 = time.perf_counter()
    page = build_report(args.runs, args.out, title=args.title)  # --out checked before any work
    print(json.dumps({"report": str(page), "figures": sorted(str(p) for p in page.parent.glob("*.png")),
                      "runs": len(args.runs), "total_s": round(time.perf_counter() - t0, 2)}))
    return 0
