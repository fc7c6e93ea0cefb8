"""Export a ToPG proposition graph to a LlamaIndex ``PropertyGraphStore``.

Node types: passages as ``ChunkNode`` (id ``passage-<i>``, title in the properties),
propositions as ``EntityNode`` with label ``PROPOSITION`` (name ``proposition-<i>``, the
statement under ``text``) and entities as ``EntityNode`` with label ``ENTITY``. Edges:
``MENTIONS`` (proposition -> entity) and ``FROM_PASSAGE`` (proposition -> passage).
"""

from __future__ import annotations

from typing import Any

from chronorag.errors import ArgumentTypeError, ConfigError
from chronorag.workflows.topg.proposition_graph import PropositionGraph

__all__ = ["export_topg_to_property_graph"]


def export_topg_to_property_graph(graph: PropositionGraph, pg_store: Any, *, batch_size: int = 5000) -> dict[str, int]:
    """Write passages, propositions, entities and their edges into ``pg_store``.

    Returns
    -------
    dict
        Counts of nodes and relations written.
    """
    from llama_index.core.graph_stores.types import ChunkNode, EntityNode, Relation

    if not isinstance(graph, PropositionGraph):
        raise ArgumentTypeError(f"graph must be a PropositionGraph, got {type(graph).__name__}")
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    chunks = [ChunkNode(text=p["text"], id_=f"passage-{i}", properties={"title": p["title"], "kind": "passage"})
              for i, p in enumerate(graph.passages)]
    props = [EntityNode(name=f"proposition-{i}", label="PROPOSITION", properties={"text": t, "kind": "proposition"})
             for i, t in enumerate(graph.propositions)]
    ents = [EntityNode(name=e, label="ENTITY", properties={"kind": "entity"}) for e in graph.entities]
    nodes = [*chunks, *props, *ents]
    for s in range(0, len(nodes), batch_size):
        pg_store.upsert_nodes(nodes[s:s + batch_size])
    ent_ids = [n.id for n in ents]
    pe = graph.pe.tocoo()
    rels = [Relation(label="MENTIONS", source_id=props[int(r)].id, target_id=ent_ids[int(c)])
            for r, c in zip(pe.row, pe.col)]
    rels += [Relation(label="FROM_PASSAGE", source_id=props[i].id, target_id=chunks[int(p)].id)
             for i, p in enumerate(graph.prop_passage)]
    for s in range(0, len(rels), batch_size):
        pg_store.upsert_relations(rels[s:s + batch_size])
    return {"nodes": len(nodes), "relations": len(rels)}
