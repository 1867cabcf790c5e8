"""The aggregate functions the aggregation rule maintains, one module each (see ``base``).

Adding a function: a module defining its ``Aggregator``, and one entry in ``AGGREGATORS``.
"""

from __future__ import annotations

from sqlglot import exp

from ivm_core.rules.aggregate.functions.avg import AVG
from ivm_core.rules.aggregate.functions.avg_distinct import AVG_DISTINCT
from ivm_core.rules.aggregate.functions.base import Aggregator, CallTypes, State
from ivm_core.rules.aggregate.functions.bool_and import BOOL_AND
from ivm_core.rules.aggregate.functions.bool_or import BOOL_OR
from ivm_core.rules.aggregate.functions.count import COUNT
from ivm_core.rules.aggregate.functions.count_distinct import COUNT_DISTINCT
from ivm_core.rules.aggregate.functions.count_if import COUNT_IF
from ivm_core.rules.aggregate.functions.count_star import COUNT_STAR
from ivm_core.rules.aggregate.functions.max import MAX
from ivm_core.rules.aggregate.functions.max_by import MAX_BY
from ivm_core.rules.aggregate.functions.min import MIN
from ivm_core.rules.aggregate.functions.min_by import MIN_BY
from ivm_core.rules.aggregate.functions.stddev_pop import STDDEV_POP
from ivm_core.rules.aggregate.functions.stddev_samp import STDDEV, STDDEV_SAMP
from ivm_core.rules.aggregate.functions.sum import SUM
from ivm_core.rules.aggregate.functions.sum_distinct import SUM_DISTINCT
from ivm_core.rules.aggregate.functions.var_pop import VAR_POP
from ivm_core.rules.aggregate.functions.var_samp import VAR_SAMP

AGGREGATORS: dict[str, Aggregator] = {
    f.name: f for f in (COUNT_STAR, COUNT, SUM, AVG, MIN, MAX, COUNT_DISTINCT, SUM_DISTINCT, AVG_DISTINCT, COUNT_IF,
                        BOOL_AND, BOOL_OR, VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP, STDDEV, MIN_BY, MAX_BY)
}

__all__ = ["AGGREGATORS", "Aggregator", "CallTypes", "State", "find"]


def find(call: exp.Expression, distinct: bool, star: bool) -> Aggregator | None:
    """The aggregator of a sqlglot aggregate call (None: not supported), given whether its
    argument is DISTINCT and whether it is ``*``."""
    for f in AGGREGATORS.values():
        if (
            isinstance(call, f.sql_class)
            and f.star == star
            and (f.distinct is None or f.distinct == distinct)
        ):
            return f
    return None
