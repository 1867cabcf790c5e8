"""From a model's compiled SQL to a relational plan over its inputs.

The SQL is parsed with sqlglot (Spark dialect) and qualified against the input schemas, so every
column reference names its source and ``*`` is expanded. The analyzer then walks the query and
builds ``plan`` nodes. Constructs that cannot (yet) be maintained incrementally raise
``UnsupportedSql`` naming the construct, so the caller can fall back to a full recompute or
refuse, as the model's ``ivm_policy`` says.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ErrorLevel, OptimizeError, ParseError, UnsupportedError
from sqlglot.tokens import TokenType
from sqlglot.optimizer.qualify import qualify

from ivm_core import grouping_sets, outer_join, single_row_limit, subqueries, windows
from ivm_core.errors import AnalysisError, IvmError, UnsupportedSql
from ivm_core.plan import (
    AggCall,
    Aggregate,
    Filter,
    Join,
    Node,
    Project,
    Scan,
    UnionAll,
    Window,
    aggregate_below,
    conjuncts,
    copies_per_row,
    own_scope,
    referenced_columns,
)
from ivm_core.rules.aggregate.functions import find as find_aggregator
from ivm_core.rules.aggregate.functions.base import ByOrdering
from ivm_core.rules.aggregate.functions.count import COUNT
from ivm_core.rules.aggregate.functions.count_star import COUNT_STAR
from ivm_core.rules.aggregate.layout import COUNT as GROUP_ROWS
from ivm_core.sqltext import DIALECT
from ivm_core.top_k import TopK, split_top_k

# Functions whose value changes from one evaluation to the next: a stored result computed with
# them can never be kept equal to a recompute.
NONDETERMINISTIC_CLASSES = (
    exp.Rand,
    exp.Randn,
    exp.Uuid,
    exp.CurrentTimestamp,
    exp.CurrentDate,
    exp.CurrentTime,
    exp.Shuffle,
)
NONDETERMINISTIC_NAMES = {
    "now",
    "rand",
    "randn",
    "random",
    "uuid",
    "shuffle",
    "uniform",
    "randstr",
    "current_timestamp",
    "current_date",
    "localtimestamp",
    "unix_timestamp",
    "monotonically_increasing_id",
    "spark_partition_id",
    "input_file_name",
    "input_file_block_start",
    "input_file_block_length",
    "reflect",
    "java_method",
    "try_reflect",
}


@dataclass(frozen=True)
class InputSchema:
    """An input of the model: ``key`` is how the SQL names it (``schema.table``, lower case)."""

    key: str
    columns: tuple[tuple[str, str], ...]  # (name, spark type)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)


@dataclass
class Analysis:
    """The analyzer's result: the plan and the names of its output columns, in order; for a
    model ending in ORDER BY … LIMIT, the plan is the query without them (its rows kept as a bag
    state when it does not end in an aggregate) and ``top_k`` says which of its rows the model
    keeps."""

    plan: Node
    output_names: tuple[str, ...]
    inputs: dict[str, InputSchema]
    top_k: TopK | None = None


@dataclass
class _Relation:
    """A plan plus the SQL-visible name of each of its columns."""

    plan: Node
    names: tuple[str, ...]


@dataclass
class _Names:
    counter: itertools.count = field(default_factory=itertools.count)

    def fresh(self) -> str:
        return f"c{next(self.counter)}"


def normalize_table_name(table: exp.Table) -> str:
    parts = [p for p in (table.args.get("db"), table.this) if p is not None]
    return ".".join(p.name.lower() for p in parts)


def analyze(sql: str, inputs: list[InputSchema]) -> Analysis:
    """Parse, qualify and translate ``sql`` into a plan over ``inputs``."""
    by_key = {i.key.lower(): i for i in inputs}
    try:
        statements = sqlglot.parse(sql, read=DIALECT)
    except ParseError as e:
        raise AnalysisError(f"cannot parse the model SQL: {e}") from e
    statements = [s for s in statements if s is not None]
    if len(statements) != 1:
        raise UnsupportedSql("multiple statements", "a model must be a single SELECT")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        raise UnsupportedSql(type(tree).__name__.upper(), "a model must be a SELECT query")
    _refuse_nondeterminism(tree)
    try:
        _refuse_what_our_parser_misreads(sql, tree)
    except IvmError as e:  # a recompute of the SQL as written is still a function of the inputs
        e.over_inputs = _reads_only(tree, by_key)
        raise
    tree = tree.transform(_spelled_as_known)
    assert isinstance(tree, exp.Query)
    tree, written_top_k = split_top_k(tree)
    tree, limit = single_row_limit.split_limit(tree)  # LIMIT without ORDER BY

    schema: dict = {}
    for key, spec in by_key.items():
        db, _, table_name = key.rpartition(".")
        schema.setdefault(db, {})[table_name] = {name: typ for name, typ in spec.columns}
    for table in tree.find_all(exp.Table):
        if table.args.get("catalog") is not None:
            table.set("catalog", None)  # spark_catalog.schema.table names the same input
    try:
        qualified = qualify(
            tree,
            schema=schema,
            dialect=DIALECT,
            quote_identifiers=False,
            validate_qualify_columns=True,
            expand_stars=True,
        )
    except OptimizeError as e:
        raise AnalysisError(f"cannot resolve the model's columns: {e}") from e

    builder = _Builder(by_key)
    try:
        relation = builder.query(qualified, ctes={})
        top = written_top_k.resolve(relation.names) if written_top_k is not None else None
        if limit is not None:
            relation = _Relation(limit.applied(relation.plan), relation.names)
    except IvmError as e:
        e.over_inputs = _reads_only(qualified, by_key)  # and nothing non-deterministic
        raise
    plan = relation.plan
    if top is not None and aggregate_below(plan) is None:
        plan = builder.kept_as_bag(plan)
    return Analysis(plan=plan, output_names=relation.names, inputs=by_key, top_k=top)


# Spark's other names of aggregate functions that sqlglot parses as unknown calls.
_ALIASES: dict[str, type[exp.AggFunc]] = {"std": exp.Stddev, "every": exp.LogicalAnd, "some": exp.LogicalOr}


def _spelled_as_known(node: exp.Expr) -> exp.Expr:
    """``std(x)``, ``every(p)``, ``some(p)`` as the calls they are in Spark: STDDEV, BOOL_AND,
    BOOL_OR (sqlglot reads them as unknown functions); the ``grouping__id`` column as
    ``GROUPING_ID()``."""
    if isinstance(node, exp.Column) and grouping_sets.is_grouping_call(node):
        return exp.GroupingId()  # Spark's grouping__id column
    if isinstance(node, exp.Anonymous) and len(node.expressions) == 1:
        known = _ALIASES.get(node.name.lower())
        if known is not None:
            return known(this=node.expressions[0])
    return node


def _reads_only(tree: exp.Expr, inputs: Mapping[str, InputSchema]) -> bool:
    """Whether every table ``tree`` reads is one of ``inputs`` (or a CTE of its own)."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    return all(
        normalize_table_name(t) in inputs or (t.args.get("db") is None and t.name.lower() in ctes)
        for t in tree.find_all(exp.Table)
    )


def _refuse_what_our_parser_misreads(sql: str, tree: exp.Expr) -> None:
    """Refuse a model whose SQL sqlglot does not read as Spark does: the plan's expressions are
    sqlglot's renderings, so they would compute something else. Caught three ways: a
    ``… WITHIN GROUP (ORDER BY …)`` percentile (read as the approximate one); an argument the
    rendering cannot carry (``to_char``'s format); and a column or literal of the SQL missing
    from the rendering (``percentile(x, p, frequency)``'s frequency, ``date_trunc(unit, x)``
    with the unit a column). A model refused so falls back to a full recompute of its SQL as
    written (``sqltext.with_tables_replaced``) under ``auto``."""
    for _ in tree.find_all(exp.WithinGroup):
        raise UnsupportedSql("WITHIN GROUP (ORDER BY …)", "our SQL parser reads it as an approximate percentile")
    try:
        rendered = tree.sql(dialect=DIALECT, unsupported_level=ErrorLevel.RAISE)
    except UnsupportedError as e:
        raise UnsupportedSql(str(e).splitlines()[0], "our SQL parser cannot carry this argument") from None
    # a struct's field names: sqlglot reads named_struct('k', x) as STRUCT(x AS k), the same struct
    # in Spark, its names now identifiers: either spelling keeps them
    spelled = tree.transform(_named_struct).sql(dialect=DIALECT)
    lost = _operands(sql) - (_operands(rendered) | _operands(spelled))
    if lost:
        raise UnsupportedSql(
            ", ".join(sorted(lost)),
            "our SQL parser reads the model without these columns or literals (sqlglot drops them), so "
            "maintained incrementally it would not compute what Spark does",
        )


def _named_struct(node: exp.Expr) -> exp.Expr:
    """``STRUCT(x AS k, …)`` spelled as Spark's ``named_struct('k', x, …)``."""
    fields = node.expressions if isinstance(node, exp.Struct) else []
    if fields and all(isinstance(e, exp.PropertyEQ) for e in fields):
        args: list[exp.Expr] = []
        for field in fields:
            args += [exp.Literal.string(field.name), field.expression]
        return exp.Anonymous(this="named_struct", expressions=args)
    return node


def _operands(sql: str) -> Counter:
    """The names (``t.a`` as one) and literals of ``sql`` — not function names — with their
    counts."""
    tokens = Spark().tokenize(sql)
    found: Counter = Counter()
    name: list[str] = []
    placement = False  # NULLS FIRST/LAST: words, not names (a rendering omits the default)
    for i, token in enumerate(tokens):
        after = tokens[i + 1].token_type if i + 1 < len(tokens) else None
        word = token.text.lower() if token.token_type == TokenType.VAR else ""
        if word == "nulls" and i + 1 < len(tokens) and tokens[i + 1].text.lower() in ("first", "last"):
            placement = True
            continue
        if placement:
            placement = False
            continue
        if token.token_type in (TokenType.VAR, TokenType.IDENTIFIER):
            name.append(token.text.lower())
            if after == TokenType.DOT:
                continue
            if after != TokenType.L_PAREN:
                found[".".join(name)] += 1
            name = []
        elif token.token_type == TokenType.DOT and name:
            continue
        else:
            name = []
            if token.token_type in (TokenType.STRING, TokenType.NUMBER):
                found[repr(token.text)] += 1
    return found


def nondeterministic_call(tree: exp.Expr) -> str | None:
    """The first call in ``tree`` of a function whose value differs between evaluations
    (``rand()``, ``uuid()``, ``current_timestamp()``, ...), as Spark SQL; None when there is none."""
    for func in tree.find_all(exp.Func):
        name = func.name.lower() if isinstance(func, exp.Anonymous) else ""
        if isinstance(func, NONDETERMINISTIC_CLASSES) or name in NONDETERMINISTIC_NAMES:
            return func.sql(DIALECT)
    return None


NONDETERMINISTIC = ("non-deterministic function: its value differs between runs, so a stored "
                    "result cannot stay equal to a recompute")


def _refuse_nondeterminism(tree: exp.Expr) -> None:
    call = nondeterministic_call(tree)
    if call is not None:
        raise UnsupportedSql(call, NONDETERMINISTIC)


SUPPORTED_AGGREGATES = ("COUNT, SUM, AVG, MIN, MAX, COUNT(DISTINCT), SUM(DISTINCT), AVG(DISTINCT), COUNT_IF, "
                        "BOOL_AND/EVERY, BOOL_OR/SOME, STDDEV(_SAMP|_POP), STD, VARIANCE, VAR_SAMP, VAR_POP, "
                        "MIN_BY, MAX_BY")


def _is_aggregate(n: exp.Expression) -> bool:
    return isinstance(n, exp.AggFunc) or (isinstance(n, exp.Filter) and isinstance(n.this, exp.AggFunc))


def _aggregates(e: exp.Expr) -> bool:
    return any(True for _ in e.find_all(exp.AggFunc))


# Aggregates whose value depends on the order Spark reads a group's rows in: no refresh can
# reproduce a recompute's choice, so they are never maintained (``auto`` recomputes them).
ORDER_DEPENDENT_AGGREGATES = (exp.ArrayAgg, exp.First, exp.Last, exp.FirstValue, exp.LastValue, exp.AnyValue,
                              exp.ArrayUniqueAgg)


def _aggregate_function(agg: exp.Expression) -> tuple[str, exp.Expression | None]:
    """(function name, argument) of a supported aggregate call (``rules/aggregate/functions``)."""
    if isinstance(agg, ORDER_DEPENDENT_AGGREGATES):
        raise UnsupportedSql(
            agg.sql(DIALECT),
            "its value depends on the order Spark reads the group's rows in (an array's order, the first or "
            "any row), which a refresh cannot reproduce: order it (array_sort, min_by/max_by) or recompute",
        )
    if isinstance(agg, (exp.ArgMin, exp.ArgMax)):
        if agg.args.get("count") is not None:
            raise UnsupportedSql(agg.sql(DIALECT), "MIN_BY/MAX_BY take two arguments")
        by = find_aggregator(agg, False, False)
        assert isinstance(by, ByOrdering)
        return by.name, by.argument(agg.this, agg.expression)
    arg = agg.this
    distinct = isinstance(arg, exp.Distinct)
    if distinct:
        if len(arg.expressions) != 1:
            raise UnsupportedSql(agg.sql(DIALECT), "DISTINCT aggregates over several columns are not supported yet")
        arg = arg.expressions[0]
    star = isinstance(agg, exp.Count) and (arg is None or isinstance(arg, exp.Star))
    function = find_aggregator(agg, distinct, star)
    if function is None:
        if distinct and find_aggregator(agg, False, star) is not None:
            raise UnsupportedSql(agg.sql(DIALECT), f"{agg.key.upper()}(DISTINCT) is not supported yet")
        raise UnsupportedSql(agg.sql(DIALECT), f"only {SUPPORTED_AGGREGATES} are supported yet")
    return function.name, None if star else arg


def _group_by_all(select: exp.Select) -> exp.Group | None:
    """``GROUP BY ALL`` as Spark reads it: grouped by every expression of the SELECT list that
    has no aggregate (a literal too), or a global aggregate when every one has one."""
    keys = [e.this if isinstance(e, exp.Alias) else e for e in select.expressions
            if not any(isinstance(n, exp.AggFunc) for n in own_scope(e))]
    return exp.Group(expressions=[k.copy() for k in keys]) if keys else None


def _join_kind(join: exp.Join) -> str:
    """INNER (also CROSS and comma joins), LEFT, RIGHT, FULL, SEMI or ANTI."""
    side = (join.args.get("side") or "").upper()
    kind = (join.args.get("kind") or "").upper()
    # (qualify has already turned NATURAL and USING joins into ON conditions)
    if not side and kind in ("", "INNER", "CROSS"):
        return outer_join.INNER
    if side in ("LEFT", "RIGHT", "FULL") and kind in ("", "OUTER"):
        return side.lower()
    if side in ("", "LEFT") and kind in ("SEMI", "ANTI"):
        return kind.lower()
    raise UnsupportedSql(" ".join(x for x in (side, kind) if x) + " JOIN", "this join kind is not supported")


def _inner_joins(plans: list[Node], conjuncts: list[exp.Expression], owner: Mapping[str, int]) -> Node:
    """An inner join of ``plans`` (``owner``: column -> index of its plan) under ``conjuncts``:
    a conjunct over one plan filters it, one over several is a join condition, one over none
    filters the result."""
    plans = list(plans)
    join_conditions: list[exp.Expression] = []
    top_filters: list[exp.Expression] = []
    for conjunct in conjuncts:
        owners = {owner[c] for c in referenced_columns(conjunct)}
        if len(owners) == 1 and len(plans) > 1:
            (i,) = owners
            plans[i] = Filter(plans[i], conjunct)
        elif len(owners) > 1:
            join_conditions.append(conjunct)
        else:
            top_filters.append(conjunct)
    plan: Node = plans[0] if len(plans) == 1 else Join(tuple(plans), tuple(join_conditions))
    for predicate in top_filters:
        plan = Filter(plan, predicate)
    return plan


class _Builder:
    def __init__(self, inputs: dict[str, InputSchema]):
        self.inputs = inputs
        self.names = _Names()
        self.aggregates = itertools.count()
        self.subquery_joins = subqueries.SubqueryJoins()

    def aggregate_id(self) -> str:
        return f"agg{next(self.aggregates)}"

    def kept_as_bag(self, plan: Node) -> Node:
        """``plan``'s rows kept as state (a top-k model's ranked rows, when they are not one
        aggregate's): an aggregate grouping by every column, each distinct row weighted by its
        copies."""
        out = tuple(self.names.fresh() for _ in plan.columns)
        kept = Aggregate(plan, plan.columns, out, (), self.aggregate_id(), multiplicity=exp.column(GROUP_ROWS))
        return Project(kept, tuple((self.names.fresh(), exp.column(o)) for o in out))

    # -- queries ---------------------------------------------------------------------------
    def query(self, node: exp.Expr, ctes: dict[str, exp.Expression]) -> _Relation:
        with_ = node.args.get("with_") or node.args.get("with")
        if with_ is not None:
            if with_.args.get("recursive"):
                raise UnsupportedSql("WITH RECURSIVE", "recursive queries are not supported yet")
            ctes = dict(ctes)
            for cte in with_.expressions:
                ctes[cte.alias_or_name.lower()] = cte.this
        if isinstance(node, exp.Subquery):
            return self.query(node.this, ctes)
        if isinstance(node, exp.Union):
            return self.union(node, ctes)
        if isinstance(node, (exp.Intersect, exp.Except)):
            return self.intersect_except(node, ctes)
        if isinstance(node, exp.Select):
            return self.select(node, ctes)
        raise UnsupportedSql(type(node).__name__, "unsupported query form")

    def union(self, node: exp.Union, ctes) -> _Relation:
        self._refuse_limit_order(node, "UNION")
        parts = [self.query(node.left, ctes), self.query(node.right, ctes)]
        width = len(parts[0].names)
        if any(len(p.names) != width for p in parts):
            raise AnalysisError("UNION ALL branches have different numbers of columns")
        out = tuple(self.names.fresh() for _ in range(width))
        flat: list[Node] = []
        for p in parts:
            if isinstance(p.plan, UnionAll):
                flat.extend(p.plan.inputs)
            else:
                flat.append(p.plan)
        relation = _Relation(UnionAll(tuple(flat), out), parts[0].names)
        if node.args.get("distinct"):
            relation = self.distinct(relation)
        return relation

    def distinct(self, relation: _Relation) -> _Relation:
        """DISTINCT: a row is present while its total weight is positive."""
        plan = relation.plan
        out = tuple(self.names.fresh() for _ in plan.columns)
        agg = Aggregate(plan, tuple(plan.columns), out, (), self.aggregate_id())
        return _Relation(agg, relation.names)

    def intersect_except(self, node: exp.Intersect | exp.Except, ctes) -> _Relation:
        """INTERSECT/EXCEPT [ALL]: group both sides' rows and count each side's copies."""
        self._refuse_limit_order(node, type(node).__name__.upper())
        left, right = self.query(node.left, ctes), self.query(node.right, ctes)
        if len(left.names) != len(right.names):
            raise AnalysisError(f"{type(node).__name__.upper()} sides have different numbers of columns")
        distinct = node.args.get("distinct", True) is not False

        def multiplicity(left_n: exp.Column, right_n: exp.Column) -> exp.Expr:
            zero, one = exp.Literal.number(0), exp.Literal.number(1)
            if isinstance(node, exp.Intersect):
                if distinct:
                    return exp.If(this=exp.and_(left_n > 0, right_n > 0), true=one, false=zero)
                return exp.func("least", left_n, right_n)
            if distinct:
                return exp.If(this=exp.and_(left_n > 0, exp.EQ(this=right_n, expression=zero)), true=one, false=zero)
            return exp.func("greatest", exp.Sub(this=left_n, expression=right_n), zero)

        agg = copies_per_row([(left.plan, left.plan.columns), (right.plan, right.plan.columns)], self.names.fresh,
                             self.aggregate_id(), multiplicity)
        final = Project(agg, tuple((self.names.fresh(), exp.column(k)) for k in agg.out_keys))
        return _Relation(final, left.names)

    def _refuse_limit_order(self, node: exp.Expression, where: str) -> None:
        for arg in ("limit", "offset", "fetch"):
            if node.args.get(arg) is not None:
                raise UnsupportedSql(
                    arg.upper(), f"{arg.upper()} in {where} depends on row order"
                )

    def select(self, node: exp.Select, ctes) -> _Relation:
        self._refuse_limit_order(node, "a SELECT")
        group = _group_by_all(node) if node.args.get("group") and node.args["group"].args.get("all") \
            else node.args.get("group")
        if node.args.get("qualify"):
            raise UnsupportedSql("QUALIFY", "not supported yet: filter the window's column in an outer query")
        if node.args.get("laterals"):
            raise UnsupportedSql("LATERAL VIEW", "generators are not supported yet")
        node, written_windows = windows.extract(node)  # each call's place holds a placeholder
        window_parts = [part for w in written_windows for part in w.parts()]
        if node.args.get("where") is not None:
            for agg in own_scope(node.args["where"]):
                if isinstance(agg, exp.AggFunc):
                    raise AnalysisError(f"aggregate {agg.sql(DIALECT)} in WHERE")
        from_ = node.args.get("from_") or node.args.get("from")
        if from_ is None:
            raise UnsupportedSql("SELECT without FROM", "a model must read at least one input")
        if node.args.get("having") is not None and node.args["having"].find(exp.Select):
            return self.select(subqueries.having_as_where(node), ctes)
        if group is not None:
            for sub in group.find_all(exp.Select):
                raise UnsupportedSql(sub.sql(DIALECT), "a subquery in GROUP BY is not supported yet")
        aggregated = group is not None or node.args.get("having") is not None or any(
            isinstance(n, exp.AggFunc) for e in [*node.expressions, *window_parts] for n in own_scope(e)
        )
        select_list, where_conjuncts, subquery_joins = self.subquery_joins.lower(
            list(node.expressions), conjuncts(node.args.get("where")),
            subqueries.source_aliases(node), aggregated,
        )
        for expression in select_list + where_conjuncts:
            for sub in expression.find_all(exp.Exists, exp.In):
                if isinstance(sub, exp.Exists) or sub.args.get("query") is not None:
                    raise UnsupportedSql(sub.sql(DIALECT), subqueries.ANYWHERE_ELSE)

        sources: list[tuple[str, _Relation]] = [self.source(from_.this, ctes)]
        joins: list[tuple[str, list[exp.Expr]]] = []  # per joined source: its kind, its ON conjuncts
        for join in (node.args.get("joins") or []) + subquery_joins:
            kind = _join_kind(join)
            sources.append(self.source(join.this, ctes))
            joins.append((kind, conjuncts(join.args.get("on"))))

        # Map every (alias, column) to the internal column name.
        mapping: dict[tuple[str, str], str] = {}
        owner: dict[str, int] = {}
        for index, (alias, rel) in enumerate(sources):
            for name, internal in zip(rel.names, rel.plan.columns):
                mapping.setdefault((alias, name.lower()), internal)
                owner[internal] = index

        def rewrite(expression: exp.Expr) -> exp.Expression:
            def replace(n: exp.Expression) -> exp.Expression:
                if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
                    key = (n.table.lower(), n.name.lower())
                    if key not in mapping:
                        raise AnalysisError(f"cannot resolve column {n.sql(DIALECT)}")
                    return exp.column(mapping[key])
                return n

            return expression.copy().transform(replace)

        plans = [rel.plan for _, rel in sources]
        where = [rewrite(c) for c in where_conjuncts]
        ons = [(kind, [rewrite(c) for c in on]) for kind, on in joins]
        if all(kind == outer_join.INNER for kind, _ in ons):
            plan = _inner_joins(plans, where + [c for _, on in ons for c in on], owner)
        else:
            used = set()
            for e in [*select_list, *window_parts, *(group.expressions if group is not None else [])]:
                used |= referenced_columns(rewrite(e))
            if node.args.get("having") is not None:
                used |= referenced_columns(rewrite(node.args["having"].this))
            for c in where + [c for _, on in ons for c in on]:
                used |= referenced_columns(c)
            plan = self.outer_joins(plans, where, ons, owner, used)

        names = [p.alias_or_name for p in node.expressions]
        outputs = [p.this if isinstance(p, exp.Alias) else p for p in select_list]
        having = node.args.get("having")
        if group is not None or having is not None or any(_aggregates(o) for o in [*outputs, *window_parts]):
            plan, post = self.aggregate(plan, group, outputs + window_parts, having, rewrite)
        else:
            post = rewrite
        rewritten = [post(o) for o in outputs]
        if written_windows:
            plan, rewritten = self.windows(plan, written_windows, [post(p) for p in window_parts], rewritten)
        exprs = tuple((self.names.fresh(), o) for o in rewritten)
        relation = _Relation(Project(plan, exprs), tuple(names))
        if node.args.get("distinct"):
            relation = self.distinct(relation)
        return relation

    def outer_joins(self, plans: list[Node], where: list[exp.Expression],
                    ons: list[tuple[str, list[exp.Expression]]], owner: Mapping[str, int], used: set[str]) -> Node:
        """FROM items joined left to right, some with outer, semi or anti joins: each run of inner
        joins is one N-way join, which the next outer join takes as its left side
        (``outer_join.lower``). An ON conjunct over the side that gets NULLs only filters that
        side; a WHERE conjunct over no such side filters or joins the first run that has its
        inputs, any other filters the result."""
        nullable: set[int] = set()  # inputs on a side an outer join pads with NULLs
        for i, (kind, _) in enumerate(ons, start=1):
            if kind in (outer_join.LEFT, outer_join.FULL):
                nullable.add(i)
            if kind in (outer_join.RIGHT, outer_join.FULL):
                nullable |= set(range(i))

        def inputs_of(e: exp.Expression) -> set[int]:
            try:
                return {owner[c] for c in referenced_columns(e)}
            except KeyError as missing:
                raise AnalysisError(f"column {missing} is not visible after a semi or anti join") from None

        pushable: list[exp.Expression] = []
        top: list[exp.Expression] = []
        for c in where:
            (pushable if inputs_of(c) and not inputs_of(c) & nullable else top).append(c)

        def close(members: list[tuple[Node, set[int]]], conditions: list[exp.Expression]) -> Node:
            inputs = set().union(*(m for _, m in members))
            taken = [c for c in pushable if inputs_of(c) <= inputs]
            pushable[:] = [c for c in pushable if not inputs_of(c) <= inputs]
            member_of = {c: j for j, (plan, _) in enumerate(members) for c in plan.columns}
            return _inner_joins([plan for plan, _ in members], conditions + taken, member_of)

        members: list[tuple[Node, set[int]]] = [(plans[0], {0})]
        conditions: list[exp.Expression] = []
        for i, (kind, on) in enumerate(ons, start=1):
            if kind == outer_join.INNER:
                members.append((plans[i], {i}))
                conditions += on
                continue
            inputs = set().union(*(m for _, m in members))
            left, right = close(members, conditions), plans[i]
            condition = []
            for c in on:
                over = inputs_of(c)
                if over and over <= {i} and kind in (outer_join.LEFT, outer_join.SEMI, outer_join.ANTI):
                    right = Filter(right, c)
                elif over and over <= inputs and kind == outer_join.RIGHT:
                    left = Filter(left, c)
                else:
                    condition.append(c)
            joined = outer_join.lower(kind, left, right, condition, used, self.names.fresh, self.aggregate_id)
            members, conditions = [(joined, inputs | {i})], []
        plan = close(members, conditions)
        for predicate in top + pushable:
            plan = Filter(plan, predicate)
        return plan

    def aggregate(self, plan: Node, group, outputs, having, rewrite):
        """GROUP BY: pre-project keys and aggregate arguments, aggregate, filter by HAVING.

        Returns the plan and the rewrite of the SELECT list over the aggregate's output.
        """
        sets = grouping_sets.expand(group)
        columns = sets.columns if sets is not None else (group.expressions if group is not None else [])
        group_exprs = [rewrite(e) for e in columns]
        calls: dict[str, AggCall] = {}
        arg_names: dict[str, str] = {}
        pre: list[tuple[str, exp.Expression]] = []
        keys = []
        for e in group_exprs:
            name = self.names.fresh()
            pre.append((name, e))
            keys.append(name)
        # grouping sets: each set's rows are grouped apart, by its grouping id (and position)
        set_keys = [self.names.fresh() for _ in range(0 if sets is None else 1 + sets.repeated)]
        pre += [(name, exp.null()) for name in set_keys]  # each branch of the expansion gives their values
        keys += set_keys
        out_keys = tuple(self.names.fresh() for _ in keys)
        key_by_sql = {e.sql(DIALECT): k for e, k in zip(group_exprs, out_keys)}
        grouping_id = exp.column(out_keys[len(group_exprs)]) if sets is not None else None

        def call_for(agg: exp.Expression) -> str:
            text = agg.sql(DIALECT)
            if text in calls:
                return calls[text].name
            condition = None
            if isinstance(agg, exp.Filter):
                condition = rewrite(agg.expression.this if isinstance(agg.expression, exp.Where) else agg.expression)
                agg = agg.this
            func, arg = _aggregate_function(agg)
            if arg is not None:
                arg = rewrite(arg)
            if condition is not None:
                if func == COUNT_STAR.name:  # COUNT(*) FILTER (WHERE p) is COUNT(CASE WHEN p THEN 1 END)
                    func, arg = COUNT.name, exp.Literal.number(1)
                arg = exp.Case(ifs=[exp.If(this=condition, true=arg)])
            arg_name = None
            if arg is not None:
                arg_sql = arg.sql(DIALECT)
                if arg_sql not in arg_names:  # SUM(x), AVG(x), MAX(x) share one argument column
                    arg_names[arg_sql] = self.names.fresh()
                    pre.append((arg_names[arg_sql], arg))
                arg_name = arg_names[arg_sql]
            calls[text] = AggCall(self.names.fresh(), func, arg_name)
            return calls[text].name

        def post(expression: exp.Expression) -> exp.Expression:
            def replace(n: exp.Expression) -> exp.Expression:
                if grouping_sets.is_grouping_call(n):
                    if sets is None or grouping_id is None:
                        raise AnalysisError(f"{n.sql(DIALECT)} needs GROUP BY ROLLUP, CUBE or GROUPING SETS")
                    return sets.value(n, grouping_id.copy())
                if _is_aggregate(n):
                    return exp.column(call_for(n))
                if not isinstance(n, exp.Literal) and not n.find(exp.AggFunc):
                    try:
                        text = rewrite(n).sql(DIALECT)
                    except AnalysisError:
                        text = None
                    if text in key_by_sql:
                        return exp.column(key_by_sql[text])
                if isinstance(n, exp.Column):
                    call = n.find_ancestor(exp.Anonymous)
                    if call is not None:  # a function sqlglot does not know: std, every, ...
                        raise UnsupportedSql(
                            call.sql(DIALECT),
                            f"not an aggregate function supported yet ({SUPPORTED_AGGREGATES}), and its column "
                            f"{n.sql(DIALECT)} is neither grouped nor aggregated",
                        )
                    raise AnalysisError(
                        f"column {n.sql(DIALECT)} is neither grouped nor aggregated"
                    )
                return n

            return expression.copy().transform(replace)

        rewritten_outputs = [post(o) for o in outputs]
        having_expr = post(having.this) if having is not None else None
        child: Node = Project(plan, tuple(pre))
        if sets is not None:
            child = self.expand(plan, pre, keys[:len(group_exprs)], set_keys, sets)
        agg = Aggregate(
            child,
            tuple(keys),
            out_keys,
            tuple(calls.values()),
            self.aggregate_id(),
            is_global=not keys,
        )
        result: Node = agg if having_expr is None else Filter(agg, having_expr)
        done = {id(o): r for o, r in zip(outputs, rewritten_outputs)}
        return result, lambda o: done[id(o)] if id(o) in done else post(o)

    def windows(self, plan: Node, written: list[windows.WrittenWindow], parts: list[exp.Expression],
                outputs: list[exp.Expression]) -> tuple[Node, list[exp.Expression]]:
        """The window calls ``written`` over ``plan`` (``parts``: each call's ``parts()``, rewritten
        over ``plan``'s columns, call after call), and ``outputs`` (over ``plan``'s columns, a
        placeholder for each call) over the result: the columns the calls and ``outputs`` read
        and each ``PARTITION BY`` expression as a column, then per distinct ``PARTITION BY`` a
        ``Window`` of its calls under the bag state of its rows (``rules.window``)."""
        calls: list[tuple[str, exp.Window]] = []  # (placeholder, the call over internal columns)
        partition_columns: dict[str, str] = {}  # a PARTITION BY expression's SQL -> its column
        extra: list[tuple[str, exp.Expression]] = []
        for w in written:
            mine, parts = parts[:len(w.parts())], parts[len(w.parts()):]
            call = w.rebuilt(mine)
            keys = []
            for key in call.args["partition_by"]:
                if isinstance(key, exp.Column):
                    keys.append(key)
                    continue
                text = key.sql(DIALECT)
                if text not in partition_columns:
                    partition_columns[text] = self.names.fresh()
                    extra.append((partition_columns[text], key))
                keys.append(exp.column(partition_columns[text]))
            call.set("partition_by", keys)
            calls.append((w.placeholder, call))
        needed: set[str] = set()
        for e in [*outputs, *(c for _, c in calls), *(e for _, e in extra)]:
            needed |= referenced_columns(e)
        current: Node = Project(plan, tuple((c, exp.column(c)) for c in plan.columns if c in needed) + tuple(extra))
        rename: dict[str, str] = {}  # a column -> its name above the windows built so far

        def renamed(e: exp.Expression) -> exp.Expression:
            return e.copy().transform(
                lambda n: exp.column(rename[n.name]) if isinstance(n, exp.Column) and n.name in rename else n)

        groups: dict[frozenset[str], list[tuple[str, exp.Window]]] = {}
        for placeholder, call in calls:
            groups.setdefault(frozenset(k.name for k in call.args["partition_by"]), []).append((placeholder, call))
        value_of: dict[str, str] = {}  # placeholder -> the column of its value
        for group in groups.values():
            named = []
            for placeholder, call in group:
                value_of[placeholder] = self.names.fresh()
                named.append((value_of[placeholder], renamed(call)))
            partition = tuple(dict.fromkeys(k.name for _, c in named for k in c.args["partition_by"]))
            state = self.aggregate_id()
            window = Window(current, partition, tuple(named), state)
            out = tuple(self.names.fresh() for _ in window.columns)
            current = Aggregate(window, window.columns, out, (), state, multiplicity=exp.column(GROUP_ROWS))
            rename = {c: o for c, o in zip(window.columns, out)} | {
                old: out[window.columns.index(new)] for old, new in rename.items() if new in window.columns}

        def final(e: exp.Expression) -> exp.Expression:
            def replace(n: exp.Expression) -> exp.Expression:
                held = windows.placeholder(n)
                if held is not None:
                    return exp.column(rename[value_of[held]])
                if isinstance(n, exp.Column) and n.name in rename:
                    return exp.column(rename[n.name])
                return n

            return e.copy().transform(replace)

        return current, [final(o) for o in outputs]

    def expand(self, plan: Node, pre: list[tuple[str, exp.Expression]], grouping_keys: list[str],
               set_keys: list[str], sets: grouping_sets.GroupingSets) -> Node:
        """The rows of ``plan`` once per grouping set (``grouping_sets``), each branch computing
        ``pre``'s columns: the grouping columns ``grouping_keys`` (NULL where its set does not
        hold them), ``set_keys`` (the set's grouping id, and position), the aggregate arguments."""
        key_position = {name: i for i, name in enumerate(grouping_keys)}
        branches = []
        for position, grouping_set in enumerate(sets.sets):
            given = dict(zip(set_keys, (exp.cast(exp.Literal.number(sets.grouping_id(grouping_set)), "BIGINT"),
                                        exp.cast(exp.Literal.number(position), "INT"))))
            exprs = []
            for name, e in pre:
                if name in given:
                    e = given[name]
                elif name in key_position:
                    e = sets.branch_key(key_position[name], e, grouping_set)
                exprs.append((self.names.fresh(), e.copy()))
            branches.append(Project(plan, tuple(exprs)))
        return UnionAll(tuple(branches), tuple(name for name, _ in pre))

    def source(self, node: exp.Expression, ctes) -> tuple[str, _Relation]:
        alias = node.alias_or_name.lower()
        if isinstance(node, exp.Table):
            if node.args.get("version") is not None or node.args.get("when") is not None:
                raise UnsupportedSql(node.sql(DIALECT), "time travel reads are not supported")
            if isinstance(node.this, exp.Func) or not isinstance(node.this, exp.Identifier):
                raise UnsupportedSql(node.sql(DIALECT), "table-valued functions are not supported")
            name = node.name.lower()
            if node.args.get("db") is None and name in ctes:
                rel = self.query(ctes[name], ctes)
                return alias, rel
            key = normalize_table_name(node)
            spec = self.inputs.get(key)
            if spec is None:
                raise AnalysisError(f"{key} is not a known input of the model")
            out = tuple(self.names.fresh() for _ in spec.column_names)
            return alias, _Relation(Scan(key, spec.column_names, out), spec.column_names)
        if isinstance(node, exp.Subquery):
            relation = self.query(node.this, ctes)
            renamed = [c.name for c in node.args["alias"].columns] if node.args.get("alias") else []
            if renamed:  # FROM (…) AS t(a, b)
                if len(renamed) != len(relation.names):
                    raise AnalysisError(f"{alias} names {len(renamed)} columns of a query with {len(relation.names)}")
                relation = _Relation(relation.plan, tuple(renamed))
            return alias, relation
        raise UnsupportedSql(node.sql(DIALECT), "unsupported FROM item")
