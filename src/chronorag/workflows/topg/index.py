"""Build, extend and load ToPG index directories.

An index directory holds a :class:`~chronorag.workflows.topg.proposition_graph.PropositionGraph`
(written atomically) and the name of the encoder that embedded it. :func:`build_topg_index`
reads a corpus, extracts propositions (spaCy without an LLM, or an LLM), embeds
propositions and entities, reconciles entities with FAISS (cosine >= 0.9) and, when
``leidenalg`` and ``igraph`` are installed, computes the hierarchical Leiden communities
used by Global mode. :func:`add_documents` appends new passages to an existing index
without touching the rest.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from chronorag.errors import ConfigError, DataFormatError, MissingFileError
from chronorag.workflows.topg.proposition_graph import PropositionGraph

__all__ = ["TopgIndex", "add_documents", "build_topg_index", "dedup_passages", "load_topg_index", "read_corpus"]


def read_corpus(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """Read passages: a JSON list of ``{title, text}`` or ``{context}`` records, or a folder.

    A folder contributes every ``.txt`` / ``.md`` file (sorted), titled by its file
    name. A ``{context}`` record (GraphRAG-Bench) is one long text: it is cut into
    passages of about 1,200 characters at sentence ends, titled by its ``corpus_name``
    when present.

    Raises
    ------
    FileNotFoundError
        The path does not exist.
    DataFormatError
        A record has neither ``text`` nor ``context``.
    """
    p = Path(path)
    if not p.exists():
        raise MissingFileError(f"no such corpus: {p}")
    if p.is_dir():
        files = sorted(x for x in p.rglob("*") if x.suffix.lower() in (".txt", ".md") and x.is_file())
        if not files:
            raise DataFormatError(f"{p} holds no .txt or .md files")
        return [{"title": f.stem, "text": f.read_text(encoding="utf-8")} for f in files]
    try:
        data = json.loads(p.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise DataFormatError(f"{p}: not JSON ({exc.msg}); expected a list of {{title, text}} records") from None
    except RecursionError:
        raise DataFormatError(f"{p}: JSON nested too deeply; expected a list of {{title, text}} records") from None
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise DataFormatError(f"{p}: expected a JSON list of records, got {type(data).__name__}")
    out: list[dict[str, str]] = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise DataFormatError(f"{p}: record #{i} is not an object")
        if isinstance(rec.get("text"), str):
            out.append({"title": str(rec.get("title") or ""), "text": rec["text"]})
        elif isinstance(rec.get("context"), str):
            out.extend({"title": "", "text": c} for c in chunk_text(rec["context"]))
        else:
            raise DataFormatError(f"{p}: record #{i} has neither a 'text' nor a 'context' string")
    return out


def chunk_text(text: str, max_chars: int = 1200) -> list[str]:
    """Cut a long text into chunks of at most about ``max_chars`` at sentence ends."""
    from chronorag.workflows.topg.extraction import split_sentences

    chunks: list[str] = []
    cur = ""
    for s in split_sentences(text):
        if cur and len(cur) + 1 + len(s) > max_chars:
            chunks.append(cur)
            cur = s
        else:
            cur = f"{cur} {s}".strip()
    if cur:
        chunks.append(cur)
    return chunks


@dataclass
class TopgIndex:
    """A loaded ToPG index: the graph and the encoder that embedded it."""

    graph: PropositionGraph
    encoder: Any
    path: Path | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` with the index's encoder."""
        return np.asarray(self.encoder.encode(list(texts)), dtype=np.float32)


def _make_encoder(encoder: Any, cache: str | os.PathLike[str] | None, progress: bool) -> tuple[Any, str]:
    from chronorag.graphs.encoders import CachedEncoder, EmbeddingCache
    from chronorag.graphs.event_index import default_cache_path

    if isinstance(encoder, str):
        name = encoder
        enc = _shared_encoder(encoder)
    else:
        enc, name = encoder, getattr(encoder, "kind", None) or "custom"
    return CachedEncoder(enc, EmbeddingCache(cache or default_cache_path()), progress=progress), name


def _extend(graph: PropositionGraph, passages: list[dict[str, str]], extractor: Any, enc: Any,
            progress: bool) -> dict[str, Any]:
    from chronorag.workflows.topg.extraction import faiss_matcher

    t0 = time.perf_counter()
    records = extractor.extract(passages, progress=progress)
    t1 = time.perf_counter()
    pv = enc.encode([r.text for r in records]) if records else np.zeros((0, graph.dim), np.float32)
    pav = enc.encode([f"{p['title']}: {p['text']}" if p.get("title") else p["text"] for p in passages])
    added = graph.add_documents(passages, records, prop_vectors=pv, entity_vectors=enc.encode,
                                matcher=faiss_matcher, passage_vectors=pav)
    t2 = time.perf_counter()
    return {**added, "extract_s": round(t1 - t0, 2), "embed_reconcile_s": round(t2 - t1, 2),
            "skipped_records": int(getattr(extractor, "stats", {}).get("skipped_records", 0))}


def _communities(graph: PropositionGraph, progress: bool) -> float:
    t = time.perf_counter()
    try:
        from chronorag.workflows.topg.communities import hierarchical_leiden
    except ImportError:  # pragma: no cover
        return 0.0
    try:
        graph.communities = hierarchical_leiden(graph)
    except ImportError:
        graph.communities = None
    return round(time.perf_counter() - t, 2)


def _extractor(extractor: Any, llm: Any) -> Any:
    from chronorag.workflows.topg.extraction import (
        LLMPropositionExtractor,
        SpacyPropositionExtractor,
    )

    if extractor is not None:
        return extractor
    if llm is not None:
        return LLMPropositionExtractor(llm)
    return SpacyPropositionExtractor()


def build_topg_index(
    passages: Sequence[dict[str, str]],
    out_dir: str | os.PathLike[str],
    *,
    encoder: Any = "minilm",
    llm: Any = None,
    extractor: Any = None,
    cache: str | os.PathLike[str] | None = None,
    communities: bool = True,
    progress: bool = True,
) -> tuple[TopgIndex, dict[str, Any]]:
    """Index passages into a new ToPG index directory (replaced atomically).

    Parameters
    ----------
    passages : sequence of dict
        ``{"title", "text"}`` records (see :func:`read_corpus`).
    out_dir : path-like
        Index directory.
    encoder : str or Encoder
        ``"minilm"`` (default), ``"static"`` or an encoder object.
    llm : object, optional
        Extract with this LLM (anything ``resolve_llm`` accepts); default spaCy, no LLM.
    extractor : object, optional
        A ready extractor (overrides ``llm``).
    cache : path-like, optional
        Embedding cache file.
    communities : bool
        Compute hierarchical Leiden communities for Global mode (needs the ``graph`` extra).
    progress : bool
        Progress bars.

    Returns
    -------
    (TopgIndex, dict)
        The index and a summary (node/edge counts, seconds, peak RSS in MB).
    """
    passages = list(passages)
    if not passages:
        raise ConfigError("no passages to index")
    t0 = time.perf_counter()
    enc, name = _make_encoder(encoder, cache, progress)
    ext = _extractor(extractor, llm)
    graph = PropositionGraph(int(enc.dim))
    info = _extend(graph, passages, ext, enc, progress)
    comm_s = _communities(graph, progress) if communities else 0.0
    graph.save(out_dir, meta={"encoder": name, "model_id": enc.model_id, "extractor": ext.name})
    summary = {**graph.stats(), **info, "communities": len(graph.communities or []),
               "communities_s": comm_s, "seconds": round(time.perf_counter() - t0, 2),
               "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    _cached_index.cache_clear()
    return TopgIndex(graph, enc, Path(out_dir)), summary


def add_documents(
    index_dir: str | os.PathLike[str],
    passages: Sequence[dict[str, str]],
    *,
    llm: Any = None,
    extractor: Any = None,
    cache: str | os.PathLike[str] | None = None,
    communities: bool = True,
    progress: bool = False,
) -> tuple[TopgIndex, dict[str, Any]]:
    """Add passages to an existing index; earlier nodes, ids and vectors are kept as they are.

    A passage already in the index (the same text, whitespace and case aside, or the
    same non-empty title), or given twice, is skipped and counted in the summary's
    ``skipped_duplicates`` (with up to 10 of their titles in ``skipped_titles``); when
    nothing new remains the index is left unchanged. Communities (Global mode) are
    recomputed over the whole graph when requested.
    """
    idx = load_topg_index(index_dir, cached=False)
    new, skipped = dedup_passages(idx.graph.passages, passages)
    dup_info = {"skipped_duplicates": len(skipped),
                "skipped_titles": [p.get("title") or p["text"][:60] for p in skipped[:10]]}
    enc, _ = _make_encoder(idx.graph.meta.get("encoder", "minilm"), cache, progress)
    if not new:
        return TopgIndex(idx.graph, enc, Path(index_dir)), {**idx.graph.stats(), "added_passages": 0,
                                                             **dup_info}
    info = _extend(idx.graph, new, _extractor(extractor, llm), enc, progress)
    if communities:
        _communities(idx.graph, progress)
    idx.graph.save(index_dir)
    _cached_index.cache_clear()
    return TopgIndex(idx.graph, enc, Path(index_dir)), {**idx.graph.stats(), **info,
                                                         "added_passages": len(new), **dup_info}


def _passage_key(text: str) -> str:
    return " ".join(text.casefold().split())


def dedup_passages(indexed: Sequence[dict[str, Any]], passages: Sequence[dict[str, str]]
                   ) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Split ``passages`` into ``(new, skipped)``: skipped ones repeat an indexed (or an
    earlier given) passage's text, or its non-empty title."""
    texts = {_passage_key(p["text"]) for p in indexed}
    titles = {p["title"] for p in indexed if p.get("title")}
    new: list[dict[str, str]] = []
    skipped: list[dict[str, str]] = []
    for p in passages:
        key, title = _passage_key(p["text"]), p.get("title") or ""
        if key in texts or (title and title in titles):
            skipped.append(p)
            continue
        texts.add(key)
        if title:
            titles.add(title)
        new.append(p)
    return new, skipped


@lru_cache(maxsize=4)
def _shared_encoder(name: str) -> Any:
    """One encoder object per kind and process (encoders are stateless)."""
    from chronorag.graphs.encoders import make_encoder

    return make_encoder(name)


@lru_cache(maxsize=4)
def _cached_index(path: str) -> TopgIndex:
    return load_topg_index(path, cached=False)


def load_topg_index(index_dir: str | os.PathLike[str], *, cached: bool = True,
                    encoder: Any = None) -> TopgIndex:
    """Load an index directory and its encoder (memoised per path when ``cached``)."""
    if cached and encoder is None:
        return _cached_index(str(Path(index_dir).resolve()))
    g = PropositionGraph.load(index_dir)
    enc = encoder if encoder is not None else _shared_encoder(g.meta.get("encoder", "minilm"))
    if int(getattr(enc, "dim", g.dim)) != g.dim:
        raise ConfigError(f"encoder dimension {enc.dim} does not match the index's {g.dim}")
    return TopgIndex(g, enc, Path(index_dir))
