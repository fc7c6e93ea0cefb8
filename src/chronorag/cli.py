"""The ``chronorag`` command line.

::

    chronorag ingest KG.tsv.gz --out INDEX_DIR [--encoder minilm|static] [--index flat|hnsw]
    chronorag demo
    chronorag ask INDEX_DIR "question" [--method dense] [--llm-url URL]
    chronorag eval multitq INDEX_DIR QUESTIONS.jsonl --method dense [--limit N] [--out preds.jsonl]
    chronorag star-rag build INDEX_DIR
    chronorag tgrag index DOCS_DIR --out INDEX_DIR [--period P] [--add]
    chronorag sft cronquestions TRAJECTORIES.jsonl --out sft.jsonl
    chronorag ragas PREDICTIONS.jsonl
    chronorag info INDEX_DIR
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


def _cmd_eval(args: argparse.Namespace) -> int:
    from chronorag.evaluation import format_table, load_questions, make_method, run_eval

    questions = load_questions(args.questions, limit=args.limit)
    method = make_method(args.method, args.index_dir, llm_url=args.llm_url, **_deadline_opt(args))
    out = args.out or Path(tempfile.gettempdir()) / f"chronorag-{args.dataset}-{args.method}.jsonl"
    metrics = run_eval(method, questions, out_path=out, progress=not args.quiet)
    metrics = {"dataset": args.dataset, "method": args.method, "predictions": str(out), **metrics}
    print(format_table(metrics))
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
    import shutil

    from chronorag.graphs.rule_graph import RuleGraphConfig, build_rule_graph
    from chronorag.graphs.store import TemporalEventStore

    d = Path(args.index_dir)
    store = TemporalEventStore.load(d)
    cfg = RuleGraphConfig(min_support=args.min_support, k_type=args.k_type, window_days=args.window_days)
    t0 = time.perf_counter()
    rg = build_rule_graph(store, config=cfg, progress=not args.quiet)
    tmp = Path(tempfile.mkdtemp(prefix=".rule-graph-", dir=d))
    try:  # write aside, then move into place: a failed build leaves the old graph
        rg.save(tmp)
        for f in ("rule_graph.npz", "rule_graph.json"):
            os.replace(tmp / f, d / f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({**{k: v for k, v in rg.stats.items()}, "total_s": round(time.perf_counter() - t0, 2)}))
    return 0


def _cmd_tgrag_index(args: argparse.Namespace) -> int:
    from chronorag.retrievers.tgrag_index import (
        add_period,
        build_tgrag_index,
        read_period_documents,
    )

    docs = read_period_documents(args.docs, period=args.period)
    extractor = None
    if args.llm_url:
        from chronorag.integrations.llm import LLMConfig
        from chronorag.retrievers.tgrag_index import LLMExtractor

        extractor = LLMExtractor(LLMConfig(base_url=args.llm_url))
    t0 = time.perf_counter()
    if args.add:
        idx = add_period(args.out, docs, extractor=extractor, cache=args.cache, progress=not args.quiet)
    else:
        idx = build_tgrag_index(docs, args.out, extractor=extractor, encoder=args.encoder, cache=args.cache,
                                chunk_tokens=args.chunk_tokens, progress=not args.quiet)
    print(json.dumps({**{k: v for k, v in idx.meta.items() if k != "format"}, "total_s": round(time.perf_counter() - t0, 2)}))
    return 0


def _cmd_ragas(args: argparse.Namespace) -> int:
    from chronorag.integrations.ragas_eval import ragas_scores

    print(json.dumps({"predictions": str(args.predictions), **ragas_scores(args.predictions)}))
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from chronorag.graphs.persist import read_json

    meta = read_json(Path(args.index_dir) / "index.json")
    print(json.dumps(meta, indent=1, ensure_ascii=False))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from chronorag.graphs.io import read_events
    from chronorag.retrievers.dense import DenseEventRetriever
    from chronorag.retrievers.event_index import build_event_index

    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="chronorag-demo-"))
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
    sp.add_argument("--out", required=True, help="index directory (replaced atomically)")
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
    sp.add_argument("dataset", choices=["multitq", "time-longqa", "jsonl"])
    sp.add_argument("index_dir")
    sp.add_argument("questions")
    sp.add_argument("--method", default="dense", choices=sorted(METHODS))
    sp.add_argument("--limit", type=int, default=None)
    sp.add_argument("--out", default=None, help="predictions JSONL")
    sp.add_argument("--llm-url", default=None)
    sp.add_argument("--deadline", type=float, default=None,
                    help="seconds per question for the tools agent (default 300)")
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

    sp = sub.add_parser("sft", help="write TempTool SFT records (tagged protocol, correct answers only)")
    sp.add_argument("source", choices=["cronquestions", "reasoner"],
                    help="cronquestions: convert tool trajectories; reasoner: run the no-LLM reasoner on questions")
    sp.add_argument("path", help="trajectory file, or a question JSONL with gold answers")
    sp.add_argument("--out", required=True)
    sp.add_argument("--index", default=None, help="index directory (reasoner source)")
    sp.add_argument("--limit", type=int, default=None)
    sp.set_defaults(func=_cmd_sft)

    sp = sub.add_parser("ragas", help="RAGAS scores (LLM-free metrics) of a predictions file from `eval`")
    sp.add_argument("predictions")
    sp.set_defaults(func=_cmd_ragas)

    sp = sub.add_parser("info", help="print an index directory's metadata")
    sp.add_argument("index_dir")
    sp.set_defaults(func=_cmd_info)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``chronorag`` console script."""
    set_offline_env()
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (ChronoRAGError, ValueError, FileNotFoundError, NotADirectoryError) as exc:
        print(f"chronorag {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
