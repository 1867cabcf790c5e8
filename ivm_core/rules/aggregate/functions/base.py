"""What an aggregate function is to the aggregation rule: one ``Aggregator`` object per function.

Each function says which state it keeps per group (``State``), how one change row folds into
that state, and how the output value is read back from it — in Spark SQL (what runs) and in
Python (what ``ivm_core.zset`` runs in the property tests). The fold itself is always addition:
every state below is a group (in the algebraic sense), so ``S + ΔS`` needs no knowledge of the
function, and a delete is the addition of a negative weight.

- ``ROWS``: the group's row count ``_ivm_count`` alone, which every group keeps (COUNT(*)).
- ``LINEAR``: two columns of the group state, ``<call>_s`` (what ``partial`` adds per non-NULL
  value of weight ``w``) and ``<call>_n`` (the weighted count of non-NULL values).
- ``VALUES``: the group's non-NULL values with their net weights, in the value state of the
  argument (shared by every call over it); the output is recomputed from them, per touched
  group, by the ``summaries`` aggregates.
- ``DISTINCT``: ``f(DISTINCT x)`` for an ``f`` that is ``LINEAR`` (``over_distinct``: COUNT,
  and SUM and AVG over exact types): ``f``'s two columns in the group state, over the group's
  *distinct* values — a value adds to them when its net weight in the value state rises from 0
  and subtracts when it falls to 0 (DBSP's DISTINCT: ``Δdistinct = distinct(S + ΔS) −
  distinct(S)``), so a change reads the value state only at its own values, never a touched
  group's others.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

from sqlglot import exp

from ivm_core.sqltext import is_decimal


class State(enum.Enum):
    ROWS = "rows"
    LINEAR = "linear"
    VALUES = "values"
    DISTINCT = "distinct"


@dataclass(frozen=True)
class CallTypes:
    """Spark's types for one call: of its argument, of SUM(arg) and of AVG(arg), and of the
    argument times a weight (``arg * BIGINT``: what a LINEAR state adds up)."""

    arg: str = ""
    sum: str = ""
    avg: str = ""
    weighted: str = ""


# what each of ``Aggregator.type_probes`` asks Spark, over the argument ``{}``
TYPE_PROBES = {"sum": "sum({})", "avg": "avg({})", "weighted": "first({} * CAST(1 AS BIGINT))"}


# (value, net weight) pairs of one group's value state: weights are positive
Values = Sequence[tuple[Any, int]]


class Aggregator:
    """One aggregate function. Subclasses set the class attributes and override the methods
    of the state they keep."""

    name: ClassVar[str]  # ``AggCall.func``
    sql_class: ClassVar[type[exp.Expression]]  # the sqlglot node of the function
    distinct: ClassVar[bool | None] = False  # f(DISTINCT x); None: DISTINCT changes nothing
    # f(DISTINCT x) as the LINEAR f over the group's distinct values (State.DISTINCT), where f's
    # state is LINEAR for the argument's type
    over_distinct: ClassVar["Aggregator | None"] = None
    star: ClassVar[bool] = False  # f(*)
    # the Spark result types the read-back casts to, asked for with DESCRIBE QUERY
    type_probes: ClassVar[tuple[str, ...]] = ()

    def spark_sql(self, arg: str) -> str:
        """The function over ``arg`` as Spark SQL (the model's own aggregate, for type probes)."""
        raise NotImplementedError

    def state(self, types: CallTypes) -> State:
        raise NotImplementedError

    # -- LINEAR --------------------------------------------------------------------------------
    def piece_sql(self, arg: str, weight: str, types: CallTypes) -> str:
        """What one row of a change (``arg`` with ``weight``) adds to ``_s``; NULL adds nothing."""
        raise NotImplementedError

    def partial_sql(self, arg: str, weight: str, types: CallTypes) -> str:
        """The aggregate over a change that gives the ``_s`` column of its partial state: the
        sum of its rows' pieces, 0 when it has none. A decimal sum that overflows is NULL, as
        Spark's is, and so is one with a piece that overflowed (a value with a weight other than
        ±1): the state then says the sum overflowed (``sql._total``)."""
        piece = self.piece_sql(arg, weight, types)
        if not is_decimal(types.weighted):
            return f"coalesce(sum({piece}), 0)"
        return f"CASE WHEN count({arg}) = 0 THEN 0 WHEN count({piece}) = count({arg}) THEN sum({piece}) END"

    def partial(self, value: Any, weight: int) -> Any:
        """What one non-NULL ``value`` with ``weight`` adds to ``_s``."""
        raise NotImplementedError

    def result_sql(self, s: str, n: str, types: CallTypes) -> str:
        """The output value from the group state's ``_s`` and ``_n`` (``n`` is never NULL)."""
        raise NotImplementedError

    def result(self, s: Any, n: int) -> Any:
        raise NotImplementedError

    # -- VALUES --------------------------------------------------------------------------------
    def summaries(self, value: str, weight: str) -> tuple[str, ...]:
        """``expr AS name`` aggregates over one group's value state (columns ``value`` and
        ``weight``); calls over the same argument share equal ones."""
        raise NotImplementedError

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        """The output value from the summary row ``summary`` (NULL when the group has no
        non-NULL value)."""
        raise NotImplementedError

    def values_result(self, values: Values) -> Any:
        raise NotImplementedError


class OverValues(Aggregator):
    """``f(x)`` as Spark's own ``f`` over the group's value state, where each value is one row
    (so its result type is Spark's): MIN and MAX (DISTINCT changes nothing), COUNT, SUM and AVG
    (DISTINCT)."""

    function: ClassVar[str]  # Spark's name of f

    def spark_sql(self, arg: str) -> str:
        return f"{self.function}({'DISTINCT ' if self.distinct else ''}{arg})"

    def state(self, types: CallTypes) -> State:
        linear = self.over_distinct
        return State.DISTINCT if linear is not None and linear.state(types) is State.LINEAR else State.VALUES

    # named for what it computes: calls of one function over the same argument share it
    # (MIN and BOOL_AND, say)
    def summaries(self, value: str, weight: str) -> tuple[str, ...]:
        return (f"{self.function}({value}) AS _{self.function}",)

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        return f"{summary}._{self.function}"


# A floating-point sum that depends only on the multiset of values (added in sorted order), so a
# group's row recomputed from the same state is bit-for-bit the row emitted before.
def float_sum_sql(value: str, weight: str) -> str:
    return (
        f"aggregate(array_sort(collect_list(CAST({value} AS DOUBLE) * CAST({weight} AS DOUBLE))), "
        "CAST(0 AS DOUBLE), (acc, x) -> acc + x) AS _float_sum"
    )


def float_sum(values: Values) -> float | None:
    """``float_sum_sql`` in Python: the products, sorted, added from 0.0 left to right."""
    if not values:
        return None
    total = 0.0
    for x in sorted(float(v) * float(w) for v, w in values):
        total += x
    return total


# The central moments of a group's values (count, mean, sum of squared deviations), by West's
# weighted update over the values in sorted order: the same state always gives the same bits,
# and equal values give a deviation of exactly 0 (as Spark's own update does).
def moments_sql(value: str, weight: str) -> str:
    start = "named_struct('n', CAST(0 AS DOUBLE), 'mean', CAST(0 AS DOUBLE), 'm2', CAST(0 AS DOUBLE))"
    n = "(acc.n + e.w)"
    mean = f"(acc.mean + (e.v - acc.mean) * e.w / {n})"
    step = f"named_struct('n', {n}, 'mean', {mean}, 'm2', acc.m2 + (e.v - acc.mean) * e.w * (e.v - {mean}))"
    values = f"array_sort(collect_list(named_struct('v', CAST({value} AS DOUBLE), 'w', CAST({weight} AS DOUBLE))))"
    return f"aggregate({values}, {start}, (acc, e) -> {step}) AS _moments"


def moments(values: Values) -> tuple[float, float, float]:
    """``moments_sql`` in Python: (n, mean, m2)."""
    n = mean = m2 = 0.0
    for v, w in sorted((float(v), float(w)) for v, w in values):
        new_n = n + w
        new_mean = mean + (v - mean) * w / new_n
        m2 = m2 + (v - mean) * w * (v - new_mean)
        n, mean = new_n, new_mean
    return n, mean, m2


class ByOrdering(Aggregator):
    """``f_by(x, y)`` — MIN_BY, MAX_BY: the ``x`` of a row with the extreme ``y`` (rows whose ``y``
    is NULL ignored; NULL when none is left). Its one argument (``argument``, which the analyzer
    computes per row) is the pair ``(o: y, n: x IS NULL, v: x)``, NULL when ``y`` is; the group's
    pairs are kept with their weights (the value state) and the touched groups' result is
    ``f(pair).v``. Of rows tied on the extreme ``y``, Spark keeps the first it reads, which no
    refresh can reproduce; this keeps the pair ``f`` orders extreme after ``y`` (MIN_BY: a
    non-NULL, then the smallest ``x``), one of Spark's answers and the same every time."""

    function: ClassVar[str]  # Spark's MIN or MAX, over the pairs

    @staticmethod
    def argument(x: exp.Expression, y: exp.Expression) -> exp.Expression:
        pair = exp.Struct(expressions=[
            exp.PropertyEQ(this=exp.to_identifier("o"), expression=y.copy()),
            exp.PropertyEQ(this=exp.to_identifier("n"), expression=exp.Is(this=x.copy(), expression=exp.null())),
            exp.PropertyEQ(this=exp.to_identifier("v"), expression=x.copy()),
        ])
        return exp.Case(ifs=[exp.If(this=exp.not_(exp.Is(this=y.copy(), expression=exp.null())), true=pair)])

    def spark_sql(self, arg: str) -> str:
        return f"{self.function}({arg}).v"

    def state(self, types: CallTypes) -> State:
        return State.VALUES

    def summaries(self, value: str, weight: str) -> tuple[str, ...]:
        return (f"{self.function}({value}) AS _{self.name}",)

    def values_result_sql(self, summary: str, types: CallTypes) -> str:
        return f"{summary}._{self.name}.v"

    def values_result(self, values: Values) -> Any:
        if not values:
            return None
        pairs = [v for v, _ in values]
        return (min(pairs) if self.function == "min" else max(pairs))[2]
