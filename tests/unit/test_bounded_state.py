"""Which group keys bound a state's MERGE and its aggregate's read of the touched groups
(``Program.bounded_keys``, ``key_sources``): a key whose value in every row of the child's
change is one of the change values of some changed input's column — that input's own column
passed through unchanged, or one the join's equalities make equal to it, in each update path —
so the MERGE reads only the state rows within the union of their ranges. Whether the bounded
SQL leaves the right state is test_delta_properties' (its generated-SQL check passes each
changed column's ranges; its explicit example is a join whose other side's change touches a
group outside r's ranges). This is about the choice: a key taken wrongly loses groups, one
missed reads the whole state (TPC-H Q18's 1.5 M per-order sums at SF 1: a 1.6-2.0 s MERGE where
the change's ranges make it 0.7-0.9 s)."""

from __future__ import annotations

import pytest

from ivm_core.compiler import compile_model
from ivm_core.statements import KeyRanges, create_index, create_state
from tests.unit.test_tpch_modes import SCHEMAS, tpch_sql
from tests.unit.zset_queries import SCHEMAS as QUERY_SCHEMAS


def bounded(sql: str, changed: set[str], schemas=QUERY_SCHEMAS) -> dict[str, list[tuple[tuple[str, str], ...]]]:
    """Per aggregate, the (input, column) sources of each group key bounding its state's MERGE."""
    program = compile_model(sql, schemas)
    return {agg_id: [sources for _, sources in program.bounded_keys(agg_id, changed)] for agg_id in program.layouts}


JOIN = "SELECT r.a, count(*) AS n FROM db.r AS r JOIN db.s AS s ON r.b = s.b GROUP BY r.a"
ON_KEY = "SELECT r.a, count(*) AS n FROM db.r AS r JOIN db.s AS s ON r.a = s.b GROUP BY r.a"
R_A, S_B = ("db.r", "a"), ("db.s", "b")


@pytest.mark.parametrize("sql, changed, expected", [
    ("SELECT r.a, r.b, sum(r.b) AS s FROM db.r AS r WHERE r.b > 0 GROUP BY r.a, r.b", {"db.r"},
     {"agg0": [(R_A,), (("db.r", "b"),)]}),
    (JOIN, {"db.r"}, {"agg0": [(R_A,)]}),  # s's rows joined with r's change: r's keys
    (JOIN, {"db.s"}, {"agg0": []}),  # r's rows joined with s's change: any key of r
    (JOIN, {"db.r", "db.s"}, {"agg0": []}),
    (ON_KEY, {"db.s"}, {"agg0": [(S_B,)]}),  # joined on the key: s's change gives it
    (ON_KEY, {"db.r", "db.s"}, {"agg0": [(R_A, S_B)]}),  # each path its own input's values
    ("SELECT x.a, count(*) AS n FROM db.r AS x JOIN db.r AS y ON x.b = y.a GROUP BY x.a", {"db.r"},
     {"agg0": []}),  # a self-join: y's change joins x's rows, any key
    ("SELECT x.a, count(*) AS n FROM db.r AS x JOIN db.r AS y ON x.a = y.a GROUP BY x.a", {"db.r"},
     {"agg0": [(R_A,)]}),  # joined on the key itself
    ("SELECT r.a, count(*) AS n FROM db.r AS r JOIN db.s AS s ON r.a = s.b OR r.b = s.b GROUP BY r.a",
     {"db.r", "db.s"}, {"agg0": []}),  # an equality under OR holds for no row in particular
    ("SELECT r.a + 1 AS k, count(*) AS n FROM db.r AS r GROUP BY r.a + 1", {"db.r"}, {"agg0": []}),  # computed
    ("SELECT a, count(*) AS n FROM (SELECT r.a, sum(r.b) AS t FROM db.r AS r GROUP BY r.a) AS g GROUP BY a",
     {"db.r"}, {"agg0": [(R_A,)], "agg1": [(R_A,)]}),  # through the inner group key
    ("SELECT a, count(*) AS n FROM (SELECT r.a, row_number() OVER (PARTITION BY r.b ORDER BY r.a) AS i "
     "FROM db.r AS r) AS w GROUP BY a", {"db.r"}, {"agg0": []}),  # a window's rows: a touched partition's, any key
    ("SELECT a, count(*) AS n FROM (SELECT r.a FROM db.r AS r UNION ALL SELECT s.b FROM db.s AS s) AS u GROUP BY a",
     {"db.r"}, {"agg0": []}),
])
def test_a_group_key_bounds_the_merge_when_the_changed_input_alone_gives_its_values(sql, changed, expected):
    got = bounded(sql, changed)
    assert {a: got[a] for a in expected} == expected


def test_tpch_order_keys_bound_the_per_order_states():
    """Q18's subquery sums per order read lineitem alone: its change's order keys bound them,
    whatever else changed. Its top aggregate's order key is equal to orders' and lineitem's (a
    TPC-H refresh batch's two changes), not to customer's; Q3's per-order sums likewise."""
    every = {"tpch.customer", "tpch.orders", "tpch.lineitem"}
    refresh = {"tpch.orders", "tpch.lineitem"}
    order_keys = (("tpch.lineitem", "l_orderkey"), ("tpch.orders", "o_orderkey"))
    got = bounded(tpch_sql(18), every, SCHEMAS)
    assert got["agg0"] == [(("tpch.lineitem", "l_orderkey"),)]
    assert all(not keys for agg_id, keys in got.items() if agg_id != "agg0")
    assert order_keys in bounded(tpch_sql(18), refresh, SCHEMAS)["agg1"]
    assert bounded(tpch_sql(3), {"tpch.lineitem"}, SCHEMAS)["agg0"] == [(("tpch.lineitem", "l_orderkey"),)]
    assert bounded(tpch_sql(3), refresh, SCHEMAS)["agg0"] == [order_keys]
    assert bounded(tpch_sql(3), every, SCHEMAS)["agg0"] == []


def test_the_union_of_ranges_holds_every_part_and_needs_every_part():
    ints, more = KeyRanges("int", (("1", "3"),)), KeyRanges("bigint", (("7", "7"),))
    assert KeyRanges.union([ints, more]) == KeyRanges("int", (("1", "3"), ("7", "7")))
    assert KeyRanges.union([ints, None]) is None  # a source with no ranges: any key
    assert KeyRanges.union([ints, KeyRanges("date", (("2024-01-01", "2024-01-02"),))]) is None
    assert KeyRanges.union([]) is None


def test_a_state_is_written_sorted_by_the_key_that_bounds_the_most_changes():
    """Q3's per-order groups by their order key, which bounds a change of lineitem or of orders
    (its order date only one of orders); Q1's groups by nothing (its keys are flags)."""
    program = compile_model(tpch_sql(3), SCHEMAS)
    key = program.state_sort_key("agg0")
    assert dict(program.bounded_keys("agg0", {"tpch.lineitem"}))[key] == (("tpch.lineitem", "l_orderkey"),)
    assert [s.sort_key for s in program.state_builds(lambda scan: "t", lambda a, n: "s")] == [key]
    assert compile_model(tpch_sql(1), SCHEMAS).state_sort_key("agg0") is None


def test_a_state_is_sorted_within_each_file_and_an_index_across_its_files():
    """A state's rows come out of its aggregate spread over the tasks by their group key: each
    task sorts its own (``SORT BY``), as a global order would sample them first — running the
    aggregation twice. A join index is read from a scan: ordered globally, each file one range."""
    assert create_state("s", "SELECT k, count(*) AS n FROM t GROUP BY k", "k").endswith("\nSORT BY `k`")
    assert "SORT BY" not in create_state("s", "SELECT k FROM t GROUP BY k", None)
    assert create_index("i", "SELECT k FROM t", "k").endswith("\nORDER BY `k`")


def test_every_state_and_index_is_written_in_snappy():
    """A rebuild reads the whole state back to build the target: Snappy reads faster here than
    Iceberg's default zstd (``STATE_CODEC``)."""
    snappy = "'write.parquet.compression-codec' = 'snappy'"
    for sort_key in ("k", None):
        assert snappy in create_state("s", "SELECT k, count(*) AS n FROM t GROUP BY k", sort_key)
        assert snappy in create_index("i", "SELECT k FROM t", sort_key)
