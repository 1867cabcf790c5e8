"""Undo writes that were never committed: roll owned tables back to the snapshots the last
commit recorded (Iceberg keeps them). Only ever under the lock: a moved snapshot is a dead run's
leftover only when no live run holds the model."""

from __future__ import annotations

from typing import Mapping, Optional

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.refresh.capture import OwnedTables, current_snapshots
from dbt.adapters.spark_ivm.refresh.db import logger
from dbt.adapters.spark_ivm.refresh.context import Run
from dbt.adapters.spark_ivm.refresh.log import LogEntry
from ivm_core import bookkeeping as bk


def recover(run: Run, moved: Mapping[str, Optional[int]], log: LogEntry, owned: OwnedTables) -> Optional[str]:
    """Roll back what a run that died before committing wrote — an incremental run's writes or a
    rebuild's replaced tables. Returns a rebuild reason when a moved table has no recorded
    snapshot to go back to (a table the last commit did not have, or one dropped and created
    again since)."""
    for name in sorted(moved):
        if log.snapshots.get(name) is None:
            return f"the previous run was interrupted and {name} cannot be rolled back"
    try:
        roll_back(run, moved, log, owned)
    except DbtRuntimeError as e:
        logger.debug(f"[ivm {run.model}] rollback failed: {e}")
        return ("the previous run was interrupted and a table it wrote no longer holds the snapshot "
                "of the last commit")
    logger.warning(
        f"incremental_ivm model '{run.model}': the previous run was interrupted before it committed; "
        f"rolled back {', '.join(sorted(moved))} to the last committed state"
    )
    return None


def undo(run: Run, log: LogEntry, owned: OwnedTables) -> None:
    """Roll every table this run wrote back to the last commit's snapshot."""
    now = current_snapshots(run, owned)
    roll_back(run, {name: snap for name, snap in now.items() if snap != log.snapshots.get(name)}, log, owned)


def roll_back(run: Run, moved: Mapping[str, Optional[int]], log: LogEntry, owned: OwnedTables) -> None:
    for name in sorted(moved):
        recorded = log.snapshots.get(name)
        if recorded is not None:
            run.db.run(bk.roll_back(owned.tables[name], recorded))
