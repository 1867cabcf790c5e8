"""One writer per model.

A run registers the model in its process for the whole run (``registered``): threads of one
process never overlap. Runs of other processes meet at the model's lock row
(``<model>__lock``: owner, seq, expires_at), taken by a compare-and-swap against the row the run
observed (owner, seq and expiry). The row is a lease (``Lease``): its holder renews it every
quarter of ``ivm_lock_timeout`` while it works, and stops before any statement once it can no
longer be sure it holds it; so a live run is never taken over, however long it runs. The row is
released by the commit of its sequence (a row whose sequence is committed is free), or at once by
a run that fails or wrote nothing. A dead run's row is free once it expires, or at once when its
process is known dead (one of this machine's pid space). A run that takes over a row fences its
holder's commit (``bk.fence_lease``) before it reads the log again: the commit of a lease
(``bk.commit_fenced``) and the fence of it cannot both land.
"""

from __future__ import annotations

import math
import os
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, NamedTuple, Optional

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.refresh.config import STALLED
from dbt.adapters.spark_ivm.refresh.db import logger
from dbt.adapters.spark_ivm.refresh.context import Run, process_identity
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
    """The row's run may still be writing: not expired, and not a process known to be over —
    one of this pid space (same kernel boot and pid namespace: ``process_identity``) that is
    dead, or this very process, whose runs are registered, so the one holding the model now is
    the caller. An owner of another pid space (another machine, another container on this
    host) is live until its lease expires."""
    if row is None or row.expires_at < time.time():
        return False
    parts = row.owner.split(":")
    if len(parts) != 4 or parts[3] != process_identity() or not parts[1].isdigit():
        return True
    pid = int(parts[1])
    return pid != os.getpid() and _process_alive(pid)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def take_row(run: Run, observed: Optional[LockRow], seq: int, committed_seq: int) -> int:
    """Take the lock row for sequence ``seq``: refuse if the row this run observed belongs to a
    live run; otherwise a compare-and-swap that fails if the row is no longer ``observed`` —
    its holder renewed it meanwhile, or another run took it (and of two concurrent commits of
    the row, the catalog fails one). Returns the expiry written."""
    if observed is not None and held(observed, committed_seq):
        owner, held_seq, expires_at = observed
        raise DbtRuntimeError(
            f"incremental_ivm model '{run.model}' is being refreshed by another run ({owner}, sequence "
            f"{held_seq}); its lock expires at {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(expires_at))} UTC. "
            "Nothing was changed."
        )
    expected = None if observed is None else (observed.owner, observed.seq, observed.expires_at)
    expires_at = _expiry(run)
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
    return expires_at


def _expiry(run: Run) -> int:
    return math.ceil(time.time() + run.config.lock_timeout)


def _holder_now(run: Run) -> Optional[str]:
    try:
        row = read_row(run)
    except DbtRuntimeError:
        return None
    return row.owner if row is not None and row.owner != run.owner else None


def release_row(run: Run) -> None:
    """Free the row now (this run failed, or wrote nothing), its lease's renewal stopped first."""
    lease = _LEASES.get(run.owner)
    if lease is not None:
        lease.stop()
    run.db.run(bk.release_lock(run.tables.companion("lock"), run.owner))


class LeaseLost(DbtRuntimeError):
    """The run can no longer be sure it holds its lock row: it stops before its next statement."""


# the leases this process's runs hold (run owner -> lease)
_LEASES: dict[str, "Lease"] = {}


class Lease:
    """The lock row a run took for sequence ``seq``, held while the ``with`` block runs.

    * Renewed every quarter of ``ivm_lock_timeout`` (``interval``) by a thread of its own on a
      connection of its own: a compare-and-swap on (owner, seq) that moves the expiry on. A
      renewal that finds the row another run's loses the lease; one that fails otherwise is
      retried at the next beat.
    * Checked before every statement of the run (``Executor.guard``): valid while more than
      ``interval`` is left of the expiry last written; with less, the run renews it at once
      itself, and stops (``LeaseLost``) if it cannot. Another run takes a row over only after
      its expiry, so the holder stops starting statements at least ``interval`` before that.
    * The run's commit names the lease (``bk.commit_fenced``): should the run be paused past its
      expiry and its row taken over meanwhile, the commit fails.
    """

    def __init__(self, run: Run, seq: int, expires_at: int) -> None:
        self.run = run
        self.seq = seq
        self.expires_at = expires_at
        self.interval = run.config.lock_timeout / 4
        self.lost: Optional[str] = None
        self._renewing = threading.RLock()  # (check renews within move_to's statement)
        self._stopped = threading.Event()
        self._beat: Optional[threading.Thread] = None

    def start(self) -> "Lease":
        """Renew the lease from now on, and check it before every statement of the run."""
        _LEASES[self.run.owner] = self
        self.run.db.guard = self.check
        self._beat = threading.Thread(target=self._renew_while_held, name=f"ivm-lease-{self.run.model}",
                                      daemon=True)
        self._beat.start()
        return self

    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Renew no more, nor check (the run ends, or frees its row: it writes nothing more)."""
        self._stopped.set()
        self.run.db.guard = lambda: None
        _LEASES.pop(self.run.owner, None)
        if self._beat is not None and self._beat is not threading.current_thread():
            self._beat.join()

    def move_to(self, seq: int) -> None:
        """Hold the row for sequence ``seq`` instead (the run found the sequence it took committed
        by the run it took the row over from)."""
        with self._renewing:
            self._swap(self.run.db.run, seq)

    def _swap(self, execute: Callable[[str], object], seq: int) -> None:
        """Compare-and-swap of this run's own row (owner and sequence): hold it for ``seq`` with
        the expiry moved on; the statement fails with ``bk.LOCK_TAKEN`` if another run took it."""
        expires_at = _expiry(self.run)
        execute(bk.take_lock(self.run.tables.companion("lock"), (self.run.owner, self.seq, None), self.run.owner,
                             seq, expires_at))
        self.seq, self.expires_at = seq, expires_at

    def check(self) -> None:
        """Raise ``LeaseLost`` unless the run may run its next statement."""
        if self.lost is None and time.time() >= self.expires_at - self.interval and not self._stopped.is_set():
            self._renew(self.run.db.adapter)  # the renewals fell behind: on the run's own connection
        if self.lost is None and time.time() >= self.expires_at - self.interval:
            self.lost = f"its lease, which expires at {self._expiry_text()}, could not be renewed in time"
        if self.lost is not None:
            raise LeaseLost(
                f"incremental_ivm model '{self.run.model}': this run lost its lock on sequence {self.seq}: "
                f"{self.lost}. It stopped before its next statement and committed nothing; the run that "
                "takes the lock over rolls back what this one wrote."
            )

    def _renew_while_held(self) -> None:
        adapter = self.run.db.adapter
        try:
            with adapter.connection_named(f"ivm-lease-{self.run.model}"):
                while not self._stopped.wait(self.interval) and self.lost is None:
                    if not STALLED.is_set():
                        self._renew(adapter)
        except Exception as e:  # the lease then lapses: the run's own check renews or stops it
            logger.debug(f"[ivm {self.run.model}] lease renewal stopped: {e}")
        finally:
            adapter.connections.clear_thread_connection()

    def _renew(self, adapter: Any) -> None:
        """One renewal, on the calling thread's connection."""
        with self._renewing:
            if self.lost is not None:
                return
            try:
                self._swap(lambda sql: adapter.execute(sql, auto_begin=False, fetch=False), self.seq)
            except Exception as e:
                taken = str(e).partition(bk.LOCK_TAKEN + " ")[2].split()
                if taken:
                    self.lost = f"another run ({taken[0]}) took it over"
                else:
                    logger.debug(f"[ivm {self.run.model}] lease renewal failed, retried: {e}")

    def _expiry_text(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.expires_at))
