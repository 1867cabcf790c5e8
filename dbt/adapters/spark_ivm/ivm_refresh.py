"""The refresh driver of an incremental_ivm model: decides what a run does and issues its SQL.

A run registers the model in its process, then observes without writing: it reads the model's
log and captures every input's high mark, every owned table's current Iceberg snapshot and the
lock row in one statement. Nothing moved: it ends (noop). Otherwise it takes the lock row
(compare-and-swap; a live holder makes it fail having changed nothing; a dead holder's lock is
taken over and the run observes again under it), and only then, under the lock, rolls back what
a dead run left (an owned table whose snapshot is not the one the last commit recorded) and
rebuilds or applies the change incrementally.

Incremental run at sequence ``S``::

    1  read the log's last entries
    2  capture the inputs' high marks and row counts, our tables' snapshots, the lock row
                                                    (metadata: no job over data)
    3  take the lock row                            (one MERGE, fails on a concurrent change;
                                                     only with ivm_lock: table, or auto off the
                                                     embedded catalog)
    4  roll back the tables a dead run moved        (only under the lock)
    5  validate the change windows                  (NULL/zero weights, late writes; deletes of
                                                     rows absent from a join index)
    6  stage each aggregate's child change          (CACHE TABLE: computed once)
    7  publish ΔQ at S into <model>__changes        (consolidated)
    8  apply <model>__changes@S to the target       (bag semantics, duplicates exact): a small
       target is rewritten (count, INSERT OVERWRITE); a large one gets a staged change with
       the copies of each deleted row (CACHE TABLE, counts, DELETE, INSERT)
    9  add the staged change to each aggregate state (rewritten when small, else a MERGE);
       append each input's change to its join index (or compact the index when it has grown
       ivm_index_growth times)
   10  log 'committed' S: the inputs' high marks, every owned table's snapshot, the indexes',
       the target's and the states' row counts, measured by the log's own INSERT (commit point,
       which also frees the lock; the next run decides from them whether to compact an index
       or rewrite a table)

"Small" is at most ivm_rewrite_max_rows rows at the last commit (which recorded them from
Iceberg's metadata).

Reads of state are pinned to the last commit's snapshots. A write that would leave a negative
multiplicity (a delete of a row that is not there) fails; the run rolls back what it wrote.

Downstream models only read changes up to the last *committed* sequence. A run that dies
between 7 and 10 leaves owned tables whose snapshots the last commit did not record; the next
run that holds the lock rolls them back to the recorded snapshots (Iceberg keeps them) and
proceeds, so no change is lost or applied twice. A rebuild logs 'started' first; a run that
finds a 'started' rebuild rebuilds again.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Optional

import sqlglot
from sqlglot import exp

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.ivm_inputs import (
    CHANGE_TABLE,
    IVM_MODEL,
    UNSUPPORTED,
    Input,
    ModelTables,
)
from ivm_core import statements as st
from ivm_core.analyzer import DIALECT, InputSchema, normalize_table_name
from ivm_core.compiler import InputUse, Program, compile_model
from ivm_core.errors import ABSENT_ROWS, AnalysisError, UnsupportedSql
from ivm_core.plan import Scan, Version, at_version
from ivm_core.sqlgen import quote, to_sql

logger = AdapterLogger("spark_ivm")

POLICIES = ("auto", "incremental", "full")
LOG_COLUMNS = (
    "seq BIGINT, status STRING, mode STRING, reason STRING, fingerprint STRING, "
    "watermarks STRING, target_snapshot BIGINT, rows_inserted BIGINT, rows_deleted BIGINT, "
    "target_columns STRING, model_sql STRING, snapshots STRING, logged_at TIMESTAMP, row_counts STRING"
)


LOCK_COLUMNS = "k STRING, owner STRING, seq BIGINT, expires_at BIGINT"
DEFAULT_LOCK_TIMEOUT = 3600
LOCK_TAKEN = "ivm lock taken by"

# Runs of this process holding a model's lock (lock table -> owner). Two threads of one process
# must not both take a lock, and Iceberg does not reliably fail one of two concurrent commits made
# from one JVM (the embedded metastore's commit lock is not enforced), so they are kept apart here;
# runs in other processes meet at the lock row.
_HELD_IN_PROCESS: dict[str, str] = {}
_HELD_GUARD = threading.Lock()
DEFAULT_INDEX_GROWTH = 2.0
# a target or aggregate state with at most this many rows is rewritten in one INSERT OVERWRITE
# rather than updated in place (measured: a rewrite of 30k rows 0.35 s, a MERGE 0.45-0.7 s)
DEFAULT_REWRITE_MAX_ROWS = 100_000


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class IvmInputError(DbtRuntimeError):
    """Bad input: the run stops before it changes any table."""


@dataclass
class LogEntry:
    seq: int
    status: str
    mode: str
    fingerprint: str
    watermarks: dict[str, int]
    target_snapshot: Optional[int]
    target_columns: list[list[str]]
    model_sql: str
    snapshots: dict[str, Optional[int]]
    input_rows: dict[str, int]  # rows in each change table at the captured mark (late-write check)
    compacted_rows: dict[str, int]  # rows in each join index when it was last compacted (or built)
    index_rows: dict[str, int]  # rows in each join index at the commit
    live_rows: dict[str, int]  # rows the target and each aggregate state held at the commit
    committed: Optional["LogEntry"] = None


@dataclass
class Outcome:
    mode: str  # incremental | full | noop
    reason: Optional[str] = None
    rows_inserted: int = 0
    rows_deleted: int = 0
    seq: Optional[int] = None
    statements: int = 0


@dataclass
class View:
    """What a run sees before it writes: the log, the inputs' high marks, the owned tables'
    snapshots, and from them what the run must do."""
    log: Optional[LogEntry]
    reason: Optional[str]  # why the run rebuilds (None: incremental, or nothing to do)
    owned: dict[str, str]
    highs: dict[str, int]
    moved: dict[str, Optional[int]]  # owned tables whose snapshot is not the last commit's
    changed: list[str]  # inputs whose high mark moved past the last commit's

    @property
    def noop(self) -> bool:
        return self.reason is None and not self.moved and not self.changed

    @property
    def committed_seq(self) -> int:
        if self.log is None or self.log.committed is None:
            return 0
        return self.log.committed.seq

    @property
    def lock_seq(self) -> int:
        """The sequence a writing run takes the lock for (and commits)."""
        return (self.log.seq if self.log else 0) + 1


class Executor:
    """Runs statements on the adapter's connection, counting them (the cost model of a run)."""

    def __init__(self, adapter: Any, model_name: str):
        self.adapter = adapter
        self.model_name = model_name
        self.count = 0

    def run(self, sql: str, fetch: bool = False) -> list[tuple]:
        self.count += 1
        started = time.monotonic()
        _, table = self.adapter.execute(sql, auto_begin=False, fetch=fetch)
        logger.debug(f"[ivm {self.model_name}] statement {self.count} took {time.monotonic() - started:.2f}s")
        if not fetch:
            return []
        return [tuple(row.values()) for row in table.rows]

    def columns(self, relation: str) -> list[tuple[str, str]]:
        """(name, type) of a relation, or [] when it does not exist."""
        self.count += 1
        try:
            _, table = self.adapter.execute(f"DESCRIBE TABLE {relation}", fetch=True)
        except DbtRuntimeError as e:
            if _is_missing_table(e):
                return []
            raise
        out = []
        for row in table.rows:
            name, typ = row[0], row[1]
            if not name or str(name).startswith("#"):
                break
            out.append((str(name), str(typ)))
        return out


def _current_snapshot(table: str) -> str:
    """A query of the table's current snapshot id (Iceberg metadata)."""
    return f"SELECT snapshot_id FROM {table}.refs WHERE name = 'main'"


def _row_count(table: str) -> str:
    """A query of the table's row count (answered from Iceberg metadata when it has no deletes)."""
    return f"SELECT CAST(count(*) AS BIGINT) AS n FROM {table}"


def _live_rows(table: str) -> str:
    """A query of the rows the table holds, from its current snapshot's summary (its data
    files' records less its position deletes; NULL when the summary lacks them)."""
    return (
        "SELECT CAST(s.summary['total-records'] AS BIGINT) - "
        "coalesce(CAST(s.summary['total-position-deletes'] AS BIGINT), 0) AS n "
        f"FROM {table}.snapshots AS s JOIN {table}.refs AS r ON s.snapshot_id = r.snapshot_id WHERE r.name = 'main'"
    )


def _is_missing_table(error: Exception) -> bool:
    text = str(error)
    return "TABLE_OR_VIEW_NOT_FOUND" in text or "not found" in text.lower()


def _int(value: Any) -> Optional[int]:
    return None if value is None else int(value)


class Refresh:
    """One run of one incremental_ivm model."""

    def __init__(
        self,
        adapter: Any,
        model_name: str,
        sql: str,
        tables: ModelTables,
        inputs: list[Input],
        policy: str,
        full_refresh: bool,
        fault: Optional[Callable[[str], None]] = None,
        lock_timeout: int = DEFAULT_LOCK_TIMEOUT,
        index_growth: float = DEFAULT_INDEX_GROWTH,
        lock_row: bool = True,
        rewrite_max_rows: Any = DEFAULT_REWRITE_MAX_ROWS,
    ):
        if policy not in POLICIES:
            raise DbtRuntimeError(
                f"incremental_ivm model '{model_name}': ivm_policy must be one of {', '.join(POLICIES)}, "
                f"not {policy!r}"
            )
        self.model = model_name
        self.sql = sql
        self.tables = tables
        self.inputs = {i.key: i for i in inputs}
        self.policy = policy
        self.full_refresh = full_refresh
        self.db = Executor(adapter, model_name)
        self.fault = fault or (lambda step: None)
        self.schemas: dict[str, list[tuple[str, str]]] = {}
        self.lock_timeout = int(lock_timeout)
        self.index_growth = float(index_growth)
        self.lock_row = lock_row  # else the catalog admits this process only: the registry suffices
        if self.index_growth < 1:
            raise DbtRuntimeError(
                f"incremental_ivm model '{model_name}': ivm_index_growth must be at least 1, not {index_growth!r}"
            )
        try:
            self.rewrite_max_rows = int(rewrite_max_rows)
        except (TypeError, ValueError):
            self.rewrite_max_rows = -1
        if self.rewrite_max_rows < 0:
            raise DbtRuntimeError(
                f"incremental_ivm model '{model_name}': ivm_rewrite_max_rows must be a whole number of rows, at least 0, "
                f"not {rewrite_max_rows!r}"
            )
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self._lock_observed = False  # the capture statement read the lock row
        self._observed_lock: Optional[tuple[str, int, int]] = None
        self._locked_seq: Optional[int] = None  # the sequence this run holds the lock row for
        self.input_rows: dict[str, int] = {}  # rows in each change table, counted by the capture
        self.index_rows: dict[str, int] = {}  # rows in each join index (display name) at the last commit
        self.compacted_rows: dict[str, int] = {}  # what the next log entry records
        self.index_names: set[str] = set()
        self.rewritable_names: set[str] = set()  # the target and the aggregate states
        self.live_rows: dict[str, int] = {}  # their rows: at the last commit, then what the next log entry records

    # -- entry point --------------------------------------------------------------------------
    def run(self) -> Outcome:
        self._load_input_schemas()
        program, not_incremental = self._compile(bind_types=False)
        self._register_in_process()  # no other run of this process overlaps this one
        try:
            return self._run(program, not_incremental)
        finally:
            self._forget_lock()

    def _run(self, program: Optional[Program], not_incremental: Optional[str]) -> Outcome:
        view = self._observe(program, not_incremental)
        if view.noop:
            return Outcome(mode="noop", seq=view.log.seq, statements=self.db.count)
        if view.reason is not None:
            self._ensure_companion_schema()  # the lock table (a first run has none)
        taken_over = False
        if self.lock_row:
            lock = self._observed_lock if self._lock_observed else self._read_lock()
            if not self._free_by_commit(lock, view) and self._held_by_live_run(lock):
                # its run may have committed after this run read the log: look again once
                view = self._observe(program, not_incremental)
                if view.noop:
                    return Outcome(mode="noop", seq=view.log.seq, statements=self.db.count)
                lock = self._observed_lock if self._lock_observed else self._read_lock()
            taken_over = not self._free_by_commit(lock, view)
            self._take_lock_row(lock, view.lock_seq, view.committed_seq)  # refuses a live holder: nothing changed
        if taken_over:
            # the dead or expired run whose lock this run took may have committed after this run
            # read the log: decide again, now that no other run can write
            self._lock_observed = False
            view = self._observe(program, not_incremental)
            if view.noop:
                self._release_lock_row()
                return Outcome(mode="noop", seq=view.log.seq, statements=self.db.count)
            if view.lock_seq > self._locked_seq:
                self._take_lock_row(self._read_lock(), view.lock_seq, view.committed_seq)
        return self._releasing(lambda: self._write(program, view))

    def _write(self, program: Optional[Program], view: "View") -> Outcome:
        """Under the lock: undo a dead run's leftovers, then rebuild or apply the change."""
        log, reason = view.log, view.reason
        if reason is None and view.moved:
            reason = self._recover(view.moved, log, view.owned)
            if reason is None and not view.changed:
                self._release_lock_row()
                return Outcome(mode="noop", seq=log.seq, statements=self.db.count)
        if reason is not None:
            if program is not None:
                self._bind_aggregate_types(program)
            return self._rebuild(program, log, view.highs, reason)
        self._bind_aggregate_types(program)
        return self._incremental(program, log, view.highs, view.changed, view.owned)

    def _observe(self, program: Optional[Program], not_incremental: Optional[str]) -> "View":
        """Read the log and capture the inputs' high marks and the owned tables' snapshots (and,
        when the run may take the lock row, the lock row). Writes nothing."""
        log = self._read_log()
        reason = self._rebuild_reason(program, not_incremental, log)
        self.index_names, self.rewritable_names = set(), set()
        owned = self._owned_tables(program) if reason is None else {}
        self._lock_observed, self._observed_lock = False, None
        try:
            highs, snapshots = self._capture(owned)
        except DbtRuntimeError as e:
            if not owned or not _is_missing_table(e):
                raise
            reason = "a table of the model or its state is missing"
            owned = {}
            highs, snapshots = self._capture({})
        moved: dict[str, Optional[int]] = {}
        changed: list[str] = []
        if reason is None:
            assert log is not None and program is not None
            moved = {name: snap for name, snap in snapshots.items() if snap != log.snapshots.get(name)}
            backwards = {k: (h, log.watermarks.get(k, 0)) for k, h in highs.items() if h < log.watermarks.get(k, 0)}
            for key, (high, mark) in backwards.items():
                source = self.inputs[key]
                if source.kind == IVM_MODEL:
                    reason = f"upstream model {key} was rebuilt with a shorter history"
                    break
                raise IvmInputError(
                    f"incremental_ivm model '{self.model}': change table {source.display_changes}: "
                    f"its highest _ivm_seq is {high}, below the sequence {mark} this model already "
                    "consumed — the sequence went backwards. Nothing was changed."
                )
        if reason is None:
            changed = sorted(k for k, h in highs.items() if h > log.watermarks.get(k, 0))
            for key, rows in sorted(self.input_rows.items()):  # no new sequence, yet more or fewer rows
                if key not in changed and key in log.input_rows and rows != log.input_rows[key]:
                    self._history_changed(key, log, rows - log.input_rows[key])
        return View(log=log, reason=reason, owned=owned, highs=highs, moved=moved, changed=changed)

    def _releasing(self, write: Callable[[], Outcome]) -> Outcome:
        """Run the writing part; if it fails, give the lock back (the next run recovers)."""
        try:
            return write()
        except BaseException:
            try:
                self._release_lock_row()
            except Exception:  # the lock then expires, or its dead process is noticed
                logger.debug(f"[ivm {self.model}] could not release the lock after a failure")
            raise

    def _release_lock_row(self) -> None:
        """Give the lock row back without a commit (a run that wrote nothing, or failed)."""
        if self.lock_row and self._locked_seq is not None:
            self.db.run(
                f"UPDATE {self.tables.companion('lock')} SET expires_at = 0 "
                f"WHERE owner = {st.string_literal(self.owner)}"
            )

    # -- one writer at a time -------------------------------------------------------------------
    def _ensure_companion_schema(self) -> None:
        self.db.run(f"CREATE SCHEMA IF NOT EXISTS {quote(self.tables.state_schema)}")
        self.db.run(f"CREATE TABLE IF NOT EXISTS {self.tables.log} ({LOG_COLUMNS}) USING iceberg")
        self.db.run(f"CREATE TABLE IF NOT EXISTS {self.tables.companion('lock')} ({LOCK_COLUMNS}) USING iceberg")

    def _read_lock(self) -> Optional[tuple[str, int, int]]:
        rows = self.db.run(f"SELECT owner, seq, expires_at FROM {self.tables.companion('lock')} WHERE k = 'lock'", fetch=True)
        return (str(rows[0][0]), int(rows[0][1]), int(rows[0][2])) if rows else None

    @staticmethod
    def _free_by_commit(lock: Optional[tuple[str, int, int]], view: "View") -> bool:
        """The lock row was last taken by a run that has committed (by the log this run read):
        no run has written since, for every writer takes the row first."""
        return lock is None or lock[1] <= view.committed_seq

    def _held_by_live_run(self, lock: Optional[tuple[str, int, int]]) -> bool:
        """The lock row's run may still be writing: not expired, and not a process known to be
        over (one of this host that is dead, or this very process — which registered this run
        in ``_HELD_IN_PROCESS``, so no other run of it is live)."""
        if lock is None:
            return False
        owner, _, expires_at = lock
        if expires_at < time.time():
            return False
        host, _, rest = owner.partition(":")
        pid = rest.partition(":")[0]
        if host != socket.gethostname() or not pid.isdigit():
            return True
        return int(pid) != os.getpid() and _process_alive(int(pid))

    def _register_in_process(self) -> None:
        """Register this run for the model in this process: threads of one process are kept
        apart here (the embedded catalog does not fail one of two concurrent commits of one JVM
        reliably); runs of other processes meet at the lock row."""
        table = self.tables.companion("lock")
        with _HELD_GUARD:
            holder = _HELD_IN_PROCESS.get(table)
            if holder is not None:
                raise DbtRuntimeError(
                    f"incremental_ivm model '{self.model}' is being refreshed by another run in this process "
                    f"({holder}). Nothing was changed."
                )
            _HELD_IN_PROCESS[table] = self.owner

    def _forget_lock(self) -> None:
        with _HELD_GUARD:
            table = self.tables.companion("lock")
            if _HELD_IN_PROCESS.get(table) == self.owner:
                del _HELD_IN_PROCESS[table]

    def _take_lock_row(self, lock: Optional[tuple[str, int, int]], seq: int, committed_seq: int) -> None:
        """Take the model's lock row for sequence ``seq``: a compare-and-swap against the row
        this run read (``lock``). The row must still be what was read: a row that appeared or
        changed meanwhile fails the statement (raise_error), and of two concurrent commits of the
        row the catalog fails one. It is released by the commit of ``seq`` (a lock whose
        sequence is committed is free). A lock left by a dead run is free once it expires, or at
        once when its process is known dead (same host)."""
        table = self.tables.companion("lock")
        free = lock is None or lock[1] <= committed_seq or not self._held_by_live_run(lock)
        if not free:
            owner, held_seq, expires_at = lock
            raise DbtRuntimeError(
                f"incremental_ivm model '{self.model}' is being refreshed by another run ({owner}, sequence "
                f"{held_seq}); its lock expires at {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(expires_at))} UTC. "
                "Nothing was changed."
            )
        expected = "FALSE" if lock is None else f"t.owner = {st.string_literal(lock[0])} AND t.seq = {lock[1]}"
        expires = int(time.time()) + self.lock_timeout
        me = st.string_literal(self.owner)
        try:
            self.db.run(
                f"MERGE INTO {table} AS t USING (SELECT 'lock' AS k) AS s ON t.k = s.k\n"
                f"WHEN MATCHED AND {expected} THEN UPDATE SET t.owner = {me}, t.seq = {int(seq)}, t.expires_at = {expires}\n"
                f"WHEN MATCHED THEN UPDATE SET t.owner = CAST(raise_error(concat('{LOCK_TAKEN} ', t.owner)) AS STRING)\n"
                f"WHEN NOT MATCHED THEN INSERT (k, owner, seq, expires_at) VALUES ('lock', {me}, {int(seq)}, {expires})"
            )
        except DbtRuntimeError as e:
            taken = str(e).partition(LOCK_TAKEN + " ")[2].split()
            who = f"another run ({taken[0]})" if taken else "another run"
            raise DbtRuntimeError(
                f"incremental_ivm model '{self.model}': {who} took the lock at the same time. Nothing was changed."
            ) from e
        self._locked_seq = seq

    def _owned_tables(self, program: Optional[Program]) -> dict[str, str]:
        """Display name -> quoted name of every table a run of this model writes."""
        owned = {
            self.tables.target_display: self.tables.target,
            self.tables.display("changes"): self.tables.changes,
        }
        if program is not None:
            for key, use in program.inputs.items():
                if use.stateful:
                    owned[self.tables.index_display(key)] = self.tables.index(key)
                    self.index_names.add(self.tables.index_display(key))
            for agg_id, name in program.state_names():
                owned[self.tables.display(f"{agg_id}__{name}")] = self._state_table(agg_id, name)
                self.rewritable_names.add(self.tables.display(f"{agg_id}__{name}"))
        self.rewritable_names.add(self.tables.target_display)
        return owned

    def _recover(self, moved: dict[str, Optional[int]], log: LogEntry, owned: dict[str, str]) -> Optional[str]:
        """Undo what a run that died before committing wrote: roll each table it touched back
        to the snapshot the last commit recorded. Returns a rebuild reason if that is impossible."""
        for name in sorted(moved):
            recorded = log.snapshots.get(name)
            if recorded is None:
                return f"the previous run was interrupted and {name} cannot be rolled back"
        self._roll_back(moved, log, owned)
        logger.warning(
            f"incremental_ivm model '{self.model}': the previous run was interrupted before it committed; "
            f"rolled back {', '.join(sorted(moved))} to the last committed state"
        )
        return None

    def _roll_back(self, moved: dict[str, Optional[int]], log: LogEntry, owned: dict[str, str]) -> None:
        for name in sorted(moved):
            if log.snapshots.get(name) is not None:
                identifier = st.string_literal(owned[name])
                self.db.run(
                    f"CALL spark_catalog.system.rollback_to_snapshot({identifier}, {int(log.snapshots[name])})"
                )

    # -- analysis ---------------------------------------------------------------------------
    def _load_input_schemas(self) -> None:
        for key, source in self.inputs.items():
            if source.kind == UNSUPPORTED:
                continue
            columns = self.db.columns(source.changes)
            if not columns:
                raise IvmInputError(
                    f"incremental_ivm model '{self.model}': the change relation {source.display_changes} "
                    f"of input {key} does not exist. Nothing was changed."
                )
            names = {c.lower() for c, _ in columns}
            missing = [c for c in (st.WEIGHT, st.SEQ) if c not in names]
            if missing:
                raise IvmInputError(
                    f"incremental_ivm model '{self.model}': change table {source.display_changes} of input "
                    f"{key} is missing column(s) {', '.join(missing)}. Nothing was changed."
                )
            types = {c.lower(): t.lower() for c, t in columns}
            wrong = [c for c in (st.WEIGHT, st.SEQ) if types[c] not in ("bigint", "int", "smallint", "tinyint")]
            if wrong:
                raise IvmInputError(
                    f"incremental_ivm model '{self.model}': change table {source.display_changes}: column(s) "
                    f"{', '.join(wrong)} must be integers (BIGINT), not "
                    f"{', '.join(types[c] for c in wrong)}. Nothing was changed."
                )
            self.schemas[key] = [(c, t) for c, t in columns if c.lower() not in (st.WEIGHT, st.SEQ)]

    def _compile(self, bind_types: bool = True) -> tuple[Optional[Program], Optional[str]]:
        """The compiled program, or the reason the model cannot be maintained incrementally.
        Without ``bind_types`` the aggregates' Spark types are not asked yet (a run that finds
        nothing to do never needs them)."""
        unsupported = [i for i in self.inputs.values() if i.kind == UNSUPPORTED]
        try:
            if unsupported:
                raise UnsupportedSql(unsupported[0].key, unsupported[0].why_unsupported or "no change source")
            program = compile_model(
                self.sql, [InputSchema(k, tuple(cols)) for k, cols in self.schemas.items()]
            )
            if bind_types:
                self._bind_aggregate_types(program)
            return program, None
        except (UnsupportedSql, AnalysisError) as e:
            if self.policy == "incremental":
                raise DbtRuntimeError(
                    f"incremental_ivm model '{self.model}' has ivm_policy 'incremental' but cannot be "
                    f"maintained incrementally: {e}"
                ) from e
            return None, str(e)

    def _bind_aggregate_types(self, program: Program) -> None:
        """Ask Spark (metadata only) the types of the aggregates' arguments and results."""
        def empty_input(scan: Scan) -> str:
            source = self.inputs[scan.input]
            relation = source.upstream.target if source.kind == IVM_MODEL else source.changes
            cols = ", ".join(quote(c) for c in scan.input_columns)
            sep = ", " if scan.input_columns else ""
            return f"(SELECT {cols}{sep}CAST(1 AS BIGINT) AS {st.WEIGHT} FROM {relation} WHERE FALSE) AS _ivm_empty"

        probe = program.type_probe_sql(empty_input)
        if probe is None:
            return
        rows = self.db.run(f"DESCRIBE QUERY {probe}", fetch=True)
        program.bind_types({str(r[0]): str(r[1]) for r in rows})

    def _state_table(self, agg_id: str, name: str) -> str:
        return self.tables.companion(f"{agg_id}__{name}")

    def _rebuild_reason(self, program: Optional[Program], not_incremental: Optional[str], log: Optional[LogEntry]) -> Optional[str]:
        if self.policy == "full":
            return "ivm_policy is 'full'"
        if not_incremental is not None:
            logger.warning(
                f"incremental_ivm model '{self.model}' is recomputed in full on every run: {not_incremental}"
            )
            return f"not incrementally maintainable: {not_incremental}"
        if self.full_refresh:
            return "--full-refresh"
        if log is None:
            return "first run"
        if log.status != "committed":
            return "the previous rebuild was interrupted before it committed"
        if log.fingerprint != program.fingerprint():
            if log.model_sql != self.sql:
                return "the model SQL changed"
            return "an input's schema changed (or the state layout, with a new dbt-spark-ivm version)"
        return None

    # -- log ----------------------------------------------------------------------------------
    def _read_log(self) -> Optional[LogEntry]:
        """The log's last entry; ``.committed`` is the last committed one (the same entry unless
        a rebuild was interrupted)."""
        cols = ("seq, status, mode, fingerprint, watermarks, target_snapshot, target_columns, model_sql, "
                "snapshots, row_counts")
        try:
            rows = self.db.run(
                f"SELECT * FROM (SELECT 'last' AS which, {cols} FROM {self.tables.log} "
                "ORDER BY seq DESC, CASE status WHEN 'committed' THEN 1 ELSE 0 END DESC LIMIT 1)\n"
                f"UNION ALL\nSELECT * FROM (SELECT 'committed' AS which, {cols} FROM {self.tables.log} "
                "WHERE status = 'committed' ORDER BY seq DESC LIMIT 1)",
                fetch=True,
            )
        except DbtRuntimeError as e:
            if _is_missing_table(e):
                return None
            raise
        entries = {row[0]: self._entry(row[1:]) for row in rows}
        last = entries.get("last")
        if last is not None:
            last.committed = entries.get("committed")
        return last

    @staticmethod
    def _entry(row) -> LogEntry:
        seq, status, mode, fingerprint, marks, snapshot, columns, model_sql, snapshots, row_counts = row
        counts = json.loads(row_counts or "{}")
        return LogEntry(
            seq=int(seq),
            status=status,
            mode=mode,
            fingerprint=fingerprint or "",
            watermarks={k: int(v) for k, v in json.loads(marks or "{}").items()},
            target_snapshot=_int(snapshot),
            target_columns=json.loads(columns or "[]"),
            model_sql=model_sql or "",
            snapshots={k: _int(v) for k, v in json.loads(snapshots or "{}").items()},
            input_rows={k: int(v) for k, v in counts.get("inputs", {}).items()},
            compacted_rows={k: int(v) for k, v in counts.get("indexes", {}).items()},
            index_rows={k: int(v) for k, v in counts.get("index_rows", {}).items() if v is not None},
            live_rows={k: int(v) for k, v in counts.get("tables", {}).items() if v is not None},
        )

    def _write_log(self, seq: int, status: str, mode: str, reason: Optional[str], fingerprint: str,
                   highs: dict[str, int], snapshot: Optional[int], inserted: int, deleted: int,
                   columns: list[tuple[str, str]], snapshots: Optional[dict[str, Optional[int]]] = None,
                   measured: Optional[tuple[str, str, str]] = None) -> None:
        """Append a log entry. ``measured`` replaces the target snapshot, the snapshots and the
        row counts by SQL expressions (``_measured_after_writes``) that Spark evaluates in the
        same statement."""
        values = [
            str(int(seq)),
            st.string_literal(status),
            st.string_literal(mode),
            "NULL" if reason is None else st.string_literal(reason),
            st.string_literal(fingerprint),
            st.string_literal(json.dumps(highs, sort_keys=True)),
            "NULL" if snapshot is None else str(int(snapshot)),
            str(int(inserted)),
            str(int(deleted)),
            st.string_literal(json.dumps([list(c) for c in columns])),
            st.string_literal(self.sql),
            st.string_literal(json.dumps(snapshots or {}, sort_keys=True)),
            "current_timestamp()",
            st.string_literal(json.dumps({"inputs": self.input_rows, "indexes": self.compacted_rows,
                                          "index_rows": self.index_rows, "tables": self.live_rows},
                                         sort_keys=True)),
        ]
        if measured is not None:
            values[6], values[11], values[13] = measured
        self.db.run(f"INSERT INTO {self.tables.log} SELECT {', '.join(values)}")

    def _measured_after_writes(self, owned: dict[str, str], recount: dict[str, str]) -> tuple[str, str, str]:
        """SQL for what a commit records about the tables it wrote — the target's snapshot,
        every owned table's snapshot (JSON), and the row counts (JSON: the inputs' from the
        capture; each index's at its last compaction, ``recount`` ones counted now; every
        index's now; the target's and each aggregate state's; all from metadata) — so the log entry
        needs no read of its own."""
        def json_map(entries: list[tuple[str, str]]) -> str:
            if not entries:
                return "'{}'"
            keys = ", ".join(st.string_literal(k) for k, _ in entries)
            values = ", ".join(v for _, v in entries)
            return f"to_json(map_from_arrays(array({keys}), array({values})))"

        indexes = [(n, f"CAST({int(c)} AS BIGINT)") for n, c in self.compacted_rows.items() if n not in recount]
        indexes += [(n, f"({_row_count(t)})") for n, t in recount.items()]
        snapshots = json_map([(n, f"({_current_snapshot(t)})") for n, t in sorted(owned.items())])
        inputs = st.string_literal(json.dumps(self.input_rows, sort_keys=True))
        index_rows = json_map([(n, f"({_row_count(t)})") for n, t in sorted(owned.items()) if n in self.index_names])
        tables = json_map([(n, f"({_live_rows(t)})") for n, t in sorted(owned.items()) if n in self.rewritable_names])
        row_counts = (f"concat('{{\"indexes\": ', {json_map(sorted(indexes))}, ', \"index_rows\": ', {index_rows}, "
                      f"', \"inputs\": ', {inputs}, ', \"tables\": ', {tables}, '}}')")
        return f"({_current_snapshot(self.tables.target)})", snapshots, row_counts

    # -- capture --------------------------------------------------------------------------------
    def _capture(self, owned: dict[str, str]) -> tuple[dict[str, int], dict[str, Optional[int]]]:
        """Every input's high mark and every owned table's current snapshot, in one statement
        (Iceberg answers max() from metadata and snapshots from its metadata tables)."""
        parts = []
        for key, source in self.inputs.items():
            if source.kind == CHANGE_TABLE:
                # one aggregate over the table's metadata gives both (one scan planned, not two)
                k = st.string_literal(key)
                parts.append(
                    f"SELECT stack(2, 'high', {k}, high, 'rows', {k}, n) AS (kind, k, v) FROM "
                    f"(SELECT CAST(max({st.SEQ}) AS BIGINT) AS high, CAST(count(*) AS BIGINT) AS n "
                    f"FROM {source.changes}) AS _ivm_marks"
                )
            elif source.kind == IVM_MODEL:
                parts.append(
                    f"SELECT 'high' AS kind, {st.string_literal(key)} AS k, CAST(max(seq) AS BIGINT) AS v "
                    f"FROM {source.upstream.log} WHERE status = 'committed'"
                )
        parts += self._snapshot_queries(owned)
        reads_lock = bool(owned) and self.lock_row  # an incremental run may write: read the lock row too
        if reads_lock:
            parts.append(
                "SELECT 'lock' AS kind, concat_ws('|', owner, CAST(seq AS STRING), CAST(expires_at AS STRING)) AS k, "
                f"CAST(0 AS BIGINT) AS v FROM {self.tables.companion('lock')} WHERE k = 'lock'"
            )
        if not parts:
            return {}, {}
        rows = self.db.run("\nUNION ALL\n".join(parts), fetch=True)
        if reads_lock:
            self._lock_observed = True
            for kind, k, _ in rows:
                if kind == "lock":
                    owner, held_seq, expires_at = str(k).rsplit("|", 2)
                    self._observed_lock = (owner, int(held_seq), int(expires_at))
        highs = {k: int(v) if v is not None else 0 for kind, k, v in rows if kind == "high"}
        self.input_rows = {k: int(v or 0) for kind, k, v in rows if kind == "rows"}
        snapshots: dict[str, Optional[int]] = {name: None for name in owned}
        snapshots.update({k: _int(v) for kind, k, v in rows if kind == "snapshot"})
        return highs, snapshots

    @staticmethod
    def _snapshot_queries(owned: dict[str, str]) -> list[str]:
        return [
            f"SELECT 'snapshot' AS kind, {st.string_literal(name)} AS k, snapshot_id AS v "
            f"FROM ({_current_snapshot(table)}) AS _ivm_ref"
            for name, table in owned.items()
        ]

    def _read_after_writes(self, owned: dict[str, str], recount: dict[str, str]) -> dict[str, Optional[int]]:
        """After the writes, in one statement (all from metadata): every owned table's snapshot,
        the rows of each index in ``recount`` (just built or compacted) into ``compacted_rows``,
        and the rows of the target and each aggregate state into ``live_rows``."""
        parts = self._snapshot_queries(owned) + self._count_queries(recount) + [
            f"SELECT 'live_rows' AS kind, {st.string_literal(name)} AS k, n AS v FROM ({_live_rows(table)}) AS _ivm_n"
            for name, table in sorted(owned.items()) if name in self.rewritable_names
        ]
        rows = self.db.run("\nUNION ALL\n".join(parts), fetch=True)
        snapshots: dict[str, Optional[int]] = {name: None for name in owned}
        for kind, k, v in rows:
            if kind == "snapshot":
                snapshots[k] = _int(v)
            elif kind == "index_rows":
                self.compacted_rows[k] = int(v or 0)
            elif v is not None:
                self.live_rows[k] = int(v)
        return snapshots

    @staticmethod
    def _count_queries(tables: dict[str, str]) -> list[str]:
        return [
            f"SELECT 'index_rows' AS kind, {st.string_literal(name)} AS k, n AS v FROM ({_row_count(table)}) AS _ivm_n"
            for name, table in sorted(tables.items())
        ]

    def _upstream_snapshots(self, highs: dict[str, int]) -> dict[str, Optional[int]]:
        """For upstream incremental_ivm models: the target snapshot at the captured sequence."""
        parts = []
        for key, source in self.inputs.items():
            if source.kind == IVM_MODEL:
                parts.append(
                    f"SELECT {st.string_literal(key)} AS k, max(target_snapshot) AS snap FROM {source.upstream.log} "
                    f"WHERE status = 'committed' AND seq = {int(highs.get(key, 0))}"
                )
        if not parts:
            return {}
        return {k: _int(s) for k, s in self.db.run("\nUNION ALL\n".join(parts), fetch=True)}

    # -- reading inputs ---------------------------------------------------------------------------
    def _delta_sql(self, key: str, columns, low: int, high: int) -> str:
        return st.consolidated_changes(self.inputs[key].changes, columns, low, high)

    @staticmethod
    def indexed_rows(use: InputUse, zset_sql: str) -> str:
        """The rows of an input's Z-set that its join index keeps (``InputUse.index_filter``)."""
        if not use.index_filter:
            return zset_sql
        return f"SELECT * FROM (\n{zset_sql}\n) AS _ivm_rows\nWHERE {use.index_filter}"

    def _index_delta_sql(self, key: str, use: InputUse, low: int, high: int) -> str:
        """The change window of an input as its join index takes it."""
        return self.indexed_rows(use, self._delta_sql(key, use.columns, low, high))

    def _snapshot_zset(self, key: str, columns, high: int, snapshot: Optional[int]) -> str:
        """The input at its high mark as a Z-set over ``columns``."""
        source = self.inputs[key]
        if source.kind == IVM_MODEL:
            relation = source.upstream.target
            if snapshot is not None:
                relation += f" VERSION AS OF {int(snapshot)}"
            cols = ", ".join(quote(c) for c in columns)
            group = f" GROUP BY {cols}" if columns else ""
            return f"SELECT {cols}{', ' if columns else ''}CAST(count(*) AS BIGINT) AS {st.WEIGHT} FROM {relation}{group}"
        return st.consolidated_changes(source.changes, columns, None, high)

    # -- validation ---------------------------------------------------------------------------
    def _validate(self, program: Optional[Program], windows: dict[str, tuple[Optional[int], int]],
                  log: Optional[LogEntry] = None) -> None:
        """Bad weights and late writes, checked in one statement over the change windows (and,
        for a rebuild, deletes of absent rows over the whole history) before any write. In an
        incremental run the writes that apply a change refuse deletes of absent rows (``_apply``).

        A late write — rows appended with an ``_ivm_seq`` the model already consumed — shows as
        a change table holding more rows than the last commit counted plus the window's rows
        (the capture counts them from Iceberg's metadata)."""
        checks = []
        labels = {}
        for i, (key, (low, high)) in enumerate(sorted(windows.items())):
            source = self.inputs[key]
            if source.kind != CHANGE_TABLE:
                continue
            label_w, label_n = f"w{i}", f"n{i}"
            labels[label_w] = (key, "weight", low, high)
            checks.append(st.tagged(label_w, st.window_check(source.changes, low, high), with_total=True))
            if low is None:  # a rebuild: whole rows, over the whole history
                labels[label_n] = (key, "absent", low, high)
                names = [c for c, _ in self.schemas[key]]
                history = st.consolidated_changes(source.changes, names, None, high)
                checks.append(st.tagged(label_n, st.negative_after(history, None, names)))
            elif program is not None and program.inputs.get(key) is not None and program.inputs[key].stateful:
                use = program.inputs[key]  # the columns the join index keeps
                labels[label_n] = (key, "absent", low, high)
                delta = self._index_delta_sql(key, use, low, high)
                checks.append(st.tagged(label_n, st.negative_after(delta, self.tables.index(key), use.columns)))
        if not checks:
            return
        rows = self.db.run("\nUNION ALL\n".join(checks), fetch=True)
        for label, bad, total in sorted(rows, key=lambda r: r[0]):
            key, what, low, high = labels[label]
            if what == "weight" and log is not None and key in log.input_rows and key in self.input_rows:
                extra = self.input_rows[key] - log.input_rows[key] - int(total or 0)
                if extra:
                    self._history_changed(key, log, extra)
            bad = int(bad or 0)
            if not bad:
                continue
            source = self.inputs[key]
            window = f"_ivm_seq in ({low}, {high}]" if low is not None else f"_ivm_seq <= {high}"
            if what == "weight":
                problem = f"{bad} row(s) with a NULL or zero _ivm_weight ({window})"
            else:
                problem = (
                    f"{bad} row(s) delete rows that do not exist in the input {key} "
                    f"(their multiplicity would become negative; {window})"
                )
            raise IvmInputError(
                f"incremental_ivm model '{self.model}': change table {source.display_changes}: {problem}. "
                "Nothing was changed."
            )

    def _history_changed(self, key: str, log: LogEntry, extra: int) -> None:
        mark = log.watermarks.get(key, 0)
        if extra > 0:
            problem = (
                f"{extra} row(s) were written with an _ivm_seq at or below {mark} (or NULL) after this model "
                f"consumed sequence {mark} — a late write into the past, which the model can no longer apply. "
                "Write them with a new, higher _ivm_seq (or rebuild with --full-refresh)"
            )
        else:
            problem = (
                f"{-extra} row(s) with an _ivm_seq at or below {mark} were removed after this model consumed "
                "them — the input's history changed. Restore them (or rebuild with --full-refresh)"
            )
        raise IvmInputError(
            f"incremental_ivm model '{self.model}': change table {self.inputs[key].display_changes}: {problem}. "
            "Nothing was changed."
        )

    # -- incremental ----------------------------------------------------------------------------
    def _pinned(self, table: str, display: str, log: LogEntry) -> str:
        """``table`` as the last commit left it (every read of state in a run sees that state,
        whatever the run has already written)."""
        snapshot = log.snapshots.get(display)
        return table if snapshot is None else f"{table} VERSION AS OF {int(snapshot)}"

    def _pinned_state(self, log: LogEntry) -> Callable[[str, str], str]:
        return lambda agg_id, name: self._pinned(self._state_table(agg_id, name),
                                                 self.tables.display(f"{agg_id}__{name}"), log)

    def _leaf(self, program: Program, windows: dict[str, tuple[int, int]],
              log: Optional[LogEntry] = None) -> Callable[[Scan], str]:
        def leaf(scan: Scan) -> str:
            use = program.inputs[scan.input]
            changed = scan.input in windows
            delta = None
            if changed:
                low, high = windows[scan.input]
                delta = f"(\n{self._delta_sql(scan.input, use.columns, low, high)}\n) AS _ivm_delta"
            if scan.version is Version.DELTA:
                return delta
            old = self.tables.index(scan.input)
            if log is not None:
                old = self._pinned(old, self.tables.index_display(scan.input), log)
            if scan.version is Version.OLD or not changed:
                return old
            cols = ", ".join(quote(c) for c in use.columns)
            sep = ", " if use.columns else ""
            return (
                f"(\nSELECT {cols}{sep}{st.WEIGHT} FROM {old}\nUNION ALL\n"
                f"SELECT {cols}{sep}{st.WEIGHT} FROM {delta}\n) AS _ivm_new"
            )

        return leaf

    def _incremental(self, program: Program, log: LogEntry, highs: dict[str, int], changed: list[str],
                     owned: dict[str, str]) -> Outcome:
        seq = log.seq + 1
        windows = {k: (log.watermarks.get(k, 0), highs[k]) for k in changed}
        self.compacted_rows = {n: c for n, c in log.compacted_rows.items() if n in self.index_names}
        self.live_rows = dict(log.live_rows)
        self.index_rows = dict(log.index_rows)
        self._validate(program, windows, log)
        columns = [c for c, _ in log.target_columns]
        self.fault("after_validate")
        leaf = self._leaf(program, windows, log)
        # a change that deletes absent rows of an input without a join index can only show in the
        # model's result or its aggregate state
        stateless = [k for k in changed if not program.inputs[k].stateful] or list(changed)
        run_tag = uuid.uuid4().hex[:12]
        staged = {a: quote(f"_ivm_{run_tag}_{a}") for a in program.stageable_aggregates(changed)}
        reading = program.env(leaf, self._pinned_state(log), staged)
        views = list(staged.values())
        inserted = deleted = 0  # rows the target gains and loses
        try:
            # each aggregate's child change (a join, typically) is computed once, kept in memory
            for statement in program.staged_changes(changed, reading):
                self.db.run(f"CACHE TABLE {staged[statement.aggregate]} AS\n{statement.sql}")
            delta = program.delta_sql(set(changed), reading, columns)
            if delta is not None:
                self.db.run(st.insert_output_changes(self.tables.changes, delta, columns, seq))
                self.fault("after_publish")
                if self._rewrites(self.tables.target_display):
                    inserted, deleted = self._rewrite_target(log, columns, seq, stateless, owned, windows)
                else:
                    staged_target = quote(f"_ivm_{run_tag}_target")
                    views.append(staged_target)
                    inserted, deleted = self._update_target(log, columns, seq, staged_target, stateless,
                                                            owned, windows)
                self.fault("after_target")
            for statement in program.state_updates(set(changed), reading, self._state_table, self._rewrites_state):
                self._apply(statement.sql, statement.refused_sql, "a group of the model's aggregate", stateless,
                            log, owned, windows)
                self.fault(f"after_state:{statement.aggregate}__{statement.state}")
        finally:
            for name in views:
                try:
                    self.db.run(f"DROP VIEW IF EXISTS {name}")
                except Exception:  # a temp view lives only as long as the session anyway
                    logger.debug(f"[ivm {self.model}] could not drop the temp view {name}")
        for key in changed:
            use = program.inputs.get(key)
            if use is None or not use.stateful:
                continue
            low, high = windows[key]
            delta = self._index_delta_sql(key, use, low, high)
            name = self.tables.index_display(key)
            rows, compacted = self.index_rows.get(name, 0), log.compacted_rows.get(name)
            if compacted is None or rows > self.index_growth * max(compacted, 1):
                self.db.run(st.compact_state(self.tables.index(key), delta, use.columns))
                self.compacted_rows.pop(name, None)  # counted after the writes
            else:
                self.db.run(st.append_to_state(self.tables.index(key), delta, use.columns))
            self.fault(f"after_state:{key}")
        recount = {n: owned[n] for n in self.index_names if n not in self.compacted_rows}
        self.fault("before_commit")
        self._write_log(seq, "committed", "incremental", None, program.fingerprint(), highs,
                        None, inserted, deleted, [tuple(c) for c in log.target_columns],
                        measured=self._measured_after_writes(owned, recount))
        return Outcome(mode="incremental", rows_inserted=inserted, rows_deleted=deleted, seq=seq,
                       statements=self.db.count)

    def _rewrites(self, name: str) -> bool:
        """Whether the run rewrites this table (the target or an aggregate state) rather than
        updating it in place: it held at most ``ivm_rewrite_max_rows`` rows at the last commit."""
        rows = self.live_rows.get(name)
        return rows is not None and rows <= self.rewrite_max_rows

    def _rewrites_state(self, agg_id: str, name: str) -> bool:
        return self._rewrites(self.tables.display(f"{agg_id}__{name}"))

    def _rewrite_target(self, log: LogEntry, columns: list[str], seq: int, suspects: list[str],
                        owned: dict[str, str], windows: dict[str, tuple[int, int]]) -> tuple[int, int]:
        """A small target: count the change, then rewrite the target with it (one statement that
        refuses deletes of absent rows). Returns the rows the target gains and loses."""
        pinned = self._pinned(self.tables.target, self.tables.target_display, log)
        inserted, deleted = (int(v or 0) for v in self.db.run(st.change_counts(self.tables.changes, seq), fetch=True)[0])
        if inserted or deleted:
            self._apply(st.rewrite_target(self.tables.target, pinned, self.tables.changes, columns, seq),
                        st.rewrite_target_refused(pinned, self.tables.changes, columns, seq),
                        "the model's result", suspects, log, owned, windows)
        return inserted, deleted

    def _update_target(self, log: LogEntry, columns: list[str], seq: int, staged: str, suspects: list[str],
                       owned: dict[str, str], windows: dict[str, tuple[int, int]]) -> tuple[int, int]:
        """A large target: stage the change with the copies each deleted row has, refuse it if it
        deletes absent rows, then delete and insert. The DELETE makes Spark drop the stage from
        its cache; the stage reads the target pinned, so a reader after the DELETE that computes
        it again still counts the copies the target had. Returns the rows gained and lost."""
        pinned = self._pinned(self.tables.target, self.tables.target_display, log)
        self.db.run(f"CACHE TABLE {staged} AS\n" + st.target_change(pinned, self.tables.changes, columns, seq))
        absent, deletes, inserts, kept, inserted, deleted = (
            int(v or 0) for v in self.db.run(st.target_change_counts(staged), fetch=True)[0])
        if absent:
            self._refuse_absent(absent, "the model's result", suspects, log, owned, windows)
        if deletes:
            self.db.run(st.delete_from_target(self.tables.target, staged, columns))
        if inserts and kept:  # copies go back: only the stage knows how many (computed again)
            self.db.run(st.insert_into_target(self.tables.target, staged, columns))
        elif inserts:
            self.db.run(st.insert_added_rows(self.tables.target, self.tables.changes, columns, seq))
        return inserted, deleted

    def _apply(self, sql: str, refused_sql: Optional[str], what: str, suspects: list[str], log: LogEntry,
               owned: dict[str, str], windows: dict[str, tuple[int, int]]) -> None:
        """Run a write that refuses a negative multiplicity (``raise_error``): the change deletes
        rows that are not there. The statement that applies the change is the one that checks it
        (no second scan); on refusal the run undoes what it already wrote and names the inputs."""
        try:
            self.db.run(sql)
        except DbtRuntimeError as e:
            if ABSENT_ROWS not in str(e):
                raise
            bad = int(self.db.run(refused_sql, fetch=True)[0][0] or 0) if refused_sql else 0
            self._refuse_absent(bad, what, suspects, log, owned, windows, e)

    def _refuse_absent(self, bad: int, what: str, suspects: list[str], log: LogEntry, owned: dict[str, str],
                       windows: dict[str, tuple[int, int]], cause: Optional[Exception] = None) -> None:
        """The change deletes rows that are not there: undo what the run wrote, name the inputs."""
        self._undo(log, owned)
        tables = ", ".join(self.inputs[k].display_changes for k in suspects)
        windows_text = "; ".join(f"{k}: _ivm_seq in ({windows[k][0]}, {windows[k][1]}]" for k in suspects)
        count = f"{bad} row(s) of {what}" if bad else f"rows of {what}"
        raise IvmInputError(
            f"incremental_ivm model '{self.model}': change table {tables}: the change deletes rows that do "
            f"not exist — {count} would get a negative multiplicity ({windows_text}). Nothing was changed."
        ) from cause

    def _undo(self, log: LogEntry, owned: dict[str, str]) -> None:
        """Roll every table this run wrote back to the last commit's snapshot."""
        rows = self.db.run("\nUNION ALL\n".join(self._snapshot_queries(owned)), fetch=True)
        current = {k: _int(v) for _, k, v in rows}
        self._roll_back({name: snap for name, snap in current.items() if snap != log.snapshots.get(name)},
                        log, owned)

    # -- rebuild --------------------------------------------------------------------------------
    def _substituted_sql(self, program: Optional[Program], highs: dict[str, int], snapshots: dict[str, Optional[int]]) -> str:
        """The model's own SQL with every input replaced by its contents at the captured mark."""
        try:
            tree = sqlglot.parse_one(self.sql, read=DIALECT)
        except sqlglot.errors.ParseError:
            return self.sql  # beyond our parser: Spark reads the inputs' relations as they are
        replacements = {}
        for key, source in self.inputs.items():
            if source.kind == UNSUPPORTED:
                continue
            all_columns = self.schemas[key]
            use = program.inputs.get(key) if program else None
            if use is not None and use.stateful:
                zset = st.consolidated(
                    f"SELECT {', '.join(quote(c) for c in use.columns)}{', ' if use.columns else ''}{st.WEIGHT} "
                    f"FROM {self.tables.index(key)}", use.columns)
                present = use.columns
            else:
                names = [c for c, _ in all_columns]
                zset = self._snapshot_zset(key, names, highs.get(key, 0), snapshots.get(key))
                present = names
            replacements[key] = st.exploded(zset, all_columns, present)

        def replace(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
                key = normalize_table_name(node)
                if key in replacements:
                    alias = node.alias or node.name
                    # quoted: a table named like a keyword (`join`, `order`) is read without an alias
                    return sqlglot.parse_one(replacements[key], read=DIALECT).subquery(
                        exp.to_identifier(alias, quoted=True))
            return node

        return tree.transform(replace).sql(dialect=DIALECT, pretty=True)

    def _snapshot_leaf(self, program: Program, highs: dict[str, int], snapshots: dict[str, Optional[int]],
                       consolidate_indexes: bool = False):
        """Inputs at their captured marks: the join index where one is kept (already built; with
        ``consolidate_indexes`` its pieces summed per row, for a check that compares states
        row by row), else the change table consolidated up to the mark."""
        def leaf(scan: Scan) -> str:
            use = program.inputs[scan.input]
            if use.stateful:
                index = self.tables.index(scan.input)
                if not consolidate_indexes:
                    return index
                cols = ", ".join(quote(c) for c in use.columns)
                pieces = f"SELECT {cols}{', ' if use.columns else ''}{st.WEIGHT} FROM {index}"
                return f"(\n{st.consolidated(pieces, use.columns)}\n) AS _ivm_index"
            zset = self._snapshot_zset(scan.input, use.columns, highs.get(scan.input, 0), snapshots.get(scan.input))
            return f"(\n{zset}\n) AS _ivm_snapshot"

        return leaf

    def _full_sql(self, program: Optional[Program], highs: dict[str, int], snapshots: dict[str, Optional[int]]) -> str:
        """The model's contents at the captured marks, with the names and types of its SELECT.

        Incremental models are built from the plan over the freshly built state, so every row a
        later run retracts is exactly a row built here (floating-point aggregates included);
        Spark names and types the columns from the model's own SQL.
        """
        user_sql = self._substituted_sql(program, highs, snapshots)
        if program is None:
            return user_sql
        described = self.db.run(f"DESCRIBE QUERY {user_sql}", fetch=True)
        names_types = [(str(r[0]), str(r[1])) for r in described]
        return self._plan_rows_sql(program, self._snapshot_leaf(program, highs, snapshots), names_types)

    def _plan_rows_sql(self, program: Program, leaf: Callable[[Scan], str], names_types) -> str:
        """The model's rows from the plan over the state, cast to the target's names and types."""
        plan = at_version(program.plan, Version.OLD)
        internal = list(plan.columns)
        # join indexes may hold a row in several pieces: sum them before making copies
        zset = st.consolidated(to_sql(plan, program.env(leaf, self._state_table)), internal)
        outs = ", ".join(
            f"CAST(_ivm_z.{col} AS {typ}) AS {quote(name)}" for col, (name, typ) in zip(internal, names_types)
        )
        return (
            f"SELECT {outs}\nFROM (\n{zset}\n) AS _ivm_z\n"
            f"LATERAL VIEW explode(sequence(1, _ivm_z.{st.WEIGHT})) _ivm_copies AS _ivm_copy"
        )

    def _rebuild(self, program: Optional[Program], log: Optional[LogEntry], highs: dict[str, int], reason: str) -> Outcome:
        logger.info(f"incremental_ivm model '{self.model}': full rebuild ({reason})")
        self._validate(program, {k: (None, h) for k, h in highs.items()})
        seq = (log.seq if log else 0) + 1
        fingerprint = program.fingerprint() if program else ""
        interrupted = log is not None and log.status != "committed"
        log = log.committed if log is not None else None  # what downstream models consumed
        old_columns = [tuple(c) for c in log.target_columns] if log else []
        self._write_log(seq, "started", "full", reason, fingerprint, highs, None, 0, 0, old_columns)
        self.fault("after_started")
        snapshots = self._upstream_snapshots(highs)
        if program is not None:
            for key, use in program.inputs.items():
                if use.stateful:
                    zset = self._snapshot_zset(key, use.columns, highs.get(key, 0), snapshots.get(key))
                    self.db.run(st.create_table_as(self.tables.index(key), self.indexed_rows(use, zset), replace=True))
                    self.fault(f"after_state:{key}")
            leaf = self._snapshot_leaf(program, highs, snapshots)
            for statement in program.state_builds(leaf, self._state_table):
                table = self._state_table(statement.aggregate, statement.state)
                self.db.run(st.create_table_as(table, statement.sql, replace=True))
                self.fault(f"after_state:{statement.aggregate}__{statement.state}")
        old_target_columns = self.db.columns(self.tables.target)
        self.db.run(st.create_table_as(self.tables.target, self._full_sql(program, highs, snapshots), replace=True))
        self.fault("after_target")
        new_columns = self.db.columns(self.tables.target)
        names = [c for c, _ in new_columns]
        changes_columns = self.db.columns(self.tables.changes)
        same_shape = (
            log is not None and log.target_snapshot is not None
            and [tuple(c) for c in old_target_columns] == [tuple(c) for c in new_columns]
            and [c for c, _ in changes_columns] == names + [st.WEIGHT, st.SEQ]
        )
        if same_shape:
            if interrupted:  # rows an interrupted rebuild published were never committed
                self.db.run(f"DELETE FROM {self.tables.changes} WHERE {st.SEQ} > {int(log.seq)}")
            self.db.run(st.diff_into_changes(
                self.tables.changes, self.tables.target,
                f"{self.tables.target} VERSION AS OF {int(log.target_snapshot)}", names, seq))
        else:
            self.db.run(st.create_table_as(
                self.tables.changes,
                f"SELECT *, CAST(0 AS BIGINT) AS {st.WEIGHT}, CAST(0 AS BIGINT) AS {st.SEQ} "
                f"FROM {self.tables.target} WHERE FALSE",
                replace=True,
            ))
        self.fault("after_publish")
        owned = self._owned_tables(program)
        self.compacted_rows = {}
        self.live_rows = {}
        recorded = self._read_after_writes(owned, {n: owned[n] for n in self.index_names})
        target_name = self.tables.target_display
        total = self.live_rows.get(target_name, 0)  # a table just built has no deletes
        self.index_rows = dict(self.compacted_rows)
        self.fault("before_commit")
        self._write_log(seq, "committed", "full", reason, fingerprint, highs, recorded.get(target_name), total, 0,
                        new_columns, recorded)
        return Outcome(mode="full", reason=reason, rows_inserted=total, seq=seq, statements=self.db.count)
