"""A model whose result is its aggregate (count(*), COUNT, SUM of integers or decimals) keeps its group
state in its target (ivm_core/rules/aggregate/held.py) while every group's row determines its state:
no SUM with a NULL value, no overflowed sum. A rebuild that finds such a group, and a run whose change
makes one, go on with the group state in a table of its own — and every run equals its recompute.

The models' SUM arguments are NULL only where the test puts a NULL, and their sums overflow only where
it puts two orders in one group: orders with an ``o_id`` at or above 990 (the generator's are 1..40).
"""

import decimal
import os

import pytest
from dbt.tests.util import run_dbt
from dbt.adapters.spark_ivm.refresh.config import FAULT_ENV  # a step at which the named model's run dies

from .harness import (
    IS_IVM,
    KEYED_WRITES,
    BatchGenerator,
    IvmHarness,
    Model,
    Oracle,
    collect,
    drop_schema,
    project_files,
    result_by_name,
    shop_inputs,
    state_schema,
)

pytestmark = [
    pytest.mark.skipif(not IS_IVM, reason="needs the incremental_ivm materialization"),
    pytest.mark.skipif(os.environ.get("IVM_FAST_TESTS") == "1", reason="slow; IVM_FAST_TESTS=1 skips it"),
]

# NULL only for the test's own orders (o_id >= 990)
AMOUNT = "if(o.o_id >= 990, o.amount, coalesce(o.amount, 0))"
MODELS = [
    # large (a MERGE of the change): its change is computed first, and fails at the NULL
    Model("held_orders", f"select o.c_id, count(*) as n, sum({AMOUNT}) as total, count(o.note) as noted "
                         "from {orders} o group by o.c_id", ivm_config=KEYED_WRITES),
    # small (rewritten as itself plus the change): the rewrite fails at the NULL
    Model("held_tiers", f"select c.tier, count(*) as n, sum({AMOUNT} * 2) as doubled "
                        "from {orders} o join {customers} c on o.c_id = c.c_id group by c.tier"),
    # never a NULL: held to the end
    Model("held_statuses", "select o.status, count(*) as n, sum(coalesce(o.amount, 0)) as total "
                           "from {orders} o group by o.status", ivm_config=KEYED_WRITES),
    # a sum that overflows its type (DECIMAL(38,0)) when two of the test's orders are in one group: NULL
    Model("held_overflow", "select o.c_id, count(*) as n, sum(if(o.o_id >= 990, "
                           "cast('90000000000000000000000000000000000000' as decimal(38,0)), "
                           "cast(coalesce(o.amount, 0) as decimal(38,0)))) as big from {orders} o group by o.c_id",
          ivm_config=KEYED_WRITES),
    # the generator's NULL amounts from the first build: the group state apart from the start
    Model("held_nulls_at_build", "select o.p_id, sum(o.amount) as total, count(*) as n from {orders} o "
                                 "group by o.p_id"),
]
INPUTS = {"orders": 0, "customers": 0}
SWITCHING = ("held_orders", "held_tiers", "held_overflow")


def _tables(states):
    return {r[1] for r in collect(f"SHOW TABLES IN {states}")}


def _modes(states, name):
    return [(r[0], r[1]) for r in collect(f"SELECT mode, reason FROM {states}.{name}__log "
                                          "WHERE status = 'committed' ORDER BY seq")]


class TestIvmHeldGroups:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS, with_tests=False)

    @pytest.fixture(scope="class")
    def ctx(self, project):
        h = IvmHarness(project.test_schema, shop_inputs(INPUTS))
        h.create_inputs()
        gen = BatchGenerator(h, 990)
        h.apply(gen.initial())
        oracle = Oracle(h, MODELS)
        yield {"h": h, "gen": gen, "oracle": oracle, "states": state_schema(project.test_schema)}
        drop_schema(state_schema(project.test_schema))

    def _run_and_compare(self, ctx):
        run_dbt(["run"])
        for m in MODELS:
            assert ctx["oracle"].compare(m.name) is None, m.name

    def test_1_built_held_unless_a_group_is_irregular_from_the_start(self, ctx):
        self._run_and_compare(ctx)
        tables = _tables(ctx["states"])
        for name in SWITCHING + ("held_statuses",):
            assert f"{name}__agg0__groups" not in tables, name
        null_amounts = collect(f"SELECT count(*) FROM {ctx['h'].fq('orders')} WHERE amount IS NULL")[0][0]
        assert null_amounts > 0  # so the last model found an irregular group at its build
        assert "held_nulls_at_build__agg0__groups" in tables
        assert _modes(ctx["states"], "held_nulls_at_build")[0][0] == "full"

    def test_2_random_batches_keep_the_held_models_incremental(self, ctx):
        for _ in range(2):
            ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
            self._run_and_compare(ctx)
        for m in MODELS:
            modes = _modes(ctx["states"], m.name)
            assert [mode for mode, _ in modes[1:]] == ["incremental", "incremental"], (m.name, modes)

    def test_3_a_change_that_makes_a_group_irregular_rebuilds_with_the_group_state_apart(self, ctx):
        h = ctx["h"]
        c_id = next(r[1] for r in h.inputs["orders"].rows if r[1] is not None)
        ctx["h"].apply({"orders": [((995, c_id, 1, None, "open", None, None), 1),
                                   ((996, c_id, 1, decimal.Decimal("5.00"), "open", None, None), 1)]})
        # the run of held_orders is undone at the NULL, and its rebuild dies after writing the target:
        # the next run rolls the rebuild back, finds the NULL again and rebuilds
        os.environ[FAULT_ENV] = "held_orders:after_target"
        try:
            results = result_by_name(run_dbt(["run"], expect_pass=False))
        finally:
            os.environ.pop(FAULT_ENV, None)
        assert "injected failure" in str(results["held_orders"].message)
        assert str(results["held_tiers"].status) == "success"
        self._run_and_compare(ctx)
        tables = _tables(ctx["states"])
        for name in SWITCHING:
            mode, reason = _modes(ctx["states"], name)[-1]
            assert mode == "full" and "overflowed" in reason, (name, mode, reason)
            assert f"{name}__agg0__groups" in tables, name
        assert _modes(ctx["states"], "held_statuses")[-1][0] == "incremental"
        assert "held_statuses__agg0__groups" not in tables

    def test_4_the_group_state_stays_apart_and_incremental(self, ctx):
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        self._run_and_compare(ctx)
        for name in SWITCHING + ("held_nulls_at_build",):
            assert _modes(ctx["states"], name)[-1][0] == "incremental", name
        # removing the NULL does not bring the layout back by itself; a --full-refresh tries again
        ctx["h"].apply({"orders": [(r, -w) for r, w in ctx["h"].inputs["orders"].rows.items() if r[0] >= 990]})
        run_dbt(["run", "--full-refresh"])
        for m in MODELS:
            assert ctx["oracle"].compare(m.name) is None, m.name
        tables = _tables(ctx["states"])
        assert not any(f"{name}__agg0__groups" in tables for name in SWITCHING), tables
