"""chain_segments' states built three ways, A/B in one warm session, on the warehouse a benchmark
run left (run after ``run.py --sf 1 ... --groups chain``, which logs the build):

* one table of states, as the adapter builds it now: one CREATE TABLE ... AS of a UNION ALL of
  the group state and the two value states over one common table expression of the join (the
  statement taken from the run's dbt.log);
* three CREATE TABLE ... AS, as it built them before: the MAX values, the COUNT(DISTINCT)
  values, then the groups (reading the built COUNT(DISTINCT) values for their distinct counts);
* one GROUP BY ... GROUPING SETS over one read of the join (the group rows' distinct counts
  left out: a lower bound for that form).

    .venv/bin/python benchmarks/results/sf1_rebuilds_states/build_ab.py 2>/dev/null
"""
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.dirname(BENCH))
os.chdir(os.path.join(BENCH, "project"))
import generate  # noqa: E402

log = open(os.path.join(BENCH, "project", "logs", "dbt.log"), errors="replace").read()
start = log.rfind("CREATE OR REPLACE TABLE `bench_ivm`.`chain_segments__agg0__states`")
union = log[start:log.find("\x1b", start)].replace("`chain_segments__agg0__states`", "`ab_states`")
child = "WITH" + union.split("\nAS\nWITH", 1)[1].split("_ivm_values0 AS")[0].rstrip().rstrip(",") + "\n"
props = "USING iceberg TBLPROPERTIES ('write.parquet.compression-codec'='snappy')"
# the child's columns: c13 segment, c14 year, c18 net value (SUM), c20 n_lines (MAX), c22 customer (COUNT DISTINCT)
assert re.search(r"AS c13, YEAR\(c2\) AS c14, c3 AS c18, c4 AS c20, c1 AS c22", child), child
three = [
    f"CREATE OR REPLACE TABLE bench_ivm.ab_v0 {props} AS {child} SELECT c13, c14, c20 AS _ivm_value, "
    "CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight FROM _ivm_child WHERE c20 IS NOT NULL GROUP BY c13, c14, c20 "
    "HAVING sum(_ivm_weight) <> 0",
    f"CREATE OR REPLACE TABLE bench_ivm.ab_v1 {props} AS {child} SELECT c13, c14, c22 AS _ivm_value, "
    "CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight FROM _ivm_child WHERE c22 IS NOT NULL GROUP BY c13, c14, c22 "
    "HAVING sum(_ivm_weight) <> 0",
    f"CREATE OR REPLACE TABLE bench_ivm.ab_g {props} AS {child} SELECT p.*, x.n FROM (SELECT c13, c14, "
    "CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count, sum(c18 * _ivm_weight) AS s FROM _ivm_child GROUP BY c13, c14) p "
    "LEFT JOIN (SELECT c13, c14, count(*) AS n FROM bench_ivm.ab_v1 WHERE _ivm_weight > 0 GROUP BY c13, c14) x "
    "ON p.c13 <=> x.c13 AND p.c14 <=> x.c14",
]
grouping_sets = (
    f"CREATE OR REPLACE TABLE bench_ivm.ab_sets {props} PARTITIONED BY (_ivm_set) AS {child} "
    "SELECT c13, c14, CAST(grouping_id() AS INT) AS _ivm_set, c20, c22, CAST(sum(_ivm_weight) AS BIGINT) AS w, "
    "sum(c18 * _ivm_weight) AS s FROM _ivm_child GROUP BY c13, c14, c20, c22 "
    "GROUPING SETS ((c13, c14), (c13, c14, c20), (c13, c14, c22))")
spark = generate.start_spark()


def timed(label, statements):
    t, each = time.time(), []
    for s in statements:
        t0 = time.time()
        spark.sql(s).collect()
        each.append(time.time() - t0)
    print(f"{label}: {time.time() - t:.2f}s  " + " ".join(f"{p:.2f}" for p in each), flush=True)


for _ in range(6):
    timed("one table of states (UNION ALL)", [union])
    timed("three CREATE TABLE ... AS", three)
    timed("GROUPING SETS", [grouping_sets])
for table in ("ab_states", "ab_v0", "ab_v1", "ab_g", "ab_sets"):
    spark.sql(f"DROP TABLE IF EXISTS bench_ivm.{table}")
