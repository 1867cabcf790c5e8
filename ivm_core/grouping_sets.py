"""``ROLLUP``, ``CUBE`` and ``GROUPING SETS`` as one aggregate over the input's rows repeated once
per grouping set (Spark's own ``Expand``)::

    GROUP BY GROUPING SETS (S₁, …, Sₙ)  =  GROUP BY c₁, …, cₘ, gid  over  ⊎ⱼ πⱼ(R)

where ``c₁ … cₘ`` are the grouping columns, branch ``πⱼ`` passes the columns of ``Sⱼ`` and
replaces every other ``cᵢ`` with a NULL of its type, and ``gid`` is ``Sⱼ``'s grouping id (bit
``m − i`` set when ``cᵢ`` is not in ``Sⱼ``, as Spark numbers it); a set listed twice also gets
its position, so that its groups stay apart. The union is linear and the aggregate keeps one
state, so the delta rules need nothing new. ``GROUPING(cᵢ)`` and ``GROUPING_ID(…)`` are read
from ``gid``. A group exists while it has rows, so over an empty input there are no rows, even
for the empty set, as in Spark.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from sqlglot import exp

from ivm_core.errors import AnalysisError
from ivm_core.sqltext import DIALECT

GROUPING_ID_COLUMN = "grouping__id"  # Spark's (and Hive's) name of the grouping id


@dataclass(frozen=True)
class GroupingSets:
    """The grouping columns, in Spark's order, and each set as the positions of its columns."""

    columns: tuple[exp.Expression, ...]
    sets: tuple[frozenset[int], ...]

    def grouping_id(self, grouping_set: frozenset[int]) -> int:
        width = len(self.columns)
        return sum(1 << (width - 1 - i) for i in range(width) if i not in grouping_set)

    @property
    def repeated(self) -> bool:
        """Whether some set is listed more than once (its copies need their position)."""
        return len(set(self.sets)) < len(self.sets)

    def branch_key(self, i: int, key: exp.Expression, grouping_set: frozenset[int]) -> exp.Expression:
        """Grouping column ``i`` (``key``) in the branch of ``grouping_set``: itself, or a NULL
        of its type when the set does not hold it."""
        if i in grouping_set:
            return key
        return exp.If(this=exp.false(), true=key.copy(), false=exp.null())

    def value(self, call: exp.Expression, gid: exp.Expression) -> exp.Expression:
        """``GROUPING(c)``, ``GROUPING_ID(…)`` or ``grouping__id`` over the grouping id column."""
        if isinstance(call, exp.Grouping):
            (arg,) = call.expressions
            shift = exp.Literal.number(len(self.columns) - 1 - self._position(arg, call))
            bit = exp.BitwiseAnd(this=exp.paren(exp.BitwiseRightShift(this=gid, expression=shift)),
                                 expression=exp.Literal.number(1))
            return exp.cast(exp.paren(bit), "TINYINT")
        if isinstance(call, exp.GroupingId) and call.expressions:
            texts = [_text(e) for e in call.expressions]
            if texts != [_text(c) for c in self.columns]:
                raise AnalysisError(
                    f"the columns of {call.sql(DIALECT)} are not the grouping columns "
                    f"({', '.join(c.sql(DIALECT) for c in self.columns)}), in that order"
                )
        return gid

    def _position(self, arg: exp.Expression, call: exp.Expression) -> int:
        text = _text(arg)
        for i, column in enumerate(self.columns):
            if _text(column) == text:
                return i
        raise AnalysisError(f"{call.sql(DIALECT)}: {arg.sql(DIALECT)} is not a grouping column")


def is_grouping_call(node: exp.Expression) -> bool:
    return isinstance(node, (exp.Grouping, exp.GroupingId)) or (
        isinstance(node, exp.Column) and not node.table and node.name.lower() == GROUPING_ID_COLUMN
    )


def expand(group: exp.Group | None) -> GroupingSets | None:
    """The grouping sets of a ``GROUP BY`` that has ``ROLLUP``, ``CUBE`` or ``GROUPING SETS``
    (None for a plain one). Items combine as Spark combines them: ``GROUP BY a, ROLLUP(b, c)``
    is every set of ``ROLLUP(b, c)`` with ``a`` added; ``GROUP BY a, b WITH ROLLUP`` is
    ``ROLLUP(a, b)``; ``GROUP BY a, b GROUPING SETS (…)`` lists its sets over ``a, b``."""
    if group is None:
        return None
    items = list(group.expressions)
    if group.args.get("totals"):
        raise AnalysisError("GROUP BY … WITH TOTALS is not Spark SQL")
    with_rollup, with_cube = bool(group.args.get("rollup")), bool(group.args.get("cube"))
    listed = group.args.get("grouping_sets") or []
    if not (with_rollup or with_cube or listed or any(isinstance(i, (exp.Rollup, exp.Cube, exp.GroupingSets))
                                                     for i in items)):
        return None
    columns: list[exp.Expression] = []

    def position(e: exp.Expression) -> int:
        text = _text(e)
        for i, column in enumerate(columns):
            if _text(column) == text:
                return i
        columns.append(e)
        return len(columns) - 1

    if listed:  # GROUP BY a, b GROUPING SETS ((a, b), (a), ()): a, b name the grouping columns
        for e in items:
            position(e)
        per_item = [_listed_sets(g, position) for g in listed]
    elif with_rollup or with_cube:
        positions = [position(e) for e in items]
        per_item = [_rollup(positions) if with_rollup else _cube(positions)]
    else:
        per_item = [_item_sets(i, position) for i in items]
    sets = [frozenset().union(*combination) for combination in itertools.product(*per_item)]
    return GroupingSets(tuple(columns), tuple(sets))


def _item_sets(item: exp.Expression, position) -> list[frozenset[int]]:
    if isinstance(item, exp.Rollup):
        return _rollup([position(e) for e in item.expressions])
    if isinstance(item, exp.Cube):
        return _cube([position(e) for e in item.expressions])
    if isinstance(item, exp.GroupingSets):
        return _listed_sets(item, position)
    return [frozenset({position(item)})]


def _listed_sets(item: exp.GroupingSets, position) -> list[frozenset[int]]:
    out = []
    for member in item.expressions:
        if isinstance(member, exp.Tuple):
            out.append(frozenset(position(e) for e in member.expressions))
        elif isinstance(member, exp.Paren):
            out.append(frozenset({position(member.this)}))
        else:
            out.append(frozenset({position(member)}))
    return out


def _rollup(positions: list[int]) -> list[frozenset[int]]:
    return [frozenset(positions[:n]) for n in range(len(positions), -1, -1)]


def _cube(positions: list[int]) -> list[frozenset[int]]:
    """Every subset, in Spark's order: the full set first, the empty set last."""
    width = len(positions)
    return [
        frozenset(p for bit, p in enumerate(positions) if not mask & (1 << (width - 1 - bit)))
        for mask in range(1 << width)
    ]


def _text(e: exp.Expression) -> str:
    return e.sql(DIALECT)
