import sys, re, time; sys.path.insert(0,'/tmp/dev')
import extract
from sess import spark
c=[sql for m,sql in extract.parts if m=='q1_agg' and sql.startswith('INSERT OVERWRITE `bench_ivm`.`q1_agg__agg0__groups`')]
q=c[-1]
tg=[sql for m,sql in extract.parts if m=='q1_agg' and sql.startswith('INSERT OVERWRITE `bench`.`q1_agg`')][-1]
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
