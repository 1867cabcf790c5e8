"""Scheduled operation: a producer keeps committing to the inputs while ``dbt run`` refreshes the models back to
back, as an orchestrator runs them every few seconds.

The producer (a thread of this process, through the same Spark session) commits one transaction at a time, with
short pauses, to a plain Iceberg table — ``orders``: INSERT (duplicates too), DELETE, UPDATE and MERGE — and to
a change table — ``customers``: change rows at a new ``_ivm_seq`` (inserts, deletes, updates of join keys).
Every run must succeed, and leave every model equal to its SQL over the inputs *as the run captured them*:
``orders`` at the Iceberg snapshot and ``customers`` at the sequence the model's log records as consumed (the
oracle reads them by time travel and by the change rows up to that sequence). Runs overlap the producer's
commits, so what a run captured differs from what the tables hold when it ends. When the producer stops, one
more run catches up, and every model equals its SQL over the inputs as they are.
"""

import json
import random
import threading
import time
from collections import Counter

import pytest
from dbt.tests.util import run_dbt

from .harness import (
    IS_IVM,
    IvmHarness,
    Model,
    Oracle,
    collect,
    drop_schema,
    models_files,
    qi,
    result_by_name,
    shop_inputs,
    sql,
    sql_literal,
    state_schema,
)

INCREMENTAL = {"ivm_policy": "incremental"}
MODELS = [
    Model("orders_by_customer", "select c_id, count(*) as n, sum(amount) as total from {orders} group by c_id",
          ivm_config=INCREMENTAL),
    Model("customer_orders",
          "select o.o_id, o.amount, c.name, c.tier from {orders} o join {customers} c on o.c_id = c.c_id",
          ivm_config=INCREMENTAL),
    Model("tier_totals",
          "select c.tier, count(*) as n, sum(o.amount) as total from {orders} o join {customers} c "
          "on o.c_id = c.c_id group by c.tier",
          ivm_config=INCREMENTAL),
]
NAMES = [m.name for m in MODELS]
RUNS = 6  # back to back, while the producer commits
SOURCES = """version: 2
sources:
  - name: raw
    schema: {schema}
    tables:
      - name: orders
      - name: customers
        meta:
          ivm:
            changes: customers_changes
"""


class Producer(threading.Thread):
    """Commits to orders (an Iceberg table, by DML) and customers (a change table) until stopped."""

    def __init__(self, h: IvmHarness, seed: int):
        super().__init__(daemon=True)
        self.h, self.rng = h, random.Random(seed)
        self.stop = threading.Event()
        self.commits: Counter = Counter()
        self.error: BaseException | None = None
        self.next_id = 1000

    def orders(self) -> str:
        return self.h.fq("orders")

    def row(self) -> str:
        inp = self.h.inputs["orders"]
        values = list(inp.new_row(self.rng))
        values[0] = self.next_id
        self.next_id += 1
        return "(" + ", ".join(sql_literal(v, c.type) for v, c in zip(values, inp.columns)) + ")"

    def some_id(self):
        ids = collect(f"SELECT o_id FROM {self.orders()}")
        return self.rng.choice(ids)[0] if ids else None

    def commit_one(self) -> None:
        op = self.rng.choice(["insert", "insert", "delete", "update", "merge", "customers", "customers"])
        if op in ("delete", "update", "merge") and self.some_id() is None:
            op = "insert"
        if op == "insert":
            rows = [self.row() for _ in range(self.rng.randint(1, 4))]
            rows.append(rows[0])  # an exact duplicate
            sql(f"INSERT INTO {self.orders()} VALUES {', '.join(rows)}")
        elif op == "delete":
            sql(f"DELETE FROM {self.orders()} WHERE o_id = {self.some_id()}")
        elif op == "update":  # a join and group key, and a value
            c_id = self.rng.choice(["NULL", "1", "2", "3"])
            sql(f"UPDATE {self.orders()} SET c_id = {c_id}, amount = amount + 1 WHERE o_id = {self.some_id()}")
        elif op == "merge":
            existing = self.some_id()
            source = f"SELECT {existing} AS o_id, 'shipped' AS status UNION ALL SELECT {self.next_id}, 'open'"
            self.next_id += 1
            sql(f"MERGE INTO {self.orders()} t USING ({source}) s ON t.o_id = s.o_id "
                "WHEN MATCHED THEN UPDATE SET status = s.status "
                "WHEN NOT MATCHED THEN INSERT (o_id, c_id, amount, status) VALUES (s.o_id, 2, 10.00, s.status)")
        else:
            from .harness import BatchGenerator
            self.h.apply(BatchGenerator(self.h, self.rng.randrange(1 << 30)).batch(["customers"], ops=3))
        self.commits[op] += 1

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                self.commit_one()
                time.sleep(self.rng.uniform(0.2, 1.0))
        except BaseException as e:  # reported by the test
            self.error = e


def committed_marks(h: IvmHarness, model: str) -> dict:
    rows = collect(f"SELECT watermarks FROM {state_schema(h.schema)}.{qi(model + '__log')} "
                   "WHERE status = 'committed' ORDER BY seq DESC LIMIT 1")
    return json.loads(rows[0][0])


def as_captured(h: IvmHarness, oracle: Oracle, model: str) -> str:
    """The model's SQL over its inputs as its last commit consumed them."""
    marks = committed_marks(h, model)
    customers = h.inputs["customers"]
    cols = customers.quoted_cols

    def relation(name: str) -> str:
        mark = int(marks[f"{h.schema}.{name}"])
        if name == "orders":
            return f"(SELECT * FROM {h.fq('orders')} VERSION AS OF {mark})"
        return (f"(SELECT {cols} FROM (SELECT {cols}, SUM(_ivm_weight) AS _w FROM {h.fq(customers.changes)} "
                f"WHERE _ivm_seq <= {mark} GROUP BY {cols} HAVING SUM(_ivm_weight) > 0) "
                "LATERAL VIEW explode(sequence(1, _w)) _x AS _i)")

    template = oracle.models[model].template
    for name in ("orders", "customers"):
        if "{" + name + "}" in template:
            template = template.replace("{" + name + "}", relation(name))
    return template


def differs(h: IvmHarness, expected_sql: str, model: str) -> str | None:
    expected = Counter(collect(expected_sql))
    actual = Counter(collect(f"SELECT * FROM {h.fq(model)}"))
    return None if expected == actual else f"{model}: expected {sorted(expected.items())}, got {sorted(actual.items())}"


@pytest.mark.skipif(not IS_IVM, reason="the incremental_ivm materialization")
class TestScheduledRunsWhileAProducerCommits:
    @pytest.fixture(scope="class")
    def models(self, unique_schema):
        files = models_files(MODELS, with_tests=False)
        files["sources.yml"] = SOURCES.format(schema=unique_schema)
        return files

    def test_every_run_is_exact_at_what_it_captured(self, project):
        h = IvmHarness(project.test_schema, shop_inputs({"orders": 0, "customers": 0}))
        orders = h.inputs.pop("orders")
        h.create_inputs()  # customers and its change table
        cols = ", ".join(f"{qi(c.name)} {c.type}" for c in orders.columns)
        sql(f"CREATE TABLE {h.fq('orders')} ({cols}) USING iceberg")
        h.inputs["orders"] = orders  # for the producer's rows
        producer = Producer(h, 23)
        sql(f"INSERT INTO {h.fq('orders')} VALUES {', '.join(producer.row() for _ in range(20))}")
        h.apply({"customers": [(h.inputs["customers"].new_row(producer.rng), 1) for _ in range(6)]})
        oracle = Oracle(h, MODELS)
        problems = []
        incremental: Counter = Counter()
        overtaken = 0  # runs whose captured orders snapshot was no longer the table's when they ended
        try:
            run_dbt(["run"])  # the first build, before the producer starts
            producer.start()
            for i in range(RUNS):
                results = result_by_name(run_dbt(["run"], expect_pass=None))
                for name in NAMES:
                    r = results[name]
                    if str(r.status) != "success":
                        problems.append(f"run {i}: {name} {r.status}: {r.message}")
                        continue
                    incremental[name] += (r.adapter_response or {}).get("mode") == "incremental"
                    problem = differs(h, as_captured(h, oracle, name), name)
                    if problem:
                        problems.append(f"run {i}: {problem}")
                captured = committed_marks(h, "customer_orders")[f"{h.schema}.orders"]
                now = collect(f"SELECT snapshot_id FROM {h.fq('orders')}.refs WHERE name = 'main'")[0][0]
                overtaken += captured != now
        finally:
            producer.stop.set()
            producer.join(60)
        try:
            assert producer.error is None, producer.error
            assert not problems, "\n".join(problems)
            assert overtaken >= 2 and all(incremental[n] >= 3 for n in NAMES), (overtaken, incremental)
            run_dbt(["run"])  # catch up
            for name in NAMES:
                assert differs(h, oracle.sql_for(name), name) is None
        finally:
            drop_schema(state_schema(h.schema))
