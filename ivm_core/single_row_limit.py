"""``LIMIT n [OFFSET m]`` without ``ORDER BY`` ending a model whose result has at most one row by
construction (TPC-DS q28, q32, q38, q97: ``SELECT sum(x), count(*) FROM … WHERE … LIMIT 100``)::

    Q  = limit_{n,m}(P)        P: the model without its LIMIT and OFFSET, at most one row
       = P                     when n ≥ 1 and m = 0
       = σ_false(P) = ∅        otherwise (LIMIT 0, or an OFFSET past the one row)
    ΔQ = ΔP                    (or σ_false(ΔP) = ∅)

Which rows a ``LIMIT`` without ``ORDER BY`` keeps depends on the order Spark reads them in —
unless there is at most one: then it keeps that row or none, whatever the order. ``P`` has at
most one row by construction when it is (``at_most_one_row``) a global aggregate (no
``GROUP BY``: exactly one row; a ``HAVING`` filters it), an aggregate without a multiplicity
(``DISTINCT``) over at most one row, filters and projections of such, or an inner (cross) join
of such. Anything else keeps ``UnsupportedSql`` (a full recompute under ``auto``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from ivm_core.errors import UnsupportedSql
from ivm_core.plan import Aggregate, Filter, Join, Node, Project

REFUSED = ("LIMIT in a SELECT depends on row order (without ORDER BY it is maintained only over a result of at "
           "most one row, a global aggregate)")


@dataclass(frozen=True)
class Limit:
    """A top-level ``LIMIT`` (and ``OFFSET``) without ``ORDER BY``, as literal row counts."""

    limit: int
    offset: int

    @property
    def keeps_the_row(self) -> bool:
        return self.limit >= 1 and self.offset == 0

    def applied(self, plan: Node) -> Node:
        """``limit(plan)``: ``plan`` itself, or no row (``σ_false``); refused unless ``plan`` has
        at most one row by construction."""
        if not at_most_one_row(plan):
            raise UnsupportedSql("LIMIT", REFUSED)
        return plan if self.keeps_the_row else Filter(plan, exp.false())


def split_limit(tree: exp.Query) -> tuple[exp.Query, Limit | None]:
    """The model's query without its top-level ``LIMIT`` and ``OFFSET`` when it has a ``LIMIT``
    of literal row counts and no ``ORDER BY`` (a top-k, ``top_k.split_top_k``, is split before),
    and what they were; else the query unchanged and None (the analyzer refuses a ``LIMIT`` it
    still finds)."""
    limit, offset = tree.args.get("limit"), tree.args.get("offset")
    if limit is None or tree.args.get("order") is not None or tree.args.get("fetch") is not None:
        return tree, None
    counts = [_count(limit), _count(offset) if offset is not None else 0]
    if any(c is None for c in counts):
        return tree, None
    tree = tree.copy()
    tree.set("limit", None)
    tree.set("offset", None)
    n, m = counts
    assert n is not None and m is not None
    return tree, Limit(n, m)


def _count(node: exp.Expression) -> int | None:
    value = node.args.get("expression")
    if isinstance(value, exp.Literal) and value.is_int and int(value.this) >= 0:
        return int(value.this)
    return None


def at_most_one_row(plan: Node) -> bool:
    """Whether ``plan`` has at most one row, of weight 1, whatever its inputs hold."""
    if isinstance(plan, Aggregate):
        if plan.is_global:
            return True
        return plan.multiplicity is None and at_most_one_row(plan.child)
    if isinstance(plan, (Filter, Project)):
        return at_most_one_row(plan.child)
    if isinstance(plan, Join):
        return all(at_most_one_row(i) for i in plan.inputs)
    return False

