"""STAR-RAG benchmarks: rule-graph build, retrieval latency, answer recall@10, incremental updates, prompt size.

Usage (repo root, .venv active; INDEX_DIR from `chronorag ingest ../shared/data/icews05-15/icews05-15_full.tsv.gz --out INDEX_DIR`)::

    /usr/bin/time -v chronorag star-rag build INDEX_DIR      # build time per stage and peak RSS
    python benchmarks/bench_star_rag.py quality INDEX_DIR    # answer recall@10 star / uniform / no-rule, by qtype; latency
    python benchmarks/bench_star_rag.py quality INDEX_DIR --time-mode dated   # the paper's dated-text variant
    python benchmarks/bench_star_rag.py grid INDEX_DIR [--k1 5,10]  # K1, K2 in {5, 10, 20, 40}: recall@10 (star and no-rule)
    python benchmarks/bench_star_rag.py incremental INDEX_DIR  # 1% append vs rebuild: time and recall
    python benchmarks/bench_star_rag.py tokens INDEX_DIR     # prompt tokens of the answer prompt
    python benchmarks/bench_star_rag.py pg-compare INDEX_DIR # vs PropertyGraphIndex + VectorContextRetriever

Answer recall@10: the gold answer is the subject or object of one of the 10 retrieved
events, or its date at the gold's granularity. Each command prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
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


def _recall_by_qtype(retriever, store, qs, *, top: int = 10) -> dict:
    by: dict[str, list[float]] = defaultdict(list)
    lat, cpu = [], []
    for q in qs:
        t, c = time.perf_counter(), time.process_time()
        ids, _ = retriever.retrieve_event_ids(q["question"])
        lat.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        h = answer_recall(store, ids[:top], q["answers"])
        by["all"].append(h)
        by[q["qtype"]].append(h)
        by["multi-event" if q["qtype"] in ("equal_multi", "after_first", "before_last") else "single-event"].append(h)
    lat.sort()
    cpu.sort()
    # wall-clock latency depends on the machine's load (reported with the load average);
    # CPU time of the process (run with OPENBLAS_NUM_THREADS=1) approximates one query on an idle core
    return {"recall@10": {k: round(sum(v) / len(v), 4) for k, v in sorted(by.items())},
            "latency_ms": {"p50": round(statistics.median(lat), 1), "p95": round(lat[int(0.95 * (len(lat) - 1))], 1)},
            "cpu_ms": {"p50": round(statistics.median(cpu), 1), "p95": round(cpu[int(0.95 * (len(cpu) - 1))], 1)},
            "loadavg_1min": round(os.getloadavg()[0], 1), "cpus": os.cpu_count()}


QUALITY_CONFIGS = {
    "star-rag": {},
    "uniform": {"personalization": "uniform"},
    "no-rule": {"use_rule_graph": False},
    "star-rag directed": {"directed": True},
    "no-rule dense-pool-200": {"use_rule_graph": False, "dense_pool": 200},
}
# not run by default (--configs NAME,...): time-blind variants and weight sensitivity
EXTRA_CONFIGS = {
    "star-rag time-blind": {"time_mode": "none"},
    "no-rule time-blind": {"use_rule_graph": False, "time_mode": "none"},
    "star-rag weights/2": {"w_window": 0.075, "w_order": 0.05, "w_ref": 0.05},
    "no-rule weights/2": {"use_rule_graph": False, "w_window": 0.075, "w_order": 0.05, "w_ref": 0.05},
    "star-rag weights*2": {"w_window": 0.3, "w_order": 0.2, "w_ref": 0.2},
    "no-rule weights*2": {"use_rule_graph": False, "w_window": 0.3, "w_order": 0.2, "w_ref": 0.2},
}


def bench_quality(index_dir: str, time_mode: str = "cue", configs: str | None = None) -> dict:
    from chronorag.graphs.event_index import EventIndex
    from chronorag.retrievers.star_rag import StarRAGRetriever
    from chronorag.retrievers.star_rag.rule_graph import RuleGraph

    idx = EventIndex.load(index_dir)
    rg = RuleGraph.load(index_dir)
    qs = _questions()
    out: dict = {"time_mode": time_mode}
    if time_mode == "dated":
        t = time.perf_counter()
        vecs = idx.event_vectors()
        out["event_vectors"] = {"rows": int(len(vecs)), "load_or_embed_s": round(time.perf_counter() - t, 1)}
    names = list(QUALITY_CONFIGS) if configs is None else configs.split(",")
    for name in names:
        kw = {"time_mode": time_mode, **{**QUALITY_CONFIGS, **EXTRA_CONFIGS}[name]}
        r = StarRAGRetriever(idx, rg, **kw)
        r.retrieve_event_ids(qs[0]["question"])  # warm-up
        out[name] = _recall_by_qtype(r, idx.store, qs)
        print(name, json.dumps(out[name]["recall@10"]), out[name]["latency_ms"], file=sys.stderr, flush=True)
    return out


def bench_grid(index_dir: str, time_mode: str = "cue", k1s: tuple[int, ...] = (5, 10, 20, 40)) -> dict:
    """Fig. 4: K1 (anchors = results) and K2 (rule nodes) in {5, 10, 20, 40}; recall over the top 10 returned."""
    from chronorag.graphs.event_index import EventIndex
    from chronorag.retrievers.star_rag import StarRAGRetriever
    from chronorag.retrievers.star_rag.rule_graph import RuleGraph

    idx = EventIndex.load(index_dir)
    rg = RuleGraph.load(index_dir)
    qs = _questions()
    out: dict = {"time_mode": time_mode, "star-rag": {}, "no-rule": {}}
    for k1 in k1s:
        nr = StarRAGRetriever(idx, rg, k1=k1, use_rule_graph=False, time_mode=time_mode)
        out["no-rule"][f"K1={k1}"] = _recall_by_qtype(nr, idx.store, qs)["recall@10"]["all"]
        for k2 in (5, 10, 20, 40):
            r = StarRAGRetriever(idx, rg, k1=k1, k2=k2, time_mode=time_mode)
            out["star-rag"][f"K1={k1},K2={k2}"] = _recall_by_qtype(r, idx.store, qs)["recall@10"]["all"]
        print(k1, out["no-rule"][f"K1={k1}"], {k: v for k, v in out["star-rag"].items() if k.startswith(f"K1={k1},")},
              file=sys.stderr, flush=True)
    return out


def bench_incremental(index_dir: str) -> dict:
    from chronorag.graphs.event_index import EventIndex
    from chronorag.retrievers.star_rag import StarRAGRetriever
    from chronorag.retrievers.star_rag.rule_graph import build_rule_graph

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

    from chronorag.graphs.event_index import EventIndex
    from chronorag.retrievers.star_rag import StarRAGRetriever, build_answer_messages

    enc = tiktoken.get_encoding("cl100k_base")
    idx = EventIndex.load(index_dir)
    out = {"tokenizer": "cl100k_base"}
    for name, kw in (("star-rag", {}), ("no-rule", {"use_rule_graph": False})):
        r = StarRAGRetriever(idx, **kw)
        counts = []
        for q in _questions():
            ids, _ = r.retrieve_event_ids(q["question"])
            prompt = build_answer_messages(q["question"], idx.store.events(ids))[0]["content"]
            counts.append(len(enc.encode(prompt)))
        out[name] = {"questions": len(counts), "mean_prompt_tokens": round(float(np.mean(counts)), 1),
                     "max": int(max(counts))}
    return out


def bench_pg_compare(index_dir: str, limit: int | None = None) -> dict:
    """STAR-RAG vs LlamaIndex's own ``PropertyGraphIndex`` + ``VectorContextRetriever`` on the same events.

    The events of ``index_dir`` are exported into a ``SimplePropertyGraphStore`` (the
    existing bridge), every entity node is embedded with the index's encoder (wrapped as a
    LlamaIndex embedding) into the index's vector store, and ``VectorContextRetriever``
    (top-4 entity nodes, path depth 1, its default limit of 30 triplets) answers each dev
    question. Recall@10 is read from its first 10 triplets (subject, object, date of the
    ``"relation @ date"`` label), exactly as for STAR-RAG.
    """
    import resource

    from llama_index.core.graph_stores import SimplePropertyGraphStore
    from llama_index.core.indices.property_graph import PropertyGraphIndex, VectorContextRetriever
    from llama_index.core.llms import MockLLM

    from chronorag.graphs.encoders import as_llama_index_embedding
    from chronorag.graphs.event_index import EventIndex
    from chronorag.integrations.property_graph import export_to_property_graph, parse_relation_label
    from chronorag.metrics import answer_matches
    from chronorag.retrievers.star_rag import StarRAGRetriever

    def rss_mb() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    idx = EventIndex.load(index_dir)
    qs = _questions()[:limit] if limit else _questions()
    out: dict = {"events": len(idx.store), "questions": len(qs)}
    star = StarRAGRetriever(idx)
    star.retrieve_event_ids(qs[0]["question"])
    out["star-rag"] = _recall_by_qtype(star, idx.store, qs)
    rss0 = rss_mb()
    t = time.perf_counter()
    pg = SimplePropertyGraphStore()
    export_to_property_graph(idx.store, pg)
    t_export = time.perf_counter() - t
    emb = as_llama_index_embedding(idx.encoder)
    t = time.perf_counter()
    pgi = PropertyGraphIndex.from_existing(property_graph_store=pg, embed_model=emb, llm=MockLLM(),
                                           embed_kg_nodes=True, show_progress=False)
    kg_nodes = list(pg.graph.nodes.values())
    vecs = idx.encoder.encode([str(n) for n in kg_nodes])
    for n, v in zip(kg_nodes, vecs):
        n.embedding = v.tolist()
    pgi._insert_nodes_to_vector_index(kg_nodes)
    t_embed = time.perf_counter() - t
    out["property_graph_build"] = {"export_s": round(t_export, 1), "embed_nodes_s": round(t_embed, 1),
                                   "entity_nodes": len(kg_nodes), "peak_rss_mb": round(rss_mb()),
                                   "rss_growth_mb": round(rss_mb() - rss0)}
    vcr = VectorContextRetriever(pg, vector_store=pgi.vector_store, embed_model=emb, include_text=False,
                                 similarity_top_k=4, path_depth=1)
    by: dict[str, list[float]] = defaultdict(list)
    lat = []
    for q in qs:
        t = time.perf_counter()
        nodes = vcr.retrieve(q["question"])
        lat.append((time.perf_counter() - t) * 1000)
        cands = []
        for n in nodes[:10]:
            parts = n.node.get_content().split(" -> ")
            if len(parts) == 3:
                _, start, _ = parse_relation_label(parts[1])
                cands += [parts[0], parts[2], start]
        h = float(any(answer_matches(c, g) for c in cands for g in q["answers"]))
        by["all"].append(h)
        by[q["qtype"]].append(h)
        by["multi-event" if q["qtype"] in ("equal_multi", "after_first", "before_last") else "single-event"].append(h)
    lat.sort()
    out["vector-context"] = {"recall@10": {k: round(sum(v) / len(v), 4) for k, v in sorted(by.items())},
                             "latency_ms": {"p50": round(statistics.median(lat), 1),
                                            "p95": round(lat[int(0.95 * (len(lat) - 1))], 1)},
                             "loadavg_1min": round(os.getloadavg()[0], 1)}
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["quality", "grid", "incremental", "tokens", "pg-compare"])
    p.add_argument("--limit", type=int, default=None, help="pg-compare: first N questions")
    p.add_argument("index")
    p.add_argument("--time-mode", default="cue", choices=["cue", "dated", "none"])
    p.add_argument("--k1", default="5,10,20,40", help="grid: K1 values (comma-separated)")
    p.add_argument("--configs", default=None, help=f"comma-separated names from {list(QUALITY_CONFIGS) + list(EXTRA_CONFIGS)}")
    a = p.parse_args()
    if a.what == "quality":
        res = bench_quality(a.index, a.time_mode, a.configs)
    elif a.what == "pg-compare":
        res = bench_pg_compare(a.index, a.limit)
    elif a.what == "grid":
        res = bench_grid(a.index, a.time_mode, tuple(int(x) for x in a.k1.split(",")))
    else:
        res = {"incremental": bench_incremental, "tokens": bench_tokens}[a.what](a.index)
    json.dump(res, sys.stdout)
    print()


if __name__ == "__main__":
    main()
