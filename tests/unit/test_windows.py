"""Window functions (``ivm_core/windows.py`` analyzes them, ``ivm_core/rules/window.py`` is the rule).

The rule is run, not its definition: on in-memory Z-sets (the state's rows of the touched partitions, the
change added, the window evaluated by its definition in ``zset.window``) and as the SQL the compiler emits,
executed by DuckDB, both against ``Q(new) − Q(old)``; the plan against DuckDB's own answer. The models
(``zset_queries.WINDOW_QUERIES``) order rows a ROW_NUMBER, LAG or ROWS frame depends on completely, up to
equal rows, so every engine gives the same bag.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ivm_core.compiler import compile_model
from ivm_core.errors import UnsupportedSql
from ivm_core.plan import Aggregate, Window, WindowResult, walk
from tests.unit import test_delta_properties as properties
from tests.unit.zset_queries import SCHEMAS, TABLES, bags, window_queries


@settings(max_examples=120, **properties.SETTINGS)
@given(properties.scenarios(window_queries()))
def test_the_rule_in_memory_gives_the_change(scenario):
    properties.test_delta_equals_difference_of_results.hypothesis.inner_test(scenario)


@settings(max_examples=80, **properties.SETTINGS)
@given(properties.scenarios(window_queries()), properties.STAGING, st.booleans())
def test_the_generated_sql_gives_the_change_and_the_new_state(scenario, staged, rewrite):
    properties.test_generated_sql_computes_the_delta_and_the_new_state.hypothesis.inner_test(scenario, staged, rewrite)


@settings(max_examples=80, **properties.SETTINGS)
@given(properties.scenarios(window_queries(), only_inserts=True), properties.STAGING, st.booleans())
def test_a_change_that_only_inserts_gives_the_change(scenario, staged, rewrite):
    """Appends: a model keeping top rows ranks the target's rows and the inserted ones
    (``rules.window_result``), in memory and as SQL."""
    properties.test_delta_equals_difference_of_results.hypothesis.inner_test(scenario)
    properties.test_generated_sql_computes_the_delta_and_the_new_state.hypothesis.inner_test(scenario, staged, rewrite)


@settings(max_examples=80, deadline=None)
@given(window_queries(), st.fixed_dictionaries({k: bags(len(c)) for k, c in TABLES.items()}))
def test_the_plan_means_what_duckdb_computes(sql, data):
    properties.test_plan_matches_duckdb_on_bags.hypothesis.inner_test(sql, data)


def windows_of(sql: str) -> list[Window]:
    return [n for n in walk(compile_model(sql, SCHEMAS).plan) if isinstance(n, Window)]


def test_each_partitioning_is_one_window_under_its_rows():
    program = compile_model(
        "SELECT r.a, r.b, count(*) OVER (PARTITION BY r.a) AS n, max(r.b) OVER (PARTITION BY r.a) AS m, "
        "rank() OVER (PARTITION BY r.b, r.a ORDER BY r.b) AS k, lag(r.b) OVER (PARTITION BY r.b ORDER BY r.a) AS l "
        "FROM db.r AS r", SCHEMAS)
    found = [n for n in walk(program.plan) if isinstance(n, Window)]
    assert sorted(len(w.calls) for w in found) == [1, 1, 2]  # (a), (b, a) = (a, b), (b)
    for window in found:
        state = [a for a in program.aggregates if a.id == window.state]
        assert len(state) == 1 and state[0].keeps_rows and state[0].child is window


def test_a_window_at_the_top_is_kept_by_the_target():
    """dbt's dedup: filters and projections over one window that pass its partition key through,
    over a scan: no state (the target holds the partitions), the input read after the change."""
    program = compile_model(
        "SELECT q.a, q.b FROM (SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b) AS rn "
        "FROM db.r AS r) AS q WHERE q.rn = 1", SCHEMAS)
    assert isinstance(program.plan, WindowResult) and program.aggregates == []
    assert program.plan.keys == (program.plan.columns[0],) and program.inputs["db.r"].stateful
    assert program.result_is_set()
    assert program.plan.top == program.plan.columns  # (a, b): the whole rows of the window's child


@pytest.mark.parametrize("sql,top", [
    ("SELECT q.b, q.a FROM (SELECT r.a, r.b, rank() OVER (PARTITION BY r.a ORDER BY r.b) AS k FROM db.r AS r) AS q "
     "WHERE q.k <= 3", True),
    ("SELECT q.b, q.a FROM (SELECT r.a, r.b, dense_rank() OVER (PARTITION BY r.a ORDER BY r.b) AS k FROM db.r AS r) "
     "AS q WHERE q.k < 2", True),
    ("SELECT q.a FROM (SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b) AS k FROM db.r AS r) AS q "
     "WHERE q.k = 1", False),  # b not kept: the target holds no whole rows
    ("SELECT q.a, q.b FROM (SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b) AS k FROM db.r AS r) "
     "AS q WHERE q.k = 2", False),  # the second row is no top
    ("SELECT q.a, q.b FROM (SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b) AS k FROM db.r AS r) "
     "AS q WHERE q.k <= 1 AND q.b > 0", False),  # a second term drops held rows
    ("SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b) AS k FROM db.r AS r", False),  # no bound
    ("SELECT q.a, q.b FROM (SELECT r.a, r.b, lag(r.b) OVER (PARTITION BY r.a ORDER BY r.b) AS k FROM db.r AS r) AS q "
     "WHERE q.k <= 1", False),  # not a rank
])
def test_top_rows_need_a_rank_bound_and_whole_rows(sql, top):
    plan = compile_model(sql, SCHEMAS).plan
    assert isinstance(plan, WindowResult) and (plan.top is not None) == top


@pytest.mark.parametrize("sql", [
    "SELECT r.b, rank() OVER (PARTITION BY r.a ORDER BY r.b) AS k FROM db.r AS r",  # its partition not output
    "SELECT r.a, s.c, row_number() OVER (PARTITION BY r.a ORDER BY s.c) AS rn "
    "FROM db.r AS r JOIN db.s AS s ON r.b = s.b",  # over a join
    "SELECT DISTINCT r.a, max(r.b) OVER (PARTITION BY r.a) AS m FROM db.r AS r",  # under DISTINCT
    "SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b) AS rn FROM db.r AS r "
    "ORDER BY rn LIMIT 2",  # a top-k keeps only some rows in its target
])
def test_a_window_under_anything_else_keeps_its_rows(sql):
    program = compile_model(sql, SCHEMAS)
    assert not isinstance(program.plan, WindowResult)
    assert any(a.takes_pieces for a in program.aggregates)


def test_a_partition_by_expression_is_computed_as_a_column():
    (window,) = windows_of("SELECT r.a, sum(r.b) OVER (PARTITION BY r.a + 1, r.b > 0) AS s FROM db.r AS r")
    assert len(window.partition) == 2 and all(p in window.child.columns for p in window.partition)


def test_the_dedup_result_is_a_set_keyed_by_its_partition():
    """ROW_NUMBER numbers a partition's rows apart, so ``rn = 1`` keeps one row per key: the target takes
    its change in one MERGE (``Program.result_is_set``)."""
    dedup = compile_model(
        "SELECT q.a, q.b FROM (SELECT r.a, r.b, row_number() OVER (PARTITION BY r.a ORDER BY r.b) AS rn "
        "FROM db.r AS r) AS q WHERE q.rn = 1", SCHEMAS)
    assert dedup.result_is_set()
    ranked = compile_model("SELECT r.a, rank() OVER (PARTITION BY r.a ORDER BY r.b) AS k FROM db.r AS r", SCHEMAS)
    assert not ranked.result_is_set()  # ties share a rank


def test_the_state_keeps_only_the_columns_used():
    (window,) = windows_of("SELECT r.a, row_number() OVER (PARTITION BY r.a ORDER BY r.a) AS rn "
                           "FROM db.r AS r JOIN db.s AS s ON r.b = s.b")
    assert len(window.child.columns) == 1  # r.a: not r.b, s.b, s.c


def test_a_window_over_a_grouped_query_reads_the_aggregates():
    program = compile_model(
        "SELECT r.a, sum(r.b) AS s, rank() OVER (PARTITION BY r.a > 1 ORDER BY sum(r.b) DESC) AS k "
        "FROM db.r AS r GROUP BY r.a", SCHEMAS)
    grouped = [a for a in program.aggregates if not a.keeps_rows]
    assert len(grouped) == 1 and [c.func for c in grouped[0].aggs] == ["sum"]  # the window's SUM is the same call


@pytest.mark.parametrize("sql, construct", [
    ("SELECT r.a, count(*) OVER () AS n FROM db.r AS r", "without PARTITION BY"),
    ("SELECT r.a, row_number() OVER (ORDER BY r.b) AS n FROM db.r AS r", "without PARTITION BY"),
    ("SELECT r.a, sum(r.b) OVER w AS s FROM db.r AS r WINDOW w AS (PARTITION BY r.a)", "named windows"),
    ("SELECT r.a, max(r.b) OVER (PARTITION BY r.a ORDER BY (SELECT max(s.c) FROM db.s AS s)) AS m FROM db.r AS r",
     "subquery in a window"),
])
def test_refusals_name_the_construct(sql, construct):
    with pytest.raises(UnsupportedSql) as refused:
        compile_model(sql, SCHEMAS)
    assert construct in str(refused.value)
    assert refused.value.over_inputs  # auto recomputes the SQL as written


def test_window_states_are_aggregates_listed_bottom_up():
    program = compile_model(
        "SELECT q.a, q.n, row_number() OVER (PARTITION BY q.n ORDER BY q.a) AS rn "
        "FROM (SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY r.a) AS q", SCHEMAS)
    kinds = [("rows" if a.keeps_rows else "groups") for a in program.aggregates]
    assert kinds == ["groups", "rows"]  # the window's child aggregate is built first
    assert all(isinstance(a, Aggregate) for a in program.aggregates)
