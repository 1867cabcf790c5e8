"""COUNT_IF(p): the weighted count of rows where ``p`` is true (0 when there is none).

Linear: ``_s`` is ``Σ w`` over the rows whose ``p`` is true (``_n``, the rows where ``p`` is not
NULL, is not needed); the result is ``_s``, a BIGINT as Spark's.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import Aggregator, CallTypes, State


class CountIf(Aggregator):
    name = "count_if"
    sql_class = exp.CountIf

    def spark_sql(self, arg: str) -> str:
        return f"count_if({arg})"

    def state(self, types: CallTypes) -> State:
        return State.LINEAR

    def piece_sql(self, arg: str, weight: str, types: CallTypes) -> str:
        return f"CASE WHEN {arg} THEN {weight} ELSE 0 END"

    def partial_sql(self, arg: str, weight: str, types: CallTypes) -> str:
        return f"CAST({super().partial_sql(arg, weight, types)} AS BIGINT)"

    def partial(self, value: Any, weight: int) -> Any:
        return weight if value else 0

    def result_sql(self, s: str, n: str, types: CallTypes) -> str:
        return f"CAST(coalesce({s}, 0) AS BIGINT)"

    def result(self, s: Any, n: int) -> Any:
        return s or 0


COUNT_IF = CountIf()
