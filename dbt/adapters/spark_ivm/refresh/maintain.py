"""Retention and maintenance: keep a model's tables as fast to read and to commit to in a year as
on its first day. Under the lock and before its commit point, a run (incremental or rebuild)::

    prune published changes               <model>__changes, below the sequence every model of
                                          the project that reads it consumed (their logs say),
                                          every ivm_maintenance_every sequences; all of it once
                                          no model reads it (it then publishes nothing). A
                                          reader more than ivm_changes_retention sequences
                                          behind holds them no longer (a warning names it). The
                                          commit records the first sequence still held
                                          (changes_from): a model that consumed less rebuilds
    prune the log                         <model>__log, with the changes: its entries below the
                                          last commit and below every reader's consumed
                                          sequence (a reader looks up the commit it consumed)

and every ``ivm_maintenance_every`` sequences::

    probe                                 per table the model writes (and its log and lock):
                                          its snapshots older than the boundary below, and its
                                          data files smaller than SMALL_FILE_BYTES
    compact small files                   a table with two or more (the log, the target, the
                                          aggregate states and the pieces appended to a join
                                          index: a file per run each); the same rows
    expire old snapshots                  committed before ivm_snapshot_retention seconds ago
                                          and before the last commit's snapshot (which a
                                          rollback of this run needs) — for the target, before
                                          that of the commit the furthest-behind reader consumed
                                          (which it reads the target at) — with the files only
                                          they reference

A compaction is a snapshot like any write of the run: the commit records it, a run that dies
before the commit has it rolled back, and so is a prune. A compaction or an expiry that fails (a
cluster that refuses the procedure, a concurrent commit) is a warning, not the run's failure: the
next maintenance tries again. Expiry writes no snapshot. The probe
and the expiry go through the embedded session's Iceberg catalog when it has one, with no Spark
job; else one metadata-table statement and the ``expire_snapshots`` procedure (metadata.py).
``<model>__changes`` is not compacted: each sequence's rows stay in files of their own, so a
downstream model's window skips the others by their metadata, and a prune drops whole files.
"""

from __future__ import annotations

from typing import Mapping, Optional

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.refresh.capture import OwnedTables
from dbt.adapters.spark_ivm.refresh.db import is_missing_table, logger
from dbt.adapters.spark_ivm.refresh.context import Run
from dbt.adapters.spark_ivm.refresh.lock import LeaseLost
from ivm_core import bookkeeping as bk

# files below this are compacted: the per-run pieces (an index's sorted files, written by its
# own compaction, are far larger and keep their order)
SMALL_FILE_BYTES = 8 << 20


def maintain_when_due(run: Run, seq: int, owned: OwnedTables, kept: Mapping[str, Optional[int]],
                      changes_from: int, committed_seq: int) -> int:
    """Prune the published changes (``changes_from``: the first sequence the last commit held
    them from) and, at a sequence ``seq`` that is a multiple of ``ivm_maintenance_every``, the
    log (``committed_seq``: its last commit's, which stays) and compact and expire the model's
    tables (``kept``: the last commit's snapshot of each, which stay). Returns the first
    sequence the model's changes are held from after this run."""
    every = run.config.maintenance_every
    due = every > 0 and seq % every == 0
    consumed = _consumed_marks(run) if due else {}
    changes_from = _prune_changes(run, seq, changes_from, due, consumed)
    if due:
        # (a reader more than ivm_changes_retention behind rebuilds: it holds nothing back)
        read_from = min([committed_seq, *(m for m in consumed.values() if m >= changes_from - 1)])
        _prune_log(run, read_from)
        _maintain(run, owned, {**kept, **_target_read_at(run, read_from, committed_seq)})
        run.fault("after_maintenance")
    return changes_from


def _consumed_marks(run: Run) -> dict[str, int]:
    """How far each model of the project that reads this one consumed it (by name; none before
    its first run)."""
    marks = {c.name: _consumed(run, c.log, c.key) for c in run.consumers}
    return {name: mark for name, mark in marks.items() if mark is not None}


def _prune_changes(run: Run, seq: int, changes_from: int, due: bool, consumed: Mapping[str, int]) -> int:
    if not run.publishes:  # no model reads them: nothing is kept (this run published nothing)
        if changes_from < seq:
            run.db.run(bk.prune_changes(run.tables.changes, seq))
            logger.info(f"incremental_ivm model '{run.model}': no incremental_ivm model reads its changes: "
                        f"pruned them (sequences up to {seq})")
        return seq + 1
    if not due or run.config.publish_always or not consumed:
        return changes_from
    # a reader more than ivm_changes_retention sequences behind holds them no longer
    bound = seq - 1 - run.config.changes_retention
    behind = sorted(name for name, mark in consumed.items() if mark < bound)
    through = min(max(min(consumed.values()), bound), seq - 1)
    if through < changes_from:
        return changes_from
    run.db.run(bk.prune_changes(run.tables.changes, through))
    if behind:
        logger.warning(f"incremental_ivm model '{run.model}': {', '.join(behind)} consumed its changes only up to "
                       f"sequence {min(consumed[n] for n in behind)}, more than ivm_changes_retention "
                       f"({run.config.changes_retention}) sequences behind: pruned them up to {through}; "
                       f"{'they rebuild' if len(behind) > 1 else 'it rebuilds'} on the next run")
    logger.info(f"incremental_ivm model '{run.model}': pruned its published changes up to sequence {through}")
    return through + 1


def _target_read_at(run: Run, seq: int, committed_seq: int) -> dict[str, Optional[int]]:
    """The target's snapshot a reader may still read it at, to keep from expiry: the one of the
    commit at ``seq``, the least a reader consumed (it reads this model's target there, as it was
    before its change); none when that is the last commit, kept anyway."""
    if seq >= committed_seq:
        return {}
    rows = run.db.run(bk.upstream_target_snapshot(run.tables.target_display, run.tables.log, seq), fetch=True)
    snapshot = rows[0][1] if rows else None
    return {} if snapshot is None else {run.tables.target_display: int(snapshot)}


def _prune_log(run: Run, keep_from: int) -> None:
    """Delete the log's entries (and fences) below ``keep_from``: the last commit's sequence, or a
    reader's consumed one if lower (a reader looks up the target snapshot of the commit it
    consumed)."""
    run.db.run(bk.prune_log(run.tables.log, keep_from))


def _consumed(run: Run, consumer_log: str, key: str) -> Optional[int]:
    """How far a model that reads this one consumed it; None before its first run."""
    try:
        rows = run.db.run(bk.consumer_mark(consumer_log, key), fetch=True)
    except DbtRuntimeError as e:
        if is_missing_table(e):
            return None
        raise
    return None if not rows or rows[0][0] is None else int(rows[0][0])


def _maintain(run: Run, owned: OwnedTables, kept: Mapping[str, Optional[int]]) -> None:
    t = run.tables
    tables = dict(owned.tables)
    tables[t.display("log")] = t.log
    tables[t.display("lock")] = t.companion("lock")
    compacted, expired = [], []
    failed = []
    for u in sorted(run.metadata.upkeep(tables, kept, run.config.snapshot_retention, SMALL_FILE_BYTES),
                    key=lambda u: u.name):
        try:
            run.fault(f"in_maintenance:{u.name}")
            if u.small_files >= 2 and u.name != t.display("changes"):
                run.db.run(bk.compact_small_files(tables[u.name], SMALL_FILE_BYTES))
                compacted.append(u.name)
            if u.old_snapshots > 0 and u.older_than_ms is not None:
                run.metadata.expire_snapshots(tables[u.name], u.older_than_ms)
                expired.append(f"{u.name} ({u.old_snapshots})")
        except LeaseLost:
            raise
        except Exception as e:  # the next maintenance tries again; the run goes on
            failed.append(u.name)
            logger.warning(f"incremental_ivm model '{run.model}': maintenance of {u.name} failed, retried at the "
                           f"next maintenance: {str(e).strip().splitlines()[0] if str(e).strip() else e!r}")
    logger.info(f"incremental_ivm model '{run.model}': maintenance compacted "
                f"{', '.join(compacted) or 'nothing'}; expired snapshots of {', '.join(expired) or 'nothing'}"
                + (f"; failed for {', '.join(failed)}" if failed else ""))
