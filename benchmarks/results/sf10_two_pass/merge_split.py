"""One MERGE with WHEN NOT MATCHED (the change is the preserved side: Spark shuffles the whole table) against two passes
(the MERGE without that clause, the change broadcast; then an INSERT of the new keys, found by a broadcast semi join of
the table as it was): a state of N rows (4 columns, merge-on-read) taking a change of M rows at random keys (a third
updates, a third deletes, a third new), three runs each, checked equal. Run from the repository:
.venv/bin/python benchmarks/results/sf10_two_pass/merge_split.py 15000000 100000"""
import sys, time
from dbt.adapters.spark_ivm.connections import embedded_session, iceberg_session_defaults
params = iceberg_session_defaults("/tmp/micro/session")
params["spark.driver.memory"] = "8g"
params["spark.sql.adaptive.enabled"] = "false"
spark = embedded_session(params)
q = lambda s: spark.sql(s).collect()
n = int(sys.argv[1]); m = int(sys.argv[2])
q("CREATE DATABASE IF NOT EXISTS m")
q("DROP TABLE IF EXISTS m.t PURGE"); q("DROP TABLE IF EXISTS m.ch PURGE")
t0=time.time()
q(f"""CREATE TABLE m.t USING iceberg TBLPROPERTIES ('write.delete.mode'='merge-on-read','write.update.mode'='merge-on-read','write.merge.mode'='merge-on-read')
    AS SELECT id*2 AS k, CAST(1 + id % 3 AS BIGINT) AS cnt, CAST(id * 1.5 AS DECIMAL(18,2)) AS s, id % 7 AS n FROM range({n}) SORT BY k""")
# change: m/3 updates (+1), m/3 deletes (to zero), m/3 new (odd keys)
q(f"""CREATE TABLE m.ch USING iceberg AS
   SELECT k, CASE WHEN h % 2 = 0 THEN CAST(1 AS BIGINT) ELSE -cnt END AS cnt, s, n FROM (
     SELECT t.*, hash(k) AS h FROM m.t AS t WHERE pmod(hash(k, 7), {n}) < {2*m//3})
   UNION ALL SELECT id*2+1 AS k, CAST(1 AS BIGINT), CAST(1 AS DECIMAL(18,2)), 1 FROM (SELECT pmod(hash(id), {n}) AS id FROM range({m//3}))""")
print("setup", time.time()-t0, q("SELECT count(*) FROM m.ch"), flush=True)
cached = "CACHE TABLE d AS SELECT k, cnt, s, n FROM m.ch"
q(cached)
def snap(): return q("SELECT snapshot_id FROM m.t.refs WHERE name='main'")[0][0]
def check(): return q("SELECT count(*), sum(cnt), sum(s) FROM m.t")[0]
for rep in range(3):
    sn = snap()
    t0 = time.time()
    q("""MERGE INTO m.t AS t USING d ON t.k = d.k
         WHEN MATCHED AND t.cnt + d.cnt = 0 THEN DELETE
         WHEN MATCHED THEN UPDATE SET t.cnt = t.cnt + d.cnt, t.s = t.s + d.s, t.n = t.n + d.n
         WHEN NOT MATCHED AND d.cnt <> 0 THEN INSERT (k, cnt, s, n) VALUES (d.k, d.cnt, d.s, d.n)""")
    t1 = time.time(); a = check()
    q(f"CALL spark_catalog.system.rollback_to_snapshot('m.t', {sn})")
    t2 = time.time()
    q("""MERGE INTO m.t AS t USING (SELECT /*+ BROADCAST(d) */ * FROM d) AS d ON t.k = d.k
         WHEN MATCHED AND t.cnt + d.cnt = 0 THEN DELETE
         WHEN MATCHED THEN UPDATE SET t.cnt = t.cnt + d.cnt, t.s = t.s + d.s, t.n = t.n + d.n""")
    t3 = time.time()
    q(f"""INSERT INTO m.t SELECT /*+ BROADCAST(h) */ d.k, d.cnt, d.s, d.n FROM d LEFT ANTI JOIN (
            SELECT /*+ BROADCAST(d2) */ t.k FROM m.t VERSION AS OF {sn} AS t LEFT SEMI JOIN d AS d2 ON t.k = d2.k) AS h ON d.k = h.k
          WHERE d.cnt <> 0""")
    t4 = time.time(); b = check()
    q(f"CALL spark_catalog.system.rollback_to_snapshot('m.t', {sn})")
    print(f"rep {rep}: merge {t1-t0:.2f}s | split: matched {t3-t2:.2f}s + insert {t4-t3:.2f}s = {t4-t2:.2f}s  equal={a==b} {a}", flush=True)
