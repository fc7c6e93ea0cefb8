#!/usr/bin/env bash
# Serve an LLM for chronorag with vLLM on a GPU host (vLLM runs in its own environment:
# it pins a CUDA torch that must not share chronorag's CPU .venv).
#
#   python -m venv ~/vllm-env && ~/vllm-env/bin/pip install vllm
#   MODEL=Qwen/Qwen3-8B bash scripts/serve_vllm.sh            # weights must already be on disk / in HF cache
#   export CHRONORAG_BASE_URL=http://127.0.0.1:8000/v1 CHRONORAG_MODEL=chronorag
#
# Options (each also settable by the environment variable in brackets):
#   --host H              address to listen on [HOST]; default 127.0.0.1 (this machine only). It
#                         counts as loopback only when every address it resolves to is one
#                         (127.0.0.0/8, ::1); abbreviations (--hos) and --config are refused
#   --port P              [PORT]; default 8000
#   --api-key KEY         require this bearer token [CHRONORAG_API_KEY, the variable chronorag's
#                         client sends]; required when --host is not a loopback address
#   --allow-no-key        listen on a non-loopback address without a key (trusted networks only)
#   --reasoning-parser P  vLLM reasoning parser [REASONING_PARSER]; default "auto": qwen3 for
#                         Qwen3 thinking models, deepseek_r1 for DeepSeek-R1 and QwQ, none otherwise
#                         ("none" disables it); needs vLLM >= 0.10 (no --enable-reasoning flag)
#   anything else         passed to `vllm serve` unchanged
#
# --enable-auto-tool-choice + --tool-call-parser make vLLM return OpenAI `tool_calls`
# (used by the TempTool agent's native mode); hermes is the parser for Qwen2.5/Qwen3.
# The API key is passed on vLLM's command line, so local users can see it with `ps`;
# on a shared host, put vLLM behind a proxy that holds the key instead.
set -euo pipefail
MODEL="${MODEL:-Qwen/Qwen3-8B}"
VLLM="${VLLM:-vllm}"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8000}"
API_KEY="${CHRONORAG_API_KEY:-}"
REASONING_PARSER="${REASONING_PARSER:-auto}"
ALLOW_NO_KEY=0
EXTRA=()
need() { [ "$#" -ge 2 ] || { echo "serve_vllm.sh: $1 needs a value" >&2; exit 2; }; }
while [ "$#" -gt 0 ]; do
  case "$1" in
    --host) need "$@"; HOST="$2"; shift 2 ;;
    --host=*) HOST="${1#*=}"; shift ;;
    --port) need "$@"; PORT="$2"; shift 2 ;;
    --port=*) PORT="${1#*=}"; shift ;;
    --api-key) need "$@"; API_KEY="$2"; shift 2 ;;
    --api-key=*) API_KEY="${1#*=}"; shift ;;
    --reasoning-parser) need "$@"; REASONING_PARSER="$2"; shift 2 ;;
    --reasoning-parser=*) REASONING_PARSER="${1#*=}"; shift ;;
    --allow-no-key) ALLOW_NO_KEY=1; shift ;;
    --config|--config=*)
      echo "serve_vllm.sh: --config is not supported here (it could set --host unseen); pass the options" >&2
      exit 2 ;;
    --h|--ho|--hos|--h=*|--ho=*|--hos=*|--p|--po|--por|--p=*|--po=*|--por=*|--api|--api-|--api-k*|--api=*|--api-=*)
      # vLLM's argparse takes unambiguous prefixes: --hos 0.0.0.0 would bind unseen by this script
      echo "serve_vllm.sh: spell out $1 as --host, --port or --api-key" >&2
      exit 2 ;;
    *) EXTRA+=("$1"); shift ;;
  esac
done
# "loopback" is decided from the addresses HOST resolves to, never from its spelling
# (127.attacker.example is a name, not 127.0.0.1); a name that does not resolve is not loopback.
LOOPBACK=0
if "${PYTHON:-python3}" - "$HOST" <<'PY' 2>/dev/null; then LOOPBACK=1; fi
import ipaddress, socket, sys
host = sys.argv[1].strip()
if host.startswith("[") and host.endswith("]"):
    host = host[1:-1]
try:
    addrs = {ipaddress.ip_address(host)}
except ValueError:
    addrs = {ipaddress.ip_address(a[4][0].split("%")[0]) for a in socket.getaddrinfo(host, None)}
sys.exit(0 if addrs and all(a.is_loopback for a in addrs) else 1)
PY
if [ "$LOOPBACK" = 0 ] && [ -z "$API_KEY" ] && [ "$ALLOW_NO_KEY" = 0 ]; then
  echo "serve_vllm.sh: refusing to listen on $HOST without an API key: anyone who can reach" >&2
  echo "  this host could use the GPU. Pass --api-key KEY (and export CHRONORAG_API_KEY=KEY" >&2
  echo "  where chronorag runs), or --allow-no-key on a trusted network." >&2
  exit 2
fi
if [ "$REASONING_PARSER" = auto ]; then
  lower="$(printf '%s' "$MODEL" | tr '[:upper:]' '[:lower:]')"
  case "$lower" in
    *qwen3*instruct-2507*) REASONING_PARSER=none ;;   # the 2507 Instruct models do not think
    *qwen3*) REASONING_PARSER=qwen3 ;;
    *deepseek-r1*|*qwq*) REASONING_PARSER=deepseek_r1 ;;
    *) REASONING_PARSER=none ;;
  esac
fi
ARGS=(serve "$MODEL"
  --served-model-name chronorag
  --host "$HOST" --port "$PORT"
  --max-model-len "${MAX_MODEL_LEN:-16384}"
  --gpu-memory-utilization "${GPU_UTIL:-0.85}"
  --enable-auto-tool-choice --tool-call-parser "${TOOL_PARSER:-hermes}"
  --generation-config vllm)
if [ "$REASONING_PARSER" != none ]; then
  ARGS+=(--reasoning-parser "$REASONING_PARSER")
fi
if [ -n "$API_KEY" ]; then
  ARGS+=(--api-key "$API_KEY")
fi
exec "$VLLM" "${ARGS[@]}" ${EXTRA[@]+"${EXTRA[@]}"}
