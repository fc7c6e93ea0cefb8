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


def _odd_names_store():
    b = EventStoreBuilder()
    b.add('Nicholas "Nick" Xenophon', "Make statement", "Back\\slash Party", "2014-01-02")
    b.add("Citizen\u00a0(Australia)", "Criticize or denounce", 'Nicholas "Nick" Xenophon', "2014-01-03")
    b.add("Citizen\u00a0(Australia)", "Criticize or denounce", 'Nicholas "Nick" Xenophon', "2014-01-03")
    b.add("Angela Merkel", "Hold office", "Germany", "2005-11-22", "2021-12-08", text="src", attrs={"k": 1})
    return b.build()


def test_names_with_quotes_backslashes_and_nbsp_roundtrip_and_triplet_lookup():
    s = _odd_names_store()
    pg = SimplePropertyGraphStore()
    export_to_property_graph(s, pg)
    # every relation points at an existing node: triplet lookups do not raise KeyError
    from llama_index.core.graph_stores.types import EntityNode

    nid = EntityNode(name='Nicholas "Nick" Xenophon').id  # LlamaIndex's id for the name
    trips = pg.get_triplets(entity_names=[nid])
    assert len(trips) == 3, "relations must point at the node ids LlamaIndex gives quoted names"
    assert all(t[0].id in pg.graph.nodes and t[2].id in pg.graph.nodes for t in pg.get_triplets(
        entity_names=[n.id for n in pg.graph.nodes.values()]))
    back = store_from_property_graph(pg)
    assert [e.__dict__ for e in back] == [e.__dict__ for e in s]


def test_colliding_node_ids_are_refused():
    from chronorag.errors import DataFormatError

    b = EventStoreBuilder()
    b.add('A"B', "r", "X", "2014-01-01")
    b.add("A B", "r", "X", "2014-01-02")
    with pytest.raises(DataFormatError, match="same LlamaIndex node id"):
        export_to_property_graph(b.build(), SimplePropertyGraphStore())


def test_parse_relation_label():
    from chronorag.errors import DataFormatError
    from chronorag.integrations.property_graph import parse_relation_label, relation_label

    assert parse_relation_label(relation_label("Consult", "2014-03-05", 2)) == ("Consult", "2014-03-05", "2014-03-05")
    assert parse_relation_label("Hold office @ 2005-11-22/2021-12-08") == ("Hold office", "2005-11-22", "2021-12-08")
    with pytest.raises(DataFormatError, match="not '<relation> @ <time>'"):
        parse_relation_label("just a label")


def _graph_db(kind, path):
    if kind == "ladybug":
        lb = pytest.importorskip("ladybug", reason="graphdb extra not installed: pip install 'chronorag[graphdb]'")
        mod = pytest.importorskip("llama_index.graph_stores.ladybug")
        return mod.LadybugPropertyGraphStore(lb.Database(str(path)), use_vector_index=False)
    kuzu = pytest.importorskip("kuzu", reason="graphdb extra not installed: pip install 'chronorag[graphdb]'")
    mod = pytest.importorskip("llama_index.graph_stores.kuzu")
    return mod.KuzuPropertyGraphStore(kuzu.Database(str(path)), use_vector_index=False)


def _roundtrip_in_db(kind, tmp_path, ecb_store):
    from llama_index.core.graph_stores.types import EntityNode

    from chronorag.graphs.store import TemporalEventStore

    s = _odd_names_store()
    pg = _graph_db(kind, tmp_path / "db")
    assert export_to_property_graph(s, pg, batch_size=2) == len(s)
    assert export_to_property_graph(s, pg) == len(s)  # idempotent: nothing duplicated
    back = store_from_property_graph(pg)
    assert [e.__dict__ for e in back] == [e.__dict__ for e in s]
    # the store's own API sees the graph: LlamaIndex retrievers over it find the events
    trips = pg.get_triplets(entity_names=[EntityNode(name='Nicholas "Nick" Xenophon').name])
    assert "Make statement @ 2014-01-02" in {t[1].label for t in trips}
    # a real slice of ICEWS round-trips exactly, and survives reopening the database
    pg2 = _graph_db(kind, tmp_path / "db2")
    export_to_property_graph(ecb_store, pg2)
    del pg2
    back2 = store_from_property_graph(_graph_db(kind, tmp_path / "db2"))
    assert isinstance(back2, TemporalEventStore)
    assert [e.__dict__ for e in back2] == [e.__dict__ for e in ecb_store]


def test_roundtrip_ladybug(tmp_path, ecb_store):
    _roundtrip_in_db("ladybug", tmp_path, ecb_store)


def test_roundtrip_kuzu_in_subprocess(tmp_path):
    """Kuzu and Ladybug share native type names and cannot load in one process."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("kuzu") is None:  # importing it here would clash with ladybug
        pytest.skip("graphdb extra not installed: pip install 'chronorag[graphdb]'")
    code = ("import sys, pathlib; sys.path.insert(0, 'tests'); import test_property_graph as t; "
            "from chronorag.graphs.io import read_events; "
            "t._roundtrip_in_db('kuzu', pathlib.Path(sys.argv[1]), "
            "read_events('tests/fixtures/ecb_events.tsv', progress=False)); print('OK')")
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=root, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stderr[-3000:]


def test_label_only_graph_is_readable(tmp_path):
    """A graph whose relations carry only the 'relation @ time' label (no JSON) still reads back."""
    pg = _graph_db("ladybug", tmp_path / "db")
    from llama_index.core.graph_stores.types import EntityNode, Relation

    pg.upsert_nodes([EntityNode(name="A", label="entity"), EntityNode(name="B", label="entity")])
    pg.upsert_relations([Relation(label="Consult @ 2014-03-05", source_id="A", target_id="B")])
    back = store_from_property_graph(pg)
    assert [(e.subject, e.relation, e.object, e.start) for e in back] == [("A", "Consult", "B", "2014-03-05")]
