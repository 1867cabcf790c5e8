"""MIN(x): the smallest non-NULL value of the group (NULL when there is none).

Not linear: a delete of the current MIN needs the group's other values, so the group's values
are kept with their net weights and the touched groups' MIN recomputed from them; the input is
never read. DISTINCT changes nothing.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import OverValues, Values


class Min(OverValues):
    name = "min"
    sql_class: ClassVar[type[exp.Expression]] = exp.Min
    distinct = None
    function = "min"

    def values_result(self, values: Values) -> Any:
        return min(v for v, _ in values) if values else None


MIN = Min()
