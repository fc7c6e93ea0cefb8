#!/usr/bin/env bash
# Free-wording benchmark: before (a tree given as $1, e.g. /work/main/src at the base commit) and after
# (this tree) for tools, star-rag and dense. Usage (repo root, .venv active):
#   bash benchmarks/free_wording.sh BEFORE_SRC ICEWS14_INDEX OUT_DIR
# ICEWS14_INDEX: chronorag ingest ../shared/data/icews14/icews14_full.tsv.gz --out ICEWS14_INDEX --encoder static
#                && chronorag star-rag build ICEWS14_INDEX
set -euo pipefail
BEFORE=$1; IDX=$2; OUT=$3
AFTER=$(cd "$(dirname "$0")/.." && pwd)/src
mkdir -p "$OUT/runs"
python benchmarks/free_wording.py business-kg --out "$OUT/business.tsv"
[ -d "$OUT/business" ] || chronorag -q ingest "$OUT/business.tsv" --out "$OUT/business" --encoder static
[ -f "$OUT/business/rule_graph.json" ] || chronorag -q star-rag build "$OUT/business" > /dev/null
python benchmarks/free_wording.py build --icews "$IDX" --business "$OUT/business" --out "$OUT"
for tree in before after; do
  src=$AFTER; [ $tree = before ] && src=$BEFORE
  for m in tools star-rag dense; do
    for kg in icews14 business; do
      idx=$IDX; [ $kg = business ] && idx=$OUT/business
      PYTHONPATH=$src python benchmarks/free_wording.py run --method $m --questions "$OUT/$kg.jsonl" \
        --index "$idx" --out "$OUT/runs/$m-$tree-$kg.jsonl"
    done
    cat "$OUT/runs/$m-$tree-icews14.jsonl" "$OUT/runs/$m-$tree-business.jsonl" > "$OUT/runs/$m-$tree.jsonl"
  done
done
python benchmarks/free_wording.py score "$OUT"/runs/{tools,star-rag,dense}-{before,after}.jsonl
