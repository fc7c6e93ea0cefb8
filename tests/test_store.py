import gzip
import json

import numpy as np
import pytest
from conftest import FIXTURES

from chronorag.errors import DataFormatError, IndexFormatError, UnknownNameError
from chronorag.graphs.io import read_events
from chronorag.graphs.store import EventStoreBuilder, TemporalEventStore
from chronorag.graphs.verbalize import past_tense, verbalize_event


def test_fixture_loads_with_vocab_and_report(ecb_store):
    s = ecb_store
    assert len(s) == 11
    assert s.load_report.n_events == 11 and s.load_report.n_skipped == 0
    assert "European Central Bank" in s.entities
    assert s.relations == ["Criticize or denounce"]


def test_indexes(ecb_store):
    s = ecb_store
    ecb = s.find(subject="European Central Bank")
    assert len(ecb) == 7
    assert [s.event(int(i)).object for i in s.find(subject="European Central Bank", object="Viktor Orban")] == ["Viktor Orban"] * 2
    by_obj = s.find(relation="Criticize or denounce", object="European Central Bank")
    assert sorted({s.event(int(i)).subject for i in by_obj}) == ["France", "Segolene Royal"]
    assert len(s.find(relation="Criticize or denounce")) == 11
    with pytest.raises(UnknownNameError, match="did you mean"):
        s.find(subject="European Central Bnk")


def test_relations_of(ecb_store):
    """The distinct relations an entity takes part in, as the TempTool relation aligner asks them."""
    b = EventStoreBuilder()
    b.add("A", "meet", "B", "2014-01-01")
    b.add("A", "praise", "B", "2014-01-02")
    b.add("A", "meet", "C", "2014-01-03")
    b.add("C", "accuse", "A", "2014-01-04")
    s = b.build()
    rel = s.relations
    assert [rel[i] for i in s.relations_of(subject="A")] == sorted(["meet", "praise"], key=rel.index)
    assert [rel[i] for i in s.relations_of(object="A")] == ["accuse"]
    assert [rel[i] for i in s.relations_of(subject="A", object="C")] == ["meet"]
    assert len(s.relations_of(subject="B")) == 0
    assert s.relations_of(subject="A").dtype == np.int64
    assert (ecb_store.relations_of(subject="European Central Bank")
            == np.unique(ecb_store.relation[ecb_store.find(subject="European Central Bank")])).all()
    with pytest.raises(ValueError, match="subject, object or both"):
        s.relations_of()
    with pytest.raises(UnknownNameError):
        s.relations_of(object="Zed")


def test_time_queries(ecb_store):
    s = ecb_store
    # "Before Germany, who did the ECB criticize last?" -> Romania (2010-08-30)
    germany = s.query(subject="European Central Bank", object="Government (Germany)")
    t = s.start_text(int(germany[0]))
    before = s.query(subject="European Central Bank", relation="Criticize or denounce",
                     end_time=t, type="before")
    assert [s.event(int(i)).object for i in before] == ["Romania"]
    in_2012 = s.query(subject="European Central Bank", begin_time="2012", end_time="2012")
    assert [s.start_text(int(i)) for i in in_2012] == ["2012-07-24", "2012-07-30", "2012-09-12"]
    rng = s.time_range("2007-01", "2007-02")
    assert [s.start_text(int(i)) for i in rng] == ["2007-01-18", "2007-02-23"]


def test_verbalize():
    assert verbalize_event("European Central Bank", "Criticize or denounce", "Romania", "2010-08-30") == \
        "On 2010-08-30, European Central Bank criticized or denounced Romania."
    assert verbalize_event("A", "Make an appeal or request", "B") == "A made an appeal or request B."
    assert past_tense("ban") == "banned" and past_tense("deny") == "denied" and past_tense("consult") == "consulted"
    with pytest.raises(ValueError, match="subject"):
        verbalize_event("", "Consult", "B")


def test_intervals_and_attrs_roundtrip(tmp_path):
    b = EventStoreBuilder()
    b.add("Angela Merkel", "Hold office", "Germany", "2005-11-22", "2021-12-08", text="chancellor", attrs={"src": "wiki"})
    b.add("Olaf Scholz", "Hold office", "Germany", "2021-12-08", "inf")
    b.add("Angela Merkel", "Hold office", "Germany", "2005-11-22", "2021-12-08")  # exact duplicate kept
    s = b.build()
    assert s.event(0).time == "2005-11-22/2021-12-08"
    assert s.event(1).end == "inf"
    assert [s.event(int(i)).subject for i in s.query(relation="Hold office", begin_time="2015", end_time="2015")] == ["Angela Merkel", "Angela Merkel"]
    assert [s.event(int(i)).subject for i in s.query(relation="Hold office", begin_time="2023", end_time="2023")] == ["Olaf Scholz"]
    assert list(s.time_range("2010", "2010")) == [0, 2]
    s.save(tmp_path / "idx")
    s2 = TemporalEventStore.load(tmp_path / "idx")
    assert [e.__dict__ for e in s2] == [e.__dict__ for e in s]
    assert s2.event(0).attrs == {"src": "wiki"} and s2.event(1).text is None


def test_builder_rejects_bad_events():
    b = EventStoreBuilder()
    with pytest.raises(DataFormatError, match="subject"):
        b.add("", "r", "o", "2010")
    with pytest.raises(ValueError, match="2010-13-01"):
        b.add("s", "r", "o", "2010-13-01")
    with pytest.raises(ValueError, match="begins after"):
        b.add("s", "r", "o", "2011", "2010")
    assert len(b) == 0  # nothing half-added


def test_malformed_lines_fail_with_file_line(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text("A\tConsult\tB\t2014-01-01\nA\tConsult\tB\nC\tConsult\tD\t2014-13-01\nE\tConsult\tF\t2014-02-02\n")
    with pytest.raises(DataFormatError, match=r"bad.tsv:2: expected 4 or 5"):
        read_events(p, progress=False)
    s = read_events(p, on_error="skip", progress=False)
    assert len(s) == 2 and s.load_report.n_skipped == 2
    assert "bad.tsv:3" in s.load_report.examples[1] and "2014-13-01" in s.load_report.examples[1]


def test_gz_csv_jsonl_and_nbsp(tmp_path):
    nbsp = "Ali\u00a0Khamenei"
    gz = tmp_path / "e.tsv.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write(f"{nbsp}\tMake statement\tIran\t2014-01-02\n")
    s = read_events(gz, progress=False)
    assert s.entities[0] == nbsp  # byte-exact, NBSP kept
    csvp = tmp_path / "e.csv"
    csvp.write_text("subject,relation,object,start,end,text,source\nA,Consult,B,2014-01-01,2014-01-03,\"said, then\",ap\n")
    e = read_events(csvp, progress=False).event(0)
    assert (e.start, e.end, e.text, dict(e.attrs)) == ("2014-01-01", "2014-01-03", "said, then", {"source": "ap"})
    jp = tmp_path / "e.jsonl"
    jp.write_text(json.dumps({"subject": "A", "relation": "R", "object": "B", "time": "2014-05", "attrs": {"w": 2}}) + "\n{oops\n")
    with pytest.raises(DataFormatError, match="e.jsonl:2: invalid JSON"):
        read_events(jp, progress=False)
    s = read_events(jp, on_error="skip", progress=False)
    assert s.event(0).start == "2014-05" and s.event(0).attrs == {"w": 2}
    with pytest.raises(DataFormatError, match="unknown format 'parquet'"):
        read_events(FIXTURES / "ecb_events.tsv", fmt="parquet", progress=False)


def test_atomic_save_keeps_previous_index(tmp_path, ecb_store):
    from chronorag.graphs.persist import atomic_dir

    target = tmp_path / "idx"
    ecb_store.save(target)
    with pytest.raises(RuntimeError), atomic_dir(target) as tmp:
        (tmp / "store.json").write_text("{}")
        raise RuntimeError("ingest died")
    assert len(TemporalEventStore.load(target)) == 11
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    (target / "store.json").write_text(json.dumps({"format": 99}))  # through the link: fingerprint
    with pytest.raises(IndexFormatError, match="store.json is damaged"):
        TemporalEventStore.load(target)
    with atomic_dir(target) as tmp:  # a version that really has another format
        ecb_store.write(tmp)
        (tmp / "store.json").write_text(json.dumps({"format": 99}))
    with pytest.raises(IndexFormatError, match="format 99"):
        TemporalEventStore.load(target)


def test_triple_ids(ecb_store):
    first, inv = ecb_store.triple_ids()
    # ECB has 7 events over 6 triples (Viktor Orban twice); Segolene Royal's 3 events are 1 triple
    assert len(first) == 8
    assert np.array_equal(first[inv][inv == inv[0]], np.full((inv == inv[0]).sum(), first[inv[0]]))
