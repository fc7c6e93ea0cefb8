"""``chronorag ingest`` and ``chronorag info``: build and describe an event index directory."""

from __future__ import annotations

import argparse
import json
import sys
import time


def _cmd_ingest(args: argparse.Namespace) -> int:
    from chronorag.graphs.persist import index_lock

    # the writer lock is held for the whole run: a second ingest into DIR fails at once
    with index_lock(args.out):
        return _ingest(args)


def _ingest(args: argparse.Namespace) -> int:
    from chronorag.graphs.event_index import build_event_index
    from chronorag.graphs.io import read_events

    t0 = time.perf_counter()
    store = read_events(args.kg, fmt=args.format, on_error=args.on_error, progress=not args.quiet)
    t_load = time.perf_counter() - t0
    idx = build_event_index(store, args.out, encoder=args.encoder, cache=args.cache,
                            index_kind=args.index, progress=not args.quiet)
    rep = store.load_report
    summary = {
        "index_dir": str(args.out),
        "events": len(store),
        "entities": len(store.entities),
        "relations": len(store.relations),
        "distinct_triples": idx.meta["n_triples"],
        "embedded_now": idx.meta["n_embedded"],
        "skipped_lines": rep.n_skipped if rep else 0,
        "encoder": idx.meta["model_id"],
        "load_s": round(t_load, 2),
        **{k: round(v, 2) for k, v in idx.meta["timings"].items()},
        "total_s": round(time.perf_counter() - t0, 2),
    }
    if rep and rep.n_skipped:
        print(f"skipped {rep.n_skipped} malformed lines, e.g. {rep.examples[0]}", file=sys.stderr)
    print(json.dumps(summary, ensure_ascii=False))
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from chronorag.graphs.index_files import IndexFiles

    with IndexFiles(args.index_dir) as files:  # the one loader: fingerprint-checked, clean errors
        name = next((n for n in ("index.json", "topg.json", "tgrag.json", "store.json") if files.has(n)), None)
        if name is None:
            raise files.missing("index.json", "not a chronorag index")
        meta = files.json(name)
    print(json.dumps(meta, indent=1, ensure_ascii=False))
    return 0
