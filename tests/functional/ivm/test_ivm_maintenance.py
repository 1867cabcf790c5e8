"""Maintenance (``refresh/maintain.py``): every ``ivm_maintenance_every`` sequences a run
compacts the small files of the tables it writes and expires their old snapshots, so a model
refreshed every minute does not slow down as its log, indexes and states gain a file and a
snapshot per run. Here every 2nd sequence, with no retention floor: the tables' snapshots stay
bounded, the log is compacted, the published changes keep a file per sequence, and the models —
a join + aggregate and a model downstream of it — equal their full recompute after every
incremental run, after a run that fails right after its maintenance, and after rebuilds.
The methods run in order and share one project."""

import os
from dataclasses import replace

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.recovery.test_ivm_recovery import FAULT_ENV
from tests.functional.recovery.test_ivm_recovery import MODELS as RECOVERY_MODELS

from .harness import (
    IS_IVM,
    adapter_response,
    collect,
    oracle_suite,
    project_files,
    result_by_name,
    run_and_compare,
    sql,
    state_schema,
)

pytestmark = pytest.mark.skipif(not IS_IVM, reason="maintenance is the spark_ivm adapter's")

MAINTAINED = {"ivm_maintenance_every": 2, "ivm_snapshot_retention": 0, "ivm_changes_retention": 2}
# the recovery suite's join + aggregate and the model downstream of it, maintained
MODELS = [replace(m, ivm_config=MAINTAINED) for m in RECOVERY_MODELS]
NAMES = [m.name for m in MODELS]
INPUTS = {"orders": 0, "customers": 0}


def _seq(schema: str, name: str) -> int:
    return int(collect(f"SELECT max(seq) FROM {state_schema(schema)}.{name}__log")[0][0])


def _tables(schema: str, name: str) -> list[str]:
    """The model's target and every table of its companion schema."""
    state = state_schema(schema)
    rows = sql(f"SHOW TABLES IN {state} LIKE '{name}__*'").collect()
    return [f"{schema}.{name}"] + [f"{state}.{r['tableName']}" for r in rows if not r["isTemporary"]]


def _count(sql: str) -> int:
    return int(collect(sql)[0][0])


class TestMaintenance:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def ctx(self, project):
        try:
            yield from oracle_suite(project.test_schema, INPUTS, MODELS, 9090)
        finally:
            os.environ.pop(FAULT_ENV, None)

    def test_first_build(self, project, ctx):
        ctx["h"].apply(ctx["gen"].initial())
        run_and_compare(ctx["oracle"], NAMES, label="first build")

    def test_incremental_runs_keep_tables_bounded(self, project, ctx):
        h, gen, schema = ctx["h"], ctx["gen"], project.test_schema
        for i in range(3):  # sequences 2, 3, 4: the runs at 2 and 4 maintain
            h.apply(gen.batch(["orders", "customers"]))
            run_and_compare(ctx["oracle"], NAMES, label=f"batch {i}")
            for name in NAMES:
                assert adapter_response(project.project_root, name).get("mode") == "incremental", name
        for name in NAMES:
            assert _seq(schema, name) == 4, name  # the last run maintained, at sequence 4
            log = f"{state_schema(schema)}.{name}__log"
            # 4 committed runs: compacted into one file by the run at 4,
            # which then appended its own entry; older snapshots expired
            assert _count(f"SELECT count(*) FROM {log}.data_files") <= 2, name
            assert _count(f"SELECT count(*) FROM {log}.snapshots") <= 2, name
            # pruned: the entries below the last commit (3) and below what the reader consumed (3)
            assert collect(f"SELECT seq FROM {log} ORDER BY seq") == [(3,), (4,)], name
            for table in _tables(schema, name):
                # what the last commit (3) left and what the run at 4 wrote after it: nothing older
                snapshots = _count(f"SELECT count(*) FROM {table}.snapshots")
                assert snapshots <= 4, f"{table}: {snapshots} snapshots"
            changes = f"{state_schema(schema)}.{name}__changes"
            published = _count(f"SELECT count(DISTINCT _ivm_seq) FROM {changes}")
            files = _count(f"SELECT count(*) FROM {changes}.data_files")
            assert files >= published, f"{changes}: published changes are not compacted ({files} files)"

    def test_failure_after_maintenance_then_recovers(self, project, ctx):
        h, gen, schema = ctx["h"], ctx["gen"], project.test_schema
        h.apply(gen.batch(["orders", "customers"]))
        run_and_compare(ctx["oracle"], NAMES, label="batch at 5")
        h.apply(gen.nasty_batch(["orders", "customers"]))
        assert _seq(schema, "tier_orders") == 5
        os.environ[FAULT_ENV] = "tier_orders:after_maintenance"
        try:
            results = result_by_name(run_dbt(["run"], expect_pass=False))
        finally:
            os.environ.pop(FAULT_ENV, None)
        assert "injected failure" in str(results["tier_orders"].message)
        run_and_compare(ctx["oracle"], NAMES, label="the run after a failure after maintenance")
        assert _seq(schema, "tier_orders") == 6

    def test_rebuilds_maintain_too(self, project, ctx):
        for i in range(2):  # sequences 7 and 8: the rebuild at 8 maintains
            ctx["h"].apply(ctx["gen"].batch(["orders"]))
            run_and_compare(ctx["oracle"], NAMES, ("run", "--full-refresh"), label=f"rebuild {i}")
        for name in NAMES:
            log = f"{state_schema(project.test_schema)}.{name}__log"
            assert _count(f"SELECT count(*) FROM {log}.snapshots") <= 3, name
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        run_and_compare(ctx["oracle"], NAMES, label="incremental after the rebuilds")
        for name in NAMES:
            run_dbt(["run-operation", "ivm_check", "--args", "{model: %s}" % name])

    def test_failed_maintenance_is_a_warning(self, project, ctx):
        """A compaction or expiry that fails (here injected; on a cluster, a procedure the user may
        not call) warns and leaves the run to commit; the next maintenance tries again."""
        h, gen, schema = ctx["h"], ctx["gen"], project.test_schema
        h.apply(gen.batch(["orders", "customers"]))
        seq = _seq(schema, "tier_orders") + 1
        assert seq % 2 == 0  # due
        os.environ[FAULT_ENV] = "tier_orders:in_maintenance"
        try:
            _, output = run_dbt_and_capture(["run"])
        finally:
            os.environ.pop(FAULT_ENV, None)
        assert "maintenance of" in output and "retried at the next maintenance" in output, output[-3000:]
        assert adapter_response(project.project_root, "tier_orders").get("mode") == "incremental"
        assert _seq(schema, "tier_orders") == seq
        for name in NAMES:
            assert ctx["oracle"].compare(name) is None, ctx["oracle"].compare(name)
        log = f"{state_schema(schema)}.tier_orders__log"
        assert _count(f"SELECT count(*) FROM {log}.snapshots") > 2  # not expired
        for i in range(2):  # seq + 1, then seq + 2: due, maintained
            h.apply(gen.batch(["orders"]))
            run_and_compare(ctx["oracle"], NAMES, label=f"after a failed maintenance ({i})")
        assert _seq(schema, "tier_orders") == seq + 2
        assert _count(f"SELECT count(*) FROM {log}.snapshots") <= 2

    def test_a_reader_far_behind_holds_no_changes(self, project, ctx):
        """A reader that stopped running holds the changes published for it only for
        ivm_changes_retention (2) sequences: then they are pruned with a warning naming it, and
        the reader rebuilds on its next run, exact. Until then, the target's snapshot it reads
        the target at (its consumed commit's) is not expired."""
        h, gen, schema = ctx["h"], ctx["gen"], project.test_schema
        log = f"{state_schema(schema)}.tier_orders__log"
        consumed = _seq(schema, "tier_orders")  # the reader ran last with it
        read_at = _count(f"SELECT target_snapshot FROM {log} WHERE status = 'committed' AND seq = {consumed}")
        output = ""
        for seq in range(consumed + 1, consumed + 5):  # tier_orders alone: its reader stays at `consumed`
            h.apply(gen.batch(["orders"]))
            _, out = run_dbt_and_capture(["run", "--select", "tier_orders"])
            output += out
            if seq % 2 == 0 and seq - 1 - 2 <= consumed:  # maintained with the reader within retention
                assert _count(f"SELECT count(*) FROM {schema}.tier_orders.snapshots "
                              f"WHERE snapshot_id = {read_at}") == 1, f"expired under its reader at {seq}"
        assert f"tier_orders_doubled consumed its changes only up to sequence {consumed}" in output, output[-3000:]
        changes = f"{state_schema(schema)}.tier_orders__changes"
        assert _count(f"SELECT coalesce(min(_ivm_seq), 99) FROM {changes}") > consumed + 1
        run_dbt(["run"])
        for name in NAMES:
            assert ctx["oracle"].compare(name) is None, ctx["oracle"].compare(name)
        response = adapter_response(project.project_root, "tier_orders_doubled")
        assert response.get("mode") == "full" and "pruned" in str(response.get("reason")), response
