#!/usr/bin/env bash
# Held-out free-wording benchmark (benchmarks/free_wording_heldout.py): tools, star-rag, dense over
# ICEWS14 and the civic KG, for the code on PYTHONPATH (default: this tree's src).
# Usage (repo root, .venv active):
#   bash benchmarks/free_wording_heldout.sh ICEWS14_INDEX OUT_DIR LABEL [ENCODER]
# ICEWS14_INDEX: chronorag ingest ../shared/data/icews14/icews14_full.tsv.gz --out ICEWS14_INDEX [--encoder static]
#                && chronorag star-rag build ICEWS14_INDEX
# ENCODER: "static" (default) or "default" (the civic KG index is built with it).
# Then: python benchmarks/free_wording_heldout.py score OUT_DIR/runs/*-LABEL.jsonl [--split test]
set -euo pipefail
IDX=$1; OUT=$2; LABEL=$3; ENC=${4:-static}
SRC=${SRC:-$(cd "$(dirname "$0")/.." && pwd)/src}
mkdir -p "$OUT/runs"
[ -f "$OUT/civic.tsv" ] || python benchmarks/free_wording_heldout.py civic-kg --out "$OUT/civic.tsv"
CIVIC=$OUT/civic_$ENC
encopt=""; [ "$ENC" = static ] && encopt="--encoder static"
[ -d "$CIVIC" ] || chronorag -q ingest "$OUT/civic.tsv" --out "$CIVIC" $encopt > /dev/null
[ -f "$CIVIC/rule_graph.json" ] || chronorag -q star-rag build "$CIVIC" > /dev/null
[ -f "$OUT/q/icews14.jsonl" ] || python benchmarks/free_wording_heldout.py build --icews "$IDX" --civic "$CIVIC" --out "$OUT/q"
for m in tools star-rag dense; do
  for kg in icews14 civic; do
    idx=$IDX; [ $kg = civic ] && idx=$CIVIC
    PYTHONPATH=$SRC python benchmarks/free_wording_heldout.py run --method $m --questions "$OUT/q/$kg.jsonl" \
      --index "$idx" --out "$OUT/runs/$m-$LABEL-$ENC-$kg.jsonl"
  done
  cat "$OUT/runs/$m-$LABEL-$ENC-icews14.jsonl" "$OUT/runs/$m-$LABEL-$ENC-civic.jsonl" > "$OUT/runs/$m-$LABEL-$ENC.jsonl"
done
