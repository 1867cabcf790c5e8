"""``dbt run-operation ivm_status`` (SPEC §6b), for people and orchestrators: per incremental_ivm
model its last committed run, whether a run holds it, the rows and bytes of its state, and per
input how far it consumed against what is available — the lag in commits and in seconds.

A commit of an input is: a sequence of its change table, a committed run of an upstream model,
a snapshot of an Iceberg input. The lag in seconds is the age of the oldest commit the model has
not consumed (0 when it consumed everything): the upstream's log time, the input's snapshot
time; for a change table, which records no time per sequence, its oldest Iceberg snapshot
committed after the model's last commit (else that commit's time). Everything is read from the
model's log and Iceberg metadata (sizes as ``dbt docs generate`` measures them: ``ivm_catalog``);
nothing is written.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Optional

from dbt.adapters.spark_ivm.ivm_catalog import companion_tables, measure
from dbt.adapters.spark_ivm.ivm_inputs import CHANGE_TABLE, IVM_MODEL, SNAPSHOTS
from dbt.adapters.spark_ivm.refresh.capture import NO_TABLES, capture
from dbt.adapters.spark_ivm.refresh.db import is_missing_table
from dbt.adapters.spark_ivm.refresh.context import Run
from dbt.adapters.spark_ivm.refresh.lock import held, read_row
from dbt.adapters.spark_ivm.refresh.log import read_log
from dbt_common.exceptions import DbtRuntimeError
from ivm_core import bookkeeping as bk


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
    rows: Optional[int] = None  # the target's, at the last commit
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
        status.running = _lock_holder(run, committed.seq if committed else 0) or status.running
    status.inputs = [_input_status(run, key, committed.watermarks.get(key) if committed else None,
                                   captured.highs.get(key))
                     for key in sorted(run.inputs)]
    if committed is None:
        return status
    status.last_seq, status.last_mode = committed.seq, committed.mode
    status.rows = committed.counts.tables.get(run.tables.target_display)  # nothing else writes the target
    t = run.tables
    owned = companion_tables(run.db.adapter, t.state_schema, [t.identifier])
    sizes, runs = measure(run.db.adapter, t.state_schema, owned)
    status.state_bytes = sum(size for size, _ in sizes.values())
    if t.identifier in runs:
        _, _, status.last_committed_at, _, status.last_reason = runs[t.identifier]
    return status


def _lock_holder(run: Run, committed_seq: int) -> Optional[str]:
    try:
        row = read_row(run)
    except DbtRuntimeError as e:
        if is_missing_table(e):
            return None
        raise
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
