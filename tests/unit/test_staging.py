"""Which aggregates' child changes a run stages (``Program.stageable_aggregates``): those that
join, read a window's state or another aggregate's change, and that the run's statements would
otherwise compute more than once; and which aggregates' own changes (``stageable_deltas``):
those read in more than one place once the child changes are staged. Whether the staged SQL computes the right change is
test_delta_properties' (``STAGING``); this is about the choice, which decides how much SQL a
run plans (TPC-H Q21's state statements: 24 s of planning per run on a few hundred rows when the
lower aggregates' changes were computed inside the upper one's)."""

from __future__ import annotations

import pytest

from ivm_core.compiler import compile_model
from tests.unit.test_tpch_modes import SCHEMAS, tpch_sql
from tests.unit.zset_queries import SCHEMAS as QUERY_SCHEMAS


def staged(number: int, output_read: bool, changed: set[str] | None = None) -> list[str]:
    program = compile_model(tpch_sql(number), SCHEMAS)
    return program.stageable_aggregates(changed or set(program.inputs), output_read=output_read)


@pytest.mark.parametrize("number, with_output, from_state", [
    (1, [], []),  # one aggregate over a filter of lineitem's change: reading the window again is cheaper
    (3, ["agg0"], []),  # one joined aggregate: read by the output change and its state, or by its state only
    (17, ["agg1"], []),  # agg0 (avg per part) filters lineitem's change only; agg1 joins and is read once
    (20, ["agg1", "agg2"], ["agg1"]),  # agg1's change is read by its state and inside agg2's
    (21, ["agg0", "agg1", "agg2"], ["agg0", "agg1"]),  # EXISTS and NOT EXISTS below the top aggregate
])
def test_a_child_change_is_staged_when_statements_would_compute_it_twice(number, with_output, from_state):
    assert staged(number, output_read=True) == with_output
    assert staged(number, output_read=False) == from_state


def test_only_the_aggregates_the_change_reaches_are_staged():
    assert staged(21, output_read=False, changed={"tpch.nation"}) == ["agg0", "agg1"]
    assert staged(3, output_read=True, changed={"tpch.customer"}) == ["agg0"]
    assert staged(17, output_read=True, changed={"tpch.part"}) == ["agg1"]  # agg0 reads lineitem only


def staged_deltas(program, output_read: bool, changed: set[str] | None = None) -> list[str]:
    changed = changed or set(program.inputs)
    return program.stageable_deltas(changed, program.stageable_aggregates(changed, output_read), output_read)


def test_an_aggregate_change_read_in_several_places_is_staged():
    """An outer join's presence counts: the output change of ``r LEFT JOIN s`` joined on with
    ``t`` reads the counts' change in several of its terms; a lone LEFT JOIN reads it once."""
    chained = compile_model("SELECT r.a, t.d FROM db.r AS r LEFT JOIN db.s AS s ON r.b = s.b "
                            "JOIN db.t AS t ON coalesce(s.c, 0) = t.c", QUERY_SCHEMAS)
    assert staged_deltas(chained, output_read=True) == ["agg0"]
    assert staged_deltas(chained, output_read=True, changed={"db.t"}) == []  # the counts do not change
    single = compile_model("SELECT r.a, s.c FROM db.r AS r LEFT JOIN db.s AS s ON r.b = s.b", QUERY_SCHEMAS)
    assert staged_deltas(single, output_read=True) == []


@pytest.mark.parametrize("number, with_output, from_state", [
    (3, [], []),
    (18, [], []),
    (21, ["agg0"], ["agg0"]),  # the EXISTS counts' change: read by the NOT EXISTS aggregate's and the top's
])
def test_tpch_aggregate_changes_staged(number, with_output, from_state):
    program = compile_model(tpch_sql(number), SCHEMAS)
    assert staged_deltas(program, output_read=True) == with_output
    assert staged_deltas(program, output_read=False) == from_state
