"""FAISS vector index over unit vectors (inner product = cosine).

``kind="flat"`` (default) is exact search; ``kind="hnsw"`` is approximate HNSW
(M=32, efSearch=128 by default). With faiss-gpu installed and ``gpu=True`` a flat
index is moved to the GPU. Search can be restricted to a subset of ids: on CPU
through FAISS's ``IDSelectorBatch``; on GPU (where selectors are not supported)
by an exact NumPy pass over the subset's stored vectors.

faiss is an optional dependency: ``pip install 'chronorag[cpu]'`` (faiss-cpu) or
``'chronorag[gpu]'`` (faiss-gpu-cu12); never both.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from chronorag.errors import (
    ConfigError,
    IndexFormatError,
    OutOfRangeError,
    UsageError,
    missing_extra,
)
from chronorag.graphs.persist import write_json

__all__ = ["INDEX_KINDS", "VectorIndex", "faiss_available", "gpu_available"]

INDEX_KINDS = ("flat", "hnsw")


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:
        raise missing_extra("faiss", "cpu") from exc
    return faiss


def faiss_available() -> bool:
    """True when the ``faiss`` module imports."""
    try:
        _faiss()
    except ImportError:
        return False
    return True


def gpu_available() -> bool:
    """True when faiss was built with GPU support and sees at least one GPU."""
    if not faiss_available():
        return False
    faiss = _faiss()
    return hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0


#: candidates fetched beyond ``k`` so that ties at the cut are broken by id
_TIE_MARGIN = 16


def _by_score_then_id(scores: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k`` columns ordered by score (descending), then id (ascending): one order for
    tied scores on every backend (FAISS returns tied vectors in no fixed order); missing
    results (id -1, score -inf) last, padded to ``k`` columns."""
    key_id = np.where(ids < 0, np.iinfo(np.int64).max, ids)
    order = np.lexsort((key_id, -scores.astype(np.float64)), axis=-1)[:, :k]
    out_s = np.full((len(scores), k), -np.inf, np.float32)
    out_i = np.full((len(scores), k), -1, np.int64)
    m = order.shape[1]
    out_s[:, :m] = np.take_along_axis(scores, order, axis=1)
    out_i[:, :m] = np.take_along_axis(ids, order, axis=1)
    return out_s, out_i


class VectorIndex:
    """Inner-product FAISS index with save/load and subset-restricted search.

    Parameters
    ----------
    vectors : numpy.ndarray
        ``(n, d)`` float32 unit vectors; row ``i`` gets id ``i``.
    kind : {"flat", "hnsw"}
        Exact (default) or HNSW.
    hnsw_m, ef_construction, ef_search : int
        HNSW parameters.
    gpu : bool or None
        Put a flat index on the GPU; ``None`` (default) does so when one is available.
    """

    def __init__(
        self,
        vectors: np.ndarray,
        *,
        kind: str = "flat",
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 128,
        gpu: bool | None = None,
    ) -> None:
        if kind not in INDEX_KINDS:
            raise ConfigError(f"unknown index kind {kind!r}; expected one of {INDEX_KINDS}")
        x = np.asarray(vectors)
        if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
            raise ConfigError(f"vectors must be a non-empty 2-D array, got shape {x.shape}")
        if not np.isfinite(x).all():
            raise ConfigError("vectors contain NaN or infinite values")
        self.vectors = np.ascontiguousarray(x, dtype=np.float32)
        self.kind = kind
        self.params = {"hnsw_m": hnsw_m, "ef_construction": ef_construction, "ef_search": ef_search}
        self._gpu = gpu_available() if gpu is None else bool(gpu)
        if self._gpu and not gpu_available():
            raise UsageError("gpu=True but faiss sees no GPU (is faiss-gpu installed?)")
        self._index = self._build()

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return int(self.vectors.shape[1])

    @property
    def on_gpu(self) -> bool:
        """True when searches run on the GPU."""
        return self._gpu and self.kind == "flat"

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    def _build(self) -> Any:
        faiss = _faiss()
        d = self.dim
        if self.kind == "flat":
            index = faiss.IndexFlatIP(d)
        else:
            index = faiss.IndexHNSWFlat(d, int(self.params["hnsw_m"]), faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = int(self.params["ef_construction"])
            index.hnsw.efSearch = int(self.params["ef_search"])
        index.add(self.vectors)
        if self.on_gpu:
            self._res = faiss.StandardGpuResources()
            index = faiss.index_cpu_to_gpu(self._res, 0, index)
        return index

    def _check_queries(self, queries: np.ndarray) -> np.ndarray:
        q = np.asarray(queries, dtype=np.float32)
        if q.ndim == 1:
            q = q[None, :]
        if q.ndim != 2:
            raise ConfigError(f"queries must have shape (n, {self.dim}), got {np.shape(queries)}")
        if q.shape[1] != self.dim:
            raise IndexFormatError(
                f"queries must have shape (n, {self.dim}), got {np.shape(queries)}: the query "
                f"encoder gives {q.shape[1]}-d vectors but the index stores {self.dim}-d ones; "
                "query with the encoder the index was built with (see its index.json) or rebuild it")
        return np.ascontiguousarray(q)

    def search(
        self, queries: np.ndarray, k: int = 10, *, subset: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ids by inner product.

        Parameters
        ----------
        queries : numpy.ndarray
            ``(q, d)`` or ``(d,)`` float32.
        k : int
            Results per query.
        subset : numpy.ndarray, optional
            Only ids in this array can be returned.

        Returns
        -------
        scores, ids : numpy.ndarray
            ``(q, k)`` each; missing results (fewer than ``k`` candidates) have id -1
            and score ``-inf``.
        """
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise ConfigError(f"k must be a positive integer, got {k!r}")
        q = self._check_queries(queries)
        if subset is None:
            # a few candidates beyond k so that vectors tied at the k-th score (identical texts
            # of the static encoder, for one) are cut by id, as the exact Postgres scan does
            kk = min(len(self), int(k) + _TIE_MARGIN) if self.kind == "flat" else int(k)
            scores, ids = self._index.search(q, max(kk, 1))
            scores = np.where(ids < 0, -np.inf, scores)
            return _by_score_then_id(scores.astype(np.float32), ids.astype(np.int64), int(k))
        sub = np.unique(np.asarray(subset, dtype=np.int64))
        if sub.size and (sub[0] < 0 or sub[-1] >= len(self)):
            raise OutOfRangeError(f"subset ids must be in 0..{len(self) - 1}")
        if sub.size == 0:
            return (np.full((len(q), k), -np.inf, np.float32), np.full((len(q), k), -1, np.int64))
        if self.on_gpu or self.kind == "hnsw" or sub.size <= 4096:
            return self._exact_subset(q, k, sub)
        faiss = _faiss()
        params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(sub))
        scores, ids = self._index.search(q, min(int(k) + _TIE_MARGIN, int(sub.size)), params=params)
        scores = np.where(ids < 0, -np.inf, scores)
        return _by_score_then_id(scores.astype(np.float32), ids.astype(np.int64), int(k))

    def _exact_subset(self, q: np.ndarray, k: int, sub: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        sims = q @ self.vectors[sub].T
        kk = min(k + _TIE_MARGIN, sub.size)
        part = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
        psc = np.take_along_axis(sims, part, axis=1).astype(np.float32)
        return _by_score_then_id(psc, sub[part], k)

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write ``vectors.npy`` and ``vector_index.json`` (+ ``hnsw.faiss``) into a directory."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        np.save(d / "vectors.npy", self.vectors)
        if self.kind == "flat":  # the FAISS file that load() memory-maps (shared by workers)
            index = self._index if not self.on_gpu else _faiss().index_gpu_to_cpu(self._index)
            _faiss().write_index(index, str(d / "flat.faiss"))
        if self.kind == "hnsw":
            _faiss().write_index(self._index, str(d / "hnsw.faiss"))
        write_json(d / "vector_index.json", {"kind": self.kind, **self.params})

    @classmethod
    def load(cls, directory: str | os.PathLike[str] | Any, *, gpu: bool | None = None,
             mmap: bool = True) -> VectorIndex:
        """Load an index written by :meth:`save`.

        ``directory`` is an index directory or an opened
        :class:`~chronorag.graphs.index_files.IndexFiles`; every file, ``hnsw.faiss``
        included, is checked against its build-time fingerprint, and an HNSW file must
        hold exactly the stored vectors (a file copied from another index is refused).
        A flat index saved with its ``flat.faiss`` file is memory-mapped (``mmap``, on
        CPU): the vectors are read from the page cache, shared by every process that
        loads the same index, and searched by the same FAISS code. Otherwise (older
        indexes, GPU) the flat index is rebuilt from ``vectors.npy``.
        """
        from chronorag.graphs.index_files import IndexFiles

        files = IndexFiles.open(directory)
        if not files.has("vector_index.json") or not files.has("vectors.npy"):
            raise files.missing("vector_index.json" if not files.has("vector_index.json") else "vectors.npy",
                                "the vector index")
        meta = files.json("vector_index.json")
        obj = cls.__new__(cls)
        with files.parsing("vector_index.json"):
            obj.kind = str(meta["kind"])
            if obj.kind not in INDEX_KINDS:
                raise ConfigError(f"unknown index kind {obj.kind!r}")
            obj.params = {k: int(meta[k]) for k in ("hnsw_m", "ef_construction", "ef_search")}
        obj._gpu = gpu_available() if gpu is None else bool(gpu)
        if mmap and obj.kind == "flat" and not obj._gpu and files.has("flat.faiss"):
            faiss = _faiss()
            obj._index = files.faiss_mapped("flat.faiss")
            n, dim = int(obj._index.ntotal), int(obj._index.d)
            vecs = faiss.rev_swig_ptr(obj._index.get_xb(), n * dim).reshape(n, dim)
            vecs.flags.writeable = False  # the mapping is read-only: a write would crash
            obj.vectors = vecs
            return obj
        obj.vectors = files.npy_mapped("vectors.npy", ndim=2) if mmap else files.npy("vectors.npy", ndim=2)
        if obj.vectors.dtype != np.float32 or len(obj.vectors) == 0:
            raise files.damaged("vectors.npy", f"{obj.vectors.dtype} array of shape {obj.vectors.shape}, "
                                               "expected non-empty float32 vectors")
        if obj.kind == "hnsw" and files.has("hnsw.faiss"):
            obj._index = files.faiss("hnsw.faiss")
            _check_same_vectors(files, obj._index, obj.vectors)
            obj._index.hnsw.efSearch = int(obj.params["ef_search"])
        else:
            obj._index = obj._build()
        return obj


def _check_same_vectors(files: Any, index: Any, vectors: np.ndarray) -> None:
    """Refuse a FAISS file that does not hold ``vectors`` (size, dimension, sampled rows)."""
    n, d = vectors.shape
    if int(getattr(index, "ntotal", -1)) != n or int(getattr(index, "d", -1)) != d:
        raise files.damaged("hnsw.faiss", f"it holds {getattr(index, 'ntotal', '?')} vectors of dimension "
                                          f"{getattr(index, 'd', '?')}, vectors.npy {n} of dimension {d}")
    rows = np.unique(np.linspace(0, n - 1, num=min(n, 16)).astype(np.int64))
    try:
        got = np.stack([index.reconstruct(int(i)) for i in rows])
    except RuntimeError:  # an index kind that cannot reconstruct: size and dimension checked
        return
    if not np.allclose(got, vectors[rows], atol=1e-5):
        raise files.damaged("hnsw.faiss", "its vectors differ from vectors.npy: copied from another index")
