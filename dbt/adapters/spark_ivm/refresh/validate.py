"""Bad input, found before any write, in one statement over the change windows: NULL or zero
weights, late writes and, for a rebuild, deletes of rows that are not there (over the whole
history). The same statement answers the run's other questions about its windows (``Probes``:
the key values of an incremental run's change, ``reading.key_probes``). In an incremental run
the writes that apply the change refuse deletes of absent rows: each join index's append, the
result's and each aggregate state's write (``apply``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from dbt.adapters.spark_ivm.ivm_inputs import CHANGE_TABLE
from dbt.adapters.spark_ivm.refresh.db import logger
from dbt.adapters.spark_ivm.refresh.context import Run
from ivm_core import bookkeeping as bk
from ivm_core import statements as st

if TYPE_CHECKING:
    from dbt.adapters.spark_ivm.refresh.log import LogEntry
    from dbt.adapters.spark_ivm.refresh.records import Position

Window = tuple[Optional[int], int]  # (consumed, captured]; consumed None: the whole history


@dataclass
class Probes:
    """Questions about the change windows asked in one statement: each a probe row
    (``st.PROBE_COLUMNS``) under its own label."""

    parts: list[st.Probe | str] = field(default_factory=list)  # a probe, or a probe statement
    rows: dict[str, Sequence[Any]] = field(default_factory=dict)  # label -> its row, once asked (or answered)

    def add(self, part: st.Probe | str) -> None:
        self.parts.append(part)

    def answer(self, label: str, row: Sequence[Any]) -> None:
        """A probe's row known without asking (``st.probe_row``)."""
        self.rows[label] = (label, *row)

    def ask(self, run: Run) -> None:
        if self.parts:
            self.rows.update({row[0]: row for row in run.db.run(st.probes_sql(self.parts), fetch=True)})


@dataclass(frozen=True)
class Deletes:
    """What validation learned: the inputs whose change window deletes rows (``inputs``), and
    those whose window it read and found to insert rows only (``inserting_only``; an input read
    by its snapshots or diffed is in neither)."""

    inputs: frozenset[str] = frozenset()
    inserting_only: frozenset[str] = frozenset()


def validate(run: Run, windows: Mapping[str, Window], input_rows: Mapping[str, int],
             log: Optional["LogEntry"] = None, probes: Optional[Probes] = None,
             bases: Optional[Mapping[str, "Position"]] = None) -> Deletes:
    """A late write — rows appended with an ``_ivm_seq`` the model already consumed — shows as a
    change table holding more rows than the last commit counted plus the window's rows (the
    capture counted them from Iceberg's metadata). A rebuild (``log`` None) also checks, whole
    rows, that nothing is deleted that is not there: over the whole history, or over the window
    above each input's tagged base in ``bases`` against that base. ``probes`` are asked in the
    same statement. Returns which inputs' windows have deletes and which insert rows only."""
    probes = probes if probes is not None else Probes()
    bases = bases or {}
    checks: dict[str, tuple[str, str, Optional[int], int]] = {}
    for i, (key, (low, high)) in enumerate(sorted(windows.items())):
        source = run.inputs[key]
        if source.kind != CHANGE_TABLE or (low is not None and low >= high):
            continue
        label = f"w{i}"
        checks[label] = (key, "weight", low, high)
        probes.add(st.window_check(label, source.changes, low, high))
        if log is not None:
            continue  # an incremental run: the writes that apply the change refuse absent rows
        names = [c for c, _ in run.schemas[key]]
        window = st.consolidated_changes(source.changes, names, low, high)
        base = bases.get(key)
        rows = None if base is None else f"(\n{base.rows(names)}\n)"
        checks[f"n{i}"] = (key, "absent", low, high)
        probes.add(st.absent_rows(f"n{i}", st.negative_after(window, rows, names)))
    probes.ask(run)
    deletes, checked = set(), set()
    for label, (key, what, low, high) in sorted(checks.items()):
        _, bad, total, deleted = probes.rows[label][:4]
        if what == "weight" and log is not None and key in log.counts.inputs and key in input_rows:
            extra = input_rows[key] - log.counts.inputs[key] - int(total or 0)
            if extra:
                history_changed(run, key, log, extra)
        if what == "weight":
            checked.add(key)
        if deleted:
            deletes.add(key)
        bad = int(bad or 0)
        if not bad:
            continue
        window = f"_ivm_seq in ({low}, {high}]" if low is not None else f"_ivm_seq <= {high}"
        if key in bases and what == "absent":
            window += f", against its base {run.inputs[key].key} at tag {bk.BASE_TAG_PREFIX}{low}"
        if what == "weight":
            problem = f"{bad} row(s) with a NULL or zero _ivm_weight ({window})"
        else:
            problem = (f"{bad} row(s) delete rows that do not exist in the input {key} "
                       f"(their multiplicity would become negative; {window})")
        raise run.fail(f"change table {run.inputs[key].display_changes}: {problem}")
    return Deletes(frozenset(deletes), frozenset(checked - deletes))


def history_changed(run: Run, key: str, log: "LogEntry", extra: int) -> None:
    """Refuse a change table whose consumed history gained (``extra`` > 0) or lost rows — unless
    it lost them and its source is ``base: tagged``: then a rebuild reads the base, not the
    history, and consumed rows may be pruned (the commit records the new count)."""
    mark = log.watermarks.get(key, 0)
    if extra < 0 and run.inputs[key].base:
        logger.info(f"incremental_ivm model '{run.model}': {-extra} consumed change row(s) of "
                    f"{run.inputs[key].display_changes} were pruned")
        return
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
