"""Time-sliced knowledge graph (T-GRAG's temporal KG), as plain data.

Every piece carries its period (e.g. a report year):

- **chunks**: source text blocks ``(period, text)``;
- **entities** ``e^t``: one node per (name, period), so an entity's knowledge from
  different periods never merges (T-GRAG Eq. 1);
- **knowledge units** ``k^t``: short statements (a sentence, or an LLM-written
  description) attached to the entities they are about, with the chunk they come from;
- **relations**: (source entity, target entity, description, weight) within a period.

The structure is built by an extractor (:mod:`chronorag.retrievers.tgrag.index`) and can
be extended one period at a time (:meth:`TimeSlicedKG.add_period`), which touches
only the new period's entries.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chronorag.errors import ArgumentTypeError, ConfigError, IndexFormatError

__all__ = ["TimeSlicedKG", "PeriodExtraction", "KnowledgeUnit", "Relation"]

TSKG_FORMAT_VERSION = 1


@dataclass(frozen=True)
class KnowledgeUnit:
    """A statement about one or more entities, from one chunk."""

    text: str
    entities: tuple[str, ...]
    chunk: int  # index into the period's chunk list


@dataclass(frozen=True)
class Relation:
    """A relation between two entities of the same period."""

    source: str
    target: str
    description: str = "co-occurs with"
    weight: float = 1.0


@dataclass
class PeriodExtraction:
    """What an extractor produced for one period."""

    period: str
    chunks: list[str]
    entity_types: dict[str, str] = field(default_factory=dict)
    units: list[KnowledgeUnit] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    skipped_records: int = 0


class TimeSlicedKG:
    """Chunks, period-scoped entity nodes, knowledge units and relations, as flat arrays.

    Ids are positions: ``chunk_period[c]``, ``node_name[n]`` / ``node_period[n]``,
    ``unit_text[u]`` / ``unit_chunk[u]`` and the CSR ``unit_nodes`` (unit -> nodes).
    """

    def __init__(self) -> None:
        self.periods: list[str] = []
        self.chunk_text: list[str] = []
        self.chunk_period: list[str] = []
        self.node_name: list[str] = []
        self.node_period: list[str] = []
        self.node_type: list[str] = []
        self.unit_text: list[str] = []
        self.unit_chunk: list[int] = []
        self.unit_node_ptr: list[int] = [0]
        self.unit_node_idx: list[int] = []
        self.edges: list[tuple[int, int, str, float]] = []
        self._node_id: dict[tuple[str, str], int] = {}
        self.skipped_records = 0

    def __repr__(self) -> str:
        return (f"TimeSlicedKG({len(self.periods)} periods, {len(self.chunk_text)} chunks, "
                f"{len(self.node_name)} entity nodes, {len(self.unit_text)} knowledge units, "
                f"{len(self.edges)} relations)")

    # ------------------------------------------------------------------ build
    def add_period(self, ex: PeriodExtraction) -> dict[str, int]:
        """Append one period's extraction; returns counts of what was added.

        Raises
        ------
        ValueError
            When the period is already present (periods are added once, whole) or a
            unit points at a chunk that does not exist.
        """
        if not isinstance(ex, PeriodExtraction):
            raise ArgumentTypeError(f"expected a PeriodExtraction, got {type(ex).__name__}")
        p = str(ex.period)
        if not p:
            raise ConfigError("period must be a non-empty string")
        if p in self.periods:
            raise ConfigError(f"period {p!r} is already indexed; remove it before re-adding")
        self.__dict__.pop("_n2u", None)  # node -> units cache is stale after adding
        c0 = len(self.chunk_text)
        n0, u0, e0 = len(self.node_name), len(self.unit_text), len(self.edges)
        self.periods.append(p)
        self.chunk_text.extend(ex.chunks)
        self.chunk_period.extend([p] * len(ex.chunks))

        def node(name: str) -> int:
            key = (name, p)
            i = self._node_id.get(key)
            if i is None:
                i = len(self.node_name)
                self._node_id[key] = i
                self.node_name.append(name)
                self.node_period.append(p)
                self.node_type.append(ex.entity_types.get(name, "entity"))
            return i

        for u in ex.units:
            if not 0 <= u.chunk < len(ex.chunks):
                raise ConfigError(f"knowledge unit points at chunk {u.chunk}, period {p} has {len(ex.chunks)}")
            ids = sorted({node(n) for n in u.entities})
            if not ids:
                continue
            self.unit_text.append(u.text)
            self.unit_chunk.append(c0 + u.chunk)
            self.unit_node_idx.extend(ids)
            self.unit_node_ptr.append(len(self.unit_node_idx))
        for r in ex.relations:
            a, b = node(r.source), node(r.target)
            if a != b:
                self.edges.append((a, b, r.description, float(r.weight)))
        self.skipped_records += ex.skipped_records
        return {"chunks": len(ex.chunks), "nodes": len(self.node_name) - n0,
                "units": len(self.unit_text) - u0, "relations": len(self.edges) - e0}

    # ----------------------------------------------------------------- access
    def node_id(self, name: str, period: str) -> int:
        """Id of entity ``name`` in ``period`` (KeyError if absent)."""
        return self._node_id[(name, period)]

    def units_of_node(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR node -> knowledge units."""
        ptr = np.asarray(self.unit_node_ptr, dtype=np.int64)
        idx = np.asarray(self.unit_node_idx, dtype=np.int64)
        units = np.repeat(np.arange(len(self.unit_text)), np.diff(ptr))
        order = np.lexsort((units, idx))
        nptr = np.zeros(len(self.node_name) + 1, dtype=np.int64)
        np.add.at(nptr, idx + 1, 1)
        return np.cumsum(nptr), units[order]

    def unit_nodes(self, u: int) -> list[int]:
        """Entity nodes a knowledge unit is about."""
        return self.unit_node_idx[self.unit_node_ptr[u]: self.unit_node_ptr[u + 1]]

    def neighbours(self) -> list[set[int]]:
        """1-hop neighbourhoods over the relations."""
        nb: list[set[int]] = [set() for _ in self.node_name]
        for a, b, _, _ in self.edges:
            nb[a].add(b)
            nb[b].add(a)
        return nb

    def nodes_in_periods(self, periods: Iterable[str] | None) -> np.ndarray:
        """Node ids in the given periods (all nodes for ``None``)."""
        per = np.asarray(self.node_period)
        if periods is None:
            return np.arange(len(per))
        return np.flatnonzero(np.isin(per, list(periods)))

    def chunks_in_periods(self, periods: Iterable[str] | None) -> np.ndarray:
        """Chunk ids in the given periods (all chunks for ``None``)."""
        per = np.asarray(self.chunk_period)
        if periods is None:
            return np.arange(len(per))
        return np.flatnonzero(np.isin(per, list(periods)))

    def node_text(self, n: int, *, max_units: int = 3) -> str:
        """Text embedded for a node: its name and its first knowledge units in its period."""
        if not hasattr(self, "_n2u"):
            self._n2u = self.units_of_node()
        ptr, units = self._n2u
        us = units[ptr[n]: ptr[n + 1]][:max_units]
        return f"{self.node_name[n]} ({self.node_period[n]}): " + " ".join(self.unit_text[u] for u in us)

    # ------------------------------------------------------------ persistence
    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write ``tskg.json`` into a directory."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        data: dict[str, Any] = {k: getattr(self, k) for k in (
            "periods", "chunk_text", "chunk_period", "node_name", "node_period", "node_type", "unit_text",
            "unit_chunk", "unit_node_ptr", "unit_node_idx", "edges", "skipped_records")}
        data["format"] = TSKG_FORMAT_VERSION
        (d / "tskg.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | os.PathLike[str] | Any) -> TimeSlicedKG:
        """Load what :meth:`save` wrote (``directory`` may be an opened
        :class:`~chronorag.graphs.index_files.IndexFiles`); a damaged or inconsistent
        ``tskg.json`` raises :class:`IndexFormatError` naming it."""
        from chronorag.graphs.index_files import IndexFiles

        files = IndexFiles.open(directory)
        if not files.has("tskg.json"):
            raise IndexFormatError(f"{files.shown} holds no time-sliced KG (tskg.json); build one with "
                                   f"`chronorag tgrag index DOCS --out {files.shown}`")
        data = files.json("tskg.json")
        if not isinstance(data, dict) or data.pop("format", None) != TSKG_FORMAT_VERSION:
            raise files.damaged("tskg.json", "not a time-sliced KG of this format")
        kg = cls()
        with files.parsing("tskg.json"):
            lists = ("periods", "chunk_text", "chunk_period", "node_name", "node_period", "node_type",
                     "unit_text", "unit_chunk", "unit_node_ptr", "unit_node_idx", "edges")
            for k in lists:
                if not isinstance(data[k], list):
                    raise ConfigError(f"{k} is not a list")
                setattr(kg, k, data[k])
            kg.skipped_records = int(data.get("skipped_records", 0))
            n_nodes, n_chunks, n_units = len(kg.node_name), len(kg.chunk_text), len(kg.unit_text)
            ok = (len(kg.chunk_period) == n_chunks and len(kg.node_period) == n_nodes == len(kg.node_type)
                  and len(kg.unit_chunk) == n_units and len(kg.unit_node_ptr) == n_units + 1
                  and all(isinstance(c, int) and 0 <= c < n_chunks for c in kg.unit_chunk)
                  and all(isinstance(i, int) and 0 <= i < n_nodes for i in kg.unit_node_idx)
                  and all(isinstance(x, int) and 0 <= x <= len(kg.unit_node_idx) for x in kg.unit_node_ptr)
                  and all(isinstance(x, str) for x in kg.node_name + kg.unit_text + kg.chunk_text))
            if not ok:
                raise ConfigError("its lists do not match each other (lengths or ids out of range)")
            edges = []
            for e in kg.edges:
                a, b, desc, w = e
                if not (0 <= int(a) < n_nodes and 0 <= int(b) < n_nodes):
                    raise ConfigError(f"edge {e!r:.80} names a node that does not exist")
                edges.append((int(a), int(b), str(desc), float(w)))
            kg.edges = edges  # type: ignore[assignment]
            kg._node_id = {(n, p): i for i, (n, p) in enumerate(zip(kg.node_name, kg.node_period))}
        return kg
