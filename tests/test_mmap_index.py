"""Memory-mapped index directories: sorted indexes, columns and the flat FAISS index are
read from the page cache (shared by workers) and answer exactly as the in-RAM path."""

from __future__ import annotations

import mmap

import numpy as np
import pytest

from chronorag.graphs.event_index import EventIndex
from chronorag.graphs.store import SORTED_INDEX_NAMES, TemporalEventStore
from chronorag.graphs.vectors import VectorIndex


def _is_mapped(a: np.ndarray) -> bool:
    while a is not None and not isinstance(a, mmap.mmap):
        a = a.obj if isinstance(a, memoryview) else a.base
    return isinstance(a, mmap.mmap)


def test_store_load_maps_columns_and_sorted_indexes(sample_index):
    d = sample_index.path
    mapped = TemporalEventStore.load(d)
    ram = TemporalEventStore.load(d, mmap=False)
    assert _is_mapped(mapped.t_lo) and _is_mapped(mapped.subject)
    for name in SORTED_INDEX_NAMES:
        idx = getattr(mapped, f"_by_{name}")
        assert _is_mapped(idx.order) and _is_mapped(idx.keys)
        assert (idx.order == getattr(ram, f"_by_{name}").order).all()
    assert not _is_mapped(ram.t_lo)
    assert mapped.fingerprint() == ram.fingerprint()
    with pytest.raises(ValueError, match="read-only"):
        mapped.t_lo[0] = 0
    for kw in [dict(subject="Xi Jinping"), dict(relation="Make a visit", object="China"),
               dict(subject="Barack Obama", relation="Criticize or denounce"),
               dict(relation="Make a visit", begin_time="2014-03", end_time="2014-04", type="between"),
               dict(object="Japan", end_time="2014-05-01", type="before")]:
        a, b = mapped.query(**kw), ram.query(**kw)
        assert len(a) > 0 and (a == b).all() and type(a) is np.ndarray, kw
    assert (mapped.time_range("2014-02", "2014-02") == ram.time_range("2014-02", "2014-02")).all()


def test_flat_vectors_are_mapped_and_search_identically(sample_index):
    d = sample_index.path
    mapped, ram = VectorIndex.load(d, gpu=False), VectorIndex.load(d, gpu=False, mmap=False)
    assert not mapped.vectors.flags.writeable and (mapped.vectors == ram.vectors).all()
    q = np.asarray(ram.vectors[[3, 70, 500]]) + 0.01
    for subset in (None, np.arange(0, len(ram), 3), np.arange(0, len(ram), 2)[:5000]):
        s1, i1 = mapped.search(q, 7, subset=subset)
        s2, i2 = ram.search(q, 7, subset=subset)
        assert (i1 == i2).all() and np.allclose(s1, s2)


def test_event_index_answers_the_same_mapped(sample_index):
    from chronorag.workflows.temptool.tools import TemporalKGTools

    idx = EventIndex.load(sample_index.path, gpu=False)
    assert _is_mapped(idx.triple_of_event)
    rows = np.arange(0, len(idx.triples), 97)
    fresh = EventIndex(store=idx.store, triples=np.array(idx.triples), triple_of_event=np.array(idx.triple_of_event),
                       vectors=idx.vectors, meta=idx.meta, path=None)
    assert all((a == b).all() for a, b in zip(idx.events_of_triples(rows), fresh.events_of_triples(rows)))
    assert _is_mapped(idx._events_of_triple[0])
    tools = TemporalKGTools(idx)
    ref = TemporalKGTools(sample_index)
    args = {"head": "Xi Jinping", "rel": "host a visit", "begin_time": "2014-03", "end_time": "2014-03"}
    a, b = tools.get_tail_entity(**args), ref.get_tail_entity(**args)
    assert a.rows and a.rows == b.rows and a.observation == b.observation
