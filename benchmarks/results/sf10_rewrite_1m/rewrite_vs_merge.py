"""Rewrite vs MERGE of a large set target (README, Performance): a table of N groups (5 columns) taking a 300-row
change, three runs each. Run from the repository: .venv/bin/python benchmarks/results/sf10_rewrite_1m/rewrite_vs_merge.py 114000 1000000 3000000"""
import sys, time
from dbt.adapters.spark_ivm.connections import embedded_session, iceberg_session_defaults
params = iceberg_session_defaults("/tmp/micro/session")
params["spark.sql.shuffle.partitions"] = "2"
params["spark.driver.memory"] = "8g"
params["spark.sql.adaptive.enabled"] = "false"
spark = embedded_session(params)
q = lambda s: spark.sql(s).collect()
for n in [int(x) for x in sys.argv[1:]]:
    q("CREATE DATABASE IF NOT EXISTS m")
    q("DROP TABLE IF EXISTS m.t PURGE"); q("DROP TABLE IF EXISTS m.ch PURGE")
    q(f"""CREATE TABLE m.t USING iceberg TBLPROPERTIES ('write.delete.mode'='merge-on-read','write.update.mode'='merge-on-read','write.merge.mode'='merge-on-read')
        AS SELECT id AS k, date_add(DATE'1995-01-01', CAST(id % 1000 AS INT)) AS d, CAST(id % 5 AS INT) AS p,
           CAST(id * 1.5 AS DECIMAL(18,2)) AS revenue, id % 7 AS n FROM range({n}) ORDER BY id""")
    q("""CREATE TABLE m.ch USING iceberg AS SELECT k, d, p, revenue, n, CAST(-1 AS BIGINT) AS _ivm_weight, CAST(1 AS BIGINT) AS _ivm_seq
         FROM m.t WHERE k < 100 UNION ALL SELECT k, d, p, revenue + 1, n + 1, 1, 1 FROM m.t WHERE k < 100
         UNION ALL SELECT k + %d, d, p, revenue, n, 1, 1 FROM m.t WHERE k < 100""" % n)
    for rep in range(3):
        snap = q("SELECT snapshot_id FROM m.t.refs WHERE name='main'")[0][0]
        t0 = time.time()
        q("""INSERT OVERWRITE m.t SELECT k, d, p, revenue, n FROM (
               SELECT k, d, p, revenue, n, sum(w) AS w FROM (SELECT *, 1 AS w FROM m.t VERSION AS OF %d UNION ALL SELECT k, d, p, revenue, n, _ivm_weight FROM m.ch WHERE _ivm_seq = 1)
               GROUP BY k, d, p, revenue, n HAVING sum(w) <> 0) LATERAL VIEW explode(sequence(1, w)) a AS c""" % snap)
        t1 = time.time()
        q(f"CALL spark_catalog.system.rollback_to_snapshot('m.t', {snap})")
        t2 = time.time()
        q("""MERGE INTO m.t AS t USING (SELECT k, d, p, revenue, n, _ivm_weight FROM m.ch WHERE _ivm_seq = 1) AS c
             ON t.k <=> c.k AND t.d <=> c.d AND t.p <=> c.p AND t.revenue <=> c.revenue AND t.n <=> c.n
             WHEN MATCHED AND c._ivm_weight = -1 THEN DELETE
             WHEN NOT MATCHED AND c._ivm_weight = 1 THEN INSERT (k, d, p, revenue, n) VALUES (c.k, c.d, c.p, c.revenue, c.n)""")
        t3 = time.time()
        q(f"CALL spark_catalog.system.rollback_to_snapshot('m.t', {snap})")
        print(f"rows {n}: rewrite {t1-t0:.2f}s  merge {t3-t2:.2f}s", flush=True)
