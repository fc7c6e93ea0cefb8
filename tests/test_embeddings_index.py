import numpy as np
import pytest

from chronorag.errors import IndexFormatError
from chronorag.graphs.encoders import (
    CachedEncoder,
    EmbeddingCache,
    as_langchain_embeddings,
    as_llama_index_embedding,
)
from chronorag.graphs.event_index import EventIndex
from chronorag.graphs.vectors import VectorIndex
from chronorag.retrievers.dense import DenseEventRetriever


def test_minilm_is_real_and_normalised(minilm):
    v = minilm.encode(["Barack Obama praised Japan.", "Barack Obama endorsed Japan.", "Police arrested a protester."])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2  # paraphrase closer than unrelated
    with pytest.raises(TypeError, match="not a single string"):
        minilm.encode("one string")


def test_cache_embeds_each_distinct_text_once(tmp_path, minilm):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    enc = CachedEncoder(minilm, cache)
    a = enc.encode(["x happened.", "y happened.", "x happened."])
    assert enc.n_computed == 2 and len(cache) == 2
    b = CachedEncoder(minilm, EmbeddingCache(tmp_path / "c.sqlite")).encode(["y happened.", "x happened."])
    assert np.allclose(a[1], b[0]) and np.allclose(a[0], b[1])
    enc.encode(["x happened.", "z happened."])
    assert enc.n_computed == 3


def test_framework_adapters(minilm):
    li = as_llama_index_embedding(minilm)
    q = li.get_query_embedding("hello")
    assert len(q) == 384
    lc = as_langchain_embeddings(minilm)
    assert np.allclose(lc.embed_query("hello"), q, atol=1e-6)
    assert len(lc.embed_documents(["a", "b"])) == 2
    with pytest.raises(TypeError):
        as_llama_index_embedding(object())


def test_vector_index_flat_hnsw_subset_and_persist(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(500, 16)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    flat = VectorIndex(x, kind="flat", gpu=False)
    s, ids = flat.search(x[7], 3)
    assert ids[0, 0] == 7 and s[0, 0] == pytest.approx(1.0, abs=1e-5)
    exact = np.argsort(-(x @ x[7]))[:3]
    assert list(ids[0]) == list(exact)
    hnsw = VectorIndex(x, kind="hnsw", gpu=False)
    assert hnsw.search(x[7], 1)[1][0, 0] == 7
    sub = np.array([1, 2, 3, 400])
    _, sids = flat.search(x[400], 2, subset=sub)
    assert sids[0, 0] == 400 and set(sids[0]) <= set(sub)
    big = np.arange(0, 500, 2)  # small subsets take the exact NumPy path
    _, bids = flat.search(x[8], 5, subset=big)
    assert set(bids[0]) <= set(big) and bids[0, 0] == 8
    _, pad = flat.search(x[1], 5, subset=np.array([1, 2]))
    assert list(pad[0][2:]) == [-1, -1, -1]
    flat.save(tmp_path / "v")
    assert list(VectorIndex.load(tmp_path / "v", gpu=False).search(x[7], 3)[1][0]) == list(exact)
    hnsw.save(tmp_path / "h")
    assert VectorIndex.load(tmp_path / "h", gpu=False).search(x[7], 1)[1][0, 0] == 7
    with pytest.raises(ValueError, match="kind"):
        VectorIndex(x, kind="ivf")
    with pytest.raises(ValueError, match="shape"):
        flat.search(np.zeros(5, np.float32), 1)
    with pytest.raises(ValueError, match="NaN"):
        VectorIndex(np.full((2, 3), np.nan, np.float32))


def test_faiss_selector_path_matches_numpy():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(10000, 8)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    idx = VectorIndex(x, gpu=False)
    sub = np.arange(0, 10000, 2)  # 5000 ids: FAISS IDSelectorBatch path
    s1, i1 = idx.search(x[:3], 4, subset=sub)
    s2, i2 = idx._exact_subset(x[:3], 4, sub)
    assert np.array_equal(i1, i2) and np.allclose(s1, s2, atol=1e-5)


def test_event_index_and_dense_retriever(sample_index, tmp_path):
    idx = EventIndex.load(sample_index.path)
    assert idx.meta["n_events"] == 9165 and idx.meta["n_triples"] == len(idx.triples)
    idx.encoder = sample_index.encoder
    r = DenseEventRetriever(idx, similarity_top_k=5, begin_time="2014-06", end_time="2014-06")
    nodes = r.retrieve("Xi Jinping hosted a visit from Barack Obama")
    assert len(nodes) == 5
    for n in nodes:
        md = n.node.metadata
        assert md["start"].startswith("2014-06")
        assert n.node.get_content().startswith("On 2014-06")
    assert nodes[0].node.metadata["subject"] in ("Xi Jinping", "Barack Obama")
    with pytest.raises(ValueError, match="similarity_top_k"):
        DenseEventRetriever(idx, similarity_top_k=0)
    with pytest.raises(ValueError, match="'sometime'"):
        DenseEventRetriever(idx, type="sometime")
    with pytest.raises(IndexFormatError, match="no index.json"):
        EventIndex.load(tmp_path)
    ids, pos = idx.expand_triples(np.array([0, 1]), 1000)
    assert len(ids) == len(np.concatenate(idx.events_of_triples([0, 1]))) and set(pos) == {0, 1}
    assert (idx.store.t_lo[ids[pos == 0]][:-1] >= idx.store.t_lo[ids[pos == 0]][1:]).all()  # most recent first
    with pytest.raises(ValueError, match="k must be"):
        idx.expand_triples(np.array([0]), 0)


def test_static_encoder_distilled_offline(tmp_path):
    from chronorag.graphs.encoders import StaticEncoder

    with pytest.raises(FileNotFoundError, match="no distilled"):
        StaticEncoder(tmp_path / "none", distill_if_missing=False)
    enc = StaticEncoder(tmp_path / "static")  # distils from the bundled MiniLM, no network
    assert (tmp_path / "static" / "config.json").exists()
    v = enc.encode(["Barack Obama praised Japan.", "Barack Obama endorsed Japan.", "Police arrested a protester."])
    assert v.shape == (3, enc.dim) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]
    again = StaticEncoder(tmp_path / "static", distill_if_missing=False)
    assert np.allclose(again.encode(["Barack Obama praised Japan."])[0], v[0], atol=1e-6)
    # concurrent callers (asyncio.gather of aretrieve runs them in threads) take turns on the Rust
    # tokenizer, which raised "RuntimeError: Already borrowed" when two used it at once
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"leader number {i} met the minister of city {i} in March" for i in range(64)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        got = list(pool.map(lambda t: again.encode([t, t + " again"])[0], texts * 4))
    assert np.allclose(np.stack(got), np.stack([again.encode([t])[0] for t in texts * 4]), atol=1e-6)
    import copy
    import pickle

    for twin in (copy.deepcopy(again), pickle.loads(pickle.dumps(again))):  # the lock is not copied, a new one is made
        assert twin._lock is not again._lock and np.allclose(twin.encode(texts[:2]), again.encode(texts[:2]), atol=1e-6)


def test_missing_optional_extra_names_the_extra(monkeypatch):
    import sys

    from chronorag.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "faiss", None)  # as if faiss-cpu were not installed
    with pytest.raises(MissingExtraError, match=r"chronorag\[cpu\]"):
        VectorIndex(np.eye(3, dtype=np.float32))
    monkeypatch.setitem(sys.modules, "model2vec", None)
    from chronorag.graphs.encoders import StaticEncoder

    with pytest.raises(MissingExtraError, match=r"chronorag\[fast\]"):
        StaticEncoder()
