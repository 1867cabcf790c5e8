"""An incremental run at sequence ``S``, under the lock, top to bottom::

    stage each Iceberg input's change      CACHE TABLE, from its changelog between the consumed
                                           and the captured snapshot (or their difference); a
                                           diffed input's: it read whole less the model's copy
                                           (none of them non-empty: the run is a noop)
    validate and bound the change windows  one statement: NULL/zero weights, late writes, which
                                           windows delete rows, the tags tagged inputs are read
                                           at (reading.Positions), and the values of the change's
                                           join keys, whose ranges each change window then
                                           states as a literal predicate (reading.key_bounds)
    add each input's change to its index   (an input read at its tag or snapshot, or an
                                           upstream model's committed target, has none:
                                           Run.keeps_index) appended — refusing, when the
                                           window deletes rows, deletes of rows the index does
                                           not hold (read within the key ranges) — or the
                                           index compacted once it has grown
                                           ivm_index_growth times
    stage each aggregate's child change    CACHE TABLE, when it joins (or reads a window's state or
                                           another aggregate's change) and more than one
                                           statement reads it: computed once (its row
                                           partials, when they are all its statements read);
                                           then, of a state
                                           updated in two passes (below), the rows of the groups
                                           the change touches (one scan: the change and the
                                           second pass read them instead of the state); then its
                                           own change, when more than one place reads it
    publish ΔQ at S                        into <model>__changes, consolidated — or, when no model
                                           of the project reads it, CACHE TABLE (in memory only)
    apply ΔQ to the target                 a small target is rewritten (counts, INSERT
                                           OVERWRITE); a large one that holds every row once (an
                                           aggregate's groups, DISTINCT) takes it in one MERGE of
                                           whole rows (counts and key ranges of the deleted rows
                                           asked first) — or, no ranges bounding it and the target
                                           larger still, in two passes: the MERGE without its
                                           insert clause, then an INSERT of the new rows (one
                                           more commit); any other, when it deletes each row
                                           once, one MERGE that deletes every copy of those rows
                                           (counts and key ranges asked first), then an INSERT of
                                           the new rows and of the copies it deleted besides —
                                           else a staged change with the copies of each deleted
                                           row (CACHE TABLE, counts, DELETE, INSERT); the target
                                           is read within the ranges
    add the change to each aggregate state rewritten when small; a window's appended (compacted
                                           as an index is); else a MERGE (in two passes as the
                                           target's, when unbounded and larger still); none for
                                           a group state the target holds: the target's update is
                                           its update (computing the change fails at a group left
                                           irregular: the run is undone, the model rebuilt with
                                           its group state apart)
      (a leaf over one small aggregate:    instead of the four steps above: stage the child
      no model reads its change, its SQL   changes several state statements read, add the change
      is projections and filters over one  to the aggregate states, rewrite the target as the
      aggregate, target and the states     result read from that state (a target that holds the
      its result reads small; and every    group state: as itself plus the change, first), count
      top-k model)                         the rows it gained and lost (within the change's key
                                           ranges of its sort key, when they bound every changed row;
                                           in the JVM, no statement, when it is tiny) —
                                           and publish them, when a model reads a top-k
                                           model's change)
    retention                              <model>__changes pruned: below what every model that
                                           reads it consumed, every ivm_maintenance_every
                                           sequences; all of it once no model reads it
    maintenance, every ivm_maintenance_every  compact small files, expire old snapshots
    sequences                              (maintain.py)
    log 'committed' S                      the commit point (frees the lock): high marks, every
                                           owned table's snapshot and row counts, measured by
                                           the log's own INSERT, and the run's cost (cost.py)

"Small" is at most ivm_rewrite_max_rows rows at the last commit. Reads of state are pinned to
the last commit's snapshots (so the indexes can take the change first). A write that would
leave a negative multiplicity (a delete of a row that is not there) fails; the run rolls back
what it wrote and names the inputs.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, replace
from typing import Mapping, Optional, Sequence

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.ivm_inputs import DIFFED, SNAPSHOTS
from dbt.adapters.spark_ivm.refresh.analysis import run_fingerprint
from dbt.adapters.spark_ivm.refresh.capture import OwnedTables, View
from dbt.adapters.spark_ivm.refresh.db import logger
from dbt.adapters.spark_ivm.refresh.context import Outcome, Run
from dbt.adapters.spark_ivm.refresh.cost import Cost, Costs, input_sizes
from dbt.adapters.spark_ivm.refresh.decide import change_rows
from dbt.adapters.spark_ivm.refresh.iceberg_files import StagedScans
from dbt.adapters.spark_ivm.refresh.log import Entry, LogEntry, row_counts_measured, write_log
from dbt.adapters.spark_ivm.refresh.maintain import maintain_when_due
from dbt.adapters.spark_ivm.refresh.metadata import LIVE_ROWS, ROWS, SNAPSHOT, Measure
from dbt.adapters.spark_ivm.refresh.reading import (
    Positions,
    ask_key_span,
    change_leaf,
    index_delta_sql,
    key_bounds,
    key_probes,
    key_range,
    key_ranges,
    pinned,
    pinned_state,
    position_probes,
    run_positions,
    stage_changes,
    target_sort_key,
)
from dbt.adapters.spark_ivm.refresh.recover import undo
from dbt.adapters.spark_ivm.refresh.validate import Probes, validate
from ivm_core import bookkeeping as bk
from ivm_core import statements as st
from ivm_core.compiler import Program
from ivm_core.plan import Empty
from ivm_core.rules.aggregate import GROUPS
from ivm_core.sqlgen import Env
from ivm_core.errors import ABSENT_ROWS, IRREGULAR_GROUP, ROW_TWICE
from ivm_core.sqltext import quote


@dataclass(frozen=True)
class Change:
    """The change a run applies, and what a refusal needs to undo the run and name its inputs."""

    run: Run
    log: LogEntry  # the last commit
    owned: OwnedTables
    windows: Mapping[str, tuple[int, int]]  # input -> (consumed, captured], as its change relation is read
    marks: Mapping[str, tuple[int, int]]  # input -> (consumed, captured] marks (a snapshot input's: snapshot ids)
    key_ranges: Mapping[tuple[str, str], st.KeyRanges]  # (input, key column) -> its change's key ranges
    deletes: frozenset[str]  # inputs whose change window deletes rows
    inserting_only: frozenset[str]  # inputs whose change window only inserts rows
    target_key: Optional[tuple[str, str]]  # (name, type) of the target's sort column (a join key)
    seq: int
    columns: Sequence[str]  # the target's
    suspects: Sequence[str]  # inputs a delete of absent rows can only come from
    positions: Positions  # where the inputs without a join index are read at

    @property
    def bounds(self) -> dict[str, str]:
        """Input -> the literal ranges of its change's join keys (``key_bounds``)."""
        return key_bounds(self.key_ranges)

    def rewrites(self, name: str) -> bool:
        return rewrites(self.run, self.log, name)


def rewrites(run: Run, log: LogEntry, name: str) -> bool:
    """Whether a run rewrites this table (the target or an aggregate state) rather than updating
    it in place: it held at most ``ivm_rewrite_max_rows`` rows at the last commit."""
    rows = log.counts.tables.get(name)
    return rows is not None and rows <= run.config.rewrite_max_rows


def updates_in_two_passes(run: Run, log: LogEntry, name: str) -> bool:
    """Whether a table updated in place (not rewritten) held enough rows at the last commit
    (``ivm_two_pass_min_rows``) that an update no key ranges bound is done in two passes: the
    MERGE without its insert clause, then an INSERT (``config.DEFAULT_TWO_PASS_MIN_ROWS``)."""
    rows = log.counts.tables.get(name)
    return rows is not None and rows >= run.config.two_pass_min_rows


class TargetWrite(enum.Enum):
    """How a run applies the model's change to its target (``target_write``)."""

    FROM_STATE = ("rewritten as the result read from its aggregate's state, which the run updates first — or, when "
                  "the target holds that state, as itself plus the change (no ΔQ)")
    REWRITE = "rewritten: the target plus the change, in one INSERT OVERWRITE"
    MERGE = ("one MERGE of whole rows (the result holds every row once); in two passes — the MERGE without its "
             "insert clause, then an INSERT of the new rows — when no key ranges bound the change and it held at "
             "least ivm_two_pass_min_rows rows")
    STAGED = ("in two statements (the result may repeat rows): every copy of the rows it deletes deleted — by one "
              "MERGE when it deletes each row once within key ranges, else by a staged DELETE —, then an INSERT of "
              "the new rows and of the copies kept")


def target_write(run: Run, program: Program, log: LogEntry) -> TargetWrite:
    """``FROM_STATE`` for a top-k model, and for a model no other reads whose SQL is projections
    and filters over one aggregate when the target and the states its result is read from
    (``Program.result_states``) are rewritten (small: reading them whole is cheap — a
    COUNT(DISTINCT)'s value state, which the result does not read, may be large); else
    — or a small target that holds its aggregate's group state (``Program.held_by_target``:
    rewritten from itself); else ``REWRITE`` a small target, ``MERGE`` a large one whose result
    is a set (``Program.result_is_set``), ``STAGED`` any other."""
    small = rewrites(run, log, run.tables.target_display)
    read = program.result_states()
    held = program.result_held
    if program.top_k is not None or (
            not run.publishes and small and (held or (
                read and all(rewrites(run, log, run.state_display(agg_id, name)) for agg_id, name in read)))):
        return TargetWrite.FROM_STATE
    if small:
        return TargetWrite.REWRITE
    return TargetWrite.MERGE if program.result_is_set() else TargetWrite.STAGED


def apply_change(run: Run, program: Program, view: View) -> Optional[Outcome]:
    """Apply the change the run observed; None when there is none after all (every changed
    input is a diffed one whose difference is empty)."""
    log = view.log
    assert log is not None
    marks = {k: (log.watermarks.get(k, 0), view.highs[k]) for k in view.changed}
    views: list[str] = []
    scans = StagedScans()
    try:
        staged = stage_changes(run, program, log, marks, view.diffed, views, scans)
        if staged.unchanged:
            if not set(view.changed) - staged.unchanged:
                return None
            view = replace(view, changed=tuple(k for k in view.changed if k not in staged.unchanged))
            marks = {k: m for k, m in marks.items() if k not in staged.unchanged}
        windows = {k: w for k, w in staged.windows.items() if k in marks}
        return replace(_apply_windows(run, program, view, log, marks, windows),
                       inputs_read={k: r for k, r in staged.reads.items() if k in marks})
    finally:
        _drop_views(run, views)
        scans.release()


def _drop_views(run: Run, names: Sequence[str]) -> None:
    """Drop the temp views a run staged, the last staged first: dropping a cached view that a
    later one was computed from makes Spark compute the later one again."""
    for name in reversed(names):
        try:
            run.db.run(bk.drop_view(name))
        except Exception:  # a temp view lives only as long as the session anyway
            logger.debug(f"[ivm {run.model}] could not drop the temp view {name}")


def _apply_windows(run: Run, program: Program, view: View, log: LogEntry, marks: Mapping[str, tuple[int, int]],
                   windows: Mapping[str, tuple[int, int]]) -> Outcome:
    probes = Probes()
    asked = key_probes(run, program, windows, probes, _merged_state_keys(run, program, log, windows))
    position_probes(run, program, view.highs, probes)
    deletes = validate(run, windows, view.input_rows, log, probes)
    ranges = key_ranges(probes, asked)
    at = run_positions(run, program, log, view.highs, probes, view.upstream_snapshots)
    run.fault("after_validate")
    changed = list(view.changed)
    # a change that deletes absent rows of an input without a join index can only show in the
    # model's result or its aggregate state
    suspects = [k for k in changed if not run.keeps_index(program.inputs[k])] or changed
    target_key = target_sort_key(program, log.target_columns)
    change = Change(run, log, view.owned, windows, marks, ranges, deletes.inputs, deletes.inserting_only, target_key,
                    log.seq + 1, [c for c, _ in log.target_columns], suspects, at)
    # each table of appended pieces' rows at its last compaction (None: compacted now)
    compacted: dict[str, Optional[int]] = {n: log.counts.compacted.get(n) for n in change.owned.pieces}
    _apply_to_indexes(change, program, compacted)
    inserted, deleted = _apply_to_result_and_states(change, program, compacted)
    changes_from = maintain_when_due(run, change.seq, view.owned, log.snapshots, log.changes_from, log.seq)
    run.fault("before_commit")
    _commit(change, program, view, inserted, deleted, compacted, changes_from)
    return Outcome(mode="incremental", rows_inserted=inserted, rows_deleted=deleted, seq=change.seq,
                   statements=run.db.count)


def _apply_to_result_and_states(change: Change, program: Program,
                                compacted: dict[str, Optional[int]]) -> tuple[int, int]:
    """Publish the model's change, apply it to the target, add the change to each aggregate
    state — or, for a small leaf over one aggregate, update the state and rewrite the target
    from it. Returns the rows the target gains and loses."""
    write = target_write(change.run, program, change.log)
    if write is TargetWrite.FROM_STATE:
        return _apply_through_state(change, program, compacted)
    run, changed = change.run, list(change.windows)
    run_tag = uuid.uuid4().hex[:12]
    within = program.state_bounds(changed, change.key_ranges)
    two_pass = _two_pass_aggregates(change, program, within)
    staged, deltas = _staged_names(program, changed, run_tag, output_read=True, two_pass=two_pass)
    # a large state updated in two passes: its touched groups read once, by its change and its second pass
    touched = {(a, name): quote(f"_ivm_{run_tag}_{a}__{name}") for a, name in program.touched_states(changed, two_pass)}
    reading = program.env(change_leaf(run, program, change.windows, change.log, change.bounds, change.positions),
                          pinned_state(run, change.log), staged,
                          program.held_result(pinned(run.tables.target, run.tables.target_display, change.log),
                                              change.columns), change.inserting_only, deltas, within, touched)
    views: list[str] = []
    inserted = deleted = 0
    try:
        _stage(run, program, changed, reading, views)
        delta = program.delta_sql(set(changed), reading, list(change.columns))
        if delta is not None:
            # (a group state the target holds: computing the change refuses a group left with a
            # negative row count, which no state update does)
            if run.publishes:
                output = run.tables.changes
                _write_refusing(change, st.insert_output_changes(output, delta, change.columns, change.seq), None,
                                AGGREGATE_GROUP)
            else:  # no model reads it: kept in memory for the target's update only
                output = quote(f"_ivm_{run_tag}_change")
                views.append(output)
                _write_refusing(change, bk.cache_table(output, st.output_changes(delta, change.columns, change.seq)),
                                None, AGGREGATE_GROUP)
            run.fault("after_publish")
            if write is TargetWrite.REWRITE:
                inserted, deleted = _rewrite_target(change, output)
            elif write is TargetWrite.MERGE:
                inserted, deleted = _merge_into_target(change, output)
            else:
                inserted, deleted = _update_target(change, output, quote(f"_ivm_{run_tag}_target"), views)
            run.fault("after_target")
        _update_states(change, program, reading, compacted, two_pass)
    finally:
        _drop_views(run, views)
    return inserted, deleted


def _two_pass_aggregates(change: Change, program: Program, within: Mapping[str, object]) -> frozenset[str]:
    """The aggregates whose states the run updates in two passes (``Program.state_updates``):
    those whose update no key ranges bound (``within``) and whose group state is updated in place
    and large (``updates_in_two_passes``)."""
    run, log = change.run, change.log
    unbounded = {agg_id: run.state_display(agg_id, GROUPS) for agg_id in program.layouts if agg_id not in within}
    return frozenset(agg_id for agg_id, groups in unbounded.items()
                     if not change.rewrites(groups) and updates_in_two_passes(run, log, groups))


def _staged_names(program: Program, changed: list[str], run_tag: str, output_read: bool,
                  two_pass: frozenset[str] = frozenset()) -> tuple[dict[str, str], dict[str, str]]:
    """The temp views of the aggregates' child changes and own changes the run stages
    (``Program.stageable_aggregates``, ``Program.stageable_deltas``), by aggregate id."""
    children = {a: quote(f"_ivm_{run_tag}_{a}") for a in program.stageable_aggregates(changed, output_read, two_pass)}
    deltas = {a: quote(f"_ivm_{run_tag}_{a}_change")
              for a in program.stageable_deltas(changed, children, output_read)}
    return children, deltas


def _stage(run: Run, program: Program, changed: list[str], reading: Env, views: list[str]) -> None:
    """Compute what ``reading`` stages once each, bottom-up, and keep it in memory (each view
    appended to ``views`` as it is created: the run drops them last first)."""
    for statement in program.staged_changes(changed, reading):
        if statement.state == "child_change":
            views.append(reading.staged[statement.aggregate])
        elif statement.state == "change":
            views.append(reading.staged_deltas[statement.aggregate])
        else:  # a state's touched groups
            views.append(reading.touched[(statement.aggregate, statement.state)])
        run.db.run(bk.cache_table(views[-1], statement.sql))


def _update_states(change: Change, program: Program, reading: Env, compacted: dict[str, Optional[int]],
                   two_pass: frozenset[str]) -> None:
    """Add the change to each aggregate state (each statement refuses a group whose row count
    would become negative). A small state is rewritten; one of appended pieces is compacted
    (rewritten) once it has grown ``ivm_index_growth`` times, as a join index is; the states of
    the aggregates in ``two_pass`` are updated in two passes (``_two_pass_aggregates``)."""
    run = change.run

    def rewrites_state(agg_id: str, name: str) -> bool:
        display = run.state_display(agg_id, name)
        rewritten = change.rewrites(display) or (display in compacted and compaction_due(change, display))
        if rewritten and display in compacted:
            compacted[display] = None
        return rewritten

    for statement in program.state_updates(set(change.windows), reading, run.state_table, rewrites_state, two_pass):
        _write_refusing(change, statement.sql, statement.refused_sql, AGGREGATE_GROUP)
        run.fault(f"after_state:{statement.aggregate}__{statement.state}")


def _apply_through_state(change: Change, program: Program, compacted: dict[str, Optional[int]]) -> tuple[int, int]:
    """``TargetWrite.FROM_STATE``: add the change to each aggregate state, rewrite the target as the
    model's result read from the state as updated (a target that holds the group state: as the
    result of that state as the last commit left it plus the change), then count the rows it
    gained and lost
    against the target as the last commit left it — both read within the change's key ranges of
    the column the target is sorted by, when those bound every row the change adds or removes
    (``Program.result_bound``) — publishing them, when a model reads the change (a top-k
    model's). A child change several state statements would compute (a
    subquery's aggregate below the model's) is staged first (``Program.stageable_aggregates``)."""
    run, t = change.run, change.run.tables
    if isinstance(program.delta_plan(set(change.windows)), Empty):
        return 0, 0
    leaf = change_leaf(run, program, change.windows, change.log, change.bounds, change.positions)
    changed = list(change.windows)
    within = program.state_bounds(changed, change.key_ranges)
    two_pass = _two_pass_aggregates(change, program, within)
    staged, deltas = _staged_names(program, changed, uuid.uuid4().hex[:12], output_read=False, two_pass=two_pass)
    reading = program.env(leaf, pinned_state(run, change.log), staged, staged_deltas=deltas, within=within)
    held = program.result_held
    views: list[str] = []
    try:
        _stage(run, program, changed, reading, views)
        if held:  # the target is the group state: rewritten as it was plus the change
            result = program.rewritten_result_sql(changed, reading, list(change.columns))
            _write_refusing(change, st.rewrite_target_from(t.target, result, change.columns), None, AGGREGATE_GROUP)
            run.fault("after_target")
        _update_states(change, program, reading, compacted, two_pass)
    finally:
        _drop_views(run, views)
    if not held:
        result = program.result_sql(program.env(leaf, run.state_table), list(change.columns))
        run.db.run(st.rewrite_target_from(t.target, result, change.columns))
        run.fault("after_target")
    new, old = t.target, pinned(t.target, t.target_display, change.log)
    bound = program.result_bound(changed, change.key_ranges)
    if bound is not None:  # the rows outside the change's key ranges are the same in both
        position, ranges = bound
        slice_of = ranges.predicate(change.columns[position])
        new, old = st.within(new, slice_of), st.within(old, slice_of)
    if run.publishes:
        run.db.run(st.diff_into_changes(t.changes, new, old, change.columns, change.seq))
        run.fault("after_publish")
        counts = st.change_counts(t.changes, change.seq)
    else:
        counted = run.metadata.rewrite_counts(t.target, change.log.snapshots.get(t.target_display))
        if counted is not None:  # (the embedded session's catalog, for a small target)
            return counted
        counts = st.rewrite_counts(new, old, change.columns)
    inserted, deleted = run.db.run(counts, fetch=True)[0]
    return int(inserted or 0), int(deleted or 0)


def _rewrite_target(change: Change, output: str) -> tuple[int, int]:
    """A small target: count the change (``output``: as published, or staged), then rewrite
    the target with it (one statement that refuses deletes of absent rows)."""
    run, t, seq = change.run, change.run.tables, change.seq
    target = pinned(t.target, t.target_display, change.log)
    inserted, deleted = (int(v or 0) for v in run.db.run(st.change_counts(output, seq), fetch=True)[0])
    if inserted or deleted:
        _write_refusing(change, st.rewrite_target(t.target, target, output, change.columns, seq),
                        st.rewrite_target_refused(target, output, change.columns, seq), "the model's result")
    return inserted, deleted


def _merge_into_target(change: Change, output: str) -> tuple[int, int]:
    """A large target that holds every row once (``Program.result_is_set``: each row the change
    deletes has one copy there): one MERGE matching whole rows deletes and inserts them, reading
    the target within the key ranges of the deleted rows, and refuses a delete of a row that is
    not there. The ranges and the counts are asked in one statement. When no ranges bound the
    deleted rows and the target is large (``updates_in_two_passes``), two passes: the MERGE
    without its insert clause (the change broadcast to the target's scan), then an INSERT of
    the new rows that checks, from Iceberg's metadata, that the first deleted every row the
    change deletes."""
    t, seq, columns = change.run.tables, change.seq, change.columns
    probes = Probes()
    probes.add(st.change_counts_probe("n", output, seq))
    ranges = _deleted_key_ranges(change, output, probes)
    bounds = None if ranges is None else ranges[1].predicate(ranges[0], "t")
    inserted, deleted = (int(v or 0) for v in probes.rows["n"][2:4])
    if not (inserted or deleted):
        return inserted, deleted
    target = pinned(t.target, t.target_display, change.log)
    refused = st.rewrite_target_refused(target, output, columns, seq)
    committed = change.log.snapshots.get(t.target_display)
    if bounds is None and committed is not None and updates_in_two_passes(change.run, change.log, t.target_display):
        # the second pass refuses a delete of a row the target does not hold: the first leaves it undeleted
        _write_refusing(change, st.delete_from_set_target(t.target, output, columns, seq), refused,
                        "the model's result")
        change.run.fault("between_passes")
        expected = f"({bk.live_rows_at(t.target, committed)}) - {int(deleted)}"
        _write_refusing(change, st.insert_into_set_target(t.target, output, columns, seq, bk.live_rows(t.target),
                                                          expected), refused, "the model's result")
    else:
        _write_refusing(change, st.merge_into_set_target(t.target, output, columns, seq, bounds), refused,
                        "the model's result")
    return inserted, deleted


def _update_target(change: Change, output: str, staged: str, views: list[str]) -> tuple[int, int]:
    """A large target that may hold a row more than once. The change's counts and the key ranges
    of the rows it deletes are asked in one statement; then

    * a change that only inserts: its rows inserted;
    * a change that deletes each row once (weight −1), within key ranges: one MERGE deletes every
      copy of those rows, refusing a row that is not there (``st.delete_every_copy``); the
      target's live rows (Iceberg's metadata: on the embedded session no statement) say whether
      it deleted more copies than the change does, and the INSERT of the new rows then puts
      those back, counted in the target as the last commit left it;
    * any other (a row deleted more than once, or no ranges): the change staged with the copies
      each deleted row has, refused if it deletes absent rows, then DELETE and INSERT. The stage
      (the temp view ``staged``, appended to ``views``) reads the target pinned (``bk.pinned``):
      it stays cached through the DELETE and counts the copies the target had."""
    run, t, seq, columns = change.run, change.run.tables, change.seq, change.columns
    target = pinned(t.target, t.target_display, change.log)
    probes = Probes()
    probes.add(st.change_counts_probe("n", output, seq))
    probes.add(st.deleted_rows_probe("d", output, seq))
    ranges = _deleted_key_ranges(change, output, probes)
    inserted, deleted = (int(v or 0) for v in probes.rows["n"][2:4])
    if not deleted:
        if inserted:
            run.db.run(st.insert_added_rows(t.target, output, columns, seq))
        return inserted, deleted
    if ranges is not None and int(probes.rows["d"][3] or 0) == deleted:
        _delete_every_copy(change, output, target, ranges, inserted, deleted)
        return inserted, deleted
    bounds = None if ranges is None else ranges[1].predicate(ranges[0])
    views.append(staged)
    run.db.run(bk.cache_table(staged, st.target_change(target, output, columns, seq, bounds)))
    absent, deletes, inserts, kept, inserted, deleted = (
        int(v or 0) for v in run.db.run(st.target_change_counts(staged), fetch=True)[0])
    if absent:
        _refuse_absent(change, absent, "the model's result")
    if deletes:
        run.db.run(st.delete_from_target(t.target, staged, columns, bounds))
    if inserts and kept:  # copies go back: only the stage knows how many
        run.db.run(st.insert_into_target(t.target, staged, columns))
    elif inserts:
        run.db.run(st.insert_added_rows(t.target, output, columns, seq))
    return inserted, deleted


def _delete_every_copy(change: Change, output: str, target: str, ranges: tuple[str, st.KeyRanges], inserted: int,
                       deleted: int) -> None:
    """``_update_target`` of a change that deletes each of its ``deleted`` rows once, within the
    key ``ranges`` (over the target's sort column): one MERGE deletes every copy of them,
    refusing a row the target lacks; then, when the target's live rows fell by more than
    ``deleted`` (some row had more copies, or the counts are unknown), the INSERT of the new
    rows puts back every copy but one of each deleted row, counted in ``target`` (the target as
    the last commit left it)."""
    run, t, seq, columns = change.run, change.run.tables, change.seq, change.columns
    column, key_ranges = ranges
    _write_refusing(change, st.delete_every_copy(t.target, output, columns, seq, key_ranges.predicate(column, "t")),
                    st.rewrite_target_refused(target, output, columns, seq), "the model's result")
    run.fault("between_passes")
    held = change.log.counts.tables.get(t.target_display)
    left = run.metadata.read({LIVE_ROWS: Measure(LIVE_ROWS, t.target)})[LIVE_ROWS]
    if held is not None and left is not None and held - left == deleted:  # one copy of each row
        if inserted:
            run.db.run(st.insert_added_rows(t.target, output, columns, seq))
    else:
        run.db.run(st.insert_rows_and_copies(t.target, output, columns, seq, target, key_ranges.predicate(column)))


def _deleted_key_ranges(change: Change, output: str, probes: Probes) -> Optional[tuple[str, st.KeyRanges]]:
    """The target's sort column (``Program.target_key``; the target is sorted by it at its
    build) and the key ranges of the rows the published change deletes over it: the target is
    read only within them. None when the target has no such column, or the ranges cover most of
    the target's key space (its least and greatest key from Iceberg's metadata, asked in the same
    statement as the caller's other ``probes``)."""
    if change.target_key is None:
        probes.ask(change.run)
        return None
    column, spark_type = change.target_key
    t = change.run.tables
    probes.add(st.key_values("t", output, column, change.seq - 1, change.seq, deletes_only=True))
    ask_key_span(change.run, probes, "t_span", t.target, column)
    probes.ask(change.run)
    lo, hi, keys = probes.rows["t"][-3:]
    ranges = key_range(spark_type, lo, hi, keys, probes.rows["t_span"][-3:-1])
    return None if ranges is None else (column, ranges)


def _merged_state_keys(run: Run, program: Program, log: LogEntry,
                       windows: Mapping[str, tuple[int, int]]) -> set[tuple[str, str]]:
    """(input, column) of the group keys whose change ranges bound a state's MERGE
    (``Program.bounded_keys``): of each aggregate the run updates in place (not rewritten)."""
    changed = set(windows)
    return {source for agg_id in program.layouts
            if not rewrites(run, log, run.state_display(agg_id, GROUPS))
            for _, sources in program.bounded_keys(agg_id, changed) for source in sources}


AGGREGATE_GROUP = "a group of the model's aggregate"  # what a refused change of an aggregate's group names


class GroupsIrregular(Exception):
    """The change leaves a group of an aggregate whose target holds its group state irregular
    (``IRREGULAR_GROUP``): the run was undone; the model is to be rebuilt with the group state in
    a table of its own."""


def _write_refusing(change: Change, sql: str, refused_sql: Optional[str], what: str,
                    suspects: Optional[Sequence[str]] = None) -> None:
    """Run a write that refuses a negative multiplicity (``raise_error``): the statement that
    applies the change is the one that checks it (no second scan). One that leaves a group its
    target row would not determine (``IRREGULAR_GROUP``) undoes the run: ``GroupsIrregular``."""
    try:
        change.run.db.run(sql)
    except DbtRuntimeError as e:
        if IRREGULAR_GROUP in str(e):
            undo(change.run, change.log, change.owned)
            raise GroupsIrregular() from e
        if ROW_TWICE in str(e):
            undo(change.run, change.log, change.owned)
            raise change.run.fail(f"{change.run.tables.target_display}: {ROW_TWICE} — the target and the state "
                                  "its change was computed from disagree; run the model with --full-refresh") from e
        if ABSENT_ROWS not in str(e):
            raise
        bad = int(change.run.db.run(refused_sql, fetch=True)[0][0] or 0) if refused_sql else 0
        _refuse_absent(change, bad, what, e, suspects)


_WINDOW_OF = {SNAPSHOTS: "snapshots", DIFFED: "its difference from the copy of sequence"}


def _refuse_absent(change: Change, bad: int, what: str, cause: Optional[Exception] = None,
                   suspects: Optional[Sequence[str]] = None) -> None:
    """The change deletes rows that are not there: undo what the run wrote, name the inputs."""
    run = change.run
    undo(run, change.log, change.owned)
    suspects = suspects or change.suspects
    tables = ", ".join(run.inputs[k].display_changes for k in suspects)
    windows = "; ".join(f"{k}: {_WINDOW_OF.get(run.inputs[k].kind, '_ivm_seq in')} "
                        f"({change.marks[k][0]}, {change.marks[k][1]}]" for k in suspects)
    count = f"{bad} row(s) of {what}" if bad else f"rows of {what}"
    raise run.fail(
        f"change table {tables}: the change deletes rows that do not exist — {count} would get a negative "
        f"multiplicity ({windows})"
    ) from cause


def _apply_to_indexes(change: Change, program: Program, compacted: dict[str, Optional[int]]) -> None:
    """Add each changed input's change to its join index: appended, or the index compacted once
    it has grown ``ivm_index_growth`` times its size at its last compaction. Either write
    refuses a change that deletes rows the index does not hold (the append reads the index as
    the last commit left it, within the change's key ranges, when the window has deletes).
    Marks in ``compacted`` the indexes compacted now (None: to be counted by the commit)."""
    run, log = change.run, change.log
    for key, (low, high) in change.windows.items():
        use = program.inputs.get(key)
        if use is None or not run.keeps_index(use):
            continue
        delta = index_delta_sql(run, key, use, low, high)
        name = run.tables.index_display(key)
        index = run.tables.index(key)
        read = pinned(index, name, log)
        if key in change.bounds:
            read = st.within(read, change.bounds[key])
        refused = st.negative_after(delta, read, use.columns)
        if compaction_due(change, name):
            sql = st.compact_state(index, delta, use.columns, use.cluster_key(input_sizes(run, log.counts.inputs)))
            compacted[name] = None
        else:
            sql = st.append_to_state(index, delta, use.columns, read if key in change.deletes else None)
        _write_refusing(change, sql, refused, f"the input {key}", [key])
        run.fault(f"after_state:{key}")


def compaction_due(change: Change, name: str) -> bool:
    """Whether a table of appended pieces (a join index, a window's state) has grown past
    ``ivm_index_growth`` times its rows at its last compaction (or was never counted)."""
    counts = change.log.counts
    last = counts.compacted.get(name)
    return last is None or counts.index_rows.get(name, 0) > change.run.config.index_growth * max(last, 1)


def _costs(change: Change, view: View) -> Costs:
    """This run's cost, with the last rebuild's and the smaller run's from the last commit."""
    rows = change_rows(change.run, view)
    last = change.log.costs
    if rows is None:
        return last
    return last.applied(Cost(change.seq, change.run.seconds(), rows))


def _commit(change: Change, program: Program, view: View, inserted: int, deleted: int,
            compacted: Mapping[str, Optional[int]], changes_from: int) -> None:
    """Log 'committed': what the run consumed, and — measured from Iceberg's metadata under the
    lock (metadata.py: read from the embedded session's catalog, or subqueries of this same
    INSERT) — the target's snapshot, every owned table's snapshot, each index's rows (and its
    rows at compaction for those compacted now), the target's and each state's rows."""
    run, owned = change.run, change.owned.tables
    pieces, rewritable = change.owned.pieces, change.owned.rewritable
    measured = run.metadata.expressions({
        **{(SNAPSHOT, n): Measure(SNAPSHOT, t) for n, t in owned.items()},
        **{(ROWS, n): change.owned.measure(ROWS, n) for n in pieces},  # (compacted ones among them)
        **{(LIVE_ROWS, n): change.owned.measure(LIVE_ROWS, n) for n in rewritable},
    })
    at_compaction = [(n, f"CAST({int(c)} AS BIGINT)") for n, c in compacted.items() if c is not None]
    at_compaction += [(n, measured[(ROWS, n)]) for n, c in compacted.items() if c is None]
    row_counts = row_counts_measured(
        view.input_rows, view.input_snapshots,
        compacted=bk.json_map(sorted(at_compaction)),
        index_rows=bk.json_map([(n, measured[(ROWS, n)]) for n in sorted(pieces)]),
        tables=bk.json_map([(n, measured[(LIVE_ROWS, n)]) for n in sorted(rewritable)]),
        costs=_costs(change, view),
        types=program.types,
        published=(change.log.counts.published or 0) + (inserted + deleted if run.publishes else 0),
    )
    write_log(run, Entry(
        seq=change.seq, status="committed", mode="incremental", reason=None, fingerprint=run_fingerprint(run, program),
        highs=view.highs, changes_from=changes_from, inserted=inserted, deleted=deleted,
        columns=change.log.target_columns,
        target_snapshot=measured[(SNAPSHOT, run.tables.target_display)],
        snapshots=bk.json_map([(n, measured[(SNAPSHOT, n)]) for n in sorted(owned)]),
        row_counts=row_counts,
    ))
