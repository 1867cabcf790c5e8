"""Golden fixtures of the Spark SQL the compiler generates.

A diff here is a change in what runs on Spark: review it, then regenerate with
``UPDATE_GOLDEN=1 pytest tests/unit/test_golden_sql.py``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from ivm_core import statements as st
from ivm_core.analyzer import InputSchema
from ivm_core.compiler import compile_model
from ivm_core.plan import Scan

GOLDEN = Path(__file__).parent / "golden"
SCHEMAS = [
    InputSchema("shop.orders", (("o_id", "INT"), ("o_cust", "INT"), ("o_total", "DECIMAL(12,2)"), ("o_note", "STRING"))),
    InputSchema("shop.customers", (("c_id", "INT"), ("c_name", "STRING"), ("c_nation", "INT"))),
    InputSchema("shop.nations", (("n_id", "INT"), ("n_name", "STRING"))),
]
MODELS = {
    "filter_project": "SELECT o.o_id, o.o_total * 2 AS double_total FROM shop.orders o WHERE o.o_total > 100",
    "join2": (
        "SELECT o.o_id, c.c_name FROM shop.orders o JOIN shop.customers c "
        "ON o.o_cust = c.c_id AND o.o_total > c.c_nation"
    ),
    "join3_chain": (
        "SELECT o.o_id, c.c_name, n.n_name FROM shop.orders o "
        "JOIN shop.customers c ON o.o_cust = c.c_id JOIN shop.nations n ON c.c_nation = n.n_id"
    ),
    "aggregate_join": (
        "SELECT c.c_nation, count(*) AS orders, sum(o.o_total) AS revenue, max(o.o_total) AS biggest "
        "FROM shop.orders o JOIN shop.customers c ON o.o_cust = c.c_id GROUP BY c.c_nation HAVING count(*) > 1"
    ),
    "union_all": (
        "SELECT o.o_id AS id, 'order' AS kind FROM shop.orders o "
        "UNION ALL SELECT c.c_id, 'customer' FROM shop.customers c"
    ),
}


def leaf(scan: Scan) -> str:
    return f"<{scan.input}@{scan.version.value}>"


def state(agg_id: str, name: str) -> str:
    return f"<state {agg_id}.{name}>"


def render(name: str) -> str:
    program = compile_model(MODELS[name], SCHEMAS)
    program.bind_types({
        f"{a.id}__{c.name}__{kind}": typ
        for a in program.aggregates for c in a.aggs
        for kind, typ in (("arg", "decimal(12,2)"), ("sum", "decimal(22,2)"), ("avg", "decimal(16,6)"))
    })
    parts = [f"-- model: {MODELS[name]}"]
    for key, use in sorted(program.inputs.items()):
        parts.append(f"-- input {key}: columns {list(use.columns)}, join index: {use.stateful}")
    for changed in [sorted(program.inputs)] + [[k] for k in sorted(program.inputs)]:
        parts.append(f"-- delta when {', '.join(changed)} changed")
        parts.append(program.delta_sql(set(changed), program.env(leaf, state)) + ";")
    everything = set(program.inputs)
    staged = {a: f"<staged {a}>" for a in program.stageable_aggregates(everything)}
    env = program.env(leaf, state, staged)
    if staged:
        parts.append("-- the run stages every aggregate's child change once; then:")
        for statement in program.staged_changes(everything, env):
            parts.append(f"-- staged child change of {statement.aggregate}")
            parts.append(statement.sql + ";")
        parts.append(f"-- delta when {', '.join(sorted(everything))} changed, reading the staged changes")
        parts.append(program.delta_sql(everything, env) + ";")
    for statement in program.state_updates(everything, env):
        parts.append(f"-- update of state {statement.aggregate}.{statement.state}")
        parts.append(statement.sql + ";")
    for statement in program.state_updates(everything, env, rewrite=lambda agg_id, name: True):
        parts.append(f"-- rewrite of small state {statement.aggregate}.{statement.state}")
        parts.append(statement.sql + ";")
    return "\n".join(parts) + "\n"


def render_statements() -> str:
    cols = ["id", "weird `name`"]
    return "\n;\n".join(
        [
            st.consolidated_changes("`s`.`t_changes`", cols, 3, 7),
            st.append_to_state("`s_ivm`.`m__index__s__t`", "<delta>", cols),
            st.compact_state("`s_ivm`.`m__index__s__t`", "<delta>", cols),
            st.negative_after("<delta>", "`s_ivm`.`m__index__s__t`", cols),
            st.insert_output_changes("`s_ivm`.`m__changes`", "<delta>", cols, 8),
            st.target_change("`s`.`m`", "`s_ivm`.`m__changes`", cols, 8),
            st.target_change_counts("`_ivm_staged`"),
            st.delete_from_target("`s`.`m`", "`_ivm_staged`", cols),
            st.insert_into_target("`s`.`m`", "`_ivm_staged`", cols),
            st.insert_added_rows("`s`.`m`", "`s_ivm`.`m__changes`", cols, 8),
            st.change_counts("`s_ivm`.`m__changes`", 8),
            st.rewrite_target("`s`.`m`", "`s`.`m` VERSION AS OF 42", "`s_ivm`.`m__changes`", cols, 8),
            st.rewrite_target_refused("`s`.`m` VERSION AS OF 42", "`s_ivm`.`m__changes`", cols, 8),
            st.multiset_difference("`s`.`m`", "<full>", cols),
        ]
    ) + "\n"


CASES = {f"{name}.sql": (lambda n=name: render(n)) for name in MODELS}
CASES["statements.sql"] = render_statements


@pytest.mark.parametrize("fixture", sorted(CASES))
def test_generated_sql_matches_golden(fixture):
    text = CASES[fixture]()
    path = GOLDEN / fixture
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"missing golden file {path}: run with UPDATE_GOLDEN=1"
    assert text == path.read_text()


def test_unchanged_input_reads_its_join_index_not_its_delta():
    program = compile_model(MODELS["join2"], SCHEMAS)
    sql = program.delta_sql({"shop.orders"}, leaf)
    assert "<shop.orders@delta>" in sql and "<shop.customers@old>" in sql
    assert "<shop.customers@delta>" not in sql and "@new" not in sql


def test_single_table_model_keeps_no_state():
    program = compile_model(MODELS["filter_project"], SCHEMAS)
    assert not program.inputs["shop.orders"].stateful
    # only the columns the model reads are kept
    assert program.inputs["shop.orders"].columns == ("o_id", "o_total")


def test_deleting_the_max_reads_only_the_change_and_the_group_state():
    """MIN/MAX are recomputed from the touched groups' stored values: a change never makes the
    refresh read the input itself (pg_ivm rescans the base table here)."""
    program = compile_model("SELECT o.o_cust, max(o.o_total) AS biggest FROM shop.orders o GROUP BY o.o_cust", SCHEMAS)
    program.bind_types({f"{a.id}__{c.name}__arg": "decimal(12,2)" for a in program.aggregates for c in a.aggs})
    assert not program.inputs["shop.orders"].stateful  # no copy of the input is kept
    sql = program.delta_sql({"shop.orders"}, program.env(leaf, state))
    reads = set(re.findall(r"<(?:shop|state)[^>]+>", sql))
    assert reads == {"<shop.orders@delta>", "<state agg0.groups>", "<state agg0.values__c6>"}, reads
    updates = program.state_updates({"shop.orders"}, program.env(leaf, state))
    assert {u.state for u in updates} == {"groups", "values__c6"}
    assert all("@old" not in u.sql and "@new" not in u.sql for u in updates)
