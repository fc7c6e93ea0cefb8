"""The torch-free MiniLM backend: the ONNX graph written from the bundled weights, its runtimes,
backend selection and the missing-extra errors."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from chronorag.errors import MissingExtraError
from chronorag.graphs import encoders
from chronorag.graphs.onnx_bert import OnnxMiniLMEncoder

TEXTS = [
    "China signed formal agreement with Iran.",
    "a",
    "Police (Philippines) used conventional military force against Militant (Philippines).",
    "Barack Obama: He was born in Honolulu; he studied law at Harvard University and taught it.",
    "China signed formal agreement with Iran.",
    "",
    "x " * 400,  # longer than the model's 256 tokens: truncated, as sentence-transformers does
]


@pytest.fixture(scope="module")
def ort_encoder(tmp_path_factory: pytest.TempPathFactory) -> OnnxMiniLMEncoder:
    return OnnxMiniLMEncoder(onnx_dir=tmp_path_factory.mktemp("onnx"), runtime="onnxruntime", threads=1)


def test_onnx_graph_is_written_once_and_gives_unit_rows(ort_encoder: OnnxMiniLMEncoder) -> None:
    assert ort_encoder.onnx_file.is_file() and ort_encoder.dim == 384
    v = ort_encoder.encode(TEXTS)
    assert v.shape == (len(TEXTS), 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(v[0], v[4], atol=1e-6)  # same text, same vector
    assert ort_encoder.encode([]).shape == (0, 384)
    again = OnnxMiniLMEncoder(onnx_dir=ort_encoder.onnx_file.parent, runtime="onnxruntime", threads=1)
    assert again.onnx_file == ort_encoder.onnx_file  # reused, not rebuilt
    with pytest.raises(TypeError):
        ort_encoder.encode("one string")


def test_batching_by_length_keeps_input_order(ort_encoder: OnnxMiniLMEncoder) -> None:
    batched = ort_encoder.encode(TEXTS)
    one_by_one = np.stack([ort_encoder.encode([t])[0] for t in TEXTS])
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    small = OnnxMiniLMEncoder(onnx_dir=ort_encoder.onnx_file.parent, runtime="onnxruntime", threads=1,
                              max_tokens=16, max_batch=2)
    np.testing.assert_allclose(small.encode(TEXTS), batched, atol=1e-5)
    sims = batched @ batched.T
    assert sims[0, 2] > sims[0, 6]  # an event sentence is nearer another event than "x x x"


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                    reason="the torch backend (extra 'torch') is not installed to compare against")
def test_onnx_agrees_with_sentence_transformers(ort_encoder: OnnxMiniLMEncoder) -> None:
    ref = encoders.SentenceTransformerEncoder().encode(TEXTS)
    cos = np.sum(ref * ort_encoder.encode(TEXTS), axis=1)
    assert cos.min() > 0.9999, cos


@pytest.mark.skipif(importlib.util.find_spec("openvino") is None,
                    reason="OpenVINO (extra 'openvino') is not installed")
def test_openvino_agrees_with_onnxruntime(ort_encoder: OnnxMiniLMEncoder) -> None:
    for precision in ("f32", "bf16"):
        ov = OnnxMiniLMEncoder(onnx_dir=ort_encoder.onnx_file.parent, runtime="openvino",
                               precision=precision, threads=1)
        cos = np.sum(ov.encode(TEXTS) * ort_encoder.encode(TEXTS), axis=1)
        assert cos.min() > (0.99999 if precision == "f32" else 0.999), (precision, cos)
    auto = OnnxMiniLMEncoder(onnx_dir=ort_encoder.onnx_file.parent, runtime="auto", threads=1, bulk_min=3)
    np.testing.assert_allclose(auto.encode(TEXTS[:2]), ort_encoder.encode(TEXTS[:2]), atol=1e-6)
    assert auto._bulk is None  # small calls stay on ONNX Runtime
    cos = np.sum(auto.encode(TEXTS) * ort_encoder.encode(TEXTS), axis=1)
    assert auto._bulk is not None and cos.min() > 0.999


def test_backend_selection(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("CHRONORAG_HOME", str(tmp_path))
    monkeypatch.setenv("CHRONORAG_ONNX_RUNTIME", "onnxruntime")
    enc = encoders.make_encoder("minilm")
    assert isinstance(enc, OnnxMiniLMEncoder) and enc.runtime == "onnxruntime"
    assert enc.model_id == "all-MiniLM-L6-v2" and enc.kind == "minilm"  # shares the torch cache key
    assert enc.onnx_file.parent == tmp_path / "minilm-onnx"
    with pytest.raises(ValueError, match="unknown MiniLM backend 'tensorflow'"):
        encoders.make_encoder("minilm", backend="tensorflow")
    monkeypatch.setenv("CHRONORAG_ONNX_RUNTIME", "tvm")
    with pytest.raises(ValueError, match="unknown ONNX runtime 'tvm'"):
        encoders.make_encoder("minilm")


def test_missing_backends_name_their_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails
    with pytest.raises(MissingExtraError, match=r"chronorag\[torch\]"):
        encoders.make_encoder("minilm", backend="torch")
    monkeypatch.setitem(sys.modules, "openvino", None)
    with pytest.raises(MissingExtraError, match=r"chronorag\[openvino\]"):
        OnnxMiniLMEncoder(runtime="openvino")
    real = importlib.util.find_spec

    def no_runtime(name: str, *a, **k):  # noqa: ANN202
        return None if name in ("onnxruntime", "openvino", "sentence_transformers") else real(name, *a, **k)

    monkeypatch.setattr(importlib.util, "find_spec", no_runtime)
    with pytest.raises(MissingExtraError, match=r"chronorag\[onnx\]"):
        encoders.make_encoder("minilm")
