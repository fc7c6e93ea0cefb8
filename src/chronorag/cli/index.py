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


def _check_kind(args: argparse.Namespace) -> str | None:
    """Which index DIR holds now ("memory", "postgres" or None); refuse a kind switch without --replace."""
    from chronorag.errors import OutputExistsError
    from chronorag.graphs.pg_store import holds_memory_index, holds_pg_manifest

    have = "postgres" if holds_pg_manifest(args.out) else "memory" if holds_memory_index(args.out) else None
    want = "postgres" if args.store else "memory"
    if have is not None and have != want and not args.replace:
        what = "an in-memory index" if have == "memory" else "a PostgreSQL index manifest"
        raise OutputExistsError(
            f"{args.out} already holds {what}; ingesting {'into PostgreSQL' if args.store else 'in memory'} "
            "would replace it. Pass --replace to do so, or choose another --out directory")
    if args.append and have is None:
        raise OutputExistsError(f"--append: {args.out} holds no index to append to; run ingest without --append")
    if args.append and have != want:
        raise OutputExistsError(f"--append adds to the index in {args.out} as it is; drop --replace/--store "
                                "or ingest without --append")
    return have


def _ingest(args: argparse.Namespace) -> int:
    from chronorag.graphs.event_index import EventIndex, build_event_index
    from chronorag.graphs.io import read_events

    _check_kind(args)
    t0 = time.perf_counter()
    store = read_events(args.kg, fmt=args.format, on_error=args.on_error, progress=not args.quiet)
    rep = store.load_report
    n_new = len(store)
    if args.append:  # the old events keep their ids; new names extend the vocabularies
        old = EventIndex.load(args.out).store
        store = old.concat(store)
    t_load = time.perf_counter() - t0
    idx: EventIndex
    if args.store:
        from chronorag.graphs.pg_store import build_pg_index

        idx = build_pg_index(store, args.out, args.store, encoder=args.encoder, cache=args.cache,
                             progress=not args.quiet)
    else:
        idx = build_event_index(store, args.out, encoder=args.encoder, cache=args.cache,
                                index_kind=args.index, progress=not args.quiet)
    summary = {
        "index_dir": str(args.out),
        **({"store": _redacted(args.store)} if args.store else {}),
        **({"appended": n_new} if args.append else {}),
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


def _redacted(url: str) -> str:
    from chronorag.graphs.pg_store import redact_url

    return redact_url(url)


def _cmd_info(args: argparse.Namespace) -> int:
    from chronorag.graphs.index_files import IndexFiles

    with IndexFiles(args.index_dir) as files:  # the one loader: fingerprint-checked, clean errors
        name = next((n for n in ("index.json", "topg.json", "tgrag.json", "store.json") if files.has(n)), None)
        if name is None:
            raise files.missing("index.json", "not a chronorag index")
        meta = files.json(name)
    print(json.dumps(meta, indent=1, ensure_ascii=False))
    return 0
