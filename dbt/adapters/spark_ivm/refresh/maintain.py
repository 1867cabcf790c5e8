"""Maintenance: keep a model's tables as fast to read and to commit to in a year as on its first
day. Every ``ivm_maintenance_every`` sequences a run (incremental or rebuild), under the lock
and before its commit point::

    probe, in one statement               per table the model writes (and its log and lock):
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
before the commit has it rolled back. Expiry writes no snapshot. ``<model>__changes`` is not
compacted: each sequence's rows stay in files of their own, so a downstream model's window
skips the others by their metadata (pruning consumed changes is not done yet).
"""

from __future__ import annotations

from typing import Mapping, Optional

from dbt.adapters.spark_ivm.refresh.capture import OwnedTables
from dbt.adapters.spark_ivm.refresh.context import Run, logger
from ivm_core import bookkeeping as bk

# files below this are compacted: the per-run pieces (an index's sorted files, written by its
# own compaction, are far larger and keep their order)
SMALL_FILE_BYTES = 8 << 20


def maintain_when_due(run: Run, seq: int, owned: OwnedTables, kept: Mapping[str, Optional[int]]) -> None:
    """At a sequence ``seq`` that is a multiple of ``ivm_maintenance_every``: compact and expire
    the model's tables (``kept``: the last commit's snapshot of each, which stay)."""
    every = run.config.maintenance_every
    if every > 0 and seq % every == 0:
        _maintain(run, owned, kept)
        run.fault("after_maintenance")


def _maintain(run: Run, owned: OwnedTables, kept: Mapping[str, Optional[int]]) -> None:
    t = run.tables
    tables = dict(owned.tables)
    tables[t.display("log")] = t.log
    tables[t.display("lock")] = t.companion("lock")
    rows = run.db.run(bk.union_all([
        bk.maintenance_probe(name, table, kept.get(name), run.config.snapshot_retention, SMALL_FILE_BYTES)
        for name, table in sorted(tables.items())
    ]), fetch=True)
    compacted, expired = [], []
    for name, older_than, old_snapshots, small_files in sorted(rows):
        if int(small_files or 0) >= 2 and name != t.display("changes"):
            run.db.run(bk.compact_small_files(tables[name], SMALL_FILE_BYTES))
            compacted.append(name)
        if int(old_snapshots or 0) > 0 and older_than is not None:
            run.db.run(bk.expire_snapshots(tables[name], str(older_than)))
            expired.append(f"{name} ({int(old_snapshots)})")
    logger.info(f"incremental_ivm model '{run.model}': maintenance compacted "
                f"{', '.join(compacted) or 'nothing'}; expired snapshots of {', '.join(expired) or 'nothing'}")
