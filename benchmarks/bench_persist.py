"""Cost of crash-safe index writes and fingerprint checks on ICEWS05-15 (issue 8).

    nice -n 5 python benchmarks/bench_persist.py ../shared/data/icews05-15/icews05-15_full.tsv.gz

Prints one JSON line: the fingerprint time, a versioned ``save`` (new directory, then a
replacement: fsync + link switch) against a plain unversioned ``write``, and a load
(which re-checks the fingerprint).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from chronorag.graphs.io import read_events
from chronorag.graphs.store import TemporalEventStore


def main(path: str) -> None:
    s = read_events(path, progress=False)
    out: dict[str, float | int] = {"events": len(s)}
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        s.fingerprint()
        out["fingerprint_s"] = time.perf_counter() - t
        d = Path(tmp) / "idx"
        t = time.perf_counter()
        s.save(d)
        out["save_new_s"] = time.perf_counter() - t
        t = time.perf_counter()
        s.save(d)
        out["save_replace_s"] = time.perf_counter() - t
        plain = Path(tmp) / "plain"
        plain.mkdir()
        t = time.perf_counter()
        s.write(plain)
        out["plain_write_s"] = time.perf_counter() - t
        t = time.perf_counter()
        TemporalEventStore.load(d)
        out["load_s"] = time.perf_counter() - t
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}))


if __name__ == "__main__":
    main(sys.argv[1])
