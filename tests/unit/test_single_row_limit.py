"""``LIMIT`` without ``ORDER BY`` over a result of at most one row (``ivm_core.single_row_limit``:
TPC-DS q28, q32, q38, q97's shapes): for random inputs with duplicates and NULLs and change
batches, the change the rules derive equals ``Q(new) − Q(old)`` — run by the in-memory Z-set
evaluator and as the SQL the compiler emits (DuckDB) — and the plan means what the SQL means
(DuckDB runs the model's SQL, its LIMIT and OFFSET included). A LIMIT over rows that may be
several keeps its fallback reason."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ivm_core.compiler import compile_model
from ivm_core.errors import UnsupportedSql
from ivm_core.plan import Filter
from tests.unit import test_delta_properties as props
from tests.unit.zset_queries import SCHEMAS, TABLES, bags

SINGLE_ROW_LIMIT_QUERIES = [
    "SELECT count(*) AS n, sum(r.b) AS s, min(r.a) AS lo FROM db.r AS r WHERE r.a > 0 LIMIT 100",
    "SELECT count(*) AS n, max(r.b) AS m FROM db.r AS r LIMIT 1",
    "SELECT count(*) AS n FROM db.r AS r LIMIT 0",
    "SELECT count(*) AS n, sum(r.a) AS s FROM db.r AS r LIMIT 5 OFFSET 1",
    "SELECT sum(r.a) AS x FROM db.r AS r HAVING count(*) > 1 LIMIT 1",
    "SELECT DISTINCT count(*) AS n FROM db.r AS r WHERE r.b IS NOT NULL LIMIT 2",
    # q28: a cross join of global aggregates
    "SELECT * FROM (SELECT avg(r.a) AS x, count(r.b) AS n, count(DISTINCT r.b) AS d FROM db.r AS r WHERE r.b > 0) "
    "AS b1, (SELECT max(s.c) AS m, count(*) AS k FROM db.s AS s WHERE s.b <= 2) AS b2 LIMIT 100",
    # q32: a global aggregate over a correlated scalar subquery
    "SELECT sum(r.a) AS excess FROM db.r AS r WHERE r.a > (SELECT 2 * avg(s.c) FROM db.s AS s WHERE s.b = r.b) "
    "LIMIT 100",
    # q38: a count of an INTERSECT
    "SELECT count(*) AS n FROM (SELECT DISTINCT r.a FROM db.r AS r INTERSECT SELECT DISTINCT s.c FROM db.s AS s) "
    "AS hot LIMIT 100",
    # q97: sums over a full outer join of distinct rows
    "SELECT sum(CASE WHEN x.a IS NOT NULL AND y.c IS NULL THEN 1 ELSE 0 END) AS only_r, "
    "sum(CASE WHEN x.a IS NULL AND y.c IS NOT NULL THEN 1 ELSE 0 END) AS only_s, "
    "sum(CASE WHEN x.a IS NOT NULL AND y.c IS NOT NULL THEN 1 ELSE 0 END) AS both_ "
    "FROM (SELECT DISTINCT r.a FROM db.r AS r) AS x FULL OUTER JOIN (SELECT DISTINCT s.c FROM db.s AS s) AS y "
    "ON x.a = y.c LIMIT 100",
]
QUERIES = st.sampled_from(SINGLE_ROW_LIMIT_QUERIES)


@settings(max_examples=200, **props.SETTINGS)
@given(props.scenarios(QUERIES))
def test_single_row_limit_delta_in_memory(scenario):
    props.test_delta_equals_difference_of_results.hypothesis.inner_test(scenario)


@settings(max_examples=120, **props.SETTINGS)
@given(props.scenarios(QUERIES), props.STAGING, props.STATE_WRITES)
def test_single_row_limit_generated_sql(scenario, staged, write):
    props.test_generated_sql_computes_the_delta_and_the_new_state.hypothesis.inner_test(scenario, staged, write)


@settings(max_examples=150, deadline=None)
@given(QUERIES, st.fixed_dictionaries({k: bags(len(c)) for k, c in TABLES.items()}))
def test_single_row_limit_plan_matches_duckdb(sql, data):
    props.test_plan_matches_duckdb_on_bags.hypothesis.inner_test(sql, data)


@pytest.mark.parametrize("sql, empty", [(q, " LIMIT 0" in q or " OFFSET 1" in q) for q in SINGLE_ROW_LIMIT_QUERIES])
def test_the_limit_keeps_the_row_or_none(sql, empty):
    """n ≥ 1 and no OFFSET: the plan is the query's without its LIMIT; else no row (σ_false)."""
    plan = compile_model(sql, SCHEMAS).plan
    assert isinstance(plan, Filter) and plan.predicate.sql() == "FALSE" if empty else not isinstance(plan, Filter)


@pytest.mark.parametrize("sql", [
    "SELECT r.a FROM db.r AS r LIMIT 3",
    "SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY r.a LIMIT 3",
    "SELECT count(*) AS n FROM db.r AS r UNION ALL SELECT count(*) AS n FROM db.s AS s LIMIT 1",
    "SELECT x.n, s.c FROM (SELECT count(*) AS n FROM db.r AS r) AS x, db.s AS s LIMIT 1",
    "SELECT x.n, y.c FROM (SELECT count(*) AS n FROM db.r AS r) AS x LEFT JOIN db.s AS y ON x.n = y.b LIMIT 1",
    "SELECT count(*) AS n FROM db.r AS r LIMIT 1 + 1",
])
def test_a_limit_over_rows_that_may_be_several_is_refused(sql):
    with pytest.raises(UnsupportedSql) as e:
        compile_model(sql, SCHEMAS)
    assert "LIMIT in a SELECT depends on row order" in str(e.value), e.value
