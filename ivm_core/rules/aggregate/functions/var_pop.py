"""VAR_POP(x): the population variance of the group's non-NULL values, ``m2 / n`` (NULL when
there is none), a DOUBLE as Spark's.

Not linear: the group's values are kept with their net weights and the touched groups' central
moments recomputed from them (``moments``: in sorted order, so a row recomputed from the same
state is the row emitted before). DISTINCT is not supported.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import Aggregator, CallTypes, State, Values, moments, moments_sql


class VarPop(Aggregator):
    name = "var_pop"
    sql_class: ClassVar[type[exp.Expression]] = exp.VariancePop
    least = 0  # the fewest values with a result (n > least)
    divisor_offset = 0  # m2 / (n - divisor_offset)
    root = False  # the standard deviation: its square root

    def spark_sql(self, arg: str) -> str:
        return f"{self.name}({arg})"

    def state(self, types: CallTypes) -> State:
        return State.VALUES

    def summaries(self, value: str, weight: str) -> tuple[str, ...]:
        return (moments_sql(value, weight),)

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        m = f"{summary}._moments"
        value = f"{m}.m2 / ({m}.n - {self.divisor_offset})"
        return f"CASE WHEN {m}.n > {self.least} THEN {f'sqrt({value})' if self.root else value} END"

    def values_result(self, values: Values) -> Any:
        n, _, m2 = moments(values)
        if n <= self.least:
            return None
        value = m2 / (n - self.divisor_offset)
        return math.sqrt(value) if self.root else value


VAR_POP = VarPop()
