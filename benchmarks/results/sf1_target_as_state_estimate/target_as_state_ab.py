"""What a rebuild of the per-order revenue would cost if its target were its group state: the
twin's CREATE TABLE ... AS (the target, as the twin builds it) plus one count of the rows whose
SUM argument is NULL (the groups the target row does not determine: none when it is 0), against
the adapter's state and its copy (the target), A/B in one warm session on the warehouse and
dbt.log a benchmark run left (``run.py --sf 1 ... --groups order_revenue``).

    .venv/bin/python benchmarks/results/sf1_target_as_state_estimate/target_as_state_ab.py 2>/dev/null
"""
import os
import sys

BENCH = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.dirname(BENCH))
os.chdir(os.path.join(BENCH, "project"))
import generate  # noqa: E402
from ab import logged, time_rounds  # noqa: E402

state = logged("CREATE OR REPLACE TABLE `bench_ivm`.`order_revenue__agg0__groups`")
state = state.replace("`order_revenue__agg0__groups`", "`ab_g`")
target = logged("CREATE OR REPLACE TABLE `bench`.`order_revenue`\n")
target = target.replace("`bench`.`order_revenue`", "`bench`.`ab_t`")
target = target.replace("`bench_ivm`.`order_revenue__agg0__groups`", "`bench_ivm`.`ab_g`")
twin = ("CREATE OR REPLACE TABLE bench.ab_twin USING iceberg AS SELECT o.o_orderkey, o.o_custkey, o.o_orderdate, "
        "count(*) AS line_count, sum(l.l_extendedprice * (1 - l.l_discount)) AS revenue FROM tpch.orders o "
        "JOIN tpch.lineitem l ON l.l_orderkey = o.o_orderkey GROUP BY o.o_orderkey, o.o_custkey, o.o_orderdate")
nulls = ("SELECT count(*) FROM tpch.orders o JOIN tpch.lineitem l ON l.l_orderkey = o.o_orderkey "
         "WHERE l.l_extendedprice * (1 - l.l_discount) IS NULL")
nulls_one_side = "SELECT count(*) FROM tpch.lineitem l WHERE l.l_extendedprice * (1 - l.l_discount) IS NULL"
variants = {"state": state, "target from the state": target, "twin": twin,
            "NULL arguments, over the join": nulls, "NULL arguments, lineitem alone": nulls_one_side}
spark = generate.start_spark()
times = time_rounds(spark, variants, rounds=7)
print("seconds, rounds 3-7 (1-2 warm the session):")
for label, seconds in times.items():
    warm = seconds[2:]
    print(f"  {label:32} {min(warm):.2f}-{max(warm):.2f}   ({' '.join(f'{s:.2f}' for s in warm)})")
for table in ("bench_ivm.ab_g", "bench.ab_t", "bench.ab_twin"):
    spark.sql(f"DROP TABLE IF EXISTS {table}")
