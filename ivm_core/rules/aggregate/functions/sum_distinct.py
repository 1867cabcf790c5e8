"""SUM(DISTINCT x): the sum of the group's distinct non-NULL values (NULL when there is none),
Spark's SUM over its value state, where each value is one row."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import OverValues, Values


class SumDistinct(OverValues):
    name = "sum_distinct"
    sql_class = exp.Sum
    distinct = True
    function = "sum"

    def values_result(self, values: Values) -> Any:
        return sum(v for v, _ in values) if values else None


SUM_DISTINCT = SumDistinct()
