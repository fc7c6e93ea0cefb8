"""StarRAGPGRetriever construction time: cold, again in the same process, and in a new process.

Usage: python benchmarks/bench_pg_cache.py [--home DIR]

The bundled ICEWS14 sample (9,165 events) is exported into an in-memory
SimplePropertyGraphStore; each construction reads the events back from it. "cold" builds
the derived index (embedding + rule graph) under an empty $CHRONORAG_HOME; "same process"
constructs again (memo); "new process" runs a child process that finds the derived index
on disk. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, time
from llama_index.core.graph_stores import SimplePropertyGraphStore
from chronorag.cli import bundled_sample_path
from chronorag.graphs.io import read_events
from chronorag.integrations.property_graph import export_to_property_graph
from chronorag.retrievers.star_rag import StarRAGPGRetriever
pg = SimplePropertyGraphStore()
export_to_property_graph(read_events(bundled_sample_path(), progress=False), pg)
t = time.perf_counter(); r = StarRAGPGRetriever(pg); s = time.perf_counter() - t
print(json.dumps({"s": round(s, 2), "from_cache": r.derived_from_cache}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", default=None, help="CHRONORAG_HOME (default: a new empty folder)")
    args = ap.parse_args()
    os.environ["CHRONORAG_HOME"] = args.home or tempfile.mkdtemp(prefix="chronorag-bench-")
    from llama_index.core.graph_stores import SimplePropertyGraphStore

    from chronorag.cli import bundled_sample_path
    from chronorag.graphs.io import read_events
    from chronorag.integrations.property_graph import export_to_property_graph
    from chronorag.retrievers.star_rag import StarRAGPGRetriever

    pg = SimplePropertyGraphStore()
    export_to_property_graph(read_events(bundled_sample_path(), progress=False), pg)
    out = {}
    for label in ("cold", "same_process"):
        t = time.perf_counter()
        r = StarRAGPGRetriever(pg)
        out[f"{label}_s"] = round(time.perf_counter() - t, 2)
        out[f"{label}_from_cache"] = r.derived_from_cache
    child = json.loads(subprocess.run([sys.executable, "-c", CHILD], check=True, capture_output=True,
                                      text=True, env=os.environ).stdout.strip().splitlines()[-1])
    out["new_process_s"], out["new_process_from_cache"] = child["s"], child["from_cache"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
