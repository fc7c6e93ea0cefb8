"""``chronorag demo``: all five methods on small bundled data, offline; optionally through an LLM.

Without an LLM each method runs its documented no-LLM mode. With ``--llm local`` the demo
starts the local llama.cpp server (the ``local-llm`` extra), runs each method's LLM path
through it and stops it; ``--llm-url URL`` does the same against any OpenAI-compatible
endpoint. Each method prints a few readable lines; the last line is one JSON object
``{"methods": {"star-rag": {"ok": ...}, "t-grag": ..., "topg": ..., "kg-irag": ...,
"temptool": ...}}`` (with an LLM each method adds ``llm_calls``, ``prompt_tokens``,
``completion_tokens`` as the server reported them, ``fallbacks`` by kind and ``latency_s``).

A method that fails (a server that died, a context overflow) is reported as ``ok: false``
with its error and the demo goes on; the exit code is 0 only when every method completed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from chronorag.cli._common import _short, bundled_sample_path
from chronorag.errors import ConfigError

DEMO_QUESTIONS = [
    "After France, who did Barack Obama criticize first?",
    "When did Xi Jinping first visit France?",
    "In which month did John Kerry first negotiate with Mohammad Javad Zarif?",
    "Who did Catherine Ashton consult on the same day as Iran?",
]

#: questions per method (two each: enough to show the path, short enough for a 135M model on 2 cores)
#: with their answers in the bundled ICEWS14 events (Obama criticized France on 2014-06-05, then China
#: on 2014-07-09; Kerry and Zarif first negotiated in February 2014); scored as Hits@1
KG_QUESTIONS = [(DEMO_QUESTIONS[0], "China"), (DEMO_QUESTIONS[2], "2014-02")]
STAR_QUESTIONS = KG_QUESTIONS
TEMPTOOL_QUESTIONS = KG_QUESTIONS
TGRAG_QUESTIONS: list[dict[str, Any]] = [
    {"question": "How many cars did Audi deliver in 2019 and 2022?",
     "answer": "1,845,573 in 2019; 1,614,231 in 2022", "keys": ["1,845,573", "1,614,231"]},
    {"question": "Who led the Board of Management of Audi in 2022?", "answer": "Markus Duesmann",
     "keys": ["Markus Duesmann"]},
]
TOPG_QUESTIONS: list[dict[str, Any]] = [
    {"question": "Where was the director of the film Blue Harbor born?", "answer": "Zagreb", "keys": ["Zagreb"]},
    {"question": "Where was the director of the film Red Meadow born?", "answer": "Malmo", "keys": ["Malmo"]},
]


def _matches(answer: str, keys: list[str]) -> bool:
    """Every key string of the reference occurs in the answer (case-insensitive)."""
    a = answer.casefold()
    return bool(answer) and all(k.casefold() in a for k in keys)

METHOD_TITLES = {
    "star-rag": "STAR-RAG (LlamaIndex retriever: rule graph + time-aware seeded PageRank over the ICEWS14 sample)",
    "t-grag": "T-GRAG (LlamaIndex retriever: time-sliced KG over two annual reports, per-period sub-questions)",
    "topg": "ToPG Local (LangGraph: proposition graph, Suggestion-Selection walk over a 10-passage corpus)",
    "kg-irag": "KG-iRAG (LangGraph: iterative time windows over one week of NYC airport weather records)",
    "temptool": "TempTool-R1 (LangGraph agent <-> tools over the ICEWS14 sample)",
}


def demo_data_dir() -> Path:
    """The bundled demo data: T-GRAG reports, the ToPG corpus and the KG-iRAG record sample."""
    return Path(str(resources.files("chronorag") / "data" / "demo"))


def _cmd_demo(args: argparse.Namespace) -> int:
    from chronorag.graphs.persist import index_lock

    if args.llm is not None and args.llm_url is not None:
        raise ConfigError("pass either --llm local or --llm-url URL, not both")
    out = _demo_dir(Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="chronorag-demo-")))
    server = None
    if args.llm == "local":
        from chronorag.integrations.local_llm import LocalLLMServer

        print(f"starting the local LLM server ({args.local_model}, {args.threads} threads, 127.0.0.1 only) ...",
              flush=True)
        server = LocalLLMServer(model=args.local_model, threads=args.threads, n_ctx=args.n_ctx).start()
        print(f"   {server.base_url} (pid {server.pid}) answered after {server.startup_s:.1f} s", flush=True)
        if args.local_model == "gemma3-270m":
            print("   note: the packaged Gemma 3 270M is the base model, not instruction-tuned; it repeats "
                  "prompts, which chronorag refuses (llm.echo): expect errors and abstentions", flush=True)
    try:
        with index_lock(out / "icews"):
            return _demo(args, out, server)
    finally:
        if server is not None:
            server.stop()
            print(f"local LLM server (pid {server.proc.pid if server.proc else '-'}) stopped", flush=True)


DEMO_MARKER = ".chronorag-demo"


def _demo_dir(out: Path) -> Path:
    """``out`` made ready for the demo's indexes; a directory the demo did not write is refused."""
    from chronorag.errors import OutputExistsError

    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"{out} exists and is not a directory; pass a new directory for the demo")
    if out.is_dir() and not (out / DEMO_MARKER).exists():
        entries = sorted(e.name for e in out.iterdir())
        if entries:
            shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
            raise OutputExistsError(f"{out} is not empty and was not written by `chronorag demo` (it holds "
                                    f"{shown}); pass a new or empty directory, e.g. {out / 'demo'}")
    out.mkdir(parents=True, exist_ok=True)
    (out / DEMO_MARKER).write_text("indexes written by `chronorag demo`\n", encoding="utf-8")
    return out


def _llm_factory(args: argparse.Namespace, server: Any) -> Callable[[], Any] | None:
    from chronorag.integrations.llm import LLMConfig

    if server is not None:
        return lambda: server.config(timeout=args.llm_timeout, max_tokens=args.max_tokens)
    if args.llm_url:
        return lambda: LLMConfig(base_url=args.llm_url, timeout=args.llm_timeout, max_retries=0,
                                 max_tokens=args.max_tokens)
    return None


def _demo(args: argparse.Namespace, out: Path, server: Any) -> int:
    from chronorag.graphs.event_index import build_event_index
    from chronorag.graphs.io import read_events

    make_llm = _llm_factory(args, server)
    where = (f"LLM: local {args.local_model}" if server is not None else
             f"LLM: {args.llm_url}" if args.llm_url else "no LLM (each method's documented no-LLM mode)")
    print(f"chronorag demo: five temporal RAG methods on small bundled data, offline; {where}")
    print(f"0. ingest the bundled ICEWS14 sample ({bundled_sample_path().name}) into {out / 'icews'}")
    t0 = time.perf_counter()
    store = read_events(bundled_sample_path(), progress=not args.quiet)
    idx = build_event_index(store, out / "icews", encoder=args.encoder, cache=args.cache,
                            progress=not args.quiet)
    print(f"   {store!r}; {idx.meta['n_triples']} distinct triples embedded with {idx.meta['model_id']} "
          f"({time.perf_counter() - t0:.1f} s)")
    runners: dict[str, Callable[..., Any]] = {
        "star-rag": _star_rag, "t-grag": _tgrag, "topg": _topg, "kg-irag": _kg_irag, "temptool": _temptool}
    selected = args.methods.split(",") if args.methods else list(runners)
    unknown = [m for m in selected if m not in runners]
    if unknown:
        raise ConfigError(f"unknown --methods {unknown}; choose from {sorted(runners)}")
    results: dict[str, dict[str, Any]] = {}
    for n, name in enumerate(selected, 1):
        print(f"{n}. {METHOD_TITLES[name]}", flush=True)
        cfg = make_llm() if make_llm is not None else None
        results[name] = _run_method(name, runners[name], cfg, idx=idx, out=out, args=args)
    print(f"indexes kept under {out}; try: chronorag ask {out / 'icews'} \"Who did Barack Obama praise first "
          "after Japan?\" --method tools")
    print(json.dumps({"methods": results, "llm": (args.local_model if server is not None else args.llm_url)},
                     ensure_ascii=False))
    return 0 if all(r["ok"] for r in results.values()) else 1


def _run_method(name: str, runner: Callable[..., Any], cfg: Any, **kw: Any) -> dict[str, Any]:
    """Run one method's demo; any ChronoRAGError ends it as ``ok: false`` with the message."""
    from chronorag.errors import ChronoRAGError
    from chronorag.integrations.llm import fallbacks

    before = len(fallbacks.records)
    t0 = time.perf_counter()
    res: dict[str, Any] = {"ok": True, "questions": 0, "answered": 0}
    try:
        for line in runner(cfg, res, **kw):
            print("   " + line, flush=True)
    except ChronoRAGError as exc:  # a failed LLM call, an overflow, a missing extra: say which method
        res["ok"] = False
        res["error"] = f"{name}: {exc}"[:400]
        print(f"   FAILED: {res['error']}", flush=True)
    res["latency_s"] = round(time.perf_counter() - t0, 3)
    if cfg is not None:
        s = cfg.ledger.summary()
        res.update(llm_calls=s["calls"], prompt_tokens=s["prompt_tokens"],
                   completion_tokens=s["completion_tokens"], unmetered_calls=s["unmetered_calls"],
                   failed_calls=s["failed_calls"])
    counts: dict[str, int] = {}
    for _q, kind, _d in fallbacks.records[before:]:
        counts[kind] = counts.get(kind, 0) + 1
    res["fallbacks"] = counts
    return res


@contextlib.contextmanager
def _ask(res: dict[str, Any], name: str, i: int) -> Iterator[None]:
    """One question: tagged for the ledger and the fallback log, and timed."""
    from chronorag.integrations.llm import query_scope

    res["questions"] += 1
    t0 = time.perf_counter()
    with query_scope(f"demo-{name}-{i}"):
        yield
    res.setdefault("question_latency_s", []).append(round(time.perf_counter() - t0, 3))


def _chat(cfg: Any) -> Any:
    from chronorag.integrations.llm import resolve_llm

    return resolve_llm(cfg, use_env=False) if cfg is not None else None


# ------------------------------------------------------------------------------------ methods
def _star_rag(cfg: Any, res: dict[str, Any], *, idx: Any, **_: Any) -> Any:
    from chronorag.evaluation import make_method
    from chronorag.retrievers.star_rag.rule_graph import build_rule_graph

    t0 = time.perf_counter()
    rg = build_rule_graph(idx.store, progress=False)
    rg.save(idx.path)
    yield (f"rule graph: {rg.stats.get('rule_nodes', '?')} rule nodes, {rg.stats.get('selected_edges', '?')} MDL-selected temporal edges "
           f"in {time.perf_counter() - t0:.1f} s")
    # exactly what `chronorag ask/eval --method star-rag` does: with an LLM, its answers kept only
    # where the retrieved events show them; without, the reasoner over the retrieved events, then
    # the constrained reader, else an abstention with its reason
    method = make_method("star-rag", idx.path, llm=cfg)
    for i, (q, gold) in enumerate(STAR_QUESTIONS):
        with _ask(res, "star-rag", i):
            pred = method({"question": q, "quid": f"demo-star-rag-{i}"})
        answers, info, why = list(pred.answers), pred.info, pred.reason
        events = idx.store.events(info["event_ids"])
        if cfg is None:
            how = str(info.get("mode", "no-LLM reader over the retrieved events"))
        else:
            dropped = info.get("ungrounded") or []
            how = "LLM reader over the retrieved events" + (f", {len(dropped)} ungrounded candidate(s) dropped"
                                                            if dropped else "")
        res["answered"] += bool(answers)
        res["reference_match"] = res.get("reference_match", 0) + (answers[:1] == [gold])
        yield f"Q: {q}   (reference: {gold})"
        shown = ", ".join(answers[:3]) or (f"(abstained: {why})" if why else "(none)")
        yield f"   A: {shown}   [{how}; {len(info.get('seeds', []))} seed events]"
        if answers and why:
            yield f"   note: {why}"
        if events:
            yield f"   top event: {events[0].verbalize()}"


def _tgrag(cfg: Any, res: dict[str, Any], *, out: Path, args: argparse.Namespace, **_: Any) -> Any:
    from chronorag.retrievers.tgrag import TGragRetriever, answer_tgrag
    from chronorag.retrievers.tgrag.index import build_tgrag_index, read_period_documents

    t0 = time.perf_counter()
    docs = read_period_documents(demo_data_dir() / "tgrag_reports")
    index = build_tgrag_index(docs, out / "tgrag", encoder=args.encoder, cache=args.cache, progress=False)
    yield (f"indexed {len(docs)} period documents ({', '.join(p for p, _ in docs)}) with spaCy extraction "
           f"in {time.perf_counter() - t0:.1f} s")
    chat = _chat(cfg)
    retriever = TGragRetriever(index, llm=chat)
    for i, item in enumerate(TGRAG_QUESTIONS):
        with _ask(res, "t-grag", i):
            got = answer_tgrag(retriever, item["question"], llm=chat)
        res["answered"] += bool(got["answer"])
        res["reference_match"] = res.get("reference_match", 0) + _matches(got["answer"], item["keys"])
        yield f"Q: {item['question']}   (reference: {item['answer']})"
        yield f"   A: {_short(got['answer'], 160) or '(abstained: ' + str(got['reason']) + ')'}"
        if got["answer"] and got["reason"]:
            yield f"   note: {_short(str(got['reason']), 200)}"
        subs = "; ".join(f"[{s['period'] or 'all'}] {_short(s['question'], 50)}" for s in got["sub_answers"])
        yield f"   decomposition ({got['decomposition']}): {subs}"


def _topg(cfg: Any, res: dict[str, Any], *, out: Path, args: argparse.Namespace, **_: Any) -> Any:
    from chronorag.workflows.topg.graph import build_graph
    from chronorag.workflows.topg.index import build_topg_index, read_corpus
    from chronorag.workflows.topg.search import ToPGSettings

    t0 = time.perf_counter()
    passages = read_corpus(demo_data_dir() / "topg_corpus.json")
    index, summary = build_topg_index(passages, out / "topg", encoder=args.encoder, cache=args.cache,
                                      communities=False, progress=False)
    yield (f"proposition graph: {summary.get('propositions', '?')} propositions from {len(passages)} passages "
           f"in {time.perf_counter() - t0:.1f} s")
    graph = build_graph(mode="local", index_dir=index, llm=cfg if cfg is not None else None,
                        settings=ToPGSettings(max_iter=2))
    for i, item in enumerate(TOPG_QUESTIONS):
        with _ask(res, "topg", i):
            got = graph.invoke({"question": item["question"]})
        ans = got.get("answer") or ""
        res["answered"] += bool(ans) or cfg is None
        if cfg is not None:
            res["reference_match"] = res.get("reference_match", 0) + _matches(ans, item["keys"])
        yield f"Q: {item['question']}   (reference: {item['answer']})"
        yield f"   A: {_short(ans, 160) if ans else '(no LLM: context only)'}   [{got['mode']}]"
        if got.get("context"):
            yield f"   first fact: {_short(got['context'][0], 140)}"


def _kg_irag(cfg: Any, res: dict[str, Any], **_: Any) -> Any:
    from chronorag.workflows.kg_irag.graph import build_graph
    from chronorag.workflows.kg_irag.questions import generate_questions
    from chronorag.workflows.kg_irag.sources import load_source_kg

    d = demo_data_dir() / "kg_irag"
    kg, rows = load_source_kg(d / "nyc_weather_spec.json", records=next(d.glob("*.csv")))
    yield f"record KG: {len(kg)} hourly records at {', '.join(kg.places)} ({kg.n_triples} triples)"
    qs = generate_questions(rows, kg.spec, n=2, seed=3)
    graph = build_graph(kg=kg, llm=cfg, use_llm=cfg is not None, t_max=3)
    for i, q in enumerate(qs):
        with _ask(res, "kg-irag", i):
            got = graph.invoke({"question": q["question"]})
        ans = got.get("answer") or ""
        res["answered"] += bool(ans) and ans != "no answer"
        res["reference_match"] = res.get("reference_match", 0) + (ans == q.get("answer"))
        yield f"Q: {q['question']}   (reference: {q.get('answer')})"
        yield (f"   A: {ans or '(none)'}   [{got.get('iterations')} iteration(s), stopped by "
               f"{got.get('stopped_by')}; {got.get('mode', '')}]")


def _temptool(cfg: Any, res: dict[str, Any], *, idx: Any, args: argparse.Namespace, **_: Any) -> Any:
    from chronorag.workflows.temptool.graph import build_graph

    graph = build_graph(str(idx.path), llm=cfg, protocol="native" if cfg is not None else "planner",
                        max_tool_calls=4, deadline_s=args.deadline)
    for i, (q, gold) in enumerate(TEMPTOOL_QUESTIONS):
        with _ask(res, "temptool", i):
            got = graph.invoke({"question": q})
        answers = got.get("answers") or []
        res["answered"] += bool(answers)
        res["reference_match"] = res.get("reference_match", 0) + (answers[:1] == [gold])
        calls = [c["name"] for m in got.get("messages", []) if m.type == "ai" for c in (m.tool_calls or [])]
        yield f"Q: {q}   (reference: {gold})"
        yield f"   A: {', '.join(answers[:3]) or '(none)'}   [{got.get('mode')}: {' -> '.join(calls) or 'no tool call'}]"
        if got.get("stopped") or (got.get("note") and not answers):
            yield f"   note: {_short(str(got.get('note') or got.get('stopped')), 200)}"


def add_demo_parser(sub: Any, add_encoder_opts: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register ``chronorag demo`` on the CLI's sub-parsers."""
    sp = sub.add_parser("demo", help="run all five methods on small bundled data (no LLM by default)")
    sp.add_argument("--out", default=None, help="where to keep the demo indexes")
    sp.add_argument("--llm", choices=["local"], default=None,
                    help="local: start the local llama.cpp server (needs the local-llm extra) and use it")
    sp.add_argument("--llm-url", default=None, help="an OpenAI-compatible endpoint to use instead")
    sp.add_argument("--local-model", default="smollm2", choices=["smollm2", "gemma3-270m"],
                    help="smollm2 (instruction-tuned) or gemma3-270m (the base model: it cannot chat)")
    sp.add_argument("--threads", type=int, default=2, help="local server: CPU threads")
    sp.add_argument("--n-ctx", type=int, default=4096, help="local server: context window in tokens")
    sp.add_argument("--llm-timeout", type=float, default=120.0, help="seconds per LLM call")
    sp.add_argument("--max-tokens", type=int, default=512, help="completion cap per LLM call")
    sp.add_argument("--deadline", type=float, default=300.0, help="TempTool: seconds per question")
    sp.add_argument("--methods", default=None,
                    help="comma-separated subset of star-rag,t-grag,topg,kg-irag,temptool (default: all)")
    add_encoder_opts(sp)
    sp.set_defaults(func=_cmd_demo)
