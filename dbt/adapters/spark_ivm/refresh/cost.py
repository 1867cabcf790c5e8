"""Under ``ivm_policy: auto``, whether a run rebuilds the model because applying its change is
expected to cost more than a rebuild — estimated from what this model's own runs cost. Each
commit records, in its log entry, the last run of each kind (``Costs``: its sequence, seconds
and rows), and a run whose change it can count decides::

    incremental(w) >= min over the last two incremental runs of t_i * min(1, w / w_i)
                                                  t_i seconds applied w_i change rows: the least
                                                  w rows can cost, whatever part of t_i was
                                                  fixed — as both runs measured it, so that one
                                                  run slowed by something else (a busy machine,
                                                  a rival run) cannot send the model to rebuilds
                                                  (one run measured: no estimate, applied)
                   and, for w > w_inc, >= t_inc + slope * (w - w_inc)
                                                  slope: seconds per row between an earlier
                                                  incremental run (t_small over w_small <=
                                                  w_inc / SPREAD rows) and the last one —
                                                  (t_inc - t_small) / (w_inc - w_small), at
                                                  least 0: the cost per row a 10x larger change
                                                  showed, which a larger one pays at least again
                                                  (this bound replaces the first)
                   and, when n counts every input, >= t_full * w / n_full
                                                  a change row costs at least what a rebuild
                                                  paid per row it read (measured or not: a
                                                  change of more than MARGIN times the rows its
                                                  inputs hold — an Iceberg input's files
                                                  rewritten whole — is rebuilt on its first run)
    rebuild(n)      ~ t_full * n / n_full         t_full seconds rebuilt over n_full input rows

    rebuild  iff  incremental(w) > MARGIN * rebuild(n)
             and  incremental(w) - rebuild(n) >= ivm_rebuild_min_saving seconds

so only when even the cheapest estimate of the incremental run loses by a clear margin (a join
whose changed keys are spread over its inputs reads them whole either way). ``w``: the rows of
the windows of the changed change tables (their row counts now minus at the last commit), of the
changes the changed upstream models published since the commit this model consumed (the rows
each has published in all, its log's ``published``, now minus then) and those the snapshots of a
changed Iceberg input wrote since the one consumed (the records of the data files its change
reads — added and removed, from their summaries, or planned where delete files are in the
window — each summed per row counting ``SUMMED_ROW_COST``); ``n``: the rows of every
input's change table and Iceberg input (an upstream model's target counts as it was at the last
rebuild, so with one ``n`` does not count every input and gives no bound per row). A run whose
change cannot be counted so (a diffed input; an Iceberg input read by difference — replaced,
rolled back, or with delete files in its window; an upstream model whose log records no
``published``) applies it. An incremental cost measured more than ``REMEASURE_AFTER`` sequences
ago is measured again — the run applies its change, unless the bound per row alone says rebuild
(it compares the rows, ``w > MARGIN * n``, whatever the runs cost) — so one slow run cannot keep
a model on rebuilds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional

from dbt.adapters.spark_ivm.ivm_inputs import CHANGE_TABLE, IVM_MODEL, SNAPSHOTS

if TYPE_CHECKING:
    from dbt.adapters.spark_ivm.refresh.context import Run

MARGIN = 1.2
# A row of an Iceberg input's change that is summed per row (the files a copy-on-write commit
# rewrote and those that replaced them, the files added) counts as this many rows of a rebuild's
# input: it is read, then shuffled to sum it, where the rebuild's scan reads it once. Measured on
# TPC-H SF 1 (Q1 over lineitem, a 0.1 % refresh batch whose copy-on-write delete rewrote one of
# its two files: 6 M rows read and summed): 7.4-9.8 s against a 3.9-4.9 s rebuild of 6 M rows.
# A row read only to keep the rows deletes delete (merge-on-read, iceberg_files.py) counts one
# (the same batch merge-on-read: 2.4-4.5 s against 4.1-4.8 s).
SUMMED_ROW_COST = 2
REMEASURE_AFTER = 10
SPREAD = 4  # an earlier run gives a slope when the last one applied at least this many times its rows
COUNTED = (CHANGE_TABLE, IVM_MODEL)  # the kinds of input whose change a run counts by row counts (change_rows)
SIZED = (CHANGE_TABLE, SNAPSHOTS)  # the kinds of input whose rows a rebuild's cost scales with (input_sizes)


@dataclass(frozen=True)
class Cost:
    """One run: its sequence, its seconds (from its start to its commit) and the rows it was
    measured against (change rows for an incremental run, input rows for a rebuild)."""

    seq: int
    seconds: float
    rows: int

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "seconds": round(self.seconds, 3), "rows": self.rows}

    @staticmethod
    def from_json(value: Any) -> Optional["Cost"]:
        if not isinstance(value, Mapping):
            return None
        try:
            return Cost(int(value["seq"]), float(value["seconds"]), int(value["rows"]))
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class Costs:
    """The last incremental run and the last rebuild a commit knows of, the incremental run
    before the last (``previous``: a rebuild needs both to expect it) and the latest earlier
    incremental run of at most 1/``SPREAD`` the last one's rows (``smaller``, for the slope)."""

    incremental: Optional[Cost] = None
    full: Optional[Cost] = None
    smaller: Optional[Cost] = None
    previous: Optional[Cost] = None

    def to_json(self) -> dict[str, Any]:
        kinds = (("incremental", self.incremental), ("full", self.full), ("smaller", self.smaller),
                 ("previous", self.previous))
        return {k: c.to_json() for k, c in kinds if c}

    @staticmethod
    def from_json(value: Any) -> "Costs":
        if not isinstance(value, Mapping):
            return Costs()
        return Costs(*(Cost.from_json(value.get(k)) for k in ("incremental", "full", "smaller", "previous")))

    def applied(self, run: Cost) -> "Costs":
        """These costs after the incremental ``run``: it is the last, the last before it the
        previous; the smaller run is the one before it if that applied at most 1/``SPREAD`` of
        its rows, else the kept one if it still did."""
        smaller = next((c for c in (self.incremental, self.smaller)
                        if c is not None and c.rows * SPREAD <= run.rows), None)
        return Costs(incremental=run, full=self.full, smaller=smaller, previous=self.incremental)


def input_sizes(run: "Run", input_rows: Mapping[str, int]) -> dict[str, int]:
    """The rows of each input's change table and of each Iceberg input (an upstream model's count
    is what it published, not its size)."""
    return {k: n for k, n in input_rows.items() if run.inputs[k].kind in SIZED}


def rebuild_rows(run: "Run", input_rows: Mapping[str, int]) -> int:
    """What a rebuild's cost scales with: the rows of every input's change table and Iceberg
    input (an upstream model's target taken as it was at the last rebuild)."""
    return sum(input_sizes(run, input_rows).values())


@dataclass(frozen=True)
class Estimate:
    incremental: float  # the least seconds applying the change can take
    rebuild: float  # the seconds a rebuild is expected to take
    smaller: Optional[Cost] = None  # the earlier run whose slope the incremental estimate extends
    previous: Optional[Cost] = None  # the run before the last, whose bound the estimate agrees with
    per_row: bool = False  # the incremental estimate is the rebuild's cost per row read, times the change


def estimate(costs: Costs, seq: int, change: Optional[int], inputs: int,
             every_input: bool = False) -> Optional[Estimate]:
    """Both estimates, or None when the run should apply its change whatever they say: its
    change cannot be counted, the model was never rebuilt, or the incremental cost was measured
    by fewer than two runs in the last ``REMEASURE_AFTER`` sequences (the last and the one
    before it; or the last and a smaller one, for a change larger than the last) — unless
    ``inputs`` counts ``every_input`` of the model, when the rebuild's cost per row read bounds
    the change's."""
    inc, full = costs.incremental, costs.full
    if change is None or full is None:
        return None
    rebuild = full.seconds * inputs / full.rows if full.rows > 0 and inputs > 0 else full.seconds
    per_row = full.seconds * change / full.rows if every_input and full.rows > 0 else None
    unmeasured = None if per_row is None else Estimate(per_row, rebuild, per_row=True)

    def recent(c: Optional[Cost]) -> bool:
        return c is not None and seq - c.seq <= REMEASURE_AFTER

    if inc is None or not recent(inc):
        return unmeasured
    small, prev = costs.smaller, costs.previous
    if small is not None and recent(small) and change > inc.rows > small.rows:
        slope = max(0.0, (inc.seconds - small.seconds) / (inc.rows - small.rows))
        incremental, prev = inc.seconds + slope * (change - inc.rows), None
    elif prev is not None and recent(prev):
        incremental, small = min(_least(inc, change), _least(prev, change)), None
    else:
        return unmeasured
    if per_row is not None and per_row > incremental:
        return unmeasured
    return Estimate(incremental, rebuild, small, prev)


def _least(run: Cost, change: int) -> float:
    """The least ``change`` rows can cost, as ``run`` measured it: its seconds, scaled down to a
    smaller change."""
    return run.seconds * min(1.0, change / run.rows) if run.rows > 0 else run.seconds


def rebuilds(e: Estimate, min_saving: float) -> bool:
    return e.incremental > MARGIN * e.rebuild and e.incremental - e.rebuild >= min_saving
