"""The model's log (``<model>__log``): one 'committed' entry per run that changed something, and a
'started' entry before a rebuild that the next run must not roll back should it die (rebuild.py).
The committed entry is the commit point of a run: it records what the run consumed (each input's
high mark), the Iceberg snapshot of every table the model owns, and row counts and run costs
(``cost.Costs``, in the same JSON) the next run decides from."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Optional, Sequence

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_ivm.refresh.db import is_missing_table, optional_int

from dbt.adapters.spark_ivm.refresh.context import Run
from dbt.adapters.spark_ivm.refresh.cost import Costs
from ivm_core import bookkeeping as bk
from ivm_core import statements as st


@dataclass(frozen=True)
class RowCounts:
    """Row counts a commit records (all from Iceberg metadata)."""

    # what each input's change is counted by, at its captured mark (cost.py): a change table's
    # rows; an upstream model's rows published (its ``published``) up to the commit consumed; an
    # Iceberg input's rows (its snapshot's ``total-records``: its change is counted from the
    # summaries of the snapshots in between)
    inputs: Mapping[str, int] = field(default_factory=dict)
    compacted: Mapping[str, int] = field(default_factory=dict)  # each table of pieces' rows at its last compaction
    index_rows: Mapping[str, int] = field(default_factory=dict)  # each table of pieces' rows at the commit
    tables: Mapping[str, int] = field(default_factory=dict)  # the target's and each aggregate state's rows
    # each change table's snapshot its marks (its high mark, its rows above) were read at (capture.View's)
    input_snapshots: Mapping[str, int] = field(default_factory=dict)
    # the rows this model has published in <model>__changes up to the commit, all runs together
    # (never less when consumed rows are pruned): a reader's change is the difference (None:
    # not recorded, as before logs had it)
    published: Optional[int] = None


@dataclass(frozen=True)
class LogEntry:
    seq: int
    status: str  # started | committed
    mode: str  # incremental | full
    fingerprint: str
    watermarks: Mapping[str, int]  # each input's consumed high mark
    target_snapshot: Optional[int]
    target_columns: list[list[str]]
    model_sql: str
    snapshots: Mapping[str, Optional[int]]  # every owned table's snapshot (display name -> id)
    counts: RowCounts
    # the first sequence from which <model>__changes holds every committed change (older ones
    # pruned, or never published while no model read them; 0: all of them, as logs before it)
    changes_from: int = 0
    costs: Costs = Costs()  # the last incremental run and the last rebuild (cost.py)
    # the Spark types the commit's run bound its aggregates with (``Program.types``); None: not recorded
    types: Optional[Mapping[str, str]] = None
    committed: Optional["LogEntry"] = None  # the last committed entry (self unless a rebuild was interrupted)


def read_log(run: Run) -> Optional[LogEntry]:
    """The log's last entry, with ``.committed`` the last committed one; None before a first run."""
    rows = run.metadata.log_rows(run.tables.log)
    if rows is None:
        try:
            rows = run.db.run(bk.read_log(run.tables.log), fetch=True)
        except DbtRuntimeError as e:
            if is_missing_table(e):
                return None
            raise
    return log_from_rows(rows)


def log_from_rows(rows: Sequence[Sequence[Any]]) -> Optional[LogEntry]:
    """The entry ``bk.read_log``'s rows (``which`` and the entry's columns) describe."""
    entries = {row[0]: _entry(row[1:1 + _ENTRY_WIDTH]) for row in rows}
    last = entries.get("last")
    if last is None:
        return None
    committed = entries.get("committed")
    if committed is not None and (committed.seq, committed.status) == (last.seq, last.status):
        committed = last
    return replace(last, committed=committed)


_ENTRY_WIDTH = len(bk.LOG_ENTRY_COLUMNS.split(","))  # the columns after ``which``


def _entry(row: Sequence[Any]) -> LogEntry:
    seq, status, mode, fingerprint, marks, snapshot, columns, model_sql, snapshots, row_counts, changes_from = row
    counts = json.loads(row_counts or "{}")
    return LogEntry(
        seq=int(seq),
        status=status,
        mode=mode,
        fingerprint=fingerprint or "",
        watermarks={k: int(v) for k, v in json.loads(marks or "{}").items()},
        target_snapshot=optional_int(snapshot),
        target_columns=json.loads(columns or "[]"),
        model_sql=model_sql or "",
        snapshots={k: optional_int(v) for k, v in json.loads(snapshots or "{}").items()},
        counts=RowCounts(
            inputs={k: int(v) for k, v in counts.get("inputs", {}).items()},
            compacted={k: int(v) for k, v in counts.get("indexes", {}).items()},
            index_rows={k: int(v) for k, v in counts.get("index_rows", {}).items() if v is not None},
            tables={k: int(v) for k, v in counts.get("tables", {}).items() if v is not None},
            input_snapshots={k: int(v) for k, v in counts.get("input_snapshots", {}).items()},
            published=optional_int(counts.get("published")),
        ),
        changes_from=int(changes_from or 0),
        costs=Costs.from_json(counts.get("costs")),
        types=_types(counts.get("types")),
    )


def _types(value: Any) -> Optional[dict[str, str]]:
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        return None
    return {str(k): v for k, v in value.items()}


@dataclass(frozen=True)
class Entry:
    """A log entry to write. ``target_snapshot``, ``snapshots`` and ``row_counts`` are SQL
    expressions (literals, or metadata queries Spark evaluates in the same INSERT)."""

    seq: int
    status: str
    mode: str
    reason: Optional[str]
    fingerprint: str
    highs: Mapping[str, int]
    changes_from: int  # see LogEntry
    inserted: int = 0
    deleted: int = 0
    columns: Sequence[Sequence[str]] = ()
    target_snapshot: str = "NULL"
    snapshots: str = "'{}'"
    row_counts: str = "'{}'"


def write_log(run: Run, entry: Entry) -> None:
    """Append the entry. A run that holds a lock row (``lock.Lease``) commits fenced: its
    'committed' entry lands only while no other run took its lease over (``bk.commit_fenced``)."""
    values = [
        str(int(entry.seq)),
        st.string_literal(entry.status),
        st.string_literal(entry.mode),
        "NULL" if entry.reason is None else st.string_literal(entry.reason),
        st.string_literal(entry.fingerprint),
        json_literal(entry.highs),
        entry.target_snapshot,
        str(int(entry.inserted)),
        str(int(entry.deleted)),
        st.string_literal(json.dumps([list(c) for c in entry.columns])),
        st.string_literal(run.sql),
        entry.snapshots,
        "current_timestamp()",
        entry.row_counts,
        str(int(entry.changes_from)),
    ]
    if entry.status == "committed" and run.config.lock_row:
        try:
            run.db.run(bk.commit_fenced(run.tables.log, values, entry.seq, run.owner))
        except DbtRuntimeError as e:
            if bk.LEASE_FENCED not in str(e) and "conflicting files" not in str(e):
                raise
            raise DbtRuntimeError(
                f"incremental_ivm model '{run.model}': another run took this run's lock over before it "
                f"committed sequence {entry.seq}: this run committed nothing, and the run that holds the lock "
                "rolls back what it wrote."
            ) from e
    else:
        run.db.run(bk.insert_log_entry(run.tables.log, values))


def json_literal(value: Any) -> str:
    return st.string_literal(json.dumps(value, sort_keys=True))


def row_counts_literal(counts: RowCounts, costs: Costs, types: Optional[Mapping[str, str]] = None) -> str:
    """The row counts, costs and (``types``) the aggregates' Spark types as one JSON literal."""
    recorded: dict[str, Any] = {} if types is None else {"types": dict(types)}
    if counts.published is not None:
        recorded["published"] = counts.published
    return json_literal({"inputs": dict(counts.inputs), "indexes": dict(counts.compacted),
                         "index_rows": dict(counts.index_rows), "tables": dict(counts.tables),
                         "input_snapshots": dict(counts.input_snapshots), "costs": costs.to_json(), **recorded})


def row_counts_measured(inputs: Mapping[str, int], input_snapshots: Mapping[str, int], compacted: str,
                        index_rows: str, tables: str, costs: Costs, types: Mapping[str, str],
                        published: Optional[int]) -> str:
    """The row counts, costs and the aggregates' Spark types as one JSON string expression, three
    of its maps measured in SQL."""
    total = "" if published is None else f"', \"published\": {int(published)}', "
    return (f"concat('{{\"costs\": ', {json_literal(costs.to_json())}, ', \"indexes\": ', {compacted}, "
            f"', \"index_rows\": ', {index_rows}, ', \"input_snapshots\": ', {json_literal(dict(input_snapshots))}, "
            f"', \"inputs\": ', {json_literal(dict(inputs))}, {total}', \"tables\": ', {tables}, "
            f"', \"types\": ', {json_literal(dict(types))}, '}}')")
