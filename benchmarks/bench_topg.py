"""ToPG benchmarks (no LLM): 2Wiki passage recall, GraphRAG-Bench Medical evidence recall, latency.

Build the indexes first (timings and sizes are printed by the CLI)::

    chronorag topg index ../shared/data/2wiki/corpus.json --out /tmp/topg_bench/2wiki_static --encoder static
    chronorag topg index ../shared/data/graphrag-bench/medical_corpus.json --out /tmp/topg_bench/medical_static --encoder static

Then (from the repo root, in .venv)::

    python benchmarks/bench_topg.py 2wiki   --index /tmp/topg_bench/2wiki_static
    python benchmarks/bench_topg.py medical --index /tmp/topg_bench/medical_static [--budget 1000]
    python benchmarks/bench_topg.py latency --index /tmp/topg_bench/2wiki_static
    python benchmarks/bench_topg.py llm-cost --index /tmp/topg_bench/2wiki_static --limit 20

``2wiki`` runs dense passages, Naive, Local (max_iter 1 and 3) and the lambda ablations
(0 = pure semantic, 1 = pure graph) through the same code path as
``chronorag eval 2wiki``; ``medical`` compares dense chunks, Naive and Global at equal
context words; ``latency`` times Naive, one Local suggestion step (GExtract +
transition + PPR) and Local with 3 iterations. Each prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from chronorag.cli import set_offline_env

set_offline_env()
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _table(rows: list[dict], keys: list[str], types: list[str]) -> str:
    head = ["config", *keys, *[f"{k}@5 {t}" for t in types for k in ("R",)], "p50 ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        m = r["metrics"]
        cells = [r["name"], *[str(m[k]) for k in keys],
                 *[str(m["by_type"].get(t, {}).get("passage_recall@5", "-")) for t in types],
                 str(m["latency_ms_p50"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def bench_2wiki(args: argparse.Namespace) -> None:
    from chronorag.evaluation.methods.passages import run_passage_eval

    q = args.questions or DATA / "2wiki" / "questions_dev.jsonl"
    configs = [("dense passages", "dense-passages", {}),
               ("ToPG Naive (k=20)", "topg-naive", {}),
               ("ToPG Local max_iter=1", "topg-local", {"max_iter": 1}),
               ("ToPG Local max_iter=3", "topg-local", {"max_iter": 3}),
               ("Local max_iter=3, lambda=1 (pure graph)", "topg-local", {"max_iter": 3, "lam": 1.0}),
               ("Local max_iter=3, lambda=0 (pure semantic)", "topg-local", {"max_iter": 3, "lam": 0.0})]
    rows = []
    for name, method, opts in configs:
        m = run_passage_eval("2wiki", args.index, q, method=method, limit=args.limit, progress=False, **opts)
        rows.append({"name": name, "metrics": m})
        print(name, json.dumps({k: m[k] for k in ("passage_recall@2", "passage_recall@5", "answer_in_context",
                                                   "latency_ms_p50")}), flush=True)
    types = ["comparison", "compositional", "inference", "bridge_comparison"]
    print(_table(rows, ["passage_recall@2", "passage_recall@5", "answer_in_context", "context_words_mean"], types))
    print(json.dumps({r["name"]: r["metrics"] for r in rows}))


def bench_medical(args: argparse.Namespace) -> None:
    from chronorag.evaluation.methods.passages import run_passage_eval

    q = Path(args.questions or DATA / "graphrag-bench" / "medical_questions_dev.jsonl")
    if args.stride > 1:  # every stride-th question (the file is sorted by question type)
        import tempfile

        lines = [x for x in q.read_text(encoding="utf-8").splitlines() if x.strip()][:: args.stride]
        q = Path(tempfile.mkdtemp()) / f"medical_every{args.stride}.jsonl"
        q.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = []
    for name, method, opts in [("vanilla chunks (dense)", "dense-passages", {"dense_k": 20}),
                               ("ToPG Naive", "topg-naive", {"k": 60}),
                               ("ToPG Global", "topg-global", {"report_tokens": args.budget})]:
        m = run_passage_eval("graphrag-bench", args.index, q, method=method, limit=args.limit, progress=False,
                             token_budget=args.budget, **opts)
        rows.append({"name": name, "metrics": m})
        print(name, json.dumps({k: m[k] for k in ("evidence_recall", "latency_ms_p50", "context_words_mean")}),
              flush=True)
    types = sorted(rows[0]["metrics"]["by_type"])
    lines = ["| config | " + " | ".join(["all", *types]) + " | context words | p50 ms |", "|" + "---|" * (len(types) + 4)]
    for r in rows:
        m = r["metrics"]
        lines.append(f"| {r['name']} | {m['evidence_recall']} | "
                     + " | ".join(str(m["by_type"][t]["evidence_recall"]) for t in types)
                     + f" | {m['context_words_mean']} | {m['latency_ms_p50']} |")
    print("\n".join(lines))
    print(json.dumps({r["name"]: r["metrics"] for r in rows}))


def bench_latency(args: argparse.Namespace) -> None:
    from chronorag.workflows.topg.graph import build_graph
    from chronorag.workflows.topg.index import load_topg_index
    from chronorag.workflows.topg.search import ToPGSettings, seed_candidates, select

    idx = load_topg_index(args.index)
    g = idx.graph
    qs = [json.loads(x)["question"] for x in open(args.questions or DATA / "2wiki" / "questions_dev.jsonl")]
    qs = qs[: args.limit or 100]
    st = ToPGSettings()
    naive = build_graph(mode="naive", index_dir=idx)
    local = build_graph(mode="local", index_dir=idx, settings=st)
    t_naive, t_step, t_local, t_embed = [], [], [], []
    c_naive, c_step, c_local = [], [], []
    clock, cpu = time.perf_counter, time.process_time
    for q in qs:
        t = clock(); qv = idx.embed([q])[0]; t_embed.append(clock() - t)
        cand = seed_candidates(idx, None, q, qv, st)
        seeds = select(idx, None, q, qv, cand, st)
        t, c = clock(), cpu(); g.suggest_local(qv, seeds, st.k, exclude=seeds, **st.walk())
        t_step.append(clock() - t); c_step.append(cpu() - c)
        t, c = clock(), cpu(); naive.invoke({"question": q}); t_naive.append(clock() - t); c_naive.append(cpu() - c)
        t, c = clock(), cpu(); local.invoke({"question": q}); t_local.append(clock() - t); c_local.append(cpu() - c)

    def p(xs: list[float], f: float) -> float:
        s = sorted(xs)
        return round(1000 * s[min(len(s) - 1, int(f * len(s)))], 2)

    out = {"questions": len(qs), "graph": g.stats(),
           "query_embedding_ms_p50": p(t_embed, .5),
           "naive_ms_p50": p(t_naive, .5), "naive_ms_p95": p(t_naive, .95),
           "local_step_ms_p50": p(t_step, .5), "local_step_ms_p95": p(t_step, .95),
           "local3_ms_p50": p(t_local, .5), "local3_ms_p95": p(t_local, .95),
           "mean_local3_ms": round(1000 * statistics.mean(t_local), 2),
           "cpu_naive_ms_p50": p(c_naive, .5), "cpu_local_step_ms_p50": p(c_step, .5),
           "cpu_local3_ms_p50": p(c_local, .5), "load_average": list(os.getloadavg())}
    print(json.dumps(out))


def bench_llm_cost(args: argparse.Namespace) -> None:
    """LLM calls and prompt sizes per question, through the OpenAI-protocol test double.

    The replies are scripted (Select keeps the first three facts, Eval says "not yet",
    NextQ asks two questions, partial answers score 50), so the prompt sizes are what a
    real endpoint would receive for these selections; completion sizes are not
    representative. Tokens are counted by the test server as whitespace-separated words.
    """
    from chronorag.integrations.llm import LLMConfig, query_scope
    from chronorag.integrations.testing import ScriptedOpenAIServer
    from chronorag.workflows.topg.graph import build_graph
    from chronorag.workflows.topg.index import load_topg_index

    def router(req: dict) -> str:
        text = " ".join(m.get("content") or "" for m in req["messages"])
        if '"keep"' in text:
            return json.dumps({"keep": [1, 2, 3]})
        if '"sufficient"' in text:
            return json.dumps({"sufficient": False, "answer": ""})
        if '"questions"' in text:
            return json.dumps({"questions": ["Which facts are missing?", "Who is involved?"]})
        if '"score"' in text:
            return json.dumps({"answer": "A partial answer.", "score": 50})
        return json.dumps({"answer": "An answer."})

    idx = load_topg_index(args.index)
    qs = [json.loads(x)["question"] for x in open(args.questions or DATA / "2wiki" / "questions_dev.jsonl")]
    qs = qs[: args.limit or 20]
    out = {}
    with ScriptedOpenAIServer([router] * 100000) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        for mode in ("naive", "local", "global"):
            gr = build_graph(mode=mode, index_dir=idx, llm=cfg)
            calls, prompt = [], []
            for i, q in enumerate(qs):
                with query_scope(f"{mode}-{i}"):
                    res = gr.invoke({"question": q})
                calls.append(res["info"]["tokens"]["calls"])
                prompt.append(res["info"]["tokens"]["prompt_tokens"])
            out[mode] = {"questions": len(qs), "calls_mean": round(statistics.mean(calls), 2),
                         "prompt_tokens_mean": round(statistics.mean(prompt), 1),
                         "prompt_tokens_max": max(prompt)}
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["2wiki", "medical", "latency", "llm-cost"])
    ap.add_argument("--index", required=True)
    ap.add_argument("--questions", default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--budget", type=int, default=1000, help="medical: context words per question")
    ap.add_argument("--stride", type=int, default=1, help="medical: use every stride-th question")
    args = ap.parse_args()
    {"2wiki": bench_2wiki, "medical": bench_medical, "latency": bench_latency,
     "llm-cost": bench_llm_cost}[args.what](args)


if __name__ == "__main__":
    main()
