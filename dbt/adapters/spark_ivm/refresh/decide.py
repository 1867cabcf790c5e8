"""Under ``ivm_policy: auto``, the decision a run takes once it has observed its inputs: rebuild
when applying the change is expected to cost clearly more than a rebuild (the estimate is
``cost.py``'s, from this model's recorded runs; the change counted from what the run observed)."""

from __future__ import annotations

from typing import Optional

from dbt.adapters.spark_ivm.ivm_inputs import SNAPSHOTS
from dbt.adapters.spark_ivm.refresh.capture import View
from dbt.adapters.spark_ivm.refresh.context import Run
from dbt.adapters.spark_ivm.refresh.cost import COUNTED, SIZED, SUMMED_ROW_COST, estimate, rebuild_rows, rebuilds


def change_rows(run: Run, view: View) -> Optional[int]:
    """The rows of the change a run applies, when every changed input's count (``input_rows``:
    a change table's rows, an upstream model's rows published) is known now and at the last
    commit, and every changed Iceberg input's snapshots count what they wrote
    (``snapshot_changes``: each row its change sums per row counts ``SUMMED_ROW_COST`` rows,
    one it only scans one); else None."""
    assert view.log is not None
    total = 0
    for key in view.changed:
        if run.inputs[key].kind == SNAPSHOTS:
            if key in view.diffed or key not in view.snapshot_changes:
                return None
            scanned = view.snapshot_scanned.get(key, 0)
            total += SUMMED_ROW_COST * (view.snapshot_changes[key] - scanned) + scanned
            continue
        before = view.log.counts.inputs.get(key)
        if run.inputs[key].kind not in COUNTED or before is None or key not in view.input_rows:
            return None
        total += max(view.input_rows[key] - before, 0)
    return total



def cheaper_to_rebuild(run: Run, view: View) -> Optional[str]:
    """Why an ``auto`` run that could apply its change rebuilds instead, or None."""
    if run.config.policy != "auto" or view.log is None:
        return None
    change = change_rows(run, view)
    every_input = all(source.kind in SIZED for source in run.inputs.values())
    e = estimate(view.log.costs, view.seq, change, rebuild_rows(run, view.input_rows), every_input)
    if e is None or not rebuilds(e, run.config.rebuild_min_saving):
        return None
    inc, full = view.log.costs.incremental, view.log.costs.full
    assert full is not None
    rebuilt = f"the last rebuild, sequence {full.seq}: {full.seconds:.1f} s over {full.rows} input rows"
    if e.per_row:
        measured = f"{rebuilt}, and a change row costs at least what a rebuild pays per row it reads"
    else:
        assert inc is not None  # an estimate not per row extends two measured incremental runs
        other = e.smaller or e.previous
        assert other is not None
        which = "an earlier, smaller one" if e.smaller else "the one before it"
        measured = (f"the last incremental run, sequence {inc.seq}: {inc.seconds:.1f} s for {inc.rows} rows; "
                    f"{which}, sequence {other.seq}: {other.seconds:.1f} s for {other.rows} rows; {rebuilt}")
    return (f"a rebuild is expected to be cheaper: applying the change ({change} rows) at least "
            f"{e.incremental:.1f} s, rebuilding {e.rebuild:.1f} s ({measured}; ivm_rebuild_min_saving "
            f"{run.config.rebuild_min_saving:g} s)")
