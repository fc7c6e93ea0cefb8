"""TimeFilter -> MetadataFilters on LlamaIndex's PGVectorStore, on a real embedded PostgreSQL."""

from __future__ import annotations

import numpy as np
import pytest

from chronorag.graphs.time import temporal_mask
from chronorag.retrievers.vector_store import (
    VectorStoreTemporalRetriever,
    event_nodes,
    time_filter_to_metadata_filters,
)

FILTERS = [
    {"begin_time": "2014-03", "end_time": "2014-03"},
    {"begin_time": "-inf", "end_time": "2014-02-10", "type": "before"},
    {"begin_time": "2014-11-20", "end_time": "inf", "type": "after"},
    {"begin_time": "2014-05-01", "end_time": "2014-06-15", "type": "between"},
]


def test_filter_translation_matches_the_store_semantics(sample_index):
    """Evaluating the MetadataFilters in Python keeps exactly the events temporal_mask keeps."""
    store = sample_index.store
    ops = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}
    for flt in FILTERS:
        mf = time_filter_to_metadata_filters(flt)
        keep = np.ones(len(store), bool)
        for f in mf.filters:
            col = store.t_lo if f.key == "t_lo" else store.t_hi
            keep &= ops[f.operator.value](col, f.value)
        want = temporal_mask(store.t_lo, store.t_hi, **{"type": "in/on", **flt})
        assert 0 < keep.sum() < len(store) and (keep == want).all(), flt
    assert time_filter_to_metadata_filters(None) is None
    assert time_filter_to_metadata_filters({"begin_time": "-inf", "end_time": "inf"}) is None
    # an infinite bound is left out, not compared against 2**62
    assert [f.key for f in time_filter_to_metadata_filters({"end_time": "2014", "type": "before"}).filters] == ["t_hi"]


@pytest.mark.slow
def test_pgvectorstore_dense_temporal_retrieval(pg_url, sample_index):
    pytest.importorskip("llama_index.vector_stores.postgres", reason="the postgres extra is not installed")
    from llama_index.vector_stores.postgres import PGVectorStore

    sock = pg_url.split("host=")[1]
    vs = PGVectorStore.from_params(
        connection_string=f"postgresql+psycopg://postgres@/postgres?host={sock}",
        async_connection_string=f"postgresql+asyncpg://postgres@/postgres?host={sock}",
        table_name="chronorag_events", embed_dim=sample_index.vectors.dim)
    vs.add(event_nodes(sample_index))
    store, vecs = sample_index.store, sample_index.vectors.vectors
    r = VectorStoreTemporalRetriever(vs, sample_index.encoder, similarity_top_k=8)
    for q, flt in [("Who did Xi Jinping host a visit from?", FILTERS[0]),
                   ("Whom did Barack Obama criticize?", FILTERS[1]),
                   ("Who made a visit to Japan?", FILTERS[2])]:
        got = r.retrieve(q, time_filter=flt)
        ids = [n.node.metadata["event_id"] for n in got]
        assert len(ids) == 8
        keep = temporal_mask(store.t_lo[ids], store.t_hi[ids], **{"type": "in/on", **flt})
        assert keep.all()  # every node passed the filter inside PostgreSQL
        # and they are the exact nearest events among those passing it (scores up to ties)
        ok = np.flatnonzero(temporal_mask(store.t_lo, store.t_hi, **{"type": "in/on", **flt}))
        qv = sample_index.encoder.encode([q])[0]
        best = np.sort(vecs[sample_index.triple_of_event[ok]] @ qv)[::-1][:8]
        assert np.allclose([n.score for n in got], best, atol=1e-4)
    # without a filter the same store answers from every year
    assert len(r.retrieve("Who did Xi Jinping host a visit from?")) == 8
