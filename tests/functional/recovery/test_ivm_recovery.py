"""Exactly once under failure: a refresh that fails at any step — after validating, after
publishing its change, after the target MERGE, between state tables, before the commit,
between the two passes of a large table's update; a
top-k model after its state, its target rewrite and its publish; a window model after appending
to its state of pieces, one kept by its target after writing it — and a rebuild that fails
midway, are followed by a clean run that must produce exactly the full
recompute, for the failing model and for the IVM model downstream of it (a step's runs select
those two: the suite's other models take the batches of those tests later, several at once)."""

import json
import os

import pytest
from dbt.tests.util import run_dbt, write_file

from tests.functional.ivm.harness import (
    BatchGenerator,
    IvmHarness,
    Model,
    Oracle,
    adapter_response,
    collect,
    drop_schema,
    project_files,
    query_schema,
    result_by_name,
    shop_inputs,
    sql,
    state_schema,
)

FAULT_ENV = "DBT_SPARK_IVM_FAULT"
MODELS = [
    Model(
        "tier_orders",
        """
select c.tier, count(*) as n, sum(o.amount) as total, max(o.amount) as biggest
from {orders} o
join {customers} c on o.c_id = c.c_id
group by c.tier
""",
    ),
    Model(
        "tier_orders_doubled",
        """
select t.tier, t.n * 2 as n2, t.biggest
from {ref:tier_orders} t
where t.n > 0
""",
    ),
    # a leaf over one small aggregate: its run updates the states, then rewrites the target
    # from them (no change computed, nothing published)
    Model(
        "parity_totals",
        """
select o.c_id % 2 as parity, count(*) as n, sum(o.amount) as total, min(o.amount) as smallest
from {orders} o
group by o.c_id % 2
""",
    ),
]
MODELS += [
    Model(  # top-k: its target is rewritten from its aggregate state, its change published
        "top_tiers",
        """
select c.tier, sum(o.amount) as total
from {orders} o join {customers} c on o.c_id = c.c_id
group by c.tier
order by total desc nulls last, tier
limit 2
""",
    ),
    Model("top_tiers_doubled", "select t.tier, t.total * 2 as total2 from {ref:top_tiers} t"),
]
# dedups, windows: one over a join keeps its rows in a state (large for the run) that takes the change as
# appended pieces (this suite's only; the maintenance and cost suites share MODELS); one over orders alone is
# kept by its target, whose rows of the touched partitions each run retracts as the last commit left them
WINDOW_MODELS = [
    Model(
        "latest_orders",
        """
select t.c_id, t.o_id, t.amount, t.tier
from (
  select o.c_id, o.o_id, o.amount, c.tier,
         row_number() over (partition by o.c_id order by o.amount desc nulls last, o.o_id desc, c.tier) as rn
  from {orders} o join {customers} c on o.c_id = c.c_id
) t
where t.rn = 1
""",
        ivm_config={"ivm_rewrite_max_rows": 0},
    ),
    Model(
        "newest_orders",
        """
select t.c_id, t.o_id, t.amount
from (
  select o.c_id, o.o_id, o.amount,
         row_number() over (partition by o.c_id order by o.o_id desc nulls last, o.amount) as rn
  from {orders} o
) t
where t.rn = 1
""",
    ),
]
# the first's SQL with every table in place and no key ranges bounding its updates (its group key is a string): its
# target and states take each change in two passes, the MERGE without its insert clause then an INSERT
TWO_PASS_MODELS = [Model("tier_orders_two_pass", MODELS[0].template,
                         ivm_config={"ivm_rewrite_max_rows": 0, "ivm_two_pass_min_rows": 0})]
# the target holds the group state (rules/aggregate/held.py): a large one takes the change in a MERGE, a small
# one is rewritten as itself plus the change (no NULL amounts: every group's row determines its state)
HELD_MODELS = [
    Model("tier_held", "select c.tier, count(*) as n, sum(coalesce(o.amount, 0)) as total from {orders} o "
                       "join {customers} c on o.c_id = c.c_id group by c.tier",
          ivm_config={"ivm_rewrite_max_rows": 0}),
    Model("tier_held_doubled", "select t.tier, t.total * 2 as total2 from {ref:tier_held} t"),
    Model("parity_held", "select o.c_id % 2 as parity, sum(coalesce(o.amount, 0)) as total, count(*) as n "
                         "from {orders} o "
                         "group by o.c_id % 2"),
]
SUITE = MODELS + WINDOW_MODELS + TWO_PASS_MODELS + HELD_MODELS
NAMES = [m.name for m in SUITE]
INCREMENTAL_STEPS = [("tier_orders", step) for step in
                     ["after_validate", "after_publish", "after_target", "after_state", "before_commit"]]
INCREMENTAL_STEPS += [("parity_totals", step) for step in ["after_state", "after_target"]]
INCREMENTAL_STEPS += [("top_tiers", step) for step in ["after_state", "after_target", "after_publish"]]
INCREMENTAL_STEPS += [("latest_orders", "after_state")]  # its pieces appended, not committed
INCREMENTAL_STEPS += [("newest_orders", "after_target")]  # its target written, not committed
# between the two passes of the target's update, and of the group state's ("after_state": its first statement)
INCREMENTAL_STEPS += [("tier_orders_two_pass", step) for step in ["between_passes", "after_state"]]
INCREMENTAL_STEPS += [("tier_held", step) for step in ["after_publish", "after_target"]]
INCREMENTAL_STEPS += [("parity_held", step) for step in ["after_target"]]
# a rebuild that dies is rolled back by the next run like any run (its replaced tables set back
# to the last commit's snapshots), which then takes the change incrementally
REBUILD_STEPS = ["after_started", "after_target", "after_publish", "before_commit"]


def _downstream(model: str) -> list[str]:
    """The model and the models of the suite that read it."""
    return [model] + [m.name for m in SUITE if "{ref:%s}" % model in m.template]


def _moved_since_commit(schema: str, model: str) -> dict:
    """The model's tables whose current snapshot is not the one its last commit recorded:
    (recorded, current) by name. Readers of a failed run's tables see the last commit's state."""
    recorded = json.loads(collect(f"SELECT snapshots FROM {state_schema(schema)}.`{model}__log` "
                                  "WHERE status = 'committed' ORDER BY seq DESC LIMIT 1")[0][0])
    moved = {}
    for name, snapshot in recorded.items():
        relation = ".".join(f"`{part}`" for part in name.split(".", 1))
        current = collect(f"SELECT snapshot_id FROM {relation}.refs WHERE name = 'main'")
        if snapshot is not None and (current[0][0] if current else None) != snapshot:
            moved[name] = (snapshot, current[0][0] if current else None)
    return moved


def _run(expect_failure_of=None, select=None):
    results = result_by_name(run_dbt(["run"] + (["--select", " ".join(select)] if select else []), expect_pass=None))
    if expect_failure_of:
        assert str(results[expect_failure_of].status) == "error", results[expect_failure_of].message
        assert "injected failure" in str(results[expect_failure_of].message)
    return results


class TestFailureAtEveryStep:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, SUITE, {"orders": 0, "customers": 0})

    @pytest.fixture(scope="class")
    def ctx(self, project):
        h = IvmHarness(project.test_schema, shop_inputs({"orders": 0, "customers": 0}))
        h.create_inputs()
        gen = BatchGenerator(h, 4242)
        h.apply(gen.initial())
        _run()
        yield {"h": h, "oracle": Oracle(h, SUITE), "gen": gen}
        os.environ.pop(FAULT_ENV, None)
        drop_schema(state_schema(project.test_schema))

    def _assert_exact(self, ctx, label, names=NAMES):
        problems = [d for d in (ctx["oracle"].compare(n) for n in names) if d]
        assert not problems, f"after {label}:\n" + "\n".join(problems)

    @pytest.mark.parametrize("model,step", INCREMENTAL_STEPS)
    def test_incremental_run_fails_then_recovers(self, project, ctx, model, step):
        # the failing model and the models that read it (the others take these batches later,
        # several at once, in the runs of the tests below)
        names = _downstream(model)
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        os.environ[FAULT_ENV] = f"{model}:{step}"
        try:
            _run(expect_failure_of=model, select=names)
        finally:
            os.environ.pop(FAULT_ENV, None)
        moved = _moved_since_commit(project.test_schema, model)
        assert not moved, f"the failed run of {model} at {step} left its writes (recorded, current): {moved}"
        results = _run(select=names)
        assert all(str(results[n].status) == "success" for n in names)
        self._assert_exact(ctx, f"failure of {model} at {step}", names)

    @pytest.mark.parametrize("step", REBUILD_STEPS)
    def test_rebuild_fails_then_recovers(self, project, ctx, step):
        ctx["h"].apply(ctx["gen"].batch(["orders"]))
        os.environ[FAULT_ENV] = f"tier_orders:{step}"
        try:
            results = result_by_name(run_dbt(["run", "--full-refresh", "--select", "tier_orders"], expect_pass=False))
            assert "injected failure" in str(results["tier_orders"].message)
        finally:
            os.environ.pop(FAULT_ENV, None)
        _run()
        assert adapter_response(project.project_root, "tier_orders").get("mode") == "incremental"
        self._assert_exact(ctx, f"rebuild failure at {step}")

    def test_a_rebuild_that_reshapes_a_table_is_redone(self, project, ctx):
        """A rebuild that re-creates a table in another shape than the last commit left it (here
        the published changes, given a stray column) cannot be rolled back to that commit: it
        logs 'started' first, and the next run rebuilds again."""
        changes = f"{state_schema(project.test_schema)}.tier_orders__changes"
        sql(f"ALTER TABLE {changes} ADD COLUMN stray INT")
        ctx["h"].apply(ctx["gen"].batch(["orders"]))
        os.environ[FAULT_ENV] = "tier_orders:before_commit"
        try:
            run_dbt(["run", "--full-refresh", "--select", "tier_orders"], expect_pass=False)
        finally:
            os.environ.pop(FAULT_ENV, None)
        results = _run()
        assert all(str(results[n].status) == "success" for n in NAMES)
        assert adapter_response(project.project_root, "tier_orders").get("mode") == "full"
        assert "stray" not in [name.lower() for name, _ in query_schema(f"SELECT * FROM {changes}")]
        self._assert_exact(ctx, "a rebuild that reshaped the published changes, failed and redone")

    def test_a_rebuild_for_changed_sql_that_dies_is_redone_when_the_sql_goes_back(self, project, ctx):
        """A rebuild for a changed SQL that dies having replaced the target in its new shape, and
        the SQL then changed back to what the last commit ran: the next run must rebuild, not
        set the replaced tables back to the last commit's snapshots under the new shape."""
        original = next(m for m in SUITE if m.name == "tier_orders")
        changed = Model(original.name, original.template.replace(
            "max(o.amount) as biggest", "max(o.amount) as biggest, min(o.amount) as smallest"))
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        write_file(changed.render_dbt(), project.project_root, "models", "tier_orders.sql")
        os.environ[FAULT_ENV] = "tier_orders:after_publish"
        try:
            run_dbt(["run", "--select", "tier_orders"], expect_pass=False)
        finally:
            os.environ.pop(FAULT_ENV, None)
            write_file(original.render_dbt(), project.project_root, "models", "tier_orders.sql")
        results = _run()
        assert all(str(results[n].status) == "success" for n in NAMES)
        response = adapter_response(project.project_root, "tier_orders")
        assert response.get("mode") == "full", response
        self._assert_exact(ctx, "a rebuild for changed SQL that died, the SQL changed back")

    def test_a_rebuild_that_created_a_dropped_table_again_and_died_is_redone(self, project, ctx):
        """A join index dropped by hand makes the run rebuild; should that rebuild die having
        created the index again, the new table holds none of the last commit's snapshots: the
        next run cannot set it back, and rebuilds."""
        index = f"{state_schema(project.test_schema)}.tier_orders__index__{project.test_schema}__orders".lower()
        sql(f"DROP TABLE {index}")
        ctx["h"].apply(ctx["gen"].batch(["orders"]))
        os.environ[FAULT_ENV] = "tier_orders:before_commit"
        try:
            run_dbt(["run", "--select", "tier_orders"], expect_pass=False)
        finally:
            os.environ.pop(FAULT_ENV, None)
        results = _run()
        assert all(str(results[n].status) == "success" for n in NAMES)
        assert adapter_response(project.project_root, "tier_orders").get("mode") == "full"
        self._assert_exact(ctx, "a rebuild that created a dropped join index again, failed and redone")

    def test_rebuild_after_a_run_that_died_having_published(self, project, ctx):
        """An incremental run that died after publishing its change, then a --full-refresh of
        that model alone: the rebuild (which rolls nothing back) drops the rows the dead run
        published at the sequence it takes, so the model downstream reads only the rebuild's."""
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        os.environ[FAULT_ENV] = "tier_orders:after_publish"
        try:
            _run(expect_failure_of="tier_orders")
        finally:
            os.environ.pop(FAULT_ENV, None)
        run_dbt(["run", "--full-refresh", "--select", "tier_orders"])
        results = _run()
        assert all(str(results[n].status) == "success" for n in NAMES)
        self._assert_exact(ctx, "a rebuild after a run that died having published")

    def test_state_store_is_consistent(self, project, ctx):
        for name in NAMES:
            run_dbt(["run-operation", "ivm_check", "--args", "{model: %s}" % name])

    def test_ivm_check_reports_drift(self, project, ctx):
        index = f"{state_schema(project.test_schema)}.tier_orders__index__{project.test_schema}__orders".lower()
        sql(f"DELETE FROM {index} WHERE c_id IS NOT NULL AND c_id = (SELECT max(c_id) FROM {index})")
        run_dbt(["run-operation", "ivm_check", "--args", "{model: tier_orders}"], expect_pass=False)
