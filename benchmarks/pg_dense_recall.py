"""Dense search on PostgreSQL + pgvector against FAISS flat (exact) on the same index: how
often the top-k triple rows are identical, recall@k, and latency, for the exact scan and
HNSW at several ``ef_search`` values; the exact search both as the default two passes (a
half-precision first pass, then single precision) and as one single-precision full scan (MultiTQ dev questions, k = 40 as the dense method).
Also against NumPy's exact scores with ties broken by row, and FAISS against NumPy: with a
bag-of-words encoder many triples share a vector, and FAISS orders such ties arbitrarily.

    python benchmarks/pg_dense_recall.py MEM_INDEX_DIR PG_INDEX_DIR DEV.jsonl \
        [--server /tmp/pgbench/server] [--ef 200,400,800] [--k 40] [--n 250]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from chronorag.graphs.event_index import EventIndex
from chronorag.graphs.pg_store import PgVectorIndex
from chronorag.integrations.embedded_pg import EmbeddedPostgres


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mem"), ap.add_argument("pg"), ap.add_argument("dev")
    ap.add_argument("--server", default="/tmp/pgbench/server")
    ap.add_argument("--ef", default="200,400,800")
    ap.add_argument("--k", type=int, default=40)
    ap.add_argument("--n", type=int, default=250)
    a = ap.parse_args()
    qs = [json.loads(line)["question"] for line in open(a.dev)][: a.n]
    mem = EventIndex.load(a.mem)
    qv = mem.encoder.encode(qs)
    t0 = time.perf_counter()
    _, ref = mem.vectors.search(qv, a.k)
    out: dict = {"n": len(qs), "k": a.k, "faiss_flat_ms_per_query": round((time.perf_counter() - t0) / len(qs) * 1000, 2)}
    # exact float32 inner products in NumPy, ties broken by row (what the exact SQL scan orders by)
    vecs = np.asarray(mem.vectors.vectors)
    ref_np = []
    for j in range(len(qs)):
        e = vecs @ qv[j]
        ref_np.append(np.lexsort((np.arange(len(e)), -e))[: a.k])
    out["faiss_vs_numpy"] = {"identical_top_k_lists": sum(bool(np.array_equal(ref[j], ref_np[j])) for j in range(len(qs))),
                             "identical_top_k_sets": sum(set(ref[j].tolist()) == set(ref_np[j].tolist())
                                                         for j in range(len(qs))),
                             "differences_only_among_tied_rows": sum(
                                 all(abs(float(vecs[x] @ qv[j]) - float(vecs[y] @ qv[j])) < 1e-6
                                     for x, y in zip(ref[j], ref_np[j])) for j in range(len(qs)))}
    print("faiss_vs_numpy", out["faiss_vs_numpy"], flush=True)
    with EmbeddedPostgres(a.server):
        pgi = EventIndex.load(a.pg)
        modes = [("exact-full-scan", 0), ("exact", 0)] + [("hnsw", int(e)) for e in a.ef.split(",")]
        for mode, ef in modes:
            vi = PgVectorIndex(pgi.store, search="exact" if mode.startswith("exact") else mode, ef_search=ef or 200)
            if mode == "exact-full-scan":  # the single-precision scan, without the half-precision first pass
                vi._half = False
            lat, same_list, same_set, rec, same_np = [], 0, 0, [], 0
            for j in range(len(qs)):
                t0 = time.perf_counter()
                _, got = vi.search(qv[j], a.k)
                lat.append(time.perf_counter() - t0)
                same_list += bool(np.array_equal(got[0], ref[j]))
                same_np += bool(np.array_equal(got[0], ref_np[j]))
                same_set += set(got[0].tolist()) == set(ref[j].tolist())
                rec.append(len(set(got[0].tolist()) & set(ref[j].tolist())) / a.k)
            name = mode if mode.startswith("exact") else f"hnsw-ef{ef}"
            out[name] = {"passes": dict(vi.counts) if mode.startswith("exact") else None,"identical_top_k_lists": same_list, "identical_top_k_sets": same_set,
                         "identical_to_numpy_exact_lists": same_np,
                         "mean_recall_at_k": round(float(np.mean(rec)), 4),
                         "p50_ms": round(float(np.median(lat)) * 1000, 1),
                         "p95_ms": round(float(np.percentile(lat, 95)) * 1000, 1)}
            print(name, out[name], flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
