"""Iceberg metadata reads on the embedded session: the SQL a refresh commits with (metadata tables
through Spark jobs) against the catalog API (no Spark job). Small tables; medians of 12.

    .venv/bin/python benchmarks/results/test_suite_statements/metadata_reads.py
"""
import time, tempfile, statistics
from dbt.adapters.spark_ivm.connections import iceberg_session_defaults, embedded_session
d = tempfile.mkdtemp()
spark = embedded_session(iceberg_session_defaults(d))
spark.sparkContext.setLogLevel("ERROR")
spark.sql("CREATE DATABASE IF NOT EXISTS m")
names = [f"m.t{i}" for i in range(5)]
for n in names:
    spark.sql(f"CREATE TABLE IF NOT EXISTS {n} (a INT, b STRING) USING iceberg")
    for j in range(3):
        spark.sql(f"INSERT INTO {n} VALUES ({j}, 'x')")

def timeit(label, f, k=12):
    f(); ts = []
    for _ in range(k):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    ts.sort(); print(f"{label:60s} median {statistics.median(ts):.3f}s  range {ts[1]:.3f}-{ts[-2]:.3f}")

union = "\nUNION ALL\n".join(f"SELECT '{n}' AS k, snapshot_id AS v FROM (SELECT snapshot_id FROM {n}.refs WHERE name = 'main') AS r" for n in names)
timeit("5 x refs UNION ALL (collect)", lambda: spark.sql(union).collect())
timeit("1 x refs (collect)", lambda: spark.sql(f"SELECT snapshot_id FROM {names[0]}.refs WHERE name='main'").collect())
counts = "\nUNION ALL\n".join(f"SELECT '{n}' AS k, count(*) AS v FROM {n}" for n in names)
timeit("5 x count(*) UNION ALL", lambda: spark.sql(counts).collect())
snaps = "\nUNION ALL\n".join(f"SELECT '{n}' AS k, CAST(s.summary['total-records'] AS BIGINT) AS v FROM {n}.snapshots s" for n in names)
timeit("5 x .snapshots summary UNION ALL", lambda: spark.sql(snaps).collect())
jvm = spark._jvm
def via_catalog():
    out = []
    for n in names:
        t = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, n)
        out.append((t.currentSnapshot().snapshotId(), t.currentSnapshot().summary().get("total-records")))
    return out
timeit("5 x Spark3Util.loadIcebergTable snapshot+summary", via_catalog)
timeit("INSERT literal row", lambda: spark.sql(f"INSERT INTO {names[4]} VALUES (9, 'y')"))
