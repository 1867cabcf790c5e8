"""A correlated scalar subquery whose value is not NULL over no rows: ``COUNT(*)``, ``COUNT(x)``,
and expressions over them (TPC-DS q41's ``(SELECT count(*) FROM item WHERE i_manufact =
i1.i_manufact AND …) > 0``) — the "count bug": a row of ``R`` that no row of ``S`` matches gets
``COUNT`` = 0, where the left join of ``subqueries`` gives a missing group NULL. So the
aggregates are columns of the derived table, and the value is computed on each outer row, each
``COUNT`` given its value over no rows when the row found no group::

    (SELECT f(a₁(…), …, aₘ(…)) FROM S WHERE k₁ = e₁ ∧ … ∧ θ_s)
        = f(v₁, …, vₘ)  over  R ⟕_{e₁ = k₁ ∧ …} γ_{k₁…; a₁ AS g₁, …, aₘ AS gₘ}(σ_{θ_s}(S))

    vᵢ = coalesce(gᵢ, 0)   aᵢ a COUNT: 0 over no rows, never NULL over a group's
    vᵢ = gᵢ                aᵢ a SUM, AVG, MIN or MAX: NULL over no rows, as a missing group's

This is Spark's own ``RewriteCorrelatedScalarSubquery``: a missing group's value is ``f`` with
every aggregate replaced by its value over no rows. ``f`` combines the aggregates and literals
by any deterministic expression (``coalesce``, ``CASE``, arithmetic, casts): it is evaluated on
the same values, of the same types, as in the subquery. Its join is always a left join: a row
with no group has a value (0 > 0 is false, ``0 = 0`` is true), so a ``WHERE`` over it does not
drop it as it drops a NULL.
"""

from __future__ import annotations

from sqlglot import exp

from ivm_core.plan import own_scope
from ivm_core.sqltext import replace_top_down

NULL_ON_EMPTY = (exp.Sum, exp.Avg, exp.Min, exp.Max)
ZERO_ON_EMPTY = (exp.Count,)


def counts_on_empty(value: exp.Expr) -> bool:
    """Whether ``value`` is built as above — aggregates ``COUNT``, ``SUM``, ``AVG``, ``MIN``,
    ``MAX`` (at least one ``COUNT``), literals and expressions over them, no column outside an
    aggregate, no window or query of its own — and so can be computed on the outer row."""
    aggregates = _aggregates(value)
    if not any(isinstance(a, ZERO_ON_EMPTY) for a in aggregates):
        return False
    if any(not isinstance(a, ZERO_ON_EMPTY + NULL_ON_EMPTY) for a in aggregates):
        return False
    inside = {id(n) for a in aggregates for n in a.walk()}
    return not any(
        id(n) not in inside and isinstance(n, (exp.Column, exp.Star, exp.Window, exp.Query, exp.Filter))
        for n in own_scope(value)
    )


def _aggregates(value: exp.Expr) -> list[exp.AggFunc]:
    """The outermost aggregate calls of ``value``."""
    found: list[exp.AggFunc] = []

    def visit(node: exp.Expr) -> None:
        if isinstance(node, exp.AggFunc):
            found.append(node)
            return
        for child in node.iter_expressions():
            visit(child)

    visit(value)
    return found


def split(value: exp.Expr, alias: str, first: int) -> tuple[list[tuple[str, exp.Expr]], exp.Expr]:
    """The aggregates of ``value`` as columns of the derived table ``alias`` (their names,
    ``_ivm_value<first>``, … and calls), and ``f(v₁, …)`` over those columns."""
    columns: list[tuple[str, exp.Expr]] = []
    names: dict[str, str] = {}

    def replace(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.AggFunc):
            return node
        text = node.sql()
        if text not in names:
            names[text] = f"_ivm_value{first + len(columns)}"
            columns.append((names[text], node.copy()))
        column = exp.column(names[text], table=alias)
        if isinstance(node, ZERO_ON_EMPTY):
            return exp.Coalesce(this=column, expressions=[exp.Literal.number(0)])
        return column

    outer = replace_top_down(value.copy(), replace)
    return columns, exp.Paren(this=outer)
