"""Never lose a user's data (issue 8): safe output directories, crash-safe index
replacement, a writer lock, clean errors for damaged inputs, and loaders that do not
silently change the data. Each test reproduces one reported failure."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES

from chronorag.cli import main
from chronorag.errors import (
    DataFormatError,
    IndexBusyError,
    IndexFormatError,
    OutputExistsError,
)
from chronorag.graphs.io import read_events
from chronorag.graphs.persist import ADMIN_DIR, index_lock, snapshot, write_index
from chronorag.graphs.store import EventStoreBuilder, TemporalEventStore

SRC = str(Path(__file__).resolve().parents[1] / "src")
ROOT = Path(__file__).resolve().parents[1]


def _small_store(n: int = 3) -> TemporalEventStore:
    b = EventStoreBuilder()
    for i in range(n):
        b.add("A", "Consult", f"B{i}", f"2014-01-{i + 1:02d}")
    return b.build()


@pytest.fixture(scope="module")
def ecb_index(tmp_path_factory, minilm, ecb_store):
    """The ECB index with its own embedding cache: the session cache stays untouched, so
    tests elsewhere that count cache hits do not depend on running before this file."""
    from chronorag.graphs.event_index import build_event_index

    d = tmp_path_factory.mktemp("reliab")
    return build_event_index(ecb_store, d / "idx", encoder=minilm, cache=d / "cache.sqlite", progress=False)


# ------------------------------------------------------------------ output directories
def test_ingest_refuses_a_directory_that_is_not_an_index(tmp_path, capsys):
    proj = tmp_path / "proj"
    proj.mkdir()
    kg = proj / "kg.tsv"
    kg.write_bytes((FIXTURES / "ecb_events.tsv").read_bytes())
    (proj / "notes.txt").write_text("notes")
    assert main(["-q", "ingest", str(kg), "--out", str(proj)]) == 2
    err = capsys.readouterr().err
    assert "not a chronorag index" in err and "notes.txt" in err and "kg.tsv" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in proj.iterdir()) == ["kg.tsv", "notes.txt"]
    assert (proj / "notes.txt").read_text() == "notes"
    with pytest.raises(OutputExistsError, match="not empty"):
        _small_store().save(proj)
    f = tmp_path / "afile"
    f.write_text("x")
    with pytest.raises(OutputExistsError, match="not a directory"):
        _small_store().save(f)
    assert f.read_text() == "x"


def test_replacing_an_index_keeps_other_files_and_one_previous_version(tmp_path):
    d = tmp_path / "idx"
    _small_store(3).save(d)
    (d / "my_notes.txt").write_text("keep me")
    first = snapshot(d)
    _small_store(5).save(d)
    assert len(TemporalEventStore.load(d)) == 5
    assert (d / "my_notes.txt").read_text() == "keep me"
    assert first.is_dir() and len(TemporalEventStore.load(first)) == 3  # a reader's snapshot survives
    _small_store(4).save(d)
    assert not first.exists()  # only the previous version is kept
    versions = [p.name for p in (d / ADMIN_DIR).iterdir() if p.name.startswith("v-")]
    assert len(versions) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]  # nothing beside the index


def test_failed_write_leaves_no_trace(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RuntimeError), write_index(empty) as tmp:
        (tmp / "store.json").write_text("{}")
        raise RuntimeError("ingest died")
    assert list(empty.iterdir()) == []
    new = tmp_path / "new"
    with pytest.raises(KeyboardInterrupt), write_index(new):
        raise KeyboardInterrupt
    assert not new.exists()


def test_out_dot_writes_into_the_current_directory(tmp_path, monkeypatch, capsys, minilm):
    import chronorag.graphs.event_index as ei

    monkeypatch.setattr(ei, "make_encoder", lambda kind, progress=True, **kw: minilm)  # no reload
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    cache = str(tmp_path / "cache.sqlite")  # not the session cache other tests count hits in
    assert main(["-q", "ingest", str(FIXTURES / "ecb_events.tsv"), "--out", ".", "--cache", cache]) == 0
    capsys.readouterr()
    assert len(TemporalEventStore.load(work)) == 11
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.sqlite", "work"]  # no temp index
    assert not any(".tmp" in p.name for p in (work / ADMIN_DIR).iterdir())


def test_symlinked_out_is_followed_never_replaced(tmp_path):
    real = tmp_path / "real"
    link = tmp_path / "link"
    _small_store(3).save(real)
    link.symlink_to(real)
    _small_store(5).save(link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert len(TemporalEventStore.load(real)) == 5
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "missing")
    with pytest.raises(OutputExistsError, match="does not exist"):
        _small_store().save(dangling)
    assert dangling.is_symlink() and not (tmp_path / "missing").exists()


def test_older_layout_index_is_read_and_converted(tmp_path):
    d = tmp_path / "old"
    d.mkdir()
    _small_store(3).write(d)  # plain files, as chronorag wrote them before
    (d / "kg.tsv").write_text("user data")
    assert len(TemporalEventStore.load(d)) == 3
    _small_store(6).save(d)
    assert len(TemporalEventStore.load(d)) == 6
    assert (d / "kg.tsv").read_text() == "user data"
    assert (d / "events.npz").is_symlink()


_CRASH = """
import os, signal, sys
from chronorag.graphs import persist
from chronorag.graphs.store import EventStoreBuilder
d, when = sys.argv[1], sys.argv[2]
real = os.replace
def replace(a, b):
    if os.path.basename(str(b)) == "current" and when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    real(a, b)
    if os.path.basename(str(b)) == "current" and when == "after":
        os.kill(os.getpid(), signal.SIGKILL)
persist.os.replace = replace
b = EventStoreBuilder()
for i in range(7):
    b.add("A", "Consult", f"B{i}", "2014-01-01")
b.build().save(d)
"""


@pytest.mark.parametrize("when", ["before", "after"])
def test_kill_during_replace_leaves_a_complete_index_and_is_recovered(tmp_path, when):
    d = tmp_path / "idx"
    _small_store(3).save(d)
    r = subprocess.run([sys.executable, "-c", _CRASH, str(d), when], env={**os.environ, "PYTHONPATH": SRC},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == -9
    n = len(TemporalEventStore.load(d))
    assert n == (3 if when == "before" else 7)
    admin = d / ADMIN_DIR
    if when == "before":  # the killed writer's unfinished version is still there ...
        assert len([p for p in admin.iterdir() if p.name.startswith("v-")]) == 2
    _small_store(4).save(d)  # ... until the next writer cleans up
    assert len(TemporalEventStore.load(d)) == 4
    left = sorted(p.name for p in admin.iterdir() if not p.name.startswith("v-"))
    assert left == ["current", "lock", "previous"]
    assert len([p for p in admin.iterdir() if p.name.startswith("v-")]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_concurrent_writer_gets_a_clear_in_use_error(tmp_path, capsys):
    d = tmp_path / "idx"
    _small_store(3).save(d)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom chronorag.graphs.persist import index_lock\n"
         "with index_lock(sys.argv[1]):\n    print('locked', flush=True)\n    time.sleep(60)\n", str(d)],
        env={**os.environ, "PYTHONPATH": SRC}, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(IndexBusyError, match="in use"):
            _small_store(5).save(d)
        assert main(["-q", "ingest", str(FIXTURES / "ecb_events.tsv"), "--out", str(d)]) == 2
        err = capsys.readouterr().err
        assert "in use" in err and f"pid {holder.pid}" in err
    finally:
        holder.kill()
        holder.wait()
    assert len(TemporalEventStore.load(d)) == 3
    _small_store(5).save(d)  # the lock died with its holder
    assert len(TemporalEventStore.load(d)) == 5


def test_lock_is_reentrant_and_cleans_up_a_fresh_directory(tmp_path):
    d = tmp_path / "fresh"
    with index_lock(d):
        _small_store(2).save(d)  # write_index inside the held lock does not block
    assert len(TemporalEventStore.load(d)) == 2
    d2 = tmp_path / "never"
    with index_lock(d2):
        assert d2.is_dir()
    assert not d2.exists()


# ------------------------------------------------------------------ fingerprints
def test_stale_rule_graph_and_triples_from_another_index_are_detected(tmp_path, ecb_index, minilm):
    from chronorag.graphs.event_index import EventIndex, build_event_index
    from chronorag.retrievers.star_rag.rule_graph import (
        RuleGraph,
        RuleGraphConfig,
        build_rule_graph,
    )

    other_store = ecb_index.store.subset(np.arange(6))
    other = build_event_index(other_store, tmp_path / "other", encoder=minilm, progress=False,
                              cache=tmp_path / "cache.sqlite")
    rg = build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3))
    rg.save(tmp_path / "other")  # the rule graph of another store, added through the API
    assert (tmp_path / "other" / "vectors.npy").exists()  # update keeps the index's files
    with pytest.raises(IndexFormatError, match="another event store"):
        RuleGraph.load(other.path)
    good = build_rule_graph(other_store, config=RuleGraphConfig(min_support=0.3))
    good.save(other.path)
    assert RuleGraph.load(other.path).store_fingerprint == other_store.fingerprint()
    with write_index(other.path, update=True) as tmp:  # a triples file from another index
        np.save(tmp / "triples.npy", ecb_index.triples)
        np.save(tmp / "triple_of_event.npy", ecb_index.triple_of_event)
    with pytest.raises(IndexFormatError, match="triples.npy"):
        EventIndex.load(other.path)


# ------------------------------------------------------------------ clean errors
def _gz_variant(path: Path, payload: bytes, kind: str) -> Path:
    good = gzip.compress(payload)
    if kind == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif kind == "bad CRC":
        crc = bytearray(good)
        crc[-8] ^= 0xFF  # the CRC32 field of the gzip trailer
        path.write_bytes(bytes(crc))
    else:
        path.write_bytes(payload)
    return path


@pytest.mark.parametrize("kind", ["truncated", "bad CRC", "not gzip"])
def test_damaged_gzip_is_a_clean_error(tmp_path, capsys, kind):
    f = _gz_variant(tmp_path / "kg.tsv.gz", (FIXTURES / "ecb_events.tsv").read_bytes(), kind)
    assert main(["-q", "ingest", str(f), "--out", str(tmp_path / "idx")]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and "gzip -t" in err and "Traceback" not in err
    assert not (tmp_path / "idx").exists()
    from chronorag.graphs.persist import iter_jsonl

    line = json.dumps({"question": "Who?", "answers": ["A"]}) + "\n"
    q = _gz_variant(tmp_path / "q.jsonl.gz", (line * 200).encode(), kind)
    with pytest.raises(DataFormatError, match="damaged gzip"):
        list(iter_jsonl(q))


def test_os_errors_are_clean(tmp_path, capsys, monkeypatch):
    assert main(["-q", "ingest", str(tmp_path), "--out", str(tmp_path / "idx")]) == 2
    assert "is a directory" in capsys.readouterr().err
    import chronorag.graphs.io as gio

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied", "/data/kg.tsv")

    monkeypatch.setattr(gio, "read_events", denied)
    assert main(["-q", "ingest", str(FIXTURES / "ecb_events.tsv"), "--out", str(tmp_path / "idx")]) == 2
    err = capsys.readouterr().err
    assert "permission denied: /data/kg.tsv" in err and "Traceback" not in err
    bad = tmp_path / "badidx"
    (bad / "index.json").mkdir(parents=True)
    assert main(["info", str(bad)]) == 2
    assert "index.json is a directory" in capsys.readouterr().err


def test_truncated_index_files_are_clean_errors(tmp_path, ecb_index, capsys):
    from chronorag.graphs.event_index import EventIndex
    from chronorag.retrievers.star_rag.rule_graph import (
        RuleGraph,
        RuleGraphConfig,
        build_rule_graph,
    )

    d = tmp_path / "idx"
    ecb_index.store.save(d)
    with write_index(d, update=True) as tmp:
        for f in ("triples.npy", "triple_of_event.npy", "vectors.npy", "vector_index.json", "index.json"):
            (tmp / f).write_bytes((snapshot(ecb_index.path) / f).read_bytes())
    build_rule_graph(ecb_index.store, config=RuleGraphConfig(min_support=0.3)).save(d)
    EventIndex.load(d)
    v = snapshot(d)
    for name in ("events.npz", "rule_graph.npz", "ev_t_lo.npy"):
        data = (v / name).read_bytes()
        (v / name).unlink()  # break the hard link to the previous version first
        (v / name).write_bytes(data[: len(data) // 2])
    with pytest.raises(IndexFormatError, match="events.npz is damaged or truncated"):
        TemporalEventStore.load(d, mmap=False)
    with pytest.raises(IndexFormatError, match="ev_t_lo.npy is damaged or truncated"):
        TemporalEventStore.load(d)  # the memory-mapped copy
    with pytest.raises(IndexFormatError, match="rule_graph.npz is damaged or truncated"):
        RuleGraph.load(d)
    assert main(["ask", str(d), "Who criticized Romania?"]) == 2
    err = capsys.readouterr().err
    assert "ev_t_lo.npy" in err and "rebuild" in err and "Traceback" not in err


def test_corrupt_embedding_cache_is_moved_aside_and_rebuilt(tmp_path, minilm):
    from chronorag.graphs.encoders import CachedEncoder, EmbeddingCache

    p = tmp_path / "embeddings.sqlite"
    p.write_bytes(b"this is not a database" * 100)
    with pytest.warns(RuntimeWarning, match="damaged"):
        cache = EmbeddingCache(p)
    assert cache.recovered_from is not None and cache.recovered_from.exists()
    vecs = CachedEncoder(minilm, cache).encode(["a b", "c d"])
    assert vecs.shape == (2, 384) and len(cache) == 2
    cache.close()
    d = tmp_path / "cachedir"
    d.mkdir()
    with pytest.raises(IsADirectoryError, match="must be a file"):
        EmbeddingCache(d)


def test_encoder_dimension_mismatch_is_reported(ecb_index):
    from chronorag.graphs.event_index import EventIndex

    class Small:
        model_id, dim = "tiny", 8

        def encode(self, texts):
            return np.ones((len(texts), 8), np.float32) / np.sqrt(8)

    idx = EventIndex.load(ecb_index.path)
    with pytest.raises(IndexFormatError, match="8-d vectors but the index .* stores 384-d"):
        idx.encoder = Small()
    with pytest.raises(IndexFormatError, match="built with"):
        idx.vectors.search(np.ones((1, 8), np.float32))


# ------------------------------------------------------------------ loaders
def test_utf8_bom_is_not_part_of_the_first_name(tmp_path):
    bom = "\ufeff"
    t = tmp_path / "b.tsv"
    t.write_text(bom + "A\tConsult\tB\t2014-01-01\n", encoding="utf-8")
    c = tmp_path / "b.csv"
    c.write_text(bom + "subject,relation,object,start\nA,Consult,B,2014-01-01\n", encoding="utf-8")
    j = tmp_path / "b.jsonl.gz"
    j.write_bytes(gzip.compress((bom + json.dumps({"subject": "A", "relation": "Consult", "object": "B",
                                                    "start": "2014-01-01"}) + "\n").encode()))
    for f in (t, c, j):
        s = read_events(f, progress=False)
        assert s.entities[0] == "A", f
        assert len(s.find(subject="A")) == 1


def test_event_from_minus_infinity_is_queryable_or_refused(tmp_path):
    b = EventStoreBuilder()
    b.add("A", "Hold", "B", "-inf", "2010-01-01")
    s = b.build()
    assert list(s.query(subject="A")) == [0]
    assert list(s.query(subject="A", begin_time="1990", end_time="1990")) == [0]
    with pytest.raises(DataFormatError, match="covers no time"):
        EventStoreBuilder().add("A", "Hold", "C", "-inf")
    f = tmp_path / "e.tsv"
    f.write_text("A\tHold\tC\t-inf\n")
    with pytest.raises(DataFormatError, match="e.tsv:1: .*give an end time"):
        read_events(f, progress=False)


def test_empty_end_means_no_end_in_every_format(tmp_path):
    t = tmp_path / "e.tsv"
    t.write_text("A\tConsult\tB\t2014-01-01\t\n")  # trailing tab
    c = tmp_path / "e.csv"
    c.write_text("subject,relation,object,start,end\nA,Consult,B,2014-01-01,\n")
    j = tmp_path / "e.jsonl"
    j.write_text(json.dumps({"subject": "A", "relation": "Consult", "object": "B", "start": "2014-01-01",
                             "end": ""}) + "\n")
    events = [read_events(f, progress=False).event(0) for f in (t, c, j)]
    assert all((e.start, e.end) == ("2014-01-01", "2014-01-01") for e in events)


# ------------------------------------------------------------------ exposure and timings
def _serve(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    fake = tmp_path / "fake_vllm"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    fake.chmod(0o755)
    clean = {k: v for k, v in os.environ.items() if k not in ("CHRONORAG_API_KEY", "HOST", "MODEL")}
    return subprocess.run(["bash", str(ROOT / "scripts" / "serve_vllm.sh"), *args],
                          env={**clean, "VLLM": str(fake), **env}, capture_output=True, text=True, timeout=30)


def test_serve_vllm_binds_loopback_with_key_and_reasoning_parser(tmp_path):
    r = _serve(tmp_path)
    argv = r.stdout.split("\n")
    assert r.returncode == 0
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    assert argv[argv.index("--reasoning-parser") + 1] == "qwen3"  # default model is Qwen3-8B
    assert "--api-key" not in argv
    r = _serve(tmp_path, "--host", "0.0.0.0")
    assert r.returncode == 2 and "without an API key" in r.stderr
    r = _serve(tmp_path, "--host", "0.0.0.0", "--api-key", "s3cret", "--max-num-seqs", "8")
    argv = r.stdout.split("\n")
    assert argv[argv.index("--api-key") + 1] == "s3cret" and "--max-num-seqs" in argv
    r = _serve(tmp_path, MODEL="meta-llama/Llama-3.1-8B-Instruct", CHRONORAG_API_KEY="k")
    argv = r.stdout.split("\n")
    assert "--reasoning-parser" not in argv and argv[argv.index("--api-key") + 1] == "k"


def test_static_encoder_says_it_distills_and_quiet_hides_the_bar(tmp_path, monkeypatch, caplog):
    pytest.importorskip("model2vec")
    import model2vec
    import model2vec.distill
    import model2vec.distill.inference as inf

    from chronorag.graphs import encoders as embeddings

    bars = []

    class FakeModel:
        dim = 4

        def save_pretrained(self, d):
            Path(d, "config.json").write_text("{}")

        def encode(self, texts, show_progress_bar=False):
            return np.ones((len(texts), 4), np.float32)

    def fake_distill(**kw):
        bars.append(inf.tqdm(total=3))  # model2vec's own bar
        return FakeModel()

    monkeypatch.setattr(model2vec.distill, "distill", fake_distill)
    monkeypatch.setattr(model2vec.StaticModel, "from_pretrained", classmethod(lambda cls, d: FakeModel()))
    monkeypatch.setenv("CHRONORAG_HOME", str(tmp_path))
    with caplog.at_level("WARNING", logger="chronorag"):
        enc = embeddings.make_encoder("static", progress=False)
    assert "distilling the static encoder" in caplog.text and "one-time" in caplog.text
    assert bars and bars[0].disable
    assert enc.distill_s >= 0 and (tmp_path / "static-minilm-pca256" / "config.json").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["static-minilm-pca256"]  # no temporary leftovers
    caplog.clear()
    embeddings.make_encoder("static", progress=False)  # cached: silent
    assert "distilling" not in caplog.text


def test_ingest_reports_encoder_load_time(ecb_index):
    assert "encoder_load_s" in ecb_index.meta["timings"]


def test_a_copied_index_is_readable_and_writable(tmp_path):
    import shutil

    d = tmp_path / "idx"
    _small_store(3).save(d)
    deep = tmp_path / "deep"
    shutil.copytree(d, deep)  # follows the links: real files and directories
    assert len(TemporalEventStore.load(deep)) == 3
    _small_store(5).save(deep)
    assert len(TemporalEventStore.load(deep)) == 5 and (deep / ADMIN_DIR / "current").is_symlink()
    shallow = tmp_path / "shallow"
    subprocess.run(["cp", "-r", str(d), str(shallow)], check=True)  # keeps the relative links
    assert len(TemporalEventStore.load(shallow)) == 3
    assert len(TemporalEventStore.load(d)) == 3


def test_cached_vectors_of_another_size_are_recomputed(tmp_path, minilm):
    from chronorag.graphs.encoders import CachedEncoder, EmbeddingCache

    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache.put_many(minilm.model_id, ["a b"], np.ones((1, 8), np.float32))  # same id, other size
    vecs = CachedEncoder(minilm, cache).encode(["a b", "c d"])
    assert vecs.shape == (2, 384)
    cache.close()


def test_demo_and_tgrag_index_refuse_a_foreign_out_before_any_work(tmp_path, capsys):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("x")
    assert main(["-q", "demo", "--out", str(foreign)]) == 2
    assert "thesis.tex" in capsys.readouterr().err
    assert main(["-q", "tgrag", "index", str(FIXTURES / "reports"), "--out", str(foreign)]) == 2
    assert "not a chronorag index" in capsys.readouterr().err
    assert [p.name for p in foreign.iterdir()] == ["thesis.tex"]


def test_a_users_own_index_json_is_not_taken_for_an_index(tmp_path):
    web = tmp_path / "site"
    web.mkdir()
    (web / "index.json").write_text('{"title": "my site"}')
    with pytest.raises(OutputExistsError, match="not a chronorag index"):
        _small_store().save(web)
    assert (web / "index.json").read_text() == '{"title": "my site"}'


def test_a_users_file_in_an_index_is_never_overwritten(tmp_path):
    d = tmp_path / "idx"
    _small_store(3).save(d)
    (d / "texts.jsonl").write_text("my own notes\n")  # a name the next version needs
    b = EventStoreBuilder()
    b.add("A", "Consult", "B", "2014-01-01", text="source sentence")
    with pytest.raises(OutputExistsError, match="texts.jsonl is not a file chronorag wrote"):
        b.build().save(d)
    assert (d / "texts.jsonl").read_text() == "my own notes\n"
    assert len(TemporalEventStore.load(d)) == 3


def test_kill_while_converting_an_older_layout_index(tmp_path):
    d = tmp_path / "old"
    d.mkdir()
    _small_store(3).write(d)
    r = subprocess.run([sys.executable, "-c", _CRASH, str(d), "after"], env={**os.environ, "PYTHONPATH": SRC},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == -9  # killed right after the old files became a first version
    assert len(TemporalEventStore.load(d)) == 3 and not (d / "events.npz").is_symlink()
    _small_store(5).save(d)
    assert len(TemporalEventStore.load(d)) == 5 and (d / "events.npz").is_symlink()


def test_ctrl_c_during_ingest_exits_130_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    import chronorag.graphs.io as gio

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(gio, "read_events", interrupted)
    assert main(["-q", "ingest", str(FIXTURES / "ecb_events.tsv"), "--out", str(tmp_path / "idx")]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert not (tmp_path / "idx").exists()


def test_topg_index_refuses_a_foreign_out_and_takes_the_lock(tmp_path, capsys):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "draft.md").write_text("x")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"title": "T", "text": "Alice met Bob in Paris."}) + "\n")
    assert main(["-q", "topg", "index", str(corpus), "--out", str(foreign)]) == 2
    assert "draft.md" in capsys.readouterr().err
    assert [p.name for p in foreign.iterdir()] == ["draft.md"]
