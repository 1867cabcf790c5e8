"""Which of the 22 TPC-H queries (tests/unit/tpch/, the text DuckDB's tpch extension ships) are
maintained incrementally, and for the others, which construct the refusal names. A query that
starts or stops compiling changes this table on purpose: update it and the list in docs/supported-sql.md."""

from __future__ import annotations

import pathlib

import pytest
import sqlglot
from sqlglot import exp

from ivm_core.analyzer import InputSchema
from ivm_core.compiler import compile_model
from ivm_core.errors import UnsupportedSql

QUERIES = pathlib.Path(__file__).parent / "tpch"
STRING, KEY, MONEY = "STRING", "BIGINT", "DECIMAL(15,2)"
TABLES = {
    "nation": [("n_nationkey", "INT"), ("n_name", STRING), ("n_regionkey", "INT"), ("n_comment", STRING)],
    "region": [("r_regionkey", "INT"), ("r_name", STRING), ("r_comment", STRING)],
    "part": [("p_partkey", KEY), ("p_name", STRING), ("p_mfgr", STRING), ("p_brand", STRING), ("p_type", STRING),
             ("p_size", "INT"), ("p_container", STRING), ("p_retailprice", MONEY), ("p_comment", STRING)],
    "supplier": [("s_suppkey", KEY), ("s_name", STRING), ("s_address", STRING), ("s_nationkey", "INT"),
                 ("s_phone", STRING), ("s_acctbal", MONEY), ("s_comment", STRING)],
    "partsupp": [("ps_partkey", KEY), ("ps_suppkey", KEY), ("ps_availqty", KEY), ("ps_supplycost", MONEY),
                 ("ps_comment", STRING)],
    "customer": [("c_custkey", KEY), ("c_name", STRING), ("c_address", STRING), ("c_nationkey", "INT"),
                 ("c_phone", STRING), ("c_acctbal", MONEY), ("c_mktsegment", STRING), ("c_comment", STRING)],
    "orders": [("o_orderkey", KEY), ("o_custkey", KEY), ("o_orderstatus", STRING), ("o_totalprice", MONEY),
               ("o_orderdate", "DATE"), ("o_orderpriority", STRING), ("o_clerk", STRING), ("o_shippriority", "INT"),
               ("o_comment", STRING)],
    "lineitem": [("l_orderkey", KEY), ("l_partkey", KEY), ("l_suppkey", KEY), ("l_linenumber", KEY),
                 ("l_quantity", MONEY), ("l_extendedprice", MONEY), ("l_discount", MONEY), ("l_tax", MONEY),
                 ("l_returnflag", STRING), ("l_linestatus", STRING), ("l_shipdate", "DATE"), ("l_commitdate", "DATE"),
                 ("l_receiptdate", "DATE"), ("l_shipinstruct", STRING), ("l_shipmode", STRING), ("l_comment", STRING)],
}
SCHEMAS = [InputSchema(f"tpch.{t}", tuple(cols)) for t, cols in TABLES.items()]

# query number -> None (incremental) or the construct its refusal names
EXPECTED = {number: None for number in range(1, 23)}


def tpch_sql(number: int) -> str:
    """The query over the inputs ``tpch.<table>`` (its CTEs stay unqualified)."""
    tree = sqlglot.parse_one((QUERIES / f"q{number:02d}.sql").read_text(), read="duckdb")
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if table.name in TABLES and table.name not in ctes:
            table.set("db", exp.to_identifier("tpch"))
    return tree.sql("spark")


@pytest.mark.parametrize("number", sorted(EXPECTED))
def test_tpch_query_mode(number):
    sql = tpch_sql(number)
    if EXPECTED[number] is None:
        compile_model(sql, SCHEMAS)
        return
    with pytest.raises(UnsupportedSql) as refused:
        compile_model(sql, SCHEMAS)
    assert EXPECTED[number] in str(refused.value), refused.value
