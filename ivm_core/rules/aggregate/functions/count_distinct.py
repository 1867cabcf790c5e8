"""COUNT(DISTINCT x): how many distinct non-NULL values the group has — COUNT's state over the
group's distinct values (``State.DISTINCT``: a value counts once while its net weight in the
value state is positive); 0 when there is none."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import CallTypes, OverValues, Values
from ivm_core.rules.aggregate.functions.count import COUNT


class CountDistinct(OverValues):
    name = "count_distinct"
    sql_class = exp.Count
    distinct = True
    function = "count"
    over_distinct = COUNT

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        return f"coalesce({super().values_result_sql(summary, types)}, 0)"

    def values_result(self, values: Values) -> Any:
        return len(values)


COUNT_DISTINCT = CountDistinct()
