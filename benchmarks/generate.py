#!/usr/bin/env python
"""TPC-H data for the incremental_ivm benchmark, generated offline.

    python benchmarks/generate.py --sf 0.1        # parquet (cached) + Iceberg tables in schema `tpch`

1. TPC-H is generated with DuckDB's tpch extension (the `duckdb-extension-tpch` wheel ships the
   extension file; no internet) and written to parquet under benchmarks/.data/sf<SF>/ (cached:
   a second call for the same SF reuses the files).
2. Each table used by the models (lineitem, orders, customer, supplier, nation, region) is loaded
   into an Iceberg base table `tpch.<t>` and an Iceberg change table `tpch.<t>_changes` holding
   every row once with `_ivm_weight = 1`, `_ivm_seq = 1` (the initial load is one transaction).
   The sources are declared in benchmarks/project/models/sources.yml with
   `meta: {ivm: {changes: <t>_changes}}`.

Spark is the one the dbt profile configures (benchmarks/project/profiles.yml): `dbt debug` is run
in-process first so the SparkSession (Iceberg, Derby metastore under benchmarks/.spark_ivm) is
created exactly as dbt creates it; the Iceberg tables are then written through that session.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.join(HERE, "project")
DATA = os.path.join(HERE, ".data")
SCHEMA = "tpch"
TABLES = ["region", "nation", "supplier", "customer", "orders", "lineitem"]
# The primary key of each table (unique in TPC-H): batches delete/update base rows by key.
KEYS = {
    "region": ["r_regionkey"],
    "nation": ["n_nationkey"],
    "supplier": ["s_suppkey"],
    "customer": ["c_custkey"],
    "orders": ["o_orderkey"],
    "lineitem": ["l_orderkey", "l_linenumber"],
}


def sf_tag(sf: float) -> str:
    return ("%g" % sf).replace(".", "_")


def tpch_extension() -> str:
    import duckdb_extension_tpch

    base = os.path.dirname(duckdb_extension_tpch.__file__)
    found = sorted(glob.glob(os.path.join(base, "extensions", "v*", "tpch.duckdb_extension")))
    if not found:
        raise SystemExit(f"no tpch.duckdb_extension under {base}; pip install duckdb duckdb-extension-tpch")
    return found[-1]


def parquet_dir(sf: float) -> str:
    return os.path.join(DATA, f"sf{sf_tag(sf)}")


def generate_parquet(sf: float, force: bool = False) -> str:
    """TPC-H at scale factor ``sf`` as one parquet file per table (cached)."""
    out = parquet_dir(sf)
    done = os.path.join(out, "_SUCCESS")
    if os.path.exists(done) and not force:
        return out
    import duckdb

    os.makedirs(out, exist_ok=True)
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{tpch_extension()}'")
    started = time.monotonic()
    con.execute(f"CALL dbgen(sf={sf})")
    for t in TABLES:
        con.execute(f"COPY {t} TO '{os.path.join(out, t + '.parquet')}' (FORMAT parquet)")
    con.close()
    with open(done, "w") as f:
        f.write(f"dbgen sf={sf} in {time.monotonic() - started:.1f}s\n")
    return out


def start_spark(runner=None):
    """The SparkSession exactly as the benchmark profile configures it (via an in-process `dbt debug`)."""
    from pyspark.sql import SparkSession

    if runner is None:
        from dbt.cli.main import dbtRunner

        runner = dbtRunner()
    res = runner.invoke(["debug", "--project-dir", PROJECT, "--profiles-dir", PROJECT, "--quiet"])
    if not res.success:
        raise SystemExit(f"dbt debug failed: {res.exception!r}")
    return SparkSession.builder.getOrCreate()


def load_iceberg(sql, sf: float) -> dict:
    """(Re)create tpch.<t> and tpch.<t>_changes (all rows at _ivm_seq 1, weight 1), the base tagged
    ivm_seq_1, through ``sql`` (a ``warehouse.Sql``). Returns row counts."""
    src = generate_parquet(sf)
    sql.rows(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    sql.rows(f"CREATE SCHEMA {SCHEMA}")
    counts = {}
    for t in TABLES:
        path = os.path.join(src, t + ".parquet")
        sql.rows(f"CREATE TABLE {SCHEMA}.{t} USING iceberg AS SELECT * FROM parquet.`{path}`")
        sql.rows(
            f"CREATE TABLE {SCHEMA}.{t}_changes USING iceberg AS "
            f"SELECT *, CAST(1 AS BIGINT) AS _ivm_weight, CAST(1 AS BIGINT) AS _ivm_seq FROM {SCHEMA}.{t}"
        )
        sql.rows(f"ALTER TABLE {SCHEMA}.{t} CREATE TAG ivm_seq_1")  # the base holds the changes up to seq 1
        counts[t] = sql.scalar(f"SELECT count(*) FROM {SCHEMA}.{t}")
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sf", type=float, default=0.1, help="TPC-H scale factor (default 0.1)")
    ap.add_argument("--parquet-only", action="store_true", help="only generate the parquet files")
    ap.add_argument("--force", action="store_true", help="regenerate the parquet files")
    args = ap.parse_args(argv)
    started = time.monotonic()
    out = generate_parquet(args.sf, force=args.force)
    print(f"parquet for SF {args.sf} in {out} ({time.monotonic() - started:.1f}s)")
    if args.parquet_only:
        return 0
    os.chdir(PROJECT)
    from warehouse import SessionSql

    spark = start_spark()
    started = time.monotonic()
    counts = load_iceberg(SessionSql(spark), args.sf)
    print(f"Iceberg tables in schema {SCHEMA} ({time.monotonic() - started:.1f}s): {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
