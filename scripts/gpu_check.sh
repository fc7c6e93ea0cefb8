#!/usr/bin/env bash
# On a GPU machine with vLLM: serve a model from a LOCAL path (nothing is downloaded) and run the
# real-model tests (tests/test_real_llm.py, the same ones CI runs against the local llama.cpp
# server) against it; then stop the server by its PID.
#
#   MODEL_PATH=/models/Qwen3-8B bash scripts/gpu_check.sh            # vLLM on PATH, or VLLM=/path/to/vllm
#
# Variables: MODEL_PATH (required: a directory with the weights and tokenizer), VLLM (default vllm),
# PORT (default 8011), TOOL_PARSER (default hermes, right for Qwen2.5/Qwen3), MAX_MODEL_LEN
# (default 8192), STARTUP_S (default 900). Extra arguments go to pytest (e.g. -k tool_calls).
# Exit code: pytest's; 2 for a setup error (no MODEL_PATH, no vllm, the server never answered).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MODEL_PATH="${MODEL_PATH:-}"
VLLM="${VLLM:-vllm}"
PORT="${PORT:-8011}"
TOOL_PARSER="${TOOL_PARSER:-hermes}"
MAX_MODEL_LEN="${MAX_MODEL_LEN:-8192}"
STARTUP_S="${STARTUP_S:-900}"
if [ -z "$MODEL_PATH" ] || [ ! -d "$MODEL_PATH" ]; then
  echo "gpu_check.sh: set MODEL_PATH to a local model directory (no downloads here), got '${MODEL_PATH}'" >&2; exit 2
fi
if ! command -v "$VLLM" >/dev/null 2>&1; then
  echo "gpu_check.sh: '$VLLM' not found; install vLLM in its own environment and set VLLM=/path/to/vllm" >&2; exit 2
fi
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "gpu_check.sh: no nvidia-smi: this needs a GPU machine" >&2; exit 2
fi
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PY="$ROOT/.venv/bin/python"; else PY="python3"; fi
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
KEY="gpu-check-$RANDOM$RANDOM"
LOG="$(mktemp -t chronorag-vllm-XXXXXX.log)"
"$VLLM" serve "$MODEL_PATH" --served-model-name chronorag --host 127.0.0.1 --port "$PORT" \
  --api-key "$KEY" --max-model-len "$MAX_MODEL_LEN" --enable-auto-tool-choice \
  --tool-call-parser "$TOOL_PARSER" >"$LOG" 2>&1 &
VPID=$!
cleanup() { kill "$VPID" 2>/dev/null || true; wait "$VPID" 2>/dev/null || true; }
trap cleanup EXIT
echo "vLLM (pid $VPID) loading $MODEL_PATH; log: $LOG"
t0=$(date +%s)
until curl -sf -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/models" >/dev/null; do
  if ! kill -0 "$VPID" 2>/dev/null; then echo "gpu_check.sh: vLLM exited; its log ends:" >&2; tail -20 "$LOG" >&2; exit 2; fi
  if [ $(( $(date +%s) - t0 )) -gt "$STARTUP_S" ]; then echo "gpu_check.sh: vLLM did not answer in ${STARTUP_S}s" >&2; tail -20 "$LOG" >&2; exit 2; fi
  sleep 5
done
echo "vLLM answered after $(( $(date +%s) - t0 )) s; running tests/test_real_llm.py against it"
set +e
CHRONORAG_TEST_LLM_URL="http://127.0.0.1:$PORT/v1" CHRONORAG_TEST_LLM_MODEL=chronorag CHRONORAG_TEST_LLM_KEY="$KEY" \
  "$PY" -m pytest -q -m slow tests/test_real_llm.py "$@"
rc=$?
set -e
exit $rc
