"""MAX(x): the largest non-NULL value of the group (NULL when there is none).

Not linear: a delete of the current MAX needs the group's other values, so the group's values
are kept with their net weights and the touched groups' MAX recomputed from them; the input is
never read. DISTINCT changes nothing.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import Aggregator, CallTypes, State, Values


class Max(Aggregator):
    name = "max"
    sql_class: ClassVar[type[exp.Expression]] = exp.Max
    distinct = None

    def spark_sql(self, arg: str) -> str:
        return f"max({arg})"

    def state(self, types: CallTypes) -> State:
        return State.VALUES

    def summaries(self, value: str, weight: str) -> tuple[str, ...]:
        return (f"max({value}) AS _max",)

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        return f"{summary}._max"

    def values_result(self, values: Values) -> Any:
        return max(v for v, _ in values) if values else None


MAX = Max()
