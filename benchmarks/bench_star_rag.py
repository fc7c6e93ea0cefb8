"""STAR-RAG benchmarks: rule-graph build, retrieval latency, answer recall@10, incremental updates, prompt size.

Usage (repo root, .venv active; INDEX_DIR from `chronorag ingest ../shared/data/icews05-15/icews05-15_full.tsv.gz --out INDEX_DIR`)::

    /usr/bin/time -v chronorag star-rag build INDEX_DIR      # build time per stage and peak RSS
    python benchmarks/bench_star_rag.py quality INDEX_DIR    # answer recall@10 star / uniform / no-rule, by qtype; latency
    python benchmarks/bench_star_rag.py incremental INDEX_DIR  # 1% append vs rebuild: time and recall
    python benchmarks/bench_star_rag.py tokens INDEX_DIR     # prompt tokens of the answer prompt

Answer recall@10: the gold answer is the subject or object of one of the 10 retrieved
events, or its date at the gold's granularity. Each command prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from chronorag.cli import set_offline_env

set_offline_env()
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _questions() -> list[dict]:
    return [json.loads(line) for line in open(DATA / "multitq" / "test_gold_dev.jsonl")]


def answer_recall(store, ids, golds) -> float:
    from chronorag.metrics import answer_matches

    for e in store.events(ids):
        for cand in (e.subject, e.object, e.start):
            if any(answer_matches(cand, g) for g in golds):
                return 1.0
    return 0.0


def _recall_by_qtype(retriever, store, qs) -> dict:
    by: dict[str, list[float]] = defaultdict(list)
    lat = []
    for q in qs:
        t = time.perf_counter()
        ids, _ = retriever.retrieve_event_ids(q["question"])
        lat.append((time.perf_counter() - t) * 1000)
        h = answer_recall(store, ids, q["answers"])
        by["all"].append(h)
        by[q["qtype"]].append(h)
        by["multi-event" if q["qtype"] in ("equal_multi", "after_first", "before_last") else "single-event"].append(h)
    lat.sort()
    return {"recall@10": {k: round(sum(v) / len(v), 4) for k, v in sorted(by.items())},
            "latency_ms": {"p50": round(statistics.median(lat), 1), "p95": round(lat[int(0.95 * (len(lat) - 1))], 1)}}


def bench_quality(index_dir: str) -> dict:
    from chronorag.graphs.rule_graph import RuleGraph
    from chronorag.retrievers.event_index import EventIndex
    from chronorag.retrievers.star_rag import StarRAGRetriever

    idx = EventIndex.load(index_dir)
    rg = RuleGraph.load(index_dir)
    qs = _questions()
    out = {}
    for name, kw in (("star-rag", {}), ("uniform", {"personalization": "uniform"}),
                     ("no-rule (dense)", {"use_rule_graph": False}), ("star-rag ppr_weight=0.5", {"ppr_weight": 0.5})):
        r = StarRAGRetriever(idx, rg, **kw)
        r.retrieve_event_ids(qs[0]["question"])  # warm-up
        out[name] = _recall_by_qtype(r, idx.store, qs)
    return out


def bench_incremental(index_dir: str) -> dict:
    from chronorag.graphs.rule_graph import build_rule_graph
    from chronorag.retrievers.event_index import EventIndex
    from chronorag.retrievers.star_rag import StarRAGRetriever

    idx = EventIndex.load(index_dir)
    s = idx.store
    n = len(s)
    cut = int(n * 0.99)
    t = time.perf_counter()
    rg = build_rule_graph(s.subset(np.arange(cut)))
    t_base = time.perf_counter() - t
    grown = s.subset(np.arange(cut)).concat(s.subset(np.arange(cut, n)))
    t = time.perf_counter()
    info = rg.add_events(grown, cut)
    t_inc = time.perf_counter() - t
    t = time.perf_counter()
    full = build_rule_graph(s)
    t_full = time.perf_counter() - t
    qs = _questions()
    res = {}
    for name, graph in (("incremental", rg), ("rebuild", full)):
        r = StarRAGRetriever(idx, graph)
        res[name] = _recall_by_qtype(r, s, qs)["recall@10"]["all"]
    return {"events": n, "appended": n - cut, "build_99pct_s": round(t_base, 2), "incremental_s": round(t_inc, 3),
            "rebuild_s": round(t_full, 2), "speedup": round(t_full / t_inc, 1), "update": info,
            "recall@10_incremental": res["incremental"], "recall@10_rebuild": res["rebuild"],
            "selected_edges": {"incremental": rg.stats["selected_edges"], "rebuild": full.stats["selected_edges"]}}


def bench_tokens(index_dir: str) -> dict:
    import tiktoken

    from chronorag.retrievers.event_index import EventIndex
    from chronorag.retrievers.star_rag import ANSWER_PROMPT, StarRAGRetriever, format_events

    enc = tiktoken.get_encoding("cl100k_base")
    idx = EventIndex.load(index_dir)
    r = StarRAGRetriever(idx)
    counts = []
    for q in _questions():
        ids, _ = r.retrieve_event_ids(q["question"])
        prompt = ANSWER_PROMPT.format(events=format_events(idx.store.events(ids)), question=q["question"])
        counts.append(len(enc.encode(prompt)))
    return {"tokenizer": "cl100k_base", "questions": len(counts), "mean_prompt_tokens": round(float(np.mean(counts)), 1),
            "max": int(max(counts))}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["quality", "incremental", "tokens"])
    p.add_argument("index")
    a = p.parse_args()
    res = {"quality": bench_quality, "incremental": bench_incremental, "tokens": bench_tokens}[a.what](a.index)
    json.dump(res, sys.stdout)
    print()


if __name__ == "__main__":
    main()
