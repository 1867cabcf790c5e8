"""MIN(x): the smallest non-NULL value of the group (NULL when there is none).

Not linear: a delete of the current MIN needs the group's other values, so the group's values
are kept with their net weights and the touched groups' MIN recomputed from them; the input is
never read. DISTINCT changes nothing.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import Aggregator, CallTypes, State, Values


class Min(Aggregator):
    name = "min"
    sql_class: ClassVar[type[exp.Expression]] = exp.Min
    distinct = None

    def spark_sql(self, arg: str) -> str:
        return f"min({arg})"

    def state(self, types: CallTypes) -> State:
        return State.VALUES

    def summaries(self, value: str, weight: str) -> tuple[str, ...]:
        return (f"min({value}) AS _min",)

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        return f"{summary}._min"

    def values_result(self, values: Values) -> Any:
        return min(v for v, _ in values) if values else None


MIN = Min()
