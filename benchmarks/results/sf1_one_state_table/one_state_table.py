"""chain_segments' three aggregate states (MAX values, COUNT(DISTINCT) values, groups) built as
the adapter builds them today, three CREATE TABLE ... AS each reading the join of the upstream
with customer, against one table holding all three, built by one GROUP BY GROUPING SETS over one
read of the join (the rows of each state keyed by the set's grouping id), and against that
GROUPING SETS result computed once into memory (CACHE TABLE) and written as the three tables. Synthetic inputs of
SF 1's shape: 1.5 M upstream rows, 300 k customers in 5 segments, 7 years.

    .venv/bin/python benchmarks/results/sf1_one_state_table/one_state_table.py 2>/dev/null
"""
import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, ROOT)
from dbt.adapters.spark_ivm.connections import iceberg_session_defaults, embedded_session
params = iceberg_session_defaults(os.path.join(ROOT, 'benchmarks', '.spark_ivm_scratch'))
spark = embedded_session(params)
q = lambda s: spark.sql(s).collect()
q("CREATE DATABASE IF NOT EXISTS d")
q("CREATE OR REPLACE TABLE d.up (o_custkey BIGINT, o_orderdate DATE, net_value DECIMAL(38,4), n_lines BIGINT) USING iceberg")
q("INSERT INTO d.up SELECT (id * 7919) % 100000 * 3 + 1, date_add(DATE'1992-01-01', CAST(id % 2400 AS INT)), CAST(id % 100000 AS DECIMAL(38,4)) / 7, 1 + id % 7 FROM range(1500000)")
q("CREATE OR REPLACE TABLE d.cust (c_custkey BIGINT, c_mktsegment STRING) USING iceberg")
q("INSERT INTO d.cust SELECT id + 1, element_at(array('A','B','C','D','E'), CAST(id % 5 + 1 AS INT)) FROM range(300000)")
child = """(SELECT c.c_mktsegment AS g1, year(u.o_orderdate) AS g2, u.net_value AS v, u.n_lines AS m, u.o_custkey AS d
           FROM d.up u JOIN d.cust c ON u.o_custkey = c.c_custkey)"""
props = "TBLPROPERTIES ('write.parquet.compression-codec'='snappy')"
three = [
 f"CREATE OR REPLACE TABLE d.s_max USING iceberg {props} AS SELECT g1, g2, m AS _ivm_value, count(*) AS w FROM {child} x WHERE m IS NOT NULL GROUP BY g1, g2, m",
 f"CREATE OR REPLACE TABLE d.s_dist USING iceberg {props} AS SELECT g1, g2, d AS _ivm_value, count(*) AS w FROM {child} x WHERE d IS NOT NULL GROUP BY g1, g2, d",
 f"CREATE OR REPLACE TABLE d.s_groups USING iceberg {props} AS SELECT g1, g2, count(*) AS c, sum(v) AS s, count(v) AS n FROM {child} x GROUP BY g1, g2",
]
one = f"""CREATE OR REPLACE TABLE d.s_all USING iceberg {props} AS
SELECT g1, g2, grouping_id() AS _ivm_set, m, d, count(*) AS c, sum(v) AS s, count(v) AS n
FROM {child} x GROUP BY g1, g2, m, d GROUPING SETS ((g1, g2), (g1, g2, m), (g1, g2, d))"""
def timed(label, stmts):
    t = time.time()
    per = []
    for s in stmts:
        t0 = time.time(); q(s); per.append(time.time() - t0)
    print(f"{label}: {time.time()-t:.2f}s  " + " ".join(f"{p:.2f}" for p in per), flush=True)
sets = f"""SELECT g1, g2, grouping_id() AS _ivm_set, m, d, count(*) AS c, sum(v) AS s, count(v) AS n
FROM {child} x GROUP BY g1, g2, m, d GROUPING SETS ((g1, g2), (g1, g2, m), (g1, g2, d))"""
cached = [f"CACHE TABLE _ivm_sets AS {sets}",
 f"CREATE OR REPLACE TABLE d.s_max USING iceberg {props} AS SELECT g1, g2, m AS _ivm_value, c AS w FROM _ivm_sets WHERE _ivm_set = 1 AND m IS NOT NULL",
 f"CREATE OR REPLACE TABLE d.s_dist USING iceberg {props} AS SELECT g1, g2, d AS _ivm_value, c AS w FROM _ivm_sets WHERE _ivm_set = 2 AND d IS NOT NULL",
 f"CREATE OR REPLACE TABLE d.s_groups USING iceberg {props} AS SELECT g1, g2, c, s, n FROM _ivm_sets WHERE _ivm_set = 3",
 "UNCACHE TABLE _ivm_sets", "DROP VIEW _ivm_sets"]
for r in range(6):
    timed("three states", three)
    timed("one state, grouping sets", [one])
    timed("grouping sets cached, three tables", cached)
print(q("SELECT _ivm_set, count(*) FROM d.s_all GROUP BY 1 ORDER BY 1"))
print(q("SELECT count(*) FROM d.s_max"), q("SELECT count(*) FROM d.s_dist"), q("SELECT count(*) FROM d.s_groups"))
