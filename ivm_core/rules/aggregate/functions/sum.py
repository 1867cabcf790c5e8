"""SUM(x): NULL when the group has no non-NULL value, else the sum of its values.

Over integers and decimals SUM is linear: ``_s`` is ``Σ w·x`` (integers wrap as Spark's SUM
does with ANSI off) and the result is cast to Spark's SUM type. Over FLOAT/DOUBLE addition is
not associative, so the group's values are kept and re-added in sorted order on every change
(``float_sum``): the same state always gives bit-for-bit the same result.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import (
    Aggregator,
    CallTypes,
    State,
    Values,
    float_sum,
    float_sum_sql,
)
from ivm_core.sqltext import is_decimal, is_float


class Sum(Aggregator):
    name = "sum"
    sql_class: ClassVar[type[exp.Expression]] = exp.Sum
    type_probes = ("sum", "avg", "weighted")

    def spark_sql(self, arg: str) -> str:
        return f"sum({arg})"

    def state(self, types: CallTypes) -> State:
        return State.VALUES if is_float(types.arg) else State.LINEAR

    def piece_sql(self, arg: str, weight: str, types: CallTypes) -> str:
        return weighted_value(arg, weight, types.weighted)

    def partial(self, value: Any, weight: int) -> Any:
        return value * weight

    def result_sql(self, s: str, n: str, types: CallTypes) -> str:
        return f"CASE WHEN {n} > 0 THEN CAST({s} AS {types.sum}) END"

    def result(self, s: Any, n: int) -> Any:
        return s if n > 0 else None

    def summaries(self, value: str, weight: str) -> tuple[str, ...]:
        return (float_sum_sql(value, weight),)

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        return f"{summary}._float_sum"

    def values_result(self, values: Values) -> Any:
        return float_sum(values)


def weighted_value(arg: str, weight: str, weighted_type: str) -> str:
    """``arg * weight``, of Spark's type of that product (``CallTypes.weighted``). A decimal
    product is computed in ``BigDecimal`` (an object per row), where a decimal of up to 18
    digits is otherwise a long: a weight of 1 or -1 — every row of a rebuild, nearly every row
    of a change — gives the argument cast to that type, or its negation, which are the same
    values (a cast rounds as the product does, half up, and negation is exact)."""
    if not is_decimal(weighted_type):
        return f"{arg} * {weight}"
    cast = f"CAST({arg} AS {weighted_type})"
    return f"CASE WHEN {weight} = 1 THEN {cast} WHEN {weight} = -1 THEN -{cast} ELSE {arg} * {weight} END"


SUM = Sum()
