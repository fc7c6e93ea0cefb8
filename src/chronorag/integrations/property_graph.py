"""Bridge between the event store and LlamaIndex property graph stores.

:func:`export_to_property_graph` writes one ``EntityNode`` per entity and one
``Relation`` per event into any ``PropertyGraphStore`` (Simple, Neo4j, FalkorDB, ...);
:func:`store_from_property_graph` reads such a graph back into a
:class:`~chronorag.graphs.store.TemporalEventStore`, so users whose graph lives in a
property-graph database can run chronorag's methods on it.

Why relation labels carry the time
----------------------------------
``SimplePropertyGraphStore`` keys a relation by ``(source, label, target)`` and
silently drops a second relation with the same key, so two events that differ only
in their date would collide. Each exported relation's label is therefore
``"<relation> @ <time>"`` (plus ``" #k"`` for the k-th exact duplicate event), and
its properties hold the clean fields: ``relation``, ``start``, ``end``, ``event_id``,
``text`` when present, ``chronorag_event=True`` (the marker the importer looks for)
and the event's attributes under ``attrs``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from chronorag.errors import DataFormatError
from chronorag.graphs.store import EventStoreBuilder, TemporalEventStore

__all__ = ["EVENT_MARKER", "export_to_property_graph", "relation_label", "store_from_property_graph"]

EVENT_MARKER = "chronorag_event"


def relation_label(relation: str, time: str, duplicate: int = 0) -> str:
    """The exported label of an event's relation: ``"Consult @ 2014-03-05"`` (``" #2"`` for duplicates)."""
    return f"{relation} @ {time}" + (f" #{duplicate}" if duplicate else "")


def export_to_property_graph(
    store: TemporalEventStore, pg_store: Any, *, batch_size: int = 10_000, progress: bool = False
) -> int:
    """Write every entity and event of ``store`` into a LlamaIndex ``PropertyGraphStore``.

    Parameters
    ----------
    store : TemporalEventStore
        The events.
    pg_store : llama_index.core.graph_stores.types.PropertyGraphStore
        Target store (anything with ``upsert_nodes`` and ``upsert_relations``).
    batch_size : int
        Relations per ``upsert_relations`` call.
    progress : bool
        Show a progress bar.

    Returns
    -------
    int
        Number of relations written (one per event).
    """
    from llama_index.core.graph_stores.types import EntityNode, Relation

    for meth in ("upsert_nodes", "upsert_relations"):
        if not callable(getattr(pg_store, meth, None)):
            raise TypeError(f"pg_store must be a PropertyGraphStore (no {meth}): {type(pg_store).__name__}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    pg_store.upsert_nodes([EntityNode(name=n, label="entity") for n in store.entities])
    seen: Counter[tuple[int, int, int, int, int]] = Counter()
    batch: list[Any] = []
    n_written = 0
    rng: Any = range(len(store))
    if progress:
        from tqdm.auto import tqdm

        rng = tqdm(rng, desc="exporting events", unit="event")
    for i in rng:
        ev = store.event(i)
        key = (int(store.subject[i]), int(store.relation[i]), int(store.object[i]),
               int(store.t_lo[i]), int(store.t_hi[i]))
        dup = seen[key]
        seen[key] += 1
        props: dict[str, Any] = {EVENT_MARKER: True, "relation": ev.relation, "start": ev.start,
                                 "end": ev.end, "event_id": ev.id}
        if ev.text is not None:
            props["text"] = ev.text
        if ev.attrs:
            props["attrs"] = json.dumps(dict(ev.attrs), ensure_ascii=False, sort_keys=True)
        batch.append(Relation(label=relation_label(ev.relation, ev.time, dup),
                              source_id=ev.subject, target_id=ev.object, properties=props))
        if len(batch) >= batch_size:
            pg_store.upsert_relations(batch)
            n_written += len(batch)
            batch = []
    if batch:
        pg_store.upsert_relations(batch)
        n_written += len(batch)
    return n_written


def store_from_property_graph(pg_store: Any) -> TemporalEventStore:
    """Build an event store from the chronorag events in a ``PropertyGraphStore``.

    Relations are found with ``get_triplets(properties={"chronorag_event": True})``;
    events come back in their original ``event_id`` order.

    Raises
    ------
    DataFormatError
        When a marked relation lacks ``relation`` or ``start``.
    """
    if not callable(getattr(pg_store, "get_triplets", None)):
        raise TypeError(f"pg_store must be a PropertyGraphStore (no get_triplets): {type(pg_store).__name__}")
    triplets = pg_store.get_triplets(properties={EVENT_MARKER: True})
    rows = []
    for src, rel, dst in triplets:
        p = rel.properties
        if not p.get(EVENT_MARKER):
            continue
        if "relation" not in p or "start" not in p:
            raise DataFormatError(f"relation {rel.label!r} ({src.id} -> {dst.id}) lacks 'relation' or 'start'")
        rows.append((p.get("event_id", len(rows)), src.id, p["relation"], dst.id, p["start"], p.get("end"),
                     p.get("text"), p.get("attrs")))
    rows.sort(key=lambda r: r[0])
    b = EventStoreBuilder()
    for _, s, r, o, start, end, text, attrs in rows:
        b.add(s, r, o, start, end, text=text, attrs=json.loads(attrs) if attrs else None)
    return b.build()
