"""DuckDB as a stand-in for Spark: it runs the Spark SQL ivm_core generates, transpiled by sqlglot.

Spark's join hints (``/*+ BROADCAST(t) */``: a plan choice, no meaning) are dropped, and four
Spark forms DuckDB lacks are rewritten, each into a statement of the same effect:
``inline(array of structs)`` (a row per struct, a column per field) is DuckDB's recursive ``UNNEST``;
``raise_error(msg)`` is a macro over DuckDB's ``error``; a MERGE's ``UPDATE SET s.col = …``
names the target column bare (DuckDB refuses a qualified one); ``INSERT OVERWRITE t (cols)
SELECT …`` computes the SELECT into a temporary table, then empties ``t`` (with a static
``PARTITION (c = v)``: deletes its rows with ``c = v``) and inserts it.
DuckDB computes a MERGE's ``INSERT`` values for matched rows too (Spark only for the rows it
inserts), so a ``raise_error`` there would fire for rows that are never inserted: in that clause
it becomes NULL (a refused insert leaves a NULL count, which a state comparison catches).
Spark's own type rules are not DuckDB's: the property tests use integer columns only, whose sums,
counts and averages mean the same in both.
"""

from __future__ import annotations

import functools
import itertools

import duckdb
import sqlglot
from sqlglot import exp


_EXAMPLES = itertools.count()  # example_<n>: the database of the n-th connect()


@functools.cache
def _instance() -> duckdb.DuckDBPyConnection:
    """The process's DuckDB (starting one took 80 ms: a property test connects thousands of times)."""
    return duckdb.connect()


def connect() -> duckdb.DuckDBPyConnection:
    """A connection to a new, empty in-memory database attached to the process's DuckDB; the
    previous connect()'s database is detached (no test holds two)."""
    n = next(_EXAMPLES)
    if n:
        _instance().execute(f"DETACH DATABASE example_{n - 1}")
    _instance().execute(f"ATTACH ':memory:' AS example_{n}")
    db = _instance().cursor()
    db.execute(f"USE example_{n}")
    db.execute("CREATE TEMP MACRO raise_error(msg) AS error(msg)")
    return db


def insert_rows(db: duckdb.DuckDBPyConnection, table: str, rows) -> None:
    """``rows`` (tuples of one width) into ``table`` in one statement: ``executemany`` runs one
    per row, a quarter of a generated-SQL property test's time."""
    rows = list(rows)
    if rows:
        one = "(" + ", ".join("?" * len(rows[0])) + ")"
        db.execute(f"INSERT INTO {table} VALUES {', '.join([one] * len(rows))}", [v for row in rows for v in row])


@functools.lru_cache(maxsize=4096)
def duckdb_statements(spark_sql: str) -> tuple[str, ...]:
    """DuckDB statements doing what the Spark statement ``spark_sql`` does. Cached: the property
    tests' examples run the same statements over different data (parsing and generating them
    was two thirds of a generated-SQL test's time)."""
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
        partition = schema.this.args.get("partition")
        if partition is not None:
            schema.this.set("partition", None)
        table = schema.this.sql(dialect="duckdb")
        cols = [c.sql(dialect="duckdb") for c in schema.expressions]
        select = tree.expression.sql(dialect="duckdb")
        where, values = "", ["*"]
        if partition is not None:  # a static partition: the rows of that partition replaced
            (column, value), = [(eq.this.sql(dialect="duckdb"), eq.expression.sql(dialect="duckdb"))
                                for eq in partition.expressions]
            where, cols, values = f" WHERE {column} = {value}", [column] + cols, [value, "*"]
        return (
            f"CREATE TEMP TABLE _ivm_overwrite AS {select}",
            f"DELETE FROM {table}{where}",
            f"INSERT INTO {table} ({', '.join(cols)}) SELECT {', '.join(values)} FROM _ivm_overwrite",
            "DROP TABLE _ivm_overwrite",
        )
    return (tree.sql(dialect="duckdb"),)


def execute(db: duckdb.DuckDBPyConnection, spark_sql: str) -> None:
    for statement in duckdb_statements(spark_sql):
        db.execute(statement)


def query(db: duckdb.DuckDBPyConnection, spark_sql: str) -> list[tuple]:
    (statement,) = duckdb_statements(spark_sql)
    return db.execute(statement).fetchall()
