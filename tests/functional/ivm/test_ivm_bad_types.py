"""Change tables with wrong column types (SPEC §2.1, §3, §7).

* ``_ivm_weight`` / ``_ivm_seq`` that are not integers: the run fails with a message naming the model, the
  change table, the column and the problem, and changes nothing (the Iceberg snapshot of every table in the
  model's schema and in its ``<schema>_ivm`` state schema is unchanged).
* An input column whose type differs from what the model was built with (INT -> STRING): an input's schema
  changed, so the model and its state are rebuilt, the reason is logged and the result equals the full
  recompute; later batches are incremental again.

Iceberg cannot change a BIGINT column to STRING in place, so a wrong-typed change table is swapped in: the
original is renamed away, a copy with the wrong type (same rows) takes its name, and afterwards the original is
renamed back (the bad-type tests are independent of each other and of their order).
"""

import contextlib

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from .harness import (
    IS_IVM,
    BatchGenerator,
    IvmHarness,
    Model,
    Oracle,
    adapter_response,
    built_and_checked,
    drop_schema,
    fingerprint_schemas,
    project_files,
    qi,
    result_by_name,
    shop_harness,
    shop_inputs,
    sql,
    state_schema,
)

pytestmark = pytest.mark.skipif(not IS_IVM, reason="type checks belong to the incremental_ivm materialization")

MODEL = Model(
    "bad_types_join",
    """
select o.o_id, o.amount, c.name, c.tier
from {orders} o
join {customers} c on o.c_id = c.c_id
""",
)
INPUTS = {"orders": 0, "customers": 0}
ORIG_SUFFIX = "__orig"


def _swap_in(h: IvmHarness, name: str, casts: dict):
    """Rename the change table of ``name`` away and put a copy with ``casts`` ({column: type}) in its place."""
    inp = h.inputs[name]
    table = h.fq(inp.changes)
    original = h.fq(inp.changes + ORIG_SUFFIX)
    cols = [c.name for c in inp.columns] + ["_ivm_weight", "_ivm_seq"]
    select = ", ".join(f"CAST({qi(c)} AS {casts[c]}) AS {qi(c)}" if c in casts else qi(c) for c in cols)
    sql(f"ALTER TABLE {table} RENAME TO {original}")
    sql(f"CREATE TABLE {table} USING iceberg AS SELECT {select} FROM {original}")


def _swap_back(h: IvmHarness, name: str):
    inp = h.inputs[name]
    sql(f"DROP TABLE IF EXISTS {h.fq(inp.changes)}")
    sql(f"ALTER TABLE {h.fq(inp.changes + ORIG_SUFFIX)} RENAME TO {h.fq(inp.changes)}")


@contextlib.contextmanager
def swapped(h: IvmHarness, name: str, casts: dict):
    _swap_in(h, name, casts)
    try:
        yield
    finally:
        _swap_back(h, name)


class TestIvmBadTypes:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, [MODEL], INPUTS, with_tests=False)

    @pytest.fixture(scope="class")
    def ctx(self, project):
        h = shop_harness(project.test_schema, INPUTS)
        gen = BatchGenerator(h, 99)
        h.apply(gen.initial())
        oracle = built_and_checked(h, MODEL)
        # a valid batch stays pending through the failing runs: it must not be applied by them
        h.apply(gen.batch(["orders", "customers"], ops=3))
        yield {"h": h, "gen": gen, "oracle": oracle}
        drop_schema(state_schema(project.test_schema))

    def _expect_failure(self, project, fragments):
        schemas = [project.test_schema, state_schema(project.test_schema)]
        before = fingerprint_schemas(schemas)
        assert f"{project.test_schema}.{MODEL.name}" in before, "target missing before the bad run"
        results, log = run_dbt_and_capture(["run"], expect_pass=False)
        messages = " ".join(str(r.message or "") for r in results)
        text = (messages + "\n" + log).lower()
        missing = [f for f in [MODEL.name, "orders_changes"] + fragments if f.lower() not in text]
        assert not missing, f"error output lacks {missing}; result messages: {messages!r}"
        after = fingerprint_schemas(schemas)
        changed = {t: (before.get(t), after.get(t)) for t in set(before) | set(after) if before.get(t) != after.get(t)}
        assert not changed, f"a failed run changed tables (before, after): {changed}"
        return messages

    @pytest.mark.parametrize(
        "column, bad_type",
        [("_ivm_weight", "STRING"), ("_ivm_weight", "DOUBLE"), ("_ivm_seq", "STRING"), ("_ivm_seq", "TIMESTAMP")],
    )
    def test_non_integer_column(self, project, ctx, column, bad_type):
        with swapped(ctx["h"], "orders", {column: bad_type}):
            # the problem: the column must be an integer, and the type it has
            self._expect_failure(project, [column, "integer", bad_type])

    def test_valid_batch_after_bad_types(self, project, ctx):
        """Nothing of the rejected runs leaked: the pending batch plus a new one give the exact result."""
        ctx["h"].apply(ctx["gen"].batch(["orders"], ops=2))
        run_dbt(["run"])
        assert adapter_response(project.project_root, MODEL.name).get("mode") == "incremental"
        diff = ctx["oracle"].compare(MODEL.name)
        assert diff is None, diff


class TestIvmInputTypeChange:
    """An input column's type changes (o_id INT -> STRING in the change table): SPEC §3, rebuild."""

    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        return project_files(unique_schema, [MODEL], INPUTS, with_tests=False)

    def test_type_change_rebuilds(self, project):
        h = IvmHarness(project.test_schema, shop_inputs(INPUTS))
        h.create_inputs()
        gen = BatchGenerator(h, 7)
        oracle = Oracle(h, [MODEL])
        try:
            h.apply(gen.initial())
            run_dbt(["run"])
            h.apply(gen.batch(["orders", "customers"], ops=3))  # pending across the type change
            target_types = dict(sql(f"SELECT * FROM {oracle.target(MODEL.name)}").dtypes)
            assert target_types["o_id"] == "int"

            _swap_in(h, "orders", {"o_id": "STRING"})
            orders = h.inputs["orders"]
            sql(f"DROP TABLE {h.fq(orders.changes + ORIG_SUFFIX)}")
            next(c for c in orders.columns if c.name == "o_id").type = "STRING"
            sql(f"CREATE OR REPLACE VIEW {h.fq('orders')} AS {h.consolidation_sql('orders')}")

            results, log = run_dbt_and_capture(["run"])
            resp = adapter_response(project.project_root, MODEL.name)
            assert resp.get("mode") == "full", resp
            assert "schema changed" in (resp.get("reason") or ""), resp
            assert "schema changed" in log, "the rebuild reason is not in the log"
            diff = oracle.compare(MODEL.name)  # names, types (o_id now STRING) and rows
            assert diff is None, diff

            # incremental again on the new schema
            h.apply(gen.batch(["orders", "customers"], ops=3))
            results = result_by_name(run_dbt(["run"]))
            assert str(results[MODEL.name].status) == "success"
            assert adapter_response(project.project_root, MODEL.name).get("mode") == "incremental"
            diff = oracle.compare(MODEL.name)
            assert diff is None, diff
        finally:
            drop_schema(state_schema(project.test_schema))
