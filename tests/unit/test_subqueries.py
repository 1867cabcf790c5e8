"""Subqueries in expressions (``ivm_core.subqueries``: EXISTS, NOT EXISTS, IN, NOT IN, correlated
or not, several columns, nested; scalar subqueries, uncorrelated and correlated, in WHERE and
SELECT, NULL-rejected or not; in HAVING): for random inputs with NULLs and change batches, the change the
rules derive equals ``Q(new) − Q(old)`` — run by the in-memory Z-set evaluator and as the SQL the
compiler emits (DuckDB) — and the plan means what the SQL means on bags (DuckDB runs the
original query: SQL's NULL semantics of NOT IN are its)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ivm_core.compiler import compile_model
from ivm_core.errors import UnsupportedSql
from tests.unit import test_delta_properties as props
from tests.unit.zset_queries import SUBQUERY_QUERIES, SCHEMAS, TABLES, bags, subquery_queries


@settings(max_examples=250, **props.SETTINGS)
@given(props.scenarios(subquery_queries()))
def test_subquery_delta_in_memory(scenario):
    props.test_delta_equals_difference_of_results.hypothesis.inner_test(scenario)


@settings(max_examples=150, **props.SETTINGS)
@given(props.scenarios(subquery_queries()))
def test_subquery_delta_over_filtered_indexes(scenario):
    props.test_delta_over_filtered_join_indexes.hypothesis.inner_test(scenario)


@settings(max_examples=150, **props.SETTINGS)
@given(props.scenarios(subquery_queries()), props.STAGING, st.booleans())
def test_subquery_generated_sql(scenario, staged, rewrite):
    props.test_generated_sql_computes_the_delta_and_the_new_state.hypothesis.inner_test(scenario, staged, rewrite)


@settings(max_examples=150, deadline=None)
@given(subquery_queries("duckdb"), st.fixed_dictionaries({k: bags(len(c)) for k, c in TABLES.items()}))
def test_subquery_plan_matches_duckdb(sql, data):
    props.test_plan_matches_duckdb_on_bags.hypothesis.inner_test(sql, data)


@pytest.mark.parametrize("sql", SUBQUERY_QUERIES)
def test_every_subquery_query_compiles(sql):
    compile_model(sql, SCHEMAS)


@pytest.mark.parametrize("sql, reason", [
    ("SELECT r.a FROM db.r AS r WHERE r.a > 0 OR EXISTS (SELECT * FROM db.s AS s WHERE s.b = r.b)",
     "AND-ed at the top of WHERE"),
    ("SELECT r.a, r.b IN (SELECT s.b FROM db.s AS s) AS found FROM db.r AS r", "AND-ed at the top of WHERE"),
    ("SELECT r.a FROM db.r AS r WHERE r.a < (SELECT count_if(s.c > 1) FROM db.s AS s WHERE s.b = r.b)",
     "must be SUM, AVG, MIN or MAX"),
    ("SELECT r.a FROM db.r AS r WHERE r.a < (SELECT count(*) FILTER (WHERE s.c > 1) FROM db.s AS s WHERE s.b = r.b)",
     "must be SUM, AVG, MIN or MAX"),
    ("SELECT r.a FROM db.r AS r WHERE r.a < (SELECT count(*) + s.b FROM db.s AS s WHERE s.b = r.b)",
     "must be SUM, AVG, MIN or MAX"),
    ("SELECT r.a FROM db.r AS r WHERE 0 < (SELECT count(*) FROM db.s AS s WHERE s.b = r.b OR s.c = r.a)",
     "by equalities"),
    ("SELECT r.a FROM db.r AS r WHERE r.a < (SELECT max(s.c) FROM db.s AS s WHERE s.b > r.b)", "by equalities"),
    ("SELECT r.b, sum(r.a) + (SELECT max(s.c) FROM db.s AS s) AS x FROM db.r AS r GROUP BY r.b",
     "SELECT list of an aggregate query"),
    ("SELECT r.b, sum(r.a) AS x FROM db.r AS r GROUP BY r.b HAVING sum(r.a) > (SELECT avg(s.c) FROM db.s AS s "
     "WHERE s.b = r.b)", "correlated subquery in HAVING"),
    ("SELECT r.a FROM db.r AS r WHERE EXISTS (SELECT s.b FROM db.s AS s WHERE s.b = r.b GROUP BY s.b)",
     "correlated subquery with GROUP"),
    ("SELECT r.a FROM db.r AS r WHERE r.a IN (SELECT s.c + r.b FROM db.s AS s)", "outside the subquery's WHERE"),
    ("SELECT r.a FROM db.r AS r WHERE EXISTS (SELECT 1 FROM db.s AS s WHERE s.b = r.b LIMIT 1)", "LIMIT"),
    ("SELECT r.a FROM db.r AS r WHERE EXISTS "
     "(SELECT 1 FROM db.s AS s WHERE EXISTS (SELECT 1 FROM db.t AS t WHERE t.c = r.a))", "two or more levels out"),
])
def test_other_subqueries_are_refused_with_the_construct(sql, reason):
    with pytest.raises(UnsupportedSql) as e:
        compile_model(sql, SCHEMAS)
    assert reason in str(e.value), e.value


@pytest.mark.parametrize("sql, aggregates", [
    # TPC-H Q18's shape: the subquery's groups, the outer aggregate — no presence counts per row of r
    ("SELECT r.a, sum(r.b) AS x FROM db.r AS r WHERE r.a IN "
     "(SELECT s.b FROM db.s AS s GROUP BY s.b HAVING sum(s.c) > 1) GROUP BY r.a", 2),
    ("SELECT r.a, r.b FROM db.r AS r WHERE r.b IN (SELECT DISTINCT s.c FROM db.s AS s)", 1),
    # rows may repeat (a key not selected), or correlated: the semi join keeps its counts
    ("SELECT r.a FROM db.r AS r WHERE r.a IN (SELECT t.c FROM db.t AS t GROUP BY t.c, t.d)", 2),
    ("SELECT r.a FROM db.r AS r WHERE r.a IN (SELECT s.c FROM db.s AS s)", 1),
])
def test_in_over_distinct_rows_is_an_inner_join(sql, aggregates):
    """An uncorrelated IN whose subquery's rows are distinct matches each outer row at most once:
    maintained as an inner join, without a state of presence counts per outer row (TPC-H Q18's
    kept one per line of customer ⋈ orders ⋈ lineitem: 6 M rows at SF 1)."""
    assert len(compile_model(sql, SCHEMAS).aggregates) == aggregates


# rows of r whose value several rows of the subquery hold (t: c = 1 with two values of d; s: b = 1
# twice, summing to 4), and NULLs on both sides
REPEATS = {"db.r": {(1, 1): 2, (2, None): 1, (None, 1): 1}, "db.s": {(1, 1): 1, (1, 3): 2, (None, 5): 1},
           "db.t": {(1, 1): 1, (1, 2): 1, (1, None): 1, (None, 2): 1}}


@pytest.mark.parametrize("sql", [q for q in SUBQUERY_QUERIES if " IN (SELECT" in q and "NOT IN" not in q])
def test_in_keeps_each_row_once_when_the_subquery_repeats_its_value(sql):
    """Each row of r is kept once however many rows of the subquery hold its value (on data made
    for it: hypothesis seldom draws a value repeated in the subquery and held by r)."""
    props.test_plan_matches_duckdb_on_bags.hypothesis.inner_test(sql, REPEATS)


@pytest.mark.parametrize("condition, factored", [
    ("(s.b = r.b AND s.c > 1) OR (s.b = r.b AND s.c IS NULL)", ["s.b = r.b", "((s.c > 1) OR (s.c IS NULL))"]),
    ("(s.b = r.b AND s.c > 1) OR s.b = r.b", ["s.b = r.b"]),
    ("(s.b = r.b AND s.c > 1 AND s.b > 0) OR (s.c < 0 AND s.b = r.b AND s.b > 0)",
     ["s.b = r.b", "s.b > 0", "((s.c > 1) OR (s.c < 0))"]),
    ("(s.b = r.b AND s.c > 1) OR (s.b = r.a AND s.c > 1)", ["s.c > 1", "((s.b = r.b) OR (s.b = r.a))"]),
    ("s.b = r.b OR s.c > 1", ["s.b = r.b OR s.c > 1"]),
])
def test_terms_every_disjunct_ands_are_taken_out_of_the_or(condition, factored):
    """``(A ∧ X) ∨ (A ∧ Y) = A ∧ (X ∨ Y)`` and ``(A ∧ X) ∨ A = A`` (TPC-DS q41's correlation)."""
    from sqlglot import parse_one

    from ivm_core.subqueries import factored as factor
    assert [c.sql(dialect="spark") for c in factor(parse_one(condition, read="spark"))] == factored
