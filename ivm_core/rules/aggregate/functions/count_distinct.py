"""COUNT(DISTINCT x): how many distinct non-NULL values the group has, from its value state
(a value is there while its net weight is positive)."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import Aggregator, CallTypes, State, Values


class CountDistinct(Aggregator):
    name = "count_distinct"
    sql_class = exp.Count
    distinct = True

    def spark_sql(self, arg: str) -> str:
        return f"count(DISTINCT {arg})"

    def state(self, types: CallTypes) -> State:
        return State.VALUES

    def summaries(self, value: str, weight: str) -> tuple[str, ...]:
        return (f"count({value}) AS _count_distinct",)

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        return f"coalesce({summary}._count_distinct, 0)"

    def values_result(self, values: Values) -> Any:
        return len(values)


COUNT_DISTINCT = CountDistinct()
