"""BOOL_OR(p): true when some non-NULL ``p`` of the group is true, NULL when there is none.

The MAX of booleans (false < true): its state and read-back, the group's values kept with
their weights and the touched groups' result recomputed from them. DISTINCT changes nothing.
"""

from __future__ import annotations

from sqlglot import exp

from ivm_core.rules.aggregate.functions.max import Max


class BoolOr(Max):
    name = "bool_or"
    sql_class = exp.LogicalOr

    def spark_sql(self, arg: str) -> str:
        return f"bool_or({arg})"


BOOL_OR = BoolOr()
