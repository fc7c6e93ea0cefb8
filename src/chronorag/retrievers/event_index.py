"""An index directory: event store + triple embeddings + FAISS index, built and loaded together.

Layout of ``INDEX_DIR``::

    store.json, events.npz, vocab.json[, texts.jsonl, attrs.jsonl]   the event store
    triples.npy          first event id of each distinct (s, r, o) triple
    triple_of_event.npy  for each event, its triple's row
    vectors.npy, vector_index.json[, hnsw.faiss]                     one vector per triple
    entity_vectors.npy, relation_vectors.npy                         one vector per name (for alignment)
    index.json           encoder kind and model id, counts, build timings

The directory is written atomically (:func:`chronorag.graphs.persist.atomic_dir`).
Each triple is embedded once as its dateless sentence; see
:mod:`chronorag.integrations.embeddings` for why.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chronorag.errors import IndexFormatError
from chronorag.graphs.persist import atomic_dir, read_json, write_json
from chronorag.graphs.store import TemporalEventStore
from chronorag.graphs.verbalize import verbalize_event
from chronorag.integrations.embeddings import (
    CachedEncoder,
    EmbeddingCache,
    Encoder,
    as_encoder,
    make_encoder,
)
from chronorag.integrations.vector_index import VectorIndex

__all__ = ["INDEX_FORMAT_VERSION", "EventIndex", "build_event_index", "default_cache_path"]

INDEX_FORMAT_VERSION = 1


def default_cache_path() -> Path:
    """``$CHRONORAG_HOME/embeddings.sqlite`` (``~/.cache/chronorag`` by default)."""
    home = Path(os.environ.get("CHRONORAG_HOME", Path.home() / ".cache" / "chronorag"))
    return home / "embeddings.sqlite"


def triple_texts(store: TemporalEventStore, first: np.ndarray) -> list[str]:
    """Dateless sentences of the triples whose first events are ``first``."""
    ents, rels = store.entities, store.relations
    return [
        verbalize_event(ents[store.subject[i]], rels[store.relation[i]], ents[store.object[i]])
        for i in first
    ]


@dataclass
class EventIndex:
    """A loaded index directory (see the module docstring for its files)."""

    store: TemporalEventStore
    triples: np.ndarray
    triple_of_event: np.ndarray
    vectors: VectorIndex
    meta: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    _encoder: Encoder | None = None
    _events_of_triple: tuple[np.ndarray, np.ndarray] | None = None
    _name_vectors: dict[str, np.ndarray] = field(default_factory=dict)

    def name_vectors(self, kind: str) -> np.ndarray:
        """Unit vectors of the entity (``kind="entity"``) or relation names, one row per id.

        Read from ``entity_vectors.npy``/``relation_vectors.npy`` when the index has them,
        else embedded (through the embedding cache) on first use.
        """
        if kind not in ("entity", "relation"):
            raise ValueError(f"kind must be 'entity' or 'relation', got {kind!r}")
        if kind not in self._name_vectors:
            f = None if self.path is None else self.path / f"{kind}_vectors.npy"
            names = self.store.entities if kind == "entity" else self.store.relations
            if f is not None and f.exists():
                vecs = np.load(f)
            else:
                enc = CachedEncoder(self.encoder, EmbeddingCache(default_cache_path()))
                vecs = enc.encode(names)
            if len(vecs) != len(names):
                raise IndexFormatError(f"{kind}_vectors has {len(vecs)} rows for {len(names)} names")
            self._name_vectors[kind] = vecs
        return self._name_vectors[kind]

    @property
    def encoder(self) -> Encoder:
        """The query encoder matching the one used at build time (loaded lazily)."""
        if self._encoder is None:
            kind = self.meta.get("encoder")
            if kind is None:
                raise IndexFormatError(
                    f"index {self.path} was built with a custom encoder "
                    f"({self.meta.get('model_id')!r}); set `index.encoder = ...` before searching"
                )
            kwargs = dict(self.meta.get("encoder_kwargs", {}))
            self._encoder = make_encoder(kind, **kwargs)
        return self._encoder

    @encoder.setter
    def encoder(self, enc: Encoder) -> None:
        self._encoder = enc

    def events_of_triples(self, rows: np.ndarray) -> list[np.ndarray]:
        """For each triple row, the ids of its events (in id order)."""
        if self._events_of_triple is None:
            order = np.argsort(self.triple_of_event, kind="stable")
            bounds = np.searchsorted(self.triple_of_event[order], np.arange(len(self.triples) + 1))
            self._events_of_triple = (order, bounds)
        order, bounds = self._events_of_triple
        return [order[bounds[r] : bounds[r + 1]] for r in np.asarray(rows, dtype=np.int64)]

    def expand_triples(self, rows: np.ndarray, k: int, *,
                       event_filter: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Events of ranked triples, each triple's most recent first, until ``k`` events.

        Parameters
        ----------
        rows : numpy.ndarray
            Triple rows, best first.
        k : int
            Events wanted.
        event_filter : callable, optional
            Maps a triple's event ids to the ones to keep (e.g. a time filter).

        Returns
        -------
        event_ids, positions : numpy.ndarray
            The events, and for each the position of its triple in ``rows``.
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        t_lo = self.store.t_lo
        ids: list[int] = []
        pos: list[int] = []
        for j, evs in enumerate(self.events_of_triples(rows)):
            if event_filter is not None:
                evs = event_filter(evs)
            evs = evs[np.lexsort((-evs, -t_lo[evs]))][: k - len(ids)]
            ids.extend(int(e) for e in evs)
            pos.extend([j] * len(evs))
            if len(ids) >= k:
                break
        return np.array(ids, dtype=np.int64), np.array(pos, dtype=np.int64)

    def search_triples(
        self, query: str, k: int = 10, *, subset: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` triple rows for a text query: ``(scores, rows)`` (1-D each)."""
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"query must be a non-empty string, got {query!r}")
        qv = self.encoder.encode([query])
        scores, rows = self.vectors.search(qv, k, subset=subset)
        keep = rows[0] >= 0
        return scores[0][keep], rows[0][keep]

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, gpu: bool | None = None) -> EventIndex:
        """Load an index directory written by :func:`build_event_index`."""
        d = Path(directory)
        meta_path = d / "index.json"
        if not meta_path.exists():
            raise IndexFormatError(
                f"{d} is not a chronorag index directory (no index.json); build one with "
                "`chronorag ingest KG.tsv.gz --out DIR`"
            )
        meta = read_json(meta_path)
        if meta.get("format") != INDEX_FORMAT_VERSION:
            raise IndexFormatError(f"{d}: index format {meta.get('format')!r}, expected {INDEX_FORMAT_VERSION}")
        store = TemporalEventStore.load(d)
        return cls(
            store=store,
            triples=np.load(d / "triples.npy"),
            triple_of_event=np.load(d / "triple_of_event.npy"),
            vectors=VectorIndex.load(d, gpu=gpu),
            meta=meta,
            path=d,
        )


def build_event_index(
    store: TemporalEventStore,
    out_dir: str | os.PathLike[str],
    *,
    encoder: Encoder | str = "minilm",
    encoder_kwargs: dict[str, Any] | None = None,
    cache: EmbeddingCache | str | os.PathLike[str] | None = None,
    index_kind: str = "flat",
    progress: bool = True,
) -> EventIndex:
    """Embed a store's distinct triples and write a complete index directory atomically.

    Parameters
    ----------
    store : TemporalEventStore
        The events.
    out_dir : path-like
        Index directory; replaced only when the whole build succeeds.
    encoder : Encoder, str, LlamaIndex BaseEmbedding or LangChain Embeddings
        An encoder, a kind for :func:`~chronorag.integrations.embeddings.make_encoder`, or a
        framework embedding model (see :func:`~chronorag.integrations.embeddings.as_encoder`).
        An encoder instance is recorded by its ``model_id`` only; pass a kind to let
        :meth:`EventIndex.load` rebuild the matching query encoder.
    encoder_kwargs : dict, optional
        Constructor arguments when ``encoder`` is a kind (recorded in ``index.json``).
    cache : EmbeddingCache or path, optional
        Embedding cache; defaults to :func:`default_cache_path`.
    index_kind : {"flat", "hnsw"}
        FAISS index type.
    progress : bool
        Show progress bars.
    """
    if len(store) == 0:
        raise ValueError("cannot index an empty event store")
    timings: dict[str, float] = {}
    kind = encoder if isinstance(encoder, str) else getattr(encoder, "kind", None)
    enc = make_encoder(encoder, **(encoder_kwargs or {})) if isinstance(encoder, str) else as_encoder(encoder)
    if cache is None:
        cache = default_cache_path()
    cache_obj = cache if isinstance(cache, EmbeddingCache) else EmbeddingCache(cache)
    t0 = time.perf_counter()
    first, inverse = store.triple_ids()
    texts = triple_texts(store, first)
    timings["verbalize_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    cenc = CachedEncoder(enc, cache_obj, progress=progress)
    vecs = cenc.encode(texts)
    timings["embed_s"] = time.perf_counter() - t0
    n_triples_embedded = cenc.n_computed
    t0 = time.perf_counter()
    ent_vecs = cenc.encode(store.entities)
    rel_vecs = cenc.encode(store.relations)
    timings["embed_names_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    vindex = VectorIndex(vecs, kind=index_kind)
    timings["faiss_s"] = time.perf_counter() - t0
    meta = {
        "format": INDEX_FORMAT_VERSION,
        "encoder": kind,
        "encoder_kwargs": encoder_kwargs or {},
        "model_id": enc.model_id,
        "dim": int(vecs.shape[1]),
        "n_events": len(store),
        "n_triples": len(first),
        "n_embedded": int(n_triples_embedded),
        "n_names_embedded": int(cenc.n_computed - n_triples_embedded),
        "index_kind": index_kind,
        "timings": timings,
    }
    with atomic_dir(out_dir) as tmp:
        store.write(tmp)
        np.save(tmp / "triples.npy", first)
        np.save(tmp / "triple_of_event.npy", inverse)
        vindex.save(tmp)
        np.save(tmp / "entity_vectors.npy", ent_vecs)
        np.save(tmp / "relation_vectors.npy", rel_vecs)
        write_json(tmp / "index.json", meta)
    return EventIndex(store=store, triples=first, triple_of_event=inverse, vectors=vindex,
                      meta=meta, path=Path(out_dir), _encoder=enc,
                      _name_vectors={"entity": ent_vecs, "relation": rel_vecs})
