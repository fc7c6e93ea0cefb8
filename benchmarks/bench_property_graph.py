"""Export ICEWS14 into a property-graph store and read it back; time and memory.

Usage::

    python benchmarks/bench_property_graph.py --store ladybug|kuzu|simple \
        [--kg ../shared/data/icews14/icews14_full.tsv.gz]

Prints one JSON line: events, export_s, export_events_per_s, readback_s, exact (the
read-back store equals the original event for event), peak_rss_mb. Run each store in its
own process (Kuzu and Ladybug cannot be loaded into one).
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", choices=["ladybug", "kuzu", "simple"], required=True)
    ap.add_argument("--kg", default=str(Path(__file__).resolve().parents[2] / "shared/data/icews14/icews14_full.tsv.gz"))
    ap.add_argument("--batch-size", type=int, default=10_000)
    args = ap.parse_args()

    from chronorag.graphs.io import read_events
    from chronorag.integrations.property_graph import (
        export_to_property_graph,
        store_from_property_graph,
    )

    store = read_events(args.kg, progress=False)
    tmp = tempfile.mkdtemp(prefix="bench_pg_")
    if args.store == "ladybug":
        import ladybug as lb
        from llama_index.graph_stores.ladybug import LadybugPropertyGraphStore

        open_pg = lambda: LadybugPropertyGraphStore(lb.Database(f"{tmp}/db"), use_vector_index=False)  # noqa: E731
    elif args.store == "kuzu":
        import kuzu
        from llama_index.graph_stores.kuzu import KuzuPropertyGraphStore

        open_pg = lambda: KuzuPropertyGraphStore(kuzu.Database(f"{tmp}/db"), use_vector_index=False)  # noqa: E731
    else:
        from llama_index.core.graph_stores import SimplePropertyGraphStore

        simple = SimplePropertyGraphStore()
        open_pg = lambda: simple  # noqa: E731
    pg = open_pg()
    t0 = time.perf_counter()
    n = export_to_property_graph(store, pg, batch_size=args.batch_size)
    t_exp = time.perf_counter() - t0
    if args.store != "simple":
        del pg
        pg = open_pg()  # read back from a freshly opened database
    t0 = time.perf_counter()
    back = store_from_property_graph(pg)
    t_back = time.perf_counter() - t0
    exact = len(back) == len(store) and all(
        a.__dict__ == b.__dict__ for a, b in zip(back, store))
    print(json.dumps({"store": args.store, "events": n, "entities": len(store.entities),
                      "export_s": round(t_exp, 2), "export_events_per_s": round(n / t_exp),
                      "readback_s": round(t_back, 2), "exact": exact,
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))


if __name__ == "__main__":
    main()
