"""What a run observes before it writes: the log, every input's high mark and row count, every
owned table's Iceberg snapshot and the lock row — in one statement, the rest from metadata
(on the embedded session the log, the owned tables' snapshots, a change table's high mark and
rows, an upstream model's last commit and an Iceberg input's snapshots come from its catalog:
often no statement) —
and what follows from them: nothing to do, apply the change, or rebuild.

An input read through its Iceberg snapshots has the id of its current snapshot as its high mark:
it changed when that differs from the one the model consumed, which must still be in the
table's metadata (else the run rebuilds); when it is not an ancestor of the current one (the
table was replaced, or rolled back) the change is read by difference (``View.diffed``). A
diffed input (a view, a table that is not Iceberg) has no metadata that says whether it
changed: its high mark is the sequence the run would commit, so every run reads it (and ends as
a ``noop`` when its difference is empty: ``apply``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional, Sequence

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.ivm_inputs import CHANGE_TABLE, DIFFED, IVM_MODEL, SNAPSHOTS
from dbt.adapters.spark_ivm.refresh.analysis import Fallback, rebuild_reason, unchanged_recompute_skippable
from dbt.adapters.spark_ivm.refresh.db import is_missing_table, optional_int
from dbt.adapters.spark_ivm.refresh.context import Run
from dbt.adapters.spark_ivm.refresh.lock import LockRow
from dbt.adapters.spark_ivm.refresh.log import LogEntry, log_from_rows, read_log
from dbt.adapters.spark_ivm.refresh.metadata import LIVE_ROWS, ROWS, SNAPSHOT, ChangeMarks, Measure, SqlMetadata
from dbt.adapters.spark_ivm.refresh.validate import history_changed
from ivm_core import bookkeeping as bk
from ivm_core.compiler import Program


@dataclass(frozen=True)
class OwnedTables:
    """Every table a run of the model writes: display name -> quoted name; and what of them is
    counted (``pieces``, ``rewritable``): a table, or an aggregate state stored as one set of
    a table of states (``sets``)."""

    tables: Mapping[str, str]
    pieces: frozenset[str] = frozenset()  # those kept as appended pieces: join indexes, window states
    rewritable: frozenset[str] = frozenset()  # the target and the aggregate states
    # an aggregate state stored in a table of states: its display name -> (the table's, its set)
    sets: Mapping[str, tuple[str, int]] = field(default_factory=dict)

    def measure(self, kind: str, name: str) -> Measure:
        """A measure (``metadata.Measure``) of a table or of a state stored in a table of states."""
        if name in self.sets:
            table, set_id = self.sets[name]
            return Measure(kind, self.tables[table], set_id)
        return Measure(kind, self.tables[name])


def owned_tables(run: Run, program: Optional[Program]) -> OwnedTables:
    t = run.tables
    tables = {t.target_display: t.target, t.display("changes"): t.changes}
    pieces, rewritable = set(), {t.target_display}
    sets: dict[str, tuple[str, int]] = {}
    if program is not None:
        for key, use in program.inputs.items():
            if run.keeps_index(use):
                tables[t.index_display(key)] = t.index(key)
                pieces.add(t.index_display(key))
        for agg_id, table in program.state_tables():
            tables[run.state_display(agg_id, table)] = run.state_table(agg_id, table)
        for agg_id, name in program.state_names():
            stored = program.layouts[agg_id].stored(name)
            if stored.table not in program.layouts[agg_id].tables:  # a group state the target holds
                continue
            if stored.set is not None:
                sets[run.state_display(agg_id, name)] = (run.state_display(agg_id, stored.table), stored.set)
            rewritable.add(run.state_display(agg_id, name))
        pieces.update(run.state_display(agg_id, name) for agg_id, name in program.piece_states())
    return OwnedTables(tables, frozenset(pieces), frozenset(rewritable), sets)


NO_TABLES = OwnedTables({})
TABLE_MISSING = "a table of the model or its state is missing"


@dataclass(frozen=True)
class View:
    log: Optional[LogEntry]
    reason: Optional[str]  # why the run rebuilds (None: apply the change, or nothing to do)
    owned: OwnedTables  # (none when the run rebuilds)
    highs: Mapping[str, int]  # each input's high mark now
    # each change table's rows now, each upstream model's rows published, each snapshot input's
    # rows (RowCounts.inputs)
    input_rows: Mapping[str, int]
    moved: Mapping[str, Optional[int]] = field(default_factory=dict)  # owned tables the last commit did not leave so
    changed: tuple[str, ...] = ()  # inputs whose high mark moved past the last commit's
    diffed: frozenset[str] = frozenset()  # changed snapshot inputs whose change is read by difference
    lock: Optional[LockRow] = None  # the lock row, when the capture read it
    lock_read: bool = False
    # each change table's snapshot its marks were read at, when the catalog read them (the commit
    # records them: the next run reads no file of a change table still at that snapshot)
    input_snapshots: Mapping[str, int] = field(default_factory=dict)
    # each upstream model's target snapshot its last commit recorded (None: it had none, empty)
    upstream_snapshots: Mapping[str, Optional[int]] = field(default_factory=dict)
    # each snapshot input's rows written since the snapshot the last commit consumed, where its
    # snapshot summaries count them (bk.capture_iceberg_input's ``changed``) — or the rows of the
    # data files its change reads (iceberg_files.py), where delete files are in the window
    snapshot_changes: Mapping[str, int] = field(default_factory=dict)
    # of those, the rows read only to keep the rows deletes delete (not summed per row)
    snapshot_scanned: Mapping[str, int] = field(default_factory=dict)

    @property
    def noop(self) -> bool:
        return self.reason is None and not self.moved and not self.changed

    @property
    def committed_seq(self) -> int:
        return 0 if self.log is None or self.log.committed is None else self.log.committed.seq

    @property
    def seq(self) -> int:
        """The sequence a writing run takes the lock for and commits."""
        return (self.log.seq if self.log else 0) + 1


def observe(run: Run, program: Optional[Program], not_incremental: Optional[Fallback]) -> View:
    """Read the log and capture, in one statement when every table a run that applies the change
    reads exists and their names do not follow from the types the log recorded; writes nothing.
    Bad input found here (a sequence that went backwards, history that changed below a consumed
    mark) fails the run."""
    # which tables hold the states may follow from the types the last commit recorded: then the
    # log is read first (on the embedded session from its catalog, no statement), the capture after
    log_first = program is not None and not program.types and program.tables_depend_on_types()
    captured: Optional["Captured"] = None
    if log_first:
        assert program is not None
        log = read_log(run)
        if log is not None and log.types:
            program.bind_types(dict(log.types))
    incremental_tables = owned_tables(run, program)
    if not log_first:
        log, captured = _read_log_and_capture(run, incremental_tables)
    reason = rebuild_reason(run, program, not_incremental, log)
    if reason is not None and unchanged_recompute_skippable(run, not_incremental, log):
        assert log is not None
        return _recompute_unless_unchanged(run, log, reason, captured)
    owned = incremental_tables if reason is None else NO_TABLES
    if captured is None:
        try:
            captured = capture(run, owned, log, read_lock=bool(owned.tables) and run.config.lock_row)
        except DbtRuntimeError as e:
            if not owned.tables or not is_missing_table(e):
                raise
            reason, owned = TABLE_MISSING, NO_TABLES
            captured = capture(run, owned, log, read_lock=False)
    input_rows, lock, lock_read = captured.input_rows, captured.lock, captured.lock_read
    highs = with_diffed_marks(run, captured.highs, log)
    view = View(log, reason, owned, highs, input_rows, lock=lock, lock_read=lock_read,
                input_snapshots=captured.input_snapshots, upstream_snapshots=captured.upstream_snapshots,
                snapshot_changes=captured.snapshot_changes, snapshot_scanned=captured.snapshot_scanned)
    if reason is not None:
        return view
    assert log is not None
    changed, diffed = set(), set()
    for key, high in highs.items():
        mark = log.watermarks.get(key, 0)
        source = run.inputs[key]
        if high == mark:
            continue
        if source.kind == SNAPSHOTS:
            if mark and not captured.lineage.get(key):
                return replace(view, owned=NO_TABLES, reason=(
                    f"snapshot {mark} of {key}, the last this model consumed, is gone "
                    "(expired, or the table was dropped and created again)"))
            changed.add(key)
            if not mark or captured.lineage.get(key) == 1:
                diffed.add(key)
            continue
        if high > mark and source.kind == IVM_MODEL and mark < captured.changes_from.get(key, 0) - 1:
            return replace(view, owned=NO_TABLES, reason=(
                f"upstream model {key} holds its changes from sequence {captured.changes_from[key]} on, and "
                f"this model consumed it up to {mark} (they were pruned, not published while no "
                "incremental_ivm model of the project read it, or not publishable: its target had been dropped)"))
        if high > mark:
            changed.add(key)
            continue
        if source.kind == IVM_MODEL:
            return replace(view, owned=NO_TABLES, reason=f"upstream model {key} was rebuilt with a shorter history")
        raise run.fail(
            f"change table {source.display_changes}: its highest _ivm_seq is {high}, below the sequence "
            f"{mark} this model already consumed — the sequence went backwards"
        )
    for key, rows in sorted(input_rows.items()):  # no new sequence, yet more or fewer rows
        if run.inputs[key].kind == CHANGE_TABLE and key not in changed and key in log.counts.inputs \
                and rows != log.counts.inputs[key]:
            history_changed(run, key, log, rows - log.counts.inputs[key])
    moved = {name: snap for name, snap in captured.snapshots.items() if snap != log.snapshots.get(name)}
    return replace(view, moved=moved, changed=tuple(sorted(changed)), diffed=frozenset(diffed))


def with_diffed_marks(run: Run, highs: Mapping[str, int], log: Optional[LogEntry]) -> dict[str, int]:
    """``highs`` and, for each diffed input, the sequence the run would commit (it may have
    changed: nothing says it did not)."""
    seq = (log.seq if log else 0) + 1
    return {**highs, **{k: seq for k, source in run.inputs.items() if source.kind == DIFFED}}


def _recompute_unless_unchanged(run: Run, log: LogEntry, reason: str, captured: Optional["Captured"]) -> View:
    """A model recomputed in full whose inputs are all at the marks its last commit consumed,
    and whose target and published changes are as it left them, has nothing to do (never one
    with a diffed input: its mark always moves)."""
    owned = owned_tables(run, None)
    if captured is None:
        captured = capture(run, owned, log, read_lock=False)
    highs = with_diffed_marks(run, captured.highs, log)
    unchanged = (all(high == log.watermarks.get(key) for key, high in highs.items())
                 and all(captured.snapshots.get(name) == log.snapshots.get(name) for name in owned.tables))
    if unchanged:
        return View(log, None, owned, highs, captured.input_rows, input_snapshots=captured.input_snapshots,
                    upstream_snapshots=captured.upstream_snapshots)
    return View(log, reason, NO_TABLES, highs, captured.input_rows, input_snapshots=captured.input_snapshots,
                upstream_snapshots=captured.upstream_snapshots)


@dataclass(frozen=True)
class Captured:
    """What the capture statement reads."""

    highs: dict[str, int]  # each input's high mark
    input_rows: dict[str, int]  # the rows of each change table and snapshot input, an upstream model's published
    snapshots: dict[str, Optional[int]]  # each owned table's current snapshot
    lock: Optional[LockRow]  # the lock row (when read)
    lock_read: bool
    lineage: dict[str, int]  # each snapshot input's lineage of the consumed snapshot (see capture)
    changes_from: dict[str, int]  # each upstream model's first sequence whose changes it holds
    input_snapshots: dict[str, int]  # each change table's snapshot its marks were read at (View's)
    upstream_snapshots: dict[str, Optional[int]]  # each upstream model's committed target snapshot (View's)
    snapshot_changes: dict[str, int]  # each snapshot input's rows written since the consumed snapshot (View's)
    snapshot_scanned: dict[str, int]  # of those, the rows only scanned (View's)


def _read_log_and_capture(run: Run, owned: OwnedTables) -> tuple[Optional[LogEntry], Optional[Captured]]:
    """The log and what a run that applies the change captures (the inputs' marks, ``owned``'s
    snapshots, the lock row), in one statement (what the catalog reads right after it:
    ``_read_after``). A missing table (a first run, a state dropped) leaves the capture to after
    the log: (log, None); so does a log the embedded session's catalog reads (the capture then
    has no statement, or one without the log)."""
    log_table = run.tables.log
    rows = run.metadata.log_rows(log_table)  # (the embedded session's catalog: no statement)
    if rows is not None:
        return log_from_rows(rows), None
    read_lock = bool(owned.tables) and run.config.lock_row
    marked = _marked_by_catalog(run)
    parts = _capture_parts(run, owned, read_lock, lambda key: bk.consumed_mark(log_table, key), marked)
    try:
        sql = bk.read_log_and_capture(log_table, parts) if parts else bk.read_log(log_table)
        rows = run.db.run(sql, fetch=True)
        after = _read_after(run, owned, marked)
    except DbtRuntimeError as e:
        if not is_missing_table(e):
            raise
        return read_log(run), None
    log = log_from_rows([row for row in rows if row[0] is not None])
    captured = [row[-3:] for row in rows if row[0] is None] + after
    return log, _captured(captured, run, owned, read_lock)


def capture(run: Run, owned: OwnedTables, log: Optional[LogEntry], read_lock: bool) -> Captured:
    """Every input's high mark (and a change table's row count, a snapshot input's ``lineage``
    of the snapshot ``log`` consumed), every owned table's current snapshot and (with
    ``read_lock``) the lock row, in one statement: Iceberg answers max() and count() from
    metadata and snapshots from its metadata tables. On the embedded session its catalog reads
    the change tables' marks it can before the statement and the snapshots after it (the log,
    read before, then holds no mark above them; metadata.py)."""
    def consumed(key: str) -> Optional[str]:
        mark = _consumed_snapshot(log, key)
        return None if mark is None else str(mark)

    # the log is read: what the catalog answers (metadata.py) is read first — the change tables'
    # marks, the upstream models' last commits, the Iceberg inputs' snapshots —, the rest by the
    # statement
    marks = {key: run.metadata.change_marks(source.changes, _recorded_marks(log, key))
             for key, source in run.inputs.items() if source.kind == CHANGE_TABLE}
    rows: list[Sequence[Any]] = [row for key, m in marks.items() if m is not None for row in _mark_rows(key, m)]
    upstream = {key: upstream_rows(run.metadata, key, source.upstream_model.log)
                for key, source in run.inputs.items() if source.kind == IVM_MODEL}
    rows += [row for answered in upstream.values() if answered is not None for row in answered]
    snapshots = {key: run.metadata.iceberg_input(source.base, _consumed_snapshot(log, key))
                 for key, source in run.inputs.items() if source.kind == SNAPSHOTS}
    rows += [(kind, key, v) for key, answered in snapshots.items() if answered is not None
             for kind, _, v in answered]
    marked = frozenset(key for key, m in marks.items() if m is not None) | frozenset(
        key for key, answered in upstream.items() if answered is not None) | frozenset(
        key for key, answered in snapshots.items() if answered is not None)
    parts = _capture_parts(run, owned, read_lock, consumed, marked)
    rows += run.db.run(bk.union_all(parts), fetch=True) if parts else []
    rows += _snapshots_not_embedded(run, owned)
    return _captured(rows, run, owned, read_lock)


def _consumed_snapshot(log: Optional[LogEntry], key: str) -> Optional[int]:
    """The snapshot of an Iceberg input the last entry consumed (None: none)."""
    mark = log.watermarks.get(key) if log else None
    return int(mark) if mark else None


def _recorded_marks(log: Optional[LogEntry], key: str) -> Optional[ChangeMarks]:
    """The marks of a change-table input the last entry recorded with the snapshot they were
    read at (a commit's high mark of an input is the one its run captured)."""
    if log is None or key not in log.counts.input_snapshots:
        return None
    high, rows = log.watermarks.get(key), log.counts.inputs.get(key)
    if high is None or rows is None:
        return None
    return ChangeMarks(high, rows, log.counts.input_snapshots[key])


def _mark_rows(key: str, marks: ChangeMarks) -> list[tuple]:
    """Capture rows (``kind, k, v``) of a change table's marks the catalog read."""
    rows: list[tuple] = [("high", key, marks.high), ("rows", key, marks.rows)]
    return rows + ([("input_snapshot", key, marks.snapshot)] if marks.snapshot is not None else [])


def upstream_rows(metadata: SqlMetadata, key: str, upstream_log: str) -> Optional[list[tuple]]:
    """Capture rows (``kind, k, v``) of an upstream model's last commit, as
    ``bk.capture_upstream`` reads them, from its log as the embedded session's catalog reads it
    (after this model's log: its last commit is at or above what this model consumed); None:
    the capture statement reads them."""
    rows = metadata.log_rows(upstream_log)
    if rows is None:
        return None
    entry = log_from_rows(rows)
    last = entry.committed if entry is not None else None
    if last is None:  # no commit yet: the statement's aggregates over no row
        return [("high", key, None), ("changes_from", key, None), ("upstream_snapshot", key, None),
                ("rows", key, None)]
    return [("high", key, last.seq), ("changes_from", key, last.changes_from),
            ("upstream_snapshot", key, last.target_snapshot), ("rows", key, last.counts.published)]


def _marked_by_catalog(run: Run) -> frozenset[str]:
    """The change-table inputs whose high mark and rows the embedded session's catalog reads
    (``CatalogMetadata.change_marks``) right after the capture statement, which leaves them out:
    those whose metadata says it can (no delete files, few files)."""
    return frozenset(key for key, source in run.inputs.items()
                     if source.kind == CHANGE_TABLE and run.metadata.answers_change_marks(source.changes))


def _capture_parts(run: Run, owned: OwnedTables, read_lock: bool,
                   consumed: Callable[[str], Optional[str]], marked: frozenset[str]) -> list[str]:
    parts = []
    for key, source in run.inputs.items():
        if source.kind == CHANGE_TABLE and key not in marked:
            parts += bk.capture_change_table_at(key, source.changes)
        elif source.kind == IVM_MODEL and key not in marked:
            parts.append(bk.capture_upstream(key, source.upstream_model.log))
        elif source.kind == SNAPSHOTS and key not in marked:
            parts += bk.capture_iceberg_input(key, source.base, consumed(key))
    if run.metadata.embeds:
        parts += [bk.capture_snapshot(name, table) for name, table in owned.tables.items()]
    if read_lock:
        parts.append(bk.capture_lock(run.tables.companion("lock")))
    return parts


def _read_after(run: Run, owned: OwnedTables, marked: frozenset[str]) -> list[tuple]:
    """Capture rows (``kind, k, v``) read right after the capture statement from the embedded
    session's catalog (metadata.py): the ``marked`` inputs' high marks and rows — read after the
    log, so no mark is below what the log says was consumed; one more statement reads any the
    catalog then cannot (a delete landed in between) — and, when the run's metadata reader does
    not embed them in the statement, the owned tables' snapshots. The run holds its in-process
    registration; where other processes may write, it also compares-and-swaps the lock row that
    statement read, so a run that wrote in between makes taking the lock fail, having changed
    nothing."""
    rows: list[tuple] = []
    unread = []
    for key in sorted(marked):
        marks = run.metadata.change_marks(run.inputs[key].changes)
        if marks is None:
            unread += bk.capture_change_table_at(key, run.inputs[key].changes)
        else:
            rows += _mark_rows(key, marks)
    if unread:
        rows += [tuple(row) for row in run.db.run(bk.union_all(unread), fetch=True)]
    return rows + _snapshots_not_embedded(run, owned)


def _snapshots_not_embedded(run: Run, owned: OwnedTables) -> list[tuple]:
    """Capture rows of the owned tables' snapshots when the run's metadata reader does not embed
    them in the capture statement (the embedded session's catalog reads them after it)."""
    if run.metadata.embeds or not owned.tables:
        return []
    return [("snapshot", name, v) for name, v in current_snapshots(run, owned).items() if v is not None]


def _captured(rows: Sequence[Sequence[Any]], run: Run, owned: OwnedTables, read_lock: bool) -> Captured:
    highs = {k: 0 for k, source in run.inputs.items() if source.kind == SNAPSHOTS}  # no snapshot: empty
    highs.update({k: int(v) if v is not None else 0 for kind, k, v in rows if kind == "high"})
    snapshots: dict[str, Optional[int]] = {name: None for name in owned.tables}
    snapshots.update({k: optional_int(v) for kind, k, v in rows if kind == "snapshot"})
    locks = [LockRow.parse(str(k)) for kind, k, _ in rows if kind == "lock"]
    return Captured(
        highs=highs,
        input_rows={k: int(v or 0) for kind, k, v in rows
                    if kind == "rows" and (v is not None or run.inputs[k].kind != IVM_MODEL)},
        snapshots=snapshots,
        lock=locks[0] if locks else None,
        lock_read=read_lock,
        lineage={k: int(v or 0) for kind, k, v in rows if kind == "lineage"},
        changes_from={k: int(v or 0) for kind, k, v in rows if kind == "changes_from"},
        input_snapshots={k: int(v) for kind, k, v in rows if kind == "input_snapshot"},
        upstream_snapshots={k: optional_int(v) for kind, k, v in rows if kind == "upstream_snapshot"},
        snapshot_changes={k: int(v) for kind, k, v in rows if kind == "changed" and v is not None},
        snapshot_scanned={k: int(v) for kind, k, v in rows if kind == "scanned" and v is not None},
    )


def current_snapshots(run: Run, owned: OwnedTables) -> dict[str, Optional[int]]:
    return run.metadata.read({name: Measure(SNAPSHOT, table) for name, table in owned.tables.items()})


def measure_built(run: Run, owned: OwnedTables) -> tuple[dict[str, Optional[int]], dict[str, int], dict[str, int]]:
    """After a rebuild (metadata.py): every owned table's snapshot, each join index's rows and
    the target's and each aggregate state's rows."""
    t = owned.tables
    measures = {**{(SNAPSHOT, n): Measure(SNAPSHOT, t[n]) for n in t},
                **{(ROWS, n): owned.measure(ROWS, n) for n in owned.pieces},
                **{(LIVE_ROWS, n): owned.measure(LIVE_ROWS, n) for n in owned.rewritable}}
    values = run.metadata.read(measures)
    snapshots = {n: values[(SNAPSHOT, n)] for n in t}
    index_rows = {n: int(values[(ROWS, n)] or 0) for n in sorted(owned.pieces)}
    live = {n: int(v) for n in sorted(owned.rewritable) if (v := values[(LIVE_ROWS, n)]) is not None}
    return snapshots, index_rows, live
