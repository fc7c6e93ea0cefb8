"""T-GRAG benchmarks: evidence recall@5 by question type (T-GRAG vs vanilla), retrieval latency.

Usage (repo root, .venv active)::

    /usr/bin/time -f "%e s %M KB" chronorag tgrag index ../shared/data/time-longqa/audi_md --out INDEX_DIR
    python benchmarks/bench_tgrag.py recall INDEX_DIR

Evidence recall: a question counts when every gold evidence passage is found in one of the
retrieved source texts (normalised substring, or >= 0.8 of its tokens). Rows:

- ``t-grag``: t=5 source texts per sub-question (the paper's setting);
- ``t-grag (5 in total)``: the sub-questions' texts interleaved, 5 in total;
- ``vanilla@5``: dense top-5 chunks;
- ``vanilla@matched``: dense top-(5 x number of sub-questions), T-GRAG's chunk budget.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from chronorag.cli import set_offline_env

set_offline_env()
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def bench_recall(index_dir: str) -> dict:
    from chronorag.metrics import evidence_recall
    from chronorag.retrievers.tgrag import TGragRetriever, VanillaChunkRetriever
    from chronorag.retrievers.tgrag_index import TGragIndex

    idx = TGragIndex.load(index_dir)
    qs = [json.loads(line) for line in open(DATA / "time-longqa" / "qa_dev.jsonl")]
    tg = TGragRetriever(idx)
    tg5 = TGragRetriever(idx, per_period_texts=False)
    va = VanillaChunkRetriever(idx)
    vbig = VanillaChunkRetriever(idx, t_texts=60)
    tg.retrieve_chunks(qs[0]["question"])
    runs = {
        "t-grag": lambda q: tg.retrieve_chunks(q)[0],
        "t-grag (5 in total)": lambda q: tg5.retrieve_chunks(q)[0],
        "vanilla@5": va.retrieve_chunks,
        "vanilla@matched": lambda q: vbig.retrieve_chunks(q)[: 5 * len(tg.sub_questions(q))],
    }
    out: dict = {}
    for name, fn in runs.items():
        by: dict[str, list[float]] = defaultdict(list)
        lat, n_texts = [], []
        for q in qs:
            t = time.perf_counter()
            ids = fn(q["question"])
            lat.append((time.perf_counter() - t) * 1000)
            n_texts.append(len(ids))
            r = evidence_recall([idx.kg.chunk_text[c] for c in ids], q["evidence"])
            by[q["type"]].append(r)
            by["all"].append(r)
        lat.sort()
        out[name] = {"evidence_recall": {k: round(sum(v) / len(v), 4) for k, v in sorted(by.items())},
                     "mean_texts": round(sum(n_texts) / len(n_texts), 2),
                     "latency_ms": {"p50": round(statistics.median(lat), 1),
                                    "p95": round(lat[int(0.95 * (len(lat) - 1))], 1)}}
    out["n"] = {k: sum(1 for q in qs if q["type"] == k) for k in ("single", "dual", "multi", "none")}
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["recall"])
    p.add_argument("index")
    a = p.parse_args()
    json.dump(bench_recall(a.index), sys.stdout)
    print()


if __name__ == "__main__":
    main()
