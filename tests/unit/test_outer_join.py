"""Outer, semi and anti joins (``ivm_core.outer_join``): for random inputs and change batches
(duplicates, NULL keys, deletes that leave a row unmatched, inserts that give it a match), the
change the rules derive equals ``Q(new) − Q(old)`` — run by the in-memory Z-set evaluator and
as the SQL the compiler emits (DuckDB) — and the plan means what the SQL means on bags."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ivm_core.compiler import compile_model
from tests.unit import test_delta_properties as props
from tests.unit.zset_queries import OUTER_JOIN_QUERIES, SCHEMAS, TABLES, bags, outer_join_queries


@settings(max_examples=250, **props.SETTINGS)
@given(props.scenarios(outer_join_queries()))
def test_outer_join_delta_in_memory(scenario):
    props.test_delta_equals_difference_of_results.hypothesis.inner_test(scenario)


@settings(max_examples=150, **props.SETTINGS)
@given(props.scenarios(outer_join_queries()))
def test_outer_join_delta_over_filtered_indexes(scenario):
    props.test_delta_over_filtered_join_indexes.hypothesis.inner_test(scenario)


@settings(max_examples=150, **props.SETTINGS)
@given(props.scenarios(outer_join_queries()), props.STAGING, st.booleans())
def test_outer_join_generated_sql(scenario, staged, rewrite):
    props.test_generated_sql_computes_the_delta_and_the_new_state.hypothesis.inner_test(scenario, staged, rewrite)


@settings(max_examples=150, deadline=None)
@given(outer_join_queries(), st.fixed_dictionaries({k: bags(len(c)) for k, c in TABLES.items()}))
def test_outer_join_plan_matches_duckdb(sql, data):
    props.test_plan_matches_duckdb_on_bags.hypothesis.inner_test(sql, data)


@pytest.mark.parametrize("sql", OUTER_JOIN_QUERIES)
def test_every_outer_join_query_compiles(sql):
    compile_model(sql, SCHEMAS)
