"""Readers against a rebuilding writer: failures and changed answers over N trials.

Usage (from the repo root, in .venv)::

    python benchmarks/bench_reader_isolation.py [--trials 200] [--hold-ms 0:60]

A writer process rebuilds one index directory in a loop, alternating between two event
stores that share their entity names at *different* ids (version A: 40 entities,
version B: 64, the common names shifted). The reader, in this process, repeats:
load the index (:meth:`EventIndex.load`), wait a random 0-60 ms (the writer commits
and prunes versions meanwhile), then answer ``Get_tail_entity(head=N, rel=Consult)``
through :class:`TemporalKGTools` -- whose name alignment reads ``entity_vectors.npy``
lazily, the read that used to go through the top-level links -- and also search the
vector index. A trial *fails* when it raises; its answer is *changed* when it differs
from the answer of the version it loaded, computed beforehand on quiet copies.

A deterministic hashing encoder stands in for MiniLM: the point is which file bytes a
reader sees, not embedding quality. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from chronorag.cli import set_offline_env

set_offline_env()

_HEADS = [f"Actor {i:02d}" for i in range(12)]


class HashEncoder:
    """One pseudo-random unit vector per text (deterministic, no model)."""

    model_id = "bench-hash-64"
    dim = 64

    def encode(self, texts):  # noqa: ANN001, ANN201 - the Encoder protocol
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim)
            out[i] = v / np.linalg.norm(v)
        return out


def make_store(version: str):  # noqa: ANN201
    """Version A: each head consults 'Partner A<i>'; B adds 24 names first (ids shift)."""
    from chronorag.graphs.store import EventStoreBuilder

    b = EventStoreBuilder()
    if version == "B":
        for j in range(24):
            b.add(f"Filler {j:02d}", "Visit", f"Filler {(j + 1) % 24:02d}", "2014-03-01")
    for i, h in enumerate(_HEADS):
        b.add(h, "Consult", f"Partner {version}{i:02d}", f"2014-01-{i + 1:02d}")
        b.add(f"Partner {version}{i:02d}", "Praise", h, f"2014-02-{i + 1:02d}")
    return b.build()


_WRITER = r"""
import sys, itertools
sys.path.insert(0, sys.argv[2])
import bench_reader_isolation as b
from chronorag.graphs.event_index import build_event_index
stores = [b.make_store("A"), b.make_store("B")]
print("ready", flush=True)
n = 0
for s in itertools.cycle(stores):
    build_event_index(s, sys.argv[1], encoder=b.HashEncoder(), progress=False)
    n += 1
    with open(sys.argv[3], "w") as fh:
        fh.write(str(n))
"""


def answer(index_dir: Path, head: str, hold_s: float) -> tuple[str, list[str], int]:
    """(store fingerprint, tails of ``head``, top triple row) read from one load."""
    from chronorag.graphs.event_index import EventIndex
    from chronorag.workflows.temptool.tools import TemporalKGTools

    idx = EventIndex.load(index_dir)
    idx.encoder = HashEncoder()
    time.sleep(hold_s)
    tools = TemporalKGTools(idx)
    res = tools.call("Get_tail_entity", {"head": head, "rel": "Consult", "begin_time": "-inf",
                                         "end_time": "inf", "type": "in/on"})
    if res.error:
        raise RuntimeError(f"tool error: {res.error}")
    tails = sorted(json.dumps(r, sort_keys=True) for r in res.rows) + [json.dumps(res.aligned, sort_keys=True)]
    _, rows = idx.search_triples(f"{head} Consult", k=1)
    return idx.store.fingerprint(), tails, int(rows[0])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--hold-ms", default="0:60", help="random wait between load and use, min:max ms")
    args = ap.parse_args()
    lo, hi = (float(x) / 1000 for x in args.hold_ms.split(":"))
    from chronorag.graphs.event_index import build_event_index

    work = Path(tempfile.mkdtemp(prefix="chronorag-isolation-"))
    os.environ.setdefault("CHRONORAG_HOME", str(work / "home"))
    expected: dict[tuple[str, str], tuple[list[str], int]] = {}
    fps = {}
    for v in ("A", "B"):  # the answers of each version, on a quiet copy
        d = work / f"quiet-{v}"
        build_event_index(make_store(v), d, encoder=HashEncoder(), progress=False)
        for h in _HEADS:
            fp, tails, row = answer(d, h, 0.0)
            fps[fp] = v
            expected[(fp, h)] = (tails, row)
    live = work / "live"
    build_event_index(make_store("A"), live, encoder=HashEncoder(), progress=False)
    counter = work / "commits"
    here = str(Path(__file__).resolve().parent)
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(live), here, str(counter)],
                            stdout=subprocess.PIPE, text=True, env={**os.environ})
    rng = random.Random(0)
    failures, changed, seen = 0, 0, {"A": 0, "B": 0}
    examples: list[str] = []
    t0 = time.perf_counter()
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for t in range(args.trials):
            head = _HEADS[t % len(_HEADS)]
            try:
                fp, tails, row = answer(live, head, rng.uniform(lo, hi))
            except Exception as exc:  # noqa: BLE001 - counted, that is the measurement
                failures += 1
                if len(examples) < 5:
                    examples.append(f"{type(exc).__name__}: {exc}"[:300])
                continue
            seen[fps.get(fp, "?")] = seen.get(fps.get(fp, "?"), 0) + 1
            if expected.get((fp, head)) != (tails, row):
                changed += 1
                if len(examples) < 5:
                    examples.append(f"changed: {head} -> {tails} row {row}, expected {expected.get((fp, head))}")
    finally:
        proc.kill()
        proc.wait()
    commits = int(counter.read_text()) if counter.exists() else 0
    print(json.dumps({"trials": args.trials, "failures": failures, "changed_answers": changed,
                      "versions_seen": seen, "writer_commits_during_run": commits,
                      "hold_ms": args.hold_ms, "seconds": round(time.perf_counter() - t0, 1),
                      "examples": examples}))


if __name__ == "__main__":
    main()
