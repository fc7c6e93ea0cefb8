"""T-GRAG benchmarks: evidence recall@5 by question type (T-GRAG vs vanilla), retrieval latency.

Usage (repo root, .venv active)::

    /usr/bin/time -f "%e s %M KB" chronorag tgrag index ../shared/data/time-longqa/audi_md --out INDEX_DIR
    python benchmarks/bench_tgrag.py recall INDEX_DIR    # evidence recall by question type, latency
    python benchmarks/bench_tgrag.py nodevec INDEX_DIR   # R_node: max_unit vs node_vector (5 texts in total)
    python benchmarks/bench_tgrag.py decomp INDEX_DIR    # rule decomposition: questions with every gold year
    python benchmarks/bench_tgrag.py budget INDEX_DIR    # the 1,600-token budget over graph only vs graph+texts

Evidence recall (:func:`chronorag.metrics.evidence_recall`, the one ``chronorag eval`` uses):
a question counts when every gold evidence passage is found in one of the source texts the
method read (normalised substring, or >= 0.8 of its word trigrams in order with every number
present). Rows of ``recall``:

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
    from chronorag.retrievers.tgrag.index import TGragIndex

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


def _load(index_dir: str):
    from chronorag.retrievers.tgrag.index import TGragIndex

    idx = TGragIndex.load(index_dir)
    qs = [json.loads(line) for line in open(DATA / "time-longqa" / "qa_dev.jsonl")]
    return idx, qs


def _recall_by_type(idx, qs, fn) -> dict:
    from chronorag.metrics import evidence_recall

    by: dict[str, list[float]] = defaultdict(list)
    for q in qs:
        texts = fn(q["question"])
        r = evidence_recall(texts, q["evidence"])
        by[q["type"]].append(r)
        by["all"].append(r)
    return {k: round(sum(v) / len(v), 4) for k, v in sorted(by.items())}


def bench_nodevec(index_dir: str) -> dict:
    """``R_node`` by best knowledge unit vs one vector per node, 5 texts in total."""
    from chronorag.retrievers.tgrag import TGragRetriever

    idx, qs = _load(index_dir)
    out = {}
    for mode in ("max_unit", "node_vector"):
        r = TGragRetriever(idx, per_period_texts=False, node_scoring=mode)
        out[mode] = _recall_by_type(idx, qs, lambda q, r=r: [idx.kg.chunk_text[c] for c in r.retrieve_chunks(q)[0]])
    return out


def bench_decomp(index_dir: str) -> dict:
    """Share of questions whose rule-based sub-questions cover every gold year."""
    from chronorag.retrievers.tgrag import decompose_rule_based

    idx, qs = _load(index_dir)
    by: dict[str, list[int]] = defaultdict(list)
    for q in qs:
        years = {str(y) for y in (q.get("years") or [])}
        got = {s.period for s in decompose_rule_based(q["question"], idx.kg.periods)}
        by[q["type"]].append(int(years <= got) if years else int(got == {None}))
    return {k: {"n": len(v), "all_years_found": round(sum(v) / len(v), 4)} for k, v in sorted(by.items())}


def bench_budget(index_dir: str) -> dict:
    """Evidence recall of the texts that reach the generator under each budget scope."""
    from chronorag.retrievers.tgrag import TGragRetriever

    idx, qs = _load(index_dir)
    out = {}
    for scope in ("graph", "all"):
        r = TGragRetriever(idx, budget_scope=scope)
        tok_g, tok_t = [], []

        def texts(q: str, r: TGragRetriever = r, tok_g: list = tok_g, tok_t: list = tok_t) -> list[str]:
            _, res = r.retrieve_chunks(q)
            ctx = r.build_context(res)
            tok_g.append(ctx["tokens"]["graph"])
            tok_t.append(ctx["tokens"]["texts"])
            return ctx["texts"]

        rec = _recall_by_type(idx, qs, texts)
        out[scope] = {"evidence_recall": rec, "mean_graph_tokens": round(statistics.mean(tok_g), 1),
                      "mean_text_tokens": round(statistics.mean(tok_t), 1)}
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["recall", "nodevec", "decomp", "budget"])
    p.add_argument("index")
    a = p.parse_args()
    fn = {"recall": bench_recall, "nodevec": bench_nodevec, "decomp": bench_decomp, "budget": bench_budget}[a.what]
    json.dump(fn(a.index), sys.stdout)
    print()


if __name__ == "__main__":
    main()
