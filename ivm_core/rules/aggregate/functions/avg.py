"""AVG(x): NULL when the group has no non-NULL value, else their sum divided by their count.

Linear over integers and decimals, from the same ``_s = Σ w·x`` and ``_n`` as SUM: a decimal
average is computed in Spark's SUM type and cast to its AVG type, any other is a DOUBLE
division. Over FLOAT/DOUBLE the values are kept and re-added in sorted order, as for SUM.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import CallTypes, Values, float_sum, float_sum_sql
from ivm_core.rules.aggregate.functions.sum import Sum


class Avg(Sum):
    """SUM's state and fold; only the read-back divides by the count."""

    name = "avg"
    sql_class = exp.Avg

    def spark_sql(self, arg: str) -> str:
        return f"avg({arg})"

    def result_sql(self, s: str, n: str, types: CallTypes) -> str:
        if types.avg.lower().startswith("decimal"):
            return (
                f"CASE WHEN {n} > 0 THEN CAST(CAST({s} AS {types.sum}) / CAST({n} AS DECIMAL(20,0)) "
                f"AS {types.avg}) END"
            )
        return f"CASE WHEN {n} > 0 THEN CAST({s} AS DOUBLE) / CAST({n} AS DOUBLE) END"

    def result(self, s: Any, n: int) -> Any:
        return s / n if n > 0 else None

    def summaries(self, value: str, weight: str) -> tuple[str, ...]:
        return (float_sum_sql(value, weight), f"CAST(sum({weight}) AS BIGINT) AS _float_n")

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        return f"{summary}._float_sum / CAST({summary}._float_n AS DOUBLE)"

    def values_result(self, values: Values) -> Any:
        total = float_sum(values)
        return None if total is None else total / float(sum(w for _, w in values))


AVG = Avg()
