"""The ``chronorag`` command line.

::

    chronorag ingest KG.tsv.gz --out INDEX_DIR [--encoder minilm|static] [--index flat|hnsw]
    chronorag demo
    chronorag ask INDEX_DIR "question" [--method dense] [--llm-url URL]
    chronorag eval multitq INDEX_DIR QUESTIONS.jsonl --method dense [--limit N] [--out run.jsonl] [--judge]
    chronorag star-rag build INDEX_DIR
    chronorag tgrag index DOCS_DIR --out INDEX_DIR [--period P] [--add]
    chronorag sft cronquestions TRAJECTORIES.jsonl --out sft.jsonl
    chronorag ragas RUN.jsonl [--tool-calls [--reference REF.jsonl]] [--llm-url URL]
    chronorag report RUN1.jsonl [RUN2.jsonl ...] --out DIR
    chronorag topg index CORPUS --out INDEX_DIR [--llm-url URL] [--encoder minilm|static] [--add]
    chronorag eval 2wiki INDEX_DIR QUESTIONS.jsonl --method topg-local [--max-iter N] [--lam X]
    chronorag info INDEX_DIR
    chronorag kg-irag generate --source nyc-weather --n 600 --seed 0 --out QUESTIONS.jsonl
    chronorag kg-irag ask "question" --source nyc-weather [--method kg-irag] [--llm-url URL]
    chronorag eval kg-irag QUESTIONS.jsonl --source nyc-weather --method kg-irag|single-pass|limited|no-check
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from chronorag.errors import ChronoRAGError

__all__ = ["OFFLINE_ENV", "bundled_sample_path", "main"]

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "RAGAS_DO_NOT_TRACK": "true",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "1",
}


def set_offline_env() -> None:
    """Set the offline variables (and ``TIKTOKEN_CACHE_DIR``) unless the user set them."""
    for k, v in OFFLINE_ENV.items():
        os.environ.setdefault(k, v)
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        try:
            import llama_index.core

            cache = Path(llama_index.core.__file__).parent / "_static" / "tiktoken_cache"
            os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
        except ImportError:
            pass


def bundled_sample_path() -> Path:
    """The bundled sample: 9,165 real ICEWS14 events among 16 diplomatic actors."""
    return Path(str(resources.files("chronorag") / "data" / "icews14_diplomacy_sample.tsv.gz"))


DEMO_QUESTIONS = [
    "After France, who did Barack Obama criticize first?",
    "When did Xi Jinping first visit France?",
    "In which month did John Kerry first negotiate with Mohammad Javad Zarif?",
    "Who did Catherine Ashton consult on the same day as Iran?",
]


def _cmd_ingest(args: argparse.Namespace) -> int:
    from chronorag.graphs.persist import index_lock

    # the writer lock is held for the whole run: a second ingest into DIR fails at once
    with index_lock(args.out):
        return _ingest(args)


def _ingest(args: argparse.Namespace) -> int:
    from chronorag.graphs.io import read_events
    from chronorag.retrievers.event_index import build_event_index

    t0 = time.perf_counter()
    store = read_events(args.kg, fmt=args.format, on_error=args.on_error, progress=not args.quiet)
    t_load = time.perf_counter() - t0
    idx = build_event_index(store, args.out, encoder=args.encoder, cache=args.cache,
                            index_kind=args.index, progress=not args.quiet)
    rep = store.load_report
    summary = {
        "index_dir": str(args.out),
        "events": len(store),
        "entities": len(store.entities),
        "relations": len(store.relations),
        "distinct_triples": idx.meta["n_triples"],
        "embedded_now": idx.meta["n_embedded"],
        "skipped_lines": rep.n_skipped if rep else 0,
        "encoder": idx.meta["model_id"],
        "load_s": round(t_load, 2),
        **{k: round(v, 2) for k, v in idx.meta["timings"].items()},
        "total_s": round(time.perf_counter() - t0, 2),
    }
    if rep and rep.n_skipped:
        print(f"skipped {rep.n_skipped} malformed lines, e.g. {rep.examples[0]}", file=sys.stderr)
    print(json.dumps(summary, ensure_ascii=False))
    return 0


def _answer(index_dir: str, question: str, method: str, llm_url: str | None,
            **options: Any) -> dict[str, Any]:
    from chronorag.evaluation import make_method

    m = make_method(method, index_dir, llm_url=llm_url, **options)
    pred = m({"question": question, "answers": ["?"]})
    return {"question": question, "method": method, "answers": pred.answers[:10],
            "evidence": pred.evidence[:10], "info": pred.info}


def _short(text: str, n: int = 300) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 3] + "..."


def _cmd_ask(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise ValueError("the question is empty")
    res = _answer(args.index_dir, args.question, args.method, args.llm_url, **_deadline_opt(args))
    if args.json:
        print(json.dumps(res, ensure_ascii=False))
        return 0
    mode = "" if args.llm_url else " (no-LLM mode)"
    print(f"Q: {res['question']}\nmethod: {res['method']}{mode}")
    print("answers:", "; ".join(res["answers"][:5]) or "(none)")
    if res["info"].get("mode"):
        print("mode:", res["info"]["mode"])
    if res["info"].get("note") and not res["answers"]:
        print("why:", res["info"]["note"])
    print("evidence:")
    for e in res["evidence"]:
        print("  -", _short(e))
    return 0


def _deadline_opt(args: argparse.Namespace) -> dict[str, Any]:
    """``deadline_s`` for methods that take it (only when the user set --deadline)."""
    d = getattr(args, "deadline", None)
    if d is None:
        return {}
    if d <= 0:
        raise ValueError(f"--deadline must be > 0 seconds, got {d}")
    return {"deadline_s": d}


def _sha256(path: str | os.PathLike[str]) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _cmd_eval(args: argparse.Namespace) -> int:
    from chronorag.evaluation import format_table, load_questions, make_method, run_eval
    from chronorag.evaluation.runfile import check_output_path, default_run_path

    if args.dataset in ("2wiki", "graphrag-bench"):
        from chronorag.evaluation.passages import run_passage_eval

        opts = {k: v for k, v in (("max_iter", args.max_iter), ("lam", args.lam)) if v is not None}
        metrics = run_passage_eval(args.dataset, args.index_dir, args.questions, method=args.method,
                                   llm_url=args.llm_url, limit=args.limit, out_path=args.out,
                                   token_budget=args.token_budget, progress=not args.quiet, **opts)
        print(json.dumps(metrics, ensure_ascii=False))
        return 0
    if args.judge and not args.llm_url:
        raise ValueError("--judge needs an LLM: pass --llm-url URL (an OpenAI-compatible endpoint)")
    inputs = [args.questions, args.index_dir]
    if args.out:
        check_output_path(args.out, inputs=inputs)  # refuse before loading anything
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


def _cmd_sft(args: argparse.Namespace) -> int:
    from chronorag.workflows.temptool.prompts import TAGGED_SYSTEM
    from chronorag.workflows.temptool.sft import (
        cronquestions_records,
        reasoner_records,
        write_jsonl,
    )

    if args.source == "cronquestions":
        records = cronquestions_records(args.path, system_prompt=TAGGED_SYSTEM)
    else:
        from chronorag.evaluation import load_questions
        from chronorag.integrations.temporal_tools import TemporalKGTools
        from chronorag.retrievers.event_index import EventIndex
        from chronorag.workflows.temptool.reasoner import TemporalReasoner

        if not args.index:
            raise ValueError("--index INDEX_DIR is needed to run the reasoner")
        reasoner = TemporalReasoner(TemporalKGTools(EventIndex.load(args.index)))
        records = reasoner_records(reasoner, load_questions(args.path, limit=args.limit),
                                   system_prompt=TAGGED_SYSTEM)
    n = write_jsonl(records, args.out)
    print(json.dumps({"source": args.source, "records": n, "out": str(args.out)}))
    return 0


def _cmd_star_build(args: argparse.Namespace) -> int:
    from chronorag.errors import IndexFormatError
    from chronorag.graphs.persist import index_lock, is_index_dir
    from chronorag.graphs.rule_graph import RuleGraphConfig, build_rule_graph
    from chronorag.graphs.store import TemporalEventStore

    d = Path(args.index_dir)
    if not is_index_dir(d):
        raise IndexFormatError(f"{d} is not a chronorag index directory; build one with "
                               "`chronorag ingest KG.tsv.gz --out DIR`")
    with index_lock(d):  # the rule graph is added as a new version of the index (atomic)
        store = TemporalEventStore.load(d)
        cfg = RuleGraphConfig(min_support=args.min_support, k_type=args.k_type, window_days=args.window_days)
        t0 = time.perf_counter()
        rg = build_rule_graph(store, config=cfg, progress=not args.quiet)
        rg.save(d)
    print(json.dumps({**{k: v for k, v in rg.stats.items()}, "total_s": round(time.perf_counter() - t0, 2)}))
    return 0


def _cmd_tgrag_index(args: argparse.Namespace) -> int:
    from chronorag.retrievers.tgrag_index import read_period_documents

    docs = read_period_documents(args.docs, period=args.period)
    extractor = None
    if args.llm_url:
        from chronorag.integrations.llm import LLMConfig
        from chronorag.retrievers.tgrag_index import LLMExtractor

        extractor = LLMExtractor(LLMConfig(base_url=args.llm_url))
    t0 = time.perf_counter()
    from chronorag.graphs.persist import index_lock

    with index_lock(args.out):
        idx = _tgrag_write(args, docs, extractor)
    print(json.dumps({**{k: v for k, v in idx.meta.items() if k != "format"}, "total_s": round(time.perf_counter() - t0, 2)}))
    return 0


def _tgrag_write(args: argparse.Namespace, docs: Any, extractor: Any) -> Any:
    from chronorag.retrievers.tgrag_index import add_period, build_tgrag_index

    if args.add:
        idx = add_period(args.out, docs, extractor=extractor, cache=args.cache, progress=not args.quiet)
    else:
        idx = build_tgrag_index(docs, args.out, extractor=extractor, encoder=args.encoder, cache=args.cache,
                                chunk_tokens=args.chunk_tokens, progress=not args.quiet)
    return idx


def _cmd_topg_index(args: argparse.Namespace) -> int:
    from chronorag.workflows.topg.index import add_documents, build_topg_index, read_corpus

    passages = read_corpus(args.corpus)
    llm = None
    if args.llm_url:
        from chronorag.integrations.llm import LLMConfig

        llm = LLMConfig(base_url=args.llm_url)
    from chronorag.graphs.persist import index_lock

    with index_lock(args.out):  # one writer; a foreign --out is refused before any work
        if args.add:
            _, summary = add_documents(args.out, passages, llm=llm, cache=args.cache, progress=not args.quiet)
        else:
            _, summary = build_topg_index(passages, args.out, encoder=args.encoder, llm=llm, cache=args.cache,
                                          communities=not args.no_communities, progress=not args.quiet)
    print(json.dumps(summary, ensure_ascii=False))
    return 0


def _cmd_ragas(args: argparse.Namespace) -> int:
    from chronorag.errors import DataFormatError
    from chronorag.integrations.ragas_eval import load_predictions, ragas_scores, tool_call_scores

    if args.reference and not args.tool_calls:
        raise ValueError("--reference is for --tool-calls (the reference tool-call traces)")
    rows = load_predictions(args.predictions, include_errors=True)  # every line validated first
    scorable = [r for r in rows if not r.get("error")]
    if not scorable:
        raise DataFormatError(f"{args.predictions}: every question is an error row; nothing to score")
    if args.tool_calls:
        scores = tool_call_scores(scorable, reference=args.reference, progress=not args.quiet)
    else:
        scores = ragas_scores(scorable, llm=args.llm_url, embedding_url=args.embedding_url,
                              embedding_model=args.embedding_model, progress=not args.quiet)
    print(json.dumps({"predictions": str(args.predictions), "skipped_error_rows": len(rows) - len(scorable),
                      **scores}))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from chronorag.evaluation.report import build_report

    t0 = time.perf_counter()
    page = build_report(args.runs, args.out, title=args.title)
    print(json.dumps({"report": str(page), "figures": sorted(str(p) for p in page.parent.glob("*.png")),
                      "runs": len(args.runs), "total_s": round(time.perf_counter() - t0, 2)}))
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from chronorag.graphs.persist import read_json

    meta = read_json(Path(args.index_dir) / "index.json")
    print(json.dumps(meta, indent=1, ensure_ascii=False))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from chronorag.graphs.persist import index_lock

    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="chronorag-demo-"))
    with index_lock(out):
        return _demo(args, out)


def _demo(args: argparse.Namespace, out: Path) -> int:
    from chronorag.graphs.io import read_events
    from chronorag.retrievers.dense import DenseEventRetriever
    from chronorag.retrievers.event_index import build_event_index

    print("chronorag demo: offline, no LLM (symbolic temporal reasoning over the KG, dense retrieval for contrast)")
    print(f"1. ingest the bundled sample ({bundled_sample_path().name}) into {out}")
    store = read_events(bundled_sample_path(), progress=not args.quiet)
    idx = build_event_index(store, out, encoder=args.encoder, cache=args.cache,
                            progress=not args.quiet)
    print(f"   {store!r}; {idx.meta['n_triples']} distinct triples embedded with {idx.meta['model_id']}")
    print("2. symbolic lookup: when did John Kerry consult Sergey Lavrov in March 2014?")
    ids = store.query(subject="John Kerry", relation="Consult", object="Sergey Viktorovich Lavrov",
                      begin_time="2014-03", end_time="2014-03", type="in/on")
    print("   " + ", ".join(store.start_text(int(i)) for i in ids))
    print("3. TempTool tools + no-LLM temporal reasoner (question form -> tool calls -> ranked answers)")
    from chronorag.integrations.temporal_tools import TemporalKGTools
    from chronorag.workflows.temptool.reasoner import TemporalReasoner

    reasoner = TemporalReasoner(TemporalKGTools(idx))
    for q in DEMO_QUESTIONS:
        res = reasoner.answer(q)
        calls = " -> ".join(c["name"] for c in res.calls)
        print(f"   Q: {q}\n      A: {', '.join(res.answers[:3]) or '(none)'}   [{calls}]")
    q = DEMO_QUESTIONS[0]
    print(f"4. for contrast, time-blind dense retrieval for: {q}")
    for nws in DenseEventRetriever(idx, similarity_top_k=3).retrieve(q):
        print(f"      {nws.score:.3f}  {nws.node.get_content()}")
    print(f"index kept at {out}; try: chronorag ask {out} \"Who did Barack Obama praise first after Japan?\" --method tools")
    return 0


def _kg_irag_kg(args: argparse.Namespace) -> Any:
    from chronorag.integrations.records import load_source_kg

    t0 = time.perf_counter()
    kg, rows = load_source_kg(args.source, records=args.records)
    return kg, rows, time.perf_counter() - t0


def _cmd_kg_irag_generate(args: argparse.Namespace) -> int:
    from chronorag.workflows.kg_irag.questions import generate_questions, write_questions

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
        raise ValueError("the question is empty")
    kg, _, _ = _kg_irag_kg(args)
    llm = LLMConfig(base_url=args.llm_url) if args.llm_url else None
    g = build_graph(kg=kg, llm=llm, method=args.method, source=kg.spec.source, use_llm=bool(args.llm_url))
    out = g.invoke({"question": args.question})
    res = {k: out.get(k) for k in ("answer", "rationale", "plan", "iterations", "stopped_by", "evidence_ids",
                                   "llm_errors", "mode", "error")}
    if args.json:
        print(json.dumps(res, ensure_ascii=False))
        return 0 if not out.get("error") else 2
    if out.get("error"):
        raise ValueError(f"cannot plan the question: {out['error']}")
    print(f"Q: {args.question}\nmethod: {args.method} ({out.get('mode')})")
    print(f"answer: {out['answer']}\nrationale: {out['rationale']}")
    print(f"iterations: {out['iterations']} (stopped by {out['stopped_by']}), facts: {len(out['evidence_ids'])}")
    return 0


def _cmd_kg_irag_eval(args: argparse.Namespace) -> int:
    from chronorag.graphs.persist import iter_jsonl
    from chronorag.integrations.llm import LLMConfig
    from chronorag.workflows.kg_irag.evaluate import evaluate

    qs = [row for _, row in iter_jsonl(args.questions)]
    if args.limit:
        qs = qs[: args.limit]
    kg, _, dt = _kg_irag_kg(args)
    llm = LLMConfig(base_url=args.llm_url) if args.llm_url else None
    out = args.out or Path(tempfile.gettempdir()) / f"chronorag-kg-irag-{kg.spec.source}-{args.method}.jsonl"
    metrics = evaluate(qs, kg=kg, method=args.method, llm=llm, out_path=out, progress=not args.quiet,
                       t_max=args.t_max)
    metrics = {"dataset": "kg-irag", "predictions": str(out), "kg_build_s": round(dt, 3), **metrics}
    rows = [("overall", metrics)] + list(metrics["by_type"].items())
    cols = ["accuracy", "em", "f1", "hit_rate", "hallucination_rate", "iterations_mean", "evidence_facts_mean"]
    print(f"{'group':<10}{'n':>6}" + "".join(f"{c:>21}" for c in cols))
    for name, m in rows:
        print(f"{name:<10}{m['n']:>6}" + "".join(f"{m[c]:>21}" for c in cols))
    print(json.dumps(metrics, ensure_ascii=False))
    return 0


def _add_kg_irag(sub: Any) -> None:
    from chronorag.workflows.kg_irag.state import METHODS as KG_METHODS

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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``chronorag`` command."""
    p = argparse.ArgumentParser(prog="chronorag", description="Temporal GraphRAG components.")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    sub = p.add_subparsers(dest="command", required=True)

    def add_encoder_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--encoder", default="minilm", choices=["minilm", "static"],
                        help="embedding model: MiniLM (default) or static (distilled, fast)")
        sp.add_argument("--cache", default=None, help="embedding cache file (default: $CHRONORAG_HOME/embeddings.sqlite)")

    sp = sub.add_parser("ingest", help="build an index directory from a KG file")
    sp.add_argument("kg", help="events file: ICEWS-style .tsv[.gz], .csv or .jsonl")
    sp.add_argument("--out", required=True,
                    help="index directory: new, empty, or a chronorag index (replaced atomically; "
                         "any other non-empty directory is refused)")
    sp.add_argument("--format", choices=["tsv", "csv", "jsonl"], default=None)
    sp.add_argument("--on-error", choices=["raise", "skip"], default="raise",
                    help="malformed lines: fail (default) or skip and report")
    sp.add_argument("--index", choices=["flat", "hnsw"], default="flat")
    add_encoder_opts(sp)
    sp.set_defaults(func=_cmd_ingest)

    sp = sub.add_parser("demo", help="ingest the bundled sample and run a few queries offline")
    sp.add_argument("--out", default=None, help="where to keep the demo index")
    add_encoder_opts(sp)
    sp.set_defaults(func=_cmd_demo)

    from chronorag.evaluation import METHODS

    sp = sub.add_parser("ask", help="answer one question over an index")
    sp.add_argument("index_dir")
    sp.add_argument("question")
    sp.add_argument("--method", default="dense", choices=sorted(METHODS))
    sp.add_argument("--llm-url", default=None, help="OpenAI-compatible endpoint (default: no-LLM mode)")
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.add_argument("--deadline", type=float, default=None,
                    help="seconds per question for the tools agent (default 300)")
    sp.set_defaults(func=_cmd_ask)

    sp = sub.add_parser("eval", help="evaluate a method on a question file")
    sp.add_argument("dataset", choices=["multitq", "time-longqa", "jsonl", "2wiki", "graphrag-bench"])
    sp.add_argument("index_dir")
    sp.add_argument("questions")
    sp.add_argument("--method", default="dense", choices=sorted(METHODS))
    sp.add_argument("--limit", type=int, default=None)
    sp.add_argument("--out", default=None,
                    help="run file (JSONL) to write; replaced atomically when the run ends "
                         "(default: a new unique file in the temp directory)")
    sp.add_argument("--llm-url", default=None)
    sp.add_argument("--deadline", type=float, default=None,
                    help="seconds per question for the tools agent (default 300)")
    sp.add_argument("--max-iter", type=int, default=None, help="ToPG: Suggestion-Selection iterations")
    sp.add_argument("--lam", type=float, default=None, help="ToPG: structural weight lambda")
    sp.add_argument("--token-budget", type=int, default=None,
                    help="graphrag-bench: context tokens per question (default 1000)")
    sp.add_argument("--judge", action="store_true",
                    help="also score the first answer with an LLM judge (majority of 3 calls; needs --llm-url)")
    sp.add_argument("--judge-votes", type=int, default=3, help="judge calls per answer (odd)")
    sp.set_defaults(func=_cmd_eval)

    sp = sub.add_parser("star-rag", help="STAR-RAG jobs")
    ssub = sp.add_subparsers(dest="star_command", required=True)
    b = ssub.add_parser("build", help="build the rule graph of an index directory")
    b.add_argument("index_dir")
    b.add_argument("--min-support", type=float, default=0.02, help="Apriori minimum support")
    b.add_argument("--k-type", type=int, default=2, help="labels kept per entity")
    b.add_argument("--window-days", type=int, default=30, help="local time window for event pairs")
    b.set_defaults(func=_cmd_star_build)

    sp = sub.add_parser("tgrag", help="T-GRAG jobs")
    tsub = sp.add_subparsers(dest="tgrag_command", required=True)
    b = tsub.add_parser("index", help="index period documents (one file per period) into a T-GRAG index")
    b.add_argument("docs", help="a directory of .md/.txt files named by period (2019.md), or one file with --period")
    b.add_argument("--out", required=True, help="index directory")
    b.add_argument("--period", default=None, help="period of the given documents (default: file name)")
    b.add_argument("--add", action="store_true", help="add new periods to an existing index")
    b.add_argument("--chunk-tokens", type=int, default=1000)
    b.add_argument("--llm-url", default=None, help="extract with an LLM (default: spaCy, no LLM)")
    add_encoder_opts(b)
    b.set_defaults(func=_cmd_tgrag_index)

    sp = sub.add_parser("topg", help="ToPG jobs")
    tsub = sp.add_subparsers(dest="topg_command", required=True)
    b = tsub.add_parser("index", help="build a ToPG proposition graph from a corpus")
    b.add_argument("corpus", help="JSON list of {title, text} or {context} records, or a folder of .txt/.md files")
    b.add_argument("--out", required=True, help="index directory (replaced atomically)")
    b.add_argument("--llm-url", default=None, help="extract with an LLM (default: spaCy, no LLM)")
    b.add_argument("--add", action="store_true", help="add the passages to an existing index")
    b.add_argument("--no-communities", action="store_true", help="skip the Leiden communities (Global mode)")
    add_encoder_opts(b)
    b.set_defaults(func=_cmd_topg_index)

    sp = sub.add_parser("sft", help="write TempTool SFT records (tagged protocol, correct answers only)")
    sp.add_argument("source", choices=["cronquestions", "reasoner"],
                    help="cronquestions: convert tool trajectories; reasoner: run the no-LLM reasoner on questions")
    sp.add_argument("path", help="trajectory file, or a question JSONL with gold answers")
    sp.add_argument("--out", required=True)
    sp.add_argument("--index", default=None, help="index directory (reasoner source)")
    sp.add_argument("--limit", type=int, default=None)
    sp.set_defaults(func=_cmd_sft)

    sp = sub.add_parser("ragas", help="RAGAS scores of a run file from `eval` (LLM-free and temporal "
                                      "metrics; LLM metrics with --llm-url; tool-call accuracy with --tool-calls)")
    sp.add_argument("predictions", help="the run file (JSONL) `chronorag eval --out` wrote")
    sp.add_argument("--tool-calls", action="store_true",
                    help="score tool-call traces with RAGAS ToolCallAccuracy in strict order")
    sp.add_argument("--reference", default=None,
                    help="with --tool-calls: question file with reference_tool_calls, or a run file whose traces "
                         "are the reference (default: reference_tool_calls in the predictions)")
    sp.add_argument("--llm-url", default=None,
                    help="OpenAI-compatible endpoint for faithfulness, answer correctness and context precision")
    sp.add_argument("--embedding-url", default=None, help="embeddings endpoint (default: --llm-url)")
    sp.add_argument("--embedding-model", default=None, help="embeddings model name (default: the LLM model name)")
    sp.set_defaults(func=_cmd_ragas)

    sp = sub.add_parser("report", help="side-by-side HTML report (with PNG figures) of run files from `eval`")
    sp.add_argument("runs", nargs="+", help="run files (JSONL) written by `chronorag eval --out`")
    sp.add_argument("--out", required=True, help="directory for index.html and the PNGs (created if missing)")
    sp.add_argument("--title", default=None)
    sp.set_defaults(func=_cmd_report)

    sp = sub.add_parser("info", help="print an index directory's metadata")
    sp.add_argument("index_dir")
    sp.set_defaults(func=_cmd_info)

    _add_kg_irag(sub)
    return p


def _os_error_message(exc: OSError) -> str:
    """A one-line message naming the file and what to do, for an operating-system error."""
    name = exc.filename if exc.filename is not None else ""
    if isinstance(exc, PermissionError):
        return (f"permission denied: {name}; check its permissions (ls -l) or choose a path "
                "you can read and write")
    if isinstance(exc, IsADirectoryError):
        return f"{name} is a directory; pass a file"
    if isinstance(exc, NotADirectoryError):
        return f"{name}: a part of this path is not a directory"
    if isinstance(exc, FileNotFoundError):
        return str(exc) if not exc.filename else f"no such file or directory: {name}"
    if exc.errno == 28:  # ENOSPC
        return f"no space left on the device writing {name}; free some space and run again"
    return f"{name}: {exc.strerror or exc}" if name else str(exc)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``chronorag`` console script.

    Expected failures (bad input files, damaged or foreign index files, a locked or
    refused output directory, operating-system errors such as a permission denied)
    print one line ``chronorag CMD: error: ...`` naming the file and the fix, and
    return 2. Ctrl-C returns 130. Anything else is a bug and keeps its traceback.
    """
    import sqlite3

    set_offline_env()
    argv = list(sys.argv[1:] if argv is None else argv)
    pos = [i for i, a in enumerate(argv) if not a.startswith("-")]
    if len(pos) >= 2 and argv[pos[0]] == "eval" and argv[pos[1]] == "kg-irag":
        argv[pos[0]], argv[pos[1]] = "kg-irag", "eval"  # `eval kg-irag ...` is `kg-irag eval ...`
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return int(args.func(args))
    except (ChronoRAGError, ValueError, FileNotFoundError, NotADirectoryError) as exc:
        print(f"chronorag {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"chronorag {args.command}: error: {_os_error_message(exc)}", file=sys.stderr)
        return 2
    except sqlite3.Error as exc:
        print(f"chronorag {args.command}: error: embedding cache: {exc}; pass another --cache "
              "file or set CHRONORAG_HOME", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"chronorag {args.command}: interrupted; any index being written was left as it "
              "was before this run", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
