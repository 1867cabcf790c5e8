"""COUNT_IF, BOOL_AND, BOOL_OR, VAR_POP, VAR_SAMP (VARIANCE), STDDEV_POP, STDDEV_SAMP (STDDEV), AVG(DISTINCT): the
property checks of every aggregate, over models drawn from these alone (``zset_queries``'s
"statistics" shape), so each runs often: the rule in memory and as generated SQL (DuckDB) against
``Q(new) − Q(old)`` with every value recomputed from its definition (the variances exactly, in
fractions), and the plan against DuckDB on bags."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ivm_core.compiler import compile_model
from ivm_core.errors import UnsupportedSql
from tests.unit import test_delta_properties as props
from tests.unit.zset_queries import AGGREGATE_QUERIES, SCHEMAS, TABLES, bags

STATISTICS = st.sampled_from(AGGREGATE_QUERIES["statistics"])


@settings(max_examples=150, **props.SETTINGS)
@given(props.scenarios(STATISTICS))
def test_statistics_delta_in_memory(scenario):
    props.test_delta_equals_difference_of_results.hypothesis.inner_test(scenario)


@settings(max_examples=150, **props.SETTINGS)
@given(props.scenarios(STATISTICS), props.STAGING, st.booleans())
def test_statistics_generated_sql(scenario, staged, rewrite):
    props.test_generated_sql_computes_the_delta_and_the_new_state.hypothesis.inner_test(scenario, staged, rewrite)


@settings(max_examples=100, deadline=None)
@given(STATISTICS, st.fixed_dictionaries({k: bags(len(c)) for k, c in TABLES.items()}))
def test_statistics_plan_matches_duckdb(sql, data):
    props.test_plan_matches_duckdb_on_bags.hypothesis.inner_test(sql, data)


@pytest.mark.parametrize("call", ["var_pop(DISTINCT r.b)", "stddev(DISTINCT r.b)", "std(DISTINCT r.b)",
                                  "some(r.b > 0, r.a > 0)", "collect_list(r.b)"])
def test_other_forms_are_refused(call):
    with pytest.raises(UnsupportedSql):
        compile_model(f"SELECT r.a, {call} AS x FROM db.r AS r GROUP BY r.a", SCHEMAS)
