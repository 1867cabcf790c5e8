"""The key ranges a change window states for its join keys (``statements.key_values``, then
``cut_ranges`` and ``key_bounds``), run on DuckDB over random change tables: every row of the window satisfies
the bounds (else the change's leaf would drop rows), there are at most ``RANGES_PER_KEY``
ranges, and they are the tightest such cover (cut at the widest gaps), so a read of a join
index within them skips what lies between."""

from __future__ import annotations

import datetime
import random

import pytest

from ivm_core import statements as st
from tests.unit.duckdb_engine import connect, insert_rows, query


def _table(db, rows, spark_type):
    duck = "DATE" if spark_type == "date" else "BIGINT"
    db.execute(f"CREATE OR REPLACE TABLE t_changes (k {duck}, _ivm_weight BIGINT, _ivm_seq BIGINT)")
    insert_rows(db, "t_changes", rows)


def _window_keys(rows, low, high):
    return [k for k, _, seq in rows if low < seq <= high]


@pytest.mark.parametrize("spark_type", ["bigint", "date"])
@pytest.mark.parametrize("seed", range(40))
def test_bounds_cover_the_window_with_the_fewest_widest_gaps(spark_type, seed):
    rnd = random.Random(seed)
    db = connect()
    clustered = rnd.random() < 0.5  # runs of neighbouring keys (appends, deletes of the oldest)
    rows = []
    for seq in range(1, 5):
        start = rnd.randint(-50, 10_000)
        for _ in range(rnd.choice([0, 1, 3, 20, 200])):
            k = start + rnd.randint(0, 30) if clustered else rnd.randint(-1000, 1_000_000)
            if rnd.random() < 0.05:
                k = None
            value = None if k is None else (datetime.date(2000, 1, 1) + datetime.timedelta(days=k)
                                            if spark_type == "date" else k)
            rows.append((value, rnd.choice([-1, 1, 2]), seq))
    _table(db, rows, spark_type)
    low, high = sorted(rnd.sample(range(0, 5), 2))
    listed = rnd.choice([10, st.LISTED_KEYS])
    ((*_, lo, hi, listed_keys),) = query(db, st.key_values("k0", "t_changes", "k", low, high, listed).sql)
    ranges = st.cut_ranges(lo, hi, listed_keys, spark_type)
    keys = sorted({k for k in _window_keys(rows, low, high) if k is not None})
    parse = (lambda v: datetime.date.fromisoformat(v)) if spark_type == "date" else int
    spans = sorted((parse(lo), parse(hi)) for lo, hi in ranges)
    if not keys:
        assert ranges == []
        return
    if len(keys) > listed:  # too many to list: one range, the least key to the greatest
        assert listed_keys is None and spans == [(keys[0], keys[-1])]
    else:
        assert len(ranges) == min(len(keys), st.RANGES_PER_KEY)
        # every key in exactly one range; ranges disjoint, each starting and ending at a key
        assert all(sum(lo <= k <= hi for lo, hi in spans) == 1 for k in keys)
        assert all(lo in keys and hi in keys for lo, hi in spans)
        # what the ranges leave out between the keys are the widest gaps
        gaps = sorted((b - a for a, b in zip(keys, keys[1:])), reverse=True)
        left_out = sorted((b[0] - a[1] for a, b in zip(spans, spans[1:])), reverse=True)
        assert left_out == gaps[:len(spans) - 1]

    # the bounds as a predicate: true for every row of the window, NULL keys included
    predicate = st.key_bounds("k", spark_type, ranges)
    (missed,) = query(db, f"SELECT count(*) FROM t_changes WHERE _ivm_seq > {low} AND _ivm_seq <= {high} "
                          f"AND NOT coalesce({predicate}, FALSE)")[0]
    assert missed == 0
    # and false for a key inside the widest gap left out
    if len(spans) > 1:
        a, b = max(zip(spans, spans[1:]), key=lambda p: p[1][0] - p[0][1])
        if b[0] - a[1] > (datetime.timedelta(days=1) if spark_type == "date" else 1):
            inside = a[1] + (b[0] - a[1]) / 2 if spark_type != "date" else a[1] + (b[0] - a[1]) // 2
            literal = f"DATE '{inside}'" if spark_type == "date" else str(int(inside))
            (hit,) = query(db, f"SELECT {predicate.replace('`k`', literal)}")[0]
            assert hit is False


def test_bounds_refuse_a_value_that_is_not_a_literal_of_the_type():
    with pytest.raises(ValueError):
        st.key_bounds("d", "date", [("2024-01-01') OR (1=1", "2024-01-02")])
    with pytest.raises(ValueError):
        st.key_bounds("k", "bigint", [("1 OR 1=1", "2")])


def test_ranges_are_stated_only_when_they_leave_out_most_of_their_span():
    # appends of new keys plus deletes of the oldest: two narrow slices of a wide span
    assert st.narrow([("1", "5988"), ("6000001", "6001500")], "bigint")
    # random keys: sixteen ranges with small gaps between them cover nearly all of it
    spread = [(str(i * 1000), str(i * 1000 + 900)) for i in range(16)]
    assert not st.narrow(spread, "bigint")
    assert st.narrow([("2024-01-01", "2024-01-03"), ("2024-12-01", "2024-12-31")], "date")
    assert not st.narrow([("2024-01-01", "2024-06-30"), ("2024-07-02", "2024-12-31")], "date")
    assert st.narrow([("5", "9")], "bigint") and st.narrow([], "bigint")
    # a slice of the table's key space (deletes of the oldest keys; appends above the greatest) is
    # narrow there, though its own ranges cover all of their own span
    oldest = [("1", "7"), ("32", "39"), ("64", "120000")]
    assert not st.narrow(oldest, "bigint")
    assert st.narrow(oldest, "bigint", ("1", "60000000"))
    assert st.narrow([("59000001", "60000000")], "bigint", ("1", "59000000"))
    # random keys over the whole table: wide in its key space too; one range over all of it as well
    assert not st.narrow(spread, "bigint", ("0", "16000"))
    assert not st.narrow([("3", "5999000")], "bigint", ("1", "6000000"))
    assert st.narrow([("2024-12-01", "2024-12-31")], "date", ("2020-01-01", "2024-11-30"))


def test_a_union_of_ranges_states_each_range_once():
    orders = st.KeyRanges("bigint", (("1", "7"), ("32", "39"), ("6000001", "6001500")))
    lineitem = st.KeyRanges("bigint", (("1", "7"), ("32", "39"), ("6000001", "6001500"), ("6001600", "6001700")))
    union = st.KeyRanges.union([orders, lineitem])
    assert union == st.KeyRanges("bigint", (("1", "7"), ("32", "39"), ("6000001", "6001500"), ("6001600", "6001700")))
    assert st.KeyRanges.union([orders, None]) is None
    assert st.KeyRanges.union([orders, st.KeyRanges("date", (("2020-01-01", "2020-01-02"),))]) is None
