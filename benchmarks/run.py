#!/usr/bin/env python
"""incremental_ivm benchmark on TPC-H: incremental refresh vs full refresh vs a hand-written dbt merge.

    .venv/bin/python benchmarks/run.py --quick     # SF 0.01 -> 0.1, a few minutes (development)
    .venv/bin/python benchmarks/run.py             # SF 0.1 -> 1 (not part of CI)

One process, one JVM: dbt is driven in-process with dbtRunner. For each of two scale factors (small,
then big) the TPC-H tables are (re)loaded into Iceberg (benchmarks/generate.py), every model is built,
and then change batches are committed one after another. After each batch every model is refreshed
by its own `dbt run --select`, timed, and checked (IVM target == its `table` twin, as a multiset).

Batches at the big SF: empty, 0.01 %, 0.1 %, 1 %, 10 % of orders and lineitem (a third deletes of
whole orders with their lines, a third updates, a third new orders with lines; plus updates of
lineitem rows) plus a small dimension change (0.01-10 % of customers change segment, one supplier
changes nation). At the small SF: empty and a batch of the *same absolute size* as the big SF's
0.1 % batch (for "refresh time at a fixed change size as the base grows").

Writes benchmarks/results/results.md, results.json and refresh_time.png.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import generate  # noqa: E402
from warehouse import SessionSql, Sql  # noqa: E402

PROJECT = generate.PROJECT
SESSION_DIR = os.path.join(HERE, ".spark_ivm")
RESULTS = os.path.join(HERE, "results")
LOG_FILE = os.path.join(PROJECT, "logs", "dbt.log")
# Iceberg's scan report, as custom metrics of each scan node (org.apache.iceberg.spark.source.metrics)
ICEBERG_RESULT_FILES = "number of result data files"
ICEBERG_FILE_BYTES = "total data file size (bytes)"
SCAN_WINDOW = 2000  # SQL executions looked at after an invocation (Spark keeps the last 1,000 by default)
SRC = generate.SCHEMA  # tpch
STAGE = "bench_stage"
CTL = "bench_ctl"
MODEL_SCHEMA = "bench"
STATE_SCHEMA = "bench_ivm"


@dataclass
class Group:
    """One benchmark model: its incremental_ivm model(s), the `table` twin(s), an optional hand-written merge."""

    name: str
    kind: str
    ivm: List[str]
    full: List[str]
    merge: Optional[str] = None
    merge_note: str = ""


GROUPS = [
    Group("q1_agg", "single-table aggregate (TPC-H Q1)", ["q1_agg"], ["q1_agg_full"], "q1_agg_merge"),
    Group("q1_rollup", "TPC-H Q1 with ROLLUP subtotals (one aggregate over the rows once per grouping set)",
          ["q1_rollup"], ["q1_rollup_full"]),
    Group("q3_join_agg", "3-way join + aggregate (TPC-H Q3)", ["q3_join_agg"], ["q3_join_agg_full"],
          "q3_join_agg_merge"),
    Group("q3_top10", "TPC-H Q3's top 10 (top-k: the 10 rows read from the aggregate's state)", ["q3_top10"],
          ["q3_top10_full"]),
    Group("q5_join_agg", "6-way join + aggregate (TPC-H Q5)", ["q5_join_agg"], ["q5_join_agg_full"], None,
          "every batch touches all 5 nation groups: a key-recompute merge is a full recompute"),
    Group("q18_large_orders", "an IN subquery over an aggregate under a 3-way join + aggregate (TPC-H Q18 "
          "without its top 100: two aggregates, one feeding the other)", ["q18_large_orders"],
          ["q18_large_orders_full"]),
    Group("order_revenue", "revenue per order (orders x lineitem, 1.5 M groups at SF 1: a state updated in place)",
          ["order_revenue"], ["order_revenue_full"]),
    Group("join_lines", "3-way join, no aggregation", ["join_lines"], ["join_lines_full"], "join_lines_merge"),
    Group("distinct_ship", "DISTINCT", ["distinct_ship"], ["distinct_ship_full"], None,
          "a MERGE cannot tell whether a deleted line was the last one behind a distinct row"),
    Group("q1_snap", "TPC-H Q1 over Iceberg snapshots (no change table)", ["q1_agg_snap"], ["q1_agg_full"]),
    Group("q3_snap", "TPC-H Q3 over Iceberg snapshots (no change table)", ["q3_join_agg_snap"],
          ["q3_join_agg_full"]),
    Group("join_lines_snap", "3-way join over Iceberg snapshots (no change table)", ["join_lines_snap"],
          ["join_lines_full"]),
    Group("latest_order", "dbt's dedup: each customer's latest order (row_number() over (partition by "
          "o_custkey …) = 1; a window over the touched customers' orders)", ["latest_order"], ["latest_order_full"]),
    Group("chain", "chain of two IVM models (join+agg -> join+agg)", ["chain_orders", "chain_segments"],
          ["chain_orders_full", "chain_segments_full"], None, "not written (two stages, deletes)"),
]


# ------------------------------------------------------------------------------------------ dbt driver
class Dbt:
    def __init__(self):
        from dbt.cli.main import dbtRunner

        self.runner = dbtRunner()
        self.spark = None
        self.sql: Optional[SessionSql] = None

    def start(self):
        self.spark = generate.start_spark(self.runner)
        self.sql = SessionSql(self.spark)
        return self.spark

    def max_job_id(self) -> int:
        ids = self.spark.sparkContext.statusTracker().getJobIdsForGroup(None)
        return max(ids) if ids else -1

    def compiled(self) -> tuple[int, int]:
        """(classes Spark's code generator has compiled in this JVM, nanoseconds spent compiling
        them): a statement whose generated code is not in Spark's code cache (100 classes by
        default) compiles it, then runs it interpreted until the JIT takes it."""
        jvm = self.spark.sparkContext._jvm
        compiles = jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()
        return int(compiles.getCount()), int(jvm.org.apache.spark.sql.catalyst.expressions.codegen.CodeGenerator
                                             .compileTime())

    def max_execution_id(self) -> int:
        """The id of the last SQL execution Spark has recorded (-1: none yet)."""
        store = self.spark._jsparkSession.sharedState().statusStore()
        n = store.executionsCount()
        last = store.executionsList(max(0, int(n) - 1), 1)
        return int(last.apply(0).executionId()) if last.size() else -1

    def scans(self, after_execution: int, first_job: int, last_job: int) -> dict:
        """What the SQL executions after ``after_execution`` scanned, by Iceberg's scan reports (the
        data files each scan planned after pruning, and their bytes: Iceberg's custom metrics on
        each scan node), and the bytes the jobs ``first_job``..``last_job`` read from files
        (Spark's input metrics, after Parquet skipped row groups)."""
        self.spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()  # the metrics of the last statements
        store = self.spark._jsparkSession.sharedState().statusStore()
        n = int(store.executionsCount())
        files = file_bytes = 0
        executions = store.executionsList(max(0, n - SCAN_WINDOW), min(n, SCAN_WINDOW))
        for k in range(executions.size()):
            e = executions.apply(k)
            if int(e.executionId()) <= after_execution:
                continue
            values = store.executionMetrics(e.executionId())
            nodes = e.metrics()
            seen = set()  # a scan's metrics are listed once per plan that shows it
            for j in range(nodes.size()):
                metric = nodes.apply(j)
                name = metric.name()
                if name not in (ICEBERG_RESULT_FILES, ICEBERG_FILE_BYTES) or metric.accumulatorId() in seen:
                    continue
                seen.add(metric.accumulatorId())
                value = values.get(metric.accumulatorId())
                if value.isEmpty():
                    continue
                number = int(str(value.get()).replace(",", ""))
                if name == ICEBERG_RESULT_FILES:
                    files += number
                else:
                    file_bytes += number
        tracker = self.spark.sparkContext.statusTracker()
        core = self.spark._jsc.sc().statusStore()
        gateway = self.spark.sparkContext._gateway
        no_quantiles = gateway.new_array(gateway.jvm.double, 0)
        no_statuses = gateway.jvm.java.util.ArrayList()
        read = 0
        for job in range(first_job + 1, last_job + 1):
            info = tracker.getJobInfo(job)
            for stage in (info.stageIds if info else []):
                attempts = core.stageData(stage, False, no_statuses, False, no_quantiles)
                if attempts.nonEmpty():
                    read += int(attempts.head().inputBytes())
        return {"files": files, "file_bytes": file_bytes, "bytes_read": read}

    def run(self, select: List[str], full_refresh: bool = False) -> dict:
        """`dbt run --select ...` in-process; returns timings, adapter responses, Spark jobs, IVM statement log."""
        argv = ["run", "--select", *select, "--project-dir", PROJECT, "--profiles-dir", PROJECT, "--quiet"]
        if full_refresh:
            argv.append("--full-refresh")
        log_start = os.path.getsize(LOG_FILE) if os.path.exists(LOG_FILE) else 0
        jobs_before = self.max_job_id()
        executions_before = self.max_execution_id()
        classes_before, compile_ns_before = self.compiled()
        started_ms = int(time.time() * 1000)
        started = time.monotonic()
        res = self.runner.invoke(argv)
        wall = time.monotonic() - started
        jobs_after = self.max_job_id()
        jobs = jobs_after - jobs_before
        classes_after, compile_ns_after = self.compiled()
        if res.exception is not None or not res.success:
            raise RuntimeError(f"dbt {' '.join(argv[:3 + len(select) - 1])} failed: {res.exception!r} "
                               f"{[(r.node.name, r.message) for r in getattr(res.result, 'results', []) or []]}")
        nodes = {}
        for r in res.result.results:
            execute = next((t for t in r.timing if t.name == "execute"), None)
            secs = (execute.completed_at - execute.started_at).total_seconds() if execute and execute.completed_at else r.execution_time
            resp = dict(r.adapter_response or {})
            nodes[r.node.name] = {"seconds": secs, "total": r.execution_time, "response": resp}
        statements = statement_log(LOG_FILE, log_start)
        scans = self.scans(executions_before, jobs_before, jobs_after)  # before this method runs any SQL
        return {"wall": wall, "jobs": jobs, "nodes": nodes, "statement_log": statements, "started_ms": started_ms,
                "classes": classes_after - classes_before, "compiling": (compile_ns_after - compile_ns_before) / 1e9,
                **scans}


def statement_log(log_file: str, offset: int) -> Dict[str, List[list]]:
    """The adapter's debug lines `[ivm <model>] statement N took X s` that dbt's ``log_file`` got
    since ``offset``, each with a label naming the statement (from the SQL dbt logged just before
    it): {model: [[label, seconds], ...]}."""
    out: Dict[str, List[list]] = {}
    if not os.path.exists(log_file):
        return out
    with open(log_file, "rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")
    last_sql = ""
    pat = re.compile(r"On model\.[^:]+: /\* .*? \*/\n(?P<sql>.*?)\n(?=\x1b\[0m|\Z)|"
                     r"\[ivm (?P<model>[^\]]+)\] statement (?P<n>\d+) took (?P<secs>[\d.]+)s", re.S)
    for m in pat.finditer(text):
        if m.group("sql") is not None:
            last_sql = m.group("sql")
        else:
            out.setdefault(m.group("model"), []).append([label_sql(last_sql), float(m.group("secs"))])
    return out


def label_sql(sql: str) -> str:
    """A short name for an IVM refresh statement."""
    flat = " ".join(sql.replace("`", "").split())
    up = flat.upper()
    verbs = (r"(INSERT INTO|INSERT OVERWRITE|MERGE INTO|CREATE OR REPLACE TABLE|CREATE TABLE IF NOT EXISTS|CREATE TABLE|"
             r"CREATE SCHEMA IF NOT EXISTS|DELETE FROM|CALL) (\S+)")
    # (an INSERT after a WITH: the second pass of an update in two, ivm_core.statements.insert_unmatched)
    m = re.match(verbs, flat, re.I) or re.match(r"WITH _ivm_src AS \(.*?\)\s+" + verbs, flat, re.I)
    if m:
        verb = {"INSERT INTO": "insert", "INSERT OVERWRITE": "rewrite", "MERGE INTO": "merge", "DELETE FROM": "delete",
                "CALL": "call"}.get(
            m.group(1).upper(), "create")
        name = m.group(2).split(".")[-1]
        return f"{verb} {name}"
    if up.startswith(("SET ", "RESET ")):  # the model's ivm_spark_conf, by statement where not embedded
        return flat.split()[0].lower() + " " + flat.split()[1].split("=")[0]
    if up.startswith("CACHE TABLE"):
        return "stage target change" if flat.split()[2].endswith("_target") else "stage aggregate change"
    if up.startswith("DROP VIEW"):
        return "drop staged view"
    if "COUNT_IF(_IVM_OLD" in up:
        return "target change counts"
    if up.startswith("SELECT CAST(COALESCE(SUM(CASE WHEN _IVM_WEIGHT > 0"):
        return "change counts"
    if up.startswith("DESCRIBE QUERY"):
        return "describe query"
    if up.startswith("SELECT SEQ, STATUS"):
        return "read log"
    if "'HIGH' AS KIND" in up or "STACK(2, 'HIGH'" in up:
        return "capture marks+snapshots"
    if "'LAST' AS WHICH" in up:
        return "read log"
    if up.startswith("SELECT OWNER, SEQ"):
        return "read lock"
    if "AS CHECK, BAD" in up:
        return "validate"
    if "'SNAPSHOT' AS KIND" in up:
        return "read snapshots+counts"
    return "select " + flat[7:40]


# ------------------------------------------------------------------------------------------ batches
@dataclass(frozen=True)
class Batch:
    """What one change batch does (counts of operations)."""

    deletes: int = 0  # orders deleted with all their lines
    updates: int = 0  # orders updated (date, status, price)
    inserts: int = 0  # new orders (copies of others, with their lines) under keys above the maximum
    lines: int = 0  # lineitem operations in all: the moved orders' lines, then updates of other lines
    customers: int = 0  # customers changing market segment
    suppliers: int = 0  # suppliers changing nation
    oldest: bool = False  # delete (and update) the lowest order keys instead of random ones

    @property
    def empty(self) -> bool:
        return not (self.deletes or self.updates or self.inserts or self.lines or self.customers or self.suppliers)


SHAPES = ("random", "rf", "append", "trickle", "row")


def plan_batch(shape: str, frac: float, counts: dict) -> Batch:
    """The batch of ``shape`` at ``frac`` of the tables in ``counts``.

    random   the worst case: a third of the order operations delete random orders with their lines, a
             third update orders, a third insert; the rest of the lineitem operations update random
             lines; ``frac`` of customers change segment and one supplier changes nation.
    rf       TPC-H's refresh functions RF1 + RF2: insert ``frac`` of orders under new keys above the
             maximum with their lines, delete as many of the oldest (lowest-key) orders with theirs.
    append   inserts only: ``frac`` of orders, new, with their lines.
    trickle  a few dimension rows: 9 customers change segment, one supplier changes nation.
    """
    n = max(3, round(frac * counts["orders"]))
    if shape == "random":
        return Batch(deletes=n // 3, updates=n // 3, inserts=n - 2 * (n // 3),
                     lines=max(3, round(frac * counts["lineitem"])),
                     customers=max(1, round(frac * counts["customer"])), suppliers=1)
    if shape == "rf":
        return Batch(deletes=n, inserts=n, oldest=True)
    if shape == "append":
        return Batch(inserts=n)
    if shape == "trickle":
        return Batch(customers=9, suppliers=1)
    if shape == "row":
        return Batch(lines=1)
    raise ValueError(f"unknown shape {shape!r}; one of {', '.join(SHAPES)}")


class Changes:
    """Commits change batches: rows into tpch.<t>_changes at the next _ivm_seq, and the same change applied to
    the base tables tpch.<t> (which the `table` twins and the hand-written models read), tagged ivm_seq_<seq>
    (the sources are `base: tagged`: a rebuild reads them there). Not timed."""

    def __init__(self, sql: Sql):
        self.warehouse = sql
        self.seq = 1
        self.types = {t: sql.columns(f"{SRC}.{t}") for t in generate.TABLES}
        sql.rows(f"CREATE SCHEMA IF NOT EXISTS {STAGE}")

    def sql(self, q: str) -> List[tuple]:
        return self.warehouse.rows(q)

    def count(self, t: str) -> int:
        return self.warehouse.scalar(f"SELECT count(*) FROM {SRC}.{t}")

    def select(self, t: str, alias: str = "", **overrides: str) -> str:
        """The column list of table t, with some columns replaced by expressions (cast to the column's type)."""
        p = f"{alias}." if alias else ""
        out = []
        for c, ty in self.types[t]:
            out.append(f"CAST({overrides[c]} AS {ty}) AS {c}" if c in overrides else f"{p}{c}")
        return ", ".join(out)

    def commit(self, batch: "Batch", seed: int) -> dict:
        """One transaction (see ``Batch``): deleted orders go with all their lines, new orders are copies
        of other orders (with their lines) under new keys above the current maximum; ``n_lines`` counts
        every lineitem operation (the deleted and new orders' lines count, the rest are updates of other
        lines). Returns the number of change rows per table."""
        if batch.empty:
            return {}
        self.seq += 1
        seq = self.seq
        n_del, n_upd, n_new = batch.deletes, batch.updates, batch.inserts
        n_lines, n_customers, n_suppliers = batch.lines, batch.customers, batch.suppliers
        S = STAGE
        # the orders deleted (_rn <= n_del) then updated: random ones, or (`oldest`) the lowest keys
        order = "o_orderkey" if batch.oldest else f"xxhash64(o_orderkey, {seed})"
        self.sql(f"""CREATE OR REPLACE TABLE {S}.o_pick USING iceberg AS
            SELECT *, row_number() OVER (ORDER BY _h, o_orderkey) AS _rn FROM (
              SELECT *, {order} AS _h FROM {SRC}.orders ORDER BY _h LIMIT {n_del + n_upd})""")
        max_key = self.warehouse.scalar(f"SELECT max(o_orderkey) FROM {SRC}.orders")
        self.sql(f"""CREATE OR REPLACE TABLE {S}.o_new USING iceberg AS
            SELECT *, o_orderkey AS _src, {max_key} + row_number() OVER (ORDER BY _h, o_orderkey) AS _key FROM (
              SELECT *, xxhash64(o_orderkey, {seed + 1}) AS _h FROM {SRC}.orders
              WHERE o_orderkey NOT IN (SELECT o_orderkey FROM {S}.o_pick) ORDER BY _h LIMIT {n_new})""")
        lines_moved = self.warehouse.scalar(f"""SELECT
              (SELECT count(*) FROM {SRC}.lineitem WHERE l_orderkey IN (SELECT o_orderkey FROM {S}.o_pick WHERE _rn <= {n_del}))
            + (SELECT count(*) FROM {SRC}.lineitem WHERE l_orderkey IN (SELECT _src FROM {S}.o_new))""")
        n_lupd = max(0, n_lines - lines_moved) if n_lines else 0
        self.sql(f"""CREATE OR REPLACE TABLE {S}.l_pick USING iceberg AS
            SELECT * FROM {SRC}.lineitem
            WHERE l_orderkey NOT IN (SELECT o_orderkey FROM {S}.o_pick WHERE _rn <= {n_del})
            ORDER BY xxhash64(l_orderkey, l_linenumber, {seed + 2}) LIMIT {n_lupd}""")
        ocols = self.select("orders")
        batches: Dict[str, str] = {} if not (n_del or n_upd or n_new or n_lines) else {
            "orders": f"""
                SELECT {ocols}, -1 AS _ivm_weight FROM {S}.o_pick
                UNION ALL
                SELECT {self.select("orders",
                    o_orderdate="date_add(o_orderdate, CASE WHEN o_orderkey % 2 = 0 THEN 30 ELSE -30 END)",
                    o_orderstatus="CASE o_orderstatus WHEN 'O' THEN 'F' WHEN 'F' THEN 'O' ELSE o_orderstatus END",
                    o_totalprice="o_totalprice + 1")}, 1 AS _ivm_weight FROM {S}.o_pick WHERE _rn > {n_del}
                UNION ALL
                SELECT {self.select("orders", o_orderkey="_key")}, 1 AS _ivm_weight FROM {S}.o_new""",
            "lineitem": f"""
                SELECT {self.select("lineitem")}, -1 AS _ivm_weight FROM {SRC}.lineitem
                WHERE l_orderkey IN (SELECT o_orderkey FROM {S}.o_pick WHERE _rn <= {n_del})
                UNION ALL
                SELECT {self.select("lineitem")}, -1 AS _ivm_weight FROM {S}.l_pick
                UNION ALL
                SELECT {self.select("lineitem",
                    l_quantity="l_quantity + 1",
                    l_discount="CASE WHEN l_discount >= 0.10 THEN 0.00 ELSE l_discount + 0.01 END",
                    l_shipdate="date_add(l_shipdate, CASE WHEN l_linenumber % 2 = 0 THEN 20 ELSE -20 END)",
                    l_shipmode="CASE WHEN l_linenumber % 3 = 0 THEN 'AIR' ELSE l_shipmode END")}, 1 AS _ivm_weight
                FROM {S}.l_pick
                UNION ALL
                SELECT {self.select("lineitem", "l", l_orderkey="n._key")}, 1 AS _ivm_weight
                FROM {SRC}.lineitem l JOIN {S}.o_new n ON l.l_orderkey = n._src""",
        }
        if n_customers:
            self.sql(f"""CREATE OR REPLACE TABLE {S}.c_pick USING iceberg AS
                SELECT * FROM {SRC}.customer ORDER BY xxhash64(c_custkey, {seed + 3}) LIMIT {n_customers}""")
            batches["customer"] = f"""
                SELECT {self.select("customer")}, -1 AS _ivm_weight FROM {S}.c_pick
                UNION ALL
                SELECT {self.select("customer",
                    c_mktsegment="CASE c_mktsegment WHEN 'BUILDING' THEN 'MACHINERY' ELSE 'BUILDING' END")}, 1
                FROM {S}.c_pick"""
        if n_suppliers:
            self.sql(f"""CREATE OR REPLACE TABLE {S}.s_pick USING iceberg AS
                SELECT * FROM {SRC}.supplier ORDER BY xxhash64(s_suppkey, {seed + 4}) LIMIT {n_suppliers}""")
            batches["supplier"] = f"""
                SELECT {self.select("supplier")}, -1 AS _ivm_weight FROM {S}.s_pick
                UNION ALL
                SELECT {self.select("supplier", s_nationkey="(s_nationkey + 1) % 25")}, 1 FROM {S}.s_pick"""
        rows = {}
        for t, q in batches.items():
            self.sql(f"CREATE OR REPLACE TABLE {S}.{t}_batch USING iceberg AS {q}")
        for t in batches:
            cols = ", ".join(c for c, _ in self.types[t])
            keys = generate.KEYS[t]
            self.sql(f"INSERT INTO {SRC}.{t}_changes SELECT {cols}, CAST(_ivm_weight AS BIGINT), "
                     f"CAST({seq} AS BIGINT) FROM {S}.{t}_batch")
            on = " AND ".join(f"b.{k} = s.{k}" for k in keys)
            self.sql(f"MERGE INTO {SRC}.{t} b USING (SELECT DISTINCT {', '.join(keys)} FROM {S}.{t}_batch "
                     f"WHERE _ivm_weight < 0) s ON {on} WHEN MATCHED THEN DELETE")
            self.sql(f"INSERT INTO {SRC}.{t} SELECT {cols} FROM {S}.{t}_batch WHERE _ivm_weight > 0")
            self.sql(f"ALTER TABLE {SRC}.{t} CREATE TAG ivm_seq_{seq}")  # the base holds the changes up to seq
            rows[t] = self.warehouse.scalar(f"SELECT count(*) FROM {S}.{t}_batch")
        return rows


# ------------------------------------------------------------------------------------------ checks
def compare(sql: Sql, a: str, b: str) -> Optional[str]:
    """None when a == b as multisets (DOUBLE/FLOAT compared at 10 significant digits), else a description."""
    fa = sql.columns(a)
    fb = sql.columns(b)
    if fa != fb:
        return f"columns differ: {fa} vs {fb}"

    def norm(name, ty):
        if ty in ("double", "float"):
            return f"format_string('%.9e', `{name}`) AS `{name}`"
        return f"`{name}`"

    sel = ", ".join(norm(n, t) for n, t in fa)
    q = (f"SELECT count(*) FROM ((SELECT {sel} FROM {a} EXCEPT ALL SELECT {sel} FROM {b}) "
         f"UNION ALL (SELECT {sel} FROM {b} EXCEPT ALL SELECT {sel} FROM {a}))")
    bad = sql.scalar(q)
    if bad:
        na = sql.scalar(f"SELECT count(*) FROM {a}")
        nb = sql.scalar(f"SELECT count(*) FROM {b}")
        return f"{bad} rows differ ({a}: {na} rows, {b}: {nb} rows)"
    return None


def table_size(sql: Sql, table: str) -> tuple:
    """(bytes, records) of the current snapshot's data and delete files."""
    r = sql.rows(f"SELECT coalesce(sum(file_size_in_bytes), 0), coalesce(sum(record_count), 0), count(*) "
                 f"FROM {table}.files")[0]
    return int(r[0]), int(r[1]), int(r[2])


def companion_tables(sql: Sql, model: str) -> List[str]:
    """The names of an IVM model's tables in the state schema (``<model>__...``), sorted."""
    return sorted(r[1] for r in sql.rows(f"SHOW TABLES IN {STATE_SCHEMA}") if r[1].startswith(model + "__"))


def owned_tables(sql: Sql, models: List[str]) -> List[str]:
    """Every Iceberg table an IVM model owns: its target and its companion tables."""
    return [f"{MODEL_SCHEMA}.{m}" for m in models] + [
        f"{STATE_SCHEMA}.{t}" for m in models for t in companion_tables(sql, m)]


def commits(sql: Sql, tables: List[str], since_ms: int, until_ms: Optional[int] = None) -> int:
    """Iceberg snapshots committed to ``tables`` at or after ``since_ms`` (and before ``until_ms``;
    epoch milliseconds)."""
    if not tables:
        return 0
    until = "" if until_ms is None else f" AND committed_at < timestamp_millis({int(until_ms)})"
    parts = [f"SELECT count_if(committed_at >= timestamp_millis({int(since_ms)}){until}) AS n FROM {t}.snapshots"
             for t in tables]
    return int(sql.scalar(f"SELECT sum(n) FROM ({' UNION ALL '.join(parts)})") or 0)


def state_sizes(sql: Sql, group: Group) -> dict:
    """State tables of a group's IVM models vs the inputs they index."""
    out = {"index": 0, "agg_state": 0, "changes": 0, "log": 0, "indexed_inputs": 0, "all_inputs": 0,
           "index_rows": 0, "indexed_rows": 0, "tables": {}}
    inputs_read = set()
    for model in group.ivm:
        for t in companion_tables(sql, model):
            b, n, files = table_size(sql, f"{STATE_SCHEMA}.{t}")
            out["tables"][t] = {"bytes": b, "rows": n, "files": files}
            part = t[len(model) + 2:]
            if part.startswith("index__"):
                out["index"] += b
                out["index_rows"] += n
                schema_table = part[len("index__"):].split("__", 1)
                if schema_table[0] == SRC:
                    ib, inn, _ = table_size(sql, f"{SRC}.{schema_table[1]}")
                    out["indexed_inputs"] += ib
                    out["indexed_rows"] += inn
            elif part == "changes":
                out["changes"] += b
            elif part == "log":
                out["log"] += b
            else:
                out["agg_state"] += b
    sources = {"q1_agg": ["lineitem"], "q1_rollup": ["lineitem"], "q3_join_agg": ["customer", "orders", "lineitem"],
               "q3_top10": ["customer", "orders", "lineitem"], "q18_large_orders": ["customer", "orders", "lineitem"],
               "order_revenue": ["orders", "lineitem"],
               "q5_join_agg": ["customer", "orders", "lineitem", "supplier", "nation", "region"],
               "join_lines": ["orders", "customer", "lineitem"], "distinct_ship": ["lineitem"],
               "chain": ["orders", "lineitem", "customer"], "q1_snap": ["lineitem"],
               "q3_snap": ["customer", "orders", "lineitem"], "join_lines_snap": ["orders", "customer", "lineitem"],
               "latest_order": ["orders"],
               }[group.name]
    for s in sources:
        inputs_read.add(s)
        out["all_inputs"] += table_size(sql, f"{SRC}.{s}")[0]
    return out


# ------------------------------------------------------------------------------------------ the run
@dataclass
class Measure:
    phase: str
    sf: float
    batch: str
    fraction: Optional[float]
    change_rows: int
    group: str
    variant: str  # ivm | full | merge
    seconds: float  # sum over the group's models of the dbt node's execute phase
    wall: float  # the whole `dbt run --select` invocation
    jobs: int
    statements: Optional[int] = None
    modes: str = ""
    rows_inserted: int = 0
    rows_deleted: int = 0
    correct: Optional[bool] = None
    mismatch: str = ""
    statement_log: Dict[str, List[float]] = field(default_factory=dict)
    shape: str = "random"
    commits: Optional[int] = None  # Iceberg snapshots the IVM models' tables gained
    files: int = 0  # data files the invocation's scans planned (Iceberg's scan reports)
    file_bytes: int = 0  # their bytes
    bytes_read: int = 0  # bytes its Spark jobs read from files (after skipped row groups)
    classes: int = 0  # classes Spark's code generator compiled in the invocation (not in its code cache)
    compiling: float = 0.0  # seconds it spent compiling them (Janino's time)


def set_watermark(sql: Sql, model: str, seq: int):
    sql.rows(f"DELETE FROM {CTL}.watermarks WHERE model = '{model}'")
    sql.rows(f"INSERT INTO {CTL}.watermarks VALUES ('{model}', {seq})")


def measure_group(dbt: Dbt, g: Group, variant: str, phase: str, sf: float, batch: str, frac, change_rows,
                  full_refresh: bool = False) -> Measure:
    """``dbt run`` (``full_refresh``: with ``--full-refresh``) of one variant of a group, timed."""
    models = {"ivm": g.ivm, "full": g.full, "merge": [g.merge]}[variant]
    r = dbt.run(models, full_refresh=full_refresh)
    secs = sum(r["nodes"][m]["seconds"] for m in models)
    m = Measure(phase, sf, batch, frac, change_rows, g.name, variant, secs, r["wall"], r["jobs"],
                files=r["files"], file_bytes=r["file_bytes"], bytes_read=r["bytes_read"], classes=r["classes"],
                compiling=r["compiling"])
    resps = [r["nodes"][x]["response"] for x in models]
    if variant == "ivm":
        m.commits = commits(dbt.sql, owned_tables(dbt.sql, models), r["started_ms"])
        m.statements = sum(int(x.get("statements") or 0) for x in resps)
        m.modes = "+".join(str(x.get("mode")) for x in resps)
        m.rows_inserted = sum(int(x.get("rows_inserted") or 0) for x in resps)
        m.rows_deleted = sum(int(x.get("rows_deleted") or 0) for x in resps)
        m.statement_log = r["statement_log"]
    return m


def verify(sql: Sql, g: Group, m: Measure, variant: str):
    pairs = list(zip(g.ivm, g.full)) if variant == "ivm" else [(g.merge, g.full[0])]
    problems = []
    for a, b in pairs:
        p = compare(sql, f"{MODEL_SCHEMA}.{a}", f"{MODEL_SCHEMA}.{b}")
        if p:
            problems.append(f"{a}: {p}")
    m.correct = not problems
    m.mismatch = "; ".join(problems)


def measure_rebuilds(dbt: Dbt, phase: str, sf: float, rounds: int, out: list, log) -> None:
    """``dbt run --full-refresh`` of each group's IVM models and of their twins, warm (after the
    batches), ``rounds`` times, the one going first alternating (the first of a pair warms the
    JVM for the second): a rebuild's cost against its twin's, as a `--full-refresh`, a changed
    SQL or a fallback pays it."""
    for g in GROUPS:
        for r in range(rounds):
            order = ("ivm", "full") if r % 2 == 0 else ("full", "ivm")
            for variant in order:
                out.append(measure_group(dbt, g, variant, phase, sf, f"rebuild #{r + 1}", None, 0, full_refresh=True))
            ivm = next(x for x in reversed(out) if x.group == g.name and x.variant == "ivm")
            full = next(x for x in reversed(out) if x.group == g.name and x.variant == "full")
            verify(dbt.sql, g, ivm, "ivm")
            log(f"   {g.name:<14} rebuild #{r + 1} ({order[0]} first): ivm {ivm.seconds:6.2f}s ({ivm.statements} "
                f"stmts)  full {full.seconds:6.2f}s  ivm/full x{ivm.seconds / max(full.seconds, 1e-9):.2f}"
                + ("" if ivm.correct else f"  MISMATCH: {ivm.mismatch}"))


def run_phase(dbt: Dbt, phase: str, sf: float, batches: list, big_counts: Optional[dict], use_merge: bool,
              out: list, sizes: dict, log, rebuilds: int = 0) -> dict:
    sql = dbt.sql
    log(f"== phase {phase}: SF {sf}")
    for schema in (MODEL_SCHEMA, STATE_SCHEMA, CTL, STAGE):
        sql.rows(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    t0 = time.monotonic()
    counts = generate.load_iceberg(sql, sf)
    log(f"   loaded {counts} in {time.monotonic() - t0:.1f}s")
    modes = ", ".join(f"'write.{op}.mode'='{BASE_WRITES}'" for op in ("delete", "update", "merge"))
    for t in generate.TABLES:
        sql.rows(f"ALTER TABLE {SRC}.{t} SET TBLPROPERTIES ({modes})")
    dbt.run(["tag:staging"])  # the staging views the *_snap models read (inlined by them)
    sql.rows(f"CREATE SCHEMA {CTL}")
    sql.rows(f"CREATE TABLE {CTL}.watermarks (model STRING, seq BIGINT) USING iceberg")
    changes = Changes(sql)
    # first build of everything (timed, for information)
    for g in GROUPS:
        for variant in ("ivm", "full", "merge"):
            if variant == "merge" and (not g.merge or not use_merge):
                continue
            m = measure_group(dbt, g, variant, phase, sf, "initial build", None, 0, full_refresh=True)
            out.append(m)
            if variant == "merge":
                set_watermark(sql, g.merge, changes.seq)
    for g in GROUPS:
        for variant in ("ivm", "merge"):
            if variant == "merge" and (not g.merge or not use_merge):
                continue
            m = next(x for x in reversed(out) if x.group == g.name and x.variant == variant)
            verify(sql, g, m, variant)
            if not m.correct:
                log(f"   MISMATCH after initial build: {g.name}/{variant}: {m.mismatch}")
    log("   initial build done")
    seed = int(sf * 1000) + 7
    for label, frac, shape in batches:
        seed += 11
        t0 = time.monotonic()
        if frac is None:  # empty batch
            rows = {}
        else:
            if big_counts is not None:  # fixed absolute size (that of `frac` at the big SF)
                base = big_counts
            else:
                base = counts
            rows = changes.commit(plan_batch(shape, frac, base), seed=seed)
        n_rows = sum(rows.values())
        log(f"-- {phase} SF {sf} batch {shape} {label}: {n_rows} change rows {rows} (seq {changes.seq}, "
            f"{time.monotonic() - t0:.1f}s to commit, not timed)")
        for g in GROUPS:
            for variant in ("ivm", "full", "merge"):
                if variant == "merge" and (not g.merge or not use_merge):
                    continue
                m = measure_group(dbt, g, variant, phase, sf, label, frac, n_rows)
                m.shape = shape
                if variant == "merge":
                    set_watermark(sql, g.merge, changes.seq)
                out.append(m)
            for variant in ("ivm", "merge"):
                if variant == "merge" and (not g.merge or not use_merge):
                    continue
                m = next(x for x in reversed(out) if x.group == g.name and x.variant == variant)
                verify(sql, g, m, variant)
            ivm = next(x for x in reversed(out) if x.group == g.name and x.variant == "ivm")
            full = next(x for x in reversed(out) if x.group == g.name and x.variant == "full")
            log(f"   {g.name:<14} ivm {ivm.seconds:7.2f}s ({ivm.modes}, {ivm.statements} stmts, {ivm.commits} commits, "
                f"{ivm.jobs} jobs, {ivm.files} files {ivm.file_bytes / 1e6:.1f} MB scanned, wall {ivm.wall:.2f}s)  "
                f"full {full.seconds:7.2f}s ({full.files} files {full.file_bytes / 1e6:.1f} MB)  "
                f"x{full.seconds / max(ivm.seconds, 1e-9):.1f}"
                + ("" if ivm.correct else f"  MISMATCH: {ivm.mismatch}"))
            if use_merge and g.merge:
                mm = next(x for x in reversed(out) if x.group == g.name and x.variant == "merge")
                if not mm.correct:
                    log(f"   {g.name:<14} hand-written merge differs from the twin: {mm.mismatch}")
    if rebuilds:
        measure_rebuilds(dbt, phase, sf, rebuilds, out, log)
    sizes[phase] = {g.name: state_sizes(sql, g) for g in GROUPS}
    return counts


def progress_log(out_dir: str):
    """A function printing a line with the time and appending it to ``out_dir``/progress.log."""
    os.makedirs(out_dir, exist_ok=True)
    progress = open(os.path.join(out_dir, "progress.log"), "w")

    def log(msg: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        progress.write(line + "\n")
        progress.flush()

    return log


# set by --base-writes
BASE_WRITES = "copy-on-write"
# set by --event-log; benchmarks/project/profiles.yml turns Spark's event log on when it is
EVENT_LOG_ENV = "TPCH_BENCH_EVENT_LOG"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="SF 0.01 -> 0.1 (development)")
    ap.add_argument("--sf", type=float, help="big scale factor (default 1, quick 0.1)")
    ap.add_argument("--no-merge", action="store_true", help="skip the hand-written merge models")
    ap.add_argument("--no-scale", action="store_true", help="skip the small-SF phase")
    ap.add_argument("--out", help="results directory (default benchmarks/results)")
    ap.add_argument("--batches", help="comma-separated subset of: empty,0.01%%,0.1%%,1%%,10%% (default all)")
    ap.add_argument("--shape", default="random",
                    help="comma-separated shapes of the change batches, in order: " + ",".join(SHAPES)
                    + " (plan_batch; trickle and row have no size)")
    ap.add_argument("--repeat", type=int, default=1, help="consecutive batches of each size (drift)")
    ap.add_argument("--rebuilds", type=int, default=2,
                    help="after the batches, rounds of warm `--full-refresh` of each IVM model and its twin "
                         "(who goes first alternates; default 2, 0: none)")
    ap.add_argument("--groups", help="comma-separated subset of: " + ",".join(g.name for g in GROUPS))
    ap.add_argument("--policy", choices=("incremental", "auto"), default=os.environ.get("IVM_POLICY", "incremental"),
                    help="the IVM models' ivm_policy (default incremental: a batch is always applied; auto: the "
                         "model rebuilds where its recorded costs expect that cheaper, and the report checks it "
                         "is never more than 1.2x slower than its twin)")
    ap.add_argument("--base-writes", choices=("copy-on-write", "merge-on-read"), default="copy-on-write",
                    help="how the batches' MERGE ... DELETE writes the TPC-H tables (what the *_snap models read "
                         "through their snapshots): rewriting the files it deletes from (Iceberg's default), or "
                         "writing delete files")
    ap.add_argument("--event-log", metavar="DIR",
                    help="write Spark's event log into DIR (read it with benchmarks/eventlog.py: per statement its "
                         "jobs, tasks, and the rows and bytes they read)")
    args = ap.parse_args(argv)
    global BASE_WRITES
    BASE_WRITES = args.base_writes
    os.environ["IVM_POLICY"] = args.policy  # dbt_project.yml reads it
    if args.event_log:  # profiles.yml reads it: the session is made with the event log on
        os.makedirs(args.event_log, exist_ok=True)
        os.environ[EVENT_LOG_ENV] = "file://" + os.path.abspath(args.event_log)
    if args.groups:
        keep = args.groups.split(",")
        GROUPS[:] = [g for g in GROUPS if g.name in keep]
    global RESULTS
    if args.out:
        RESULTS = os.path.abspath(args.out)
    big = args.sf or (0.1 if args.quick else 1.0)
    small = big / 10
    log = progress_log(RESULTS)

    # clean state: this benchmark's own warehouse + metastore, dbt target and logs
    shutil.rmtree(SESSION_DIR, ignore_errors=True)
    for d in ("target", "logs"):
        shutil.rmtree(os.path.join(PROJECT, d), ignore_errors=True)
    os.chdir(PROJECT)
    t_start = time.monotonic()
    for sf in (small, big):
        t0 = time.monotonic()
        generate.generate_parquet(sf)
        log(f"parquet SF {sf} ready ({time.monotonic() - t0:.1f}s)")
    dbt = Dbt()
    dbt.start()
    spark = dbt.spark
    conf = {k: spark.conf.get(k, None) for k in ("spark.master", "spark.driver.memory", "spark.sql.shuffle.partitions",
                                                  "spark.sql.adaptive.enabled")}
    log(f"Spark {spark.version}, {conf}")
    if args.event_log:
        log(f"Spark event log in {args.event_log}: python benchmarks/eventlog.py {args.event_log}/<file>")

    out: List[Measure] = []
    sizes: dict = {}
    shapes = args.shape.split(",")
    unknown = [x for x in shapes if x not in SHAPES]
    if unknown:
        ap.error(f"unknown shape(s) {unknown}; choose from {', '.join(SHAPES)}")
    sizes_wanted = [("empty", None), ("0.01%", 0.0001), ("0.1%", 0.001), ("1%", 0.01), ("10%", 0.1)]
    if args.batches:
        sizes_wanted = [b for b in sizes_wanted if b[0] in args.batches.split(",")]
    batches = [("empty", None, shapes[0])] if ("empty", None) in sizes_wanted else []
    for shape in shapes:
        fixed = {"trickle": "trickle", "row": "1 row"}  # shapes of one size
        shape_sizes = ([(fixed[shape], 0.0)] if shape in fixed
                       else [b for b in sizes_wanted if b[1] is not None])
        for label, frac in shape_sizes:  # --repeat: consecutive batches of each size (drift)
            batches += [(label if args.repeat == 1 else f"{label} #{i + 1}", frac, shape) for i in range(args.repeat)]
    big_counts = None
    if not args.no_scale:
        # counts of the big SF, to give the small SF a batch of the same absolute size as the big SF's 0.1 %
        big_counts = {t: 0 for t in generate.TABLES}
        import duckdb

        for t in ("orders", "lineitem", "customer"):
            path = os.path.join(generate.parquet_dir(big), t + ".parquet")
            big_counts[t] = duckdb.sql(f"SELECT count(*) FROM read_parquet('{path}')").fetchone()[0]
        run_phase(dbt, "scale", small, [("empty", None, shapes[0]), ("fixed", 0.001, shapes[0])], big_counts,
                  not args.no_merge, out, sizes, log)
    counts = run_phase(dbt, "main", big, batches, None, not args.no_merge, out, sizes, log, args.rebuilds)
    elapsed = time.monotonic() - t_start
    meta = {"shapes": shapes, "policy": args.policy, "big_sf": big, "small_sf": small, "counts": counts,
            "spark": spark.version, "conf": conf, "elapsed_s": elapsed, "machine": machine()}
    with open(os.path.join(RESULTS, "results.json"), "w") as f:
        json.dump({"meta": meta, "measures": [asdict(m) for m in out], "sizes": sizes}, f, indent=1, default=str)
    import report

    report.write(os.path.join(RESULTS, "results.json"), RESULTS)
    log(f"done in {elapsed / 60:.1f} min: {RESULTS}/results.md, refresh_time.png")
    bad = [m for m in out if m.variant == "ivm" and m.correct is False]
    return 1 if bad else 0


def machine() -> dict:
    import platform

    mem = ""
    try:
        with open("/proc/meminfo") as f:
            mem = f.readline().split(":")[1].strip()
    except OSError:
        pass
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":")[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu": cpu, "mem": mem, "python": platform.python_version(),
            "os": platform.platform()}


if __name__ == "__main__":
    sys.exit(main())
