"""Time of each question in one process: the dense QA graph without an LLM.

The first no-LLM question on an index loads the index and builds the TempTool aligner that
the constrained reader uses (entity and relation names, their vectors); later questions
reuse both. This prints one JSON line with the seconds of each part.

Usage (repo root, .venv active)::

    python benchmarks/dense_qa_first_question.py INDEX_DIR
"""

from __future__ import annotations

import argparse
import json
import time

QUESTIONS = ("Who did Barack Obama meet in 2014?",
             "Which country did Angela Merkel criticize last in 2015?",
             "Who visited China in March 2012?")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index_dir", help="an index built by `chronorag ingest`")
    args = ap.parse_args()
    t0 = time.perf_counter()
    from chronorag.workflows.dense_qa.graph import _load_index, _reasoner, build_graph

    out: dict[str, object] = {"index": args.index_dir, "import_s": round(time.perf_counter() - t0, 3)}
    t = time.perf_counter()
    _load_index(args.index_dir)
    out["index_load_s"] = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    _reasoner(args.index_dir)
    out["aligner_build_s"] = round(time.perf_counter() - t, 3)
    _load_index.cache_clear()
    _reasoner.cache_clear()
    graph = build_graph(args.index_dir)
    for i, q in enumerate(QUESTIONS, 1):
        t = time.perf_counter()
        graph.invoke({"messages": [("user", q)]})
        out[f"question_{i}_s"] = round(time.perf_counter() - t, 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
