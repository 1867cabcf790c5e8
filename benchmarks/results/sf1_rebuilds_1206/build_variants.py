"""chain_segments' table of states built four ways, A/B in one warm session, on the warehouse a
benchmark run left (run after ``run.py --sf 1 ... --groups chain``, whose dbt.log holds the
build statement), with the twin's CREATE TABLE ... AS in the same rounds:

* as built: the adapter's statement, taken from the log (a UNION ALL of the three states over
  common table expressions that Spark inlines, so each reference computes its own);
* shared CTEs: the same statement with the join's CTE and the COUNT(DISTINCT) values' CTE made
  non-deterministic (``rand(0) >= 0``, always true), which Spark 3.5 does not inline: each is
  computed once, shuffled, and read by every reference;
* fine grain: the COUNT(DISTINCT) values aggregated once per (group, value) with the group
  state's partials, and the group state summed from those rows;
* fine grain, shared: the same with that CTE not inlined.

    .venv/bin/python benchmarks/results/sf1_rebuilds_1206/build_variants.py 2>/dev/null
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.dirname(BENCH))
os.chdir(os.path.join(BENCH, "project"))
import generate  # noqa: E402
from ab import logged, time_rounds  # noqa: E402

as_built = logged("CREATE OR REPLACE TABLE `bench_ivm`.`chain_segments__agg0__states`").replace(
    "`chain_segments__agg0__states`", "`ab_states`")
head, body = as_built.split("\nAS\n", 1)
once = "WHERE rand(0) >= 0"  # true for every row; makes the CTE non-deterministic
shared = as_built.replace("  ) AS t3\n),", f"  ) AS t3\n  {once}\n),", 1).replace(
    "  HAVING sum(_ivm_weight) <> 0\n)\nSELECT", "  HAVING sum(_ivm_weight) <> 0 AND rand(0) >= 0\n)\nSELECT", 1)
assert shared.count("rand(0)") == 2, "the logged statement's shape changed"
child = body.split("_ivm_values0 AS")[0]
values0 = "_ivm_values0 AS" + body.split("_ivm_values0 AS")[1].split("_ivm_values1 AS")[0]
piece = ("CASE WHEN _ivm_weight = 1 THEN CAST(`c18` AS decimal(38,4)) WHEN _ivm_weight = -1 "
         "THEN -CAST(`c18` AS decimal(38,4)) ELSE `c18` * _ivm_weight END")
fine = head.replace("`ab_states`", "`ab_fine`") + "\nAS\n" + child + values0.rstrip().rstrip(",") + f""",
_ivm_fine AS (
  SELECT c13, c14, c22, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_weight, coalesce(sum({piece}), 0) AS s19,
         CAST(coalesce(sum(CASE WHEN c18 IS NOT NULL THEN _ivm_weight END), 0) AS BIGINT) AS n19
  FROM _ivm_child GROUP BY c13, c14, c22 {{SHARE}}
)
SELECT c13, c14, 0 AS _ivm_set, CAST(sum(_ivm_weight) AS BIGINT) AS _ivm_count,
  CAST(sum(s19) AS decimal(38,4)) AS c19_s, CAST(sum(n19) AS BIGINT) AS c19_n, CAST(0 AS BIGINT) AS c23_s,
  CAST(count(CASE WHEN c22 IS NOT NULL AND _ivm_weight > 0 THEN 1 END) AS BIGINT) AS c23_n,
  CAST(NULL AS BIGINT) AS _ivm_value__c20, CAST(NULL AS BIGINT) AS _ivm_value__c22, CAST(NULL AS BIGINT) AS _ivm_weight
FROM _ivm_fine GROUP BY c13, c14
UNION ALL
SELECT c13, c14, 1, NULL, NULL, NULL, NULL, NULL, _ivm_value, NULL, _ivm_weight FROM _ivm_values0
UNION ALL
SELECT c13, c14, 2, NULL, NULL, NULL, NULL, NULL, NULL, c22, _ivm_weight FROM _ivm_fine
WHERE c22 IS NOT NULL AND _ivm_weight <> 0
"""
twin = ("CREATE OR REPLACE TABLE bench.ab_twin USING iceberg AS SELECT c.c_mktsegment, "
        "year(ov.o_orderdate) AS order_year, count(*) AS n_orders, sum(ov.net_value) AS revenue, "
        "max(ov.n_lines) AS max_lines, "
        "count(DISTINCT ov.o_custkey) AS n_customers FROM bench.chain_orders_full ov "
        "JOIN tpch.customer c ON ov.o_custkey = c.c_custkey GROUP BY c.c_mktsegment, year(ov.o_orderdate)")
variants = {
    "as built": as_built,
    "shared CTEs": shared,
    "fine grain": fine.replace("{SHARE}", ""),
    "fine grain, shared": fine.replace("{SHARE}", "HAVING rand(0) >= 0"),
    "the twin": twin,
}
spark = generate.start_spark()
times = time_rounds(spark, variants, rounds=7)
columns = "_ivm_set, c13, c14, _ivm_count, c19_s, c19_n, c23_s, c23_n, _ivm_value__c20, _ivm_value__c22, _ivm_weight"
a = spark.sql(f"SELECT {columns} FROM bench_ivm.ab_states")
b = spark.sql(f"SELECT {columns} FROM bench_ivm.ab_fine")
assert a.exceptAll(b).count() == 0 and b.exceptAll(a).count() == 0, "the fine-grain build differs"
print("seconds, rounds 3-7 (1-2 warm the session):")
for label, seconds in times.items():
    print(f"  {label:20s} " + " ".join(f"{s:.2f}" for s in seconds[2:]))
for table in ("bench_ivm.ab_states", "bench_ivm.ab_fine", "bench.ab_twin"):
    spark.sql(f"DROP TABLE IF EXISTS {table}")
