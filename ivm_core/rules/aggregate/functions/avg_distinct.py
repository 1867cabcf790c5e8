"""AVG(DISTINCT x): the average of the group's distinct non-NULL values (NULL when there is none),
Spark's AVG over its value state, where each value is one row, so its result type (DOUBLE, or
the wider DECIMAL of a decimal) is Spark's."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import OverValues, Values


class AvgDistinct(OverValues):
    name = "avg_distinct"
    sql_class = exp.Avg
    distinct = True
    function = "avg"

    def values_result(self, values: Values) -> Any:
        return sum(v for v, _ in values) / len(values) if values else None


AVG_DISTINCT = AvgDistinct()
