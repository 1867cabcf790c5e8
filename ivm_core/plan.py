"""The relational plan the analyzer builds and the delta rules rewrite.

Every node denotes a Z-set: a bag of rows over the node's ``columns`` where each row carries an
integer weight (the ``_ivm_weight`` column in SQL). Column names inside a plan are internal and
unique across the whole plan (``c0``, ``c1``, ...), so expressions can refer to them unqualified.
Expressions are sqlglot trees; Spark evaluates them, we only move them around.

A ``Scan`` leaf reads one *version* of an input:

- ``CURRENT``: the input as the model's SQL names it (only in the analyzer's output),
- ``OLD``: the integrated input at the consumed watermark (``I(x)₋₁``, the stored state),
- ``NEW``: the integrated input at the captured high mark (``OLD + DELTA``),
- ``DELTA``: the consolidated changes in ``(watermark, high]``.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from sqlglot import exp

from ivm_core.sqltext import expression


class Version(enum.Enum):
    CURRENT = "current"
    OLD = "old"
    NEW = "new"
    DELTA = "delta"


@dataclass(frozen=True)
class Node:
    """Base of all plan nodes."""

    @property
    def columns(self) -> tuple[str, ...]:
        raise NotImplementedError

    @property
    def children(self) -> tuple["Node", ...]:
        return ()

    def with_children(self, children: tuple["Node", ...]) -> "Node":
        raise NotImplementedError


@dataclass(frozen=True)
class Scan(Node):
    """Reads ``input_columns`` of input ``input`` (its key), exposing them as ``out``."""

    input: str
    input_columns: tuple[str, ...]
    out: tuple[str, ...]
    version: Version = Version.CURRENT

    @property
    def columns(self) -> tuple[str, ...]:
        return self.out

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return self


@dataclass(frozen=True)
class Empty(Node):
    """The empty Z-set with the given columns (a delta that is known to be zero)."""

    out: tuple[str, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return self.out

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return self


@dataclass(frozen=True)
class Filter(Node):
    child: Node
    predicate: exp.Expression

    @property
    def columns(self) -> tuple[str, ...]:
        return self.child.columns

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return dataclasses.replace(self, child=children[0])


@dataclass(frozen=True)
class Project(Node):
    """``SELECT expr AS name, ...``; the weight of each row passes through unchanged."""

    child: Node
    exprs: tuple[tuple[str, exp.Expression], ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.exprs)

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return dataclasses.replace(self, child=children[0])


@dataclass(frozen=True)
class Join(Node):
    """N-way inner join of ``inputs`` on the conjunction of ``conditions``.

    The weight of an output row is the product of the weights of the joined rows. The order of
    ``inputs`` is the order Spark joins them in (left-deep); the delta rule chooses it.
    """

    inputs: tuple[Node, ...]
    conditions: tuple[exp.Expression, ...]
    broadcast_first: bool = False  # an update path: the first input is a (small) change

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(itertools.chain.from_iterable(i.columns for i in self.inputs))

    @property
    def children(self) -> tuple[Node, ...]:
        return self.inputs

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return dataclasses.replace(self, inputs=tuple(children))


@dataclass(frozen=True)
class UnionAll(Node):
    """Bag union; child ``i``'s columns map positionally onto ``out``."""

    inputs: tuple[Node, ...]
    out: tuple[str, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return self.out

    @property
    def children(self) -> tuple[Node, ...]:
        return self.inputs

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return dataclasses.replace(self, inputs=tuple(children))


@dataclass(frozen=True)
class AggCall:
    """One aggregate of an ``Aggregate``: ``func`` over the child column ``arg``.

    ``func`` names an aggregate function of ``rules/aggregate/functions`` (``count_star``,
    ``count``, ``sum``, ``avg``, ``min``, ``max``, ``count_distinct``, ``sum_distinct``).
    ``FILTER (WHERE p)`` is folded into ``arg`` by the analyzer (``CASE WHEN p THEN x END``), so
    it needs no field here.
    """

    name: str
    func: str
    arg: str | None = None


@dataclass(frozen=True)
class Aggregate(Node):
    """``GROUP BY keys`` with ``aggs``; also DISTINCT and the set operations.

    Output: ``out_keys`` (the group keys, renamed) then one column per aggregate. Each group's
    row has weight ``multiplicity`` — an expression over the group's aggregate columns and its
    row count ``_ivm_count`` — when that is positive, and is absent otherwise. The default is 1
    for groups with ``_ivm_count > 0``; ``is_global`` (no GROUP BY) always yields exactly one row.
    ``id`` names the aggregate's state tables.
    """

    child: Node
    keys: tuple[str, ...]
    out_keys: tuple[str, ...]
    aggs: tuple[AggCall, ...]
    id: str
    is_global: bool = False
    multiplicity: exp.Expr | None = None  # Expr: sqlglot's builders (exp.func) are typed so

    @property
    def columns(self) -> tuple[str, ...]:
        return self.out_keys + tuple(a.name for a in self.aggs)

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return dataclasses.replace(self, child=children[0])

    @property
    def keeps_rows(self) -> bool:
        """Whether the aggregate only keeps its child's rows as state (a *bag state*: grouped
        by every column, each distinct row weighted by its copies): its output is its child,
        renamed, and so is its change."""
        return (not self.aggs and self.keys == self.child.columns and isinstance(self.multiplicity, exp.Column)
                and self.multiplicity.name == ROW_COUNT)

    @property
    def takes_pieces(self) -> bool:
        """Whether the state takes each change as appended pieces (a Z-set: readers sum a row's
        pieces; the run compacts it as it does a join index): a window's output rows. Their
        change never deletes a row the state does not hold — its retractions are the rows the
        state holds, read by the window's own change — so no write needs to check it."""
        return self.keeps_rows and isinstance(self.child, Window)


ROW_COUNT = "_ivm_count"  # an aggregate's row count per group (rules.aggregate.layout.COUNT)


@dataclass(frozen=True)
class Window(Node):
    """Window functions over ``child`` that share one ``PARTITION BY`` (``partition``, child
    columns): every row of the child, each copy apart, gets the value of each of ``calls``
    (name, the function with its ``OVER`` clause over child columns) over the rows of its
    partition. The analyzer keeps the window's output rows as a bag state above it (an
    ``Aggregate`` that ``keeps_rows``, whose id is ``state``): its change is computed from them
    (``rules.window``)."""

    child: Node
    partition: tuple[str, ...]
    calls: tuple[tuple[str, exp.Expression], ...]
    state: str

    @property
    def columns(self) -> tuple[str, ...]:
        return self.child.columns + tuple(name for name, _ in self.calls)

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return dataclasses.replace(self, child=children[0])


@dataclass(frozen=True)
class WindowDelta(Node):
    """The change of ``window``'s output given its child's change ``child_delta``: for every
    partition the change touches, the window over the partition's new rows minus its rows as
    the state above the window holds them."""

    window: Window
    child_delta: Node

    @property
    def columns(self) -> tuple[str, ...]:
        return self.window.columns

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child_delta,)

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return dataclasses.replace(self, child_delta=children[0])


@dataclass(frozen=True)
class WindowResult(Node):
    """A model whose rows are filters and projections (``child``) over one ``Window`` whose
    child only scans, filters, projects and unions inputs, passing each of the window's
    ``PARTITION BY`` columns through as a bare column (``keys``: those columns of ``child``, in
    ``window.partition``'s order). The model's target holds its rows, so no state is kept above
    the window: a change recomputes the partitions it touches from the inputs and retracts the
    target's rows of those partitions (``rules.window_result``).

    ``top``: when the model keeps each partition's top rows — its only filter bounds the
    window's one call, a ``ROW_NUMBER``, ``RANK`` or ``DENSE_RANK`` with an ``ORDER BY``
    (``= 1``, ``<= n``, ``< n``) — and passes every column of the window's child through, the
    columns of ``child`` holding them, in the window's child's order: the target then holds
    whole rows of the child, and a change that only inserts ranks the touched partitions again
    from those rows and the inserted ones, without reading the inputs (None: it reads them)."""

    child: Node
    keys: tuple[str, ...]
    top: tuple[str, ...] | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        return self.child.columns

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return dataclasses.replace(self, child=children[0])

    @property
    def window(self) -> "Window":
        node = below_projections_and_filters(self.child)
        if not isinstance(node, Window):  # pragma: no cover - rules.window_result.lift builds it so
            raise TypeError("a WindowResult is projections and filters over a Window")
        return node


@dataclass(frozen=True)
class WindowResultDelta(Node):
    """The change of ``result`` given its window's child's change ``child_delta`` and the
    window's child over the inputs after the change, ``child_new``: the touched partitions of
    ``child_new`` through the window and ``result``'s filters and projections, minus the rows
    of those partitions the model's target holds."""

    result: WindowResult
    child_delta: Node
    child_new: Node

    @property
    def columns(self) -> tuple[str, ...]:
        return self.result.columns

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child_delta, self.child_new)

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return dataclasses.replace(self, child_delta=children[0], child_new=children[1])


@dataclass(frozen=True)
class AggregateRead(Node):
    """The integrated output of ``aggregate``, read from its state tables (as they were before
    this run in a change's update paths; as the run left them in ``Program.result_sql``)."""

    aggregate: Aggregate

    @property
    def columns(self) -> tuple[str, ...]:
        return self.aggregate.columns

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return self


@dataclass(frozen=True)
class AggregateDelta(Node):
    """The change of ``aggregate``'s output given its child's change ``child_delta``:
    for every group the change touches, ``−row(old state) + row(old state + Δ)``."""

    aggregate: Aggregate
    child_delta: Node

    @property
    def columns(self) -> tuple[str, ...]:
        return self.aggregate.columns

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child_delta,)

    def with_children(self, children: tuple[Node, ...]) -> Node:
        return dataclasses.replace(self, child_delta=children[0])


def walk(node: Node) -> Iterator[Node]:
    """Pre-order traversal."""
    yield node
    for child in node.children:
        yield from walk(child)


def scans(node: Node) -> list[Scan]:
    return [n for n in walk(node) if isinstance(n, Scan)]


def read_only_by_aggregates(plan: Node) -> frozenset[str]:
    """The inputs every scan of which feeds an aggregate through filters, projections and
    unions only. Every aggregate state is a sum of weights per group (and value), so such an
    input's change needs no consolidation first: the rows of one row's insert and delete in a
    window sum to nothing in the aggregate's own GROUP BY, whose partial aggregation runs
    before its shuffle (consolidating first shuffles every change row)."""
    aggregated: set[str] = set()
    elsewhere: set[str] = set()

    def visit(node: Node, under_aggregate: bool) -> None:
        if isinstance(node, Scan):
            (aggregated if under_aggregate else elsewhere).add(node.input)
            return
        if isinstance(node, (Aggregate, AggregateDelta)):
            under_aggregate = True
        elif not isinstance(node, (Filter, Project, UnionAll)):
            under_aggregate = False
        for child in node.children:
            visit(child, under_aggregate)

    visit(plan, False)
    return frozenset(aggregated - elsewhere)


def transform(node: Node, fn) -> Node:
    """Bottom-up rewrite: ``fn`` receives each node with already-rewritten children."""
    children = tuple(transform(c, fn) for c in node.children)
    if children != node.children:
        node = node.with_children(children)
    return fn(node)


def at_version(node: Node, version: Version, delta=None) -> Node:
    """The same plan reading every input at ``version``.

    An aggregate is not recomputed from its child: ``OLD`` reads its state, and ``NEW`` (which
    needs ``delta``, the differentiator) is ``OLD + Δ``.
    """
    if isinstance(node, Scan):
        return dataclasses.replace(node, version=version)
    if isinstance(node, Aggregate) and version in (Version.OLD, Version.NEW):
        old = AggregateRead(node)
        if version is Version.OLD:
            return old
        change = delta(node)
        if isinstance(change, Empty):
            return old
        return UnionAll((old, change), node.columns)
    if not node.children:
        return node
    return node.with_children(tuple(at_version(c, version, delta) for c in node.children))


def copies_per_row(sides: Sequence[tuple[Node, Sequence[str]]], fresh: Callable[[], str], aggregate_id: str,
                   multiplicity: Callable[[exp.Column, exp.Column], exp.Expr]) -> Aggregate:
    """The distinct rows of two bags (each side's ``columns``, matched by position), each with
    its copies on either side: an ``Aggregate`` over both sides' rows, tagged by side, whose
    keys are the rows, whose two counts are the copies on the first and on the second side,
    and whose row weight is ``multiplicity(first, second)`` of those counts."""
    (_, first_columns), _ = sides
    width = len(first_columns)
    keys = tuple(fresh() for _ in range(width))
    tags = (fresh(), fresh())
    tagged = []
    one, null = exp.Literal.number(1), exp.null()
    for (plan, columns), marks in zip(sides, ((one, null), (null, one))):
        exprs = [(fresh(), exp.column(c)) for c in columns] + [(fresh(), exp.cast(m, "INT")) for m in marks]
        tagged.append(Project(plan, tuple(exprs)))
    counts = (fresh(), fresh())
    out_keys = tuple(fresh() for _ in range(width))
    return Aggregate(
        UnionAll(tuple(tagged), keys + tags),
        keys,
        out_keys,
        tuple(AggCall(count, "count", tag) for count, tag in zip(counts, tags)),
        aggregate_id,
        multiplicity=multiplicity(*(exp.column(c) for c in counts)),
    )


def replace_node(node: Node, old: Node, new: Node) -> Node:
    """``node`` with the subtree ``old`` (by identity) replaced by ``new``."""
    if node is old:
        return new
    return node.with_children(tuple(replace_node(c, old, new) for c in node.children))


def below_projections_and_filters(plan: Node) -> Node:
    """The first node of ``plan`` under the projections and filters at its top."""
    while isinstance(plan, (Project, Filter)):
        plan = plan.child
    return plan


def aggregate_below(plan: Node) -> Aggregate | None:
    """The aggregate under the projections and filters at the top of ``plan``, if any."""
    plan = below_projections_and_filters(plan)
    return plan if isinstance(plan, Aggregate) else None


def unique_key(node: Node) -> frozenset[str] | None:
    """Columns no two rows of ``node`` agree on, when its rows are a set (every weight 1): an
    aggregate's group keys (DISTINCT's are all its columns; none for a global aggregate: one
    row), a window's partition and ROW_NUMBER, kept by filters (less a column they hold at one
    literal), by projections that pass each of them through as a bare column, and by inner
    joins of sets (their keys together). None when rows may repeat (a scan, a union,
    an aggregate whose ``multiplicity`` may exceed 1)."""
    if isinstance(node, Aggregate):
        if node.keeps_rows:  # the child's rows, renamed
            below = unique_key(node.child)
            renamed = dict(zip(node.keys, node.out_keys))
            return None if below is None else frozenset(renamed[c] for c in below)
        return frozenset(node.out_keys) if node.multiplicity is None else None
    if isinstance(node, WindowResult):
        return unique_key(node.child)
    if isinstance(node, Window):
        below = unique_key(node.child)
        if below is not None:
            return below
        # ROW_NUMBER numbers every row of a partition apart, copies too
        numbered = [name for name, call in node.calls if isinstance(call.this, exp.RowNumber)]
        return frozenset(node.partition + (numbered[0],)) if numbered else None
    if isinstance(node, Filter):
        below = unique_key(node.child)
        if below is None:
            return None
        # a column the filter holds at one value tells no two rows apart (ROW_NUMBER … = 1)
        fixed = {c.left.name for c in conjuncts(node.predicate)
                 if isinstance(c, exp.EQ) and isinstance(c.left, exp.Column) and isinstance(c.right, exp.Literal)}
        return below - fixed
    if isinstance(node, Project):
        below = unique_key(node.child)
        if below is None:
            return None
        kept = {e.name: name for name, e in node.exprs if isinstance(e, exp.Column)}
        return frozenset(kept[c] for c in below) if all(c in kept for c in below) else None
    if isinstance(node, Join):
        key: frozenset[str] = frozenset()
        for side in node.inputs:
            below = unique_key(side)
            if below is None:
                return None
            key |= below
        return key
    return None


def referenced_columns(expression: exp.Expression) -> set[str]:
    return {c.name for c in expression.find_all(exp.Column)}


def conjuncts(expression: exp.Expr | None) -> list[exp.Expr]:
    """The terms AND-ed at the top of ``expression`` (a ``WHERE`` or a condition; None: none)."""
    if expression is None:
        return []
    if isinstance(expression, exp.Where):
        expression = expression.this
    expression = expression.unnest()
    if isinstance(expression, exp.And):
        return conjuncts(expression.left) + conjuncts(expression.right)
    return [expression]


def own_scope(expression: exp.Expr):
    """The nodes of ``expression`` outside the queries nested in it (each has its own scope;
    a nested query's own node is visited, not its insides)."""
    return expression.walk(prune=lambda n: n is not expression and isinstance(n, exp.Query))


def describe(node: Node, indent: int = 0) -> str:
    """A readable one-node-per-line rendering, for explain output and test failures."""
    pad = "  " * indent
    if isinstance(node, Scan):
        cols = ", ".join(f"{c}->{o}" for c, o in zip(node.input_columns, node.out))
        head = f"Scan[{node.version.value}] {node.input} ({cols})"
    elif isinstance(node, Empty):
        head = f"Empty ({', '.join(node.out)})"
    elif isinstance(node, Filter):
        head = f"Filter {expression(node.predicate)}"
    elif isinstance(node, Project):
        head = "Project " + ", ".join(f"{expression(e)} AS {n}" for n, e in node.exprs)
    elif isinstance(node, Join):
        head = "Join on " + (" AND ".join(expression(c) for c in node.conditions) or "true")
    elif isinstance(node, UnionAll):
        head = f"UnionAll -> ({', '.join(node.out)})"
    elif isinstance(node, Aggregate):
        aggs = ", ".join(f"{a.func}({a.arg or ''}) AS {a.name}" for a in node.aggs)
        keys = ", ".join(f"{k}->{o}" for k, o in zip(node.keys, node.out_keys))
        head = f"Aggregate[{node.id}{', global' if node.is_global else ''}] keys ({keys}) {aggs}"
        if node.multiplicity is not None:
            head += f" multiplicity {expression(node.multiplicity)}"
    elif isinstance(node, AggregateRead):
        return pad + f"AggregateRead[{node.aggregate.id}] ({', '.join(node.columns)})"
    elif isinstance(node, AggregateDelta):
        head = f"AggregateDelta[{node.aggregate.id}] ({', '.join(node.columns)})"
    elif isinstance(node, Window):
        calls = ", ".join(f"{expression(e)} AS {n}" for n, e in node.calls)
        head = f"Window[{node.state}] partition ({', '.join(node.partition)}) {calls}"
    elif isinstance(node, WindowDelta):
        head = f"WindowDelta[{node.window.state}] ({', '.join(node.columns)})"
    elif isinstance(node, WindowResult):
        head = f"WindowResult keys ({', '.join(node.keys)}): the target holds the window's rows, no state"
        if node.top is not None:
            head += f"; top rows ({', '.join(node.top)})"
    elif isinstance(node, WindowResultDelta):
        head = f"WindowResultDelta ({', '.join(node.columns)}): change, then the window's child after it"
    else:  # pragma: no cover - every node type is listed above
        head = type(node).__name__
    lines = [pad + head]
    lines += [describe(c, indent + 1) for c in node.children]
    return "\n".join(lines)
