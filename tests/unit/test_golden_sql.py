"""Golden fixtures of the Spark SQL the compiler generates, and of what a refresh composes beside
the compiled plan: its bookkeeping statements (log, lock, capture, rollback) and the relations its
leaves read.

A diff here is a change in what runs on Spark: review it, then regenerate with
``UPDATE_GOLDEN=1 pytest tests/unit/test_golden_sql.py``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from ivm_core import bookkeeping as bk
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
    # sums and counts only: the run stages the child change as its row partials, which every
    # statement of the aggregate reads instead of aggregating the staged rows again
    "aggregate_join_sums": (
        "SELECT c.c_nation, count(*) AS orders, sum(o.o_total) AS revenue "
        "FROM shop.orders o JOIN shop.customers c ON o.o_cust = c.c_id GROUP BY c.c_nation"
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
    for statement in program.state_updates(everything, env, target=lambda agg_id, name: f"<live {agg_id}.{name}>",
                                           two_pass=set(program.layouts)):
        parts.append(f"-- update in two passes of large state {statement.aggregate}.{statement.state}")
        parts.append(statement.sql + ";")
    return "\n".join(parts) + "\n"


def render_statements() -> str:
    cols = ["id", "weird `name`"]
    return "\n;\n".join(
        [
            st.consolidated_changes("`s`.`t_changes`", cols, 3, 7),
            st.consolidated_changes("`s`.`t_changes`", cols, 3, 7, "<bounds>"),
            st.window_changes("`s`.`t_changes`", cols, 3, 7),
            st.key_values("k0", "`s`.`t_changes`", "weird `name`", 3, 7).sql,
            st.key_span("k0_span", "`s_ivm`.`m__index__s__t`", "weird `name`").sql,
            st.key_bounds("id", "bigint", [("5", "9"), ("12", "12")]),
            st.key_bounds("weird `name`", "date", [("2024-01-31", "2024-02-03")]),
            st.create_index("`s_ivm`.`m__index__s__t`", "<zset>", "id"),
            st.append_to_state("`s_ivm`.`m__index__s__t`", "<delta>", cols),
            st.append_to_state("`s_ivm`.`m__index__s__t`", "<delta>", cols, "<index within bounds>"),
            st.compact_state("`s_ivm`.`m__index__s__t`", "<delta>", cols, "id"),
            st.negative_after("<delta>", "`s_ivm`.`m__index__s__t`", cols),
            st.window_check("w0", "`s`.`t_changes`", 3, 7).sql,
            # probes of one window, one scan; a probe statement beside them as it is
            st.probes_sql([
                st.window_check("w0", "`s`.`t_changes`", 3, 7),
                st.key_span("k0_span", "`s_ivm`.`m__index__s__t`", "id"),
                st.key_values("k0", "`s`.`t_changes`", "id", 3, 7),
                st.absent_rows("n0", st.negative_after("<window>", None, cols)),
            ]),
            st.absent_rows("n0", st.negative_after("<history>", None, cols)),
            st.absent_rows("n0", st.negative_after("<window>", "(<base rows>)", cols)),
            st.selected("`s`.`t` VERSION AS OF 42", cols),
            st.patched(st.weighted_rows("`s`.`t` VERSION AS OF 42", cols), "<window>", cols),
            st.patched("<pieces>", "<window>", []),
            st.insert_output_changes("`s_ivm`.`m__changes`", "<delta>", cols, 8),
            bk.cache_table("`_ivm_x_change`", st.output_changes("<delta>", cols, 8)),
            st.target_change("`s`.`m`", "`s_ivm`.`m__changes`", cols, 8),
            st.target_change("`s`.`m`", "`s_ivm`.`m__changes`", cols, 8, "<bounds>"),
            st.delete_from_target("`s`.`m`", "`_ivm_staged`", cols, "<bounds>"),
            st.create_table_as("`s`.`m`", "<select>", replace=True, sort_key="id"),
            st.key_values("t", "`s_ivm`.`m__changes`", "id", 7, 8, deletes_only=True).sql,
            st.target_change_counts("`_ivm_staged`"),
            st.rewrite_target_from("`s`.`m`", "<result>", cols),
            st.rewrite_counts("`s`.`m`", "`s`.`m` VERSION AS OF 42", cols),
            st.delete_from_target("`s`.`m`", "`_ivm_staged`", cols),
            st.insert_into_target("`s`.`m`", "`_ivm_staged`", cols),
            st.insert_added_rows("`s`.`m`", "`s_ivm`.`m__changes`", cols, 8),
            st.probes_sql([st.change_counts_probe("n", "`s_ivm`.`m__changes`", 8),
                           st.deleted_rows_probe("d", "`s_ivm`.`m__changes`", 8)]),
            st.delete_every_copy("`s`.`m`", "`s_ivm`.`m__changes`", cols, 8, "<bounds over t>"),
            st.insert_rows_and_copies("`s`.`m`", "`s_ivm`.`m__changes`", cols, 8, "`s`.`m`.snapshot_id_42", "<bounds>"),
            st.change_counts("`s_ivm`.`m__changes`", 8),
            st.probes_sql([st.change_counts_probe("n", "`s_ivm`.`m__changes`", 8),
                           st.key_values("t", "`s_ivm`.`m__changes`", "id", 7, 8, deletes_only=True)]),
            st.merge_into_set_target("`s`.`m`", "`s_ivm`.`m__changes`", cols, 8,
                                     st.key_bounds("id", "bigint", [("5", "9"), ("12", "12")], "t")),
            st.delete_from_set_target("`s`.`m`", "`s_ivm`.`m__changes`", cols, 8),
            st.insert_into_set_target("`s`.`m`", "`s_ivm`.`m__changes`", cols, 8, "<live rows of `s`.`m`>",
                                      "(<live rows of `s`.`m` at 42>) - 3"),
            st.rewrite_target("`s`.`m`", "`s`.`m` VERSION AS OF 42", "`s_ivm`.`m__changes`", cols, 8),
            st.rewrite_target_refused("`s`.`m` VERSION AS OF 42", "`s_ivm`.`m__changes`", cols, 8),
            st.multiset_difference("`s`.`m`", "<full>", cols),
            st.changelog_view("`s`.`t`", 41, 42, "_ivm_snapshot_change__m__s_t_0a1b2c3d__changelog"),
            st.changelog_changes("_ivm_snapshot_change__m__s_t_0a1b2c3d__changelog", cols),
            st.staged_change(st.difference("`s`.`t` VERSION AS OF 42", "`s`.`t` VERSION AS OF 41", cols), cols),
            st.staged_change(st.difference("`s`.`t` VERSION AS OF 42", None, []), []),
        ]
    ) + "\n"


CASES = {f"{name}.sql": (lambda n=name: render(n)) for name in MODELS}


LOG, LOCK, TARGET, CHANGES = "`s_ivm`.`m__log`", "`s_ivm`.`m__lock`", "`s`.`m`", "`s_ivm`.`m__changes`"


def render_bookkeeping() -> str:
    statements = [
        bk.create_schema("`s_ivm`"),
        bk.create_log(LOG),
        bk.create_lock(LOCK),
        bk.read_log(LOG),
        bk.insert_log_entry(LOG, ["8", "'committed'", "'incremental'", "NULL", "'fp'", "'{}'",
                                  f"({bk.current_snapshot(TARGET)})", "3", "1", "'[]'", "'select 1'",
                                  bk.json_map([("s.m", f"({bk.current_snapshot(TARGET)})")]), "current_timestamp()",
                                  "'{}'"]),
        bk.union_all([
            bk.capture_change_table("raw.orders", "`raw`.`orders_changes`"),
            bk.capture_upstream("s.up", "`s_ivm`.`up__log`"),
            bk.capture_snapshot("s.m", TARGET),
            bk.capture_lock(LOCK),
            *bk.capture_iceberg_input("raw.items", "`raw`.`items`", "41"),
            *bk.capture_iceberg_input("raw.customers", "`raw`.`customers`", None),
        ]),
        bk.row_count("`s_ivm`.`m__index__raw__orders`"),
        bk.live_rows(TARGET),
        bk.read_log_and_capture(LOG, [
            *bk.capture_change_table_at("raw.orders", "`raw`.`orders_changes`"),
            bk.capture_snapshot("s.m", TARGET),
            *bk.capture_iceberg_input("raw.items", "`raw`.`items`", bk.consumed_mark(LOG, "raw.items")),
        ]),
        bk.union_all([
            bk.upstream_target_snapshot("s.up", "`s_ivm`.`up__log`", 7),
            bk.base_tag("raw.orders", "`raw`.`orders`", 7),
        ]),
        st.probes_sql([
            bk.tag_probe("tag at raw.orders", "`raw`.`orders`", 7, above=False),
            bk.tag_probe("tag above raw.orders", "`raw`.`orders`", 7, above=True),
        ]),
        bk.read_lock(LOCK),
        bk.take_lock(LOCK, None, "host:1:abc", 8, 1700000000),
        bk.take_lock(LOCK, ("host:2:o'ld:id", 7, 1699999000), "host:1:abc:id", 8, 1700000000),
        bk.take_lock(LOCK, ("host:1:abc:id", 8, None), "host:1:abc:id", 8, 1700000900),
        bk.release_lock(LOCK, "host:1:abc"),
        bk.fence_lease(LOG, 8, "host:2:o'ld:id"),
        bk.commit_fenced(LOG, ["8", "'committed'", "'incremental'", "NULL", "'fp'", "'{}'",
                               f"({bk.current_snapshot(TARGET)})", "3", "1", "'[]'", "'select 1'", "'{}'",
                               "current_timestamp()", "'{}'", "0"], 8, "host:1:abc:id"),
        bk.roll_back(TARGET, 42),
        bk.union_all([
            bk.maintenance_probe("s.m", TARGET, 42, 3600, 8 << 20),
            bk.maintenance_probe("s_ivm.m__log", LOG, None, 0, 8 << 20),
        ]),
        bk.expire_snapshots(TARGET, 1795895298371),
        bk.compact_small_files(TARGET, 8 << 20),
        bk.pinned(TARGET, 42),
        bk.live_rows(TARGET),
        bk.cache_table("`_ivm_x_agg0`", "SELECT 1"),
        bk.drop_view("`_ivm_x_agg0`"),
        bk.describe_query("SELECT 1"),
        bk.empty_like(TARGET),
        bk.delete_changes_after(CHANGES, 7),
        bk.prune_changes(CHANGES, 7),
        bk.change_table_lag("`raw`.`orders_changes`", 7, LOG),
        bk.upstream_lag("`s_ivm`.`up__log`", 7),
        bk.snapshot_lag("`raw`.`items`", 42),
        bk.consumer_mark("`s_ivm`.`down__log`", "s.m"),
        bk.zset_of("`s_ivm`.`m__index__raw__orders`", ["id", "weird `name`"]),
        bk.json_map([]),
        bk.describe_table(TARGET),
        bk.describe_table(TARGET, extended=True),
        bk.all_rows(TARGET),
    ]
    return "\n;\n".join(statements) + "\n"


def render_relations() -> str:
    cols = ["id", "weird `name`"]
    index = "`s_ivm`.`m__index__raw__orders` VERSION AS OF 42"
    statements = [
        st.filtered("<zset>", "`id` > 3"),
        st.empty_input("`raw`.`orders_changes`", cols),
        st.aliased("<delta>", "_ivm_delta"),
        st.index_after_change(index, st.aliased("<delta>", "_ivm_delta"), cols),
        st.zset_sum([("<base at a tag>", 1), ("<changes above the mark>", -1)], cols),
        st.copies_as("<zset>", ["c0", "c1"], [("id", "int"), ("weird `name`", "decimal(10,2)")]),
        st.differing_rows("s.m", "<stored>", "<expected>"),
    ]
    return "\n;\n".join(statements) + "\n"


CASES["statements.sql"] = render_statements
CASES["bookkeeping.sql"] = render_bookkeeping
CASES["relations.sql"] = render_relations


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
    assert reads == {"<shop.orders@delta>", "<state agg0.states>"}, reads  # (its group and value states)
    assert "_ivm_set = 0" in sql and "_ivm_set = 1" in sql
    updates = program.state_updates({"shop.orders"}, program.env(leaf, state))
    assert {u.state for u in updates} == {"groups", "values__c6"}
    assert all("@old" not in u.sql and "@new" not in u.sql for u in updates)
