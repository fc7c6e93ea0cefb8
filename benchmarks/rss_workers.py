"""Memory of N worker processes serving one index: memory-mapped load vs the in-RAM load.

Each worker loads the index, builds the TempTool tools and answers a few tool calls and
dense searches (touching the store, the sorted indexes and every vector), then reports
/proc/self/smaps_rollup while all N are alive:

- RSS: resident pages, shared ones included (a mapped file counts in every worker);
- PSS: each shared page divided among the processes mapping it;
- USS: private pages only, i.e. what one more worker adds to the machine.

On a PostgreSQL-backed index (a directory with a manifest; the server must be running)
each worker also has one server backend process: its RSS/PSS/USS are reported as
``backend_*`` (what one more worker adds is then the worker's USS plus its backend's;
the server's shared buffers are shared by all and not counted per worker).

    python benchmarks/rss_workers.py INDEX_DIR --workers 4 --mode mmap
    python benchmarks/rss_workers.py INDEX_DIR --workers 4 --mode ram      # the load before mmap
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

WORKER = r"""
import json, os, sys, time
import numpy as np
d, mode, go = sys.argv[1], sys.argv[2], sys.argv[3]
from chronorag.graphs.event_index import EventIndex
from chronorag.graphs.persist import snapshot, read_json
if mode == "mmap":
    idx = EventIndex.load(d, gpu=False)
else:  # what load() did before: arrays read into RAM, sorted indexes rebuilt, FAISS rebuilt
    from chronorag.graphs.store import TemporalEventStore
    from chronorag.graphs.vectors import VectorIndex
    v = snapshot(d)
    store = TemporalEventStore.load(v, mmap=False)
    vec = VectorIndex(np.load(v / "vectors.npy"), kind="flat", gpu=False)
    idx = EventIndex(store=store, triples=np.load(v / "triples.npy"),
                     triple_of_event=np.load(v / "triple_of_event.npy"), vectors=vec,
                     meta=read_json(v / "index.json"), path=None)
    idx._name_vectors = {k: np.load(v / f"{k}_vectors.npy") for k in ("entity", "relation")}
from chronorag.workflows.temptool.tools import TemporalKGTools
tools = TemporalKGTools(idx)
for h, r in [("European Central Bank", "criticize"), ("China", "make a visit"), ("Barack Obama", "consult")]:
    tools.get_tail_entity(head=h, rel=r, begin_time="2012", end_time="2013")
for q in ["Who did the ECB criticize?", "Who visited China in 2010?", "Whom did Obama consult?"]:
    scores, rows = idx.search_triples(q, 40)
    idx.expand_triples(rows, 10)
conn = getattr(idx.store, "_conn", None)  # a PostgreSQL-backed index: the server process serving us
print("ready", conn.info.backend_pid if conn is not None else 0, flush=True)
while not os.path.exists(go):
    time.sleep(0.05)
"""


def _smaps(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        k, v = line.split(":", 1)
        out[k.strip()] = int(v.split()[0])
    return {"rss_mb": out["Rss"] / 1024, "pss_mb": out["Pss"] / 1024,
            "uss_mb": (out["Private_Clean"] + out["Private_Dirty"]) / 1024}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("index_dir")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--mode", choices=["mmap", "ram"], default="mmap")
    a = ap.parse_args()
    go = Path(f"/tmp/rss-go-{os.getpid()}")
    go.unlink(missing_ok=True)
    procs: list[subprocess.Popen] = []
    backends: list[int] = []
    t0 = time.perf_counter()
    for _ in range(a.workers):  # one after another, as a server's workers fork/spawn
        p = subprocess.Popen([sys.executable, "-c", WORKER, a.index_dir, a.mode, str(go)],
                             stdout=subprocess.PIPE, text=True)
        assert p.stdout is not None
        line = p.stdout.readline().split()
        assert line and line[0] == "ready", line
        procs.append(p)
        backends.append(int(line[1]))
    load_s = time.perf_counter() - t0
    rows = [_smaps(p.pid) for p in procs]
    server = [_smaps(b) for b in backends if b]  # one PostgreSQL backend per worker connection
    go.touch()
    for p in procs:
        p.wait()
    go.unlink(missing_ok=True)
    mean = {k: round(sum(r[k] for r in rows) / len(rows), 1) for k in rows[0]}
    print(json.dumps({"mode": a.mode, "workers": a.workers, "per_worker": [{k: round(v, 1) for k, v in r.items()}
                                                                          for r in rows],
                      "mean": mean, "sum_pss_mb": round(sum(r["pss_mb"] for r in rows), 1),
                      "start_all_s": round(load_s, 1),
                      **({"backend_per_worker": [{k: round(v, 1) for k, v in r.items()} for r in server],
                          "backend_mean": {k: round(sum(r[k] for r in server) / len(server), 1) for k in server[0]}}
                         if server else {})}))


if __name__ == "__main__":
    main()
