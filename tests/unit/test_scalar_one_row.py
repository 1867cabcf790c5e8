"""Uncorrelated scalar subqueries that are not global aggregates (``ivm_core.scalar_one_row``: TPC-DS
q06, q14, q54, q58's ``(SELECT DISTINCT d_month_seq FROM date_dim WHERE …)``): for random inputs with
duplicates and NULLs and change batches, where the subquery has no row, one, or several:

* its plan means what the SQL means (DuckDB runs the model's SQL: NULL over no rows, and over more
  than one it fails — so must the plan, with Spark's message);
* over inputs whose subquery has at most one row before and after the change, the change the rules
  derive equals ``Q(new) − Q(old)`` in memory and as the SQL the compiler emits (DuckDB);
* when the change gives the subquery more than one row, the change fails in memory and its SQL fails
  with Spark's message (the run fails; the driver leaves every table as the last commit left it).
"""

from __future__ import annotations

import re

import duckdb
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from ivm_core.compiler import compile_model
from ivm_core.errors import UnsupportedSql
from ivm_core.rules.aggregate.held import TARGET
from ivm_core.scalar_one_row import TOO_MANY_ROWS
from ivm_core.zset import RaisedError, evaluate, versioned_leaf
from tests.unit import test_delta_properties as props
from tests.unit.duckdb_engine import connect, execute, query
from tests.unit.zset_queries import SCHEMAS, TABLES, bags

ONE_ROW_QUERIES = [
    # q06: a month's sequence number, by DISTINCT
    "SELECT r.a FROM db.r AS r WHERE r.b = (SELECT DISTINCT s.c FROM db.s AS s WHERE s.b = 1)",
    "SELECT r.a, (SELECT s.c FROM db.s AS s WHERE s.b = 2) AS x FROM db.r AS r",
    "SELECT r.a, r.b FROM db.r AS r WHERE r.a > (SELECT t.d FROM db.t AS t WHERE t.c = 3) OR r.b IS NULL",
    # q54: a range between two of them (its BETWEEN, spelled as the in-memory evaluator reads it)
    "SELECT r.a FROM db.r AS r WHERE r.a >= (SELECT DISTINCT s.c - 1 FROM db.s AS s WHERE s.b = 1) "
    "AND r.a <= (SELECT DISTINCT s.c + 1 FROM db.s AS s WHERE s.b = 1)",
    # a GROUP BY: a row per group
    "SELECT r.a, r.b FROM db.r AS r WHERE r.b = (SELECT count(*) FROM db.s AS s WHERE s.c = 1 GROUP BY s.b)",
    # under an aggregate of the outer query
    "SELECT r.b, count(*) AS n FROM db.r AS r WHERE coalesce((SELECT DISTINCT t.d FROM db.t AS t WHERE t.c = 0), 0) "
    "<= r.a GROUP BY r.b",
]
QUERIES = st.sampled_from(ONE_ROW_QUERIES)
# per query, rows that give its subquery two rows (two values, or one row twice)
CROWDING = dict(zip(ONE_ROW_QUERIES, [
    ("db.s", [(1, 2), (1, 3)]),
    ("db.s", [(2, 5), (2, 5)]),
    ("db.t", [(3, 0), (3, 1)]),
    ("db.s", [(1, 0), (1, 2)]),
    ("db.s", [(0, 1), (3, 1)]),
    ("db.t", [(0, 2), (0, None)]),
]))


@st.composite
def crowded(draw):
    """A scenario whose change also inserts the rows that give the subquery two rows."""
    sql, old, delta, floats = draw(props.scenarios(QUERIES))
    table, rows = CROWDING[sql]
    change = dict(delta.get(table, {}))
    for row in rows:
        change[row] = change.get(row, 0) + 1
    return sql, old, {**delta, table: {r: w for r, w in change.items() if w}}, floats


def _fails(sql: str, data) -> bool:
    """Whether DuckDB, running the model's SQL over ``data``, fails it: a subquery of several rows."""
    db = connect()
    db.execute("CREATE SCHEMA db")
    for key, cols in TABLES.items():
        props._load(db, key, cols, data[key], weighted=False)
    try:
        db.execute(props.duckdb_sql(sql)).fetchall()
    except duckdb.Error as e:
        assert "More than one row returned by a subquery" in str(e), e
        return True
    return False


@settings(max_examples=200, deadline=None)
@given(QUERIES, st.fixed_dictionaries({k: bags(len(c)) for k, c in TABLES.items()}))
def test_one_row_plan_matches_duckdb(sql, data):
    """DuckDB runs the SQL; a subquery of several rows fails it, and the plan (when the outer query
    has rows to give the value to)."""
    assume(data["db.r"])
    program = compile_model(sql, SCHEMAS)
    if _fails(sql, data):
        with pytest.raises(RaisedError, match=re.escape(TOO_MANY_ROWS)):
            evaluate(program.plan, versioned_leaf(data, {}, props.COLUMNS))
        return
    props.test_plan_matches_duckdb_on_bags.hypothesis.inner_test(sql, data)


@settings(max_examples=250, **props.SETTINGS)
@given(props.scenarios(QUERIES), props.STAGING, props.STATE_WRITES)
def test_one_row_delta(scenario, staged, write):
    _check_delta(scenario, staged, write)


@settings(max_examples=100, **props.SETTINGS)
@given(crowded(), props.STAGING, props.STATE_WRITES)
def test_one_row_delta_to_more_rows(scenario, staged, write):
    _check_delta(scenario, staged, write)


def _check_delta(scenario, staged, write):
    sql, old, delta, floats = scenario
    assume(old["db.r"] and props.new_inputs(old, delta)["db.r"])
    program = props.compiled(sql, floats)
    leaf = versioned_leaf(old, delta, props.COLUMNS)
    assume(not _fails(sql, old))  # the last commit's inputs: at most one row
    if not _fails(sql, props.new_inputs(old, delta)):
        event("at most one row after the change")
        props.test_delta_equals_difference_of_results.hypothesis.inner_test(scenario)
        props.test_generated_sql_computes_the_delta_and_the_new_state.hypothesis.inner_test(scenario, staged, write)
        return
    # more than one row after the change: the change fails, in memory and as SQL
    event("more than one row after the change")
    new_leaf = versioned_leaf(props.new_inputs(old, delta), {}, props.COLUMNS)
    with pytest.raises(RaisedError, match=re.escape(TOO_MANY_ROWS)):
        props.check_in_memory(program, leaf, new_leaf, set(delta), sql)
    db = connect()
    for key, cols in TABLES.items():
        versions = {"old": old[key], "delta": delta.get(key, {}), "new": props.new_inputs(old, delta)[key]}
        for version, data in versions.items():
            props._load(db, props._table(key, version), cols, data, weighted=True)

    def table(scan):
        return props._table(scan.input, scan.version.value)

    def state(agg_id: str, name: str) -> str:  # a group state the target holds: the target's old rows
        return "held_target_old" if name == TARGET else f"state_{agg_id}__{name}"

    for statement in program.state_builds(table, state):
        execute(db, f"CREATE TABLE {state(statement.aggregate, statement.state)} AS\n{statement.sql}")
    if program.held_aggregates:
        props._load_result(db, program, versioned_leaf(old, {}, props.COLUMNS), "held_target_old")
    text = program.delta_sql(set(delta), program.env(table, state))
    assert text is not None, sql
    with pytest.raises(duckdb.Error, match=re.escape(TOO_MANY_ROWS)):
        query(db, text)


def test_no_row_is_null_and_two_rows_fail():
    """On data made for it: no row gives NULL (kept by ``IS NULL``), one its value, two equal rows
    (not distinct) fail."""
    sql = "SELECT r.a, (SELECT s.c FROM db.s AS s WHERE s.b = 2) AS x FROM db.r AS r"
    program = compile_model(sql, SCHEMAS)
    r = {(1, 1): 2}
    for s, expected in (({(1, 5): 1}, {(1, None): 2}), ({(2, 5): 1, (1, 7): 1}, {(1, 5): 2})):
        assert evaluate(program.plan, versioned_leaf({"db.r": r, "db.s": s, "db.t": {}}, {}, props.COLUMNS)) == expected
    with pytest.raises(RaisedError, match=re.escape(TOO_MANY_ROWS)):
        evaluate(program.plan, versioned_leaf({"db.r": r, "db.s": {(2, 5): 2}, "db.t": {}}, {}, props.COLUMNS))


@pytest.mark.parametrize("sql", [
    "SELECT r.a FROM db.r AS r WHERE r.a = (SELECT s.c, s.b FROM db.s AS s WHERE s.b = 1)",
])
def test_a_subquery_of_several_columns_is_refused(sql):
    with pytest.raises(UnsupportedSql, match="one SELECT of one column"):
        compile_model(sql, SCHEMAS)
