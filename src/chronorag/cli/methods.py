"""Method index builders: ``chronorag star-rag build``, ``chronorag tgrag index``, ``chronorag topg index``."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def _cmd_star_build(args: argparse.Namespace) -> int:
    from chronorag.errors import IndexFormatError
    from chronorag.graphs.persist import index_lock, is_index_dir, snapshot
    from chronorag.graphs.store import TemporalEventStore
    from chronorag.retrievers.star_rag.rule_graph import RuleGraphConfig, build_rule_graph

    d = Path(args.index_dir)
    if not is_index_dir(d):
        raise IndexFormatError(f"{d} is not a chronorag index directory; build one with "
                               "`chronorag ingest KG.tsv.gz --out DIR`")
    with index_lock(d):  # the rule graph is added as a new version of the index (atomic)
        if (snapshot(d) / "postgres.json").exists():  # the events live in PostgreSQL: read them once
            from chronorag.graphs.event_index import EventIndex
            from chronorag.graphs.pg_store import PgEventStore

            pg = EventIndex.load(d).store
            assert isinstance(pg, PgEventStore)  # an index with postgres.json opens as one
            store = pg.to_memory()
        else:
            store = TemporalEventStore.load(d)
        cfg = RuleGraphConfig(min_support=args.min_support, k_type=args.k_type, window_days=args.window_days)
        t0 = time.perf_counter()
        rg = build_rule_graph(store, config=cfg, progress=not args.quiet)
        rg.save(d)
    print(json.dumps({**{k: v for k, v in rg.stats.items()}, "total_s": round(time.perf_counter() - t0, 2)}))
    return 0


def _cmd_tgrag_index(args: argparse.Namespace) -> int:
    from chronorag.retrievers.tgrag.index import read_period_documents

    docs = read_period_documents(args.docs, period=args.period)
    extractor = None
    if args.llm_url:
        from chronorag.integrations.llm import LLMConfig
        from chronorag.retrievers.tgrag.index import LLMExtractor

        extractor = LLMExtractor(LLMConfig(base_url=args.llm_url))
    t0 = time.perf_counter()
    from chronorag.graphs.persist import index_lock

    with index_lock(args.out):
        idx = _tgrag_write(args, docs, extractor)
    print(json.dumps({**{k: v for k, v in idx.meta.items() if k != "format"}, "total_s": round(time.perf_counter() - t0, 2)}))
    return 0


def _tgrag_write(args: argparse.Namespace, docs: Any, extractor: Any) -> Any:
    from chronorag.retrievers.tgrag.index import add_period, build_tgrag_index

    if args.add:
        idx = add_period(args.out, docs, extractor=extractor, cache=args.cache, progress=not args.quiet)
    else:
        idx = build_tgrag_index(docs, args.out, extractor=extractor, encoder=args.encoder, cache=args.cache,
                                chunk_tokens=args.chunk_tokens, progress=not args.quiet)
    return idx


def _cmd_topg_index(args: argparse.Namespace) -> int:
    from chronorag.workflows.topg.index import add_documents, build_topg_index, read_corpus

    passages = read_corpus(args.corpus)
    llm = None
    if args.llm_url:
        from chronorag.integrations.llm import LLMConfig

        llm = LLMConfig(base_url=args.llm_url)
    from chronorag.graphs.persist import index_lock

    with index_lock(args.out):  # one writer; a foreign --out is refused before any work
        if args.add:
            _, summary = add_documents(args.out, passages, llm=llm, cache=args.cache, progress=not args.quiet)
        else:
            _, summary = build_topg_index(passages, args.out, encoder=args.encoder, llm=llm, cache=args.cache,
                                          communities=not args.no_communities, progress=not args.quiet)
    print(json.dumps(summary, ensure_ascii=False))
    return 0
