"""MIN_BY(x, y): the ``x`` of a row with the smallest non-NULL ``y`` (NULL when there is none).

Not linear: the group's ``(y, x)`` pairs are kept with their net weights and the touched groups'
result recomputed from them (``ByOrdering``); of rows tied on the smallest ``y``, the one with a
non-NULL, then the smallest ``x``.
"""

from __future__ import annotations

from typing import ClassVar

from sqlglot import exp

from ivm_core.rules.aggregate.functions.base import ByOrdering


class MinBy(ByOrdering):
    name = "min_by"
    sql_class: ClassVar[type[exp.Expression]] = exp.ArgMin
    function = "min"


MIN_BY = MinBy()
