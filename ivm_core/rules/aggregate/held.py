"""The group state held by the target: an aggregate that is the model's result keeps no copy of
its groups.

The group state of ``SELECT k, count(*) AS n, sum(x) AS s, count(y) AS c ... GROUP BY k`` is,
per group, ``(k, _ivm_count, s_s, s_n, c_s, c_n)``. The target's row ``(k, n, s, c)`` gives
all of it but ``s_n`` (how many values of ``x`` are not NULL) — and when every value is, and
the sum is not NULL by overflow, the row determines the state::

    state(k) = (k, n, s, n, 0, c)        when the group is regular: s_n = n and s is not NULL

so a read of the group state is the target, its columns renamed. The target's update by the
model's change (the touched groups' old rows deleted, their new rows inserted) is the update of
the group state: a run writes one table less, and a rebuild writes the target from the groups
it computes, with no state table to write and copy.

Every group must stay regular: the statements that compute a group's new state (a rebuild's
groups, a run's change) fail with ``IRREGULAR_GROUP`` when one would not be (``guarded``); the
driver then undoes the run and rebuilds the model with its group state in a table of its own
(``Layout.groups_apart``, recorded in the log with the types).

Held when the aggregate is the model's result (its columns passed through by name, no ``HAVING``,
no ``LIMIT``, one row per group), has group keys and a ``count(*)``, and every call is ``count(*)``,
``COUNT(x)`` or ``SUM(x)`` over an integer or a decimal.
"""

from __future__ import annotations

from typing import Mapping

from ivm_core.errors import IRREGULAR_GROUP
from ivm_core.plan import Aggregate, AggCall, Node, Project
from ivm_core.sqltext import indent, is_decimal, quote

TARGET = "target"  # what a state renderer names the model's target by
# the types' entry (``Program.types``, recorded in the log) of an aggregate whose group state is
# kept apart, after a group was found irregular: ``<aggregate id>__groups_apart`` = ``true``
GROUPS_APART = "__groups_apart"
HELD_FUNCTIONS = ("count_star", "count", "sum")


def target_columns(plan: Node, output_names: tuple[str, ...]) -> tuple[Aggregate, dict[str, str]] | None:
    """The aggregate the target may hold the group state of, and the target's column of each of
    its columns (its output names by position), when the plan is that aggregate or a projection
    passing every one of its columns through by name; else None."""
    agg, exprs = plan, None
    if isinstance(plan, Project):
        agg, exprs = plan.child, dict(plan.exprs)
    if not isinstance(agg, Aggregate):
        return None
    positions = {column: i for i, column in enumerate(plan.columns)}
    if exprs is not None:  # a projection: each aggregate column by the first output passing it on
        positions = {}
        for i, column in enumerate(plan.columns):
            e = exprs.get(column)
            if e is not None and e.__class__.__name__ == "Column" and e.name in agg.columns:
                positions.setdefault(e.name, i)
    if len(output_names) != len(plan.columns) or any(c not in positions for c in agg.columns):
        return None
    return agg, {c: output_names[positions[c]] for c in agg.columns}


def shape_holds(agg: Aggregate) -> bool:
    """Whether the aggregate's shape lets the target hold its group state (types aside)."""
    return (bool(agg.keys) and not agg.is_global and agg.multiplicity is None and not agg.keeps_rows
            and all(c.func in HELD_FUNCTIONS for c in agg.aggs)
            and any(c.func == "count_star" for c in agg.aggs))


def sum_type_holds(sum_arg_type: str) -> bool:
    """Whether a SUM over an argument of this Spark type is kept exactly by the target: an
    integer's (it wraps as the state does) or a decimal's (a sum Spark's type cannot hold is NULL,
    and its group an exception); not a float's, whose state keeps its values."""
    t = sum_arg_type.lower()
    return t in ("tinyint", "smallint", "int", "integer", "bigint", "byte", "short", "long") or is_decimal(t)


class HeldGroups:
    """The SQL of a group state held by the target: ``columns`` maps each aggregate column
    (group key output, call name) to the target's; ``state_columns`` are the group state's
    (``Layout.group_state_columns``); ``sum_types`` each SUM call's Spark result type."""

    def __init__(self, agg: Aggregate, columns: Mapping[str, str], state_columns: list[str],
                 sum_types: Mapping[str, str]):
        self.agg = agg
        self.columns = dict(columns)
        self.state_columns = state_columns
        self.sum_types = dict(sum_types)
        self.keys = list(agg.keys)
        self.count_column = next(columns[c.name] for c in agg.aggs if c.func == "count_star")

    @property
    def linear_calls(self) -> list[AggCall]:
        return [c for c in self.agg.aggs if c.func in ("sum", "count")]

    def _from_target(self, t: str) -> dict[str, str]:
        """Each group state column's value from a target row (alias ``t``) of a regular group."""
        values = {k: f"{t}.{quote(self.columns[o])}" for k, o in zip(self.agg.keys, self.agg.out_keys)}
        count = f"CAST({t}.{quote(self.count_column)} AS BIGINT)"
        values["_ivm_count"] = count
        for c in self.linear_calls:
            column = f"{t}.{quote(self.columns[c.name])}"
            if c.func == "sum":
                values[c.name + "_s"], values[c.name + "_n"] = column, count
            else:  # COUNT(x): its count is the state's _n, its _s is 0
                values[c.name + "_s"], values[c.name + "_n"] = "CAST(0 AS BIGINT)", f"CAST({column} AS BIGINT)"
        return values

    def read(self, target: str) -> str:
        """The group state (a relation): the target's rows renamed."""
        values = self._from_target("t")
        cols = ", ".join(f"{values[c]} AS {quote(c)}" for c in self.state_columns)
        return f"(SELECT {cols} FROM {target} AS t)"

    def irregular(self, r: str) -> str:
        """Whether a group state row (alias ``r``) is one its target row would not determine: a
        SUM with a NULL value in the group, or NULL by overflow."""
        parts = []
        for c in self.linear_calls:
            if c.func == "sum":
                s, n = f"{r}.{quote(c.name + '_s')}", f"{r}.{quote(c.name + '_n')}"
                parts.append(f"{n} <> {r}.`_ivm_count` OR CAST({s} AS {self.sum_types[c.name]}) IS NULL")
        return "(" + " OR ".join(parts) + ")" if parts else "FALSE"

    def guarded(self, groups_sql: str) -> str:
        """``groups_sql`` (group state rows), failing with ``IRREGULAR_GROUP`` at a group with
        rows that is irregular (one with none is a group the change removes)."""
        if self.irregular("r") == "FALSE":
            return groups_sql
        return (f"SELECT * FROM (\n{indent(groups_sql)}\n) AS r\n"
                f"WHERE CASE WHEN r.`_ivm_count` <> 0 AND {self.irregular('r')} "
                f"THEN CAST(raise_error('{IRREGULAR_GROUP}') AS BOOLEAN) ELSE TRUE END")
