"""The cost rule of ``ivm_policy: auto`` (``refresh/cost.py``), run on recorded costs."""

import pytest

from dbt.adapters.spark_ivm.refresh.cost import MARGIN, REMEASURE_AFTER, Cost, Costs, estimate, rebuilds

# incremental runs at sequences 9 and 10 took 30 s for 1,000 change rows; a rebuild at 8, 10 s over 1 M rows
COSTS = Costs(incremental=Cost(10, 30.0, 1_000), full=Cost(8, 10.0, 1_000_000), previous=Cost(9, 30.0, 1_000))


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
    (Costs(COSTS.incremental, COSTS.full), 11, 1_000),   # measured by one run only
    (Costs(COSTS.incremental, COSTS.full, previous=Cost(11 - REMEASURE_AFTER - 1, 30.0, 1_000)), 11, 1_000),
])
def test_without_a_usable_measurement_the_change_is_applied(costs, seq, change):
    assert estimate(costs, seq, change, 1_000_000) is None


def test_empty_measurements_do_not_divide_by_zero():
    e = estimate(Costs(Cost(1, 5.0, 0), Cost(1, 2.0, 0), previous=Cost(0, 6.0, 0)), seq=2, change=10, inputs=0)
    assert (e.incremental, e.rebuild) == (5.0, 2.0)


@pytest.mark.parametrize("previous, expected", [
    (Cost(9, 2.0, 1_000), 2.0),   # it took 2 s: the last run's 30 s was the machine's, not the change's
    (Cost(9, 30.0, 100), 30.0),   # a tenth of the rows in as long: at least 30 s either way
    (Cost(9, 60.0, 4_000), 15.0),  # four times the rows in 60 s: 1,000 rows at least 15 s
])
def test_a_rebuild_needs_both_last_runs_to_expect_it(previous, expected):
    e = estimate(Costs(COSTS.incremental, COSTS.full, previous=previous), seq=11, change=1_000, inputs=1_000_000)
    assert e.incremental == pytest.approx(expected) and e.previous == previous
    assert rebuilds(e, 0) is (expected > MARGIN * 10.0)


def test_an_applied_run_becomes_the_previous_one():
    first, second = Cost(2, 1.0, 100), Cost(3, 1.5, 120)
    costs = Costs(full=COSTS.full).applied(first)
    assert (costs.incremental, costs.previous) == (first, None)
    costs = costs.applied(second)
    assert (costs.incremental, costs.previous, costs.full) == (second, first, COSTS.full)


def test_costs_round_trip_through_the_log_json():
    assert Costs.from_json(COSTS.to_json()) == COSTS
    assert Costs.from_json({"incremental": {"seq": "x"}}) == Costs()
    assert Costs.from_json(None) == Costs()


# SF 10, Q3-like, `rf` batches: 4.5 s for 150 k change rows,
# 11.4 s for 1.5 M; then 15 M rows took 34 s incrementally against a 14 s twin
SIZES = Costs(incremental=Cost(4, 11.4, 1_500_000), full=Cost(1, 20.0, 75_000_000),
              smaller=Cost(3, 4.5, 150_000), previous=Cost(3, 4.5, 150_000))


def test_a_larger_change_pays_at_least_the_cost_per_row_a_smaller_pair_showed():
    e = estimate(SIZES, seq=5, change=15_000_000, inputs=75_000_000)
    slope = (11.4 - 4.5) / (1_500_000 - 150_000)
    assert e.incremental == pytest.approx(11.4 + slope * 13_500_000)  # ~80 s
    assert e.smaller == SIZES.smaller  # the rebuild's reason names it
    assert rebuilds(e, 10)
    # without the smaller run only the last two runs' times bound it: the 15 M rows are applied
    assert not rebuilds(estimate(Costs(SIZES.incremental, SIZES.full, previous=SIZES.previous), 5, 15_000_000,
                                 75_000_000), 10)


FASTER_SMALL = Cost(3, 20.0, 150_000)


@pytest.mark.parametrize("costs, change, expected, used", [
    (SIZES, 1_500_000, 4.5, None),              # no larger than measured: as the previous run bounds it
    (SIZES, 75_000, 0.57, None),                # smaller than both: the lower bound of either, the lesser
    (Costs(SIZES.incremental, SIZES.full, FASTER_SMALL), 3_000_000, 11.4, FASTER_SMALL),  # slope < 0: 0
    (Costs(SIZES.incremental, SIZES.full, Cost(4 - REMEASURE_AFTER - 1, 4.5, 150_000), Cost(3, 12.0, 1_400_000)),
     3_000_000, 11.4, None),                    # the smaller run is too old: the last two runs bound it
])
def test_the_slope_only_extends_a_measured_cost(costs, change, expected, used):
    e = estimate(costs, seq=5, change=change, inputs=75_000_000)
    assert e.incremental == pytest.approx(expected)
    assert e.smaller == used


def test_an_applied_run_keeps_a_smaller_run_of_at_most_a_quarter_of_its_rows():
    small, big = Cost(3, 4.5, 150_000), Cost(4, 11.4, 1_500_000)
    after_big = Costs(incremental=small, full=SIZES.full).applied(big)
    assert (after_big.incremental, after_big.smaller, after_big.full) == (big, small, SIZES.full)
    similar = after_big.applied(Cost(5, 12.0, 1_400_000))  # the kept one still has at most a quarter
    assert similar.smaller == small
    close = Costs(incremental=Cost(3, 4.5, 500_000)).applied(big)  # a third: no slope from it
    assert close.smaller is None
    tiny = after_big.applied(Cost(6, 1.0, 100_000))  # smaller than both: nothing below it
    assert tiny.smaller is None


def test_the_smaller_and_the_previous_run_round_trip_through_the_log_json():
    assert Costs.from_json(SIZES.to_json()) == SIZES


# a model over plain Iceberg tables rebuilt in 4 s over 7.65 M rows (SF 1, Q3-like); a copy-on-write
# DELETE that rewrote lineitem's files whole would count 6 M rows removed and 6 M added (the TPC-H
# rf batch rewrites about half of them: 1.02-1.03x the inputs)
REBUILT = Cost(1, 4.0, 7_650_000)


@pytest.mark.parametrize("costs, seq", [
    (Costs(full=REBUILT), 2),                                                   # never applied a change
    (Costs(incremental=Cost(2, 1.0, 15_000), full=REBUILT), 3),                 # measured on a small one
    (Costs(incremental=Cost(2, 1.0, 15_000), full=REBUILT), 3 + REMEASURE_AFTER),  # measured long ago
])
def test_a_change_row_costs_at_least_what_a_rebuild_paid_per_row_read(costs, seq):
    e = estimate(costs, seq, change=12_000_000, inputs=7_650_000, every_input=True)
    assert e.per_row and e.incremental == pytest.approx(4.0 * 12_000_000 / 7_650_000)
    assert e.rebuild == pytest.approx(4.0)
    assert rebuilds(e, 0)
    # the rows decide (w > MARGIN * n), whatever the runs cost: a change of as many rows as the
    # inputs hold is applied
    assert not rebuilds(estimate(costs, seq, change=9_000_000, inputs=7_650_000, every_input=True), 0)


def test_the_bound_per_row_needs_every_input_counted_and_a_rebuild():
    # an upstream model's rows are not in n: no bound per row, the change is applied unmeasured
    assert estimate(Costs(full=REBUILT), 2, 12_000_000, 7_650_000, every_input=False) is None
    assert estimate(Costs(), 2, 12_000_000, 7_650_000, every_input=True) is None
    # a measured run that says more than the bound keeps its estimate (and its reason)
    e = estimate(COSTS, seq=11, change=1_000, inputs=1_000_000, every_input=True)
    assert not e.per_row and e.incremental == 30.0
