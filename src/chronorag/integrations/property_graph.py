"""Bridge between the event store and LlamaIndex property-graph stores (and graph databases).

:func:`export_to_property_graph` writes one ``EntityNode`` per entity and one
``Relation`` per event into a ``PropertyGraphStore``; :func:`store_from_property_graph`
reads such a graph back into a :class:`~chronorag.graphs.store.TemporalEventStore`, so
users whose graph lives in a graph database can run chronorag's methods on it.

Which stores work (tested)
--------------------------
- ``SimplePropertyGraphStore`` (in memory, LlamaIndex core).
- ``LadybugPropertyGraphStore`` (``llama-index-graph-stores-ladybug``, the maintained Kuzu
  fork) and ``KuzuPropertyGraphStore`` (``llama-index-graph-stores-kuzu``), both embedded
  databases on disk, in their default unstructured schema (``Entity`` nodes, ``LINKS``
  relations). Install them with ``pip install 'chronorag[graphdb]'``.

Other stores (Neo4j, FalkorDB, ...) go through the generic path (batched
``upsert_nodes``/``upsert_relations``; reading back needs ``get_triplets(properties=...)``);
they are not tested here.

How events survive a store
--------------------------
- **Labels carry the time.** A store keys a relation by ``(source, label, target)`` and
  drops a second relation with the same key, so two events that differ only in their
  date would collide. Each label is ``"<relation> @ <time>"`` (``" #k"`` for the k-th
  exact duplicate), and :func:`parse_relation_label` reads it back, so an event graph
  survives even a store that keeps nothing but labels.
- **Fields in one property.** Relation properties (``relation``, ``start``, ``end``,
  ``event_id``, ``text``, ``attrs``) travel as one JSON string under ``chronorag_event``.
  The Kuzu/Ladybug schemas keep no free-form relation properties, so on those stores the
  bridge adds one ``chronorag_event STRING`` column to the ``LINKS`` table.
- **Names round-trip.** LlamaIndex derives a node id from its name and rewrites ``"``
  on the way (``Nicholas "Nick" Xenophon`` -> ``Nicholas  Nick  Xenophon``); relations
  therefore point at the node *id* and the importer reads the node *name*. Two names that
  map to one id are refused on export rather than merged.
- **Batched.** On Kuzu/Ladybug nodes are merged with one ``UNWIND`` query per batch and
  relations are bulk-loaded with ``COPY LINKS FROM <Arrow table>`` (tens of thousands of
  events per second, against ~50-100/s for the store's one-query-per-relation upsert);
  relations already in the database are skipped, so exporting twice is idempotent.
  Reading back is one query with no ``LIMIT``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from chronorag.errors import ArgumentTypeError, ConfigError, DataFormatError
from chronorag.graphs.store import EventStoreBuilder, TemporalEventStore

__all__ = [
    "EVENT_MARKER",
    "export_to_property_graph",
    "parse_relation_label",
    "relation_label",
    "store_from_property_graph",
]

EVENT_MARKER = "chronorag_event"
_LABEL_RE = re.compile(r"^(?P<rel>.*) @ (?P<time>[^@#]+?)(?: #(?P<dup>\d+))?$", re.S)
_CYPHER_STORES = ("LadybugPropertyGraphStore", "KuzuPropertyGraphStore")


def relation_label(relation: str, time: str, duplicate: int = 0) -> str:
    """The exported label of an event's relation: ``"Consult @ 2014-03-05"`` (``" #2"`` for duplicates)."""
    return f"{relation} @ {time}" + (f" #{duplicate}" if duplicate else "")


def parse_relation_label(label: str) -> tuple[str, str, str]:
    """Invert :func:`relation_label`: ``(relation, start, end)``.

    Raises
    ------
    DataFormatError
        The label has no ``" @ <time>"`` part.

    Examples
    --------
    >>> parse_relation_label("Hold office @ 2005-11-22/2021-12-08 #1")
    ('Hold office', '2005-11-22', '2021-12-08')
    """
    m = _LABEL_RE.match(label) if isinstance(label, str) else None
    if m is None:
        raise DataFormatError(f"relation label {label!r} is not '<relation> @ <time>'; "
                              f"was this graph written by chronorag's export_to_property_graph?")
    t = m.group("time").strip()
    start, _, end = t.partition("/")
    return m.group("rel"), start, end or start


def _cypher_connection(pg_store: Any) -> Any | None:
    """The database connection of a Kuzu/Ladybug store in its unstructured schema, else None."""
    if type(pg_store).__name__ not in _CYPHER_STORES:
        return None
    if getattr(pg_store, "has_structured_schema", False):
        return None
    return getattr(pg_store, "connection", None)


def _ensure_event_column(conn: Any) -> None:
    res = conn.execute("CALL TABLE_INFO('LINKS') RETURN *")
    cols = set()
    while res.has_next():
        cols.add(str(res.get_next()[1]))
    if EVENT_MARKER not in cols:
        conn.execute(f"ALTER TABLE LINKS ADD {EVENT_MARKER} STRING DEFAULT NULL")


def _node_ids(store: TemporalEventStore) -> list[str]:
    from llama_index.core.graph_stores.types import EntityNode

    ids = [EntityNode(name=n).id for n in store.entities]
    if len(set(ids)) != len(ids):
        seen: dict[str, str] = {}
        for name, nid in zip(store.entities, ids):
            if nid in seen:
                raise DataFormatError(
                    f"entities {seen[nid]!r} and {name!r} get the same LlamaIndex node id {nid!r} "
                    f"(LlamaIndex replaces '\"' in ids); rename one of them before exporting")
            seen[nid] = name
    return ids


def _event_rows(store: TemporalEventStore, node_ids: list[str]) -> Any:
    seen: Counter[tuple[int, int, int, int, int]] = Counter()
    for i in range(len(store)):
        ev = store.event(i)
        key = (int(store.subject[i]), int(store.relation[i]), int(store.object[i]),
               int(store.t_lo[i]), int(store.t_hi[i]))
        dup = seen[key]
        seen[key] += 1
        props: dict[str, Any] = {"relation": ev.relation, "start": ev.start, "end": ev.end,
                                 "event_id": ev.id}
        if ev.text is not None:
            props["text"] = ev.text
        if ev.attrs:
            props["attrs"] = dict(ev.attrs)
        yield (node_ids[int(store.subject[i])], relation_label(ev.relation, ev.time, dup),
               node_ids[int(store.object[i])], json.dumps(props, ensure_ascii=False, sort_keys=True))


def export_to_property_graph(
    store: TemporalEventStore, pg_store: Any, *, batch_size: int = 10_000, progress: bool = False
) -> int:
    """Write every entity and event of ``store`` into a LlamaIndex ``PropertyGraphStore``.

    Exporting the same store twice is idempotent (relations are merged by their label).

    Parameters
    ----------
    store : TemporalEventStore
        The events.
    pg_store : llama_index.core.graph_stores.types.PropertyGraphStore
        Target store (anything with ``upsert_nodes`` and ``upsert_relations``).
    batch_size : int
        Nodes or relations per write.
    progress : bool
        Show a progress bar.

    Returns
    -------
    int
        Number of relations written (one per event).

    Raises
    ------
    DataFormatError
        Two entity names map to one LlamaIndex node id.
    """
    from llama_index.core.graph_stores.types import EntityNode, Relation

    if not isinstance(store, TemporalEventStore):
        raise ArgumentTypeError(f"store must be a TemporalEventStore, got {type(store).__name__}")
    for meth in ("upsert_nodes", "upsert_relations"):
        if not callable(getattr(pg_store, meth, None)):
            raise ArgumentTypeError(f"pg_store must be a PropertyGraphStore (no {meth}): {type(pg_store).__name__}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch_size must be an int >= 1, got {batch_size!r}")
    node_ids = _node_ids(store)
    bar: Any = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(store), desc="exporting events", unit="event")
    conn = _cypher_connection(pg_store)
    n_written = 0
    batch: list[Any] = []

    if conn is not None:
        _ensure_event_column(conn)
        nodes = [{"id": i, "name": n} for i, n in zip(node_ids, store.entities)]
        for k in range(0, len(nodes), batch_size):
            conn.execute("UNWIND $rows AS row MERGE (n:Entity {id: row.id}) "
                         "SET n.name = row.name, n.label = 'entity'",
                         parameters={"rows": nodes[k:k + batch_size]})

        res = conn.execute("MATCH (a:Entity)-[r:LINKS]->(b:Entity) WHERE r.label CONTAINS ' @ ' "
                           "RETURN a.id, r.label, b.id")
        existing = {tuple(r) for r in res.get_all()}

        def flush(rows: list[Any]) -> None:
            import pyarrow as pa

            new = [r for r in rows if (r[0], r[1], r[2]) not in existing]
            if not new:
                return
            col = lambda vals: pa.array(vals, pa.string())  # noqa: E731
            df = pa.table({"from": col([r[0] for r in new]), "to": col([r[2] for r in new]),  # noqa: F841
                           "label": col([r[1] for r in new]), "triplet_source_id": col([None] * len(new)),
                           EVENT_MARKER: col([r[3] for r in new])})
            conn.execute("COPY LINKS FROM df (from='Entity', to='Entity')")
    else:
        for k in range(0, len(store.entities), batch_size):
            pg_store.upsert_nodes([EntityNode(name=n, label="entity")
                                   for n in store.entities[k:k + batch_size]])

        def flush(rows: list[Any]) -> None:
            pg_store.upsert_relations([
                Relation(label=lab, source_id=s, target_id=o,
                         properties={EVENT_MARKER: p}) for s, lab, o, p in rows])

    for row in _event_rows(store, node_ids):
        batch.append(row)
        if len(batch) >= batch_size:
            flush(batch)
            n_written += len(batch)
            if bar is not None:
                bar.update(len(batch))
            batch = []
    if batch:
        flush(batch)
        n_written += len(batch)
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()
    if conn is not None:
        getattr(pg_store, "_checkpoint", lambda: None)()
    return n_written


def _row(src_name: str, label: str, dst_name: str, payload: Any, n: int) -> tuple[Any, ...]:
    if payload:
        try:
            p = json.loads(payload) if isinstance(payload, str) else dict(payload)
        except (json.JSONDecodeError, TypeError, ValueError) as exc:
            raise DataFormatError(f"relation {label!r} ({src_name} -> {dst_name}) has an unreadable "
                                  f"{EVENT_MARKER} property: {payload!r:.120}") from exc
        if "relation" not in p or "start" not in p:
            raise DataFormatError(f"relation {label!r} ({src_name} -> {dst_name}) lacks 'relation' or 'start'")
        return (p.get("event_id", n), src_name, p["relation"], dst_name, p["start"], p.get("end"),
                p.get("text"), p.get("attrs"))
    rel, start, end = parse_relation_label(label)
    return (n, src_name, rel, dst_name, start, end, None, None)


def store_from_property_graph(pg_store: Any) -> TemporalEventStore:
    """Build an event store from the chronorag events in a ``PropertyGraphStore``.

    Events come back in their original ``event_id`` order, with their names exactly as
    exported (quotes, backslashes and non-breaking spaces included).

    Raises
    ------
    DataFormatError
        A marked relation whose fields cannot be read.
    TypeError
        ``pg_store`` is not a property-graph store this bridge can read.
    """
    rows: list[tuple[Any, ...]] = []
    conn = _cypher_connection(pg_store)
    if conn is not None:
        _ensure_event_column(conn)
        res = conn.execute(
            "MATCH (a:Entity)-[r:LINKS]->(b:Entity) WHERE r.label CONTAINS ' @ ' "
            f"RETURN a.name, r.label, b.name, r.{EVENT_MARKER}")
        for a, lab, b, payload in res.get_all():
            rows.append(_row(a, lab, b, payload, len(rows)))
    else:
        if not callable(getattr(pg_store, "get_triplets", None)):
            raise ArgumentTypeError(f"pg_store must be a PropertyGraphStore (no get_triplets): {type(pg_store).__name__}")
        try:
            triplets = pg_store.get_triplets(properties={})
            if not triplets and hasattr(pg_store, "graph"):
                triplets = pg_store.graph.get_triplets()
        except TypeError as exc:
            raise ArgumentTypeError(
                f"{type(pg_store).__name__}.get_triplets cannot list all relations; supported stores: "
                f"SimplePropertyGraphStore, {', '.join(_CYPHER_STORES)}") from exc
        for src, rel, dst in triplets:
            payload = rel.properties.get(EVENT_MARKER)
            if not payload and " @ " not in rel.label:
                continue
            name = lambda node: getattr(node, "name", None) or node.id  # noqa: E731
            rows.append(_row(name(src), rel.label, name(dst), payload if payload is not True else None,
                             len(rows)))
    rows.sort(key=lambda r: r[0])
    b = EventStoreBuilder()
    for _, s, r, o, start, end, text, attrs in rows:
        b.add(s, r, o, start, end, text=text, attrs=attrs if isinstance(attrs, dict) else
              (json.loads(attrs) if attrs else None))
    return b.build()
