"""MiniLM embedding throughput and agreement: sentence-transformers (torch) against ONNX Runtime.

Usage::

    python benchmarks/bench_embed.py [--n 3000] [--threads 2] [--repeat 3] [--backends torch,onnxruntime,openvino]

Two text sets, both real: ``icews`` = random distinct ICEWS05-15 triple sentences (what
``chronorag ingest`` embeds), ``2wiki`` = random 2Wiki passage sentences (what ToPG embeds
as propositions). For each backend: sentences per wall second and per CPU second of this
process (median of ``--repeat`` runs, one warm-up call first; on a shared, loaded machine
the CPU-second figure is the one that compares), and the cosine of every vector with the
torch vector of the same text.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
if not DATA.exists():
    DATA = Path("/work/shared/data")


def texts_icews(n: int) -> list[str]:
    from chronorag.graphs.event_index import triple_texts
    from chronorag.graphs.io import read_events

    store = read_events(DATA / "icews05-15" / "icews05-15_full.tsv.gz", progress=False)
    first, _ = store.triple_ids()
    return triple_texts(store, first[np.random.default_rng(0).permutation(len(first))[:n]])


def texts_2wiki(n: int) -> list[str]:
    from chronorag.workflows.topg.extraction import split_sentences

    corpus = json.loads((DATA / "2wiki" / "corpus.json").read_text(encoding="utf-8"))
    sents = [f"{p['title']}: {s}" for p in corpus for s in split_sentences(p["text"])]
    sents = list(dict.fromkeys(sents))
    idx = np.random.default_rng(0).permutation(len(sents))[:n]
    return [sents[i] for i in idx]


def make(backend: str, threads: int):  # noqa: ANN201
    if backend == "torch":
        import torch

        torch.set_num_threads(threads)
        from chronorag.graphs.encoders import SentenceTransformerEncoder

        return SentenceTransformerEncoder()
    from chronorag.graphs.onnx_bert import OnnxMiniLMEncoder

    return OnnxMiniLMEncoder(threads=threads, runtime=backend)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=3000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--backends", default="torch,onnxruntime,openvino")
    a = p.parse_args()
    sets = {"icews": texts_icews(a.n), "2wiki": texts_2wiki(a.n)}
    out: dict = {"n": a.n, "threads": a.threads, "load_avg_start": os.getloadavg()}
    vecs: dict = {}
    for b in a.backends.split(","):
        t = time.perf_counter()
        enc = make(b, a.threads)
        out[f"{b}_load_s"] = round(time.perf_counter() - t, 2)
        for name, texts in sets.items():
            enc.encode(texts[:64])
            runs, cpu = [], []
            for _ in range(a.repeat):
                t, c = time.perf_counter(), time.process_time()
                v = enc.encode(texts)
                runs.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
            vecs[(b, name)] = v
            out[f"{b}_{name}"] = {"sent_per_wall_s": round(len(texts) / statistics.median(runs), 1),
                                  "sent_per_cpu_s": round(len(texts) / statistics.median(cpu), 1)}
    backends = a.backends.split(",")
    if "torch" in backends:
        for b in backends[1:]:
            for name in sets:
                cos = np.sum(vecs[("torch", name)] * vecs[(b, name)], axis=1)
                r = out[f"{b}_{name}"]
                r["cosine_to_torch_min"] = round(float(cos.min()), 6)
                r["cosine_to_torch_mean"] = round(float(cos.mean()), 6)
                r["speedup_cpu_s"] = round(r["sent_per_cpu_s"] / out[f"torch_{name}"]["sent_per_cpu_s"], 2)
    out["load_avg_end"] = os.getloadavg()
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
