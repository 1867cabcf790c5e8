"""``ivm_explain`` (SPEC §6) and ``ivm_check``: look at a model's plan and verify its state.

Both work from the SQL of the model's last committed run (recorded in its log), so they show and
check exactly what the refreshes execute.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.ivm_inputs import DIFFED, IVM_MODEL, SNAPSHOTS
from dbt.adapters.spark_ivm.refresh import Run
from dbt.adapters.spark_ivm.refresh.analysis import compile_program
from dbt.adapters.spark_ivm.refresh.apply import target_write
from dbt.adapters.spark_ivm.refresh.log import LogEntry, read_log
from dbt.adapters.spark_ivm.refresh.reading import (
    indexed_rows,
    plan_rows_sql,
    positions,
    snapshot_leaf,
    snapshot_zset,
)
from ivm_core import bookkeeping as bk
from ivm_core import statements as st
from ivm_core.compiler import Program
from ivm_core.plan import Scan, Version, Window, WindowResult, describe
from ivm_core.rules.aggregate import GROUPS, SET, STATES, value_state


def _last_run(run: Run) -> tuple[Run, LogEntry]:
    """The run as the model's last committed run ran: with the SQL its log recorded."""
    log = read_log(run)
    if log is None or not log.model_sql:
        raise DbtRuntimeError(
            f"incremental_ivm model '{run.model}' has not run yet: run it once, then explain or check it"
        )
    return replace(run, sql=log.model_sql), log


def view_lines(run: Run) -> list[str]:
    """The views the model reads (SPEC §2.4): which were inlined, reading what, and which not
    (diffed inputs, above), and why."""
    if not run.views:
        return []
    lines = ["", "Views:"]
    for view in run.views:
        if view.inlined:
            lines.append(f"  {view.key} ({view.what}): inlined into the model's SQL; "
                         f"its inputs are the model's: {', '.join(view.reads) or 'none'}")
        else:
            lines.append(f"  {view.key} ({view.what}): not inlined, diffed: {view.why_not}")
    return lines


def explain(run: Run) -> str:
    refresh, log = _last_run(run)
    program, reason = compile_program(refresh)
    t = refresh.tables
    lines = [
        f"incremental_ivm model {refresh.model} ({t.schema}.{t.identifier})",
        f"  last run: seq {log.seq}, {log.status}, mode {log.mode}",
        f"  companion schema: {t.state_schema}",
        "",
        "Inputs:",
    ]
    for key, source in sorted(refresh.inputs.items()):
        mark = log.watermarks.get(key)
        if source.kind == DIFFED:
            copy = f": its copy is {t.index_display(key)}" if program is not None else ""
            lines.append(f"  {key}: {source.what}; every run reads it whole and diffs it against the model's "
                         f"copy of it (a cost that grows with the input, not with its change){copy}")
            continue
        use = program.inputs.get(key) if program else None
        index = ""
        if use is not None and refresh.keeps_index(use):
            index = f"; join index {t.index_display(key)} on ({', '.join(use.columns)})"
        elif use is not None and refresh.reads_at_position(use):
            index = f"; joined at {_position_name(source.kind)}s (no join index)"
        if source.kind == SNAPSHOTS:
            lines.append(f"  {key}: {source.display_changes}, consumed snapshot {mark}{index}")
        else:
            lines.append(f"  {key}: {source.kind} {source.display_changes}, consumed up to seq {mark}{index}")
    lines += view_lines(refresh)
    if program is None:
        lines += ["", f"Full recompute on every run: {reason}"]
        return "\n".join(lines)
    lines += ["", "Plan:", describe(program.plan, 1)]
    if program.top_k is not None:
        top = program.top_k
        lines.append(f"  then the rows at places {top.offset + 1}…{top.offset + top.limit} ordered by "
                     f"{top.order_by(list(program.output_names))}, read from the state of the rows above "
                     f"(top-k; ties at the limit broken either way)")
    held = log.counts.tables.get(t.target_display)
    lines += ["", "Target:", f"  {t.target_display}: takes each change {target_write(refresh, program, log).value}; "
              f"it held {'?' if held is None else held} rows at the last commit "
              f"(rewritten up to ivm_rewrite_max_rows: {refresh.config.rewrite_max_rows}; "
              f"ivm_two_pass_min_rows: {refresh.config.two_pass_min_rows})"]
    lines += ["", "State tables:"]
    if isinstance(program.plan, WindowResult):
        window = program.plan.window
        lines.append(f"  none for window (PARTITION BY {', '.join(window.partition)}): the target holds its rows; "
                     "a change recomputes the partitions it touches from the inputs after it and retracts "
                     "the target's rows of those partitions")
        if program.plan.top is not None:
            lines.append("  the target holds each partition's top rows whole: a change that only inserts ranks the "
                         "touched partitions again from the target's rows and the inserted ones, without reading "
                         "the inputs")
    for agg in program.aggregates:
        layout = program.layouts[agg.id]
        if agg.keeps_rows:  # a window's output rows, or the rows a top-k ranks
            kept = (f"the rows of window {agg.id} (PARTITION BY {', '.join(agg.child.partition)})"
                    if isinstance(agg.child, Window) else "the rows the top-k ranks")
            copies = ("appended pieces of rows with their copies, compacted as a join index is"
                      if agg.takes_pieces else "each distinct row once with its copies")
            lines.append(f"  {refresh.state_display(agg.id, GROUPS)}: {kept}, {copies} "
                         f"({layout.group_state_columns()[-1]}); columns {', '.join(agg.keys)}")
            continue
        groups = f"keys ({', '.join(agg.keys) or 'none: global'}); columns {', '.join(layout.group_state_columns())}"
        if layout.held is not None:
            lines.append(f"  {refresh.tables.target_display}: holds the group state ({groups}): no table of its own")
            continue
        if not layout.shares_table:
            lines.append(f"  {refresh.state_display(agg.id, GROUPS)}: {groups}")
            continue
        lines.append(f"  {refresh.state_display(agg.id, STATES)}: the aggregate's states, partitioned by {SET}:")
        lines.append(f"    {SET} = 0, its group state: {groups}")
        for arg in layout.value_args:
            pieces = (", appended pieces of values with their weights, compacted as a join index is"
                      if arg in layout.appended_value_args else "")
            stored = layout.stored(value_state(arg))
            lines.append(f"    {SET} = {stored.set}, the value state of {arg}: keys ({', '.join(agg.keys)}, "
                         f"{layout.value_column(arg)}){pieces}")
    if refresh.consumers:
        readers = f"read by {', '.join(c.name for c in refresh.consumers)}"
    elif refresh.publishes:
        readers = "published always (ivm_publish_changes: always)"
    else:
        readers = "none published: no incremental_ivm model of the project reads this one"
    lines.append(f"  {t.display('changes')}: the model's published changes ({readers})")
    lines.append(f"  {t.display('log')}: one entry per run")
    env = program.env(_named_leaf(refresh, program), refresh.state_table,
                      result=program.held_result(t.target_display, list(program.output_names)))
    for key in sorted(program.inputs):
        delta = program.delta_sql({key}, env)
        lines += ["", f"Delta query when {key} changes:", delta or "  (no change reaches the output)"]
    lines += ["", "Full recompute reasons: none (incrementally maintained)"]
    return "\n".join(lines)


def _named_leaf(refresh: Run, program: Program):
    def leaf(scan: Scan) -> str:
        if scan.version is Version.DELTA:
            return f"<changes of {scan.input} in (consumed, captured]>"
        if scan.version is Version.NEW:
            return f"<{scan.input} after the change>"
        if refresh.keeps_index(program.inputs[scan.input]):
            return refresh.tables.index(scan.input)
        return f"<{scan.input} before the change, read at {_position_name(refresh.inputs[scan.input].kind)}>"

    return leaf


def _position_name(kind: str) -> str:
    """What an input without a join index is read at (``reading.Position``)."""
    if kind == SNAPSHOTS:
        return "its snapshot"
    return "its committed target snapshot" if kind == IVM_MODEL else "its tag"


@dataclass
class Drift:
    table: str
    rows: int


def check(run: Run) -> tuple[str, list[Drift]]:
    """Verify every state table against its definition at the consumed sequences, bottom-up:
    join indexes against the inputs' changes (not a diffed input's copy, which is its own
    definition), aggregate states against a recompute from the level below, and the target
    against the plan over the state."""
    refresh, log = _last_run(run)
    if log.status != "committed":
        raise DbtRuntimeError(f"incremental_ivm model '{refresh.model}': its last run did not commit")
    program, reason = compile_program(refresh)
    if program is None:
        return f"{refresh.model} is recomputed in full on every run ({reason}): no state to check", []
    t = refresh.tables
    checks: list[tuple[str, str, str]] = []  # (name, stored, expected)
    marks = log.watermarks
    at = positions(refresh, marks)
    unchecked = []
    for key, use in sorted(program.inputs.items()):
        if not refresh.keeps_index(use):
            continue
        if refresh.inputs[key].kind == DIFFED:  # the input as the last run read it: gone since
            unchecked.append(t.index_display(key))
            continue
        stored = st.consolidated(bk.zset_of(t.index(key), use.columns), use.columns)
        zset = st.consolidated(snapshot_zset(refresh, key, use.columns, marks.get(key, 0), at.get(key)), use.columns)
        expected = indexed_rows(use, zset)
        checks.append((t.index_display(key), stored, expected))

    leaf = snapshot_leaf(refresh, program, marks, at, consolidated=True)
    # each state against its recomputation, a table of states one state at a time
    for statement in program.state_builds(leaf, refresh.state_table):
        agg_id, table = statement.aggregate, statement.state
        for name in program.layouts[agg_id].state_names:
            if program.layouts[agg_id].stored(name).table != table:
                continue
            checks.append((refresh.state_display(agg_id, name),
                           program.stored_state(agg_id, name, refresh.state_table(agg_id, table)),
                           program.stored_state(agg_id, name, f"(\n{statement.sql}\n) AS _ivm_built")))
    # a group state the target holds: the target read as the group state (which checks the
    # target's rows too)
    env = program.env(leaf, refresh.state_table)
    for agg_id in program.held_aggregates:
        checks.append((refresh.state_display(agg_id, GROUPS), bk.all_rows(env.state_table(agg_id, GROUPS)),
                       program.built_groups(agg_id, leaf, refresh.state_table, guarded=False)))
    expected_target = plan_rows_sql(refresh, program, leaf, [(c[0], c[1]) for c in log.target_columns])
    if program.top_k is None:
        checks.append((t.target_display, bk.all_rows(t.target), expected_target))
    parts = [st.differing_rows(name, stored, expected) for name, stored, expected in checks]
    if program.top_k is not None:  # any valid choice of the rows tied at the limit
        names = [c[0] for c in log.target_columns]
        violations = program.top_k.violations(t.target, expected_target, names)
        parts.append(st.labelled_count(t.target_display, violations))
    rows = refresh.db.run(bk.union_all(parts), fetch=True)
    drift = [Drift(str(name), int(n)) for name, n in rows if int(n)]
    lines = [f"ivm_check {refresh.model}: {len(parts)} tables checked at seq {log.seq}"]
    for name, n in rows:
        lines.append(f"  {name}: {'OK' if not int(n) else f'DRIFT ({int(n)} rows differ)'}")
    for name in unchecked:
        lines.append(f"  {name}: not checked (the copy of a diffed input: the input as the last run read it; "
                     "the states above it are checked against it)")
    return "\n".join(lines), drift
