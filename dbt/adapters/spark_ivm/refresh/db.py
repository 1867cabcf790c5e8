"""The connection a run's statements go through: it runs them, counts them (the cost model of a
run) and checks, before each, that the run may still write (``guard``); and what every reader of
its answers needs (``optional_int``, ``is_missing_table``). No record of a run lives here."""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from ivm_core.bookkeeping import describe_query, describe_table

logger = AdapterLogger("spark_ivm")

Columns = list[tuple[str, str]]  # (name, Spark type)


class Executor:
    """Runs statements on the adapter's connection, counting them (the cost model of a run)."""

    def __init__(self, adapter: Any, model_name: str):
        self.adapter = adapter
        self.model_name = model_name
        self.count = 0
        # called before every statement: raises once the run may no longer write (a lost lease,
        # lock.Lease)
        self.guard: Callable[[], None] = lambda: None

    def run(self, sql: str, fetch: bool = False) -> list[tuple]:
        self.guard()
        self.count += 1
        started = time.monotonic()
        _, table = self.adapter.execute(sql, auto_begin=False, fetch=fetch)
        logger.debug(f"[ivm {self.model_name}] statement {self.count} took {time.monotonic() - started:.2f}s")
        if not fetch:
            return []
        return [tuple(row.values()) for row in table.rows]

    def columns(self, relation: str) -> Columns:
        """(name, type) of a relation, or [] when it does not exist."""
        return self.columns_and_details(relation, extended=False)[0]

    def columns_and_details(self, relation: str, extended: bool = True) -> tuple[Columns, dict[str, str]]:
        """(name, type) of a relation and (``extended``) its detailed information (``Provider``,
        ``Type``, ...); ([], {}) when it does not exist."""
        self.count += 1
        try:
            _, table = self.adapter.execute(describe_table(relation, extended), fetch=True)
        except DbtRuntimeError as e:
            if is_missing_table(e):
                return [], {}
            raise
        columns: Columns = []
        details: dict[str, str] = {}
        in_columns = True
        for row in table.rows:
            name, value = row[0], row[1]
            if in_columns and (not name or str(name).startswith("#")):
                in_columns = False
            if in_columns:
                columns.append((str(name), str(value)))
            elif name and not str(name).startswith("#"):
                details[str(name).strip()] = str(value or "").strip()
        return columns, details

    def describe(self, select_sql: str) -> Columns:
        return [(str(r[0]), str(r[1])) for r in self.run(describe_query(select_sql), fetch=True)]


def optional_int(value: Any) -> Optional[int]:
    """A snapshot id or count as Spark returns it (NULL stays None)."""
    return None if value is None else int(value)


def is_missing_table(error: Exception) -> bool:
    """Whether a statement failed for a table that does not exist. A metadata table of a missing
    table (``schema.table.refs``) is read by Spark as a table in the namespace ``schema.table``:
    the session catalog refuses that namespace (REQUIRES_SINGLE_PART_NAMESPACE)."""
    text = str(error)
    return any(m in text for m in ("TABLE_OR_VIEW_NOT_FOUND", "REQUIRES_SINGLE_PART_NAMESPACE")) \
        or "not found" in text.lower()
