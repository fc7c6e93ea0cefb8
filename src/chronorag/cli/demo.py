"""``chronorag demo``: the whole suite on the bundled sample, offline."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from chronorag.cli._common import (
    bundled_sample_path,
)

DEMO_QUESTIONS = [
    "After France, who did Barack Obama criticize first?",
    "When did Xi Jinping first visit France?",
    "In which month did John Kerry first negotiate with Mohammad Javad Zarif?",
    "Who did Catherine Ashton consult on the same day as Iran?",
]


def _cmd_demo(args: argparse.Namespace) -> int:
    from chronorag.graphs.persist import index_lock

    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="chronorag-demo-"))
    with index_lock(out):
        return _demo(args, out)


def _demo(args: argparse.Namespace, out: Path) -> int:
    from chronorag.graphs.event_index import build_event_index
    from chronorag.graphs.io import read_events
    from chronorag.retrievers.dense import DenseEventRetriever

    print("chronorag demo: offline, no LLM (symbolic temporal reasoning over the KG, dense retrieval for contrast)")
    print(f"1. ingest the bundled sample ({bundled_sample_path().name}) into {out}")
    store = read_events(bundled_sample_path(), progress=not args.quiet)
    idx = build_event_index(store, out, encoder=args.encoder, cache=args.cache,
                            progress=not args.quiet)
    print(f"   {store!r}; {idx.meta['n_triples']} distinct triples embedded with {idx.meta['model_id']}")
    print("2. symbolic lookup: when did John Kerry consult Sergey Lavrov in March 2014?")
    ids = store.query(subject="John Kerry", relation="Consult", object="Sergey Viktorovich Lavrov",
                      begin_time="2014-03", end_time="2014-03", type="in/on")
    print("   " + ", ".join(store.start_text(int(i)) for i in ids))
    print("3. TempTool tools + no-LLM temporal reasoner (question form -> tool calls -> ranked answers)")
    from chronorag.workflows.temptool.reasoner import TemporalReasoner
    from chronorag.workflows.temptool.tools import TemporalKGTools

    reasoner = TemporalReasoner(TemporalKGTools(idx))
    for q in DEMO_QUESTIONS:
        res = reasoner.answer(q)
        calls = " -> ".join(c["name"] for c in res.calls)
        print(f"   Q: {q}\n      A: {', '.join(res.answers[:3]) or '(none)'}   [{calls}]")
    q = DEMO_QUESTIONS[0]
    print(f"4. for contrast, time-blind dense retrieval for: {q}")
    for nws in DenseEventRetriever(idx, similarity_top_k=3).retrieve(q):
        print(f"      {nws.score:.3f}  {nws.node.get_content()}")
    print(f"index kept at {out}; try: chronorag ask {out} \"Who did Barack Obama praise first after Japan?\" --method tools")
    return 0
