"""A chain of two incremental_ivm models (B reads ref('A') joined to a source), the generic
ivm_matches_full_refresh test (passes; fails on a corrupted target), the empty batch (noop, target untouched, no
statement), --full-refresh (same contents; A publishes no change for B, which rebuilds after it, and does when
rebuilt alone) and the retention of published changes: A keeps them only from where B consumed
(pruned at its maintenance, every 2 sequences), B publishes none (nothing reads it), and once B leaves the project
A keeps none, so B, back, rebuilds.  The test methods run in order and share one project."""

import json
import os
import shutil
import time

import pytest
from dbt.tests.util import run_dbt

from .harness import (
    IS_IVM,
    BatchGenerator,
    IvmHarness,
    Model,
    Oracle,
    adapter_response,
    drop_schema,
    list_tables,
    oracle_suite,
    project_files,
    run_and_compare,
    shop_inputs,
    spark,
    sql,
    state_schema,
    table_fingerprint,
)

MODELS = [
    Model(
        "a_order_customers",
        """
select o.o_id, o.p_id, o.amount, c.c_id, c.name, c.tier
from {orders} o
join {customers} c on o.c_id = c.c_id
where o.amount is null or o.amount > 10
""",
        ivm_config={"ivm_maintenance_every": 2},
    ),
    Model(
        "b_order_products",
        """
select a.o_id, a.name, a.tier, p.pname, p.price, a.amount
from {ref:a_order_customers} a
join {products} p on a.p_id = p.p_id
where p.price > 5 and a.o_id <> 13
""",
    ),
]
NAMES = [m.name for m in MODELS]
INPUTS = {"orders": 0, "customers": 0, "products": 0}


def _run_and_compare(oracle, args=("run",), label="", rebuilds=()):
    return run_and_compare(oracle, NAMES, args, label, rebuilds)


def _committed(schema, name):
    """(seq, changes_from) of each committed entry of the model's log, in order."""
    rows = sql(f"SELECT seq, changes_from FROM {state_schema(schema)}.{name}__log WHERE status = 'committed' "
               "ORDER BY seq").collect()
    return [(int(r[0]), int(r[1])) for r in rows]


def _published(schema, name):
    """The sequences the model's __changes holds."""
    rows = sql(f"SELECT DISTINCT _ivm_seq FROM {state_schema(schema)}.{name}__changes").collect()
    return sorted(int(r[0]) for r in rows)


class TestIvmChain:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, MODELS, INPUTS)

    @pytest.fixture(scope="class")
    def ctx(self, project):
        yield from oracle_suite(project.test_schema, INPUTS, MODELS, 777)

    def test_first_build(self, project, ctx):
        ctx["h"].apply(ctx["gen"].initial())
        _run_and_compare(ctx["oracle"])

    def test_batches(self, project, ctx):
        h, gen = ctx["h"], ctx["gen"]
        h.apply(gen.batch(["orders"]))
        _run_and_compare(ctx["oracle"], label="batch of orders")
        h.apply(gen.nasty_batch(["orders", "customers", "products"]))
        _run_and_compare(ctx["oracle"], label="nasty batch")
        if IS_IVM:  # B reads A at the target snapshot A's commit recorded, patched with A's changes: no copy of A
            companions = list_tables(state_schema(project.test_schema))
            indexes = {t for t in companions if t.startswith("b_order_products__index__")}
            assert indexes == {f"b_order_products__index__{project.test_schema}__products"}, companions

    @pytest.mark.skipif(not IS_IVM, reason="the companion tables are the spark_ivm adapter's")
    def test_docs_generate_shows_the_state(self, project, ctx):
        """catalog.json after a real `dbt docs generate`: each model's entry carries its state
        tables with their sizes, its published changes (the row count Spark counts) and its last run."""
        run_dbt(["docs", "generate"])
        with open(os.path.join(project.project_root, "target", "catalog.json")) as f:
            nodes = json.load(f)["nodes"]
        for name in NAMES:
            stats = next(n for uid, n in nodes.items() if uid.endswith("." + name))["stats"]
            state, changes, last = stats["ivm_state"], stats["ivm_changes"], stats["ivm_last_run"]
            assert state["include"] and state["value"].endswith(" MB"), stats
            assert f"{name}__index__" in state["description"] and " rows)" in state["description"], state
            published = sql(f"SELECT count(*) FROM {state_schema(project.test_schema)}.{name}__changes").collect()[0][0]
            assert changes["value"] == f"{int(published):,} rows", (changes, name)
            assert last["value"].startswith("seq ") and "incremental" in last["value"], last

    @pytest.mark.skipif(not IS_IVM, reason="ivm_matches_full_refresh needs the spark_ivm adapter")
    def test_ivm_matches_full_refresh_passes(self, project, ctx):
        results = run_dbt(["test"], expect_pass=None)
        assert len(results) == len(NAMES)
        failed = [f"{r.node.name}: {r.status} {r.message}" for r in results if str(r.status) != "pass"]
        assert not failed, "\n".join(failed)

    def test_empty_batch_is_noop(self, project, ctx):
        oracle = ctx["oracle"]
        before = {n: (oracle.contents(n), table_fingerprint(oracle.target(n))) for n in NAMES}
        _run_and_compare(oracle)
        for n in NAMES:
            assert oracle.contents(n) == before[n][0], f"{n}: contents changed on an empty batch"
            if IS_IVM:
                assert table_fingerprint(oracle.target(n)) == before[n][1], f"{n}: a no-op run committed to the target"
                resp = adapter_response(project.project_root, n)
                assert resp.get("mode") == "noop", f"{n}: adapter_response {resp}"
                # the embedded catalog answers the log, the change tables' marks and the
                # upstream model's last commit: no Spark statement
                assert resp.get("statements") == 0, f"{n}: an empty batch ran statements: {resp}"

    def test_full_refresh_same_contents(self, project, ctx):
        oracle = ctx["oracle"]
        before = {n: oracle.contents(n) for n in NAMES}
        _run_and_compare(oracle, ("run", "--full-refresh"))
        for n in NAMES:
            assert oracle.contents(n) == before[n], f"{n}: --full-refresh changed the contents"
            if IS_IVM:
                resp = adapter_response(project.project_root, n)
                assert resp.get("mode") == "full", f"{n}: adapter_response {resp}"
        if IS_IVM:  # B rebuilds after A in the same invocation: A published nothing for it
            a_seq, a_from = _committed(project.test_schema, "a_order_customers")[-1]
            assert a_from == a_seq + 1, f"A published its change for B, which rebuilt: {(a_seq, a_from)}"

    def test_incremental_after_full_refresh(self, project, ctx):
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers", "products"]))
        _run_and_compare(ctx["oracle"], label="random batch after the full refresh")
        if IS_IVM:
            for n in NAMES:
                resp = adapter_response(project.project_root, n)
                assert resp.get("mode") in ("incremental", "noop"), f"{n}: adapter_response {resp}"

    @pytest.mark.skipif(not IS_IVM, reason="the spark_ivm adapter's published changes")
    def test_full_refresh_of_the_upstream_alone_publishes_its_change(self, project, ctx):
        """A rebuilt alone (B not selected) publishes its change against its last commit: B's next
        run takes it incrementally and is exact."""
        schema = project.test_schema
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        run_dbt(["run", "--full-refresh", "--select", "a_order_customers"])
        a_seq, a_from = _committed(schema, "a_order_customers")[-1]
        assert a_from <= a_seq and a_seq in _published(schema, "a_order_customers"), (a_seq, a_from)
        _run_and_compare(ctx["oracle"], label="B after A's rebuild")
        assert adapter_response(project.project_root, "b_order_products").get("mode") == "incremental"

    @pytest.mark.skipif(not IS_IVM, reason="the retention of the spark_ivm adapter's published changes")
    def test_published_changes_follow_the_consumer(self, project, ctx):
        """A's __changes holds what B has not consumed: A runs three times alone (maintenance,
        which prunes, at an even sequence), B lags, and then catches up incrementally; B, which
        no model reads, publishes nothing."""
        schema, h, gen = project.test_schema, ctx["h"], ctx["gen"]
        b_consumed = _committed(schema, "a_order_customers")[-1][0]
        for _ in range(3):
            h.apply(gen.batch(["orders", "customers"]))
            run_dbt(["run", "--select", "a_order_customers"])
        a_log = _committed(schema, "a_order_customers")
        a_seq, a_from = a_log[-1]
        assert a_seq == b_consumed + 3, (a_log, b_consumed)
        assert a_from <= b_consumed + 1, f"A pruned changes B had not consumed: {a_log}, B consumed {b_consumed}"
        assert all(p >= a_from for p in _published(schema, "a_order_customers")), a_log
        assert max(f for _, f in a_log) > 2, f"A never pruned its published changes: {a_log}"
        _run_and_compare(ctx["oracle"], label="B catching up with A")
        assert adapter_response(project.project_root, "b_order_products").get("mode") == "incremental"
        assert _published(schema, "b_order_products") == [], "B published changes that no model reads"
        b_log = _committed(schema, "b_order_products")
        assert all(f == s + 1 for s, f in b_log), f"B's log says it kept published changes: {b_log}"

    @pytest.mark.skipif(not IS_IVM, reason="the retention of the spark_ivm adapter's published changes")
    def test_consumer_back_after_its_changes_were_pruned_rebuilds(self, project, ctx):
        """B leaves the project: A's next run prunes all its changes and publishes none; B, back,
        rebuilds (naming why) and is exact, and incremental again after."""
        schema, models_dir = project.test_schema, os.path.join(project.project_root, "models")
        parked = os.path.join(project.project_root, "b_order_products.sql.parked")
        shutil.move(os.path.join(models_dir, "b_order_products.sql"), parked)
        try:
            ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
            run_dbt(["run"])
            a_seq, a_from = _committed(schema, "a_order_customers")[-1]
            assert a_from == a_seq + 1 and _published(schema, "a_order_customers") == [], (a_seq, a_from)
        finally:
            shutil.move(parked, os.path.join(models_dir, "b_order_products.sql"))
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers"]))
        _run_and_compare(ctx["oracle"], label="B back after A pruned its changes", rebuilds=["b_order_products"])
        resp = adapter_response(project.project_root, "b_order_products")
        assert resp.get("mode") == "full" and "holds its changes from sequence" in (resp.get("reason") or ""), resp
        ctx["h"].apply(ctx["gen"].batch(["orders", "customers", "products"]))
        _run_and_compare(ctx["oracle"], label="after B rebuilt")
        for n in NAMES:
            assert adapter_response(project.project_root, n).get("mode") == "incremental", n

    @pytest.mark.skipif(not IS_IVM, reason="ivm_status is the spark_ivm adapter's")
    def test_ivm_status_reports_the_lag(self, project, ctx, capsys):
        """ivm_status: a batch not yet applied shows as A's change tables behind, with a lag
        that fails max_lag_seconds: 0; after the run every input is consumed and it passes."""
        def status(expect_pass=True, **args):
            capsys.readouterr()
            run_dbt(["run-operation", "ivm_status", "--args", json.dumps({"format": "json", **args})],
                    expect_pass=expect_pass)
            if not expect_pass:
                return None
            lines = capsys.readouterr().out.splitlines()  # dbt's own log lines around the report
            report = lines[lines.index("["):len(lines) - lines[::-1].index("]")]
            return {m["model"]: m for m in json.loads("\n".join(report))}

        time.sleep(1)
        ctx["h"].apply(ctx["gen"].batch(["orders"]))
        time.sleep(1)
        before = status()
        a_inputs = {i["input"].split(".")[-1]: i for i in before["a_order_customers"]["inputs"]}
        assert a_inputs["orders"]["behind"] == 1 and a_inputs["orders"]["lag_seconds"] >= 1, a_inputs
        assert a_inputs["customers"]["behind"] == 0 and a_inputs["customers"]["lag_seconds"] == 0, a_inputs
        b = before["b_order_products"]
        assert b["last_mode"] and b["rows"] == ctx["oracle"].contents("b_order_products").total(), b
        assert b["state_bytes"] > 0 and b["running"] is None, b
        status(expect_pass=False, max_lag_seconds=0)
        _run_and_compare(ctx["oracle"], label="after ivm_status")
        after = status(max_lag_seconds=0)
        assert all(i["behind"] == 0 for m in after.values() for i in m["inputs"]), after
        assert after["a_order_customers"]["last_seq"] == before["a_order_customers"]["last_seq"] + 1, after

    @pytest.mark.skipif(not IS_IVM, reason="ivm_matches_full_refresh needs the spark_ivm adapter")
    def test_ivm_matches_full_refresh_fails_on_corrupt_target(self, project, ctx):
        target = ctx["oracle"].target("a_order_customers")
        sql(
            f"INSERT INTO {target} VALUES (CAST(-1 AS INT), CAST(1 AS INT), CAST('999.99' AS DECIMAL(10,2)), "
            f"CAST(-1 AS INT), 'bogus', 'gold')"
        )
        results = run_dbt(["test"], expect_pass=False)
        status = {r.node.name: (str(r.status), r.message) for r in results}
        bad = [k for k, (s, _) in status.items() if "a_order_customers" in k]
        assert bad and all(status[k][0] == "fail" for k in bad), status


INDEXED = "select o.o_id, o.amount, c.name from {orders} o join {customers} c on o.c_id = c.c_id"
# default ivm_index_growth (2): small changes are appended; its incremental runs SET a setting of its own
# besides the default one (adaptive execution off)
APPENDING = Model("idx_appending", INDEXED, ivm_config={"ivm_spark_conf": {"spark.sql.shuffle.partitions": "3"}})
COMPACTING = Model("idx_compacting", INDEXED, ivm_config={"ivm_index_growth": 1})  # every growing change compacts


def _index_operations(schema: str, model: str, input_name: str) -> list:
    table = f"{state_schema(schema)}.{model}__index__{schema}__{input_name}"
    rows = sql(f"SELECT operation FROM {table}.snapshots ORDER BY committed_at").collect()
    return [r[0] for r in rows]


@pytest.mark.skipif(not IS_IVM, reason="join indexes belong to incremental_ivm")
class TestJoinIndexPieces:
    """A join index takes each change as appended pieces (no MERGE, no rewrite) and is compacted
    once it has grown ``ivm_index_growth`` times; both give the exact result."""

    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, [APPENDING, COMPACTING], {"orders": 0, "customers": 0}, with_tests=False)

    def test_append_then_compact(self, project):
        h = IvmHarness(project.test_schema, shop_inputs({"orders": 0, "customers": 0}))
        h.create_inputs()
        gen = BatchGenerator(h, 4711)
        oracle = Oracle(h, [APPENDING, COMPACTING])
        settings = {k: spark().conf.get(k, None) for k in ("spark.sql.adaptive.enabled", "spark.sql.shuffle.partitions")}
        try:
            h.apply(gen.initial())
            run_dbt(["run"])
            for _ in range(2):
                h.apply(gen.batch(["orders", "customers"], ops=3))
                run_dbt(["run"])
                for m in (APPENDING, COMPACTING):
                    assert oracle.compare(m.name) is None, oracle.compare(m.name)
                # each incremental run SET its ivm_spark_conf over the default, then RESET both
                assert {k: spark().conf.get(k, None) for k in settings} == settings
            # an index is written in small row groups (sorted by its join key), so bounded reads skip most
            index = f"{state_schema(project.test_schema)}.{APPENDING.name}__index__{project.test_schema}__orders"
            properties = dict((r[0], r[1]) for r in sql(f"SHOW TBLPROPERTIES {index}").collect())
            assert properties.get("write.parquet.row-group-size-bytes") == str(1 << 20), properties
            # ... and a bounded read plans one task per file, not one per few row groups
            assert properties.get("read.split.open-file-cost") == str(64 << 10), properties
            # ... in Snappy, which a rebuild reads back faster than Iceberg's default zstd
            assert properties.get("write.parquet.compression-codec") == "snappy", properties
            appending = _index_operations(project.test_schema, APPENDING.name, "orders")
            compacting = _index_operations(project.test_schema, COMPACTING.name, "orders")
            assert appending[1:] == ["append", "append"], appending  # built, then two appended changes
            assert "overwrite" in compacting[1:], compacting
            # the check sums an index's pieces: no drift reported
            run_dbt(["run-operation", "ivm_check", "--args", f"{{model: {APPENDING.name}}}"])
        finally:
            drop_schema(state_schema(project.test_schema))
