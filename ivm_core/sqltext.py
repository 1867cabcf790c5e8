"""The small pieces of Spark SQL text every generator in ivm_core uses, defined once.

This module imports nothing from ivm_core but ``errors``, so any module may import it.
(The null-safe join condition is ``statements.null_safe_match``.)
"""

from __future__ import annotations

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


def refuse_negative(count: str, what: str) -> str:
    """``count``, or a failed statement (``raise_error``) when it is negative: the change
    deletes rows that are not there. The driver recognizes the error by ``ABSENT_ROWS``."""
    message = f"'{ABSENT_ROWS} (the multiplicity of {what} would become negative)'"
    return f"CASE WHEN {count} < 0 THEN CAST(raise_error({message}) AS BIGINT) ELSE {count} END"


def refuse_when(condition: str, what: str) -> str:
    """A condition that is true, or a failed statement (``raise_error``) when ``condition``
    holds: the change deletes rows that are not there."""
    message = f"'{ABSENT_ROWS} (the multiplicity of {what} would become negative)'"
    return f"CASE WHEN {condition} THEN CAST(raise_error({message}) AS BOOLEAN) ELSE TRUE END"
