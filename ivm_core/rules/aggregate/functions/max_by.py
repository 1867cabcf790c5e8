"""MAX_BY(x, y): the ``x`` of a row with the largest non-NULL ``y`` (NULL when there is none).

Not linear: the group's ``(y, x)`` pairs are kept with their net weights and the touched groups'
result recomputed from them (``ByOrdering``); of rows tied on the largest ``y``, the one with a
NULL, then the largest ``x``.
"""

from __future__ import annotations

from typing import ClassVar

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import ByOrdering


class MaxBy(ByOrdering):
    name = "max_by"
    sql_class: ClassVar[type[exp.Expression]] = exp.ArgMax
    function = "max"


MAX_BY = MaxBy()
