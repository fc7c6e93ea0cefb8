"""TempTool-R1 benchmarks: no-LLM reasoner accuracy, planner coverage, tool-call latency, alignment.

Usage (repo root, .venv active; INDEX_DIR from `chronorag ingest .../icews05-15_full.tsv.gz --out INDEX_DIR`)::

    python benchmarks/bench_temptool.py dev INDEX_DIR        # Hits@1 on the 250 MultiTQ dev questions
    python benchmarks/bench_temptool.py coverage INDEX_DIR   # share of the 54,332 test questions given a program
    python benchmarks/bench_temptool.py tools INDEX_DIR      # per tool-call latency
    python benchmarks/bench_temptool.py align INDEX_DIR      # alignment accuracy on dev-question phrases
    python benchmarks/bench_temptool.py scores INDEX_DIR     # alignment scores: dev phrases vs. made-up names

Each prints one JSON object.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from chronorag.cli import set_offline_env

set_offline_env()
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


MIN_SCORE: float | None = None  # --min-score; None = the library default


def _reasoner(index_dir: str):
    from chronorag.graphs.event_index import EventIndex
    from chronorag.workflows.temptool.reasoner import TemporalReasoner
    from chronorag.workflows.temptool.tools import MIN_ALIGNMENT_SCORE, TemporalKGTools

    tools = TemporalKGTools(EventIndex.load(index_dir),
                            min_score=MIN_ALIGNMENT_SCORE if MIN_SCORE is None else MIN_SCORE)
    return tools, TemporalReasoner(tools)


def _pct(xs):
    xs = sorted(xs)
    return {"p50_ms": round(statistics.median(xs), 2), "p95_ms": round(xs[int(0.95 * (len(xs) - 1))], 2)}


def bench_dev(index_dir: str) -> dict:
    from chronorag.metrics import hits_at_k

    _, r = _reasoner(index_dir)
    rows = [json.loads(line) for line in open(DATA / "multitq" / "test_gold_dev.jsonl")]
    r.answer(rows[0]["question"])  # warm-up
    by: dict[str, list[float]] = defaultdict(list)
    lat, unanswerable = [], []
    for row in rows:
        res = r.answer(row["question"])
        lat.append(res.latency_ms)
        h = hits_at_k(res.answers, row["answers"], 1) if res.answers else 0.0
        for key in ("all", f"qtype:{row['qtype']}", f"answer_type:{row.get('answer_type')}",
                    f"label:{row.get('qlabel_derived')}"):
            by[key].append(h)
        if not res.answers:
            unanswerable.append(row["quid"])
    return {"n": len(rows), "hits@1": round(sum(by["all"]) / len(rows), 4),
            "by": {k: {"n": len(v), "hits@1": round(sum(v) / len(v), 4)} for k, v in sorted(by.items()) if k != "all"},
            "no_answer": len(unanswerable), "question_latency": _pct(lat)}


def bench_coverage(index_dir: str, limit: int | None) -> dict:
    from chronorag.graphs.question import parse_question

    _, r = _reasoner(index_dir)
    qs = [json.loads(line)["question"] for line in gzip.open(DATA / "multitq" / "test_questions_text_only.jsonl.gz", "rt")]
    if limit:
        qs = qs[:limit]
    qtypes: Counter[str] = Counter()
    planned = 0
    t0 = time.perf_counter()
    for q in qs:
        sk = parse_question(q)
        qtypes[sk.qtype] += 1
        if r.plan(sk) is not None:
            planned += 1
    return {"questions": len(qs), "with_program": planned, "coverage": round(planned / len(qs), 4),
            "parsed_qtypes": dict(qtypes), "seconds": round(time.perf_counter() - t0, 1)}


def bench_tools(index_dir: str) -> dict:
    tools, r = _reasoner(index_dir)
    rows = [json.loads(line) for line in open(DATA / "multitq" / "test_gold_dev.jsonl")]
    lat: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        res = r.answer(row["question"])
        for c in res.calls:
            t = time.perf_counter()
            tools._align_cache.clear()  # time alignment and embedding too, not cache hits
            tools._vec_cache.clear()
            tools.call(c["name"], c["arguments"])
            lat[c["name"]].append((time.perf_counter() - t) * 1000)
    allcalls = [x for v in lat.values() for x in v]
    return {"calls": len(allcalls), "all": _pct(allcalls), **{k: {"n": len(v), **_pct(v)} for k, v in lat.items()}}


def bench_align(index_dir: str) -> dict:
    """Alignment accuracy, measured by reachability (the dev set has no gold alignments).

    A question's entity and relation phrases count as aligned correctly when the tool
    calls made with the aligned names return the gold answer anywhere in their answers
    (Hits@all): a wrong entity or relation almost never yields the gold answer, so
    this bounds alignment errors from above. Reported per qtype.
    """
    from chronorag.metrics import answer_matches

    _, r = _reasoner(index_dir)
    rows = [json.loads(line) for line in open(DATA / "multitq" / "test_gold_dev.jsonl")]
    by: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        res = r.answer(row["question"])
        found = int(any(answer_matches(a, g) for a in res.answers for g in row["answers"]))
        by["all"].append(found)
        by[row["qtype"]].append(found)
    return {k: {"n": len(v), "reachable": round(sum(v) / len(v), 4)} for k, v in by.items()}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["dev", "coverage", "tools", "align"])
    p.add_argument("index")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--min-score", type=float, default=None,
                   help="alignment no-match threshold (default: the library's; 0 disables it)")
    a = p.parse_args()
    global MIN_SCORE
    MIN_SCORE = a.min_score
    res = {"dev": lambda: bench_dev(a.index), "coverage": lambda: bench_coverage(a.index, a.limit),
           "tools": lambda: bench_tools(a.index), "align": lambda: bench_align(a.index)}[a.what]()
    json.dump(res, sys.stdout)
    print()


if __name__ == "__main__":
    main()
