"""``dbt run-operation ivm_status`` (SPEC §6b), for people and orchestrators: per incremental_ivm
model its last committed run, whether a run holds it, the rows and bytes of its state, and per
input how far it consumed against what is available — the lag in commits and in seconds.

A commit of an input is: a sequence of its change table, a committed run of an upstream model,
a snapshot of an Iceberg input. The lag in seconds is the age of the oldest commit the model has
not consumed (0 when it consumed everything): the upstream's log time, the input's snapshot
time; for a change table, which records no time per sequence, its oldest Iceberg snapshot
committed after the model's last commit (else that commit's time). Everything is read from the model's log and Iceberg
metadata; nothing is written.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Optional

from dbt.adapters.spark_ivm.ivm_inputs import CHANGE_TABLE, IVM_MODEL, SNAPSHOTS
from dbt.adapters.spark_ivm.refresh.capture import NO_TABLES, capture
from dbt.adapters.spark_ivm.refresh.context import Run, is_missing_table
from dbt.adapters.spark_ivm.refresh.lock import LockRow, held
from dbt.adapters.spark_ivm.refresh.log import read_log
from dbt_common.exceptions import DbtRuntimeError
from ivm_core import bookkeeping as bk
from ivm_core import statements as st
from ivm_core.sqltext import quote


@dataclass
class InputStatus:
    input: str
    source: str  # change table | incremental_ivm model | Iceberg snapshots | no change source
    consumed: Optional[int]  # sequence, or snapshot id
    available: Optional[int]
    behind: int  # commits not consumed
    lag_seconds: float  # age of the oldest commit not consumed (0: none)


@dataclass
class ModelStatus:
    model: str
    relation: str
    last_seq: Optional[int] = None  # None: never committed
    last_mode: Optional[str] = None
    last_committed_at: Optional[str] = None
    last_reason: Optional[str] = None
    rows: Optional[int] = None  # the target's
    state_bytes: int = 0  # join indexes, aggregate states and published changes
    running: Optional[str] = None  # who holds the model, or a rebuild that started and did not commit
    inputs: list[InputStatus] = field(default_factory=list)

    @property
    def lag_seconds(self) -> float:
        return max((i.lag_seconds for i in self.inputs), default=0.0)


def model_status(run: Run) -> ModelStatus:
    status = ModelStatus(run.model, run.tables.target_display)
    log = read_log(run)
    committed = log.committed if log else None
    if log is not None and log.status != "committed":
        status.running = f"a rebuild at sequence {log.seq} started and has not committed (running, or it died)"
    captured = capture(run, NO_TABLES, committed, read_lock=False)
    if run.config.lock_row:
        lock = _lock_holder(run, committed.seq if committed else 0)
        status.running = lock or status.running
    if committed is not None:
        status.last_seq, status.last_mode = committed.seq, committed.mode
    status.inputs = [_input_status(run, key, committed.watermarks.get(key) if committed else None,
                                   captured.highs.get(key))
                     for key in sorted(run.inputs)]
    if committed is None:
        return status
    for kind, a, b in run.db.run(_details_sql(run), fetch=True):
        if kind == "run" and a is not None:
            status.last_committed_at, status.last_reason = str(a), b
        elif kind == "rows":
            status.rows = int(a) if a is not None else None
        elif kind == "bytes":
            status.state_bytes += int(a or 0)
    return status


def _lock_holder(run: Run, committed_seq: int) -> Optional[str]:
    try:
        rows = run.db.run(bk.capture_lock(run.tables.companion("lock")), fetch=True)
    except DbtRuntimeError as e:
        if is_missing_table(e):
            return None
        raise
    row = LockRow.parse(str(rows[0][1])) if rows else None
    return f"held by {row.owner} for sequence {row.seq}" if row is not None and held(row, committed_seq) else None


def _input_status(run: Run, key: str, consumed: Optional[int], available: Optional[int]) -> InputStatus:
    source = run.inputs[key]
    if source.kind not in (CHANGE_TABLE, IVM_MODEL, SNAPSHOTS) or consumed is None or available == consumed:
        return InputStatus(key, source.kind, consumed, available, 0, 0.0)
    if source.kind == CHANGE_TABLE:
        sql = bk.change_table_lag(source.changes, int(consumed), run.tables.log)
    elif source.kind == IVM_MODEL:
        sql = bk.upstream_lag(source.upstream_model.log, int(consumed))
    else:
        sql = bk.snapshot_lag(source.base, int(consumed))
    behind, lag = run.db.run(sql, fetch=True)[0]
    return InputStatus(key, source.kind, consumed, available, int(behind or 0), float(lag or 0.0))


def _details_sql(run: Run) -> str:
    """The last commit's time and reason, the target's rows, the bytes of each companion table
    that holds state or published changes (not the log and the lock)."""
    t = run.tables
    prefix = f"{t.identifier}__".lower()
    names = [str(row[1]) for row in run.db.run(bk.show_tables(quote(t.state_schema)), fetch=True)]
    state = [st.quote_relation(t.state_schema, n) for n in sorted(names)
             if n.lower().startswith(prefix) and n.lower() not in (prefix + "log", prefix + "lock")]
    return bk.model_details(t.log, t.target, state)


def report(statuses: list[ModelStatus], max_lag_seconds: Optional[float], as_json: bool) -> tuple[str, list[str]]:
    """The report (text, or JSON) and the models whose lag exceeds ``max_lag_seconds``."""
    late = [s.model for s in statuses if max_lag_seconds is not None and s.lag_seconds > max_lag_seconds]
    if as_json:
        return json.dumps([{**asdict(s), "lag_seconds": s.lag_seconds} for s in statuses], indent=2), late
    lines = []
    for s in statuses:
        last = (f"seq {s.last_seq}, {s.last_mode}, committed {s.last_committed_at}"
                + (f" ({s.last_reason})" if s.last_reason else "")) if s.last_seq is not None else "never run"
        lines.append(f"{s.model} ({s.relation}): {last}; {s.rows if s.rows is not None else '?'} rows; "
                     f"lag {s.lag_seconds:.0f} s" + (f"; {s.running}" if s.running else ""))
        for i in s.inputs:
            lines.append(f"  {i.input} ({i.source}): consumed {i.consumed}, available {i.available}, "
                         f"{i.behind} commit(s) behind, {i.lag_seconds:.0f} s")
    return "\n".join(lines), late
