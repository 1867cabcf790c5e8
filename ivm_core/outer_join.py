"""Outer, semi and anti joins, lowered onto the inner join and the aggregate (Feldera's lowering).

For a preserved side ``P``, the other side ``O`` and the whole ``ON`` condition ``θ``::

    J        = P ⋈θ O                                    the inner join
    n_P(p)   = copies of the row p in P                  per distinct row of P (its used columns)
    n_J(p)   = rows of J whose P-part is p               0 exactly when p matches no row of O
    P ▷θ O   = p with weight n_P(p) where n_J(p) = 0     unmatched rows (anti join)
    P ⋉θ O   = p with weight n_P(p) where n_J(p) > 0     matched rows (semi join)

    P ⟕θ O   = J ⊎ ((P ▷θ O) × NULLs for O's columns)
    P ⟗θ O   = J ⊎ ((P ▷θ O) × NULLs) ⊎ (NULLs × (O ▷θ P))

``n_P`` and ``n_J`` are the two counts of one ``Aggregate`` over ``P ⊎ J`` grouped by P's
columns, whose row weight (``multiplicity``) is the formula above: its state is one row per
distinct preserved row with both counts, so a change of either side moves exactly the rows
whose match count crosses zero, without a rescan (the aggregate rule's −old/+new per touched
group). Grouping by the P columns the query uses (those ``θ`` reads among them) is exact: rows
equal on them match the same rows of ``O``. Rows are grouped as GROUP BY does (NULLs equal).
The inner join ``J`` keeps its own join indexes, so both terms are incremental.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from sqlglot import exp

from ivm_core.plan import Aggregate, Join, Node, Project, UnionAll, copies_per_row, referenced_columns

INNER, LEFT, RIGHT, FULL, SEMI, ANTI = "inner", "left", "right", "full", "semi", "anti"


def matched(preserved: Node, join: Node, used: set[str], fresh: Callable[[], str], aggregate_id: str,
            keep_unmatched: bool) -> tuple[Aggregate, dict[str, str]]:
    """The rows of ``preserved`` with no match in ``join`` (``keep_unmatched``) or with one, as
    an aggregate over ``preserved ⊎ join`` grouped by the preserved columns in ``used``.
    Returns it and the aggregate's column holding each of those preserved columns."""
    keys = [c for c in preserved.columns if c in used] or list(preserved.columns[:1])

    def multiplicity(copies: exp.Column, joined: exp.Column) -> exp.Expr:
        zero = exp.Literal.number(0)
        condition = exp.EQ(this=joined, expression=zero) if keep_unmatched else exp.GT(this=joined, expression=zero)
        return exp.If(this=condition, true=copies, false=zero)

    aggregate = copies_per_row([(preserved, keys), (join, keys)], fresh, aggregate_id, multiplicity)
    return aggregate, dict(zip(keys, aggregate.out_keys))


def padded(aggregate: Aggregate, kept: Mapping[str, str], columns: Sequence[str]) -> Node:
    """The unmatched rows as rows of ``columns`` (the join's): the preserved columns from the
    aggregate (``kept``), NULL for the other side's (and for preserved columns the query does
    not use)."""
    return Project(aggregate, tuple((c, exp.column(kept[c]) if c in kept else exp.null()) for c in columns))


def lower(kind: str, left: Node, right: Node, condition: Sequence[exp.Expression], used: set[str],
          fresh: Callable[[], str], aggregate_id: Callable[[], str]) -> Node:
    """``left <kind> JOIN right ON condition`` as a plan over inner joins and aggregates. The
    result has the columns ``left.columns + right.columns`` (a semi or anti join: ``left``'s)."""
    join = Join((left, right), tuple(condition))
    used = used.union(*(referenced_columns(e) for e in condition))
    if kind in (SEMI, ANTI):
        aggregate, kept = matched(left, join, used, fresh, aggregate_id(), keep_unmatched=kind == ANTI)
        return padded(aggregate, kept, left.columns)
    parts: list[Node] = [join]
    for preserved, is_preserved in ((left, kind in (LEFT, FULL)), (right, kind in (RIGHT, FULL))):
        if is_preserved:
            aggregate, kept = matched(preserved, join, used, fresh, aggregate_id(), keep_unmatched=True)
            parts.append(padded(aggregate, kept, join.columns))
    return UnionAll(tuple(parts), join.columns)
