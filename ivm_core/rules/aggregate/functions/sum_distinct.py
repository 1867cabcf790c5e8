"""SUM(DISTINCT x): the sum of the group's distinct non-NULL values (NULL when there is none),
from its value state, where each value is one row."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import Aggregator, CallTypes, State, Values


class SumDistinct(Aggregator):
    name = "sum_distinct"
    sql_class = exp.Sum
    distinct = True

    def spark_sql(self, arg: str) -> str:
        return f"sum(DISTINCT {arg})"

    def state(self, types: CallTypes) -> State:
        return State.VALUES

    def summaries(self, value: str, weight: str) -> tuple[str, ...]:
        return (f"sum({value}) AS _sum_distinct",)

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        return f"{summary}._sum_distinct"

    def values_result(self, values: Values) -> Any:
        return sum(v for v, _ in values) if values else None


SUM_DISTINCT = SumDistinct()
