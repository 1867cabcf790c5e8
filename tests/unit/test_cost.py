"""The cost rule of ``ivm_policy: auto`` (``refresh/cost.py``), run on recorded costs."""

import pytest

from dbt.adapters.spark_ivm.refresh.cost import MARGIN, REMEASURE_AFTER, Cost, Costs, estimate, rebuilds

# an incremental run at sequence 10 took 30 s for 1,000 change rows; a rebuild at 8, 10 s over 1 M rows
COSTS = Costs(incremental=Cost(10, 30.0, 1_000), full=Cost(8, 10.0, 1_000_000))


def test_the_incremental_estimate_is_a_lower_bound_and_the_rebuild_scales_with_the_inputs():
    e = estimate(COSTS, seq=11, change=500, inputs=2_000_000)
    assert (e.incremental, e.rebuild) == (15.0, 20.0)  # half the rows: at least half the time
    e = estimate(COSTS, seq=11, change=5_000, inputs=1_000_000)
    assert (e.incremental, e.rebuild) == (30.0, 10.0)  # more rows: at least the measured time


@pytest.mark.parametrize("change, min_saving, expected", [
    (1_000, 0, True),     # 30 s against 10 s
    (1_000, 20, True),    # saves exactly 20 s
    (1_000, 21, False),   # saves less than asked
    (400, 0, False),      # 12 s: not 20 % slower than 10 s
    (410, 0, True),       # 12.3 s
    (10, 0, False),       # a small change: 0.3 s at least
])
def test_a_rebuild_is_chosen_only_when_clearly_cheaper(change, min_saving, expected):
    e = estimate(COSTS, seq=11, change=change, inputs=1_000_000)
    assert rebuilds(e, min_saving) is expected
    assert (e.incremental > MARGIN * e.rebuild and e.incremental - e.rebuild >= min_saving) is expected


@pytest.mark.parametrize("costs, seq, change", [
    (COSTS, 11, None),                                   # the change cannot be counted
    (Costs(full=COSTS.full), 11, 1_000),                 # never ran incrementally
    (Costs(incremental=COSTS.incremental), 11, 1_000),   # never rebuilt
    (COSTS, 10 + REMEASURE_AFTER + 1, 1_000),            # measured too long ago: measured again
])
def test_without_a_usable_measurement_the_change_is_applied(costs, seq, change):
    assert estimate(costs, seq, change, 1_000_000) is None


def test_empty_measurements_do_not_divide_by_zero():
    e = estimate(Costs(Cost(1, 5.0, 0), Cost(1, 2.0, 0)), seq=2, change=10, inputs=0)
    assert (e.incremental, e.rebuild) == (5.0, 2.0)


def test_costs_round_trip_through_the_log_json():
    assert Costs.from_json(COSTS.to_json()) == COSTS
    assert Costs.from_json({"incremental": {"seq": "x"}}) == Costs()
    assert Costs.from_json(None) == Costs()
