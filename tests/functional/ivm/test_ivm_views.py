"""Views are transparent (SPEC §2.4): a dbt ``view`` model, and a source that is a view, is inlined into the
incremental_ivm models that read it, recursively, so the tables under the views are the models' inputs. Through real
``dbt run``s over staging views (one renaming and filtering columns, one over another view) of plain Iceberg tables
and of a change-table source: after random INSERT, DELETE and UPDATE batches every model equals its full recompute,
every run after the first is incremental and no input is diffed (no copy of a view is kept, and the runs say each
view was inlined); a changed view SQL rebuilds the models that inline it, naming the view; a view calling ``rand()``
stays diffed and says why; a source that is a view created with plain SQL is inlined too. The methods of the class
run in order and share one project."""

import os
import random

import pytest
from dbt.tests.util import run_dbt_and_capture

from .harness import (
    IS_IVM,
    SOURCE_NAME,
    IvmHarness,
    Model,
    Oracle,
    adapter_response,
    drop_schema,
    list_tables,
    models_files,
    qi,
    run_and_compare,
    shop_inputs,
    sql,
    sql_literal,
    state_schema,
)

INCREMENTAL = {"ivm_policy": "incremental"}
# dbt `view` models: staging views renaming and filtering columns, one over another view
STG_ORDERS = Model("stg_orders", "select o_id, c_id as customer_id, p_id, amount, status as order_status "
                                 "from {orders} where status is null or status <> 'cancelled'")
STG_BIG_ORDERS = Model("stg_big_orders", "select * from {ref:stg_orders} where amount > 20")
STG_CUSTOMERS = Model("stg_customers", "with c as (select c_id as customer_id, name as customer_name, tier "
                                       "from {customers}) select * from c where tier is not null")
STG_PRODUCTS = Model("stg_products", "select p_id, pname as product, category from {products}")
STG_NOISY = Model("stg_noisy", "select o_id, c_id, rand() as draw from {orders}")  # cannot be inlined
STG_TOTALS = Model("stg_totals", "select customer_id, total from {ref:big_by_customer} where n > 0")  # over a model
VIEWS = [STG_ORDERS, STG_BIG_ORDERS, STG_CUSTOMERS, STG_PRODUCTS, STG_NOISY, STG_TOTALS]
STG_ORDERS_CHANGED = Model("stg_orders", "select o_id, c_id as customer_id, p_id, amount + 1 as amount, "
                                         "status as order_status from {orders} where status is not null")

INLINED = [  # incremental_ivm models over views that are inlined
    Model("order_lines",  # a 3-way join of views over Iceberg tables and over a change-table source
          """
select o.o_id, o.amount, c.customer_name, p.product
from {ref:stg_orders} o
join {ref:stg_customers} c on o.customer_id = c.customer_id
join {ref:stg_products} p on o.p_id = p.p_id
""", ivm_config=INCREMENTAL),
    Model("big_by_customer",  # an aggregate over a view over a view
          "select customer_id, count(*) as n, sum(amount) as total, max(order_status) as last_status "
          "from {ref:stg_big_orders} group by customer_id", ivm_config=INCREMENTAL),
    Model("by_source_view",  # over a source that is a view the test creates with plain SQL
          "select c_id, count(*) as n, sum(amount) as total from {orders_view} group by c_id",
          ivm_config=INCREMENTAL),
    Model("all_totals",  # over a view over an incremental_ivm model: it reads the changes that model publishes
          "select count(*) as customers, sum(total) as total from {ref:stg_totals}", ivm_config=INCREMENTAL),
]
NOISY = Model("noisy_ids", "select c_id, count(*) as n from {ref:stg_noisy} group by c_id", ivm_config=INCREMENTAL)
NAMES = [m.name for m in INLINED]
# the relations under the views: what the models' inputs are
UNDER = {"order_lines": {"orders", "customers", "products"}, "big_by_customer": {"orders"},
         "by_source_view": {"orders"}, "all_totals": {"big_by_customer"}}


def sources_yml(schema: str) -> str:
    """orders, customers: plain Iceberg tables; products: a change table; orders_view: a view."""
    return f"""version: 2
sources:
  - name: {SOURCE_NAME}
    schema: {schema}
    tables:
      - name: orders
      - name: customers
      - name: orders_view
      - name: products
        meta:
          ivm:
            changes: products_changes
"""


class Shop:
    """orders and customers: plain Iceberg tables written with DML; products: a change table (and the harness's
    view of its consolidation)."""

    def __init__(self, schema: str, seed: int):
        self.schema = schema
        self.tables = IvmHarness(schema, shop_inputs({"orders": 0, "customers": 0}))
        self.products = IvmHarness(schema, shop_inputs({"products": 0}))
        self.rng = random.Random(seed)

    def create(self) -> None:
        for inp in self.tables.inputs.values():
            cols = ", ".join(f"{qi(c.name)} {c.type}" for c in inp.columns)
            sql(f"CREATE TABLE {self.tables.fq(inp.name)} ({cols}) USING iceberg")
        self.products.create_inputs()
        sql(f"CREATE VIEW {self.tables.fq('orders_view')} AS "
            f"SELECT o_id, c_id, amount FROM {self.tables.fq('orders')} WHERE amount IS NOT NULL")

    def insert(self, name: str, count: int) -> None:
        inp = self.tables.inputs[name]
        rows = [inp.new_row(self.rng) for _ in range(count)]
        rows.append(rows[0])  # a duplicate
        types = [c.type for c in inp.columns]
        values = ", ".join("(" + ", ".join(sql_literal(v, t) for v, t in zip(r, types)) + ")" for r in rows)
        sql(f"INSERT INTO {self.tables.fq(name)} SELECT /*+ COALESCE(1) */ * FROM VALUES {values}")

    def batch(self) -> None:
        """Random inserts, deletes and updates (of join keys and of filtered columns) of orders and customers, and
        a random batch of products' change rows."""
        rng = self.rng
        self.insert("orders", rng.randint(2, 5))
        self.insert("customers", rng.randint(1, 2))
        o, c = self.tables.fq("orders"), self.tables.fq("customers")
        sql(f"DELETE FROM {o} WHERE o_id IN ({rng.randint(1, 40)}, {rng.randint(1, 40)})")
        sql(f"UPDATE {o} SET c_id = {rng.randint(1, 8)}, amount = amount + 15 WHERE o_id % 7 = {rng.randint(0, 6)}")
        sql(f"UPDATE {o} SET status = '{rng.choice(['open', 'cancelled'])}' WHERE o_id % 5 = {rng.randint(0, 4)}")
        sql(f"DELETE FROM {c} WHERE c_id = {rng.randint(1, 8)} AND tier = '{rng.choice(['gold', 'silver'])}'")
        sql(f"UPDATE {c} SET tier = '{rng.choice(['gold', 'silver'])}', c_id = {rng.randint(1, 8)} "
            f"WHERE name = '{rng.choice(['ann', 'bob', 'cy', 'dee', 'eve'])}'")
        self.products.apply(_generator(self.products, rng).batch(["products"]))


def _generator(harness, rng):
    from .harness import BatchGenerator

    gen = BatchGenerator(harness, 0)
    gen.rng = rng
    return gen


def write_model(project, model: Model, materialization: str) -> None:
    with open(os.path.join(project.project_root, "models", f"{model.name}.sql"), "w") as f:
        f.write(model.render_dbt(materialization))


@pytest.mark.skipif(not IS_IVM, reason="inlined views are the spark_ivm adapter's")
class TestViewsAreInlined:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        files = models_files(INLINED + [NOISY], with_tests=False)
        files.update({f"{v.name}.sql": v.render_dbt("view") for v in VIEWS})
        files["sources.yml"] = sources_yml(unique_schema)
        return files

    @pytest.fixture(scope="class")
    def ctx(self, project):
        shop = Shop(project.test_schema, 23)
        shop.create()
        yield {"shop": shop, "oracle": Oracle(shop.tables, INLINED + VIEWS + [NOISY])}
        drop_schema(state_schema(project.test_schema))

    def check(self, project, ctx, label: str, expect: str) -> None:
        run_and_compare(ctx["oracle"], NAMES + [NOISY.name], label=label)
        responses = {n: adapter_response(project.project_root, n) for n in NAMES}
        assert {n: r.get("mode") for n, r in responses.items()} == {n: expect for n in NAMES}, (label, responses)
        self.assert_nothing_diffed(project)

    def assert_nothing_diffed(self, project):
        """No copy of a view is kept for the inlined models, nor of the Iceberg tables under them (read at their
        snapshots): their only join index is order_lines' of the change table under stg_products."""
        schema = project.test_schema.lower()
        companions = list_tables(state_schema(schema))
        indexes = {t for t in companions if any(t.startswith(f"{n}__index__") for n in NAMES)}
        assert indexes == {f"order_lines__index__{schema}__products"}, companions

    def test_first_build(self, project, ctx):
        shop = ctx["shop"]
        shop.insert("orders", 25)
        shop.insert("customers", 8)
        shop.products.apply(_generator(shop.products, shop.rng).initial())
        self.check(project, ctx, "first build", "full")

    def test_random_batches_are_applied_incrementally(self, project, ctx):
        for i in range(3):
            ctx["shop"].batch()
            self.check(project, ctx, f"batch {i + 1}", "incremental")

    def test_explain_shows_the_inlined_plan(self, project, ctx):
        schema = project.test_schema.lower()
        for name in NAMES:
            _, explained = run_dbt_and_capture(["run-operation", "ivm_explain", "--args", "{model: %s}" % name])
            inputs = explained.split("Inputs:")[1].split("Views:")[0]
            listed = {line.strip().split(":")[0] for line in inputs.splitlines() if line.startswith("  ")}
            assert {f"{schema}.{t}" for t in UNDER[name]} == listed, explained
            assert "diffs it against" not in explained and "Views:" in explained, explained
        _, explained = run_dbt_and_capture(["run-operation", "ivm_explain", "--args", "{model: big_by_customer}"])
        assert f"{schema}.stg_big_orders (model stg_big_orders (view)): inlined" in explained, explained
        assert f"{schema}.stg_orders (model stg_orders (view)): inlined" in explained, explained

    def test_the_run_log_says_each_view_was_inlined(self, project, ctx, logs_dir):
        schema = project.test_schema.lower()
        with open(os.path.join(logs_dir, "dbt.log"), errors="replace") as f:
            log = f.read()
        for view in ("stg_orders", "stg_big_orders", "stg_customers", "stg_products", "stg_totals"):
            assert f"view {schema}.{view} (model {view} (view)) inlined: it reads" in log, view
        assert f"view {schema}.orders_view (source view {schema}.orders_view) inlined: it reads {schema}.orders" \
            in log

    def test_a_view_calling_rand_stays_diffed_and_says_why(self, project, ctx, logs_dir):
        schema = project.test_schema.lower()
        ctx["shop"].batch()
        run_and_compare(ctx["oracle"], [NOISY.name], args=("run", "--select", NOISY.name), label="noisy")
        assert adapter_response(project.project_root, NOISY.name).get("mode") == "incremental"
        assert f"{NOISY.name}__index__{schema}__stg_noisy" in list_tables(state_schema(schema))  # its copy
        with open(os.path.join(logs_dir, "dbt.log"), errors="replace") as f:
            log = f.read()
        assert f"view {schema}.stg_noisy (model stg_noisy (view)) not inlined, diffed: its SQL calls RAND()" \
            in log, log
        assert f"{schema}.stg_noisy (model stg_noisy (view), not inlined: its SQL calls RAND()" in log, log
        _, explained = run_dbt_and_capture(["run-operation", "ivm_explain", "--args", "{model: %s}" % NOISY.name])
        assert f"{schema}.stg_noisy (model stg_noisy (view)): not inlined, diffed: its SQL calls RAND()" \
            in explained, explained
        assert "every run reads it whole and diffs it" in explained, explained

    def test_a_changed_view_sql_rebuilds_the_models_that_inline_it(self, project, ctx):
        shop = ctx["shop"]
        write_model(project, STG_ORDERS_CHANGED, "view")
        oracle = Oracle(shop.tables, INLINED + [STG_ORDERS_CHANGED] + VIEWS[1:] + [NOISY])
        shop.batch()
        run_and_compare(oracle, NAMES, label="stg_orders changed",
                        rebuilds=["order_lines", "big_by_customer", "all_totals"])
        schema = project.test_schema.lower()
        for name in ("order_lines", "big_by_customer"):
            response = adapter_response(project.project_root, name)
            assert response.get("mode") == "full", response
            assert response.get("reason") == f"the SQL of view {schema}.stg_orders, inlined into the model, changed"
        assert adapter_response(project.project_root, "by_source_view").get("mode") == "incremental"
        assert adapter_response(project.project_root, "all_totals").get("mode") == "full"  # its upstream rebuilt
        shop.batch()
        run_and_compare(oracle, NAMES, label="after the rebuild")
        assert {n: adapter_response(project.project_root, n).get("mode") for n in NAMES} \
            == {n: "incremental" for n in NAMES}
        self.assert_nothing_diffed(project)
