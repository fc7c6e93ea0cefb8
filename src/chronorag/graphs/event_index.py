"""An index directory: event store + triple embeddings + FAISS index, built and loaded together.

Layout of ``INDEX_DIR``::

    store.json, events.npz, vocab.json[, texts.jsonl, attrs.jsonl]   the event store
    ev_*.npy, sidx_*.npy the store's columns and six sorted indexes (memory-mapped at load)
    triples.npy          first event id of each distinct (s, r, o) triple
    triple_of_event.npy  for each event, its triple's row
    events_by_triple.npy, triple_bounds.npy   event ids grouped by triple (memory-mapped)
    vectors.npy, vector_index.json[, hnsw.faiss]                     one vector per triple
    entity_vectors.npy, relation_vectors.npy                         one vector per name (for alignment)
    event_vectors.npy    optional: one vector per *dated* event sentence (STAR-RAG's
                         dated-text variant; written by :meth:`EventIndex.event_vectors`)
    index.json           encoder kind and model id, counts, build timings

The directory is written through :func:`chronorag.graphs.persist.write_index` (atomic,
crash-safe, one writer at a time; see that module for the guarantees).
Each triple is embedded once as its dateless sentence; see
:mod:`chronorag.graphs.encoders` for why.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chronorag.errors import ConfigError, IndexFormatError
from chronorag.graphs.encoders import (
    CachedEncoder,
    EmbeddingCache,
    Encoder,
    FrameworkEncoder,
    as_encoder,
    make_encoder,
)
from chronorag.graphs.index_files import IndexFiles
from chronorag.graphs.persist import (
    check_output_dir,
    snapshot,
    write_index,
    write_json,
)
from chronorag.graphs.store import TemporalEventStore
from chronorag.graphs.vectors import VectorIndex
from chronorag.graphs.verbalize import verbalize_event

__all__ = ["INDEX_FORMAT_VERSION", "EventIndex", "build_event_index", "dated_event_texts", "default_cache_path"]

_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")

INDEX_FORMAT_VERSION = 1

#: ``index.json``'s encoder kind for an index embedded with LlamaIndex ``Settings.embed_model``
SETTINGS_ENCODER = "settings"


class _Changed(Exception):
    """The index was rebuilt since it was loaded: do not add files computed from the old one."""


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


def _spoken_date(iso: str) -> str:
    """``"2005-04-12"`` -> ``"12 April 2005"`` (months and years likewise); other text unchanged."""
    parts = iso.split("-")
    try:
        if len(parts) == 3:
            return f"{int(parts[2])} {_MONTH_NAMES[int(parts[1]) - 1]} {parts[0]}"
        if len(parts) == 2:
            return f"{_MONTH_NAMES[int(parts[1]) - 1]} {parts[0]}"
    except (ValueError, IndexError):
        pass
    return iso


def dated_event_texts(store: TemporalEventStore, ids: np.ndarray | None = None) -> list[str]:
    """Sentences of events *with* their dates, the date spelled as people write it.

    ``"On 12 April 2005, China signed formal agreement with Iran."``: the text the
    STAR-RAG paper embeds per event (its encoder reads the date; a question's "in April
    2005" then matches the date's words).
    """
    ids = np.arange(len(store)) if ids is None else np.asarray(ids, dtype=np.int64)
    ents, rels = store.entities, store.relations
    starts: dict[int, str] = {}
    out = []
    for i in ids.tolist():
        day = int(store.t_lo[i])
        if day not in starts:
            starts[day] = _spoken_date(store.start_text(i))
        out.append(verbalize_event(ents[store.subject[i]], rels[store.relation[i]], ents[store.object[i]],
                                   starts[day]))
    return out


def events_by_triple(triple_of_event: np.ndarray, n_triples: int) -> tuple[np.ndarray, np.ndarray]:
    """Event ids grouped by triple (``order``) and each triple's slice of it (``bounds``)."""
    order = np.argsort(triple_of_event, kind="stable").astype(np.int64)
    bounds = np.searchsorted(triple_of_event[order], np.arange(n_triples + 1)).astype(np.int64)
    return order, bounds


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
    _event_vectors: np.ndarray | None = None
    #: the version :meth:`load` opened; lazily read files come from it (never the live links)
    _files: IndexFiles | None = None

    def event_vectors(self, *, save: bool = True, batch_size: int = 50_000) -> np.ndarray:
        """Unit vectors of every event's dated sentence (:func:`dated_event_texts`), one row per event.

        Read from ``event_vectors.npy`` when present; otherwise embedded with the index's
        encoder (no embedding cache: every sentence is distinct) and, with ``save``,
        written into the index directory. Affordable with the static encoder (461K
        ICEWS05-15 events in about a minute on 2 cores); MiniLM needs about 20 minutes.
        """
        if self._event_vectors is None:
            f = None if self.path is None else self.path / "event_vectors.npy"
            if self._files is not None and self._files.has("event_vectors.npy"):
                vecs = self._files.npy("event_vectors.npy", ndim=2)
                if len(vecs) != len(self.store):
                    raise IndexFormatError(f"{f} has {len(vecs)} rows for {len(self.store)} events; delete it "
                                           "to re-embed")
            else:
                parts = []
                for a in range(0, len(self.store), batch_size):
                    ids = np.arange(a, min(a + batch_size, len(self.store)))
                    parts.append(np.asarray(self.encoder.encode(dated_event_texts(self.store, ids)),
                                            dtype=np.float32))
                vecs = np.concatenate(parts) if parts else np.zeros((0, self.vectors.vectors.shape[1]), np.float32)
                if save and f is not None:
                    self._save_event_vectors(vecs)
            self._event_vectors = vecs
        return self._event_vectors

    def _save_event_vectors(self, vecs: np.ndarray) -> None:
        """Add ``event_vectors.npy`` to the index as a new version (skipped while another
        process writes it, or when the index changed since it was loaded)."""
        from chronorag.errors import IndexBusyError

        assert self.path is not None
        try:
            with write_index(self.path, update=True) as tmp:
                live = IndexFiles(self.path)
                try:
                    same = live.has("store.json") and live.json("store.json").get("fingerprint") == \
                        self.store.fingerprint()
                finally:
                    live.close()
                if not same:
                    raise _Changed
                np.save(tmp / "event_vectors.npy", vecs)
        except (_Changed, IndexBusyError):
            pass

    def name_vectors(self, kind: str) -> np.ndarray:
        """Unit vectors of the entity (``kind="entity"``) or relation names, one row per id.

        Read from ``entity_vectors.npy``/``relation_vectors.npy`` when the index has them,
        else embedded (through the embedding cache) on first use.
        """
        if kind not in ("entity", "relation"):
            raise ConfigError(f"kind must be 'entity' or 'relation', got {kind!r}")
        if kind not in self._name_vectors:
            name = f"{kind}_vectors.npy"
            names = self.store.entities if kind == "entity" else self.store.relations
            if self._files is not None and self._files.has(name):
                vecs = self._files.npy_mapped(name, ndim=2)
            else:
                enc = CachedEncoder(self.encoder, EmbeddingCache(default_cache_path()))
                vecs = enc.encode(names)
            if len(vecs) != len(names):
                raise IndexFormatError(f"{self.path}/{kind}_vectors.npy has {len(vecs)} rows for {len(names)} "
                                       f"names; rebuild the index: `chronorag ingest KG --out {self.path}`")
            self._name_vectors[kind] = vecs
        return self._name_vectors[kind]

    def _settings_encoder(self) -> Encoder:
        """``Settings.embed_model`` for an index built with it, checked to be the same model."""
        enc = as_encoder(None)
        want = self.meta.get("model_id")
        if not isinstance(enc, FrameworkEncoder) or enc.model_id != want:
            got = enc.model_id if isinstance(enc, FrameworkEncoder) else "none set"
            raise IndexFormatError(
                f"index {self.path} was built with LlamaIndex Settings.embed_model ({want!r}); set "
                f"Settings.embed_model to that model before searching (now: {got!r}), or assign "
                "`index.encoder = ...`")
        self._encoder = self._check_dim(enc)
        return self._encoder

    @property
    def encoder(self) -> Encoder:
        """The query encoder matching the one used at build time (loaded lazily)."""
        if self._encoder is None:
            kind = self.meta.get("encoder")
            if kind == SETTINGS_ENCODER:
                return self._settings_encoder()
            if kind is None:
                raise IndexFormatError(
                    f"index {self.path} was built with a custom encoder "
                    f"({self.meta.get('model_id')!r}); set `index.encoder = ...` before searching"
                )
            kwargs = dict(self.meta.get("encoder_kwargs", {}))
            self._encoder = self._check_dim(make_encoder(kind, **kwargs))
        return self._encoder

    @encoder.setter
    def encoder(self, enc: Encoder) -> None:
        self._encoder = self._check_dim(enc)

    def _check_dim(self, enc: Encoder) -> Encoder:
        dim, stored = int(getattr(enc, "dim", 0) or 0), self.vectors.dim
        if dim and dim != stored:
            raise IndexFormatError(
                f"the encoder {enc.model_id!r} gives {dim}-d vectors but the index at {self.path} "
                f"stores {stored}-d vectors (built with {self.meta.get('model_id')!r}); query it with "
                "the encoder it was built with, or rebuild it with `chronorag ingest KG --out DIR "
                "--encoder ...`")
        return enc

    def events_of_triples(self, rows: np.ndarray) -> list[np.ndarray]:
        """For each triple row, the ids of its events (in id order)."""
        if self._events_of_triple is None:
            fs = self._files
            if fs is not None and fs.has("events_by_triple.npy") and fs.has("triple_bounds.npy"):
                # saved at build: memory-mapped, shared by workers
                order = fs.npy_mapped("events_by_triple.npy", ndim=1)
                bounds = fs.npy_mapped("triple_bounds.npy", ndim=1)
            else:
                order, bounds = events_by_triple(self.triple_of_event, len(self.triples))
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
            raise ConfigError(f"k must be >= 1, got {k}")
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

    def triples_in_time(self, *, begin_time: str = "-inf", end_time: str = "inf",
                        type: str = "in/on") -> tuple[np.ndarray, np.ndarray]:
        """The events passing a TempTool time filter and the triple rows holding any of them:
        ``(event_ids, rows)``, for a search among them ("the top k in June 2014", not "the
        top k over all time, then those in June 2014")."""
        st = self.store
        ev = st.filter_time(st.time_range(begin_time, end_time), begin_time=begin_time, end_time=end_time,
                            type=type)
        return ev, np.unique(np.asarray(self.triple_of_event)[ev])

    def search_triples(
        self, query: str, k: int = 10, *, subset: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` triple rows for a text query: ``(scores, rows)`` (1-D each)."""
        if not isinstance(query, str) or not query.strip():
            raise ConfigError(f"query must be a non-empty string, got {query!r}")
        qv = self.encoder.encode([query])
        scores, rows = self.vectors.search(qv, k, subset=subset)
        keep = rows[0] >= 0
        return scores[0][keep], rows[0][keep]

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, gpu: bool | None = None) -> EventIndex:
        """Load an index directory written by :func:`build_event_index`.

        Every file is read from one version of the index, checked against its build-time
        fingerprint (:class:`~chronorag.graphs.index_files.IndexFiles`); files read later
        (:meth:`name_vectors`, :meth:`event_vectors`) come from that same version, even
        after a concurrent rebuild.
        """
        shown = Path(directory)
        files = IndexFiles(shown)  # one version, even while a writer replaces the index
        if files.has("postgres.json"):  # a manifest: the index lives in PostgreSQL
            from chronorag.graphs.pg_store import load_pg_index

            return load_pg_index(snapshot(shown), shown)
        if not files.has("index.json"):
            raise IndexFormatError(
                f"{shown} is not a chronorag index directory (no index.json); build one with "
                "`chronorag ingest KG.tsv.gz --out DIR`"
            )
        meta = files.json("index.json")
        if not isinstance(meta, dict) or meta.get("format") != INDEX_FORMAT_VERSION:
            fmt = meta.get("format") if isinstance(meta, dict) else None
            raise IndexFormatError(f"{shown}: index format {fmt!r}, expected {INDEX_FORMAT_VERSION}; "
                                   f"rebuild it: `chronorag ingest KG --out {shown}`")
        store = TemporalEventStore.load(files)
        fp = meta.get("store_fingerprint")
        if fp is not None and fp != store.fingerprint():
            raise IndexFormatError(
                f"{shown}: index.json was built for another event store (fingerprint {fp}, the "
                f"store here is {store.fingerprint()}); rebuild the index with `chronorag ingest`")
        triples = files.npy_mapped("triples.npy", ndim=1)
        toe = files.npy_mapped("triple_of_event.npy", ndim=1)
        vectors = VectorIndex.load(files, gpu=gpu)
        n = len(store)
        if (len(toe) != n or (n and (int(triples.max()) >= n or int(toe.max()) >= len(triples)
                                     or int(triples.min()) < 0 or int(toe.min()) < 0))
                or len(vectors) != len(triples)):
            raise IndexFormatError(
                f"{shown}: triples.npy/triple_of_event.npy/vectors.npy do not match the event store "
                f"({len(triples)} triples, {len(toe)} event rows, {len(vectors)} vectors for {n} "
                "events); a file comes from another index; rebuild it with `chronorag ingest`")
        return cls(store=store, triples=triples, triple_of_event=toe, vectors=vectors,
                   meta=meta, path=shown, _files=files)


def build_event_index(
    store: TemporalEventStore,
    out_dir: str | os.PathLike[str],
    *,
    encoder: Encoder | str | None = None,
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
    encoder : Encoder, str, LlamaIndex BaseEmbedding or LangChain Embeddings, optional
        An encoder, a kind for :func:`~chronorag.graphs.encoders.make_encoder`, or a
        framework embedding model (see :func:`~chronorag.graphs.encoders.as_encoder`).
        ``None`` (default): LlamaIndex ``Settings.embed_model`` when the user set one
        (recorded as ``"settings"``: :meth:`EventIndex.load` then queries with
        ``Settings.embed_model`` again, after checking it is the same model), else the
        bundled MiniLM. An encoder instance is recorded by its ``model_id`` only; pass a
        kind to let :meth:`EventIndex.load` rebuild the matching query encoder.
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
        raise ConfigError("cannot index an empty event store")
    check_output_dir(out_dir)  # refuse a foreign directory before the slow part
    timings: dict[str, float] = {}
    t0 = time.perf_counter()  # includes the one-time distillation of the static encoder
    if encoder is None:  # LlamaIndex Settings.embed_model when set, else MiniLM
        enc = as_encoder(None)
        kind: str | None = SETTINGS_ENCODER if isinstance(enc, FrameworkEncoder) else "minilm"
        if kind == "minilm" and encoder_kwargs:
            enc = make_encoder("minilm", progress=progress, **encoder_kwargs)
    else:
        kind = encoder if isinstance(encoder, str) else getattr(encoder, "kind", None)
        enc = (make_encoder(encoder, progress=progress, **(encoder_kwargs or {}))
               if isinstance(encoder, str) else as_encoder(encoder))
    timings["encoder_load_s"] = time.perf_counter() - t0
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
        "store_fingerprint": store.fingerprint(),
        "timings": timings,
    }
    with write_index(out_dir) as tmp:
        store.write(tmp)
        np.save(tmp / "triples.npy", first)
        np.save(tmp / "triple_of_event.npy", inverse)
        order, bounds = events_by_triple(inverse, len(first))
        np.save(tmp / "events_by_triple.npy", order)
        np.save(tmp / "triple_bounds.npy", bounds)
        vindex.save(tmp)
        np.save(tmp / "entity_vectors.npy", ent_vecs)
        np.save(tmp / "relation_vectors.npy", rel_vecs)
        write_json(tmp / "index.json", meta)
    return EventIndex(store=store, triples=first, triple_of_event=inverse, vectors=vindex,
                      meta=meta, path=Path(out_dir), _encoder=enc,
                      _name_vectors={"entity": ent_vecs, "relation": rel_vecs})
