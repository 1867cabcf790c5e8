"""Subqueries in expressions, lowered to joins so the join rules maintain them (as Spark's
``RewritePredicateSubquery`` and ``RewriteCorrelatedScalarSubquery`` do).

**Predicate subqueries** — ``EXISTS``, ``NOT EXISTS``, ``IN``, ``NOT IN`` conditions AND-ed at
the top of a ``WHERE`` — are the semi and anti joins of ``outer_join``. For a query over ``R``
whose ``WHERE`` has a subquery over ``S`` with conjuncts ``θ_c`` that read ``R``'s columns (the
correlation) and ``θ_s`` that do not::

    EXISTS (SELECT … FROM S WHERE θ_c AND θ_s)        R ⋉_{θ_c} σ_{θ_s}(S)
    NOT EXISTS (…)                                   R ▷_{θ_c} σ_{θ_s}(S)
    (x₁…xₙ) IN (SELECT v₁…vₙ FROM S WHERE …)          R ⋉_{θ_c ∧ ⋀ xᵢ = vᵢ} σ_{θ_s}(S)
    (x₁…xₙ) NOT IN (SELECT v₁…vₙ FROM S WHERE …)      R ▷_{θ_c ∧ ⋀ (xᵢ = vᵢ ∨ (xᵢ = vᵢ) IS NULL)} σ_{θ_s}(S)

``NOT IN`` is the null-aware anti join: an unknown comparison counts as a match, so a NULL
among the values removes every row, and a NULL probe is removed unless the subquery is empty —
SQL's three-valued ``NOT IN`` in a ``WHERE``. ``IN`` needs no such care: a row is kept only
when some comparison is true. The subquery's rows are not deduplicated first: a semi or anti
join keeps each row of ``R`` once (or not) whatever the number of its matches. An uncorrelated
``IN`` whose subquery's rows are distinct (``SELECT DISTINCT``, or a ``GROUP BY`` whose keys it
selects: TPC-H Q18's orders over 300 units) matches each row of ``R`` at most once, so it is
the inner join ``R ⋈_{⋀ xᵢ = vᵢ} S'``, which keeps no presence count per row of ``R``.

**Scalar subqueries** (in ``WHERE``, at any depth of its expressions, and in the ``SELECT`` list
of a query that does not aggregate) are a column of a derived table joined so that every row of
``R`` gets exactly one row::

    (SELECT agg(…) FROM S WHERE θ_s)                 R × γ_{agg}(σ_{θ_s}(S))         one row, always
    (SELECT f(agg(…)) FROM S WHERE k₁ = e₁ ∧ … ∧ θ_s)  R ⟕_{e₁ = k₁ ∧ …} γ_{k₁…; f(agg)}(σ_{θ_s}(S))

An uncorrelated one that is a global aggregate has exactly one row (never Spark's "more than
one row" error); any other is counted, its value NULL over no rows and its run failing over more
than one (``scalar_one_row``). A correlated one is grouped by the inner sides ``kᵢ`` of its correlation
equalities: at most one group matches a row of ``R``, and a row with no group gets NULL —
which is the subquery's value over no rows when ``f`` is NULL there: ``f`` combining ``SUM``,
``AVG``, ``MIN``, ``MAX`` and literals with arithmetic and casts. A ``COUNT`` is 0 on no rows
(the "count bug"): such an ``f`` is computed on the outer row from its aggregates, each
``COUNT`` 0 where no group matched (``scalar_count``). A NULL ``eᵢ`` matches no group, as
``kᵢ = NULL`` matches no row. The correlation may be repeated in every disjunct of an ``OR``
(``factored``).

**In ``HAVING``** a subquery sees the grouped rows: the query is first rewritten so the
aggregates and columns ``HAVING`` reads are columns of the grouped query, read by an outer
query whose ``WHERE`` is the ``HAVING`` (``having_as_where``; TPC-H Q11).

Each subquery becomes a derived table of ``FROM`` (``_ivm_subqueryN``, ``_ivm_scalarN``) whose
columns are the values (``_ivm_valueI``) and the columns of ``S`` its correlation reads
(``_ivm_keyI``). A correlated subquery must be a plain ``SELECT … FROM … WHERE`` whose
correlation is in its own ``WHERE``; anything else keeps ``UnsupportedSql`` with the reason.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from sqlglot import exp

from ivm_core import scalar_count, scalar_one_row
from ivm_core.errors import UnsupportedSql
from ivm_core.plan import conjuncts, own_scope
from ivm_core.sqltext import DIALECT

ANYWHERE_ELSE = "EXISTS and IN subqueries are maintained as conditions AND-ed at the top of WHERE or HAVING only"


@dataclass
class SubqueryJoins:
    """Lowers the subqueries in the expressions of one model's ``SELECT``s to joins (the derived
    tables' names are unique in the model)."""

    counter: itertools.count = field(default_factory=itertools.count)

    def lower(self, select_list: list[exp.Expr], where: list[exp.Expr], outer_aliases: set[str],
              aggregated: bool) -> tuple[list[exp.Expr], list[exp.Expr], list[exp.Join]]:
        """The ``SELECT`` list and ``WHERE`` conjuncts of a query over the ``FROM`` items
        ``outer_aliases``, with each scalar subquery replaced by a column and each
        ``EXISTS``/``IN`` conjunct removed, and the joins to append after those items."""
        scalar_joins: list[exp.Join] = []
        where = [self._scalars(c, outer_aliases, scalar_joins, in_where=True) for c in where]
        if aggregated and any(_scalar_subqueries(e) for e in select_list):
            raise UnsupportedSql(
                next(q for e in select_list for q in _scalar_subqueries(e)).sql(DIALECT),
                "a scalar subquery in the SELECT list of an aggregate query is not supported yet",
            )
        select_list = [self._scalars(e, outer_aliases, scalar_joins) for e in select_list]
        kept: list[exp.Expr] = []
        joins: list[exp.Join] = []
        for conjunct in where:
            negated = isinstance(conjunct, exp.Not)
            inner = conjunct.this.unnest() if negated else conjunct
            if isinstance(inner, exp.Exists):
                joins.append(self._join(inner.this, None, negated, outer_aliases))
            elif isinstance(inner, exp.In) and inner.args.get("query") is not None:
                probe = inner.this
                probes = list(probe.expressions) if isinstance(probe, exp.Tuple) else [probe]
                joins.append(self._join(inner.args["query"], probes, negated, outer_aliases))
            else:
                kept.append(conjunct)
        return select_list, kept, scalar_joins + joins

    def _scalars(self, expression: exp.Expr, outer_aliases: set[str], joins: list[exp.Join],
                 in_where: bool = False) -> exp.Expr:
        if not _scalar_subqueries(expression):
            return expression
        expression = expression.copy()
        for subquery in _scalar_subqueries(expression):
            null_rejected = in_where and _null_rejecting(subquery, expression)
            join, column = self._scalar_join(subquery.this, outer_aliases, null_rejected)
            joins.append(join)
            if subquery is expression:
                return column
            subquery.replace(column)
        return expression

    def _scalar_join(self, query: exp.Expr, outer_aliases: set[str],
                     null_rejected: bool) -> tuple[exp.Join, exp.Expr]:
        """The join giving each outer row the subquery's value, and the column holding it (an
        expression over the derived table's columns for a COUNT's: ``scalar_count``). When
        the ``WHERE`` drops a row whose value is NULL (``null_rejected``), a row with no group
        needs no NULL: the correlated join is inner."""
        alias = f"_ivm_scalar{next(self.counter)}"
        if not isinstance(query, exp.Select) or len(query.selects) != 1:
            raise UnsupportedSql(query.sql(DIALECT), "a scalar subquery must be one SELECT of one column")
        _refuse_farther(query, outer_aliases)
        value = query.selects[0].unalias()
        column = exp.column("_ivm_value0", table=alias)
        if not _outer_references(query, outer_aliases):
            grouped = query.args.get("group") is not None or query.args.get("having") is not None
            if grouped or not value.find(exp.AggFunc) or query.args.get("distinct") is not None:
                # at most one row by its data only: counted, and more than one fails (scalar_one_row)
                derived = scalar_one_row.counted(query, alias)
            else:  # a global aggregate: exactly one row
                derived = query.copy()
            return exp.Join(this=_derived(derived, alias, ["_ivm_value0"]), kind="CROSS"), column
        local, correlated = _split_correlation(query, outer_aliases)
        counting = scalar_count.counts_on_empty(value)  # COUNT: 0 over no rows (scalar_count)
        if not counting and not _null_on_empty(value):
            raise UnsupportedSql(
                value.sql(DIALECT),
                "a correlated scalar subquery's value must be SUM, AVG, MIN or MAX combined by arithmetic "
                "(NULL over no rows, as a missing group is), or an expression over COUNT, SUM, AVG, MIN, MAX "
                "and literals; others are not supported yet",
            )
        own = source_aliases(query)
        outer = outer_aliases - own
        keys: list[exp.Expr] = []
        probes: list[exp.Expr] = []
        for c in correlated:
            sides = (c.this, c.expression) if isinstance(c, exp.EQ) else ()
            tables = [{col.table.lower() for col in _own_columns(side)} for side in sides]
            if len(sides) == 2 and tables[0] and tables[1] and not tables[0] & outer and tables[1] <= outer:
                keys.append(sides[0])
                probes.append(sides[1])
            elif len(sides) == 2 and tables[0] and tables[1] and not tables[1] & outer and tables[0] <= outer:
                keys.append(sides[1])
                probes.append(sides[0])
            else:
                raise UnsupportedSql(
                    c.sql(DIALECT),
                    "a correlated scalar subquery must be correlated by equalities of its columns with the "
                    "outer query's; others are not supported yet",
                )
        values: list[tuple[str, exp.Expr]] = [("_ivm_value0", value)]
        result: exp.Expr = column
        if counting:
            values, result = scalar_count.split(value, alias, 0)
        derived = query.copy()
        derived.set("expressions", [k.copy() for k in keys] + [v.copy() for _, v in values])
        derived.set("where", exp.Where(this=exp.and_(*[c.copy() for c in local])) if local else None)
        derived.set("group", exp.Group(expressions=[k.copy() for k in keys]))
        names = [f"_ivm_key{i}" for i in range(len(keys))] + [name for name, _ in values]
        on = exp.and_(*[exp.EQ(this=p.copy(), expression=exp.column(n, table=alias)) for p, n in zip(probes, names)])
        inner = null_rejected and not counting  # a row with no group has a value: never dropped as NULL
        return exp.Join(this=_derived(derived, alias, names), side=None if inner else "LEFT", on=on), result

    def _join(self, query: exp.Expr, probes: list[exp.Expr] | None, anti: bool, outer_aliases: set[str]) -> exp.Join:
        alias = f"_ivm_subquery{next(self.counter)}"
        if isinstance(query, exp.Subquery):
            query = query.this
        if isinstance(query, exp.Select):
            _refuse_farther(query, outer_aliases)
        correlated = isinstance(query, exp.Select) and bool(_outer_references(query, outer_aliases))
        condition: list[exp.Expr] = []
        derived: exp.Query
        if isinstance(query, exp.Select) and correlated:
            derived, correlation = _decorrelate(query, outer_aliases, alias, with_values=probes is not None)
            condition += correlation
        elif isinstance(query, exp.Query):
            derived = query.copy()
        else:
            raise UnsupportedSql(query.sql(DIALECT), "a subquery must be a query")
        width = len(derived.selects)
        if probes is not None:
            if correlated:
                width = len(probes)  # the derived table selects the values, then the keys
            if width != len(probes):
                raise UnsupportedSql(query.sql(DIALECT), f"IN compares {len(probes)} value(s) with {width} column(s)")
            for i, probe in enumerate(probes):
                equal = exp.EQ(this=probe.copy(), expression=exp.column(f"_ivm_value{i}", table=alias))
                unknown = exp.Is(this=exp.Paren(this=equal.copy()), expression=exp.null())
                condition.append(exp.Paren(this=exp.or_(equal, unknown)) if anti else equal)
        values = len(probes or [])
        names = [f"_ivm_value{i}" if i < values else f"_ivm_key{i - values}" for i in range(len(derived.selects))]
        if probes is not None and not anti and not correlated and _distinct_rows(derived):
            # each outer row matches at most one row: the semi join is the inner join (no
            # per-row presence counts to keep)
            return exp.Join(this=_derived(derived, alias, names), on=exp.and_(*condition))
        return exp.Join(
            this=_derived(derived, alias, names),
            side="LEFT",
            kind="ANTI" if anti else "SEMI",
            on=exp.and_(*condition) if condition else None,
        )


def _distinct_rows(query: exp.Expr) -> bool:
    """Whether ``query``'s rows are distinct: a ``SELECT DISTINCT``, or a ``GROUP BY`` (no grouping
    sets) whose every expression it selects."""
    if not isinstance(query, exp.Select):
        return False
    distinct = query.args.get("distinct")
    if distinct is not None:
        return distinct.args.get("on") is None
    group = query.args.get("group")
    if group is None or not group.expressions or any(group.args.get(k) for k in ("grouping_sets", "cube", "rollup")):
        return False
    selected = {s.unalias().sql(DIALECT) for s in query.selects}
    return all(key.sql(DIALECT) in selected for key in group.expressions)


def having_as_where(select: exp.Select) -> exp.Select:
    """``SELECT items FROM … GROUP BY … HAVING h`` as ``SELECT items' FROM (SELECT items, e₁ AS
    _ivm_having0, … FROM … GROUP BY …) AS _ivm_grouped WHERE h'``: the aggregates and columns
    ``eᵢ`` that ``h`` reads outside its subqueries become columns of the grouped query, so a
    subquery in ``h`` is one in a ``WHERE`` (lowered as above)."""
    names = [item.alias_or_name for item in select.expressions]
    if len({n.lower() for n in names}) != len(names):
        raise UnsupportedSql(
            select.sql(DIALECT), "a subquery in HAVING with repeated output names is not supported yet"
        )
    having = select.args["having"].this.copy()
    own = source_aliases(select)
    for query in having.find_all(exp.Select):
        if any(c.table.lower() in own - source_aliases(query) for c in _own_columns(query)):
            raise UnsupportedSql(query.sql(DIALECT), "a correlated subquery in HAVING is not supported yet")
    grouped = select.copy()
    grouped.set("having", None)
    grouped.set("order", None)
    grouped.set("distinct", None)
    read: dict[str, str] = {}

    def over_grouped(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Query):
            return node
        if isinstance(node, (exp.AggFunc, exp.Column)):
            text = node.sql(DIALECT)
            if text not in read:
                read[text] = f"_ivm_having{len(read)}"
                grouped.append("expressions", exp.alias_(node.copy(), read[text]))
            return exp.column(read[text], table="_ivm_grouped")
        return node

    condition = _replace_own(having, over_grouped)
    outer = exp.select(*[exp.column(n, table="_ivm_grouped").as_(n) for n in names])
    outer = outer.from_(exp.Subquery(this=grouped, alias=exp.TableAlias(this=exp.to_identifier("_ivm_grouped"))))
    outer.set("where", exp.Where(this=condition))
    outer.set("distinct", select.args.get("distinct"))
    return outer


def _replace_own(expression: exp.Expr, replace) -> exp.Expr:
    """``expression`` with ``replace`` applied top down to its own scope: a node it replaces is
    not descended into, nor is a nested query."""
    replaced = replace(expression)
    if replaced is not expression or isinstance(expression, exp.Query):
        return replaced
    for child in list(expression.iter_expressions()):
        new = _replace_own(child, replace)
        if new is not child:
            child.replace(new)
    return expression


def _derived(query: exp.Expr, alias: str, columns: list[str]) -> exp.Subquery:
    """``(query) AS alias(columns…)``."""
    table_alias = exp.TableAlias(this=exp.to_identifier(alias), columns=[exp.to_identifier(c) for c in columns])
    return exp.Subquery(this=query, alias=table_alias)


def _scalar_subqueries(expression: exp.Expr) -> list[exp.Subquery]:
    """The scalar subqueries of ``expression``'s own scope (not an ``IN``'s list)."""
    return [
        node for node in own_scope(expression)
        if isinstance(node, exp.Subquery) and not (isinstance(node.parent, exp.In) and node.arg_key == "query")
    ]


def _refuse_farther(select: exp.Select, outer_aliases: set[str]) -> None:
    own = source_aliases(select)
    farther = [c for c in _own_columns(select) if c.table.lower() not in own | outer_aliases]
    if farther:
        raise UnsupportedSql(
            select.sql(DIALECT),
            f"{farther[0].sql(DIALECT)} refers to a query two or more levels out; not supported yet",
        )


COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Not)


def _null_rejecting(subquery: exp.Expr, conjunct: exp.Expr) -> bool:
    """Whether the ``WHERE`` conjunct is NULL (drops the row) when ``subquery`` is: every
    expression from it up to the conjunct is an arithmetic operator, a cast, a comparison or
    NOT."""
    node: exp.Expr | None = subquery
    while node is not None and node is not conjunct:
        node = node.parent
        if not isinstance(node, STRICT + COMPARISONS):
            return False
    return node is conjunct


NULL_ON_EMPTY = (exp.Sum, exp.Avg, exp.Min, exp.Max)
STRICT = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Neg, exp.Paren, exp.Cast)


def _null_on_empty(value: exp.Expr) -> bool:
    """Whether ``value`` is NULL when its aggregates see no rows: built from SUM/AVG/MIN/MAX
    and literals by operators that are NULL when an operand is."""
    if isinstance(value, NULL_ON_EMPTY):
        return True
    if isinstance(value, STRICT):
        operands = [e for e in value.iter_expressions() if not isinstance(e, exp.DataType)]
        return any(_null_on_empty(e) for e in operands) and all(
            _null_on_empty(e) or isinstance(e, exp.Literal) for e in operands
        )
    return False


def _own_columns(query: exp.Expr):
    """The columns of ``query`` outside its nested queries (which have their own scopes)."""
    return (node for node in own_scope(query) if isinstance(node, exp.Column))


def source_aliases(select: exp.Select) -> set[str]:
    """The names (lower case) its ``FROM`` items go by in ``select``."""
    from_ = select.args.get("from_") or select.args.get("from")
    items = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
    return {item.alias_or_name.lower() for item in items}


def _outer_references(query: exp.Expr, outer_aliases: set[str]) -> list[exp.Column]:
    own = source_aliases(query) if isinstance(query, exp.Select) else set()
    return [c for c in _own_columns(query) if c.table.lower() in outer_aliases - own]


def _disjuncts(expression: exp.Expr) -> list[exp.Expr]:
    expression = expression.unnest()
    if isinstance(expression, exp.Or):
        return _disjuncts(expression.left) + _disjuncts(expression.right)
    return [expression]


def factored(conjunct: exp.Expr) -> list[exp.Expr]:
    """``conjunct`` as conjuncts, the terms every disjunct of an ``OR`` ANDs taken out of it
    (TPC-DS q41 repeats its correlation in each disjunct)::

        (A ∧ X) ∨ (A ∧ Y)  =  A ∧ (X ∨ Y)        (A ∧ X) ∨ A  =  A

    distributivity and absorption, which hold in SQL's three-valued logic as in two."""
    branches = [conjuncts(d) for d in _disjuncts(conjunct)]
    if len(branches) < 2:
        return [conjunct]
    texts = [[c.sql(DIALECT) for c in branch] for branch in branches]
    common = [c for c, text in zip(branches[0], texts[0]) if all(text in other for other in texts[1:])]
    if not common:
        return [conjunct]
    shared = {c.sql(DIALECT) for c in common}
    rests = [[c for c, text in zip(branch, branch_texts) if text not in shared]
             for branch, branch_texts in zip(branches, texts)]
    if any(not rest for rest in rests):
        return [c.copy() for c in common]
    either = exp.or_(*[exp.Paren(this=exp.and_(*[c.copy() for c in rest])) for rest in rests])
    return [c.copy() for c in common] + [exp.Paren(this=either)]


def _split_correlation(select: exp.Select, outer_aliases: set[str]) -> tuple[list[exp.Expr], list[exp.Expr]]:
    """The conjuncts of ``select``'s ``WHERE`` that read no outer column, and those that do (the
    correlation, which must be all of its outer references)."""
    for arg in ("group", "having", "distinct", "limit", "offset", "qualify", "order"):
        if select.args.get(arg) is not None:
            raise UnsupportedSql(select.sql(DIALECT), f"a correlated subquery with {arg.upper()} is not supported yet")
    outer = outer_aliases - source_aliases(select)
    where = [f for c in conjuncts(select.args.get("where")) for f in factored(c)]
    correlated = [c for c in where if any(col.table.lower() in outer for col in _own_columns(c))]
    for c in correlated:
        if c.find(exp.Query):
            raise UnsupportedSql(c.sql(DIALECT), "a subquery inside a correlated condition is not supported yet")
    where_node = select.args.get("where")
    in_where = {id(col) for col in _own_columns(where_node)} if where_node is not None else set()
    stray = [col for col in _outer_references(select, outer_aliases) if id(col) not in in_where]
    if stray:
        raise UnsupportedSql(
            select.sql(DIALECT),
            f"the correlated column {stray[0].sql(DIALECT)} is outside the subquery's WHERE; not supported yet",
        )
    return [c for c in where if not any(c is k for k in correlated)], correlated


def _decorrelate(select: exp.Select, outer_aliases: set[str], alias: str,
                 with_values: bool) -> tuple[exp.Select, list[exp.Expr]]:
    """``select`` without its correlated ``WHERE`` conjuncts, selecting its values (an ``IN``'s)
    then the columns those conjuncts read; and the conjuncts over the derived table ``alias``."""
    local, correlated = _split_correlation(select, outer_aliases)
    if any(isinstance(n, (exp.AggFunc, exp.Window)) for n in own_scope(select)):  # not its own subqueries
        raise UnsupportedSql(select.sql(DIALECT), "a correlated subquery with aggregates is not supported yet")
    outer = outer_aliases - source_aliases(select)
    values = [e.unalias() if isinstance(e, exp.Alias) else e for e in select.selects] if with_values else []
    keys: dict[str, exp.Column] = {}
    for c in correlated:
        for col in _own_columns(c):
            if col.table.lower() not in outer:
                keys.setdefault(col.sql(DIALECT), col)
    key_names = {text: f"_ivm_key{i}" for i, text in enumerate(keys)}

    def over_derived(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and node.table.lower() not in outer:
            return exp.column(key_names[node.sql(DIALECT)], table=alias)
        return node

    condition = [c.copy().transform(over_derived) for c in correlated]
    derived = select.copy()
    selected = [v.copy() for v in values] + [k.copy() for k in keys.values()]
    derived.set("expressions", selected or [exp.Literal.number(1)])
    derived.set("where", exp.Where(this=exp.and_(*[c.copy() for c in local])) if local else None)
    return derived, condition

