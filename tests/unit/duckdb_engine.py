"""DuckDB as a stand-in for Spark: it runs the Spark SQL ivm_core generates, transpiled by sqlglot.

Spark's join hints (``/*+ BROADCAST(t) */``: a plan choice, no meaning) are dropped, and four
Spark forms DuckDB lacks are rewritten, each into a statement of the same effect:
``inline(array of structs)`` (a row per struct, a column per field) is DuckDB's recursive ``UNNEST``;
``raise_error(msg)`` is a macro over DuckDB's ``error``; a MERGE's ``UPDATE SET s.col = …``
names the target column bare (DuckDB refuses a qualified one); ``INSERT OVERWRITE t (cols)
SELECT …`` computes the SELECT into a temporary table, then empties ``t`` and inserts it.
DuckDB computes a MERGE's ``INSERT`` values for matched rows too (Spark only for the rows it
inserts), so a ``raise_error`` there would fire for rows that are never inserted: in that clause
it becomes NULL (a refused insert leaves a NULL count, which a state comparison catches).
Spark's own type rules are not DuckDB's: the property tests use integer columns only, whose sums,
counts and averages mean the same in both.
"""

from __future__ import annotations

import duckdb
import sqlglot
from sqlglot import exp


def connect() -> duckdb.DuckDBPyConnection:
    db = duckdb.connect()
    db.execute("CREATE MACRO raise_error(msg) AS error(msg)")
    return db


def duckdb_statements(spark_sql: str) -> list[str]:
    """DuckDB statements doing what the Spark statement ``spark_sql`` does."""
    tree = sqlglot.parse_one(spark_sql, read="spark")
    for hint in list(tree.find_all(exp.Hint)):
        hint.pop()
    for inline in list(tree.find_all(exp.Inline)):
        inline.replace(sqlglot.parse_one("UNNEST(x, recursive := true)", read="duckdb").transform(
            lambda node: inline.this if isinstance(node, exp.Column) and node.name == "x" else node))
    if isinstance(tree, exp.Merge):
        for when in tree.args["whens"].expressions:
            then = when.args.get("then")
            if isinstance(then, exp.Update):
                for assignment in then.expressions:
                    assignment.this.set("table", None)
            if isinstance(then, exp.Insert):
                for call in list(then.find_all(exp.Anonymous)):
                    if call.name.lower() == "raise_error":
                        call.replace(exp.null())
    if isinstance(tree, exp.Insert) and tree.args.get("overwrite"):
        schema = tree.this
        table = schema.this.sql(dialect="duckdb")
        cols = ", ".join(c.sql(dialect="duckdb") for c in schema.expressions)
        select = tree.expression.sql(dialect="duckdb")
        return [
            f"CREATE TEMP TABLE _ivm_overwrite AS {select}",
            f"DELETE FROM {table}",
            f"INSERT INTO {table} ({cols}) SELECT * FROM _ivm_overwrite",
            "DROP TABLE _ivm_overwrite",
        ]
    return [tree.sql(dialect="duckdb")]


def execute(db: duckdb.DuckDBPyConnection, spark_sql: str) -> None:
    for statement in duckdb_statements(spark_sql):
        db.execute(statement)


def query(db: duckdb.DuckDBPyConnection, spark_sql: str) -> list[tuple]:
    (statement,) = duckdb_statements(spark_sql)
    return db.execute(statement).fetchall()
