"""AVG(DISTINCT x): the average of the group's distinct non-NULL values (NULL when there is none),
from its value state, where each value is one row: Spark's own AVG over them, so its result type
(DOUBLE, or the wider DECIMAL of a decimal) is Spark's."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import Aggregator, CallTypes, State, Values


class AvgDistinct(Aggregator):
    name = "avg_distinct"
    sql_class = exp.Avg
    distinct = True

    def spark_sql(self, arg: str) -> str:
        return f"avg(DISTINCT {arg})"

    def state(self, types: CallTypes) -> State:
        return State.VALUES

    def summaries(self, value: str, weight: str) -> tuple[str, ...]:
        return (f"avg({value}) AS _avg_distinct",)

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        return f"{summary}._avg_distinct"

    def values_result(self, values: Values) -> Any:
        return sum(v for v, _ in values) / len(values) if values else None


AVG_DISTINCT = AvgDistinct()
