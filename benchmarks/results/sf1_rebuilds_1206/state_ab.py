"""The per-order revenue's rebuild statements A/B in one warm session, against its twin's, on the
warehouse and dbt.log a benchmark run left (``run.py --sf 1 ... --groups order_revenue``): its
group state as built (sorted within each write task by its first key), the target written from
it, the same state unsorted, the target from that, and the twin's CREATE TABLE ... AS.

    .venv/bin/python benchmarks/results/sf1_rebuilds_1206/state_ab.py 2>/dev/null
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

state = logged("CREATE OR REPLACE TABLE `bench_ivm`.`order_revenue__agg0__groups`")
state = state.replace("`order_revenue__agg0__groups`", "`ab_g`")
target = logged("CREATE OR REPLACE TABLE `bench`.`order_revenue`\n")
target = target.replace("`bench`.`order_revenue`", "`bench`.`ab_t`")
target = target.replace("`bench_ivm`.`order_revenue__agg0__groups`", "`bench_ivm`.`ab_g`")
unsorted = state.replace("\nSORT BY `c25`", "")
assert unsorted != state, "the logged statement's shape changed"
twin = ("CREATE OR REPLACE TABLE bench.ab_twin USING iceberg AS SELECT o.o_orderkey, o.o_custkey, o.o_orderdate, "
        "count(*) AS line_count, sum(l.l_extendedprice * (1 - l.l_discount)) AS revenue FROM tpch.orders o "
        "JOIN tpch.lineitem l ON l.l_orderkey = o.o_orderkey GROUP BY o.o_orderkey, o.o_custkey, o.o_orderdate")
variants = {"state": state, "target from it": target, "state unsorted": unsorted,
            "target from unsorted": target, "twin": twin}
spark = generate.start_spark()
times = time_rounds(spark, variants, rounds=6)
print("seconds, rounds 3-6 (1-2 warm the session):")
for label, seconds in times.items():
    print(f"{label:22s} " + " ".join(f"{s:.2f}" for s in seconds[2:]))
for table in ("bench_ivm.ab_g", "bench.ab_t", "bench.ab_twin"):
    spark.sql(f"DROP TABLE IF EXISTS {table}")
