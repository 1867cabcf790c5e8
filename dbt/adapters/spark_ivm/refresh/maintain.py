"""Retention and maintenance: keep a model's tables as fast to read and to commit to in a year as
on its first day. Under the lock and before its commit point, a run (incremental or rebuild)::

    prune published changes               <model>__changes, below the sequence every model of
                                          the project that reads it consumed (their logs say),
                                          every ivm_maintenance_every sequences; all of it once
                                          no model reads it (it then publishes nothing). The
                                          commit records the first sequence still held
                                          (changes_from): a model that consumed less rebuilds

and every ``ivm_maintenance_every`` sequences::

    probe                                 per table the model writes (and its log and lock):
                                          its snapshots older than the boundary below, and its
                                          data files smaller than SMALL_FILE_BYTES
    compact small files                   a table with two or more (the log, the target, the
                                          aggregate states and the pieces appended to a join
                                          index: a file per run each); the same rows
    expire old snapshots                  committed before ivm_snapshot_retention seconds ago
                                          and before the last commit's snapshot (which a
                                          rollback of this run needs), with the files only they
                                          reference

A compaction is a snapshot like any write of the run: the commit records it, a run that dies
before the commit has it rolled back, and so is a prune. Expiry writes no snapshot. The probe
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
from ivm_core import bookkeeping as bk

# files below this are compacted: the per-run pieces (an index's sorted files, written by its
# own compaction, are far larger and keep their order)
SMALL_FILE_BYTES = 8 << 20


def maintain_when_due(run: Run, seq: int, owned: OwnedTables, kept: Mapping[str, Optional[int]],
                      changes_from: int) -> int:
    """Prune the published changes (``changes_from``: the first sequence the last commit held
    them from) and, at a sequence ``seq`` that is a multiple of ``ivm_maintenance_every``,
    compact and expire the model's tables (``kept``: the last commit's snapshot of each, which
    stay). Returns the first sequence the model's changes are held from after this run."""
    every = run.config.maintenance_every
    due = every > 0 and seq % every == 0
    changes_from = _prune_changes(run, seq, changes_from, due)
    if due:
        _maintain(run, owned, kept)
        run.fault("after_maintenance")
    return changes_from


def _prune_changes(run: Run, seq: int, changes_from: int, due: bool) -> int:
    if not run.publishes:  # no model reads them: nothing is kept (this run published nothing)
        if changes_from < seq:
            run.db.run(bk.prune_changes(run.tables.changes, seq))
            logger.info(f"incremental_ivm model '{run.model}': no incremental_ivm model reads its changes: "
                        f"pruned them (sequences up to {seq})")
        return seq + 1
    if not due or run.config.publish_always:
        return changes_from
    consumed = [mark for mark in (_consumed(run, c.log, c.key) for c in run.consumers) if mark is not None]
    if not consumed or min(consumed) < changes_from:
        return changes_from
    through = min(min(consumed), seq - 1)
    run.db.run(bk.prune_changes(run.tables.changes, through))
    logger.info(f"incremental_ivm model '{run.model}': pruned its published changes up to sequence {through}, "
                f"which {', '.join(c.name for c in run.consumers)} consumed")
    return through + 1


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
    for u in sorted(run.metadata.upkeep(tables, kept, run.config.snapshot_retention, SMALL_FILE_BYTES),
                    key=lambda u: u.name):
        if u.small_files >= 2 and u.name != t.display("changes"):
            run.db.run(bk.compact_small_files(tables[u.name], SMALL_FILE_BYTES))
            compacted.append(u.name)
        if u.old_snapshots > 0 and u.older_than_ms is not None:
            run.metadata.expire_snapshots(tables[u.name], u.older_than_ms)
            expired.append(f"{u.name} ({u.old_snapshots})")
    logger.info(f"incremental_ivm model '{run.model}': maintenance compacted "
                f"{', '.join(compacted) or 'nothing'}; expired snapshots of {', '.join(expired) or 'nothing'}")
