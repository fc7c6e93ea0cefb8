"""TempTool-R1's three temporal tools over the event store, plain and as LangChain tools.

- ``Get_time(head, rel, tail)``: when the relation held between head and tail.
- ``Get_head_entity(tail, rel, begin_time, end_time, type)``: heads that did ``rel``
  to ``tail`` under a temporal condition.
- ``Get_tail_entity(head, rel, begin_time, end_time, type)``: tails ``head`` did
  ``rel`` to under a temporal condition.

``type`` is one of ``"in/on"``, ``"before"``, ``"after"``, ``"between"`` and the
bounds may be ``"-inf"``/``"inf"`` (semantics in
:func:`chronorag.graphs.time.temporal_mask`; timestamps and intervals alike).

Free-text ``head``/``tail``/``rel`` are aligned to the KG vocabulary first
(:mod:`chronorag.workflows.temptool.alignment`): embedding top-50, rerank, top-1. The
relation alignment gets a prior for relations that actually connect the aligned
entities, so "criticise" between two entities picks the relation they share.

Every call returns a :class:`ToolResult`: a readable observation, the raw rows
(``head, rel, tail, time``, sorted by time) and what was aligned. An empty result
says "No results found" with the alignment so an agent can retry; bad arguments give
an error observation, never an exception, from the LangChain tools.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chronorag.errors import ChronoRAGError
from chronorag.graphs.time import FILTER_TYPES, parse_time
from chronorag.retrievers.event_index import EventIndex
from chronorag.workflows.temptool.alignment import (
    Alignment,
    LexicalReranker,
    NameAligner,
    Reranker,
    relation_tokens,
)

__all__ = ["TemporalKGTools", "ToolResult", "make_langchain_tools", "TOOL_NAMES"]

TOOL_NAMES = ("Get_time", "Get_head_entity", "Get_tail_entity")
MAX_OBS_ROWS = 30


@dataclass
class ToolResult:
    """What a tool call returns."""

    tool: str
    observation: str
    rows: list[dict[str, str]] = field(default_factory=list)
    aligned: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    latency_ms: float = 0.0


class TemporalKGTools:
    """The three temporal tools over an :class:`EventIndex`.

    Parameters
    ----------
    index : EventIndex
        Store plus name vectors.
    entity_reranker, relation_reranker : Reranker, optional
        Defaults: :class:`~chronorag.workflows.temptool.alignment.LexicalReranker`.
    top_n : int
        Embedding candidates before reranking (default 50).
    """

    def __init__(self, index: EventIndex, *, entity_reranker: Reranker | None = None,
                 relation_reranker: Reranker | None = None, top_n: int = 50) -> None:
        if not isinstance(index, EventIndex):
            raise TypeError(f"index must be an EventIndex, got {type(index).__name__}")
        self.index = index
        self.store = index.store
        enc = index.encoder
        self.entities = NameAligner(self.store.entities, index.name_vectors("entity"), enc,
                                    top_n=top_n, reranker=entity_reranker)
        self.relations = NameAligner([r.lower() for r in self.store.relations],
                                     index.name_vectors("relation"), enc, top_n=top_n,
                                     reranker=relation_reranker or LexicalReranker(
                                         tokenizer=relation_tokens, qualifier_weight=0.0))
        self._align_cache: dict[tuple[Any, ...], Alignment] = {}
        self._vec_cache: dict[str, np.ndarray] = {}
        self._allowed: np.ndarray | None = None

    @contextlib.contextmanager
    def restricted(self, event_ids: np.ndarray) -> Iterator[None]:
        """Within the block, tools only return events among ``event_ids``.

        This turns the tools (and the reasoner driving them) into a *reader* over what
        a retriever returned.
        """
        prev = self._allowed
        self._allowed = np.unique(np.asarray(event_ids, dtype=np.int64))
        try:
            yield
        finally:
            self._allowed = prev

    def _vectors(self, *phrases: str) -> None:
        """Embed the phrases not embedded yet, in one batch."""
        todo = [p for p in dict.fromkeys(phrases) if isinstance(p, str) and p.strip()
                and p not in self._vec_cache]
        if todo:
            for p, v in zip(todo, self.index.encoder.encode(todo)):
                self._vec_cache[p] = v
        if len(self._vec_cache) > 50_000:
            self._vec_cache.clear()

    # --------------------------------------------------------------- alignment
    def align_entity(self, phrase: str) -> Alignment:
        """Align an entity phrase to the KG (cached per phrase)."""
        key = ("e", phrase)
        if key not in self._align_cache:
            self._align_cache[key] = self.entities.align(phrase, vector=self._vec_cache.get(phrase))
        return self._align_cache[key]

    def _prefetch(self, entities: tuple[str, ...], relation: str) -> None:
        """Embed, in one batch, the phrases that alignment will need to embed."""
        need = [p for p in entities if isinstance(p, str) and p.strip() and ("e", p) not in self._align_cache
                and not self.entities.is_exact(p)]
        if isinstance(relation, str) and relation.strip():
            need.append(relation)
        self._vectors(*need)

    def align_relation(self, phrase: str, *, head: int | None = None, tail: int | None = None) -> Alignment:
        """Align a relation phrase, preferring relations the aligned entities take part in."""
        key = ("r", phrase, head, tail)
        if key in self._align_cache:
            return self._align_cache[key]
        s = self.store
        present = np.zeros(len(s.relations), dtype=np.float64)
        if head is not None or tail is not None:
            ids = s.find(subject=None if head is None else s.entities[head],
                         object=None if tail is None else s.entities[tail])
            rels, counts = np.unique(s.relation[ids], return_counts=True)
            present[rels] = 1.0
        self._vectors(phrase)
        al = self.relations.align(phrase, prior=(lambda c: present[c]) if present.any() else None,
                                  vector=self._vec_cache.get(phrase))
        al = Alignment(query=al.query, name=s.relations[al.index], index=al.index, score=al.score,
                       candidates=al.candidates)
        self._align_cache[key] = al
        return al

    # ------------------------------------------------------------------- rows
    def _rows(self, ids: np.ndarray) -> list[dict[str, str]]:
        s = self.store
        ents, rels = s.entities, s.relations
        return [{"head": ents[s.subject[i]], "rel": rels[s.relation[i]], "tail": ents[s.object[i]],
                 "time": s.time_text(int(i))} for i in ids]

    @staticmethod
    def _check_filter(begin_time: str, end_time: str, type: str) -> str:  # noqa: A002
        t = str(type).strip().lower().replace(" ", "")
        t = {"in": "in/on", "on": "in/on"}.get(t, t)
        if t not in FILTER_TYPES:
            raise ValueError(f"type must be one of {FILTER_TYPES}, got {type!r}")
        parse_time(begin_time)
        parse_time(end_time)
        return t

    def _finish(self, tool: str, ids: np.ndarray, aligned: dict[str, str], t0: float,
                call: str) -> ToolResult:
        if self._allowed is not None:
            ids = ids[np.isin(ids, self._allowed)]
        rows = self._rows(ids)
        al = ", ".join(f"{k}={v!r}" for k, v in aligned.items())
        if not rows:
            obs = f"No results found for {call} (aligned to {al})."
        else:
            shown = rows[:MAX_OBS_ROWS]
            lines = [f"({r['head']}, {r['rel']}, {r['tail']}, {r['time']})" for r in shown]
            more = f"\n... {len(rows) - len(shown)} more" if len(rows) > len(shown) else ""
            obs = f"{call} aligned to {al}: {len(rows)} result(s)\n" + "\n".join(lines) + more
        return ToolResult(tool=tool, observation=obs, rows=rows, aligned=aligned,
                          latency_ms=(time.perf_counter() - t0) * 1000)

    def _error(self, tool: str, exc: Exception, t0: float) -> ToolResult:
        msg = f"Error in {tool}: {exc}"
        return ToolResult(tool=tool, observation=msg, error=str(exc),
                          latency_ms=(time.perf_counter() - t0) * 1000)

    # ------------------------------------------------------------------ tools
    def get_time(self, head: str, rel: str, tail: str) -> ToolResult:
        """When ``head`` did ``rel`` to ``tail`` (all matching events, by time)."""
        t0 = time.perf_counter()
        try:
            self._prefetch((head, tail), rel)
            h, t = self.align_entity(head), self.align_entity(tail)
            r = self.align_relation(rel, head=h.index, tail=t.index)
            ids = self.store.query(subject=h.name, relation=r.name, object=t.name)
        except (ChronoRAGError, ValueError, TypeError) as exc:
            return self._error("Get_time", exc, t0)
        return self._finish("Get_time", ids, {"head": h.name, "rel": r.name, "tail": t.name}, t0,
                            f"Get_time(head={head!r}, rel={rel!r}, tail={tail!r})")

    def get_head_entity(self, tail: str, rel: str, begin_time: str = "-inf", end_time: str = "inf",
                        type: str = "in/on") -> ToolResult:  # noqa: A002
        """Events ``(?, rel, tail)`` passing the temporal condition."""
        return self._filtered("Get_head_entity", "tail", tail, rel, begin_time, end_time, type)

    def get_tail_entity(self, head: str, rel: str, begin_time: str = "-inf", end_time: str = "inf",
                        type: str = "in/on") -> ToolResult:  # noqa: A002
        """Events ``(head, rel, ?)`` passing the temporal condition."""
        return self._filtered("Get_tail_entity", "head", head, rel, begin_time, end_time, type)

    def _filtered(self, tool: str, role: str, known: str, rel: str, begin_time: str, end_time: str,
                  type: str) -> ToolResult:  # noqa: A002
        """Shared body of the two entity tools; ``role`` is the known entity's side."""
        t0 = time.perf_counter()
        try:
            kind = self._check_filter(begin_time, end_time, type)
            self._prefetch((known,), rel)
            e = self.align_entity(known)
            r = self.align_relation(rel, **{role: e.index})
            side = {"subject": e.name} if role == "head" else {"object": e.name}
            ids = self.store.query(relation=r.name, begin_time=begin_time, end_time=end_time, type=kind, **side)
        except (ChronoRAGError, ValueError, TypeError) as exc:
            return self._error(tool, exc, t0)
        call = (f"{tool}({role}={known!r}, rel={rel!r}, begin_time={begin_time!r}, "
                f"end_time={end_time!r}, type={type!r})")
        return self._finish(tool, ids, {role: e.name, "rel": r.name}, t0, call)

    def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Dispatch a tool call by name (as the agent does); unknown names give an error result."""
        fn = {"Get_time": self.get_time, "Get_head_entity": self.get_head_entity,
              "Get_tail_entity": self.get_tail_entity}.get(name)
        if fn is None:
            return ToolResult(tool=name, observation=f"Error: unknown tool {name!r}; use one of {TOOL_NAMES}",
                              error="unknown tool")
        if not isinstance(args, dict):
            return ToolResult(tool=name, observation=f"Error in {name}: arguments must be an object",
                              error="bad arguments")
        try:
            return fn(**args)
        except TypeError as exc:  # missing or unexpected argument names
            return ToolResult(tool=name, observation=f"Error in {name}: {exc}", error=str(exc))


def make_langchain_tools(tools: TemporalKGTools) -> list[Any]:
    """The three tools as LangChain ``StructuredTool``s (sync and async).

    Each returns ``(observation, rows)`` with ``response_format="content_and_artifact"``,
    so the ``ToolMessage`` content is the readable observation and its artifact the rows.
    """
    from langchain_core.tools import StructuredTool
    from pydantic import BaseModel, Field, create_model

    ftype = Field("in/on", description="one of 'in/on', 'before', 'after', 'between'")

    class GetTimeArgs(BaseModel):
        head: str = Field(description="subject entity, as written in the question")
        rel: str = Field(description="relation phrase, as written in the question")
        tail: str = Field(description="object entity, as written in the question")

    window: dict[str, Any] = {
        "rel": (str, Field(description="relation phrase")),
        "begin_time": (str, Field("-inf", description="window start: YYYY[-MM[-DD]] or '-inf'")),
        "end_time": (str, Field("inf", description="window end: YYYY[-MM[-DD]] or 'inf'")),
        "type": (str, ftype),
    }
    GetHeadArgs = create_model(  # noqa: N806 - a class
        "GetHeadArgs", tail=(str, Field(description="the known object entity")), **window)
    GetTailArgs = create_model(  # noqa: N806 - a class
        "GetTailArgs", head=(str, Field(description="the known subject entity")), **window)

    def wrap(name: str) -> tuple[Any, Any]:
        def run(**kwargs: Any) -> tuple[str, list[dict[str, str]]]:
            res = tools.call(name, kwargs)
            return res.observation, res.rows

        async def arun(**kwargs: Any) -> tuple[str, list[dict[str, str]]]:
            return run(**kwargs)

        return run, arun

    specs = [
        ("Get_time", GetTimeArgs, "Find when a relation held between a head and a tail entity."),
        ("Get_head_entity", GetHeadArgs,
         "Find head entities that had the relation with a known tail under a time condition."),
        ("Get_tail_entity", GetTailArgs,
         "Find tail entities a known head had the relation with under a time condition."),
    ]
    out = []
    for name, schema, desc in specs:
        run, arun = wrap(name)
        out.append(StructuredTool.from_function(func=run, coroutine=arun, name=name, description=desc,
                                                args_schema=schema, response_format="content_and_artifact"))
    return out
