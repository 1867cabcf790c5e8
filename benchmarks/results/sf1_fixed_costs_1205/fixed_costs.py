"""Where a rebuild's and a join refresh's time goes, measured on the statements the adapter ran.

Run from the repository after a benchmark run that built and refreshed the per-order revenue and
Q3-like (it leaves their statements in benchmarks/project/logs/dbt.log and their tables in
benchmarks/.spark_ivm; nothing else may use that warehouse meanwhile):

    .venv/bin/python benchmarks/run.py --sf 1 --no-scale --no-merge --shape rf --batches 0.1% \
        --repeat 1 --rebuilds 1 --groups order_revenue,q3_join_agg --out /tmp/fixed_costs
    .venv/bin/python benchmarks/results/sf1_fixed_costs_1205/fixed_costs.py

Rebuild (the per-order revenue's last rebuild statements, into scratch tables), four rounds each:
  twin            CREATE OR REPLACE TABLE ... AS <the model's SQL>
  state           the state's build as logged (sorted within each write task)
  state_unsorted  the same without its SORT BY
  target          the target built from the state as logged
  copy_<props>    a plain copy of the state, with Iceberg's default and other write properties
  cached          the aggregate computed once into memory (CACHE TABLE), state and target written from it
Planning (Q3-like's last group-state rewrite, as a SELECT): parse and analysis, optimization and
physical planning, five rounds, each with a new literal so that no plan is reused; the optimizer's
rule times of the last round.

With the argument ``tiny``, after a run of 1-row changes to Q1-like instead:

    .venv/bin/python benchmarks/run.py --sf 1 --no-scale --no-merge --shape row --batches 0.1% \
        --repeat 4 --rebuilds 0 --groups q1_agg --out /tmp/q1_row
    .venv/bin/python benchmarks/results/sf1_fixed_costs_1205/fixed_costs.py tiny

its last group-state rewrite replayed into a copy of the state (six rounds): planned (EXPLAIN),
as a SELECT, as the INSERT OVERWRITE, the same with one shuffle partition; the target's rewrite
from that copy; and a 4-row table overwritten with a snapshot of itself.

With the argument ``commit`` (any warehouse: it makes its own tables): what one Iceberg commit
costs. A log entry (a model's ``__log``, its SQL 2,500 characters) appended 20 times each way,
alternating: as the adapter writes it (``INSERT INTO ... SELECT``), and through Iceberg's Java
API in this JVM with no Spark job — the same values evaluated by a local ``SELECT``, one Parquet
file written, and the append committed — timing each of those steps."""

import re
import statistics
import sys
import time
import uuid
from pathlib import Path

from dbt.adapters.spark_ivm.connections import embedded_session, iceberg_session_defaults
from ivm_core import bookkeeping as bk

ROOT = Path(__file__).resolve().parents[3]
LOG_FILE = ROOT / "benchmarks/project/logs/dbt.log"
LOG = LOG_FILE.read_text() if LOG_FILE.exists() else ""
STATEMENTS = re.findall(r"On model\.tpch_bench\.(\w+): /\*.*?\*/\n(.*?)\n\x1b\[0m", LOG, re.S)


def last(model: str, prefix: str) -> str:
    found = [sql for m, sql in STATEMENTS if m == model and sql.lstrip().startswith(prefix)]
    if not found:
        sys.exit(f"no statement of {model} starting with {prefix!r} in dbt.log: run the benchmark first (see above)")
    return found[-1]


params = iceberg_session_defaults(str(ROOT / "benchmarks/.spark_ivm"))
params["spark.driver.memory"] = "8g"
params["spark.ui.showConsoleProgress"] = "false"
spark = embedded_session(params)


def timed(sql: str) -> float:
    t = time.time()
    spark.sql(sql).collect()
    return round(time.time() - t, 2)


def rebuild() -> None:
    state = last("order_revenue", "CREATE OR REPLACE TABLE `bench_ivm`.`order_revenue__agg0__groups`")
    target = last("order_revenue", "CREATE OR REPLACE TABLE `bench`.`order_revenue`")
    state = state.replace("`bench_ivm`.`order_revenue__agg0__groups`", "`bench_ivm`.`fixed_costs_state`", 1)
    target = (target.replace("`bench`.`order_revenue`", "`bench`.`fixed_costs_target`", 1)
              .replace("`bench_ivm`.`order_revenue__agg0__groups`", "`bench_ivm`.`fixed_costs_state`"))
    head, query = state.split("\nAS\n", 1)
    sort = re.search(r"\nSORT BY [^\n]+$", query)
    assert sort, "the state's build is sorted within each write task"
    unsorted = head + "\nAS\n" + query[:sort.start()]
    twin = ("CREATE OR REPLACE TABLE `bench`.`fixed_costs_twin` USING iceberg AS\n"
            "select o.o_orderkey, o.o_custkey, o.o_orderdate, count(*) as line_count,\n"
            "    sum(l.l_extendedprice * (1 - l.l_discount)) as revenue\n"
            "from tpch.orders o join tpch.lineitem l on l.l_orderkey = o.o_orderkey\n"
            "group by o.o_orderkey, o.o_custkey, o.o_orderdate")
    copies = {
        "copy_default": "",
        "copy_snappy": "TBLPROPERTIES ('write.parquet.compression-codec' = 'snappy')",
        "copy_uncompressed": "TBLPROPERTIES ('write.parquet.compression-codec' = 'uncompressed')",
        "copy_no_metrics": "TBLPROPERTIES ('write.metadata.metrics.default' = 'none')",
        "copy_row_groups_128m": "TBLPROPERTIES ('write.parquet.row-group-size-bytes' = '134217728')",
    }
    times: dict[str, list[float]] = {k: [] for k in ("twin", "state", "state_unsorted", "target", *copies, "cached")}
    for r in range(4):
        times["twin"].append(timed(twin))
        times["state_unsorted"].append(timed(unsorted))
        times["state"].append(timed(state))
        times["target"].append(timed(target))
        for name, props in copies.items():
            times[name].append(timed(f"CREATE OR REPLACE TABLE `bench`.`fixed_costs_{name}` USING iceberg {props}\n"
                                     "AS SELECT * FROM `bench_ivm`.`fixed_costs_state`"))
        t = time.time()
        cache = f"fixed_costs_agg{r}"
        spark.sql(f"CACHE TABLE {cache} AS " + query[:sort.start()]).collect()
        spark.sql(head + f"\nAS\nSELECT * FROM {cache}{sort.group(0)}").collect()
        spark.sql(target.replace("`bench_ivm`.`fixed_costs_state`", cache)).collect()
        times["cached"].append(round(time.time() - t, 2))
        spark.sql(f"UNCACHE TABLE {cache}").collect()
    for name, values in times.items():
        print(f"rebuild  {name:22} {values}  (warm: {min(values[1:])}-{max(values[1:])} s)")


def planning() -> None:
    rewrite = last("q3_join_agg", "INSERT OVERWRITE `bench_ivm`.`q3_join_agg__agg0__groups`")
    query = rewrite[rewrite.index("\nSELECT") + 1:]
    having = "HAVING sum(_ivm_count) <> 0"
    assert having in query
    rules = spark.sparkContext._jvm.org.apache.spark.sql.catalyst.rules.RuleExecutor
    for r in range(5):
        sql = query.replace(having, f"{having} AND min(`c33`) <> -{r + 1}")  # a new text: no plan reused
        if r == 4:
            rules.resetMetrics()
        t0 = time.time()
        execution = spark.sql(sql)._jdf.queryExecution()
        execution.analyzed()
        t1 = time.time()
        execution.optimizedPlan()
        t2 = time.time()
        execution.executedPlan()
        t3 = time.time()
        print(f"planning round {r + 1}: parse+analysis {t1 - t0:.2f} s, optimization {t2 - t1:.2f} s, "
              f"physical {t3 - t2:.2f} s")
    print("\n".join(rules.dumpTimeSpent().splitlines()[:14]))


def tiny() -> None:
    rewrite = last("q1_agg", "INSERT OVERWRITE `bench_ivm`.`q1_agg__agg0__groups`")
    target = last("q1_agg", "INSERT OVERWRITE `bench`.`q1_agg`")
    pinned = re.search(r"`bench_ivm`\.`q1_agg__agg0__groups`\.snapshot_id_(\d+)", rewrite)
    assert pinned, "the rewrite reads the state as the last commit left it"
    spark.sql("CREATE OR REPLACE TABLE bench_ivm.fixed_costs_q1_state USING iceberg "
              "TBLPROPERTIES ('write.parquet.compression-codec' = 'snappy') "
              f"AS SELECT * FROM bench_ivm.q1_agg__agg0__groups VERSION AS OF {pinned.group(1)}").collect()
    spark.sql("CREATE OR REPLACE TABLE bench.fixed_costs_q1_target USING iceberg "
              "AS SELECT * FROM bench.q1_agg").collect()
    first = spark.sql("SELECT snapshot_id FROM bench_ivm.fixed_costs_q1_state.snapshots").collect()[0][0]
    # every round rewrites the copy from its first snapshot, as the run rewrote the state from the last commit's
    rewrite = (rewrite.replace(pinned.group(0), f"`bench_ivm`.`fixed_costs_q1_state` VERSION AS OF {first}")
               .replace("INSERT OVERWRITE `bench_ivm`.`q1_agg__agg0__groups`",
                        "INSERT OVERWRITE `bench_ivm`.`fixed_costs_q1_state`"))
    target = (target.replace("`bench`.`q1_agg`", "`bench`.`fixed_costs_q1_target`", 1)
              .replace("`bench_ivm`.`q1_agg__agg0__groups`", "`bench_ivm`.`fixed_costs_q1_state`"))
    target_first = spark.sql("SELECT snapshot_id FROM bench.fixed_costs_q1_target.snapshots").collect()[0][0]
    having = "HAVING sum(_ivm_count) <> 0"
    assert having in rewrite
    times: dict[str, list[float]] = {}
    for r in range(6):
        statement = rewrite.replace(having, f"{having} AND min(`c16`) <> '{r}'")  # a new text: no plan reused
        query = statement[statement.index("\nSELECT") + 1:]
        rounds = {"plan": "EXPLAIN " + query, "select": query, "insert": statement,
                  "insert_one_partition": statement,
                  "target": target.replace("WHERE _ivm_weight > 0",
                                           f"WHERE _ivm_weight > 0 AND `l_returnflag` <> '{r}'"),
                  "self_overwrite": "INSERT OVERWRITE bench.fixed_costs_q1_target SELECT * FROM "
                                    f"bench.fixed_costs_q1_target VERSION AS OF {target_first}"}
        for name, sql in rounds.items():
            if name == "insert_one_partition":
                spark.conf.set("spark.sql.shuffle.partitions", "1")
            times.setdefault(name, []).append(timed(sql))
            spark.conf.set("spark.sql.shuffle.partitions", "2")
    for name, values in times.items():
        print(f"tiny  {name:22} {values}  (warm: {min(values[1:])}-{max(values[1:])} s)")
    for name in ("bench_ivm.fixed_costs_q1_state", "bench.fixed_costs_q1_target"):
        spark.sql(f"DROP TABLE IF EXISTS {name} PURGE").collect()


def commit() -> None:
    jvm = spark._jvm
    iceberg = jvm.org.apache.iceberg
    tables = {"sql": "bench_ivm.fixed_costs_log_sql", "java": "bench_ivm.fixed_costs_log_java"}
    spark.sql("CREATE DATABASE IF NOT EXISTS bench_ivm").collect()
    for name in tables.values():
        spark.sql(f"DROP TABLE IF EXISTS {name} PURGE").collect()
        spark.sql(bk.create_log(name)).collect()
    model_sql = "x" * 2500
    types = [column.split() for column in bk.LOG_COLUMNS.split(", ")]

    def values(seq: int) -> str:  # typed as the log's columns: the Java path converts them as they are
        given = [str(seq), "'committed'", "'incremental'", "NULL", "'fingerprint'", "'{\"tpch.lineitem\": 5}'",
                 "CAST(123 AS BIGINT)", "1", "1", "'[]'", f"'{model_sql}'",
                 "to_json(map_from_arrays(array('bench.q1_agg'), array(CAST(5 AS BIGINT))))",
                 "current_timestamp()", "'{}'", "0"]
        return ", ".join(f"CAST({v} AS {t})" for v, (_, t) in zip(given, types))

    times: dict[str, list[float]] = {k: [] for k in ("sql", "java", "java: load", "java: select",
                                                     "java: write", "java: commit")}
    for seq in range(20):
        times["sql"].append(timed(f"INSERT INTO {tables['sql']} SELECT {values(seq)}"))
        t0 = time.time()
        table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, tables["java"])
        t1 = time.time()
        row = spark._jsparkSession.sql(f"SELECT * FROM VALUES ({values(seq)})").collectAsList().get(0)
        record = jvm.org.apache.iceberg.spark.SparkValueConverter.convert(table.schema(), row)
        micros = record.getField("logged_at")  # Spark's value; Iceberg's generic writer takes an OffsetDateTime
        record.setField("logged_at", jvm.org.apache.iceberg.util.DateTimeUtil.timestamptzFromMicros(micros))
        t2 = time.time()
        path = table.locationProvider().newDataLocation(f"fixed-costs-{uuid.uuid4()}.parquet")
        parquet = iceberg.FileFormat.PARQUET
        appender = (iceberg.data.GenericAppenderFactory(table.schema()).setAll(table.properties())
                    .newAppender(table.io().newOutputFile(path), parquet))
        appender.add(record)
        appender.close()
        data_file = (iceberg.DataFiles.builder(table.spec()).withPath(path).withFormat(parquet)
                     .withFileSizeInBytes(appender.length()).withMetrics(appender.metrics()).build())
        t3 = time.time()
        table.newAppend().appendFile(data_file).commit()
        t4 = time.time()
        for name, seconds in (("java", t4 - t0), ("java: load", t1 - t0), ("java: select", t2 - t1),
                              ("java: write", t3 - t2), ("java: commit", t4 - t3)):
            times[name].append(round(seconds, 3))
    same = [spark.table(t).drop("logged_at").orderBy("seq").collect() for t in tables.values()]
    assert same[0] == same[1] and len(same[0]) == 20, "both ways wrote the same entries"
    for name, values_ in times.items():
        warm = sorted(values_[3:])
        print(f"commit  {name:14} warm (rounds 4-20): median {statistics.median(warm):.3f} s, "
              f"{warm[0]:.3f}-{warm[-1]:.3f} s")
    for name in tables.values():
        spark.sql(f"DROP TABLE IF EXISTS {name} PURGE").collect()


if __name__ == "__main__":
    if sys.argv[1:] == ["tiny"]:
        tiny()
        sys.exit()
    if sys.argv[1:] == ["commit"]:
        commit()
        sys.exit()
    rebuild()
    planning()
    for name in ("bench_ivm.fixed_costs_state", "bench.fixed_costs_target", "bench.fixed_costs_twin",
                 *(f"bench.fixed_costs_copy_{p}" for p in ("default", "snappy", "uncompressed", "no_metrics",
                                                            "row_groups_128m"))):
        spark.sql(f"DROP TABLE IF EXISTS {name} PURGE").collect()
