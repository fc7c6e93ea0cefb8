"""spaCy extraction time against the length of ONE passage (ToPG and T-GRAG extractors).

Usage::

    python benchmarks/bench_extract.py [--sizes 500,1000,2000] [--kb 300]

The long passage is real text: 2Wiki passages joined end to end into one passage (one
title), cut to N regex sentences, or to ``--kb`` kilobytes. Prints seconds (wall and
CPU) per size for :class:`SpacyPropositionExtractor` (ToPG) and :class:`SpacyExtractor`
(T-GRAG, on the passage cut into its usual ~1,000-token chunks).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
if not DATA.exists():
    DATA = Path("/work/shared/data")


def main() -> None:
    from chronorag.retrievers.tgrag.index import SpacyExtractor, chunk_text
    from chronorag.workflows.topg.extraction import SpacyPropositionExtractor, split_sentences

    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="500,1000,2000")
    p.add_argument("--kb", type=int, default=300)
    a = p.parse_args()
    corpus = json.loads((DATA / "2wiki" / "corpus.json").read_text(encoding="utf-8"))
    sents = [s for c in corpus for s in split_sentences(c["text"])]
    topg, tgrag = SpacyPropositionExtractor(), SpacyExtractor()
    cases = [(f"{n} sentences", " ".join(sents[:n])) for n in (int(x) for x in a.sizes.split(",") if x)]
    text = ""
    for s in sents:
        if len(text) >= a.kb * 1000:
            break
        text += s + " "
    cases.append((f"{len(text) // 1000} KB ({text.count('. ')} sentences)", text))
    out: dict = {"load_avg_start": os.getloadavg()}
    for name, t in cases:
        w, c = time.perf_counter(), time.process_time()
        recs = topg.extract([{"title": "Joined", "text": t}])
        out[f"topg {name}"] = {"wall_s": round(time.perf_counter() - w, 2),
                               "cpu_s": round(time.process_time() - c, 2), "propositions": len(recs)}
        w, c = time.perf_counter(), time.process_time()
        ex = tgrag.extract("p", chunk_text(t))
        out[f"tgrag {name}"] = {"wall_s": round(time.perf_counter() - w, 2),
                                "cpu_s": round(time.process_time() - c, 2), "units": len(ex.units)}
        print(name, out[f"topg {name}"], out[f"tgrag {name}"], file=sys.stderr, flush=True)
    out["load_avg_end"] = os.getloadavg()
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
