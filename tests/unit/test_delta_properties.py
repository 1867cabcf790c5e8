"""Property tests: for random models, inputs and change batches, the change the delta rules
derive equals ``Q(new) − Q(old)``, computed naively (every aggregate recomputed from its
definition). The rules run twice: on in-memory Z-sets (``ivm_core.zset``, where the aggregation
rule runs its own state, fold and read-back) and as the SQL the compiler emits, executed by
DuckDB. Both also check that adding the change to the aggregate states gives the states of the
new inputs. ``Q`` itself is checked against DuckDB's answer on bags."""

from __future__ import annotations

import re
from collections import Counter

import duckdb
import pytest
import sqlglot
from sqlglot import exp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ivm_core.compiler import Program, compile_model
from ivm_core.errors import IRREGULAR_GROUP
from ivm_core.grouping_sets import expand
from ivm_core.plan import Empty, Join, Version, WindowResult, at_version, scans, walk
from ivm_core.rules import differentiate
from ivm_core.rules.aggregate import memory
from ivm_core.rules.aggregate.held import TARGET
from ivm_core.sqlgen import to_sql
from ivm_core.sqltext import quote
from ivm_core.statements import KeyRanges, cut_ranges
from ivm_core.zset import add, eval_expr, evaluate, scans_at, store, versioned_leaf, zset
from tests.unit.duckdb_engine import connect, execute, insert_rows, query
from tests.unit.zset_queries import SCHEMAS, TABLES, aggregate_queries, bags, changes, queries

COLUMNS = {k: v for k, v in TABLES.items()}


def approx(rows: dict) -> dict:
    """A Z-set with its floating-point values at 12 significant digits (variances: the rule's
    moments and SQL's exact value may differ in the last bits), weights summed per row."""
    out: dict = {}
    for row, weight in rows.items():
        key = tuple(float(f"{v:.11e}") if isinstance(v, float) else v for v in row)
        out[key] = out.get(key, 0) + weight
    return {r: w for r, w in out.items() if w}
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
# what a run stages: nothing, or the child changes and aggregate changes a run computing the
# model's output change stages, or those of a run rewriting its target from the aggregate state
# (``stageable_aggregates``, ``stageable_deltas``)
STAGING = st.sampled_from([None, "output", "state"])
# how the state statements write: a MERGE, a rewrite (a small state), a MERGE in two passes (a large one)
STATE_WRITES = st.sampled_from(["merge", "rewrite", "two_pass"])


@st.composite
def scenarios(draw, models=None, only_inserts: bool = False):
    """A model, its inputs before the change, a change of some of them (rows inserted only,
    when ``only_inserts``), and whether Spark reports its SUM/AVG arguments as DOUBLE (the
    values state) or INT (the group state)."""
    sql = draw(queries() if models is None else models)
    old = {k: draw(bags(len(cols))) for k, cols in TABLES.items()}
    changed = draw(st.sets(st.sampled_from(sorted(TABLES)), min_size=0))
    delta = {k: draw(bags(len(TABLES[k]), 4) if only_inserts else changes(old[k], len(TABLES[k]))) for k in changed}
    return sql, old, delta, draw(st.booleans())


def compiled(sql: str, floats: bool) -> Program:
    program = compile_model(sql, SCHEMAS)
    arg, total = ("double", "double") if floats else ("int", "bigint")
    program.bind_types({
        f"{a.id}__{c.name}__{kind}": typ
        for a in program.aggregates for c in a.aggs
        for kind, typ in (("arg", arg), ("sum", total), ("avg", "double"))
    })
    return program


def naive_change(program: Program, leaf) -> dict:
    """``Q(new) − Q(old)``, every aggregate recomputed from its definition."""
    return add(evaluate(scans_at(program.plan, Version.NEW), leaf), evaluate(scans_at(program.plan, Version.OLD), leaf), -1)


def new_inputs(old, delta):
    return {k: add(rows, delta.get(k, {})) for k, rows in old.items()}


def check_in_memory(program: Program, leaf, new_leaf, changed, sql) -> dict:
    """The rules' change on in-memory Z-sets, after checking that it folds every aggregate's
    state into the state of the new inputs."""
    stored = store(program.layouts, leaf)
    expected_states = store(program.layouts, new_leaf)
    for agg_id, layout in program.layouts.items():
        child = differentiate(layout.agg.child, frozenset(changed))
        change = {} if isinstance(child, Empty) else evaluate(child, leaf, stored)
        folded = memory.fold(stored[agg_id], memory.partials(layout, change, stored[agg_id]))
        assert (folded.groups, folded.values) == (expected_states[agg_id].groups, expected_states[agg_id].values), sql
    return evaluate(program.delta_plan(set(changed)), leaf, stored)


@settings(max_examples=600, **SETTINGS)
@given(scenarios())
def test_delta_equals_difference_of_results(scenario):
    sql, old, delta, floats = scenario
    program = compiled(sql, floats)
    leaf = versioned_leaf(old, delta, COLUMNS)
    new_leaf = versioned_leaf(new_inputs(old, delta), {}, COLUMNS)
    assert approx(check_in_memory(program, leaf, new_leaf, set(delta), sql)) == approx(naive_change(program, leaf)), sql


@settings(max_examples=400, **SETTINGS)
@given(scenarios())
def test_delta_over_filtered_join_indexes(scenario):
    """A join index keeps only the rows its input's filters let through (``index_filter``);
    update paths read OLD from it and NEW as it plus the (unfiltered) change, as the refresh
    does, and the change is still exactly ``Q(new) − Q(old)``."""
    sql, old, delta, floats = scenario
    program = compiled(sql, floats)
    indexed, indexed_new = dict(old), new_inputs(old, delta)
    for key, use in program.inputs.items():
        if use.stateful and use.index_filter:
            predicate = sqlglot.parse_one(use.index_filter, read="spark")
            names = TABLES[key]
            for data in (indexed, indexed_new):
                data[key] = {r: w for r, w in data[key].items() if eval_expr(predicate, dict(zip(names, r))) is True}
    change = check_in_memory(
        program, versioned_leaf(indexed, delta, COLUMNS), versioned_leaf(indexed_new, {}, COLUMNS), set(delta), sql
    )
    assert approx(change) == approx(naive_change(program, versioned_leaf(old, delta, COLUMNS))), sql


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


def _load(db, name: str, columns, data: dict, weighted: bool, pieces: bool = False) -> None:
    """``data`` as a table: a row per copy, or (``weighted``) a row and its weight — each row
    split into two pieces and a row of weight 0 added as +2 and −2 when ``pieces`` (a change
    window as users write it, not summed per row)."""
    extra = ", _ivm_weight BIGINT" if weighted else ""
    db.execute(f"CREATE TABLE {name} ({', '.join(c + ' INT' for c in columns)}{extra})")
    rows = [(*row, w) for row, w in data.items()] if weighted else [row for row, w in data.items() for _ in range(w)]
    if pieces:
        split = [(*row, w + 1 if w != -1 else w - 1) for *row, w in rows]
        rows = split + [(*row, -1 if w != -1 else 1) for *row, w in rows] + [(*[7] * len(columns), 2),
                                                                             (*[7] * len(columns), -2)]
    insert_rows(db, name, rows)


@settings(max_examples=300, deadline=None)
@given(queries(), st.fixed_dictionaries({k: bags(len(c)) for k, c in TABLES.items()}))
def test_plan_matches_duckdb_on_bags(sql, data):
    """The analyzer's plan means what the SQL means (checked by another engine)."""
    program = compile_model(sql, SCHEMAS)
    result = evaluate(program.plan, versioned_leaf(data, {}, COLUMNS))
    db = connect()
    db.execute("CREATE SCHEMA db")
    for key, cols in TABLES.items():
        _load(db, key, cols, data[key], weighted=False)
    expected = zset([tuple(r) for r in db.execute(duckdb_sql(sql)).fetchall()])
    assert approx(result) == approx(expected), sql


def duckdb_sql(spark_sql: str) -> str:
    """The query for DuckDB, meaning what it means in Spark: DuckDB's COUNT_IF is NULL over no
    true-or-false value (Spark's is 0), so it is spelled as the COUNT Spark replaces it with;
    DuckDB has no ``GROUP BY … WITH ROLLUP``/``WITH CUBE`` (spelled ``ROLLUP (…)``/``CUBE (…)``),
    and its empty grouping set yields a row over no rows, which Spark's does not (``HAVING
    count(*) > 0``)."""
    def spark_semantics(node):
        if isinstance(node, exp.CountIf):
            return exp.Count(this=exp.If(this=node.this, true=exp.Literal.number(1)))
        group = node.args.get("group") if isinstance(node, exp.Select) else None
        if group is not None and expand(group) is not None:
            for form, kind in (("rollup", exp.Rollup), ("cube", exp.Cube)):
                if group.args.get(form):
                    group.set("expressions", [kind(expressions=list(group.expressions))])
                    group.set(form, None)
            having = node.args.get("having")
            rows = exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(0))
            node.set("having", exp.Having(this=rows if having is None else exp.and_(having.this, rows)))
        return node

    return sqlglot.parse_one(spark_sql, read="spark").transform(spark_semantics).sql(dialect="duckdb")


def test_unchanged_inputs_produce_no_update_path():
    program = compile_model(
        "SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b", SCHEMAS
    )
    assert isinstance(program.delta_plan(set()), Empty)
    only_r = program.delta_plan({"db.r"})
    versions = {(s.input, s.version) for s in scans(only_r)}
    assert versions == {("db.r", Version.DELTA), ("db.s", Version.OLD)}
    assert sum(isinstance(n, Join) for n in walk(only_r)) == 1


def _table(key: str, version: str) -> str:
    return f"{key.replace('.', '_')}_{version}"


def _rows(db, relation: str) -> Counter:
    """The rows of ``relation`` (a struct, which DuckDB returns as a dict, as the tuple of its values)."""
    def frozen(v):
        return tuple(frozen(x) for x in v.values()) if isinstance(v, dict) else v

    return Counter(tuple(frozen(v) for v in r) for r in query(db, f"SELECT * FROM {relation}"))


def _change_ranges(delta: dict[str, dict[tuple, int]]) -> dict[tuple[str, str], KeyRanges]:
    """Per (changed input, column), the ranges of its change's values, cut as a run cuts a
    probe's keys: a MERGE bounded by a group key's ranges (``Program.bounded_keys``) that
    missed a group the change touches would leave the state unlike the one built anew."""
    out = {}
    for key, rows in delta.items():
        for i, column in enumerate(TABLES[key]):
            values = [str(v) for v in sorted({r[i] for r in rows if r[i] is not None})]
            if values:
                out[(key, column)] = KeyRanges("int", tuple(cut_ranges(values[0], values[-1], values, "int")))
    return out


def _load_result(db, program: Program, leaf, name: str) -> None:
    """The model's result (``leaf``: its inputs, as ``zset.versioned_leaf`` gives them) as a
    table named as the model names its columns: the target of a model whose target holds its
    group state (whose columns are integers: its keys, counts and SUMs of integers)."""
    rows = evaluate(scans_at(program.plan, Version.NEW), leaf)
    cols = ", ".join(f"{quote(n)} BIGINT" for n in program.output_names)
    execute(db, f"CREATE TABLE {name} ({cols})")
    insert_rows(db, name, [tuple(row) for row, weight in rows.items() for _ in range(weight)])


def _irregular(program: Program, leaf, version: Version) -> bool:
    """Whether a group of the model's aggregate has a SUM with a NULL value at ``version`` of the
    inputs (``leaf``), by the Z-set evaluator: a group its target row would not determine."""
    top = program.result_from_state()
    assert top is not None
    rows = evaluate(scans_at(top.child, version), leaf)
    args = [top.child.columns.index(c.arg) for c in top.aggs if c.func == "sum"]
    return any(weight > 0 and row[i] is None for row, weight in rows.items() for i in args)


def _load_target(db, program: Program, leaf) -> str:
    """The model's result before the change as its target holds it (a row per copy, named as
    the model names its columns), computed by DuckDB from the plan over the old inputs; the rows
    its env names (``Program.held_result``), which a ``WindowResult``'s change retracts."""
    names = [f"o{i}" for i in range(len(program.plan.columns))]
    old = f"SELECT * FROM ({to_sql(at_version(program.plan, Version.OLD), program.env(leaf))}) AS _ivm_old"
    cols = ", ".join(f"{c} AS {n}" for c, n in zip(program.plan.columns, names))
    execute(db, f"CREATE TABLE target_old AS SELECT {cols} FROM ({old}) AS _o WHERE FALSE")
    copies = [tuple(row) for *row, weight in query(db, old) for _ in range(weight)]
    insert_rows(db, "target_old", copies)
    return program.held_result("target_old", names)


@settings(max_examples=400, **SETTINGS)
# half the models are aggregates, each as likely as any other: every function is drawn often
@given(scenarios(st.one_of(queries(), aggregate_queries())), STAGING, STATE_WRITES)
# both sides of a join change, and the other side's change touches a group (a = 2) outside the
# ranges of r's change of its key (a = 1): the MERGE may not be bounded by them alone
@example(("SELECT r.a, count(*) AS n FROM db.r AS r JOIN db.s AS s ON r.b = s.b GROUP BY r.a",
          {"db.r": {(1, 1): 1, (2, 2): 1}, "db.s": {(1, 0): 1, (2, 0): 1}, "db.t": {}},
          {"db.r": {(1, 1): 1}, "db.s": {(2, 0): -1}}, False), None, "merge")
# joined on the key: each update path's keys are its own input's change values (r's a = 1, s's b = 2)
@example(("SELECT r.a, count(*) AS n FROM db.r AS r JOIN db.s AS s ON r.a = s.b GROUP BY r.a",
          {"db.r": {(1, 1): 1, (2, 2): 1}, "db.s": {(1, 0): 1, (2, 0): 1}, "db.t": {}},
          {"db.r": {(1, 3): 1}, "db.s": {(2, 0): -1}}, False), None, "merge")
# in two passes: a group deleted by the first is not inserted again by the second, a new one is
@example(("SELECT r.a, count(*) AS n, count(DISTINCT r.b) AS d FROM db.r AS r GROUP BY r.a",
          {"db.r": {(1, 1): 1, (2, 2): 1}, "db.s": {}, "db.t": {}},
          {"db.r": {(1, 1): -1, (3, 3): 2, (2, 5): 1}}, False), None, "two_pass")
# two passes, the touched groups staged: a NULL group key is one of them, a MIN's values too
@example(("SELECT r.a, count(*) AS n, min(r.b) AS m FROM db.r AS r GROUP BY r.a",
          {"db.r": {(1, 1): 1, (None, 2): 1, (2, 2): 1}, "db.s": {}, "db.t": {}},
          {"db.r": {(None, 2): -1, (None, 4): 1, (3, 3): 1, (2, 2): -1}}, False), "output", "two_pass")
# ... and a DISTINCT call's crossings read its value state's touched groups: a value (b = 2) that
# another group holds too, one falling to zero, one rising from zero, in a NULL group
@example(("SELECT r.a, count(*) AS n, count(DISTINCT r.b) AS d, sum(DISTINCT r.b) AS s FROM db.r AS r GROUP BY r.a",
          {"db.r": {(1, 2): 1, (2, 2): 2, (None, 3): 1}, "db.s": {}, "db.t": {}},
          {"db.r": {(2, 2): -2, (1, 5): 1, (None, 3): -1, (None, 2): 1}}, False), "output", "two_pass")
# a build's group state reads its DISTINCT call's crossings from the value state built before it
# (a value two rows give one group, a NULL value, a NULL group)
@example(("SELECT r.a, count(DISTINCT s.c) AS d, min(s.c) AS m FROM db.r AS r JOIN db.s AS s ON r.b = s.b GROUP BY r.a",
          {"db.r": {(1, 1): 1, (1, 2): 1, (None, 2): 1}, "db.s": {(1, 3): 1, (2, 3): 2, (2, None): 1}, "db.t": {}},
          {"db.s": {(1, 3): -1, (1, 0): 1}}, False), "output", "merge")
def test_generated_sql_computes_the_delta_and_the_new_state(scenario, staged, write):
    """The SQL text the compiler emits (not only its plan) computes the change, and its state
    statements turn every aggregate state into the state of the new inputs. DuckDB runs it
    (``duckdb_engine``) over the leaf Z-sets as weighted tables: the state builds, the staged
    child changes (when ``staged``), the output change, then the state updates as ``write``
    says: a MERGE, the rewrite of a small state, or a MERGE in two passes (the second reads
    the state as it was before the first, as a run reads it pinned — or, staged, the touched
    groups of the state staged before, which the output change reads too). The change of an
    input only aggregates read is in pieces, as the refresh reads it
    (``Program.unconsolidated_inputs``)."""
    sql, old, delta, floats = scenario
    program = compiled(sql, floats)
    expected = naive_change(program, versioned_leaf(old, delta, COLUMNS))
    db = connect()
    as_is = program.unconsolidated_inputs()
    for key, cols in TABLES.items():
        versions = {"old": old[key], "delta": delta.get(key, {}), "new": add(old[key], delta.get(key, {}))}
        for version, data in versions.items():
            _load(db, _table(key, version), cols, data, weighted=True, pieces=version == "delta" and key in as_is)

    def leaf(scan):
        return _table(scan.input, scan.version.value)

    # a group state the target holds (Layout.held) is read from the target as the last commit
    # left it (the model's result before the change): only while every group is regular — a
    # model whose old inputs have an irregular group keeps its group state apart, and a change
    # that makes one irregular fails computing the change (IRREGULAR_GROUP)
    held = any(program.held_by_target(agg_id) for agg_id in program.layouts)
    if held and _irregular(program, versioned_leaf(old, {}, COLUMNS), Version.OLD):
        for agg_id in [a for a in program.layouts if program.held_by_target(a)]:
            program.keep_groups_apart(agg_id)
        held = False
    made_irregular = held and _irregular(program, versioned_leaf(old, delta, COLUMNS), Version.NEW)

    def state(agg_id: str, name: str) -> str:
        return "held_target_old" if name == TARGET else f"state_{agg_id}__{name}"

    for statement in program.state_builds(leaf, state):
        execute(db, f"CREATE TABLE {state(statement.aggregate, statement.state)} AS\n{statement.sql}")
    if held:
        _load_result(db, program, versioned_leaf(old, {}, COLUMNS), "held_target_old")
    changed = set(delta)
    output_read = staged == "output"
    two_pass = set(program.layouts) if write == "two_pass" else set()
    stage = {a: f"staged_{a}" for a in program.stageable_aggregates(changed, output_read, two_pass)} if staged else {}
    deltas = ({a: f"staged_{a}_change" for a in program.stageable_deltas(changed, stage, output_read)}
              if staged else {})
    target = _load_target(db, program, leaf) if isinstance(program.plan, WindowResult) else None
    # as the refresh's validation finds them: the inputs whose change (as loaded) has no deletes
    inserting_only = frozenset(k for k, d in delta.items() if k not in as_is and all(w > 0 for w in d.values()))
    # two passes: each large state's touched groups staged too, read by the change and the second pass
    touched = {(a, n): f"touched_{a}__{n}" for a, n in program.touched_states(changed, two_pass)} if staged else {}
    env = program.env(leaf, state, stage, target, inserting_only, deltas,
                      program.state_bounds(set(delta), _change_ranges(delta)), touched)
    for statement in program.staged_changes(changed, env):
        names = {"child_change": stage, "change": deltas}
        name = (names[statement.state][statement.aggregate] if statement.state in names
                else touched[(statement.aggregate, statement.state)])
        execute(db, f"CREATE TABLE {name} AS\n{statement.sql}")

    text = program.delta_sql(changed, env)
    if made_irregular:  # computing the change fails, and so does a rebuild's and a small target's rewrite
        top = program.result_from_state()
        assert top is not None and text is not None, sql
        for failing in (text, program.rewritten_result_sql(changed, env, list(program.output_names)),
                        program.built_groups(top.id, lambda scan: _table(scan.input, "new"), state)):
            with pytest.raises(duckdb.Error, match=re.escape(IRREGULAR_GROUP)):
                query(db, failing)
        return
    got: dict[tuple, int] = {}
    for *row, weight in ([] if text is None else query(db, text)):
        got[tuple(row)] = got.get(tuple(row), 0) + weight
    assert approx(got) == approx(expected), sql

    top = program.result_from_state()
    if top is not None and program.held_by_target(top.id) and text is not None:
        # a small target that holds the group state is rewritten as its new result: the state as
        # the last commit left it plus the change (no state is updated yet)
        rewritten: dict[tuple, int] = {}
        for *row, weight in query(db, program.rewritten_result_sql(changed, env, list(program.output_names))):
            rewritten[tuple(row)] = rewritten.get(tuple(row), 0) + weight
        new_result = evaluate(scans_at(program.plan, Version.NEW), versioned_leaf(old, delta, COLUMNS))
        assert rewritten == new_result, sql

    updating = env
    if two_pass:  # the state as the last commit left it, as a run reads it (pinned)
        for agg_id, table in program.state_tables():
            execute(db, f"CREATE TABLE pinned_{state(agg_id, table)} AS SELECT * FROM {state(agg_id, table)}")
        updating = program.env(leaf, lambda agg_id, name: state(agg_id, name) if name == TARGET
                               else f"pinned_{state(agg_id, name)}", stage, target,
                               inserting_only, deltas, program.state_bounds(set(delta), _change_ranges(delta)), touched)
    for statement in program.state_updates(changed, updating, target=state, rewrite=lambda agg_id, name: write == "rewrite",
                                           two_pass=two_pass):
        # a state whose touched groups are staged is not read whole again
        assert not [key for key in touched if f"pinned_{state(*key)}" in statement.sql], (sql, statement.sql)
        execute(db, statement.sql)

    def expected_state(agg_id: str, name: str) -> str:
        return "held_target_new" if name == TARGET else f"expected_{agg_id}__{name}"

    def new_leaf(scan):
        return _table(scan.input, "new")

    if held:  # the target after the change (its own update, by the change, is the run's: not under test here)
        _load_result(db, program, versioned_leaf(old, delta, COLUMNS), "held_target_new")
    for statement in program.state_builds(new_leaf, expected_state):
        execute(db, f"CREATE TABLE {expected_state(statement.aggregate, statement.state)} AS\n{statement.sql}")
    for agg_id in [a for a in program.layouts if program.held_by_target(a)]:
        # the whole group state, read from the new target, is the group state of the new inputs
        # (computed as a rebuild does: the guard does not fire)
        now = program.env(leaf, lambda a, name: "held_target_new" if name == TARGET else state(a, name))
        assert (_rows(db, f"{now.state_table(agg_id, 'groups')} AS _stored")
                == _rows(db, f"({program.built_groups(agg_id, new_leaf, expected_state)}) AS _expected")), (sql, agg_id)
    for agg_id, name in program.state_names():
        table = program.layouts[agg_id].stored(name).table
        if table not in program.layouts[agg_id].tables:  # a group state the target holds whole: checked above
            continue
        stored = f"({program.stored_state(agg_id, name, state(agg_id, table))}) AS _stored"
        expected_rows = f"({program.stored_state(agg_id, name, expected_state(agg_id, table))}) AS _expected"
        assert _rows(db, stored) == _rows(db, expected_rows), (sql, agg_id, name)

    # a model over one aggregate: its result read from the updated state is the new result, and it
    # reads no state but those result_states names (a run checks only their sizes before reading them whole)
    if program.result_from_state() is not None and not held:  # (held: the target is the state)
        read = {(agg_id, program.layouts[agg_id].stored(name).table) for agg_id, name in program.result_states()}

        def result_state(agg_id: str, table: str) -> str:
            assert (agg_id, table) in read, (sql, agg_id, table, read)
            return state(agg_id, table)

        result: dict[tuple, int] = {}
        for *row, weight in query(db, program.result_sql(program.env(leaf, result_state),
                                                         list(program.output_names))):
            result[tuple(row)] = result.get(tuple(row), 0) + weight
        new_result = evaluate(scans_at(program.plan, Version.NEW), versioned_leaf(old, delta, COLUMNS))
        assert approx(result) == approx(new_result), sql


@st.composite
def keyed_queries(draw) -> str:
    """Models whose target is sorted by a join key passed through (``Program.target_key``):
    joins, with or without an aggregate grouped by the key, under filters and HAVING."""
    where = draw(st.sampled_from(["", " WHERE r.b > 0", " WHERE s.c IS NOT NULL", " WHERE coalesce(r.b, 0) <> 2"]))
    pair = "FROM db.r AS r JOIN db.s AS s ON r.a = s.b"
    chain = "FROM db.r AS r JOIN db.s AS s ON r.b = s.b JOIN db.t AS t ON s.c = t.c"
    key2, key3 = draw(st.sampled_from(["r.a", "s.b"])), draw(st.sampled_from(["r.b", "s.b", "s.c", "t.c"]))
    having = draw(st.sampled_from(["", " HAVING count(*) > 1", " HAVING sum(r.b) <> 1"]))
    return draw(st.sampled_from([
        f"SELECT {key2}, count(*) AS n, sum(s.c) AS x {pair}{where} GROUP BY {key2}{having}",
        f"SELECT {key2}, r.b, s.c {pair}{where}",
        f"SELECT DISTINCT {key2}, s.c {pair}{where}",
        f"SELECT {key3}, t.d {chain}{where}",
        f"SELECT {key3}, count(*) AS n, max(t.d) AS m {chain}{where} GROUP BY {key3}{having}",
    ]))


@st.composite
def keyed_scenarios(draw):
    """``scenarios`` of ``keyed_queries`` — or, one in four, of any model — whose change is to
    one or more of the inputs the model reads."""
    sql = draw(st.one_of(keyed_queries(), keyed_queries(), keyed_queries(), queries(), aggregate_queries()))
    old = {k: draw(bags(len(cols))) for k, cols in TABLES.items()}
    read = sorted(k for k in TABLES if k in sql)
    changed = draw(st.sets(st.sampled_from(read), min_size=1)) if read else set()
    delta = {k: draw(changes(old[k], len(TABLES[k]))) for k in changed}
    return sql, old, delta, draw(st.booleans())


@settings(max_examples=400, **SETTINGS)
@given(keyed_scenarios())
# both sides change, each within its own key values: the bound is the union of both inputs' ranges
@example(("SELECT r.a, count(*) AS n FROM db.r AS r JOIN db.s AS s ON r.a = s.b GROUP BY r.a",
          {"db.r": {(1, 1): 1, (3, 2): 1}, "db.s": {(1, 0): 1, (3, 0): 1}, "db.t": {}},
          {"db.r": {(1, 1): -1}, "db.s": {(3, 0): 1}}, False))
# a join without an aggregate: its rows' key is the changed input's key, or the other's it equals
@example(("SELECT s.b, r.a FROM db.r AS r JOIN db.s AS s ON r.b = s.b",
          {"db.r": {(1, 1): 1, (2, 3): 1}, "db.s": {(1, 0): 1, (3, 0): 1}, "db.t": {}},
          {"db.s": {(3, 0): -1, (1, 2): 1}}, False))
def test_the_result_bound_holds_every_row_of_the_change(scenario):
    """``Program.result_bound``: every row the change adds to or removes from the model's result
    has the target's sort column within the ranges the bound states (or NULL) — the rows outside
    are the same before and after, so a diff of the target read only within them counts every
    row the whole diff does. Checked against ``Q(new) − Q(old)`` computed naively."""
    sql, old, delta, floats = scenario
    program = compiled(sql, floats)
    bound = program.result_bound(set(delta), _change_ranges(delta))
    if bound is None:
        return
    position, ranges = bound
    for row, weight in naive_change(program, versioned_leaf(old, delta, COLUMNS)).items():
        value = row[position]
        assert not weight or value is None or any(int(lo) <= value <= int(hi) for lo, hi in ranges.ranges), (
            sql, row, weight, ranges)


def test_a_result_bound_is_found_for_a_join_key_and_not_for_a_top_k():
    """The bound is stated where the target is sorted by a join key (the union of the changed
    inputs' ranges) and never for a top-k model, whose kept rows a change may move anywhere."""
    ranges = {("db.r", "a"): KeyRanges("int", (("1", "1"),)), ("db.s", "b"): KeyRanges("int", (("3", "3"),))}
    grouped = compile_model("SELECT r.a, count(*) AS n FROM db.r AS r JOIN db.s AS s ON r.a = s.b GROUP BY r.a",
                            SCHEMAS)
    assert grouped.result_bound({"db.r", "db.s"}, ranges) == (0, KeyRanges("int", (("1", "1"), ("3", "3"))))
    assert grouped.result_bound({"db.r", "db.s"}, {("db.r", "a"): ranges[("db.r", "a")]}) is None
    top = compile_model("SELECT r.a, r.b FROM db.r AS r JOIN db.s AS s ON r.a = s.b ORDER BY r.b LIMIT 2", SCHEMAS)
    assert top.result_bound({"db.r", "db.s"}, ranges) is None
