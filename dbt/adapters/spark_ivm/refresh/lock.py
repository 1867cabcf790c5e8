"""One writer per model.

A run registers the model in its process for the whole run (``registered``): threads of one
process never overlap. Runs of other processes meet at the model's lock row
(``<model>__lock``: owner 'host:pid:uuid', seq, expires_at), taken by a compare-and-swap against
the row the run observed. The row is released by the commit of its sequence (a row whose
sequence is committed is free), or at once by a run that fails or wrote nothing. A dead run's
row is free once it expires, or at once when its process is known dead (same host).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from contextlib import contextmanager
from typing import Iterator, NamedTuple, Optional

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.refresh.context import Run
from ivm_core import bookkeeping as bk

# Runs of this process holding a model (lock table -> owner). Iceberg commits of one JVM are
# kept apart by the catalog's commit lock; runs of one process are kept apart here, so a run
# never mistakes the writes of another run of its own process for a dead run's.
_HELD_IN_PROCESS: dict[str, str] = {}
_HELD_GUARD = threading.Lock()


class LockRow(NamedTuple):
    owner: str
    seq: int
    expires_at: int

    @staticmethod
    def parse(packed: str) -> "LockRow":
        """The capture's ``owner|seq|expires_at``."""
        owner, seq, expires_at = packed.rsplit("|", 2)
        return LockRow(owner, int(seq), int(expires_at))


@contextmanager
def registered(run: Run) -> Iterator[None]:
    """Hold the model in this process while the block runs; refuse if another run of this
    process holds it."""
    key = run.tables.companion("lock")
    with _HELD_GUARD:
        holder = _HELD_IN_PROCESS.get(key)
        if holder is not None:
            raise DbtRuntimeError(
                f"incremental_ivm model '{run.model}' is being refreshed by another run in this process "
                f"({holder}). Nothing was changed."
            )
        _HELD_IN_PROCESS[key] = run.owner
    try:
        yield
    finally:
        with _HELD_GUARD:
            if _HELD_IN_PROCESS.get(key) == run.owner:
                del _HELD_IN_PROCESS[key]


def read_row(run: Run) -> Optional[LockRow]:
    rows = run.db.run(bk.read_lock(run.tables.companion("lock")), fetch=True)
    return LockRow(str(rows[0][0]), int(rows[0][1]), int(rows[0][2])) if rows else None


def free_by_commit(row: Optional[LockRow], committed_seq: int) -> bool:
    """The row was last taken by a run that has committed (by the log the run read): no run has
    written since, for every writer takes the row first."""
    return row is None or row.seq <= committed_seq


def held(row: Optional[LockRow], committed_seq: int) -> bool:
    """Another run holds the model: its row's sequence is not committed and its run may be live."""
    return not free_by_commit(row, committed_seq) and held_by_live_run(row)


def held_by_live_run(row: Optional[LockRow]) -> bool:
    """The row's run may still be writing: not expired, and not a process known to be over
    (one of this host that is dead, or this very process — whose runs are registered, so the
    one holding the model now is the caller)."""
    if row is None or row.expires_at < time.time():
        return False
    host, _, rest = row.owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return True
    return int(pid) != os.getpid() and _process_alive(int(pid))


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def take_row(run: Run, observed: Optional[LockRow], seq: int, committed_seq: int) -> None:
    """Take the lock row for sequence ``seq``: refuse if the row this run observed belongs to a
    live run; otherwise a compare-and-swap that fails if the row is no longer ``observed`` (and
    of two concurrent commits of the row, the catalog fails one)."""
    if observed is not None and held(observed, committed_seq):
        owner, held_seq, expires_at = observed
        raise DbtRuntimeError(
            f"incremental_ivm model '{run.model}' is being refreshed by another run ({owner}, sequence "
            f"{held_seq}); its lock expires at {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(expires_at))} UTC. "
            "Nothing was changed."
        )
    expected = None if observed is None else (observed.owner, observed.seq)
    expires_at = int(time.time()) + run.config.lock_timeout
    try:
        run.db.run(bk.take_lock(run.tables.companion("lock"), expected, run.owner, seq, expires_at))
    except DbtRuntimeError as e:
        taken = str(e).partition(bk.LOCK_TAKEN + " ")[2].split()
        if taken:  # the row had changed since this run read it
            holder: Optional[str] = taken[0]
        else:  # both compare-and-swaps matched; the catalog failed this one's commit
            holder = _holder_now(run)
        who = f"another run ({holder})" if holder else "another run"
        raise DbtRuntimeError(
            f"incremental_ivm model '{run.model}': {who} took the lock at the same time. Nothing was changed."
        ) from e


def _holder_now(run: Run) -> Optional[str]:
    try:
        row = read_row(run)
    except DbtRuntimeError:
        return None
    return row.owner if row is not None and row.owner != run.owner else None


def release_row(run: Run) -> None:
    """Free the row now (this run failed, or wrote nothing)."""
    run.db.run(bk.release_lock(run.tables.companion("lock"), run.owner))
