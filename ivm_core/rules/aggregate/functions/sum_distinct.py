"""SUM(DISTINCT x): the sum of the group's distinct non-NULL values (NULL when there is none).
Over integers and decimals SUM's state over the group's distinct values (``State.DISTINCT``:
a value is added once when its net weight in the value state rises from 0, subtracted when it
falls to 0); over FLOAT/DOUBLE Spark's SUM over the value state, where each value is one row
(re-added from the values: floating-point addition is not associative)."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import OverValues, Values
from ivm_core.rules.aggregate.functions.sum import SUM


class SumDistinct(OverValues):
    name = "sum_distinct"
    sql_class = exp.Sum
    distinct = True
    function = "sum"
    over_distinct = SUM
    type_probes = SUM.type_probes

    def values_result(self, values: Values) -> Any:
        return sum(v for v, _ in values) if values else None


SUM_DISTINCT = SumDistinct()
