"""The forms of GROUP BY beyond a list of expressions. ROLLUP, CUBE and GROUPING SETS: the sets
each form expands to (Spark's order of grouping columns and grouping ids), and the property
checks of every aggregate over models drawn from these alone (``zset_queries``'s
"grouping_sets" shape): the rules in memory and as generated SQL (DuckDB) against
``Q(new) − Q(old)``, and the plan against DuckDB's own ROLLUP/CUBE on bags. GROUP BY ALL: the
keys Spark infers (the property checks draw it among the "group" and "global" shapes)."""

from __future__ import annotations

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

from ivm_core.compiler import compile_model
from ivm_core.errors import AnalysisError
from ivm_core.grouping_sets import expand
from ivm_core.plan import Aggregate, UnionAll, describe, walk
from tests.unit import test_delta_properties as props
from tests.unit.zset_queries import AGGREGATE_QUERIES, SCHEMAS, TABLES, bags

GROUPING_SETS = st.sampled_from(AGGREGATE_QUERIES["grouping_sets"])


def sets_of(group_by: str) -> tuple[list[str], list[set[str]]]:
    group = sqlglot.parse_one(f"SELECT 1 FROM t GROUP BY {group_by}", read="spark").args["group"]
    found = expand(group)
    assert found is not None
    columns = [c.sql("spark") for c in found.columns]
    return columns, [{columns[i] for i in s} for s in found.sets]


@pytest.mark.parametrize("group_by, columns, sets", [
    ("ROLLUP (a, b)", ["a", "b"], [{"a", "b"}, {"a"}, set()]),
    ("a, b WITH ROLLUP", ["a", "b"], [{"a", "b"}, {"a"}, set()]),
    ("CUBE (a, b)", ["a", "b"], [{"a", "b"}, {"a"}, {"b"}, set()]),
    ("a, b WITH CUBE", ["a", "b"], [{"a", "b"}, {"a"}, {"b"}, set()]),
    ("GROUPING SETS ((a, b), (b), ())", ["a", "b"], [{"a", "b"}, {"b"}, set()]),
    ("a, b GROUPING SETS ((b), a)", ["a", "b"], [{"b"}, {"a"}]),
    ("a, ROLLUP (b, c)", ["a", "b", "c"], [{"a", "b", "c"}, {"a", "b"}, {"a"}]),
    ("ROLLUP (a), CUBE (b)", ["a", "b"], [{"a", "b"}, {"a"}, {"b"}, set()]),
    ("GROUPING SETS ((a), (a))", ["a"], [{"a"}, {"a"}]),
])
def test_sets(group_by, columns, sets):
    assert sets_of(group_by) == (columns, sets)


def test_plain_group_by_has_no_sets():
    assert expand(sqlglot.parse_one("SELECT 1 FROM t GROUP BY a, b", read="spark").args["group"]) is None


def test_grouping_id_bits_follow_spark():
    group = sqlglot.parse_one("SELECT 1 FROM t GROUP BY ROLLUP (a, b)", read="spark").args["group"]
    found = expand(group)
    assert found is not None
    assert [found.grouping_id(s) for s in found.sets] == [0, 1, 3]


def test_one_aggregate_over_the_expansion():
    program = compile_model("SELECT r.a, r.b, count(*) AS n FROM db.r AS r GROUP BY CUBE (r.a, r.b)", SCHEMAS)
    (agg,) = [n for n in walk(program.plan) if isinstance(n, Aggregate)]
    assert isinstance(agg.child, UnionAll) and len(agg.child.inputs) == 4
    assert len(agg.keys) == 3  # a, b and the grouping id
    repeated = compile_model("SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY GROUPING SETS ((r.a), (r.a))",
                             SCHEMAS)
    assert len(repeated.aggregates[0].keys) == 3  # a, the grouping id and the set's position


@pytest.mark.parametrize("sql, keys", [
    ("SELECT r.a, r.b + 1 AS k, count(*) AS n FROM db.r AS r GROUP BY ALL", ["r.a", "r.b + 1"]),
    ("SELECT 1 AS one, r.a, sum(r.b) FROM db.r AS r GROUP BY ALL", ["1", "r.a"]),  # a literal too, as Spark
    ("SELECT r.a, r.b FROM db.r AS r GROUP BY ALL", ["r.a", "r.b"]),
    ("SELECT count(*) AS n, max(r.a) AS m FROM db.r AS r GROUP BY ALL", []),  # global: one row over none
])
def test_group_by_all_groups_by_every_expression_without_an_aggregate(sql, keys):
    (agg,) = compile_model(sql, SCHEMAS).aggregates
    assert agg.is_global == (not keys)
    assert len(agg.keys) == len(keys)
    plain = compile_model(sql.replace("GROUP BY ALL", f"GROUP BY {', '.join(keys)}" if keys else ""), SCHEMAS)
    assert describe(plain.plan) == describe(compile_model(sql, SCHEMAS).plan)


def test_group_by_all_refuses_what_spark_cannot_infer():
    with pytest.raises(AnalysisError):
        compile_model("SELECT r.a + sum(r.b) AS x FROM db.r AS r GROUP BY ALL", SCHEMAS)


@pytest.mark.parametrize("sql", [
    "SELECT r.a, grouping(r.a) AS g FROM db.r AS r GROUP BY r.a",
    "SELECT r.a, grouping(r.b) AS g FROM db.r AS r GROUP BY ROLLUP (r.a)",
    "SELECT r.a, grouping_id(r.b, r.a) AS g FROM db.r AS r GROUP BY ROLLUP (r.a, r.b)",
])
def test_grouping_calls_spark_refuses_are_refused(sql):
    with pytest.raises(AnalysisError):
        compile_model(sql, SCHEMAS)


@settings(max_examples=100, **props.SETTINGS)
@given(props.scenarios(GROUPING_SETS))
def test_grouping_sets_delta_in_memory(scenario):
    props.test_delta_equals_difference_of_results.hypothesis.inner_test(scenario)


@settings(max_examples=80, **props.SETTINGS)
@given(props.scenarios(GROUPING_SETS), props.STAGING, st.booleans())
def test_grouping_sets_generated_sql(scenario, staged, rewrite):
    props.test_generated_sql_computes_the_delta_and_the_new_state.hypothesis.inner_test(scenario, staged, rewrite)


@settings(max_examples=80, deadline=None)
@given(GROUPING_SETS, st.fixed_dictionaries({k: bags(len(c)) for k, c in TABLES.items()}))
def test_grouping_sets_plan_matches_duckdb(sql, data):
    props.test_plan_matches_duckdb_on_bags.hypothesis.inner_test(sql, data)
