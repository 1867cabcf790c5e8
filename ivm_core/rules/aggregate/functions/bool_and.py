"""BOOL_AND(p): true when every non-NULL ``p`` of the group is true, NULL when there is none.

The MIN of booleans (false < true): its state and read-back, the group's values kept with
their weights and the touched groups' result recomputed from them. DISTINCT changes nothing.
"""

from __future__ import annotations

from sqlglot import exp

from ivm_core.rules.aggregate.functions.min import Min


class BoolAnd(Min):
    name = "bool_and"
    sql_class = exp.LogicalAnd

    def spark_sql(self, arg: str) -> str:
        return f"bool_and({arg})"


BOOL_AND = BoolAnd()
