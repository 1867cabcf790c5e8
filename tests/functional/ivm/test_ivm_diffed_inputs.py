"""Inputs that are neither change tables nor Iceberg tables — a view, a parquet table, a dbt ``view`` model — are
diffed (SPEC §2.4): every run reads the input whole and subtracts the copy of it the model keeps (its join index),
and applies that difference incrementally. Through real ``dbt run``s, each model (``ivm_policy: incremental``: a
fallback would fail) equals its full recompute after inserts with duplicates, a delete of one of several equal rows
and updates of join and group keys (``INSERT OVERWRITE`` of the parquet tables under the view); a run over
unchanged inputs is a ``noop``; a filtered join keeps only the rows its filter lets through in its copy (a change to
other rows is no change); ``ivm_explain`` says what the input costs; and a model that falls back to a full
recompute for its SQL recomputes on every run (nothing says its diffed input did not change).
The methods of the class run in order and share one project."""

import random

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from .harness import (
    IS_IVM,
    IvmHarness,
    Model,
    Oracle,
    adapter_response,
    collect,
    drop_schema,
    models_files,
    qi,
    run_and_compare,
    shop_inputs,
    sql,
    sql_literal,
    state_schema,
)

INCREMENTAL = {"ivm_policy": "incremental"}
OPEN_ORDERS = Model("open_orders", "select * from {orders} where status = 'open'")  # a dbt `view` model
IVM_MODELS = [
    Model("orders_per_customer",
          "select c_id, count(*) as n, sum(amount) as total, max(odate) as last_date from {orders} group by c_id",
          ivm_config=INCREMENTAL),
    Model("gold_orders",
          "select o.o_id, o.amount, c.name from {orders} o join {customers} c on o.c_id = c.c_id "
          "where c.tier = 'gold'",
          ivm_config=INCREMENTAL),
    Model("open_by_customer", "select c_id, count(*) as n from {ref:open_orders} group by c_id",
          ivm_config=INCREMENTAL),
]
NAMES = [m.name for m in IVM_MODELS]
FALLBACK = Model("median_amount", "select percentile(amount, 0.5) as median from {orders}", modes=("full",))
SOURCES = """version: 2
sources:
  - name: raw
    schema: {schema}
    tables:
      - name: orders
      - name: customers
"""


class ParquetShop:
    """orders: a view over the parquet table orders_data; customers: a parquet table. Both are rewritten
    whole (INSERT OVERWRITE) from a python mirror: parquet tables take no DELETE or UPDATE."""

    def __init__(self, schema: str, seed: int):
        self.h = IvmHarness(schema, shop_inputs({"orders": 0, "customers": 0}))
        self.rng = random.Random(seed)
        self.rows = {name: [] for name in self.h.inputs}

    def table(self, name: str) -> str:
        return self.h.fq("orders_data" if name == "orders" else name)

    def create(self) -> None:
        for name, inp in self.h.inputs.items():
            cols = ", ".join(f"{qi(c.name)} {c.type}" for c in inp.columns)
            sql(f"CREATE TABLE {self.table(name)} ({cols}) USING parquet")
        sql(f"CREATE VIEW {self.h.fq('orders')} AS SELECT * FROM {self.table('orders')}")

    def write(self, name: str) -> None:
        inp = self.h.inputs[name]
        types = [c.type for c in inp.columns]
        rows = self.rows[name]
        if not rows:
            sql(f"INSERT OVERWRITE {self.table(name)} SELECT * FROM {self.table(name)} WHERE FALSE")
            return
        values = ", ".join("(" + ", ".join(sql_literal(v, t) for v, t in zip(r, types)) + ")" for r in rows)
        sql(f"INSERT OVERWRITE {self.table(name)} SELECT * FROM VALUES {values}")

    def insert(self, name: str, count: int, duplicates: int = 0) -> None:
        new = [self.h.inputs[name].new_row(self.rng) for _ in range(count)]
        self.rows[name] += new + new[:duplicates]
        self.write(name)

    def change(self, name: str, deletes: int, updates: int) -> None:
        rows = self.rows[name]
        for _ in range(min(deletes, len(rows))):
            rows.pop(self.rng.randrange(len(rows)))
        position = 1 if name == "orders" else 4  # a join and group key (c_id), a filtered column (tier)
        for _ in range(updates):
            i = self.rng.randrange(len(rows))
            fresh = self.h.inputs[name].new_row(self.rng)
            rows[i] = rows[i][:position] + fresh[position:position + 1] + rows[i][position + 1:]
        self.write(name)


def modes(project_root, names) -> dict:
    return {n: adapter_response(project_root, n).get("mode") for n in names}


@pytest.mark.skipif(not IS_IVM, reason="diffed inputs are the spark_ivm adapter's")
class TestDiffedInputs:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        files = models_files(IVM_MODELS + [FALLBACK], with_tests=False)
        files["open_orders.sql"] = OPEN_ORDERS.render_dbt("view")
        files["sources.yml"] = SOURCES.format(schema=unique_schema)
        return files

    @pytest.fixture(scope="class")
    def ctx(self, project):
        shop = ParquetShop(project.test_schema, 11)
        shop.create()
        yield {"shop": shop, "oracle": Oracle(shop.h, IVM_MODELS + [OPEN_ORDERS, FALLBACK])}
        drop_schema(state_schema(project.test_schema))

    def check(self, project, ctx, label: str, expect: str) -> None:
        run_and_compare(ctx["oracle"], NAMES + [FALLBACK.name], label=label)
        assert modes(project.project_root, NAMES) == {n: expect for n in NAMES}, label

    def test_first_build(self, project, ctx):
        shop = ctx["shop"]
        shop.insert("orders", 25, duplicates=4)
        shop.insert("customers", 8, duplicates=1)
        self.check(project, ctx, "first build", "full")

    def test_unchanged_inputs_are_a_noop(self, project, ctx):
        self.check(project, ctx, "no change", "noop")
        # a recompute of the SQL as written cannot know its view did not change
        assert adapter_response(project.project_root, FALLBACK.name).get("mode") == "full"

    def test_inserts_deletes_and_updates_are_applied_incrementally(self, project, ctx):
        shop = ctx["shop"]
        shop.insert("orders", 6, duplicates=2)
        shop.change("orders", deletes=3, updates=4)
        self.check(project, ctx, "orders changed", "incremental")
        shop.change("customers", deletes=1, updates=3)
        shop.insert("customers", 2, duplicates=1)
        run_and_compare(ctx["oracle"], NAMES, label="customers changed")
        assert adapter_response(project.project_root, "gold_orders").get("mode") == "incremental"

    def test_copies_hold_what_the_models_read(self, project, ctx):
        schema = state_schema(project.test_schema)
        copy = f"{schema}.gold_orders__index__{project.test_schema}__customers"
        held = collect(f"SELECT DISTINCT tier FROM {copy} WHERE _ivm_weight <> 0")
        assert held == [("gold",)], held  # the filter's rows only: a change to others is no change
        gold = sql(f"SELECT count(*) FROM {ctx['shop'].table('customers')} WHERE tier = 'gold'").collect()[0][0]
        assert collect(f"SELECT CAST(sum(_ivm_weight) AS INT) FROM {copy}") == [(gold,)]

    def test_explain_and_check(self, project, ctx):
        _, explained = run_dbt_and_capture(["run-operation", "ivm_explain", "--args", "{model: gold_orders}"])
        assert "every run reads it whole and diffs it against the model's copy" in explained, explained
        for name in NAMES:
            _, checked = run_dbt_and_capture(["run-operation", "ivm_check", "--args", "{model: %s}" % name])
            assert "DRIFT" not in checked and "not checked (the copy of a diffed input" in checked, checked
        run_dbt(["run"])
        assert modes(project.project_root, NAMES) == {n: "noop" for n in NAMES}
