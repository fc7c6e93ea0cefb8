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

from chronorag.errors import IndexFormatError, missing_extra
from chronorag.graphs.persist import load_npy, read_json, write_json

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
            raise ValueError(f"unknown index kind {kind!r}; expected one of {INDEX_KINDS}")
        x = np.asarray(vectors)
        if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
            raise ValueError(f"vectors must be a non-empty 2-D array, got shape {x.shape}")
        if not np.isfinite(x).all():
            raise ValueError("vectors contain NaN or infinite values")
        self.vectors = np.ascontiguousarray(x, dtype=np.float32)
        self.kind = kind
        self.params = {"hnsw_m": hnsw_m, "ef_construction": ef_construction, "ef_search": ef_search}
        self._gpu = gpu_available() if gpu is None else bool(gpu)
        if self._gpu and not gpu_available():
            raise RuntimeError("gpu=True but faiss sees no GPU (is faiss-gpu installed?)")
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
            raise ValueError(f"queries must have shape (n, {self.dim}), got {np.shape(queries)}")
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
            raise ValueError(f"k must be a positive integer, got {k!r}")
        q = self._check_queries(queries)
        if subset is None:
            scores, ids = self._index.search(q, int(k))
            scores = np.where(ids < 0, -np.inf, scores)
            return scores.astype(np.float32), ids.astype(np.int64)
        sub = np.unique(np.asarray(subset, dtype=np.int64))
        if sub.size and (sub[0] < 0 or sub[-1] >= len(self)):
            raise IndexError(f"subset ids must be in 0..{len(self) - 1}")
        if sub.size == 0:
            return (np.full((len(q), k), -np.inf, np.float32), np.full((len(q), k), -1, np.int64))
        if self.on_gpu or self.kind == "hnsw" or sub.size <= 4096:
            return self._exact_subset(q, k, sub)
        faiss = _faiss()
        params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(sub))
        scores, ids = self._index.search(q, int(k), params=params)
        scores = np.where(ids < 0, -np.inf, scores)
        return scores.astype(np.float32), ids.astype(np.int64)

    def _exact_subset(self, q: np.ndarray, k: int, sub: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        sims = q @ self.vectors[sub].T
        kk = min(k, sub.size)
        part = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
        psc = np.take_along_axis(sims, part, axis=1)
        order = np.argsort(-psc, axis=1, kind="stable")
        top = np.take_along_axis(part, order, axis=1)
        scores = np.full((len(q), k), -np.inf, np.float32)
        ids = np.full((len(q), k), -1, np.int64)
        scores[:, :kk] = np.take_along_axis(sims, top, axis=1)
        ids[:, :kk] = sub[top]
        return scores, ids

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
    def load(cls, directory: str | os.PathLike[str], *, gpu: bool | None = None,
             mmap: bool = True) -> VectorIndex:
        """Load an index written by :meth:`save`.

        A flat index saved with its ``flat.faiss`` file is memory-mapped (``mmap``, on
        CPU): the vectors are read from the page cache, shared by every process that
        loads the same index, and searched by the same FAISS code as before. Otherwise
        (older indexes, GPU) the flat index is rebuilt from ``vectors.npy``.
        """
        d = Path(directory)
        meta_path = d / "vector_index.json"
        if not meta_path.exists() or not (d / "vectors.npy").exists():
            raise IndexFormatError(f"{d} holds no chronorag vector index")
        meta = read_json(meta_path)
        obj = cls.__new__(cls)
        obj.kind = meta["kind"]
        obj._gpu = gpu_available() if gpu is None else bool(gpu)
        flat = d / "flat.faiss"
        if mmap and obj.kind == "flat" and not obj._gpu and flat.exists():
            faiss = _faiss()
            try:
                obj._index = faiss.read_index(str(flat), faiss.IO_FLAG_MMAP_IFC)
            except RuntimeError as exc:
                raise IndexFormatError(f"{flat} is damaged or truncated ({exc}); rebuild the index") from None
            n, dim = int(obj._index.ntotal), int(obj._index.d)
            vecs = faiss.rev_swig_ptr(obj._index.get_xb(), n * dim).reshape(n, dim)
            vecs.flags.writeable = False  # the mapping is read-only: a write would crash
            obj.vectors = vecs
            obj.params = {k: meta[k] for k in ("hnsw_m", "ef_construction", "ef_search")}
            return obj
        obj.vectors = load_npy(d / "vectors.npy", mmap=True)
        if obj.vectors.ndim != 2:
            raise IndexFormatError(f"{d / 'vectors.npy'} is not a 2-D array; rebuild the index")
        obj.params = {k: meta[k] for k in ("hnsw_m", "ef_construction", "ef_search")}
        if obj.kind == "hnsw" and (d / "hnsw.faiss").exists():
            try:
                obj._index = _faiss().read_index(str(d / "hnsw.faiss"))
            except RuntimeError as exc:
                raise IndexFormatError(f"{d / 'hnsw.faiss'} is damaged or truncated ({exc}); "
                                       "rebuild the index") from None
            obj._index.hnsw.efSearch = int(obj.params["ef_search"])
        else:
            obj._index = obj._build()
        return obj
