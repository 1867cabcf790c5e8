"""From a model's compiled SQL to a relational plan over its inputs.

The SQL is parsed with sqlglot (Spark dialect) and qualified against the input schemas, so every
column reference names its source and ``*`` is expanded. The analyzer then walks the query and
builds ``plan`` nodes. Constructs that cannot (yet) be maintained incrementally raise
``UnsupportedSql`` naming the construct, so the caller can fall back to a full recompute or
refuse, as the model's ``ivm_policy`` says.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError
from sqlglot.optimizer.qualify import qualify

from ivm_core.errors import AnalysisError, UnsupportedSql
from ivm_core.plan import Filter, Join, Node, Project, Scan, UnionAll, referenced_columns

DIALECT = "spark"

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
    """The analyzer's result: the plan and the names of its output columns, in order."""

    plan: Node
    output_names: tuple[str, ...]
    inputs: dict[str, InputSchema]


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

    schema: dict = {}
    for key, spec in by_key.items():
        db, _, table = key.rpartition(".")
        schema.setdefault(db, {})[table] = {name: typ for name, typ in spec.columns}
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
    relation = builder.query(qualified, ctes={})
    return Analysis(plan=relation.plan, output_names=relation.names, inputs=by_key)


def _refuse_nondeterminism(tree: exp.Expression) -> None:
    for func in tree.find_all(exp.Func):
        name = func.name.lower() if isinstance(func, exp.Anonymous) else ""
        if isinstance(func, NONDETERMINISTIC_CLASSES) or name in NONDETERMINISTIC_NAMES:
            raise UnsupportedSql(
                func.sql(DIALECT),
                "non-deterministic function: its value differs between runs, so a stored "
                "result cannot stay equal to a recompute",
            )


def _conjuncts(expression: exp.Expression | None) -> list[exp.Expression]:
    if expression is None:
        return []
    if isinstance(expression, exp.Where):
        expression = expression.this
    expression = expression.unnest()
    if isinstance(expression, exp.And):
        return _conjuncts(expression.left) + _conjuncts(expression.right)
    return [expression]


class _Builder:
    def __init__(self, inputs: dict[str, InputSchema]):
        self.inputs = inputs
        self.names = _Names()

    # -- queries ---------------------------------------------------------------------------
    def query(self, node: exp.Expression, ctes: dict[str, exp.Expression]) -> _Relation:
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
            raise UnsupportedSql(
                type(node).__name__.upper(), "INTERSECT/EXCEPT are not supported yet"
            )
        if isinstance(node, exp.Select):
            return self.select(node, ctes)
        raise UnsupportedSql(type(node).__name__, "unsupported query form")

    def union(self, node: exp.Union, ctes) -> _Relation:
        if node.args.get("distinct"):
            raise UnsupportedSql("UNION (distinct)", "only UNION ALL is supported yet")
        self._refuse_limit_order(node, "UNION ALL")
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
        return _Relation(UnionAll(tuple(flat), out), parts[0].names)

    def _refuse_limit_order(self, node: exp.Expression, where: str) -> None:
        for arg in ("limit", "offset", "fetch"):
            if node.args.get(arg) is not None:
                raise UnsupportedSql(
                    arg.upper(), f"{arg.upper()} in {where} depends on row order"
                )

    def select(self, node: exp.Select, ctes) -> _Relation:
        self._refuse_limit_order(node, "a SELECT")
        if node.args.get("distinct"):
            raise UnsupportedSql("SELECT DISTINCT", "DISTINCT is not supported yet")
        if node.args.get("group"):
            raise UnsupportedSql("GROUP BY", "aggregation is not supported yet")
        if node.args.get("having"):
            raise UnsupportedSql("HAVING", "aggregation is not supported yet")
        if node.args.get("qualify"):
            raise UnsupportedSql("QUALIFY", "window functions are not supported yet")
        if node.args.get("laterals"):
            raise UnsupportedSql("LATERAL VIEW", "generators are not supported yet")
        for window in node.find_all(exp.Window):
            raise UnsupportedSql(window.sql(DIALECT), "window functions are not supported yet")
        checked = list(node.expressions)
        if node.args.get("where") is not None:
            checked.append(node.args["where"])
        for expression in checked:
            for agg in expression.find_all(exp.AggFunc):
                raise UnsupportedSql(agg.sql(DIALECT), "aggregation is not supported yet")
            for sub in expression.find_all(exp.Subquery, exp.Exists):
                raise UnsupportedSql(
                    sub.sql(DIALECT), "subqueries in expressions are not supported yet"
                )
            for sub in expression.find_all(exp.Select):
                raise UnsupportedSql(
                    sub.sql(DIALECT), "subqueries in expressions are not supported yet"
                )

        from_ = node.args.get("from_") or node.args.get("from")
        if from_ is None:
            raise UnsupportedSql("SELECT without FROM", "a model must read at least one input")
        sources: list[tuple[str, _Relation]] = [self.source(from_.this, ctes)]
        conjuncts = _conjuncts(node.args.get("where"))
        for join in node.args.get("joins") or []:
            side = (join.args.get("side") or "").upper()
            kind = (join.args.get("kind") or "").upper()
            if side or kind not in ("", "INNER", "CROSS"):
                label = " ".join(x for x in (side, kind) if x) + " JOIN"
                raise UnsupportedSql(label, "only inner joins are supported yet")
            if join.args.get("using"):
                raise UnsupportedSql("JOIN ... USING", "write the join condition with ON")
            if join.args.get("method"):
                raise UnsupportedSql(
                    f"{join.args['method']} JOIN", "only inner joins are supported yet"
                )
            sources.append(self.source(join.this, ctes))
            conjuncts += _conjuncts(join.args.get("on"))

        # Map every (alias, column) to the internal column name.
        mapping: dict[tuple[str, str], str] = {}
        owner: dict[str, int] = {}
        for index, (alias, rel) in enumerate(sources):
            for name, internal in zip(rel.names, rel.plan.columns):
                mapping.setdefault((alias, name.lower()), internal)
                owner[internal] = index

        def rewrite(expression: exp.Expression) -> exp.Expression:
            def replace(n: exp.Expression) -> exp.Expression:
                if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
                    key = (n.table.lower(), n.name.lower())
                    if key not in mapping:
                        raise AnalysisError(f"cannot resolve column {n.sql(DIALECT)}")
                    return exp.column(mapping[key])
                return n

            return expression.copy().transform(replace)

        plans = [rel.plan for _, rel in sources]
        join_conditions: list[exp.Expression] = []
        top_filters: list[exp.Expression] = []
        for conjunct in conjuncts:
            rewritten = rewrite(conjunct)
            owners = {owner[c] for c in referenced_columns(rewritten)}
            if len(owners) == 1 and len(sources) > 1:
                (i,) = owners
                plans[i] = Filter(plans[i], rewritten)
            elif len(owners) > 1:
                join_conditions.append(rewritten)
            else:
                top_filters.append(rewritten)

        plan: Node = plans[0] if len(plans) == 1 else Join(tuple(plans), tuple(join_conditions))
        for predicate in top_filters:
            plan = Filter(plan, predicate)

        exprs = []
        names = []
        for projection in node.expressions:
            names.append(projection.alias_or_name)
            inner = projection.this if isinstance(projection, exp.Alias) else projection
            exprs.append((self.names.fresh(), rewrite(inner)))
        return _Relation(Project(plan, tuple(exprs)), tuple(names))

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
            return alias, self.query(node.this, ctes)
        raise UnsupportedSql(node.sql(DIALECT), "unsupported FROM item")
