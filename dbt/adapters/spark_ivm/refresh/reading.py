"""The inputs and the state as SQL relations: an input's change window, an input at its
captured mark, its integrated value before or after the change (a join index, or the input read
at its position: a tag or a snapshot), and the leaves the compiled plan reads them through."""

from __future__ import annotations

import json
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Collection, Mapping, Optional, Sequence

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.ivm_inputs import CHANGE_TABLE, DIFFED, IVM_MODEL, SNAPSHOTS
from dbt.adapters.spark_ivm.refresh.db import logger, optional_int
from dbt.adapters.spark_ivm.refresh.context import Run
from dbt.adapters.spark_ivm.refresh.iceberg_files import StagedScans
from dbt.adapters.spark_ivm.refresh.records import Position
from dbt.adapters.spark_ivm.refresh.validate import Probes
from ivm_core import bookkeeping as bk
from ivm_core import statements as st
from ivm_core.compiler import InputUse, Program
from ivm_core.plan import Scan, Version, at_version
from ivm_core.sqlgen import to_sql

if TYPE_CHECKING:
    from dbt.adapters.spark_ivm.refresh.log import LogEntry

Leaf = Callable[[Scan], str]


@dataclass(frozen=True)
class Staged:
    """The inputs' changes a run computed once and holds in memory (``stage_changes``)."""

    windows: dict[str, tuple[int, int]]  # input -> the window to read its change by
    unchanged: frozenset[str]  # diffed inputs whose difference is empty
    reads: dict[str, dict]  # input -> how its change was read and what that read (``Read``)


# how an input's change was read (``stage_changes``), as the run's result reports it
BY_FILES = "files"  # the data files its snapshots changed (iceberg_files.py)
BY_CHANGELOG = "changelog"  # Iceberg's changelog: the data files its snapshots added and removed
BY_DIFFERENCE = "difference"  # the table read whole at both snapshots
WHOLE = "whole"  # a diffed input, read whole


def stage_changes(run: Run, program: Program, log: "LogEntry", windows: Mapping[str, tuple[int, int]],
                  diffed: frozenset[str], views: list[str], scans: StagedScans) -> Staged:
    """Compute, once, the change of each changed input that has no change table, as that input's
    change relation (a cached temp view, summed per distinct row of the columns the model
    reads), to be read as the window ``st.SNAPSHOT_WINDOW``:

    * an input read through its Iceberg snapshots, from the snapshot the model consumed to the
      captured one: on the embedded session, from the data files the snapshots in between
      changed (iceberg_files.py: added, removed, or given delete files; compactions skipped),
      staged in ``scans``; elsewhere from Iceberg's changelog (the data files they added and
      removed), or by difference of the two snapshots where it cannot be read so (delete files
      of merge-on-read); and by difference for a change that is not a window of the table's
      history (``diffed``: replaced, rolled back);
    * a diffed input (``ivm_inputs.DIFFED``): the input read whole, less the copy the model
      keeps of it (its join index as the last commit left it: the rows its filters let
      through); an empty difference makes the input ``unchanged``.

    Each temp view is appended to ``views`` as it is created (the run drops them, last first)."""
    read_windows = dict(windows)
    diffs: list[str] = []
    reads: dict[str, dict] = {}
    for key, (low, high) in sorted(windows.items()):
        source = run.inputs[key]
        use = program.inputs.get(key)
        if use is None:
            continue
        if source.kind == DIFFED:
            copy = pinned(run.tables.index(key), run.tables.index_display(key), log)
            now = indexed_rows(use, st.weighted_rows(source.base, use.columns))
            views.append(source.changes)
            run.db.run(bk.cache_table(source.changes, st.staged_change(
                st.zset_sum([(now, 1), (bk.zset_of(copy, use.columns), -1)], use.columns), use.columns)))
            diffs.append(key)
            read_windows[key] = st.SNAPSHOT_WINDOW
            reads[key] = {"how": WHOLE}
            continue
        if source.kind != SNAPSHOTS:
            continue
        read_windows[key] = st.SNAPSHOT_WINDOW
        reads[key] = _stage_snapshot_change(run, key, use.columns, low, high, key in diffed, views, scans)
    unchanged: set[str] = set()
    if diffs:
        for key in diffs:
            logger.info(f"incremental_ivm model '{run.model}': {key} ({run.inputs[key].what}) was read whole and "
                        "diffed against the model's copy of it")
        counted = run.db.run(bk.union_all([bk.staged_rows(key, run.inputs[key].changes) for key in diffs]),
                             fetch=True)
        unchanged = {str(key) for key, rows in counted if not int(rows or 0)}
    return Staged(read_windows, frozenset(unchanged), reads)


def _stage_snapshot_change(run: Run, key: str, columns: Sequence[str], low: int, high: int, replaced: bool,
                           views: list[str], scans: StagedScans) -> dict:
    """Stage the change of Iceberg input ``key`` from snapshot ``low`` to ``high`` (see
    ``stage_changes``); returns how it was read."""
    source = run.inputs[key]
    staged = source.changes
    change = None if replaced else run.metadata.file_change(source.base, low, high)
    if change is not None:
        # (name, tasks, weight, the rows their deletes delete rather than their live rows)
        reads = [(f"{staged}__at_high", change.at_high, 1, False), (f"{staged}__at_low", change.at_low, -1, False)]
        if change.marks_deleted:  # the rows deleted at the consumed snapshot, less those at the captured one
            reads += [(f"{staged}__deleted_low", change.deletes_low, 1, True),
                      (f"{staged}__deleted_high", change.deletes_high, -1, True)]
        else:  # the live rows at the captured snapshot, less those at the consumed one
            reads += [(f"{staged}__live_high", change.deletes_high, 1, False),
                      (f"{staged}__live_low", change.deletes_low, -1, False)]
        sides = []
        for name, tasks, weight, deleted in reads:
            if tasks:
                views.append(name)
                run.metadata.stage_scan(scans, source.base, tasks, name, deleted)
                sides.append((st.weighted_rows(name, columns), weight))
        if not sides:  # only compactions: nothing to read
            sides.append((st.weighted_rows(f"(SELECT * FROM {source.base} WHERE FALSE)", columns), 1))
        views.append(staged)
        run.db.run(bk.cache_table(staged, st.staged_change(st.zset_sum(sides, columns), columns)))
        logger.info(f"incremental_ivm model '{run.model}': the change of {key} from snapshot {low} to {high} was "
                    f"read from the {change.files} data files it touched ({change.bytes} bytes, {change.rows} rows, "
                    f"{change.delete_files} delete files applied)")
        return {"how": BY_FILES, "files": change.files, "bytes": change.bytes, "rows": change.rows,
                "delete_files": change.delete_files}
    if not replaced:
        changelog = f"{staged}__changelog"
        run.db.run(st.changelog_view(source.base, low, high, changelog))
        views.append(changelog)
        views.append(staged)  # in the order created (the run drops them last first)
        try:
            run.db.run(bk.cache_table(staged, st.changelog_changes(changelog, columns)))
            return {"how": BY_CHANGELOG}
        except Exception as e:  # how the error arrives depends on the connection method
            if "delete files are currently not supported" not in str(e).lower():
                raise
    else:
        views.append(staged)
    logger.info(f"incremental_ivm model '{run.model}': the change of {key} from snapshot {low} to {high} "
                "is read by difference of the two (whole table): the snapshots in between "
                + ("are not its ancestors (replaced or rolled back)" if replaced else "have delete files"))
    old = bk.pinned(source.base, low) if low else None  # consumed nothing: the table was empty
    run.db.run(bk.cache_table(staged, st.staged_change(
        st.difference(bk.pinned(source.base, high), old, columns), columns)))
    return {"how": BY_DIFFERENCE}


def delta_sql(run: Run, key: str, columns: Sequence[str], low: int, high: int, bounds: Optional[str] = None,
              consolidated: bool = True) -> str:
    """The input's change window ``(low, high]``, consolidated — or its rows as they are, for a
    reader that sums weights itself (``Program.unconsolidated_inputs``) — (``bounds``: see
    ``key_bounds``)."""
    if consolidated:
        return st.consolidated_changes(run.inputs[key].changes, columns, low, high, bounds)
    return st.window_changes(run.inputs[key].changes, columns, low, high, bounds)


@dataclass(frozen=True)
class KeyProbe:
    """A join key of a changed input whose change window's values a run asks for, and the
    table whose key space decides whether their ranges are worth stating (the input's join
    index; None: the ranges' own span)."""

    input: str
    column: str
    spark_type: str
    space: Optional[str]


def key_probes(run: Run, program: Program, windows: Mapping[str, tuple[int, int]],
               probes: Probes, state_keys: Collection[tuple[str, str]] = ()) -> dict[str, KeyProbe]:
    """Add to ``probes``, per join key of each changed input (of a type that gets ranges), the
    values of its change window (``st.key_values``) and the key's span in the relation the
    run reads the input's integrated value from (``ask_key_span``: its join index, or its base)
    — none when no update path reads an input's integrated value —, and the values of each
    (input, column) of ``state_keys`` (an aggregate's group key bounding its state's update,
    ``Program.bounded_keys``). ``key_ranges`` reads the answers."""
    joined = any(use.stateful for use in program.inputs.values())
    asked: dict[str, KeyProbe] = {}
    for key, (low, high) in sorted(windows.items()):
        use = program.inputs.get(key)
        if use is None:
            continue
        columns = list(use.key_columns) if joined else []
        columns += [c for k, c in sorted(state_keys) if k == key and c not in columns]
        for column in columns:
            spark_type = use.types.get(column, "")
            if st.ranged(spark_type):
                label = f"k{len(asked)}"
                space = (None if column not in use.key_columns else run.tables.index(key) if run.keeps_index(use)
                         else positioned_relation(run, key) if use.stateful else None)
                asked[label] = KeyProbe(key, column, spark_type, space)
                probes.add(st.key_values(label, run.inputs[key].changes, column, low, high))
                if space is not None:
                    ask_key_span(run, probes, f"{label}_span", space, column)
    return asked


def ask_key_span(run: Run, probes: Probes, label: str, table: str, column: str) -> None:
    """Add to ``probes`` under ``label`` the least and greatest ``column`` in ``table``
    (``st.key_span``): answered by the embedded session's catalog when it can, else asked."""
    span = run.metadata.key_span(table, column)
    if span is None:
        probes.add(st.key_span(label, table, column))
    else:
        probes.answer(label, st.probe_row(lo=span[0], hi=span[1]))


def key_ranges(probes: Probes, asked: Mapping[str, KeyProbe]) -> dict[tuple[str, str], st.KeyRanges]:
    """Per (changed input, key column), the ranges that bound its change window's values —
    none where they cover most of the key space (``key_range``)."""
    found: dict[tuple[str, str], st.KeyRanges] = {}
    for label, probe in sorted(asked.items()):
        lo, hi, keys = probes.rows[label][-3:]
        span = probes.rows[f"{label}_span"][-3:-1] if probe.space is not None else (None, None)
        ranges = key_range(probe.spark_type, lo, hi, keys, span)
        if ranges is not None:
            found[(probe.input, probe.column)] = ranges
    return found


def key_bounds(ranges: Mapping[tuple[str, str], st.KeyRanges]) -> dict[str, str]:
    """Per changed input, a literal predicate bounding its change window's join keys.

    The change's leaf states it: Spark infers it for the other side of every ``a = b`` the
    change is joined on and pushes it into that join index's scan, where Iceberg skips the
    files and row groups outside the ranges (an index is sorted by its ``cluster_key``)."""
    predicates: dict[str, list[str]] = {}
    for (key, column), r in sorted(ranges.items()):
        predicates.setdefault(key, []).append(r.predicate(column))
    return {key: " AND ".join(p) for key, p in predicates.items()}


def key_range(spark_type: str, lo: Optional[str], hi: Optional[str], keys,
              span: Sequence[Optional[str]] = (None, None)) -> Optional[st.KeyRanges]:
    """A ``key_values`` row as the ranges that bound its keys (``st.cut_ranges``); None when
    they cover most of the key space (``st.narrow`` within ``span``, the table's least and
    greatest key: random keys would prune nothing)."""
    if isinstance(keys, str):  # an array over the thrift server comes as JSON text
        keys = json.loads(keys)
    ranges = st.cut_ranges(lo, hi, [str(k) for k in keys] if keys is not None else None, spark_type)
    least, greatest = (None if v is None else str(v) for v in span)
    if not st.narrow(ranges, spark_type, (least, greatest)):
        return None
    return st.KeyRanges(spark_type, tuple(ranges))


def target_sort_key(program: Program, columns: Sequence[Sequence[str]]) -> Optional[tuple[str, str]]:
    """(name, type) of the target column its rows are sorted by (``Program.target_key``) among
    the target's ``columns``, when it is of a type that gets key ranges; else None."""
    position = program.target_key()
    if position is None or position >= len(columns) or not st.ranged(columns[position][1]):
        return None
    name, spark_type = columns[position]
    return name, spark_type


def indexed_rows(use: InputUse, zset_sql: str) -> str:
    """The rows of an input's Z-set that its join index keeps (``InputUse.index_filter``)."""
    return st.filtered(zset_sql, use.index_filter) if use.index_filter else zset_sql


def index_delta_sql(run: Run, key: str, use: InputUse, low: int, high: int, bounds: Optional[str] = None) -> str:
    """The change window of an input as its join index takes it."""
    return indexed_rows(use, delta_sql(run, key, use.columns, low, high, bounds))


def table_position(table: str, snapshot: Optional[int], seq: int) -> Position:
    """``table`` at ``snapshot``, holding an input's changes up to ``seq``; no snapshot (0 or
    None): the table had none then — it was empty. An upstream model's target at the snapshot
    its commit at ``seq`` recorded is one."""
    relation = table if snapshot else f"(SELECT * FROM {table} WHERE FALSE)"
    return Position(relation, snapshot or None, seq)


def snapshot_position(table: str, snapshot: int) -> Position:
    """An Iceberg input at a snapshot id it consumed or captured (its mark is the id)."""
    return table_position(table, snapshot, snapshot)


def positioned_relation(run: Run, key: str) -> str:
    """The relation an input without a join index is read from at its positions."""
    source = run.inputs[key]
    return source.upstream_model.target if source.kind == IVM_MODEL else source.base


def positions(run: Run, highs: Mapping[str, int],
              upstream_snapshots: Optional[Mapping[str, Optional[int]]] = None) -> dict[str, Position]:
    """Where each input's contents at its high mark can be read from: every Iceberg input at its
    captured snapshot, every diffed input as it is, every upstream model's target at the
    snapshot its commit at the mark recorded (``upstream_snapshots``, as the capture read them;
    those not given are asked) and every ``base: tagged`` source at its greatest tag at or below
    the mark, those asked in one statement (an input with no position is read from its whole
    change history)."""
    upstream_snapshots = upstream_snapshots or {}
    relations, parts = {}, {}
    at = {}
    for key, source in run.inputs.items():
        if source.kind == SNAPSHOTS:  # the table at the captured snapshot
            at[key] = snapshot_position(source.base, highs.get(key, 0))
        elif source.kind == DIFFED:  # the relation as it is
            at[key] = Position(source.base, None, highs.get(key, 0))
        elif source.kind == IVM_MODEL and key in upstream_snapshots:
            at[key] = table_position(source.upstream_model.target, upstream_snapshots[key], highs.get(key, 0))
        elif source.kind == IVM_MODEL:
            relations[key] = source.upstream_model.target
            parts[key] = bk.upstream_target_snapshot(key, source.upstream_model.log, highs.get(key, 0))
        elif source.kind == CHANGE_TABLE and source.base:
            tags = run.metadata.base_tags(source.base)  # (the embedded session's catalog)
            if tags is not None:
                tag = bk.nearest_tag(tags, highs.get(key, 0), above=False)
                if tag is not None:
                    at[key] = Position(source.base, tag[0], tag[1])
                continue
            relations[key] = source.base
            parts[key] = bk.base_tag(key, source.base, highs.get(key, 0))
    if not parts:
        return at
    try:
        rows = run.db.run(bk.union_all(list(parts.values())), fetch=True)
    except DbtRuntimeError:
        for key, sql in parts.items():  # name the input whose tags cannot be read
            try:
                run.db.run(sql, fetch=True)
            except DbtRuntimeError as e:
                if run.inputs[key].kind != CHANGE_TABLE:
                    raise
                lines = [line.strip() for line in str(e).splitlines() if line.strip().lower() not in
                         ("", "runtime error", "database error")]
                reason = (lines or [type(e).__name__])[0][:300]
                raise run.fail(f"source {key} is declared base: tagged, but its tags cannot be read from "
                               f"{relations[key]}.refs (it must be an Iceberg table): {reason}") from e
        raise
    at.update({k: table_position(relations[k], optional_int(snap), int(seq)) for k, snap, seq in rows})
    return at


@dataclass(frozen=True)
class Positions:
    """Where an incremental run reads the integrated value of each input it keeps no join index
    of (``Run.reads_at_position``), before and after the change: an Iceberg input at the
    snapshots it consumed and captured; a ``base: tagged`` source at one tag, an upstream model
    at its target's snapshot its commit at the captured mark recorded, each patched with the
    change rows between that position and each mark (``zset_at``). ``marks``: input ->
    (consumed, captured)."""

    marks: Mapping[str, tuple[int, int]]
    before: Mapping[str, Optional[Position]]
    after: Mapping[str, Optional[Position]]

    def zset(self, run: Run, key: str, columns: Sequence[str], after_change: bool) -> str:
        consumed, captured = self.marks[key]
        mark, position = (captured, self.after[key]) if after_change else (consumed, self.before[key])
        return st.aliased(zset_at(run, key, columns, mark, position), "_ivm_at")


def zset_at(run: Run, key: str, columns: Sequence[str], mark: int, position: Optional[Position]) -> str:
    """The input at ``mark`` as a Z-set (pieces of either sign, not summed): its position's
    rows plus the change rows from its ``seq`` up to the mark — or minus those from the mark up
    to it, for a position above the mark; no position: its change history, consolidated."""
    if position is None:
        return st.consolidated_changes(run.inputs[key].changes, columns, None, mark)
    rows = position.rows(columns)
    if position.seq == mark:
        return rows
    low, high, sign = (position.seq, mark, 1) if position.seq < mark else (mark, position.seq, -1)
    return st.zset_sum([(rows, 1), (delta_sql(run, key, columns, low, high), sign)], columns)


def _tag_label(key: str, above: bool) -> str:
    return f"tag {'above' if above else 'at'} {key}"


def _positioned(run: Run, program: Program) -> list[str]:
    return sorted(k for k, use in program.inputs.items() if run.reads_at_position(use))


def position_probes(run: Run, program: Program, highs: Mapping[str, int], probes: Probes) -> None:
    """Add to ``probes``, for each ``base: tagged`` input an incremental run reads at its
    position, the tags nearest its captured mark: the greatest at or below it and the least
    above it. ``run_positions`` chooses."""
    for key in _positioned(run, program):
        source = run.inputs[key]
        if source.kind != CHANGE_TABLE:
            continue
        tags = run.metadata.base_tags(source.base)  # (the embedded session's catalog: no probe)
        for above in (False, True):
            if tags is None:
                probes.add(bk.tag_probe(_tag_label(key, above), source.base, highs[key], above))
            else:
                tag = bk.nearest_tag(tags, highs[key], above)
                probes.answer(_tag_label(key, above), st.probe_row(
                    lo=None if tag is None else str(tag[0]), hi=None if tag is None else str(tag[1])))


def run_positions(run: Run, program: Program, log: "LogEntry", highs: Mapping[str, int],
                  probes: Probes, upstream_snapshots: Mapping[str, Optional[int]]) -> Positions:
    """The positions of the inputs an incremental run reads at theirs (``Positions``).

    An upstream model's is its target at the snapshot the capture read with its high mark
    (``upstream_snapshots``): the reader's old value is that less the changes the upstream
    published above the consumed mark, which are kept until every reader consumed them.

    A tagged input's tag is the greatest at or below the captured mark when that is at or
    above the consumed one; else the least above the captured mark; else the greatest below
    (none: the history, with a warning). Change rows above the consumed mark are never pruned
    (a producer prunes only what every reader consumed), and none between a tag below the
    consumed mark and the mark are unless a tag above it exists: every change the chosen tag is
    patched with is there to read."""
    marks: dict[str, tuple[int, int]] = {}
    before: dict[str, Optional[Position]] = {}
    after: dict[str, Optional[Position]] = {}
    for key in _positioned(run, program):
        source = run.inputs[key]
        consumed, captured = log.watermarks.get(key, 0), highs[key]
        marks[key] = (consumed, captured)
        if source.kind == SNAPSHOTS:  # the marks are snapshot ids
            before[key], after[key] = snapshot_position(source.base, consumed), snapshot_position(source.base, captured)
            continue
        if source.kind == IVM_MODEL:
            before[key] = after[key] = table_position(source.upstream_model.target, upstream_snapshots[key], captured)
            continue
        found: dict[bool, Position] = {}
        for above in (False, True):
            row = probes.rows.get(_tag_label(key, above))
            if row is not None and row[5] is not None:
                found[above] = Position(source.base, optional_int(row[4]), int(row[5]))
        position: Optional[Position]
        if False in found and found[False].seq >= consumed:
            position = found[False]
        else:
            position = found.get(True) or found.get(False)
        if position is None and captured:
            logger.warning(f"incremental_ivm model '{run.model}': {key} is declared base: tagged but has no "
                           f"tag {bk.BASE_TAG_PREFIX}<s>: read from its change history")
        before[key] = after[key] = position
    return Positions(marks, before, after)


def snapshot_zset(run: Run, key: str, columns: Sequence[str], high: int, position: Optional[Position]) -> str:
    """The input at its high mark as a Z-set over ``columns``, in pieces of positive weight: its
    ``position``'s rows at weight 1, patched with the changes above it (``st.patched``); with no
    position, its change history consolidated up to the mark."""
    if position is None:
        return st.consolidated_changes(run.inputs[key].changes, columns, None, high)
    rows = position.rows(columns)
    if position.seq >= high:
        return rows
    return st.patched(rows, delta_sql(run, key, columns, position.seq, high), columns)


def bag_at(run: Run, key: str, columns: Sequence[tuple[str, str]], present: Sequence[str], high: int,
           position: Optional[Position]) -> str:
    """The input at its high mark as the bag of rows the model's own SQL reads, with all its
    ``columns`` (those not ``present`` as typed NULLs): its position's relation itself when that
    holds the mark, else ``snapshot_zset`` with each row repeated."""
    if position is not None and position.seq >= high:
        return st.selected(bk.pinned(position.relation, position.snapshot), [c for c, _ in columns])
    return st.exploded(snapshot_zset(run, key, present, high, position), columns, present)


def pinned(table: str, display: str, log: "LogEntry") -> str:
    """``table`` as the last commit left it (every read of state in a run sees that state,
    whatever the run has already written)."""
    return bk.pinned(table, log.snapshots.get(display))


def pinned_state(run: Run, log: "LogEntry") -> Callable[[str, str], str]:
    return lambda agg_id, name: pinned(run.state_table(agg_id, name), run.state_display(agg_id, name), log)


def change_leaf(run: Run, program: Program, windows: Mapping[str, tuple[int, int]], log: "LogEntry",
                bounds: Mapping[str, str], at: Positions) -> Leaf:
    """Leaves of an incremental run: an input's change window (DELTA, stating its ``key_bounds``)
    and its integrated value before the change (OLD, or NEW of an input that did not change) or
    after it (NEW): its join index as the last commit left it, with the change appended for
    NEW — or, for an input read at its position, the input at the consumed or captured mark
    (``at``). The change of an input that only aggregates read is read as it is
    (``Program.unconsolidated_inputs``)."""
    as_is = program.unconsolidated_inputs()

    def delta(key: str, use: InputUse, consolidated: bool = True) -> str:
        if key not in windows:  # update paths start only at inputs that changed
            raise ValueError(f"the plan reads the change of {key}, which did not change")
        low, high = windows[key]
        return st.aliased(delta_sql(run, key, use.columns, low, high, bounds.get(key), consolidated), "_ivm_delta")

    def leaf(scan: Scan) -> str:
        key, use = scan.input, program.inputs[scan.input]
        if scan.version is Version.DELTA:
            return delta(key, use, consolidated=key not in as_is)
        if run.reads_at_position(use):
            return at.zset(run, key, use.columns, after_change=scan.version is Version.NEW)
        old = pinned(run.tables.index(key), run.tables.index_display(key), log)
        if key not in windows or scan.version is Version.OLD:
            return old
        return st.index_after_change(old, delta(key, use), use.columns)

    return leaf


def snapshot_leaf(run: Run, program: Program, highs: Mapping[str, int], at: Mapping[str, Position],
                  consolidated: bool = False) -> Leaf:
    """Inputs at their captured marks: the join index where one is kept (already built), else
    the input at its mark (``snapshot_zset``); with ``consolidated`` each summed per row, for a
    check that compares states row by row."""
    def leaf(scan: Scan) -> str:
        use = program.inputs[scan.input]
        if run.keeps_index(use):
            index = run.tables.index(scan.input)
            if not consolidated:
                return index
            zset = bk.zset_of(index, use.columns)
        else:
            zset = snapshot_zset(run, scan.input, use.columns, highs.get(scan.input, 0), at.get(scan.input))
        return st.aliased(st.consolidated(zset, use.columns) if consolidated else zset, "_ivm_snapshot")

    return leaf


def plan_rows_sql(run: Run, program: Program, leaf: Leaf, names_types: Sequence[tuple[str, str]],
                  positive: bool = False, groups: Optional[Mapping[str, str]] = None) -> str:
    """The model's rows from the plan over the state, cast to the target's names and types;
    ``groups``: a relation read as an aggregate's group state (``Env.groups``).

    Join indexes may hold a row in several pieces, some negative (appended deletes): they are
    summed before making copies — unless every leaf is ``positive`` (a rebuild's, just built:
    pieces of positive weight only), where the copies of each piece already make the bag."""
    plan = at_version(program.plan, Version.OLD)
    internal = list(plan.columns)
    env = dataclasses.replace(program.env(leaf, run.state_table), groups=dict(groups or {}))
    rows = to_sql(plan, env)
    return st.copies_as(rows if positive else st.consolidated(rows, internal), internal, names_types)
