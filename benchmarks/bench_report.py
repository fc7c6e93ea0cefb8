"""Time `chronorag report` on N questions x M runs.

    python benchmarks/bench_report.py synthetic --n 1000 --runs 3      # no index needed
    python benchmarks/bench_report.py files RUN1.jsonl RUN2.jsonl ...  # real run files

``synthetic`` writes M run files of N questions through the real evaluation runner (a stand-in
method answering from ICEWS-like events, 10 evidence texts per question, a few error rows),
then builds the report and prints the wall time of :func:`build_report` and the page size.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from chronorag.evaluation import Prediction, run_eval
from chronorag.evaluation.report import build_report

QTYPES = ["equal", "before_after", "first_last", "after_first", "before_last", "equal_multi"]
NAMES = ["Barack Obama", "China", "France", "Iran", "John Kerry", "Xi Jinping", "Japan", "Germany"]


def synthetic(n: int, runs: int, out: Path) -> list[Path]:
    rng = random.Random(0)
    qs = [{"quid": i, "question": f"Who did {rng.choice(NAMES)} criticize after {rng.choice(NAMES)}?",
           "answers": [rng.choice(NAMES)], "qtype": rng.choice(QTYPES)} for i in range(n)]
    paths = []
    for m in range(runs):
        r = random.Random(m)

        def method(q, r=r):
            if r.random() < 0.01:
                raise RuntimeError("synthetic failure")
            ev = [f"On 2014-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}, {r.choice(NAMES)} criticized or "
                  f"denounced {r.choice(NAMES)}." for _ in range(10)]
            return Prediction(answers=r.sample(NAMES, 3), evidence=ev)

        p = out / f"method{m}.jsonl"
        run_eval(method, qs, out_path=p, progress=False, config={"dataset": "synthetic", "method": f"method{m}"})
        paths.append(p)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("synthetic")
    s.add_argument("--n", type=int, default=1000)
    s.add_argument("--runs", type=int, default=3)
    f = sub.add_parser("files")
    f.add_argument("runs", nargs="+")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-report-"))
    paths = synthetic(args.n, args.runs, tmp) if args.cmd == "synthetic" else [Path(p) for p in args.runs]
    t0 = time.perf_counter()
    page = build_report(paths, tmp / "report")
    dt = time.perf_counter() - t0
    print(json.dumps({"runs": len(paths), "questions": sum(1 for _ in open(paths[0])) - 1,
                      "report_s": round(dt, 2), "html_mb": round(page.stat().st_size / 2**20, 2),
                      "report": str(page)}))


if __name__ == "__main__":
    main()
