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
    """Through a Spark Thrift Server: the thrift test tier's backend (``tests.thrift.backend``,
    PyHive), connected on first use and again after ``close()`` (the server may be restarted)."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.backend = None

    def _connected(self):
        if self.backend is None:
            from tests.thrift.backend import ThriftBackend

            self.backend = ThriftBackend(self.host, self.port)
        return self.backend

    def rows(self, q: str) -> List[tuple]:
        return [tuple(r) for r in self._connected().sql(q).collect()]

    def columns(self, table: str) -> List[Tuple[str, str]]:
        return self._connected().schema(f"SELECT * FROM {table}")

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
            self.backend = None
