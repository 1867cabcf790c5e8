#!/usr/bin/env python
"""End-to-end demo of incremental_ivm on the sample shop project.

    python sample_project/run_demo.py          (or ./run.sh demo)
    python sample_project/run_demo.py --host 127.0.0.1 --port 10000   (through a Spark Thrift Server)

1. starts from a clean state (removes the project's session dir: warehouse + metastore),
2. creates the raw shop tables and their change tables (seq 1 = initial load of a few hundred rows each),
3. dbt build (first build, then ivm_matches_full_refresh on every model),
4. applies change batches (inserts, deletes, updates of orders / order_lines / customers / products, and one
   empty batch; --batches N: the first N of the four), each followed by dbt build (run + test),
5. dbt build --full-refresh,
6. prints a timing table (each build's model time against the full refresh's) and exits non-zero if any dbt
   command failed.

Everything runs in this one process (dbtRunner), so the JVM and the SparkSession are started once.

With --host, the same steps run through a Spark Thrift Server instead (dbt-spark's `method: thrift`, the
shop tables written through the same server); profiles.yml, target/ and logs/ then go to --work-dir, and
the schemas shop_raw, shop and shop_ivm of that server are dropped first.
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
from typing import Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
RAW = "shop_raw"  # schema of the operational tables (sources)
TARGET_SCHEMAS = ["shop", "shop_ivm"]  # models and their IVM state

TABLES: Dict[str, List[Tuple[str, str]]] = {
    "customers": [
        ("customer_id", "INT"),
        ("name", "STRING"),
        ("email", "STRING"),
        ("country", "STRING"),
        ("segment", "STRING"),
        ("signup_date", "DATE"),
    ],
    "products": [
        ("product_id", "INT"),
        ("name", "STRING"),
        ("category", "STRING"),
        ("unit_price", "DECIMAL(10,2)"),
        ("active", "BOOLEAN"),
    ],
    "orders": [
        ("order_id", "INT"),
        ("customer_id", "INT"),
        ("order_date", "DATE"),
        ("status", "STRING"),
        ("channel", "STRING"),
    ],
    "order_lines": [
        ("order_id", "INT"),
        ("line_no", "INT"),
        ("product_id", "INT"),
        ("quantity", "INT"),
        ("discount", "DECIMAL(4,2)"),
    ],
}

Row = tuple
Batch = Dict[str, List[Tuple[Row, int]]]


# ------------------------------------------------------------------------------------------------ dbt
class Dbt:
    def __init__(self, profiles_dir: str = HERE):
        from dbt.cli.main import dbtRunner

        self.runner = dbtRunner()
        self.profiles_dir = profiles_dir
        self.failures: List[str] = []
        self.timings: List[Tuple[str, float, Optional[float], str]] = []  # (step, wall s, models s, detail)

    def __call__(self, step: str, *args: str) -> Optional[object]:
        argv = list(args) + ["--project-dir", HERE, "--profiles-dir", self.profiles_dir]
        print(f"\n=== {step}: dbt {' '.join(args)}", flush=True)
        started = time.monotonic()
        res = self.runner.invoke(argv)
        elapsed = time.monotonic() - started
        detail, models_secs = "", None
        if res.exception is not None:
            self.failures.append(f"{step}: dbt {' '.join(args)} raised {res.exception!r}")
        elif not res.success:
            self.failures.append(f"{step}: dbt {' '.join(args)} failed")
        result = res.result
        if args and args[0] in ("run", "build") and result is not None and hasattr(result, "results"):
            models = [r for r in result.results if r.node.resource_type == "model"]
            tests = [r for r in result.results if r.node.resource_type == "test"]
            models_secs = sum(r.execution_time for r in models)
            detail = summarize_run(models)
            if tests:
                statuses = Counter(str(r.status) for r in tests)
                detail += "; tests " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
        self.timings.append((step, elapsed, models_secs, detail))
        return result


def summarize_run(results) -> str:
    modes = Counter()
    ins = dels = 0
    for r in results:
        resp = r.adapter_response or {}
        modes[resp.get("mode", str(r.status))] += 1
        ins += int(resp.get("rows_inserted") or 0)
        dels += int(resp.get("rows_deleted") or 0)
    mode_s = " ".join(f"{m}x{n}" for m, n in sorted(modes.items()))
    return f"{mode_s}; +{ins} / -{dels} rows"


# ------------------------------------------------------------------------------------------------ spark
_THRIFT = None  # set by --host: the shop tables are written through the Spark Thrift Server


def spark():
    if _THRIFT is not None:
        return _THRIFT
    from pyspark.sql import SparkSession

    return SparkSession.builder.getOrCreate()


class ThriftSql:
    """``sql(q)`` through a Spark Thrift Server (PyHive, the client of dbt-spark's thrift method)."""

    def __init__(self, host: str, port: int):
        from pyhive import hive

        self.conn = hive.connect(host=host, port=port, username="shop_demo")

    def sql(self, q: str) -> None:
        cur = self.conn.cursor()
        try:
            cur.execute(q)  # synchronous: errors are raised here
        finally:
            cur.close()


def thrift_profiles_dir(work_dir: str, host: str, port: int) -> str:
    """A profiles.yml for the shop project with ``method: thrift`` at host:port."""
    os.makedirs(work_dir, exist_ok=True)
    with open(os.path.join(work_dir, "profiles.yml"), "w") as f:
        f.write(
            "shop:\n  target: thrift\n  outputs:\n    thrift:\n      type: spark_ivm\n      method: thrift\n"
            f"      host: {host}\n      port: {int(port)}\n      schema: shop\n      threads: 1\n"
            # the server long-polls a running statement (5 s); dbt-spark's default sleeps 5 s more
            "      poll_interval: 0\n"
        )
    return work_dir


def literal(v, t: str) -> str:
    if v is None:
        return f"CAST(NULL AS {t})"
    if t == "STRING":
        return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"
    if t == "DATE":
        return f"DATE'{v.isoformat()}'"
    if t == "BOOLEAN":
        return "TRUE" if v else "FALSE"
    if t.startswith("DECIMAL"):
        return f"CAST('{v}' AS {t})"
    if t == "DOUBLE":
        return f"CAST({float(v)!r} AS DOUBLE)"
    return str(int(v))


class Shop:
    """Raw tables (``tables``: name -> columns) in ``schema``, their change tables, and a python mirror of
    their contents; ``sql`` runs a statement (default: this demo's Spark, or its Thrift Server)."""

    def __init__(self, schema: str = RAW, tables: Optional[Dict[str, List[Tuple[str, str]]]] = None,
                 sql: Optional[Callable[[str], object]] = None):
        self.schema = schema
        self.tables = tables if tables is not None else TABLES
        self._sql = sql
        self.rows: Dict[str, Counter] = {t: Counter() for t in self.tables}
        self.seq = 0

    def sql(self, q: str) -> None:
        (self._sql or spark().sql)(q)

    def create(self):
        self.sql(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
        for t, cols in self.tables.items():
            ddl = ", ".join(f"{c} {ty}" for c, ty in cols)
            # a manifest per commit, merged every 10 rather than Iceberg's 100: a refresh plans over
            # all of them (docs/inputs.md, change tables)
            self.sql(f"CREATE TABLE {self.schema}.{t}_changes ({ddl}, _ivm_weight BIGINT, _ivm_seq BIGINT) USING iceberg "
                     "TBLPROPERTIES ('commit.manifest.min-count-to-merge' = '10')")
            self.sql(f"CREATE TABLE {self.schema}.{t} ({ddl}) USING iceberg")

    def commit(self, batch: Batch) -> int:
        """One transaction: all change rows get the next _ivm_seq; changed base tables are rebuilt from their
        change table. An empty batch writes nothing."""
        batch = {t: ch for t, ch in batch.items() if ch}
        if not batch:
            return 0
        self.seq += 1
        n = 0
        for t, changes in batch.items():
            types = [ty for _, ty in self.tables[t]]
            for row, w in changes:
                self.rows[t][row] += w
                assert self.rows[t][row] >= 0, (t, row)
            self.rows[t] += Counter()
            values = ",\n".join(
                "(" + ", ".join([literal(v, ty) for v, ty in zip(row, types)] + [str(w), str(self.seq)]) + ")"
                for row, w in changes
            )
            self.sql(f"INSERT INTO {self.schema}.{t}_changes VALUES {values}")
            cols = ", ".join(c for c, _ in self.tables[t])
            self.sql(
                f"INSERT OVERWRITE {self.schema}.{t} SELECT {cols} FROM (SELECT {cols}, SUM(_ivm_weight) AS w "
                f"FROM {self.schema}.{t}_changes GROUP BY {cols} HAVING SUM(_ivm_weight) > 0"
                f") LATERAL VIEW explode(sequence(1, w)) x AS i"
            )
            n += len(changes)
        return n

    def live(self, table: str) -> List[Row]:
        return sorted(self.rows[table].elements(), key=repr)


# ------------------------------------------------------------------------------------------------ data
FIRST = ["Ada", "Ben", "Chloé", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon", "Kim", "Lea", "Max", "Noa"]
LAST = ["Smith", "O'Neil", "Ng", "Kowalski", "Rossi", "Dubois", "Silva", "Berg"]
COUNTRIES = ["DE", "FR", "NL", "IT", "ES", "PL", "SE", "US"]
CATEGORIES = ["books", "garden", "kitchen", "office", "toys"]
D0 = dt.date(2024, 1, 1)


def initial_data(rng: random.Random, scale: int) -> Batch:
    customers = []
    for cid in range(1, 60 * scale + 1):
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        email = None if rng.random() < 0.1 else f"user{cid}@example.com"
        segment = "vip" if rng.random() < 0.15 else "regular"
        customers.append((cid, name, email, rng.choice(COUNTRIES), segment, D0 - dt.timedelta(days=rng.randint(0, 700))))
    products = []
    for pid in range(1, 15 * scale + 1):
        price = decimal.Decimal(rng.randint(199, 9999)) / 100
        products.append((pid, f"product-{pid}", rng.choice(CATEGORIES), price, rng.random() > 0.1))
    orders, lines = [], []
    for oid in range(1, 120 * scale + 1):
        cust = None if rng.random() < 0.05 else rng.randint(1, 60 * scale)
        status = rng.choices(["open", "paid", "shipped", "cancelled"], [3, 3, 5, 1])[0]
        orders.append((oid, cust, D0 + dt.timedelta(days=rng.randint(0, 180)), status, rng.choice(["web", "app", "store"])))
        for ln in range(1, rng.randint(1, 5) + 1):
            lines.append(new_line(rng, oid, ln, 15 * scale))
    return {
        "customers": [(r, 1) for r in customers],
        "products": [(r, 1) for r in products],
        "orders": [(r, 1) for r in orders],
        "order_lines": [(r, 1) for r in lines],
    }


def new_line(rng, oid, ln, n_products):
    return (oid, ln, rng.randint(1, n_products), rng.randint(1, 6), decimal.Decimal(rng.choice([0, 0, 0, 5, 10, 30])) / 100)


def replace(row: Row, table: str, **changes) -> Row:
    names = [c for c, _ in TABLES[table]]
    r = list(row)
    for k, v in changes.items():
        r[names.index(k)] = v
    return tuple(r)


def batch_new_orders_and_updates(shop: Shop, rng: random.Random) -> Batch:
    """New orders with lines, cancellations, deleted lines, customer and price updates."""
    b: Batch = {t: [] for t in TABLES}
    n_products = len(shop.rows["products"])
    n_customers = len(shop.rows["customers"])
    next_oid = max(r[0] for r in shop.rows["orders"]) + 1
    for oid in range(next_oid, next_oid + 5):
        b["orders"].append(((oid, rng.randint(1, n_customers), D0 + dt.timedelta(days=rng.randint(170, 185)), "open", "web"), 1))
        for ln in range(1, rng.randint(1, 4) + 1):
            b["order_lines"].append((new_line(rng, oid, ln, n_products), 1))
    for o in rng.sample([r for r in shop.live("orders") if r[3] in ("open", "paid")], 3):  # cancellations
        b["orders"] += [(o, -1), (replace(o, "orders", status="cancelled"), 1)]
    for line in rng.sample(shop.live("order_lines"), 4):  # removed lines
        b["order_lines"].append((line, -1))
    for c in rng.sample([r for r in shop.live("customers") if r[4] == "regular"], 2):  # upgraded to vip
        b["customers"] += [(c, -1), (replace(c, "customers", segment="vip"), 1)]
    p = rng.choice(shop.live("products"))  # price change
    b["products"] += [(p, -1), (replace(p, "products", unit_price=p[3] + decimal.Decimal("1.50")), 1)]
    return b


def batch_deletes(shop: Shop, rng: random.Random) -> Batch:
    """Orders deleted together with their lines, a customer's e-mail fixed, a new customer with an order."""
    b: Batch = {t: [] for t in TABLES}
    for o in rng.sample(shop.live("orders"), 3):
        b["orders"].append((o, -1))
        b["order_lines"] += [(line, -1) for line in shop.live("order_lines") if line[0] == o[0]]
    for c in rng.sample(shop.live("customers"), 2):
        b["customers"] += [(c, -1), (replace(c, "customers", email=f"fixed{c[0]}@example.org"), 1)]
    cid = max(r[0] for r in shop.rows["customers"]) + 1
    oid = max(r[0] for r in shop.rows["orders"]) + 1
    b["customers"].append(((cid, "Zoë D'Arc", None, "FR", "vip", dt.date(2024, 6, 30)), 1))
    b["orders"].append(((oid, cid, dt.date(2024, 6, 30), "paid", "app"), 1))
    b["order_lines"] += [((oid, 1, 1, 2, decimal.Decimal("0.00")), 1), ((oid, 2, 2, 1, decimal.Decimal("0.10")), 1)]
    return b


def batch_key_updates(shop: Shop, rng: random.Random) -> Batch:
    """Updates of join keys: lines moved to another product, an order re-assigned to another customer,
    a customer moving country, an order shipped."""
    b: Batch = {t: [] for t in TABLES}
    n_products = len(shop.rows["products"])
    for line in rng.sample(shop.live("order_lines"), 3):
        b["order_lines"] += [(line, -1), (replace(line, "order_lines", product_id=line[2] % n_products + 1), 1)]
    o1, o2 = rng.sample([r for r in shop.live("orders") if r[1] is not None], 2)
    b["orders"] += [(o1, -1), (replace(o1, "orders", customer_id=o2[1]), 1)]
    if o2[3] != "shipped":
        b["orders"] += [(o2, -1), (replace(o2, "orders", status="shipped"), 1)]
    c = rng.choice(shop.live("customers"))
    b["customers"] += [(c, -1), (replace(c, "customers", country="SE" if c[3] != "SE" else "DE"), 1)]
    return b


# ------------------------------------------------------------------------------------------------ main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=3, help="data size (rows ~ 60/15/120/360 per table per unit)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--host", help="run through the Spark Thrift Server at this host (method: thrift)")
    ap.add_argument("--port", type=int, default=10000, help="the Spark Thrift Server's port (with --host)")
    ap.add_argument("--work-dir", help="with --host: where profiles.yml, target/, logs/ go (default: a new temp dir)")
    ap.add_argument("--batches", type=int, default=4, help="how many of the four change batches to apply (in order)")
    args = ap.parse_args(argv)

    global _THRIFT
    if args.host:
        import tempfile

        work_dir = os.path.abspath(args.work_dir or tempfile.mkdtemp(prefix="shop_demo_"))
        profiles_dir = thrift_profiles_dir(work_dir, args.host, args.port)
        os.environ["DBT_TARGET_PATH"] = os.path.join(work_dir, "target")
        os.environ["DBT_LOG_PATH"] = os.path.join(work_dir, "logs")
        print(f"through the Spark Thrift Server {args.host}:{args.port}; profiles.yml, target/, logs/ in {work_dir}")
    else:
        profiles_dir = HERE
        session_dir = os.path.join(HERE, ".spark_ivm")
        shutil.rmtree(session_dir, ignore_errors=True)  # clean state: warehouse + metastore of this project
        for d in ("target", "logs"):
            shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)
    os.chdir(HERE)

    dbt = Dbt(profiles_dir)
    t_total = time.monotonic()
    # `dbt debug` opens a connection: this starts the embedded SparkSession exactly as the profile configures it.
    dbt("start Spark (dbt debug)", "debug")
    if dbt.failures:
        return report(dbt, t_total)
    if args.host:
        _THRIFT = ThriftSql(args.host, args.port)
    s = spark()
    if not args.host:
        s.sparkContext.setLogLevel("ERROR")  # keep the demo's output to dbt's log lines
    for schema in [RAW] + TARGET_SCHEMAS:
        s.sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    rng = random.Random(args.seed)
    shop = Shop()
    started = time.monotonic()
    shop.create()
    n = shop.commit(initial_data(rng, args.scale))
    sizes = ", ".join(f"{t} {sum(c.values())}" for t, c in shop.rows.items())
    dbt.timings.append(("load raw tables (seq 1)", time.monotonic() - started, None, f"{n} change rows: {sizes}"))

    dbt("first build", "build")

    batches = [
        ("new orders, cancellations, updates", batch_new_orders_and_updates),
        ("empty batch (no-op run)", None),
        ("deletes of orders with their lines", batch_deletes),
        ("join-key updates", batch_key_updates),
    ]
    for label, make in batches[:args.batches]:
        started = time.monotonic()
        n = shop.commit(make(shop, rng)) if make else 0
        dbt.timings.append((f"commit: {label}", time.monotonic() - started, None, f"{n} change rows, seq {shop.seq}"))
        dbt(f"build after {label}", "build")

    dbt("full refresh", "build", "--full-refresh")
    return report(dbt, t_total)


def report(dbt: Dbt, t_total: float) -> int:
    """Every step's wall time; for each dbt build, its models' execution time (the materializations, tests
    not included) and that time against the full refresh's."""
    full = next((m for step, _, m, _ in dbt.timings if step == "full refresh"), None)
    where = "through the Spark Thrift Server" if _THRIFT is not None else "one SparkSession"
    print(f"\n\nincremental_ivm demo — timings (one process, {where})")
    print(f"{'step':<46} {'wall s':>7} {'models s':>9} {'/full refresh':>14}  detail")
    print("-" * 120)
    for step, secs, models_secs, detail in dbt.timings:
        m = f"{models_secs:.1f}" if models_secs is not None else ""
        ratio = f"{models_secs / full:.2f}x" if full and models_secs is not None else ""
        print(f"{step:<46} {secs:>7.1f} {m:>9} {ratio:>14}  {detail}")
    print("-" * 120)
    print(f"{'total':<46} {time.monotonic() - t_total:>8.1f}")
    if dbt.failures:
        print("\nFAILED:")
        for f in dbt.failures:
            print("  " + f)
        return 1
    print("\nall dbt commands succeeded; every model matched its full recompute (ivm_matches_full_refresh)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
