"""Same session, alternating: the reads a two-pass state update made of a 15 M-row group state
before (the publication's all-column read of the touched groups + the second pass's key-only
semi join) against after (one staged slice of the touched groups, then both read it)."""
import time, sys
from pyspark.sql import SparkSession
W = "benchmarks/.spark_ivm"  # the benchmark's warehouse (run from the repository root)
spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "8g")
         .config("spark.sql.catalogImplementation", "hive")
         .config("spark.hadoop.javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={W}/metastore_db;create=true")
         .config("spark.sql.catalog.spark_catalog", "org.apache.iceberg.spark.SparkSessionCatalog")
         .config("spark.sql.catalog.spark_catalog.type", "hive")
         .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
         .config("spark.sql.legacy.storeAnalyzedPlanForView", "true").config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "2").config("spark.sql.adaptive.enabled", "false")
         .config("spark.sql.warehouse.dir", f"{W}/warehouse")
         .config("spark.jars", sys.argv[1]).getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
state = "bench_ivm.order_revenue__agg0__groups"
cols = [f.name for f in spark.table(state).schema.fields]
print(cols, spark.table(state).count())
keys = [c for c in cols if not c.startswith("_ivm")][:3]
k = ", ".join(keys)
on = " AND ".join(f"s.{c} <=> t.{c}" for c in keys)
spark.sql(f"CACHE TABLE change_keys AS SELECT {k} FROM {state} TABLESAMPLE (0.15 PERCENT)")
print("keys", spark.table("change_keys").count())
def t(sql):
    t0 = time.time(); spark.sql(sql).collect(); return time.time() - t0
for r in range(3):
    pub = t(f"SELECT sum(hash(*)) FROM (SELECT /*+ BROADCAST(t) */ s.* FROM {state} s LEFT SEMI JOIN change_keys t ON {on})")
    ins = t(f"SELECT count(*) FROM (SELECT /*+ BROADCAST(t) */ {', '.join('s.'+c for c in keys)} FROM {state} s LEFT SEMI JOIN change_keys t ON {on})")
    sl = t(f"CACHE TABLE slice AS SELECT /*+ BROADCAST(t) */ s.* FROM {state} s LEFT SEMI JOIN change_keys t ON {on}")
    pub2 = t(f"SELECT sum(hash(*)) FROM (SELECT s.* FROM slice s LEFT SEMI JOIN change_keys t ON {on})")
    ins2 = t(f"SELECT count(*) FROM (SELECT {', '.join('s.'+c for c in keys)} FROM slice s LEFT SEMI JOIN change_keys t ON {on})")
    spark.sql("DROP VIEW slice")
    print(f"round {r}: before pub-read {pub:.2f} + second-pass read {ins:.2f} = {pub+ins:.2f}; "
          f"after slice {sl:.2f} + {pub2:.2f} + {ins2:.2f} = {sl+pub2+ins2:.2f}", flush=True)
