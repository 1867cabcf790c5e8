"""COUNT(x): the weighted count of non-NULL values, the group state's ``_n`` (``_s`` stays 0)."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import Aggregator, CallTypes, State


class Count(Aggregator):
    name = "count"
    sql_class = exp.Count

    def spark_sql(self, arg: str) -> str:
        return f"count({arg})"

    def state(self, types: CallTypes) -> State:
        return State.LINEAR

    def piece_sql(self, arg: str, weight: str, types: CallTypes) -> str:
        return "CAST(0 AS BIGINT)"

    def partial_sql(self, arg: str, weight: str, types: CallTypes) -> str:
        return self.piece_sql(arg, weight, types)  # a sum of zeros

    def partial(self, value: Any, weight: int) -> Any:
        return 0

    def result_sql(self, s: str, n: str, types: CallTypes) -> str:
        return n

    def result(self, s: Any, n: int) -> Any:
        return n


COUNT = Count()
