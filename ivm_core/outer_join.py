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

from typing import Callable, Sequence

from sqlglot import exp

from ivm_core.plan import AggCall, Aggregate, Join, Node, Project, UnionAll

INNER, LEFT, RIGHT, FULL, SEMI, ANTI = "inner", "left", "right", "full", "semi", "anti"


def _int(value: exp.Expression) -> exp.Expression:
    return exp.cast(value, "INT")


def matched(preserved: Node, join: Node, used: set[str], fresh: Callable[[], str], aggregate_id: str,
            keep_unmatched: bool) -> tuple[Aggregate, tuple[str, ...]]:
    """The rows of ``preserved`` with no match in ``join`` (``keep_unmatched``) or with one, as
    an aggregate over ``preserved ⊎ join`` grouped by the preserved columns in ``used``.
    Returns it and, per preserved column, the aggregate's column holding it (or '' when the
    column is not used, and so not kept)."""
    keys = [c for c in preserved.columns if c in used] or list(preserved.columns[:1])
    sides = []
    for plan, tags in ((preserved, (exp.Literal.number(1), exp.null())),
                       (join, (exp.null(), exp.Literal.number(1)))):
        exprs = [(fresh(), exp.column(k)) for k in keys] + [(fresh(), _int(t)) for t in tags]
        sides.append(Project(plan, tuple(exprs)))
    union_keys = tuple(fresh() for _ in keys)
    tag_preserved, tag_joined = fresh(), fresh()
    union = UnionAll(tuple(sides), union_keys + (tag_preserved, tag_joined))
    copies, joined = fresh(), fresh()
    n_copies, n_joined = exp.column(copies), exp.column(joined)
    no_match = exp.EQ(this=n_joined, expression=exp.Literal.number(0))
    condition = no_match if keep_unmatched else exp.GT(this=n_joined, expression=exp.Literal.number(0))
    out_keys = tuple(fresh() for _ in keys)
    aggregate = Aggregate(
        union,
        union_keys,
        out_keys,
        (AggCall(copies, "count", tag_preserved), AggCall(joined, "count", tag_joined)),
        aggregate_id,
        multiplicity=exp.If(this=condition, true=n_copies, false=exp.Literal.number(0)),
    )
    by_column = dict(zip(keys, out_keys))
    return aggregate, tuple(by_column.get(c, "") for c in preserved.columns)


def padded(aggregate: Aggregate, kept: Sequence[str], columns: Sequence[str], preserved: Sequence[str]) -> Node:
    """The unmatched rows as rows of ``columns`` (the join's): the preserved columns from the
    aggregate, NULL for the other side's (and for preserved columns the query does not use)."""
    source = dict(zip(preserved, kept))
    exprs = tuple((c, exp.column(source[c]) if source.get(c) else exp.null()) for c in columns)
    return Project(aggregate, exprs)


def lower(kind: str, left: Node, right: Node, condition: Sequence[exp.Expression], used: set[str],
          fresh: Callable[[], str], aggregate_id: Callable[[], str]) -> Node:
    """``left <kind> JOIN right ON condition`` as a plan over inner joins and aggregates. The
    result has the columns ``left.columns + right.columns`` (a semi or anti join: ``left``'s)."""
    join = Join((left, right), tuple(condition))
    used = used | {c for e in condition for c in (col.name for col in e.find_all(exp.Column))}
    if kind in (SEMI, ANTI):
        aggregate, kept = matched(left, join, used, fresh, aggregate_id(), keep_unmatched=kind == ANTI)
        return padded(aggregate, kept, left.columns, left.columns)
    parts: list[Node] = [join]
    for preserved, is_preserved in ((left, kind in (LEFT, FULL)), (right, kind in (RIGHT, FULL))):
        if is_preserved:
            aggregate, kept = matched(preserved, join, used, fresh, aggregate_id(), keep_unmatched=True)
            parts.append(padded(aggregate, kept, join.columns, preserved.columns))
    return UnionAll(tuple(parts), join.columns)
