"""AVG(DISTINCT x): the average of the group's distinct non-NULL values (NULL when there is
none). Over integers and decimals AVG's state over the group's distinct values
(``State.DISTINCT``, as SUM(DISTINCT)), read back in Spark's AVG type; over FLOAT/DOUBLE
Spark's AVG over the value state, where each value is one row."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ivm_core.rules.aggregate.functions.avg import AVG
from ivm_core.rules.aggregate.functions.base import OverValues, Values


class AvgDistinct(OverValues):
    name = "avg_distinct"
    sql_class = exp.Avg
    distinct = True
    function = "avg"
    over_distinct = AVG
    type_probes = AVG.type_probes

    def values_result(self, values: Values) -> Any:
        return sum(v for v, _ in values) / len(values) if values else None


AVG_DISTINCT = AvgDistinct()
