import numpy as np
import pytest

from chronorag.errors import IntervalOrderError, TimeParseError
from chronorag.graphs.time import (
    ALLEN_RELATIONS,
    Granularity,
    TimeInterval,
    allen_relation,
    parse_time,
    parse_time_mention,
    temporal_mask,
)


def test_parse_granularities_and_ranges():
    y, m, d = parse_time("2010"), parse_time("2010-05"), parse_time("2010-05-14")
    assert (y.granularity, m.granularity, d.granularity) == (Granularity.YEAR, Granularity.MONTH, Granularity.DAY)
    assert y.hi - y.lo == 365 * 1440
    assert m.hi - m.lo == 31 * 1440
    assert d.hi - d.lo == 1440
    assert str(parse_time("2010-05-14T09:30")) == "2010-05-14T09:30"
    assert parse_time("2010-05-14T09").granularity == Granularity.HOUR
    assert parse_time("2010-05-14 09:30:59Z").granularity == Granularity.MINUTE
    assert parse_time("-inf").is_inf and parse_time("inf").is_inf
    assert parse_time("-inf") < parse_time("1999") < parse_time("inf")


@pytest.mark.parametrize("bad", ["2010-13-01", "yesterday", "2010-02-30", "2010-05-14T25:00", "", "10000"])
def test_bad_time_raises_and_names_value(bad):
    with pytest.raises(TimeParseError) as exc:
        parse_time(bad)
    assert repr(bad) in str(exc.value)
    assert isinstance(exc.value, ValueError)


def test_containment_and_truncate():
    assert parse_time("2010-05-14").within(parse_time("2010-05"))
    assert parse_time("2010-05").within(parse_time("2010"))
    assert not parse_time("2010-06-01").within(parse_time("2010-05"))
    assert str(parse_time("2010-05-14").truncate(Granularity.MONTH)) == "2010-05"
    with pytest.raises(TimeParseError):
        parse_time("2010").truncate(Granularity.DAY)


def test_mentions():
    assert str(parse_time_mention("May 2010")) == "2010-05"
    assert str(parse_time_mention("14 May 2010")) == "2010-05-14"
    assert str(parse_time_mention("on May 14, 2010")) == "2010-05-14"
    assert str(parse_time_mention("Sept. 3rd, 2011")) == "2011-09-03"
    with pytest.raises(TimeParseError):
        parse_time_mention("Mayday 2010")
    with pytest.raises(TimeParseError):
        parse_time_mention("February 30, 2010")


def test_interval_order():
    with pytest.raises(IntervalOrderError, match="2011"):
        TimeInterval.parse("2011", "2010")
    iv = TimeInterval.parse("2010-05", "2010-07")
    assert iv.contains(parse_time("2010-06-15"))
    assert not iv.contains(parse_time("2010-08-01"))


@pytest.mark.parametrize("a,b,rel", [
    (("2010-01", "2010-02"), ("2010-04", "2010-05"), "before"),
    (("2010-01", "2010-02"), ("2010-03", "2010-05"), "meets"),
    (("2010-01", "2010-03"), ("2010-02", "2010-05"), "overlaps"),
    (("2010-01", "2010-02"), ("2010-01", "2010-05"), "starts"),
    (("2010-02", "2010-03"), ("2010-01", "2010-05"), "during"),
    (("2010-03", "2010-05"), ("2010-01", "2010-05"), "finishes"),
    (("2010-01", "2010-05"), ("2010-01", "2010-05"), "equals"),
])
def test_allen_13(a, b, rel):
    A, B = TimeInterval.parse(*a), TimeInterval.parse(*b)
    assert allen_relation(A, B) == rel
    inverse = dict(zip(ALLEN_RELATIONS, reversed(ALLEN_RELATIONS)))
    assert allen_relation(B, A) == inverse[rel]


def test_allen_covers_all_13_relations():
    pts = [TimeInterval.parse(f"2010-{a:02d}", f"2010-{b:02d}") for a in range(1, 7) for b in range(a, 7)]
    seen = {allen_relation(x, y) for x in pts for y in pts}
    assert seen == set(ALLEN_RELATIONS)


def test_temporal_mask_tool_semantics():
    days = ["2010-04-30", "2010-05-01", "2010-05-14", "2010-05-31", "2010-06-01"]
    lo = np.array([parse_time(d).lo for d in days])
    hi = np.array([parse_time(d).hi for d in days])
    assert temporal_mask(lo, hi, "2010-05", "2010-05", "in/on").tolist() == [False, True, True, True, False]
    assert temporal_mask(lo, hi, "-inf", "2010-05-14", "before").tolist() == [True, True, False, False, False]
    assert temporal_mask(lo, hi, "2010-05-14", "inf", "after").tolist() == [False, False, False, True, True]
    assert temporal_mask(lo, hi, "2010-05-01", "2010-05-31", "between").tolist() == [False, True, True, True, False]
    # an interval event spanning the boundary counts as "in" both months
    ilo, ihi = np.array([parse_time("2010-04-20").lo]), np.array([parse_time("2010-05-03").hi])
    assert temporal_mask(ilo, ihi, "2010-05", "2010-05", "in/on").tolist() == [True]
    assert temporal_mask(ilo, ihi, "-inf", "2010-05", "before").tolist() == [False]
    with pytest.raises(TimeParseError, match="during"):
        temporal_mask(lo, hi, "2010", "2010", "during")
    with pytest.raises(IntervalOrderError):
        temporal_mask(lo, hi, "2011", "2010", "between")
