"""Property tests: for random models, inputs and change batches, the derived change equals
``Q(new) − Q(old)``, and ``Q`` itself equals an independent SQL engine's answer on bags."""

from __future__ import annotations

import sqlite3

import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ivm_core.compiler import compile_model
from ivm_core.plan import Version
from ivm_core.zset import add, eval_expr, evaluate, scans_at, versioned_leaf, zset
from tests.unit.zset_queries import NOT_IN_SQLITE, SCHEMAS, TABLES, bags, changes, queries

COLUMNS = {k: v for k, v in TABLES.items()}


@st.composite
def scenarios(draw):
    sql = draw(queries())
    old = {k: draw(bags(len(cols))) for k, cols in TABLES.items()}
    changed = draw(st.sets(st.sampled_from(sorted(TABLES)), min_size=0))
    delta = {k: draw(changes(old[k], len(TABLES[k]))) for k in changed}
    return sql, old, delta


def _output(program, plan, leaf):
    """Evaluate and re-key rows by output position (internal names differ between plans)."""
    return evaluate(plan, leaf)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_delta_equals_difference_of_results(scenario):
    sql, old, delta = scenario
    program = compile_model(sql, SCHEMAS)
    leaf = versioned_leaf(old, delta, COLUMNS)
    before = evaluate(scans_at(program.plan, Version.OLD), leaf)
    after = evaluate(scans_at(program.plan, Version.NEW), leaf)
    change = evaluate(program.delta_plan(set(delta)), leaf)
    assert change == add(after, before, sign=-1), sql


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_delta_over_filtered_join_indexes(scenario):
    """A join index keeps only the rows its input's filters let through (``index_filter``);
    update paths read OLD from it and NEW as it plus the (unfiltered) change, as the refresh
    does, and the change is still exactly ``Q(new) − Q(old)``."""
    sql, old, delta = scenario
    program = compile_model(sql, SCHEMAS)
    indexed = dict(old)
    for key, use in program.inputs.items():
        if use.stateful and use.index_filter:
            predicate = sqlglot.parse_one(use.index_filter, read="spark")
            names = TABLES[key]
            indexed[key] = {r: w for r, w in old[key].items() if eval_expr(predicate, dict(zip(names, r))) is True}
    leaf = versioned_leaf(old, delta, COLUMNS)
    before = evaluate(scans_at(program.plan, Version.OLD), leaf)
    after = evaluate(scans_at(program.plan, Version.NEW), leaf)
    change = evaluate(program.delta_plan(set(delta)), versioned_leaf(indexed, delta, COLUMNS))
    assert change == add(after, before, sign=-1), sql


def test_filtered_inputs_get_index_filters():
    program = compile_model(
        "SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b WHERE r.a > 1 AND s.c IS NOT NULL", SCHEMAS
    )
    assert program.inputs["db.r"].index_filter == "`a` > 1"
    assert program.inputs["db.s"].index_filter == "NOT `c` IS NULL"
    self_join = compile_model(
        "SELECT x.a, y.a AS a2 FROM db.r AS x JOIN db.r AS y ON x.b = y.b WHERE x.a = 1", SCHEMAS
    )
    assert self_join.inputs["db.r"].index_filter is None  # one of its scans reads every row


@settings(max_examples=300, deadline=None)
@given(queries(), st.fixed_dictionaries({k: bags(len(c)) for k, c in TABLES.items()}))
def test_plan_matches_sqlite_on_bags(sql, data):
    """The analyzer's plan means what the SQL means (checked by another engine)."""
    if any(op in sql for op in NOT_IN_SQLITE):
        return
    program = compile_model(sql, SCHEMAS)
    result = evaluate(program.plan, versioned_leaf(data, {}, COLUMNS))
    db = sqlite3.connect(":memory:")
    db.execute("ATTACH ':memory:' AS db")
    for key, cols in TABLES.items():
        db.execute(f"CREATE TABLE {key} ({', '.join(cols)})")
        for row, weight in data[key].items():
            for _ in range(weight):
                db.execute(f"INSERT INTO {key} VALUES ({', '.join('?' * len(cols))})", row)
    lite = sqlglot.transpile(sql, read="spark", write="sqlite")[0]
    expected = zset([tuple(r) for r in db.execute(lite).fetchall()])
    assert result == expected, sql


def test_unchanged_inputs_produce_no_update_path():
    program = compile_model(
        "SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b", SCHEMAS
    )
    from ivm_core.plan import Empty, Join, scans

    assert isinstance(program.delta_plan(set()), Empty)
    only_r = program.delta_plan({"db.r"})
    versions = {(s.input, s.version) for s in scans(only_r)}
    assert versions == {("db.r", Version.DELTA), ("db.s", Version.OLD)}
    assert sum(isinstance(n, Join) for n in __import__("ivm_core.plan", fromlist=["walk"]).walk(only_r)) == 1


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_generated_delta_sql_computes_the_delta(scenario):
    """The SQL text the compiler emits (not only its plan) computes the change: it is run by
    sqlite, transpiled from Spark SQL by sqlglot, over the leaf Z-sets as weighted tables."""
    sql, old, delta = scenario
    program = compile_model(sql, SCHEMAS)
    if program.aggregates:
        return  # aggregate SQL uses Spark-only functions: it is checked against Spark itself
    leaf = versioned_leaf(old, delta, COLUMNS)
    expected = evaluate(program.delta_plan(set(delta)), leaf)
    text = program.delta_sql(set(delta), lambda scan: f"{scan.input.replace('.', '_')}_{scan.version.value}")
    if text is None:
        assert expected == {}
        return
    db = sqlite3.connect(":memory:")
    for key, cols in TABLES.items():
        new = add(old[key], delta.get(key, {}))
        for version, data in (("old", old[key]), ("delta", delta.get(key, {})), ("new", new)):
            name = f"{key.replace('.', '_')}_{version}"
            db.execute(f"CREATE TABLE {name} ({', '.join(cols)}, _ivm_weight)")
            for row, weight in data.items():
                db.execute(f"INSERT INTO {name} VALUES ({', '.join('?' * (len(cols) + 1))})", (*row, weight))
    lite = sqlglot.transpile(text, read="spark", write="sqlite")[0]
    got: dict[tuple, int] = {}
    for *row, weight in db.execute(lite).fetchall():
        got[tuple(row)] = got.get(tuple(row), 0) + weight
    assert {r: w for r, w in got.items() if w} == expected, sql
