"""One refresh of an incremental_ivm model, as its steps and commit points.

    1  register the model in this process            (for the whole run), and SET the
       model's ivm_spark_conf (RESET before a rebuild, which keeps the session's settings, and
       after the run, whatever its end)
    2  observe, in one statement: the log, every input's high mark and row count (a change
       table's snapshot after its marks), every owned table's Iceberg snapshot and the lock row
       (embedded: the log, the snapshots, the change tables' marks and the upstream models' last
       commits from the catalog, no statement when they are all it reads)
                                                   (capture.py; writes nothing)
       nothing moved → noop (the one exit before any write)
    3  a first run, or one whose tables are missing: CREATE the companion schema, log and lock
       tables (IF NOT EXISTS: a concurrent run may create them too)
    4  take the lock row for sequence S               (lock.py; compare-and-swap against the
       row observed. A live holder: read the log once more — it may have committed since —
       then fail, having changed nothing. A dead or expired holder's row is taken over, its
       commit fenced (a log row that voids it), and the run observes again, under the lock.
       From here the run holds the row as a lease: renewed while it works, checked before
       every statement; a run that lost it stops, and its commit would fail)
    5  under the lock only: roll back what a dead run left uncommitted     (recover.py)
    6  rebuild (rebuild.py) — under ivm_policy 'auto' also when this model's recorded costs
       expect a rebuild to be clearly cheaper than applying the change (decide.py) — or apply
       the change (apply.py), every change table read at the snapshot step 2 captured, each
       ending in its commit point: the log's 'committed' entry for S, which also frees the lock
       row (a run whose only changed inputs are diffed ones that differ in nothing from the
       model's copies is a noop: it frees the row)

A run that fails applying its change rolls back what it wrote, still under the lock (unless its
commit landed), then frees its lock row; one that dies leaves it to expire (or to be taken at once
once its process is known dead); the next run that holds the lock rolls its uncommitted writes
back. With ``lock_row`` False (the embedded catalog, which admits one process) the in-process
registration of step 1 is the lock, and the commit is a plain append.
"""

from __future__ import annotations

from typing import Optional

from dbt.adapters.spark_ivm.refresh import lock
from dbt.adapters.spark_ivm.refresh.analysis import Fallback, bind_aggregate_types, compile_program, run_fingerprint
from dbt.adapters.spark_ivm.refresh.apply import GroupsIrregular, apply_change
from dbt.adapters.spark_ivm.refresh.capture import TABLE_MISSING, View, observe
from dbt.adapters.spark_ivm.refresh import embedded
from dbt.adapters.spark_ivm.refresh.db import logger
from dbt.adapters.spark_ivm.refresh.context import IvmInputError, Outcome, Run
from dbt.adapters.spark_ivm.refresh.decide import cheaper_to_rebuild
from dbt.adapters.spark_ivm.refresh.rebuild import rebuild
from dbt.adapters.spark_ivm.refresh.log import read_log
from dbt.adapters.spark_ivm.refresh.recover import recover, undo
from ivm_core import bookkeeping as bk
from ivm_core.compiler import Program
from ivm_core.rules.aggregate.held import GROUPS_APART
from ivm_core.sqltext import quote


def refresh(run: Run) -> Outcome:
    program, not_incremental = compile_program(run, bind_types=False)
    with lock.registered(run), SparkSettings(run) as settings:
        view = observe(run, program, not_incremental)
        if view.noop:
            return _noop(run, view)
        if view.log is None or view.reason == TABLE_MISSING:  # (a log with an entry has its lock table)
            _create_companion_tables(run)
        if not run.config.lock_row:
            return _write(run.reading_at(view.input_snapshots), program, view, settings)
        view, lease = _take_lock(run, program, not_incremental, view)
        if lease is None:
            return _noop(run, view)
        try:
            with lease:
                return _write(run.reading_at(view.input_snapshots), program, view, settings)
        except BaseException:
            _free_lock_row(run)
            raise


class SparkSettings:
    """The model's ``ivm_spark_conf``, SET on entry; each setting is RESET (to the session's
    initial value) by ``reset`` and on exit, whatever the run's end. The embedded session is set
    through its JVM (embedded.py), other connections with ``SET`` and ``RESET`` statements."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.embedded = embedded.is_embedded(run.db.adapter)
        self.done: list[str] = []

    def __enter__(self) -> "SparkSettings":
        try:
            for key, value in self.run.config.spark_conf:
                if self.embedded:
                    embedded.set_conf(key, value)
                else:
                    self.run.db.run(f"SET {key}={value}")
                self.done.append(key)
        except BaseException:
            self.reset()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.reset()

    def reset(self) -> None:
        while self.done:
            key = self.done.pop()
            try:
                if self.embedded:
                    embedded.reset_conf(key)
                else:
                    self.run.db.run(f"RESET {key}")
            except Exception:  # the session ends with the connection anyway
                logger.debug(f"[ivm {self.run.model}] could not reset {key}")


def _take_lock(run: Run, program: Optional[Program], not_incremental: Optional[Fallback],
               view: View) -> tuple[View, Optional[lock.Lease]]:
    """Take the lock row; returns what the run observes while it holds it, and its lease (None:
    nothing to do after all, the row freed)."""
    row = _lock_row(run, view)
    if lock.held(row, view.committed_seq):
        view = observe(run, program, not_incremental)  # its run may have committed since the log read
        if view.noop:
            return view, None
        row = _lock_row(run, view)
    taken_over = row is not None and not lock.free_by_commit(row, view.committed_seq)
    # refuses a live holder: nothing changed
    lease = lock.Lease(run, view.seq, lock.take_row(run, row, view.seq, view.committed_seq)).start()
    if not taken_over:
        return view, lease
    assert row is not None
    # the dead or expired run whose row this run took may have committed after the log read:
    # fence its commit, then observe again, now that no other run can write
    try:
        run.db.run(bk.fence_lease(run.tables.log, row.seq, row.owner))
        under_lock = observe(run, program, not_incremental)
        if under_lock.noop:
            lock.release_row(run)
            return under_lock, None
        if under_lock.seq > view.seq:  # it had committed: hold the row for the next sequence
            lease.move_to(under_lock.seq)
        return under_lock, lease
    except BaseException:
        _free_lock_row(run)
        raise


def _lock_row(run: Run, view: View) -> Optional[lock.LockRow]:
    """The lock row as the capture read it, else as it is now."""
    return view.lock if view.lock_read else lock.read_row(run)


def _write(run: Run, program: Optional[Program], view: View, settings: SparkSettings) -> Outcome:
    """Under the lock: undo a dead run's leftovers, then rebuild (with the session's settings)
    or apply the change, whichever the recorded costs expect cheaper under ``auto``."""
    reason = view.reason
    if reason is None and view.moved:
        assert view.log is not None  # else observe() gave a reason
        reason = recover(run, view.moved, view.log, view.owned)
        if reason is None and not view.changed:
            _free_lock_row(run)
            return _noop(run, view)
    if reason is None:
        reason = cheaper_to_rebuild(run, view)
    if program is not None:  # applying the change: with the types its last commit (same fingerprint) recorded
        bind_aggregate_types(run, program, view.log.types if reason is None and view.log is not None else None)
        if reason is not None:
            _keep_groups_apart(run, program, view)
    if reason is not None:
        settings.reset()
        return rebuild(run, program, view.log, view.highs, view.input_rows, reason, view.input_snapshots,
                       view.upstream_snapshots)
    assert program is not None  # else observe() gave a reason
    try:
        outcome = apply_change(run, program, view)
    except GroupsIrregular:  # the run was undone
        for agg_id in program.held_aggregates:
            program.keep_groups_apart(agg_id)
        settings.reset()
        return rebuild(run, program, view.log, view.highs, view.input_rows,
                       "the change leaves a group with a SUM of a NULL value or one that overflowed: the group "
                       "state is kept in a table of its own from now on", view.input_snapshots,
                       view.upstream_snapshots)
    except (IvmInputError, lock.LeaseLost):  # bad input: the run was undone; a lost lease: not this run's to undo
        raise
    except Exception:
        _undo_failed(run, view)
        raise
    if outcome is None:  # its diffed inputs had not changed after all
        _free_lock_row(run)
        return _noop(run, view)
    return outcome


def _undo_failed(run: Run, view: View) -> None:
    """A run that failed applying its change rolls back what it wrote, still under the lock, so
    that readers see the last commit's state rather than a half-applied change (the next run's
    recovery stays the backstop, for a run that dies). Unless its commit landed: a commit
    statement may fail after it did (a lost connection)."""
    assert view.log is not None
    try:
        log = read_log(run)
        if log is not None and log.committed is not None and log.committed.seq >= view.seq:
            return
        undo(run, view.log, view.owned)
    except Exception as e:  # the next run rolls them back
        logger.warning(f"incremental_ivm model '{run.model}': could not roll back the failed run's writes ({e}); "
                       "the next run will")


def _keep_groups_apart(run: Run, program: Program, view: View) -> None:
    """A rebuild keeps the group states its last commit kept apart (``Layout.groups_apart``), when
    the model's SQL and inputs are the same: a group was irregular, and likely still is. A
    ``--full-refresh`` tries the target as the group state again."""
    if run.full_refresh or view.log is None or view.log.fingerprint != run_fingerprint(run, program):
        return
    for agg_id in program.layouts:
        if (view.log.types or {}).get(agg_id + GROUPS_APART) == "true":
            program.keep_groups_apart(agg_id)


def _noop(run: Run, view: View) -> Outcome:
    return Outcome(mode="noop", seq=view.log.seq if view.log else None, statements=run.db.count)


def _free_lock_row(run: Run) -> None:
    if not run.config.lock_row:
        return
    try:
        lock.release_row(run)
    except Exception:  # the lock then expires, or its dead process is noticed
        logger.debug(f"[ivm {run.model}] could not release the lock")


def _create_companion_tables(run: Run) -> None:
    t = run.tables
    run.db.run(bk.create_schema(quote(t.state_schema)))
    run.db.run(bk.create_log(t.log))
    run.db.run(bk.create_lock(t.companion("lock")))
