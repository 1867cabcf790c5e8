"""Which group keys bound a state's MERGE (``Program.bounded_keys``): a key that is a column of
the one changed input under the aggregate, passed through unchanged, so every group the change
touches has a key among that input's change values and the MERGE reads only the state rows
within their ranges. Whether the bounded MERGE leaves the right state is test_delta_properties'
(its generated-SQL check passes each changed column's ranges; its explicit example is a join
whose other side's change touches a group outside them). This is about the choice: a key taken
wrongly loses groups, one missed reads the whole state (TPC-H Q18's 1.5 M per-order sums at
SF 1: a 1.6-2.0 s MERGE where the change's ranges make it 0.5-0.7 s)."""

from __future__ import annotations

import pytest

from ivm_core.compiler import compile_model
from tests.unit.test_tpch_modes import SCHEMAS, tpch_sql
from tests.unit.zset_queries import SCHEMAS as QUERY_SCHEMAS


def bounded(sql: str, changed: set[str], schemas=QUERY_SCHEMAS) -> dict[str, list[tuple[str, str]]]:
    """Per aggregate, the (input, column) of each group key bounding its state's MERGE."""
    program = compile_model(sql, schemas)
    return {agg_id: [origin for _, origin in program.bounded_keys(agg_id, changed)] for agg_id in program.layouts}


JOIN = "SELECT r.a, count(*) AS n FROM db.r AS r JOIN db.s AS s ON r.b = s.b GROUP BY r.a"


@pytest.mark.parametrize("sql, changed, expected", [
    ("SELECT r.a, r.b, sum(r.b) AS s FROM db.r AS r WHERE r.b > 0 GROUP BY r.a, r.b", {"db.r"},
     {"agg0": [("db.r", "a"), ("db.r", "b")]}),
    (JOIN, {"db.r"}, {"agg0": [("db.r", "a")]}),  # s's rows joined with r's change: r's keys
    (JOIN, {"db.s"}, {"agg0": []}),  # r's rows joined with s's change: any key of r
    (JOIN, {"db.r", "db.s"}, {"agg0": []}),
    ("SELECT x.a, count(*) AS n FROM db.r AS x JOIN db.r AS y ON x.b = y.a GROUP BY x.a", {"db.r"},
     {"agg0": []}),  # a self-join: y's change joins x's rows, any key
    ("SELECT r.a + 1 AS k, count(*) AS n FROM db.r AS r GROUP BY r.a + 1", {"db.r"}, {"agg0": []}),  # computed
    ("SELECT a, count(*) AS n FROM (SELECT r.a, sum(r.b) AS t FROM db.r AS r GROUP BY r.a) AS g GROUP BY a",
     {"db.r"}, {"agg0": [("db.r", "a")], "agg1": [("db.r", "a")]}),  # through the inner group key
    ("SELECT a, count(*) AS n FROM (SELECT r.a, row_number() OVER (PARTITION BY r.b ORDER BY r.a) AS i "
     "FROM db.r AS r) AS w GROUP BY a", {"db.r"}, {"agg0": []}),  # a window's rows: a touched partition's, any key
    ("SELECT a, count(*) AS n FROM (SELECT r.a FROM db.r AS r UNION ALL SELECT s.b FROM db.s AS s) AS u GROUP BY a",
     {"db.r"}, {"agg0": []}),
])
def test_a_group_key_bounds_the_merge_when_the_changed_input_alone_gives_its_values(sql, changed, expected):
    got = bounded(sql, changed)
    assert {a: got[a] for a in expected} == expected


def test_tpch_q18s_per_order_sums_are_bounded_by_lineitems_order_keys():
    """The subquery's sums per order read lineitem alone: its change's order keys bound them,
    whatever else changed; the top aggregate's keys (customer, order) come through a join."""
    every = {"tpch.customer", "tpch.orders", "tpch.lineitem"}
    got = bounded(tpch_sql(18), every, SCHEMAS)
    assert got["agg0"] == [("tpch.lineitem", "l_orderkey")]
    assert all(not keys for agg_id, keys in got.items() if agg_id != "agg0")
    assert bounded(tpch_sql(3), {"tpch.lineitem"}, SCHEMAS)["agg0"] == [("tpch.lineitem", "l_orderkey")]
    assert bounded(tpch_sql(3), every, SCHEMAS)["agg0"] == []
