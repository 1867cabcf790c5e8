"""STDDEV_SAMP(x) (also spelled ``stddev``): the square root of ``var_samp`` (its state and
read-back); NULL for fewer than two values."""

from __future__ import annotations

from typing import ClassVar

from sqlglot import exp

from ivm_core.rules.aggregate.functions.var_pop import VarPop


class StddevSamp(VarPop):
    name = "stddev_samp"
    sql_class: ClassVar[type[exp.Expression]] = exp.StddevSamp
    least = 1
    divisor_offset = 1
    root = True


class Stddev(StddevSamp):
    """``stddev(x)``, Spark's name for STDDEV_SAMP (a node of its own in sqlglot)."""

    name = "stddev"
    sql_class = exp.Stddev


STDDEV_SAMP = StddevSamp()
STDDEV = Stddev()
