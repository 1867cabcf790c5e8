"""VAR_SAMP(x) (``variance``): the sample variance of the group's non-NULL values,
``m2 / (n - 1)``; NULL for fewer than two (Spark's default, not the legacy NaN). The state and
read-back of ``var_pop``."""

from __future__ import annotations

from sqlglot import exp

from ivm_core.rules.aggregate.functions.var_pop import VarPop


class VarSamp(VarPop):
    name = "var_samp"
    sql_class = exp.Variance
    least = 1
    divisor_offset = 1


VAR_SAMP = VarSamp()
