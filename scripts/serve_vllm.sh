#!/usr/bin/env bash
# Serve an LLM for chronorag with vLLM on a GPU host (vLLM runs in its own environment:
# it pins a CUDA torch that must not share chronorag's CPU .venv).
#
#   python -m venv ~/vllm-env && ~/vllm-env/bin/pip install vllm
#   MODEL=Qwen/Qwen3-8B bash scripts/serve_vllm.sh           # weights must already be on disk / in HF cache
#   export CHRONORAG_BASE_URL=http://localhost:8000/v1 CHRONORAG_MODEL=chronorag
#
# --enable-auto-tool-choice + --tool-call-parser make vLLM return OpenAI `tool_calls`
# (used by the TempTool agent's native mode); hermes is the parser for Qwen2.5/Qwen3.
set -euo pipefail
MODEL="${MODEL:-Qwen/Qwen3-8B}"
VLLM="${VLLM:-vllm}"
exec "$VLLM" serve "$MODEL" \
  --served-model-name chronorag \
  --host "${HOST:-0.0.0.0}" --port "${PORT:-8000}" \
  --max-model-len "${MAX_MODEL_LEN:-16384}" \
  --gpu-memory-utilization "${GPU_UTIL:-0.85}" \
  --enable-auto-tool-choice --tool-call-parser "${TOOL_PARSER:-hermes}" \
  --generation-config vllm \
  "$@"
