"""Bad input, found before any write: NULL or zero weights, late writes, and (for a rebuild, or
an input with a join index) deletes of rows that are not there — in one statement over the
change windows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional

from dbt.adapters.spark_ivm.ivm_inputs import CHANGE_TABLE
from dbt.adapters.spark_ivm.refresh.context import Run
from dbt.adapters.spark_ivm.refresh.reading import index_delta_sql
from ivm_core import bookkeeping as bk
from ivm_core import statements as st
from ivm_core.compiler import Program

if TYPE_CHECKING:
    from dbt.adapters.spark_ivm.refresh.log import LogEntry

Window = tuple[Optional[int], int]  # (consumed, captured]; consumed None: the whole history


def validate(run: Run, program: Optional[Program], windows: Mapping[str, Window], input_rows: Mapping[str, int],
             log: Optional["LogEntry"] = None, bounds: Optional[Mapping[str, str]] = None) -> None:
    """A late write — rows appended with an ``_ivm_seq`` the model already consumed — shows as a
    change table holding more rows than the last commit counted plus the window's rows (the
    capture counted them from Iceberg's metadata). In an incremental run the writes that apply a
    change refuse deletes of absent rows of the result and the aggregate states (``apply``); a
    join index is read only within the ``bounds`` of the change's keys (``key_bounds``)."""
    bounds = bounds or {}
    checks = []
    labels = {}
    for i, (key, (low, high)) in enumerate(sorted(windows.items())):
        source = run.inputs[key]
        if source.kind != CHANGE_TABLE:
            continue
        label_w, label_n = f"w{i}", f"n{i}"
        labels[label_w] = (key, "weight", low, high)
        checks.append(st.tagged(label_w, st.window_check(source.changes, low, high), with_total=True))
        if low is None:  # a rebuild: whole rows, over the whole history
            labels[label_n] = (key, "absent", low, high)
            names = [c for c, _ in run.schemas[key]]
            history = st.consolidated_changes(source.changes, names, None, high)
            checks.append(st.tagged(label_n, st.negative_after(history, None, names)))
        elif program is not None and program.inputs.get(key) is not None and program.inputs[key].stateful:
            use = program.inputs[key]  # the columns the join index keeps
            labels[label_n] = (key, "absent", low, high)
            delta = index_delta_sql(run, key, use, low, high)
            index = run.tables.index(key)
            if key in bounds:
                index = st.within(index, bounds[key])
            checks.append(st.tagged(label_n, st.negative_after(delta, index, use.columns)))
    if not checks:
        return
    rows = run.db.run(bk.union_all(checks), fetch=True)
    for label, bad, total in sorted(rows, key=lambda r: r[0]):
        key, what, low, high = labels[label]
        if what == "weight" and log is not None and key in log.counts.inputs and key in input_rows:
            extra = input_rows[key] - log.counts.inputs[key] - int(total or 0)
            if extra:
                history_changed(run, key, log, extra)
        bad = int(bad or 0)
        if not bad:
            continue
        window = f"_ivm_seq in ({low}, {high}]" if low is not None else f"_ivm_seq <= {high}"
        if what == "weight":
            problem = f"{bad} row(s) with a NULL or zero _ivm_weight ({window})"
        else:
            problem = (f"{bad} row(s) delete rows that do not exist in the input {key} "
                       f"(their multiplicity would become negative; {window})")
        raise run.fail(f"change table {run.inputs[key].display_changes}: {problem}")


def history_changed(run: Run, key: str, log: "LogEntry", extra: int) -> None:
    """Refuse a change table whose consumed history gained (``extra`` > 0) or lost rows."""
    mark = log.watermarks.get(key, 0)
    if extra > 0:
        problem = (
            f"{extra} row(s) were written with an _ivm_seq at or below {mark} (or NULL) after this model "
            f"consumed sequence {mark} — a late write into the past, which the model can no longer apply. "
            "Write them with a new, higher _ivm_seq (or rebuild with --full-refresh)"
        )
    else:
        problem = (
            f"{-extra} row(s) with an _ivm_seq at or below {mark} were removed after this model consumed "
            "them — the input's history changed. Restore them (or rebuild with --full-refresh)"
        )
    raise run.fail(f"change table {run.inputs[key].display_changes}: {problem}")
