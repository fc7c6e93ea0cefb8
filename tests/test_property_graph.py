import pytest
from llama_index.core.graph_stores import SimplePropertyGraphStore

from chronorag.graphs.store import EventStoreBuilder
from chronorag.integrations.property_graph import (
    export_to_property_graph,
    store_from_property_graph,
)


def _store():
    b = EventStoreBuilder()
    # same (source, label, target), different dates: SimplePropertyGraphStore would merge these
    b.add("European Central Bank", "Criticize or denounce", "Viktor Orban", "2012-07-24")
    b.add("European Central Bank", "Criticize or denounce", "Viktor Orban", "2014-02-08")
    b.add("European Central Bank", "Criticize or denounce", "Viktor Orban", "2014-02-08")  # exact duplicate
    b.add("Angela Merkel", "Hold office", "Germany", "2005-11-22", "2021-12-08", text="src", attrs={"k": 1})
    return b.build()


def test_roundtrip_simple_property_graph_store():
    s = _store()
    pg = SimplePropertyGraphStore()
    assert export_to_property_graph(s, pg) == 4
    assert len(pg.graph.relations) == 4  # nothing collapsed
    back = store_from_property_graph(pg)
    assert [e.__dict__ for e in back] == [e.__dict__ for e in s]


def test_naive_export_would_collide():
    from llama_index.core.graph_stores.types import EntityNode, Relation

    pg = SimplePropertyGraphStore()
    pg.upsert_nodes([EntityNode(name="A"), EntityNode(name="B")])
    pg.upsert_relations([Relation(label="r", source_id="A", target_id="B", properties={"t": 1}),
                         Relation(label="r", source_id="A", target_id="B", properties={"t": 2})])
    assert len(pg.graph.relations) == 1  # the store limitation the bridge works around


def test_bad_targets():
    with pytest.raises(TypeError, match="PropertyGraphStore"):
        export_to_property_graph(_store(), object())
    with pytest.raises(TypeError, match="get_triplets"):
        store_from_property_graph(object())
