"""Q1-like's group-state rewrite of a 1-row change, replayed: its planning, its SELECT, its INSERT
OVERWRITE (also with one shuffle partition), the target's rewrite, and a 4-row table overwritten
with a snapshot of itself. Run from the repository right after

    .venv/bin/python benchmarks/run.py --sf 1 --no-scale --no-merge --shape row --batches 0.1% \
        --repeat 4 --rebuilds 0 --groups q1_agg --out /tmp/q1_row
    .venv/bin/python benchmarks/results/sf1_fixed_costs_1205/tiny_rewrite_by_hand.py"""
import re, time
from pathlib import Path
from dbt.adapters.spark_ivm.connections import embedded_session, iceberg_session_defaults
ROOT = Path(__file__).resolve().parents[3]
parts = re.findall(r"On model\.tpch_bench\.(\w+): /\*.*?\*/\n(.*?)\n\x1b\[0m",
                   (ROOT / "benchmarks/project/logs/dbt.log").read_text(), re.S)
params = iceberg_session_defaults(str(ROOT / "benchmarks/.spark_ivm"))
params["spark.driver.memory"] = "8g"
def spark(): return embedded_session(params)
c=[sql for m,sql in parts if m=='q1_agg' and sql.startswith('INSERT OVERWRITE `bench_ivm`.`q1_agg__agg0__groups`')]
q=c[-1]
tg=[sql for m,sql in parts if m=='q1_agg' and sql.startswith('INSERT OVERWRITE `bench`.`q1_agg`')][-1]
m=re.search(r'`bench_ivm`\.`q1_agg__agg0__groups`\.snapshot_id_(\d+)', q)
s=spark()
s.sql(f"CREATE OR REPLACE TABLE bench_ivm.exp_q1s USING iceberg TBLPROPERTIES ('write.parquet.compression-codec'='snappy') AS SELECT * FROM bench_ivm.q1_agg__agg0__groups VERSION AS OF {m.group(1)}")
s.sql("CREATE OR REPLACE TABLE bench.exp_q1t USING iceberg AS SELECT * FROM bench.q1_agg")
q=q.replace(m.group(0),'`bench_ivm`.`exp_q1s` VERSION AS OF __SNAP__').replace('INSERT OVERWRITE `bench_ivm`.`q1_agg__agg0__groups`','INSERT OVERWRITE `bench_ivm`.`exp_q1s`')
tg=tg.replace('`bench`.`q1_agg`','`bench`.`exp_q1t`',1).replace('`bench_ivm`.`q1_agg__agg0__groups`','`bench_ivm`.`exp_q1s`')
snap=s.sql("SELECT snapshot_id FROM bench_ivm.exp_q1s.snapshots ORDER BY committed_at DESC LIMIT 1").collect()[0][0]
q=q.replace('__SNAP__', str(snap))
sel=q[q.index('\nSELECT')+1:]
sc=s.sparkContext
res={}
def t(name, fn):
    t0=time.time(); fn(); res.setdefault(name,[]).append(round(time.time()-t0,3))
for r in range(6):
    v=lambda x: x.replace("HAVING sum(_ivm_count) <> 0", f"HAVING sum(_ivm_count) <> 0 AND min(`c16`) <> '{r}'")
    t('plan', lambda: s.sql("EXPLAIN "+v(sel)).collect())
    t('select', lambda: s.sql(v(sel)).collect())
    t('insert', lambda: s.sql(v(q)))
    s.conf.set('spark.sql.shuffle.partitions','1')
    t('insert_1part', lambda: s.sql(v(q)))
    s.conf.set('spark.sql.shuffle.partitions','2')
    t('target', lambda: s.sql(tg.replace("WHERE _ivm_weight > 0", f"WHERE _ivm_weight > 0 AND `l_returnflag` <> '{r}'")))
    t('insert_values', lambda: s.sql("INSERT OVERWRITE bench.exp_q1t SELECT * FROM bench.exp_q1t VERSION AS OF %d" % s.sql("SELECT snapshot_id FROM bench.exp_q1t.snapshots ORDER BY committed_at LIMIT 1").collect()[0][0]))
print(res)
