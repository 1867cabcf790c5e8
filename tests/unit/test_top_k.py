"""Top-k (``ivm_core.top_k``): for random models ending in ``ORDER BY … LIMIT k [OFFSET n]``,
inputs with duplicates and NULLs and change batches, the SQL the compiler emits — the states
updated with the change, then the top rows read from them (DuckDB) — is a valid top of the new
pre-limit result ``P(new)`` (evaluated in memory): its ORDER BY keys are those of the places
n+1 … n+k of ``P(new)`` sorted, and each of its rows is a row of ``P(new)``. DuckDB's own answer to
the model's SQL passes the same check against the resolved ORDER BY (the resolution of names,
aliases and positions means what SQL means), and ``violations`` — the SQL the correctness tests
run — finds nothing in a valid top and finds a wrong one."""

from __future__ import annotations

from collections import Counter

import pytest
import sqlglot
from sqlglot import exp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ivm_core.compiler import Program, compile_model
from ivm_core.errors import UnsupportedSql
from ivm_core.plan import Version
from ivm_core.top_k import PLACE, TopK
from ivm_core.zset import add, eval_expr, evaluate, scans_at, versioned_leaf
from tests.unit import test_delta_properties as props
from tests.unit.duckdb_engine import connect, execute, insert_rows, query
from tests.unit.zset_queries import SCHEMAS, TABLES, aggregate_queries, bags, changes, queries


@st.composite
def top_k_queries(draw) -> str:
    """A random model with an ORDER BY over some of its output columns (by position or name,
    ascending or descending, NULLs first or last) and a LIMIT, maybe an OFFSET."""
    sql = draw(st.one_of(queries(), aggregate_queries()))
    names = compile_model(sql, SCHEMAS).output_names
    # a model's target is a table: Spark refuses two columns of one name (and the top rows are
    # selected by name)
    assume(len({n.lower() for n in names}) == len(names))
    positions = draw(st.lists(st.integers(0, len(names) - 1), min_size=1, max_size=len(names), unique=True))
    items = []
    # names an expression can read, of numbers (not BOOL_AND's booleans): (x - y, -x need them)
    tree = sqlglot.parse_one(sql, read="spark")
    selects = tree.selects if isinstance(tree, exp.Select) else []
    named = [n for i, n in enumerate(names) if n.isidentifier() and not (i < len(selects) and isinstance(
        selects[i].unalias(), (exp.LogicalAnd, exp.LogicalOr, exp.Predicate, exp.Boolean)))]
    for i in positions:
        unique_name = sum(n.lower() == names[i].lower() for n in names) == 1
        ref = names[i] if unique_name and draw(st.booleans()) else str(i + 1)
        if named and draw(st.integers(0, 3)) == 0:  # an expression over output columns (q36, q47)
            x, y = draw(st.sampled_from(named)), draw(st.sampled_from(named))
            ref = draw(st.sampled_from([f"{x} - {y}", f"-{x}", f"CASE WHEN {x} = 1 THEN {y} END",
                                        f"coalesce({x}, 0) * 2 + {y}"]))
        direction = draw(st.sampled_from(["", " ASC", " DESC"]))
        nulls = draw(st.sampled_from(["", " NULLS FIRST", " NULLS LAST"]))
        items.append(ref + direction + nulls)
    offset = draw(st.sampled_from(["", " OFFSET 1", " OFFSET 2"]))
    return f"{sql} ORDER BY {', '.join(items)} LIMIT {draw(st.integers(0, 4))}{offset}"


def _sort_key(row: tuple, top: TopK) -> tuple:
    parts = []
    for key in top.keys:
        value = row[key.position] if key.expression is None else eval_expr(
            key.expression, {f"{PLACE}{i}": v for i, v in enumerate(row)})
        null_place = (0 if key.nulls_first else 1) if value is None else (1 if key.nulls_first else 0)
        parts.append((null_place, 0 if value is None else (-value if key.descending else value)))
    return tuple(parts)


def assert_valid_top(rows: Counter, ranked: dict[tuple, int], top: TopK, what: str) -> None:
    """``rows`` is a valid choice of the places offset+1 … offset+limit of the bag ``ranked``."""
    ordered = sorted((r for r, w in ranked.items() for _ in range(w)), key=lambda r: _sort_key(r, top))
    wanted = ordered[top.offset:top.offset + top.limit]
    assert Counter(_sort_key(r, top) for r in rows.elements()) == Counter(_sort_key(r, top) for r in wanted), (
        what, sorted(rows.elements(), key=repr), wanted)
    assert all(ranked.get(r, 0) >= n for r, n in rows.items()), (what, rows, ranked)


def _sorted_over_the_outputs(duckdb_sql: str) -> str:
    """A model sorted by an expression with its ORDER BY … LIMIT moved to a query over its rows,
    where every name is an output column: DuckDB sorts a UNION by its columns only, and binds a
    name in an expression to an input column where Spark binds it to the output column first
    (positions and plain names are left to DuckDB's own resolution)."""
    tree = sqlglot.parse_one(duckdb_sql, read="duckdb")
    order = tree.args.get("order")
    if order is None or all(isinstance(o.this, (exp.Column, exp.Literal)) for o in order.expressions):
        return duckdb_sql
    inner = tree.copy()
    for arg in ("order", "limit", "offset"):
        inner.set(arg, None)
    outer = exp.select("*").from_(exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("u"))))
    for arg in ("order", "limit", "offset"):
        outer.set(arg, tree.args.get(arg))
    return outer.sql(dialect="duckdb")


def _states_after_change(program: Program, old, delta, db):
    """Load the inputs, build every state from the old ones, add the change: the refresh's SQL."""
    for key, cols in TABLES.items():
        versions = {"old": old[key], "delta": delta.get(key, {}), "new": add(old[key], delta.get(key, {}))}
        for version, data in versions.items():
            props._load(db, props._table(key, version), cols, data, weighted=True)

    def leaf(scan):
        return props._table(scan.input, scan.version.value)

    def state(agg_id: str, name: str) -> str:
        return f"state_{agg_id}__{name}"

    for statement in program.state_builds(leaf, state):
        execute(db, f"CREATE TABLE {state(statement.aggregate, statement.state)} AS\n{statement.sql}")
    env = program.env(leaf, state)
    for statement in program.state_updates(set(delta), env):
        execute(db, statement.sql)
    return env


@settings(max_examples=200, **props.SETTINGS)
@given(props.scenarios(top_k_queries()))
def test_top_rows_read_from_the_updated_state_are_a_valid_top(scenario):
    sql, old, delta, floats = scenario
    program = props.compiled(sql, floats)
    assert program.top_k is not None and program.result_from_state() is not None
    db = connect()
    env = _states_after_change(program, old, delta, db)
    got: Counter = Counter()
    for *row, weight in query(db, program.result_sql(env, list(program.output_names))):
        assert weight == 1
        got.update(props.approx({tuple(row): 1}))  # a variance: the reference's is exact
    ranked = props.approx(evaluate(scans_at(program.plan, Version.NEW), versioned_leaf(old, delta, props.COLUMNS)))
    assert_valid_top(got, ranked, program.top_k, sql)


@settings(max_examples=150, deadline=None)
@given(top_k_queries(), st.fixed_dictionaries({k: bags(len(c)) for k, c in TABLES.items()}))
def test_the_resolved_order_means_what_sql_means(sql, data):
    """DuckDB runs the model's SQL itself; its rows are a valid top under the ORDER BY as
    ``top_k`` resolved it (a wrong position or direction fails this)."""
    program = compile_model(sql, SCHEMAS)
    db = connect()
    db.execute("CREATE SCHEMA db")
    for key, cols in TABLES.items():
        props._load(db, key, cols, data[key], weighted=False)
    duck = Counter()
    for r in db.execute(_sorted_over_the_outputs(props.duckdb_sql(sql))).fetchall():
        duck.update(props.approx({tuple(r): 1}))
    ranked = props.approx(evaluate(program.plan, versioned_leaf(data, {}, props.COLUMNS)))
    assert program.top_k is not None
    assert_valid_top(duck, ranked, program.top_k, sql)


@settings(max_examples=100, deadline=None)
@given(top_k_queries(), st.fixed_dictionaries({k: bags(len(c)) for k, c in TABLES.items()}), st.data())
def test_violations_accept_a_valid_top_and_find_a_wrong_one(sql, data, draw):
    program = compile_model(sql, SCHEMAS)
    top, names = program.top_k, list(program.output_names)
    assert top is not None
    assume(len(set(n.lower() for n in names)) == len(names))
    ranked = evaluate(program.plan, versioned_leaf(data, {}, props.COLUMNS))
    ordered = sorted((r for r, w in ranked.items() for _ in range(w)), key=lambda r: _sort_key(r, top))
    valid = ordered[top.offset:top.offset + top.limit]
    db = connect()
    # DOUBLE: the evaluator's values include the float results of AVG, VAR_POP, ... (an INT
    # column would round 0.25 to 0 and make two different rows tie)
    columns = ", ".join(f"{n} DOUBLE" for n in names)
    db.execute(f"CREATE TABLE p ({columns})")
    db.execute(f"CREATE TABLE t ({columns})")
    rows = valid
    wrong = draw.draw(st.sampled_from(["none", "drop", "add", "swap"]))
    if wrong == "drop" and valid:
        rows = valid[1:]
    elif wrong == "add":
        rows = valid + [tuple(9 for _ in names)]
    elif wrong == "swap" and len(ordered) > top.offset + top.limit and valid:
        # a row past the limit whose ORDER BY key differs from the last kept row's
        late = ordered[-1]
        assume(_sort_key(late, top) != _sort_key(valid[-1], top))
        rows = valid[:-1] + [late]
    else:
        wrong = "none"
    for table, content in (("p", ordered), ("t", rows)):
        insert_rows(db, table, content)
    found = query(db, top.violations("t", "SELECT * FROM p", names))
    assert (found == []) == (wrong == "none"), (sql, wrong, rows, found)


def test_tpch_order_by_is_resolved_to_output_columns():
    program = compile_model(
        "SELECT r.b AS k, sum(r.a) AS total, count(*) AS n FROM db.r AS r GROUP BY r.b "
        "ORDER BY total DESC, 1 NULLS LAST, r.b LIMIT 10 OFFSET 5", SCHEMAS)
    assert program.top_k is not None
    assert [(k.position, k.descending, k.nulls_first) for k in program.top_k.keys] == [
        (1, True, False), (0, False, False), (0, False, True)]
    assert (program.top_k.limit, program.top_k.offset) == (10, 5)
    assert len(program.layouts) == 1  # the aggregate's state is the state of the ranked rows


def test_a_top_k_over_rows_keeps_them_as_a_bag_state():
    program = compile_model("SELECT r.a, s.c FROM db.r AS r JOIN db.s AS s ON r.b = s.b ORDER BY 2 LIMIT 3",
                            SCHEMAS)
    (layout,) = program.layouts.values()
    assert layout.agg.keys == program.plan.children[0].children[0].columns


@pytest.mark.parametrize("sql, reason", [
    ("SELECT r.a FROM db.r AS r LIMIT 3", "LIMIT in a SELECT depends on row order"),
    ("SELECT r.a FROM db.r AS r ORDER BY r.b LIMIT 3", "must name a column of the SELECT list"),
    ("SELECT r.a FROM db.r AS r ORDER BY r.b + 1 LIMIT 3", "or be an expression over such columns"),
    ("SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY r.a ORDER BY sum(r.b) LIMIT 3", "expression over such"),
    ("SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY r.a ORDER BY n + max(r.b) LIMIT 3", "expression over such"),
    ("SELECT r.a AS x, r.b AS x FROM db.r AS r ORDER BY x + 1 LIMIT 3", "expression over such"),
    ("SELECT r.a FROM db.r AS r ORDER BY 2 LIMIT 3", "position 2 is not in the SELECT list"),
    ("SELECT r.a FROM db.r AS r ORDER BY 1 LIMIT 1 + 1", "literal row count"),
    ("SELECT q.a FROM (SELECT r.a FROM db.r AS r ORDER BY r.a LIMIT 2) AS q", "LIMIT in a SELECT"),
])
def test_other_limits_are_refused_with_the_construct(sql, reason):
    with pytest.raises(UnsupportedSql) as e:
        compile_model(sql, SCHEMAS)
    assert reason in str(e.value), e.value


@pytest.mark.parametrize("sql, order", [
    # TPC-DS q47/q57: ORDER BY a difference of two output columns, then a column
    ("SELECT r.a, sum(r.b) AS sum_sales, avg(r.b) AS avg_monthly_sales FROM db.r AS r GROUP BY r.a "
     "ORDER BY sum_sales - avg_monthly_sales, r.a LIMIT 100",
     "(`sum_sales` - `avg_monthly_sales`) ASC NULLS FIRST, `a` ASC NULLS FIRST"),
    # q36/q70/q86: a CASE over output columns, an input column read as the output that selects it
    ("SELECT r.a AS lochierarchy, r.b FROM db.r AS r ORDER BY lochierarchy DESC, "
     "CASE WHEN lochierarchy = 0 THEN r.b END LIMIT 100",
     "`lochierarchy` DESC NULLS LAST, (CASE WHEN `lochierarchy` = 0 THEN `b` END) ASC NULLS FIRST"),
    # an alias wins over the input column of the same name (Spark resolves the sort over the SELECT)
    ("SELECT r.b AS a, r.a AS b FROM db.r AS r ORDER BY a * 2 DESC LIMIT 2", "(`a` * 2) DESC NULLS LAST"),
    # an aggregate the SELECT list holds is its output column
    ("SELECT r.a, count(*) AS n FROM db.r AS r GROUP BY r.a ORDER BY count(*) % 2, -r.a LIMIT 2",
     "(`n` % 2) ASC NULLS FIRST, (-`a`) ASC NULLS FIRST"),
])
def test_an_order_by_expression_is_kept_over_the_output_columns(sql, order):
    program = compile_model(sql, SCHEMAS)
    assert program.top_k is not None
    assert program.top_k.order_by(list(program.output_names)) == order
