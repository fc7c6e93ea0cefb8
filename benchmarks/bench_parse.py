"""Question-parse latency (graphs/question.py, no KG access): ms per question.

Usage: python benchmarks/bench_parse.py QUESTIONS.jsonl [QUESTIONS.jsonl ...]
Prints one JSON object: n, mean and p50/p95 ms per question (best of 3 runs per question).
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from chronorag.graphs.question import parse_question
from chronorag.graphs.time import parse_time


def main() -> None:
    qs = [json.loads(line)["question"] for p in sys.argv[1:] for line in open(p) if line.strip()]
    span = (parse_time("2005-01-01").lo, parse_time("2016-01-01").lo)
    best: list[float] = []
    for q in qs:  # per question, the best of 3 runs (the machine is shared; this removes load spikes)
        t = []
        for _ in range(3):
            t0 = time.perf_counter()
            parse_question(q, span=span)
            t.append((time.perf_counter() - t0) * 1000)
        best.append(min(t))
    best.sort()
    print(json.dumps({"n": len(qs), "mean_ms": round(statistics.mean(best), 3),
                      "p50_ms": round(statistics.median(best), 3), "p95_ms": round(best[int(0.95 * (len(best) - 1))], 3), "max_ms": round(best[-1], 3)}))


if __name__ == "__main__":
    main()
