"""The small pieces of Spark SQL text every generator in ivm_core uses, defined once.

This module imports nothing from ivm_core but ``errors``, so any module may import it.
(The null-safe join condition is ``statements.null_safe_match``.)
"""

from __future__ import annotations

from typing import Any, Callable

from sqlglot import exp

from ivm_core.errors import ABSENT_ROWS

DIALECT = "spark"  # how sqlglot reads the model's SQL and renders every expression
WEIGHT = "_ivm_weight"  # the weight column of every Z-set: BIGINT, never 0 once consolidated
SEQ = "_ivm_seq"  # the sequence column of every change table: a change is read by windows of it
# Spark's floating-point types (as their names start): sums over them are not associative
FLOAT_TYPES = ("float", "double", "real")


def is_float(spark_type: str) -> bool:
    """Whether a Spark type name (``double``, ``FLOAT``, ...) is a floating-point type."""
    return spark_type.lower().startswith(FLOAT_TYPES)


def is_decimal(spark_type: str) -> bool:
    """Whether a Spark type name (``decimal(38,4)``, ``DECIMAL(10,2)``) is a decimal type."""
    return spark_type.lower().startswith("decimal")


def quote(name: str) -> str:
    """A Spark identifier, backquoted (backquotes inside doubled)."""
    return "`" + name.replace("`", "``") + "`"


def indent(sql: str, by: str = "  ") -> str:
    """Every line of ``sql`` prefixed with ``by``."""
    return "\n".join(by + line for line in sql.splitlines())


def subquery(sql: str, alias: str) -> str:
    """``(sql) AS alias``, the query indented on its own lines."""
    return f"(\n{indent(sql)}\n) AS {alias}"


def repeated(count: str, alias: str) -> str:
    """The ``LATERAL VIEW`` that repeats each row ``count`` times (``count`` must be at least 1:
    ``sequence(1, 0)`` is ``[1, 0]``), its table named ``alias``."""
    return f"LATERAL VIEW explode(sequence(1, {count})) {alias} AS _ivm_copy"


def expression(e: exp.Expr) -> str:
    """A sqlglot expression as Spark SQL."""
    return e.sql(dialect=DIALECT)


def absent_rows_error(what: str, spark_type: str) -> str:
    """A failed statement (``raise_error``, typed ``spark_type``): the change deletes rows that
    are not there — the multiplicity of ``what`` would become negative. The driver recognizes
    the error by ``ABSENT_ROWS``."""
    return f"CAST(raise_error('{ABSENT_ROWS} (the multiplicity of {what} would become negative)') AS {spark_type})"


def refuse_negative(count: str, what: str) -> str:
    """``count``, or a failed statement (``absent_rows_error``) when it is negative."""
    return f"CASE WHEN {count} < 0 THEN {absent_rows_error(what, 'BIGINT')} ELSE {count} END"


def refuse_when(condition: str, what: str) -> str:
    """A condition that is true, or a failed statement (``absent_rows_error``) when
    ``condition`` holds."""
    return f"CASE WHEN {condition} THEN {absent_rows_error(what, 'BOOLEAN')} ELSE TRUE END"


def with_tables_replaced(sql: str, tree: exp.Expr, replacement: Callable[[exp.Table], str | None]) -> str:
    """``sql`` with each table reference ``t`` of its parse ``tree`` for which
    ``replacement(t)`` gives a query replaced by that query, as a derived table under the
    reference's alias (its name when it has none) — and every other character of ``sql`` kept
    as written. The text is spliced at the positions sqlglot records for every identifier it
    parses, not re-rendered from ``tree``: sqlglot's rendering is not always Spark's meaning (it
    drops ``percentile(x, p, frequency)``'s frequency), and the model must mean what its author
    wrote."""
    spans: list[tuple[int, int, str]] = []
    for table in tree.find_all(exp.Table):
        query = replacement(table)
        if query is None:
            continue
        parts = table.parts
        if not all("start" in p.meta and "end" in p.meta for p in parts):
            raise ValueError(f"no position of {table.sql(dialect=DIALECT)} in the parsed SQL")
        alias = "" if table.alias else f" AS {quote(table.name)}"
        spans.append((parts[0].meta["start"], parts[-1].meta["end"] + 1, f"(\n{indent(query)}\n){alias}"))
    out, at = [], 0
    for start, end, text in sorted(spans):
        out += [sql[at:start], text]
        at = end
    return "".join(out) + sql[at:]


def replace_top_down(expression: Any, replace: Callable[[Any], Any]) -> Any:
    """``expression`` with ``replace`` applied top down, in place: a node it replaces is not
    descended into."""
    replaced = replace(expression)
    if replaced is not expression:
        return replaced
    for child in list(expression.iter_expressions()):
        new = replace_top_down(child, replace)
        if new is not child:
            child.replace(new)
    return expression
