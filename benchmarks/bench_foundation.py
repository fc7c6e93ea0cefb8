"""Foundation benchmarks: store load, lookups, embedding throughput, FAISS latency.

Usage (from the repo root, in .venv)::

    python benchmarks/bench_foundation.py store  [--kg ../shared/data/icews05-15/icews05-15_full.tsv.gz]
    python benchmarks/bench_foundation.py embed  [--n 3000]
    python benchmarks/bench_foundation.py faiss  --index INDEX_DIR
    python benchmarks/bench_foundation.py quality --index INDEX_DIR [--questions ../shared/data/multitq/test_gold_dev.jsonl]

Each prints one JSON object. ``store`` is meant to run in a fresh process so its
peak RSS is the store's alone.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from chronorag.cli import set_offline_env

set_offline_env()
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _pct(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"p50_ms": round(statistics.median(xs) * 1000, 4), "p95_ms": round(xs[int(0.95 * len(xs))] * 1000, 4)}


def bench_store(kg: str) -> dict:
    from chronorag.graphs.io import read_events

    t0 = time.perf_counter()
    store = read_events(kg, progress=False)
    load_s = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rng = np.random.default_rng(0)
    ev = rng.integers(0, len(store), 1000)
    point, sr, ro, rng_q, filt = [], [], [], [], []
    for i in ev:
        e = store.event(int(i))
        t = time.perf_counter(); store.find(subject=e.subject); point.append(time.perf_counter() - t)
        t = time.perf_counter(); store.find(subject=e.subject, relation=e.relation); sr.append(time.perf_counter() - t)
        t = time.perf_counter(); store.find(relation=e.relation, object=e.object); ro.append(time.perf_counter() - t)
        month = e.start[:7]
        t = time.perf_counter(); store.time_range(month, month); rng_q.append(time.perf_counter() - t)
        t = time.perf_counter()
        store.query(subject=e.subject, relation=e.relation, end_time=e.start, type="before")
        filt.append(time.perf_counter() - t)
    return {"kg": kg, "events": len(store), "load_s": round(load_s, 3), "peak_rss_mb": round(rss_mb, 1),
            "find_subject": _pct(point), "find_subject_relation": _pct(sr), "find_relation_object": _pct(ro),
            "time_range_month": _pct(rng_q), "query_sr_before": _pct(filt)}


def bench_embed(n: int) -> dict:
    from chronorag.graphs.encoders import SentenceTransformerEncoder, StaticEncoder
    from chronorag.graphs.event_index import triple_texts
    from chronorag.graphs.io import read_events

    store = read_events(DATA / "icews05-15" / "icews05-15_full.tsv.gz", progress=False)
    first, _ = store.triple_ids()
    texts = triple_texts(store, first[np.random.default_rng(0).permutation(len(first))[:n]])
    out = {"texts": len(texts), "distinct_triples_icews05-15": len(first)}
    for name, enc in (("minilm", SentenceTransformerEncoder()), ("static", StaticEncoder())):
        enc.encode(texts[:64])
        t = time.perf_counter(); enc.encode(texts); dt = time.perf_counter() - t
        out[name] = {"sentences_per_s": round(len(texts) / dt, 1),
                     "projected_icews05-15_embed_min": round(len(first) / (len(texts) / dt) / 60, 2)}
    return out


def bench_faiss(index_dir: str) -> dict:
    from chronorag.graphs.event_index import EventIndex
    from chronorag.graphs.vectors import VectorIndex

    idx = EventIndex.load(index_dir)
    qs = [json.loads(l)["question"] for l in open(DATA / "multitq" / "test_gold_dev.jsonl")]
    qv = idx.encoder.encode(qs)
    out = {"index": index_dir, "vectors": len(idx.vectors), "dim": idx.vectors.dim}
    for kind in ("flat", "hnsw"):
        t = time.perf_counter()
        vi = idx.vectors if kind == idx.vectors.kind else VectorIndex(idx.vectors.vectors, kind=kind)
        build = time.perf_counter() - t
        lat = []
        for v in qv:
            t = time.perf_counter(); vi.search(v, 10); lat.append(time.perf_counter() - t)
        exact = idx.vectors.search(qv, 10)[1] if kind == "hnsw" else None
        got = vi.search(qv, 10)[1]
        recall = None if exact is None else float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got, exact)]))
        out[kind] = {"build_s": round(build, 2), **_pct(lat), "recall@10_vs_flat": recall}
    enc_lat = []
    for q in qs[:100]:
        t = time.perf_counter(); idx.encoder.encode([q]); enc_lat.append(time.perf_counter() - t)
    out["query_embedding"] = _pct(enc_lat)
    return out


def bench_quality(index_dir: str, questions: str) -> dict:
    """Answer recall@10 of the dense baseline (gold among the entities/dates of the top-10 events)."""
    from chronorag.evaluation import load_questions, make_method, run_eval

    method = make_method("dense", index_dir)
    qs = load_questions(questions)
    m = run_eval(method, qs, progress=False, ks=(1, 10, 30))
    return {"index": index_dir, **{k: m[k] for k in ("n", "hits@1", "hits@10", "hits@30", "latency_ms_p50")},
            "by_qtype_hits@30": {g: v["hits@30"] for g, v in m["by_qtype"].items()}}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["store", "embed", "faiss", "quality"])
    p.add_argument("--kg", default=str(DATA / "icews05-15" / "icews05-15_full.tsv.gz"))
    p.add_argument("--n", type=int, default=3000)
    p.add_argument("--index")
    p.add_argument("--questions", default=str(DATA / "multitq" / "test_gold_dev.jsonl"))
    a = p.parse_args()
    res = {"store": lambda: bench_store(a.kg), "embed": lambda: bench_embed(a.n),
           "faiss": lambda: bench_faiss(a.index), "quality": lambda: bench_quality(a.index, a.questions)}[a.what]()
    json.dump(res, sys.stdout)
    print()


if __name__ == "__main__":
    main()
