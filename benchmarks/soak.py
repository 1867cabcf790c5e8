"""Soak: many consecutive small refreshes of the same models, as a scheduler runs them.

Two copies of each model read the same inputs in the same `dbt run`: one with the adapter's
maintenance (every ``--every`` sequences; snapshot retention 0 so that expiry shows within the
soak), one with ``ivm_maintenance_every: 0`` (never). After every batch the script records each
model's execute time and, every ``--sample`` batches, the data files, snapshots and current
metadata file bytes of its tables (target, join indexes, states, log, published changes) and
checks it against its full recompute.

    .venv/bin/python benchmarks/soak.py --batches 150 --models revenue_by_segment   # 42 min on 2 cores
    .venv/bin/python benchmarks/soak.py --batches 500          # both models: ~5 h
    .venv/bin/python benchmarks/soak.py --batches 500 --models revenue_by_segment --variants maintained  # 58 min
    .venv/bin/python benchmarks/soak.py --batches 70 --models revenue_by_segment --variants maintained \
        --merge-manifests 10      # change tables merging their manifests every 10 commits

Writes ``results.json`` and ``results.md`` (first and last 50 runs; file, snapshot and metadata
byte counts over time) to ``--out``. Nothing else may use ``benchmarks/.soak`` (its Derby metastore) meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, ".soak")
PROJECT = os.path.join(WORK, "project")

MODELS = {
    # a join + aggregate: join indexes on both inputs, an aggregate state
    "revenue_by_segment": """
select c.segment, count(*) as n, sum(o.amount) as revenue, max(o.amount) as biggest
from {{ source('shop', 'orders') }} o join {{ source('shop', 'customers') }} c on o.c_id = c.c_id
group by c.segment
""",
    # a join without aggregate: a target updated in place once it is large
    "order_details": """
select o.o_id, o.amount, c.name, c.segment
from {{ source('shop', 'orders') }} o join {{ source('shop', 'customers') }} c on o.c_id = c.c_id
where o.amount > 10
""",
}
VARIANTS = {"maintained": None, "never": 0}  # ivm_maintenance_every (None: --every)


def write_project(every: int) -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(os.path.join(PROJECT, "models"))
    with open(os.path.join(PROJECT, "dbt_project.yml"), "w") as f:
        f.write("name: soak\nversion: '1.0.0'\nconfig-version: 2\nprofile: soak\nmodel-paths: [models]\n")
    with open(os.path.join(PROJECT, "profiles.yml"), "w") as f:
        f.write("soak:\n  target: local\n  outputs:\n    local:\n      type: spark_ivm\n      method: session\n"
                "      schema: soak\n      threads: 1\n      session_dir: ../spark\n"
                "      server_side_parameters:\n        spark.ui.showConsoleProgress: 'false'\n")
    with open(os.path.join(PROJECT, "models", "sources.yml"), "w") as f:
        f.write("version: 2\nsources:\n  - name: shop\n    schema: shop\n    tables:\n"
                "      - name: orders\n        meta: {ivm: {changes: orders_changes}}\n"
                "      - name: customers\n        meta: {ivm: {changes: customers_changes}}\n")
    for name, sql in MODELS.items():
        for variant, value in VARIANTS.items():
            n = value if value is not None else every
            config = (f"{{{{ config(materialized='incremental_ivm', ivm_policy='incremental', "
                      f"ivm_maintenance_every={n}, ivm_snapshot_retention=0) }}}}")
            with open(os.path.join(PROJECT, "models", f"{name}__{variant}.sql"), "w") as f:
                f.write(config + "\n" + sql)


class Shop:
    """Change tables (and their empty base tables: the models read the changes); each batch a
    few inserts, deletes and updates."""

    def __init__(self, spark, seed: int, merge_manifests: int = 0):
        self.spark, self.rng, self.seq = spark, random.Random(seed), 0
        self.merge_manifests = merge_manifests  # the change tables' min-count-to-merge (0: Iceberg's 100)
        self.orders: dict[int, tuple] = {}
        self.customers: dict[int, tuple] = {}
        self.next_order = 1

    def create(self, n_customers: int = 2000, n_orders: int = 20000) -> None:
        s = self.spark
        s.sql("CREATE DATABASE IF NOT EXISTS shop")
        for t, cols in (("orders", "o_id BIGINT, c_id BIGINT, amount INT"),
                        ("customers", "c_id BIGINT, name STRING, segment STRING")):
            s.sql(f"CREATE TABLE shop.{t} ({cols}) USING iceberg")
            s.sql(f"CREATE TABLE shop.{t}_changes ({cols}, _ivm_weight BIGINT, _ivm_seq BIGINT) USING iceberg"
                  + (f" TBLPROPERTIES ('commit.manifest.min-count-to-merge' = '{self.merge_manifests}')"
                     if self.merge_manifests else ""))
        self.write([("customers", (c, f"c{c}", self.segment()), 1) for c in range(1, n_customers + 1)]
                   + [("orders", self.new_order(), 1) for _ in range(n_orders)])

    def segment(self) -> str:
        return self.rng.choice(["AUTO", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"])

    def new_order(self) -> tuple:
        o = (self.next_order, self.rng.randint(1, len(self.customers) or 2000), self.rng.randint(1, 100))
        self.next_order += 1
        return o

    def batch(self, size: int = 10) -> None:
        rows = []
        keys = self.rng.sample(sorted(self.orders), size)  # distinct: each deleted once
        for key in keys:
            kind, old = self.rng.random(), self.orders[key]
            if kind < 0.5:
                rows.append(("orders", self.new_order(), 1))
            elif kind < 0.8:
                rows.append(("orders", old, -1))
            else:
                rows += [("orders", old, -1), ("orders", (old[0], old[1], self.rng.randint(1, 100)), 1)]
        c = self.customers[self.rng.randint(1, len(self.customers))]
        rows += [("customers", c, -1), ("customers", (c[0], c[1], self.segment()), 1)]
        self.write(rows)

    def write(self, rows: list) -> None:
        self.seq += 1
        for table in ("orders", "customers"):
            mine = [(r, w) for t, r, w in rows if t == table]
            state = self.orders if table == "orders" else self.customers
            for r, w in mine:
                if w > 0:
                    state[r[0]] = r
                else:
                    state.pop(r[0], None)
            if not mine:
                continue
            values = ", ".join("(" + ", ".join(_lit(v) for v in r) + f", {w}, {self.seq})" for r, w in mine)
            self.spark.sql(f"INSERT INTO shop.{table}_changes VALUES {values}")


def _lit(v) -> str:
    return f"'{v}'" if isinstance(v, str) else str(v)


def table_stats(spark, table: str) -> tuple[int, int, int]:
    """The table's data files, snapshots and the bytes of its current metadata file (which lists
    every snapshot the table keeps: what each commit rewrites)."""
    files = spark.sql(f"SELECT count(*) FROM {table}.data_files").collect()[0][0]
    snaps = spark.sql(f"SELECT count(*) FROM {table}.snapshots").collect()[0][0]
    current = spark.sql(f"SELECT file FROM {table}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1").collect()
    size = os.path.getsize(current[0][0].removeprefix("file:")) if current else 0
    return int(files), int(snaps), int(size)


def model_tables(spark, name: str) -> list[str]:
    rows = spark.sql(f"SHOW TABLES IN soak_ivm LIKE '{name}__*'").collect()
    return [f"soak.{name}"] + [f"soak_ivm.{r['tableName']}" for r in rows if not r["isTemporary"]]


def full_equals(spark, name: str, sql: str) -> bool:
    """The target equals the model's SQL over the inputs as a multiset (the inputs: the change
    tables consolidated)."""
    columns = {"orders": "o_id, c_id, amount", "customers": "c_id, name, segment"}
    inputs = {t: f"(SELECT {cols} FROM (SELECT {cols}, sum(_ivm_weight) AS w FROM shop.{t}_changes "
                 f"GROUP BY {cols}) AS _z LATERAL VIEW explode(sequence(1, w)) AS _copy WHERE w > 0)"
              for t, cols in columns.items()}
    full = sql.replace("{{ source('shop', 'orders') }}", inputs["orders"] + " ").replace(
        "{{ source('shop', 'customers') }}", inputs["customers"] + " ")
    diff = spark.sql(f"(SELECT * FROM soak.{name} EXCEPT ALL ({full})) UNION ALL (({full}) EXCEPT ALL "
                     f"SELECT * FROM soak.{name})").count()
    return diff == 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=300)
    ap.add_argument("--every", type=int, default=50, help="ivm_maintenance_every of the maintained copies")
    ap.add_argument("--sample", type=int, default=25, help="count files and check results every N batches")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "soak"))
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of: " + ", ".join(MODELS))
    ap.add_argument("--merge-manifests", type=int, default=0,
                    help="the change tables' commit.manifest.min-count-to-merge (default: Iceberg's, 100)")
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help="comma-separated subset of: " + ", ".join(VARIANTS))
    args = ap.parse_args()
    for name in set(MODELS) - set(args.models.split(",")):
        del MODELS[name]
    for variant in set(VARIANTS) - set(args.variants.split(",")):
        del VARIANTS[variant]
    write_project(args.every)
    from dbt.cli.main import dbtRunner

    from dbt.adapters.spark_ivm.connections import embedded_session, iceberg_session_defaults

    spark = embedded_session(iceberg_session_defaults(os.path.join(WORK, "spark")))
    spark.sparkContext.setLogLevel("ERROR")
    shop = Shop(spark, 7, args.merge_manifests)
    shop.create()
    runner = dbtRunner()
    argv = ["run", "--project-dir", PROJECT, "--profiles-dir", PROJECT, "--quiet"]
    runs: list[dict] = []
    samples: list[dict] = []
    started = time.monotonic()
    for i in range(args.batches + 1):
        if i:
            shop.batch()
        res = runner.invoke(argv)
        if not res.success:
            raise SystemExit(f"batch {i}: dbt run failed: {res.exception!r} "
                             f"{[(r.node.name, r.message) for r in getattr(res.result, 'results', []) or []]}")
        row = {"batch": i}
        for r in res.result.results:
            execute = next(t for t in r.timing if t.name == "execute")
            row[r.node.name] = (execute.completed_at - execute.started_at).total_seconds()
            row[r.node.name + ":mode"] = (r.adapter_response or {}).get("mode")
        runs.append(row)
        if i % args.sample == 0 or i == args.batches:
            sample = {"batch": i}
            for name, sql in MODELS.items():
                for variant in VARIANTS:
                    model = f"{name}__{variant}"
                    stats = {t.split(".")[-1]: table_stats(spark, t) for t in model_tables(spark, model)}
                    sample[model] = {"files": sum(f for f, _, _ in stats.values()),
                                     "snapshots": sum(s for _, s, _ in stats.values()),
                                     "metadata_bytes": sum(b for _, _, b in stats.values()), "tables": stats,
                                     "equal": full_equals(spark, model, sql)}
                    assert sample[model]["equal"], f"{model} differs from its full recompute after batch {i}"
            samples.append(sample)
            print(f"[{time.monotonic() - started:6.0f}s] batch {i}: " + ", ".join(
                f"{m} {row[m]:.2f}s {sample[m]['files']} files {sample[m]['snapshots']} snaps "
                f"{sample[m]['metadata_bytes'] / 1024:.0f} KiB metadata"
                for m in sorted(k for k in sample if k != "batch")), flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"runs": runs, "samples": samples, "every": args.every, "batches": args.batches}, f)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(report(runs, samples, args, time.monotonic() - started))
    print(open(os.path.join(args.out, "results.md")).read())


def report(runs: list[dict], samples: list[dict], args, seconds: float) -> str:
    models = [f"{n}__{v}" for n in MODELS for v in VARIANTS]
    window = min(50, max(1, (len(runs) - 1) // 2))
    first, last = runs[1:1 + window], runs[-window:]
    lines = [f"# Soak: {args.batches} consecutive small batches (maintenance every {args.every} sequences)", "",
             f"Each batch: ~10 order inserts/deletes/updates and one customer update, then one in-process "
             f"`dbt run` of all models (2 cores, local[2]; the whole soak {seconds / 60:.0f} min). Execute time "
             f"of each refresh: median (min–max) of the first and the last {window} batches; files and "
             f"snapshots: all of the model's tables (target, indexes, state, log, published changes) at the end; "
             f"metadata: the size of their current metadata files (each lists the snapshots its table keeps). "
             f"Every model equal to its full recompute at every sample.", "",
             "| model | first runs s | last runs s | last ÷ first | data files | snapshots | metadata KiB |",
             "|---|---|---|---|---|---|---|"]
    end = samples[-1]
    for m in models:
        a, b = [r[m] for r in first], [r[m] for r in last]
        lines.append(f"| {m} | {statistics.median(a):.2f} ({min(a):.2f}–{max(a):.2f}) | "
                     f"{statistics.median(b):.2f} ({min(b):.2f}–{max(b):.2f}) | "
                     f"**{statistics.median(b) / statistics.median(a):.2f}×** | {end[m]['files']} | "
                     f"{end[m]['snapshots']} | {end[m]['metadata_bytes'] / 1024:.0f} |")
    lines += ["", "Data files / snapshots / metadata KiB over time:", "",
              "| batch | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
    for s in samples:
        cells = [f"{s[m]['files']} / {s[m]['snapshots']} / {s[m]['metadata_bytes'] / 1024:.0f}" for m in models]
        lines.append(f"| {s['batch']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
