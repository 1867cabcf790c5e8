"""Full scans of the IVM targets in the benchmark warehouse: does the target's row-group size
slow a user's read of the whole table? Times two whole-table aggregates and a 100-key read,
six times each (the first dropped); run after `benchmarks/run.py`, which leaves its warehouse: `.venv/bin/python <this file>`."""
import sys, time
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]  # the repository
sys.path.insert(0, str(ROOT))
from dbt.adapters.spark_ivm.connections import embedded_session, iceberg_session_defaults
params = iceberg_session_defaults(str(ROOT / "benchmarks" / ".spark_ivm"))
params["spark.driver.memory"] = "8g"; params.setdefault("spark.master", "local[2]"); params["spark.sql.shuffle.partitions"] = "2"
spark = embedded_session(params)
queries = {  # name: (the target read, the query)
    "order_revenue": ("order_revenue",
                      "SELECT count(*), sum(revenue), max(o_orderdate), sum(line_count) FROM bench.order_revenue"),
    "chain_orders": ("chain_orders", "SELECT count(*), sum(net_value), sum(n_lines) FROM bench.chain_orders"),
    "order_revenue_point": ("order_revenue",
                            "SELECT * FROM bench.order_revenue WHERE o_orderkey BETWEEN 3000000 AND 3000100"),
}
for name, (table, q) in queries.items():
    ts = []
    for _ in range(6):
        t = time.time(); spark.sql(q).collect(); ts.append(time.time() - t)
    files = spark.sql(f"SELECT count(*), sum(file_size_in_bytes) FROM bench.{table}.files").collect()[0]
    print(name, "files/bytes", tuple(files), "times", " ".join(f"{x:.2f}" for x in ts[1:]))
