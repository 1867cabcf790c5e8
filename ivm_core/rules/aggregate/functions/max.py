"""MAX(x): the largest non-NULL value of the group (NULL when there is none).

Not linear: a delete of the current MAX needs the group's other values, so the group's values
are kept with their net weights and the touched groups' MAX recomputed from them; the input is
never read. DISTINCT changes nothing.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import OverValues, Values


class Max(OverValues):
    name = "max"
    sql_class: ClassVar[type[exp.Expression]] = exp.Max
    distinct = None
    function = "max"

    def values_result(self, values: Values) -> Any:
        return max(v for v, _ in values) if values else None


MAX = Max()
