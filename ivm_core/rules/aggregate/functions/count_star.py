"""COUNT(*): the group's row count, which every group state keeps anyway (``_ivm_count``)."""

from __future__ import annotations

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import Aggregator, CallTypes, State


class CountStar(Aggregator):
    name = "count_star"
    sql_class = exp.Count
    star = True

    def spark_sql(self, arg: str) -> str:
        return "count(*)"

    def state(self, types: CallTypes) -> State:
        return State.ROWS


COUNT_STAR = CountStar()
