#!/usr/bin/env python
"""The integration project end to end: one incremental_ivm model per supported SQL construct,
driven through real dbt commands on the embedded Spark + Iceberg session.

    .venv/bin/python integration_tests/run.py [--batches 4] [--seed 7] [--no-full-refresh]

1. starts from a clean state (this project's .spark_ivm, target/, logs/),
2. creates the raw tables of schema it_raw and their change tables, loads sequence 1 (random rows with
   duplicates and NULLs),
3. `dbt build`: every model is built, then its ivm_matches_full_refresh test compares it with a full
   recompute of its SQL as a multiset,
4. per batch: random inserts (duplicates of existing rows among them), deletes (one copy of a duplicated
   row among them), updates (−old +new; of join and group keys, to and from NULL), one batch that is empty
   and one that changes a single table; then `dbt build`, which must refresh every model incrementally
   (adapter_response mode `incremental` or `noop`: the project's `ivm_policy: incremental` makes a model
   that cannot be maintained fail) and pass every test,
5. `dbt build --full-refresh` (unless `--no-full-refresh`),
and exits non-zero, naming the step, when anything failed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import os
import random
import shutil
import sys
import time
from collections import Counter
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "sample_project"))
from run_demo import Shop  # noqa: E402  (the raw tables, their change tables and their mirror)

RAW = "it_raw"

TABLES: Dict[str, List[Tuple[str, str]]] = {
    "customers": [("id", "INT"), ("name", "STRING"), ("region", "STRING"), ("tier", "INT")],
    "orders": [("id", "INT"), ("customer_id", "INT"), ("day", "DATE"), ("status", "STRING"),
               ("amount", "DECIMAL(10,2)"), ("score", "DOUBLE")],
    "items": [("order_id", "INT"), ("sku", "STRING"), ("qty", "INT"), ("price", "DECIMAL(8,2)")],
}
Row = tuple
Batch = Dict[str, List[Tuple[Row, int]]]
D0 = dt.date(2024, 1, 1)


# ------------------------------------------------------------------------------------------ random rows
REGIONS = ["EU", "US", "APAC", None]
SKUS = [f"sku-{i}" for i in range(1, 11)] + [None]
STATUSES = ["open", "paid", "void"]


def customer(rng: random.Random, cid: Optional[int]) -> Row:
    return (cid, f"c{cid}", rng.choice(REGIONS), rng.choice([1, 2, 3, None]))


def order(rng: random.Random, oid: int, n_customers: int) -> Row:
    cust = None if rng.random() < 0.08 else rng.randint(1, n_customers + 3)  # some dangle
    amount = None if rng.random() < 0.1 else decimal.Decimal(rng.randint(100, 9999)) / 100
    score = None if rng.random() < 0.1 else round(rng.random(), 3)
    return (oid, cust, D0 + dt.timedelta(days=rng.randint(0, 60)), rng.choice(STATUSES), amount, score)


def item(rng: random.Random, oid: int) -> Row:
    return (oid, rng.choice(SKUS), rng.randint(1, 6), decimal.Decimal(rng.randint(500, 9999)) / 100)


def initial(rng: random.Random) -> Batch:
    customers = [customer(rng, cid) for cid in range(1, 31)]
    orders = [order(rng, oid, 30) for oid in range(1, 101)]
    items = [item(rng, rng.randint(1, 105)) for _ in range(250)]
    customers.append(customers[0])  # duplicates
    orders += orders[:3]
    items += items[:5]
    return {"customers": [(r, 1) for r in customers], "orders": [(r, 1) for r in orders],
            "items": [(r, 1) for r in items]}


def update(rng: random.Random, row: Row, table: str) -> Row:
    """The row with one column changed: a key, a group key, a value, or to or from NULL."""
    r = list(row)
    if table == "customers":
        if rng.random() < 0.5:
            r[2] = rng.choice(REGIONS)
        else:
            r[3] = rng.choice([1, 2, 3, None])
    elif table == "orders":
        i = rng.choice([1, 2, 3, 4, 5])
        fresh = order(rng, row[0], 30)
        r[i] = fresh[i]
    else:
        i = rng.choice([0, 1, 2, 3])
        r[i] = item(rng, rng.randint(1, 110))[i]
    return tuple(r)


def random_batch(raw: Shop, rng: random.Random, tables: List[str]) -> Batch:
    b: Batch = {t: [] for t in TABLES}
    next_id = {"customers": max(r[0] for r in raw.rows["customers"]) + 1,
               "orders": max(r[0] for r in raw.rows["orders"]) + 1}
    for t in tables:
        live = raw.live(t)
        for _ in range(rng.randint(2, 6)):  # inserts, a duplicate of a live row among them
            if t == "customers":
                b[t].append((customer(rng, next_id[t]), 1))
                next_id[t] += 1
            elif t == "orders":
                b[t].append((order(rng, next_id[t], 30), 1))
                next_id[t] += 1
            else:
                b[t].append((item(rng, rng.randint(1, next_id["orders"])), 1))
        b[t].append((rng.choice(live), 1))
        touched = rng.sample(live, min(len(live), rng.randint(3, 8)))
        for row in touched[: len(touched) // 2]:  # deletes (of one copy, when the row has several)
            b[t].append((row, -1))
        for row in touched[len(touched) // 2:]:  # updates: -old +new
            b[t] += [(row, -1), (update(rng, row, t), 1)]
    return b


# ------------------------------------------------------------------------------------------ dbt
class Dbt:
    def __init__(self):
        from dbt.cli.main import dbtRunner

        self.runner = dbtRunner()
        self.failures: List[str] = []

    def build(self, step: str, *args: str, incremental: bool = False) -> None:
        argv = ["build", *args, "--project-dir", HERE, "--profiles-dir", HERE]
        print(f"\n=== {step}: dbt {' '.join(argv[:1 + len(args)])}", flush=True)
        started = time.monotonic()
        res = self.runner.invoke(argv)
        if res.exception is not None or not res.success:
            self.failures.append(f"{step}: dbt build failed ({res.exception!r})")
        results = getattr(res.result, "results", None) or []
        modes = Counter()
        for r in results:
            if r.node.resource_type != "model":
                continue
            mode = (r.adapter_response or {}).get("mode")
            modes[mode] += 1
            if incremental and mode not in ("incremental", "noop"):
                self.failures.append(f"{step}: {r.node.name} was refreshed with mode {mode!r}, not incrementally")
        tests = Counter(str(r.status) for r in results if r.node.resource_type == "test")
        print(f"=== {step}: {time.monotonic() - started:.1f}s; models {dict(modes)}; tests {dict(tests)}", flush=True)

    def invoke(self, *args: str) -> None:
        res = self.runner.invoke([*args, "--project-dir", HERE, "--profiles-dir", HERE])
        if res.exception is not None or not res.success:
            self.failures.append(f"dbt {' '.join(args)} failed ({res.exception!r})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, default=4, help="random change batches after the first build")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--full-refresh", action=argparse.BooleanOptionalAction, default=True,
                    help="end with `dbt build --full-refresh` (default: yes)")
    args = ap.parse_args(argv)

    shutil.rmtree(os.path.join(HERE, ".spark_ivm"), ignore_errors=True)
    for d in ("target", "logs"):
        shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)
    os.chdir(HERE)
    started = time.monotonic()
    dbt = Dbt()
    dbt.invoke("debug")  # opens a connection: starts the embedded SparkSession as the profile configures it
    if dbt.failures:
        return report(dbt, started)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    rng = random.Random(args.seed)
    raw = Shop(RAW, TABLES, spark.sql)
    raw.create()
    raw.commit(initial(rng))
    dbt.build("first build")
    for n in range(1, args.batches + 1):
        if n == 2:
            label, batch = "empty batch", {}
        elif n == 3:
            label, batch = "orders only", random_batch(raw, rng, ["orders"])
        else:
            label, batch = "all tables", random_batch(raw, rng, list(TABLES))
        rows = raw.commit(batch)
        dbt.build(f"batch {n} ({label}, {rows} change rows)", incremental=True)
    if args.full_refresh:
        dbt.build("full refresh", "--full-refresh")
    return report(dbt, started)


def report(dbt: Dbt, started: float) -> int:
    print(f"\nintegration_tests: {time.monotonic() - started:.0f}s")
    if dbt.failures:
        print("FAILED:\n  " + "\n  ".join(dbt.failures))
        return 1
    print("every build succeeded; every model refreshed incrementally and matched its full recompute")
    return 0


if __name__ == "__main__":
    sys.exit(main())
