"""The benchmark driver's own SQL — loading TPC-H, committing change batches, checking results —
run on its SparkSession (`run.py`: dbt in the same process) or through a Spark Thrift Server
(`invocations.py`: every `dbt run` a process of its own, which the driver's JVM must not share
the embedded Derby metastore with). Both answer the same two questions: the rows of a query,
and a table's columns with their Spark types."""

from __future__ import annotations

from typing import List, Tuple


class Sql:
    def rows(self, q: str) -> List[tuple]:
        raise NotImplementedError

    def columns(self, table: str) -> List[Tuple[str, str]]:
        """[(name, Spark type as `simpleString`)] of ``table``."""
        raise NotImplementedError

    def scalar(self, q: str):
        return self.rows(q)[0][0]


class SessionSql(Sql):
    """On a SparkSession of this process."""

    def __init__(self, spark):
        self.spark = spark

    def rows(self, q: str) -> List[tuple]:
        return [tuple(r) for r in self.spark.sql(q).collect()]

    def columns(self, table: str) -> List[Tuple[str, str]]:
        return [(f.name, f.dataType.simpleString()) for f in self.spark.table(table).schema.fields]


class ThriftSql(Sql):
    """Through a Spark Thrift Server (PyHive, the client dbt-spark's `method: thrift` uses)."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.conn = None

    def rows(self, q: str) -> List[tuple]:
        if self.conn is None:  # connected on first use, again after close()
            from pyhive import hive

            self.conn = hive.connect(host=self.host, port=self.port, username="tpch_bench")
        cur = self.conn.cursor()
        try:
            cur.execute(q)  # synchronous: an error is raised here
            if [(d[0], d[1]) for d in cur.description or []] == [("Result", "STRING_TYPE")]:
                try:  # a statement with no result set, which PyHive cannot fetch
                    return [tuple(r) for r in cur.fetchall()]
                except TypeError:
                    return []
            return [tuple(r) for r in cur.fetchall()] if cur.description else []
        finally:
            cur.close()

    def columns(self, table: str) -> List[Tuple[str, str]]:
        out = []
        for name, data_type, *_ in self.rows(f"DESCRIBE TABLE {table}"):
            if not name or name.startswith("#"):  # the partitioning section follows the columns
                break
            out.append((name, data_type))
        return out

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
