"""Property tests: for random models, inputs and change batches, the derived change equals
``Q(new) − Q(old)``, and ``Q`` itself equals an independent SQL engine's answer on bags."""

from __future__ import annotations

import sqlite3

import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ivm_core.compiler import compile_model
from ivm_core.plan import Version
from ivm_core.zset import add, evaluate, scans_at, versioned_leaf, zset
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
