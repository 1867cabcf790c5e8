"""Top-k: ``ORDER BY … LIMIT k [OFFSET n]`` at the top of a model (TPC-H Q2, Q3, Q10, Q18, Q21)::

    Q  = top(P)                  P: the model without its ORDER BY, LIMIT and OFFSET;
                                 top: the rows at places n+1 … n+k of P in that order
    ΔQ = top(P + ΔP) − top(P)    at most 2k rows

State: P, integrated. When P is projections and filters over one aggregate (Q3, Q10, Q18, Q21)
that aggregate's state is P's state; otherwise the analyzer adds a *bag state* over P (an
aggregate grouping by every column of P, each row's copies as its weight: Q2). A run adds ΔP to
the state (the aggregate rule), then rewrites the target as ``top`` read from the state: the
k + n first distinct rows, each repeated by its copies, their places n+1 … n+k. Reading the
state costs a scan of P's distinct rows (not of the inputs) and a bounded sort. ΔQ, published
when a model reads it, is the new target minus the old.

Ties. ORDER BY need not order every row: of rows tied at the k-th place (or the n-th), any may
be kept — by a full recompute as by a refresh — and which ones may change from run to run (the
swap is published as a change). Every valid result has the same multiset of ORDER BY keys and
is drawn from P, and that is what the checks compare (``violations``): ``ivm_matches_full_refresh``
and ``ivm_check`` accept any valid choice and nothing else. Add a unique column to the ORDER BY
to make the choice deterministic.

The ORDER BY names columns of the SELECT list (by name, alias, position or the selected
expression itself), or is an expression over them (TPC-DS q47's ``ORDER BY sum_sales -
avg_monthly_sales``, q36's ``ORDER BY CASE WHEN lochierarchy = 0 THEN i_category END``): every
column it reads resolves, as Spark resolves a sort over a ``SELECT``, to an output column —
its name or alias first, else the selected column or expression it is — and it holds no
aggregate, window or subquery of its own. Such a key is kept as that expression over the output
columns (``SortKey.expression``), so ``top`` — over P's rows as the state gives them, which are
the output columns — orders by it as the recompute does:

    top(P) = the places n+1 … n+k of P ordered by e₁(out), e₂(out), …

Its ties are ties of the expression's values (two rows tied under ``e`` may be kept either way)
and the checks compare the multiset of its values. LIMIT and OFFSET must be literal row counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import sqlglot
from sqlglot import exp

from ivm_core.errors import UnsupportedSql
from ivm_core.sqltext import DIALECT, WEIGHT, indent, quote, repeated, replace_top_down


PLACE = "_ivm_out"  # an expression key's column ``_ivm_out<i>``: the output column at position i


@dataclass(frozen=True)
class SortKey:
    position: int  # of the output column (of the first one the expression reads, for an expression)
    descending: bool
    nulls_first: bool
    # an expression over the output columns, each read as ``_ivm_out<position>`` (None: the column)
    expression: exp.Expr | None = None

    def sql(self, columns: Sequence[str], prefix: str = "") -> str:
        """The key over ``columns`` (the output's names), each read as ``prefix`` + its name."""
        if self.expression is None:
            return f"{prefix}{quote(columns[self.position])}"

        table = prefix.rstrip(".") or None

        def named(node: exp.Expr) -> exp.Expr:
            if isinstance(node, exp.Column) and not node.table and node.name.startswith(PLACE):
                name = exp.Identifier(this=columns[int(node.name[len(PLACE):])], quoted=True)
                return exp.Column(this=name, table=exp.to_identifier(table) if table else None)
            return node

        return f"({self.expression.copy().transform(named).sql(DIALECT)})"


@dataclass(frozen=True)
class TopK:
    keys: tuple[SortKey, ...]
    limit: int
    offset: int = 0

    def order_by(self, columns: Sequence[str], prefix: str = "") -> str:
        """The ORDER BY list over ``columns`` (the output's names), NULL placement explicit."""
        return ", ".join(
            f"{k.sql(columns, prefix)} {'DESC' if k.descending else 'ASC'} "
            f"NULLS {'FIRST' if k.nulls_first else 'LAST'}"
            for k in self.keys
        )

    def _range(self) -> str:
        return f"LIMIT {self.limit}" + (f" OFFSET {self.offset}" if self.offset else "")

    def limited(self, rows_sql: str, columns: Sequence[str]) -> str:
        """``top`` of a bag of rows named ``columns`` (a rebuild's)."""
        order = self.order_by(columns)
        return f"SELECT * FROM (\n{indent(rows_sql)}\n) AS _ivm_rows\nORDER BY {order}\n{self._range()}"

    def rows(self, weighted_sql: str, columns: Sequence[str]) -> str:
        """``top`` of a Z-set of distinct rows with positive weights (P read from its state), each
        a row of weight 1: the k + n first rows cover the places wanted, however many copies
        each has."""
        cols = ", ".join(quote(c) for c in columns)
        first = (
            f"SELECT {cols}, {WEIGHT} FROM (\n{indent(weighted_sql)}\n) AS _ivm_p\n"
            f"WHERE {WEIGHT} > 0\nORDER BY {self.order_by(columns)}\nLIMIT {self.limit + self.offset}"
        )
        return (
            f"SELECT {cols}, CAST(1 AS BIGINT) AS {WEIGHT} FROM (\n{indent(first)}\n) AS _ivm_first\n"
            f"{repeated(WEIGHT, '_ivm_a')}\nORDER BY {self.order_by(columns)}\n{self._range()}"
        )

    def violations(self, target: str, pre_limit_sql: str, columns: Sequence[str],
                   normalized: Sequence[str] | None = None) -> str:
        """Rows showing that ``target`` is not a valid ``top`` of the rows of ``pre_limit_sql``
        (P), as ``columns..., target_count, full_refresh_count``: a target row with more copies
        than P has (full_refresh_count: its copies in P), and an ORDER BY key whose copies in the
        target differ from its copies in a recompute of ``top(P)`` (its other columns NULL).
        ``normalized`` is how each column is compared (default: itself)."""
        normalized = list(normalized or [quote(c) for c in columns])
        # an expression key is compared by its value: a column of t and p (and so of f)
        computed = [f"{k.sql(columns)} AS _ivm_sort{i}" for i, k in enumerate(self.keys) if k.expression is not None]
        keys = list(dict.fromkeys(quote(columns[k.position]) if k.expression is None else f"_ivm_sort{i}"
                                  for i, k in enumerate(self.keys)))

        def with_keys(rows: str) -> str:
            return f"SELECT *, {', '.join(computed)} FROM ({rows}) AS _ivm_k" if computed else rows

        def counts(relation: str, by: Sequence[str]) -> str:
            return f"SELECT {', '.join(by)}, count(*) AS _ivm_n FROM {relation} GROUP BY {', '.join(by)}"

        def match(by: Sequence[str], left: str, right: str) -> str:
            return " AND ".join(f"{left}.{c} <=> {right}.{c}" for c in by)

        all_cols = [quote(c) for c in columns]
        target_rows = f"SELECT {', '.join(normalized)} FROM {target}"
        pre_limit_rows = f"SELECT {', '.join(normalized)} FROM (\n{indent(pre_limit_sql)}\n) AS _ivm_pre"
        key_outs = [f"coalesce(tk.{c}, fk.{c}) AS {c}" if c in keys else f"NULL AS {c}" for c in all_cols]
        return (
            f"WITH t AS ({with_keys(target_rows)}),\n"
            f"p AS ({with_keys(pre_limit_rows)}),\n"
            f"f AS (SELECT * FROM p ORDER BY {self.order_by(columns)} {self._range()}),\n"
            f"tn AS ({counts('t', all_cols)}),\npn AS ({counts('p', all_cols)}),\n"
            f"tk AS ({counts('t', keys)}),\nfk AS ({counts('f', keys)})\n"
            f"SELECT {', '.join(f'tn.{c}' for c in all_cols)}, tn._ivm_n AS target_count, "
            f"coalesce(pn._ivm_n, 0) AS full_refresh_count\n"
            f"FROM tn LEFT JOIN pn ON {match(all_cols, 'tn', 'pn')}\nWHERE tn._ivm_n > coalesce(pn._ivm_n, 0)\n"
            f"UNION ALL\n"
            f"SELECT {', '.join(key_outs)}, coalesce(tk._ivm_n, 0), coalesce(fk._ivm_n, 0)\n"
            f"FROM tk FULL OUTER JOIN fk ON {match(keys, 'tk', 'fk')}\nWHERE NOT (tk._ivm_n <=> fk._ivm_n)"
        )


@dataclass(frozen=True)
class Written:
    """A top-level ORDER BY … LIMIT as the model's SQL writes it, not yet resolved to output
    columns (that needs the analysis: ``resolve``)."""

    items: tuple[exp.Ordered, ...]
    select: tuple[exp.Expression, ...]  # the top SELECT's expressions (none for a set operation)
    limit: int
    offset: int

    def resolve(self, output_names: Sequence[str]) -> TopK:
        return TopK(tuple(_sort_key(item, self.select, output_names) for item in self.items), self.limit,
                    self.offset)


def split_top_k(tree: exp.Query) -> tuple[exp.Query, Written | None]:
    """The model's query without its top-level ORDER BY, LIMIT and OFFSET, and what they were
    (None, and the query unchanged, when it has no LIMIT, or a LIMIT but no ORDER BY: the
    analyzer refuses that)."""
    limit, order = tree.args.get("limit"), tree.args.get("order")
    if limit is None or order is None or tree.args.get("fetch") is not None:
        return tree, None
    offset = tree.args.get("offset")
    written = Written(
        items=tuple(order.expressions),
        select=tuple(tree.expressions) if isinstance(tree, exp.Select) else (),
        limit=_count(limit, "LIMIT"),
        offset=_count(offset, "OFFSET") if offset is not None else 0,
    )
    tree = tree.copy()
    for arg in ("order", "limit", "offset"):
        tree.set(arg, None)
    return tree, written


def pre_limit_sql(sql: str) -> tuple[str, Written] | None:
    """The model's SQL without its top-level ORDER BY … LIMIT, and what they were; None when it
    has none (or cannot be parsed)."""
    try:
        tree = sqlglot.parse_one(sql, read=DIALECT)
    except sqlglot.errors.ParseError:
        return None
    if not isinstance(tree, exp.Query):
        return None
    try:
        rest, written = split_top_k(tree)
    except UnsupportedSql:
        return None
    return (rest.sql(dialect=DIALECT), written) if written is not None else None


def _count(node: exp.Expression, what: str) -> int:
    value = node.args.get("expression")
    if isinstance(value, exp.Literal) and value.is_int and int(value.this) >= 0:
        return int(value.this)
    raise UnsupportedSql(node.sql(DIALECT), f"{what} of a top-k must be a literal row count")


def _sort_key(item: exp.Ordered, select: Sequence[exp.Expression], names: Sequence[str]) -> SortKey:
    descending, nulls_first = bool(item.args.get("desc")), bool(item.args.get("nulls_first"))
    this = item.this
    if isinstance(this, exp.Literal) and this.is_int:
        position = int(this.this)
        if 1 <= position <= len(names):
            return SortKey(position - 1, descending, nulls_first)
        raise UnsupportedSql(item.sql(DIALECT), f"ORDER BY position {position} is not in the SELECT list")
    column = _output_column(this, select, names)
    if column is not None:
        return SortKey(column, descending, nulls_first)
    expression = _over_outputs(this, select, names)
    read = sorted({int(c.name[len(PLACE):]) for c in expression.find_all(exp.Column)})
    return SortKey(read[0] if read else 0, descending, nulls_first, expression)


def _output_column(this: exp.Expression, select: Sequence[exp.Expression], names: Sequence[str]) -> int | None:
    """The position of the output column ``this`` names, as Spark resolves a sort over a
    ``SELECT``: an unqualified name is an output's name or alias first; else a selected
    expression equal to ``this`` (a qualified column: the selected column of that table)."""
    if isinstance(this, exp.Column) and not this.table:
        found = [i for i, n in enumerate(names) if n.lower() == this.name.lower()]
        if len(found) == 1 or (found and len({select[i].unalias().sql() for i in found if i < len(select)}) <= 1):
            return found[0]
    for i, e in enumerate(select):
        selected = e.unalias()
        if selected == this or (
            isinstance(this, exp.Column) and isinstance(selected, exp.Column)
            and selected.name.lower() == this.name.lower()
            and (not selected.table or selected.table.lower() == this.table.lower())
        ):
            return i
    return None


NOT_OVER_OUTPUTS = (
    "ORDER BY of a top-k (ORDER BY … LIMIT) must name a column of the SELECT list (its name, alias or position, "
    "or the selected expression) or be an expression over such columns"
)


def _over_outputs(this: exp.Expression, select: Sequence[exp.Expression], names: Sequence[str]) -> exp.Expression:
    """``this`` as an expression over the output columns, each read as ``_ivm_out<position>``:
    every part of it that names an output column (``_output_column``; a literal stays itself)
    replaced by it. Refused when a column is left that names none, or it has an aggregate, a
    window or a query of its own (they would be computed over the rows before the SELECT)."""
    def replace(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Literal) or not isinstance(node, exp.Expression):
            return node
        position = _output_column(node, select, names)
        if position is not None:
            return exp.column(f"{PLACE}{position}")
        return node

    expression = replace_top_down(this.copy(), replace)
    for node in expression.walk():
        if (isinstance(node, exp.Column) and not node.name.startswith(PLACE)) or node is None:
            raise UnsupportedSql(this.sql(DIALECT), NOT_OVER_OUTPUTS)
        if isinstance(node, (exp.AggFunc, exp.Window, exp.Query, exp.Star)):
            raise UnsupportedSql(this.sql(DIALECT), NOT_OVER_OUTPUTS)
    return expression
