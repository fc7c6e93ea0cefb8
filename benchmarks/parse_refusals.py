"""How many benchmark-worded questions the question parser refuses, and why.

Parses every MultiTQ dev and test question (with the ICEWS05-15 span, as the TempTool
reasoner does) and the CronQuestions sample (each row's question and its paraphrases, no span),
and counts the parts reported in ``unsupported`` by kind. A refusal here is an abstention of
the no-LLM TempTool and STAR-RAG paths, so on benchmark wording the count should stay small
and each kind should be a real gap (an ambiguous date, an order other than first or last).

Usage (repo root, .venv active; run with the tree under test on PYTHONPATH)::

    python benchmarks/parse_refusals.py [--examples 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from chronorag.graphs.question import parse_question
from chronorag.graphs.time import parse_time

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def _sets() -> dict[str, tuple[list[str], tuple[int, int] | None]]:
    icews = (parse_time("2005-01-01").lo, parse_time("2016-01-01").lo)
    dev = [json.loads(line)["question"] for line in open(DATA / "multitq" / "test_gold_dev.jsonl")]
    with gzip.open(DATA / "multitq" / "test_questions_text_only.jsonl.gz", "rt") as fh:
        test = [json.loads(line)["question"] for line in fh]
    cron = []
    for line in open(DATA / "cronquestions" / "tool_trajectories_sample.jsonl"):
        q = json.loads(line)["question"]
        cron += [q["question"], *(q.get("paraphrases") or [])]
    return {"multitq-dev": (dev, icews), "multitq-test": (test, icews), "cronquestions-sample": (cron, None)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=int, default=0, help="questions to show per kind")
    a = ap.parse_args()
    for name, (questions, span) in _sets().items():
        kinds: Counter[str] = Counter()
        shown: dict[str, list[str]] = defaultdict(list)
        refused = 0
        for q in questions:
            why = parse_question(q, span=span).unsupported
            refused += bool(why)
            for u in why:
                k = re.sub(r"\s*'[^']*'.*|\s*\(.*", "", u.split(":")[0]).strip() or u[:40]
                kinds[k] += 1
                shown[k].append(q)
        print(json.dumps({"set": name, "questions": len(questions), "refused": refused,
                          "kinds": dict(kinds.most_common())}))
        for k in kinds if a.examples else []:
            for q in shown[k][: a.examples]:
                print(f"  {k}: {q}")


if __name__ == "__main__":
    main()
