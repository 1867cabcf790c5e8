"""The oracle harness's SQL backend over a Spark Thrift Server (PyHive, the client dbt-spark's
``thrift`` method uses).

PyHive returns DATE values as strings; they are converted back to ``datetime.date``, so rows
compare equal to the harness's Python mirror and to what a DataFrame's ``collect()`` gives
(DECIMAL already arrives as ``Decimal``, TIMESTAMP as ``datetime``).
"""

from __future__ import annotations

import datetime as dt
from typing import List, Tuple

# a statement without a result set (DDL, DML) still reports this one column; fetching it fails in PyHive
_NO_RESULT = [("Result", "STRING_TYPE")]


def _converter(type_code: str):
    if type_code == "DATE_TYPE":
        return dt.date.fromisoformat
    if type_code == "TIMESTAMP_TYPE":  # PyHive converts these itself; a string is left over
        return lambda v: dt.datetime.fromisoformat(v) if isinstance(v, str) else v
    return None


class ThriftResult:
    def __init__(self, rows):
        self._rows = rows

    def collect(self):
        return list(self._rows)


class ThriftBackend:
    def __init__(self, host: str, port: int):
        from pyhive import hive

        self.conn = hive.connect(host=host, port=port, username="spark_ivm_tests")
        self.statements = 0

    def close(self) -> None:
        self.conn.close()

    def _run(self, q: str):
        """(column names, rows with normalised values) of a statement; ([], []) when it has no result set."""
        from pyspark.sql import Row

        cur = self.conn.cursor()
        try:
            self.statements += 1
            cur.execute(q)
            desc = cur.description or []
            if [(d[0], d[1]) for d in desc] == _NO_RESULT:
                try:
                    rows = cur.fetchall()
                except TypeError:  # no result set (PyHive cannot read the empty one)
                    return [], []
            else:
                rows = cur.fetchall()
            names = [d[0] for d in desc]
            convert = [_converter(d[1]) for d in desc]
            make = Row(*names)
            out = []
            for r in rows:
                out.append(make(*[v if f is None or v is None else f(v) for v, f in zip(r, convert)]))
            return names, out
        finally:
            cur.close()

    # -- the harness's backend interface
    def sql(self, q: str) -> ThriftResult:
        return ThriftResult(self._run(q)[1])

    def schema(self, q: str) -> List[Tuple[str, str]]:
        return [(r[0], r[1]) for r in self._run(f"DESCRIBE QUERY {q}")[1]]
