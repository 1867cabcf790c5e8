"""STDDEV_POP(x): the square root of ``var_pop`` (its state and read-back)."""

from __future__ import annotations

from sqlglot import exp

from ivm_core.rules.aggregate.functions.var_pop import VarPop


class StddevPop(VarPop):
    name = "stddev_pop"
    sql_class = exp.StddevPop
    root = True


STDDEV_POP = StddevPop()
