"""Spark SQL for a plan.

Every node becomes a SELECT that yields the node's columns plus ``_ivm_weight BIGINT``. Leaves
are rendered by the caller (``leaf``), which knows where each version of an input lives: the
state table, the consolidated change window, or both (``NEW``). Expressions are emitted as
sqlglot renders them for Spark, so Spark — not us — gives them their types and values. The
nodes of an aggregate are rendered by the aggregation rule's SQL (``rules.aggregate.sql``),
which the ``Env`` carries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from sqlglot import exp

from ivm_core.plan import (
    scans,
    Aggregate,
    AggregateDelta,
    AggregateRead,
    Empty,
    Filter,
    Join,
    Node,
    Project,
    Scan,
    UnionAll,
    Window,
    WindowDelta,
    WindowResult,
    WindowResultDelta,
    referenced_columns,
)
from ivm_core.rules import window as window_rule
from ivm_core.rules import window_result as window_result_rule
from ivm_core.rules.aggregate.held import TARGET
from ivm_core.rules.aggregate.layout import GROUPS
from ivm_core.sqltext import WEIGHT, expression, quote, subquery
from ivm_core.statements import KeyBound

LeafRenderer = Callable[[Scan], str]
# (aggregate id, table: Layout.tables, or held.TARGET: the model's target) -> the table, as read
StateRenderer = Callable[[str, str], str]


class AggregateRenderer(Protocol):
    """The SQL of one aggregate's nodes (``rules.aggregate.sql.AggregateSql``)."""

    agg: Aggregate
    layout: Any  # rules.aggregate.layout.Layout: where its states are stored

    def plain_sql(self, child_sql: str) -> str: ...

    def read_sql(self, state: Callable[[str], str]) -> str: ...

    def pieces_sql(self, state: Callable[[str], str]) -> str: ...

    def delta_sql(self, child_delta_sql: str, state: Callable[[str], str],
                  within: KeyBound | None = None) -> str: ...


@dataclass
class Env:
    """Where the SQL of a plan reads from.

    ``leaf`` renders each input version; ``state`` names the tables an aggregate's states are
    stored in (``state_table`` reads one state from them);
    ``aggregates`` renders each aggregate's nodes (by aggregate id: ``Program.env`` fills it);
    ``staged`` names, by aggregate id, a relation already holding the aggregate's child change
    (computed once per run and read by the output change and by every state update);
    ``staged_deltas`` names, by aggregate id, a relation already holding the aggregate's own
    change (its touched groups' old and new rows, ``AggregateDelta``), read wherever the plan
    reads that change; ``result`` is the model's rows as its target holds them, over the plan's columns, a row per
    copy (``Program.held_result``): a ``WindowResult``'s change retracts them; ``inserting_only``
    names the inputs whose change the run only inserts rows (its validation's probe): a rule may
    then read less (``rules.window_result``'s top rows); ``within`` gives, by aggregate id, a
    group key and the ranges every group the run's change touches is within
    (``Program.state_bounds``): its state is read and updated only within them; ``touched``
    names, by (aggregate id, state name), a relation already holding the state's rows, as the
    last commit left them, of every group the run's change touches (``Program.touched_states``):
    read instead of the state wherever a rule reads only those groups (an aggregate's change,
    the second pass of its state's update); ``groups`` names, by aggregate id, a relation read
    as its group state instead of its tables (the new group state a target that holds it is
    rewritten from: ``Program.rewritten_result_sql``).
    """

    leaf: LeafRenderer
    state: StateRenderer | None = None
    aggregates: Mapping[str, AggregateRenderer] = field(default_factory=dict)
    staged: Mapping[str, str] = field(default_factory=dict)
    staged_deltas: Mapping[str, str] = field(default_factory=dict)
    result: str | None = None
    inserting_only: frozenset[str] = frozenset()
    within: Mapping[str, KeyBound] = field(default_factory=dict)
    touched: Mapping[tuple[str, str], str] = field(default_factory=dict)
    groups: Mapping[str, str] = field(default_factory=dict)

    def state_table(self, agg_id: str, name: str) -> str:
        """The rows of the aggregate's state ``name``, read from the table ``state`` names for
        it (``Layout.stored``; an error when the Env names none) — a group state the target
        holds (``Layout.held``) from the target."""
        if self.state is None:
            raise ValueError(f"aggregate {agg_id} reads its state: the Env names no state tables")
        if name == GROUPS and agg_id in self.groups:
            return self.groups[agg_id]
        layout = self.aggregates[agg_id].layout
        held = layout.held if name == GROUPS else None
        if held is not None:  # the target, its columns renamed
            return held.read(self.state(agg_id, TARGET))
        stored = layout.stored(name)
        return stored.read(self.state(agg_id, stored.table))

    def touched_state(self, agg_id: str, name: str) -> str:
        """What a rule that reads only the touched groups of a state reads: the ``touched``
        relation, when the run staged one, else the state itself."""
        return self.touched.get((agg_id, name)) or self.state_table(agg_id, name)


class _Gen:
    def __init__(self, env: Env):
        self.env = env
        self.leaf = env.leaf
        self.aliases = 0

    def alias(self) -> str:
        self.aliases += 1
        return f"t{self.aliases}"

    def sql(self, node: Node) -> str:
        method = getattr(self, "_" + type(node).__name__.lower())
        return method(node)

    def _scan(self, node: Scan) -> str:
        cols = [f"{quote(src)} AS {out}" for src, out in zip(node.input_columns, node.out)]
        return f"SELECT {', '.join(cols + [WEIGHT])}\nFROM {self.leaf(node)}"

    def _empty(self, node: Empty) -> str:
        raise ValueError("an empty change has no SQL; the caller skips it")

    def _filter(self, node: Filter) -> str:
        return f"SELECT *\nFROM {subquery(self.sql(node.child), self.alias())}\nWHERE ({expression(node.predicate)})"

    def _project(self, node: Project) -> str:
        cols = [f"{expression(e)} AS {name}" for name, e in node.exprs]
        return f"SELECT {', '.join(cols + [WEIGHT])}\nFROM {subquery(self.sql(node.child), self.alias())}"

    def _join(self, node: Join) -> str:
        if node.broadcast_first:
            return self._delta_join(node)
        aliases = [self.alias() for _ in node.inputs]
        owner = {c: aliases[i] for i, n in enumerate(node.inputs) for c in n.columns}
        pending = list(node.conditions)
        parts = [f"FROM {subquery(self.sql(node.inputs[0]), aliases[0])}"]
        available = set(node.inputs[0].columns)
        for child, alias in zip(node.inputs[1:], aliases[1:]):
            available |= set(child.columns)
            now, pending = _split(pending, available)
            parts.append(f"JOIN {subquery(self.sql(child), alias)}\n  ON {_on(now, owner)}")
        cols = [f"{owner[c]}.{c}" for c in node.columns]
        weight = " * ".join(f"{a}.{WEIGHT}" for a in aliases)
        sql = f"SELECT {', '.join(cols + [f'{weight} AS {WEIGHT}'])}\n" + "\n".join(parts)
        if pending:
            sql += "\nWHERE " + " AND ".join(f"({_qualified(c, owner)})" for c in pending)
        return sql

    def _delta_join(self, node: Join) -> str:
        """An update path: a change joined with integrated inputs, one input at a time. Each
        step broadcasts what is joined so far (the change, grown by the rows it matched) to the
        scan of the next input, so no integrated input is ever shuffled: Spark cannot know
        that the intermediate result is small, and would otherwise sort-merge join it."""
        sql = self.sql(node.inputs[0])
        left_columns = list(node.inputs[0].columns)
        pending = list(node.conditions)
        for child in node.inputs[1:]:
            left_alias, right_alias = self.alias(), self.alias()
            owner = {c: left_alias for c in left_columns} | {c: right_alias for c in child.columns}
            now, pending = _split(pending, set(owner))
            cols = [f"{owner[c]}.{c}" for c in left_columns + list(child.columns)]
            weight = f"{left_alias}.{WEIGHT} * {right_alias}.{WEIGHT} AS {WEIGHT}"
            sql = (
                f"SELECT /*+ BROADCAST({left_alias}) */ {', '.join(cols + [weight])}\n"
                f"FROM {subquery(sql, left_alias)}\n"
                f"JOIN {subquery(self.sql(child), right_alias)}\n  ON {_on(now, owner)}"
            )
            left_columns += child.columns
        if pending:  # pragma: no cover - every condition's columns are available after the last input
            raise ValueError("join condition over unknown columns")
        return sql

    def _unionall(self, node: UnionAll) -> str:
        branches = []
        for child in node.inputs:
            cols = [f"{c} AS {o}" for c, o in zip(child.columns, node.out)]
            branches.append(
                f"SELECT {', '.join(cols + [WEIGHT])}\nFROM {subquery(self.sql(child), self.alias())}"
            )
        return "\nUNION ALL\n".join(branches)

    def _renderer(self, agg: Aggregate) -> AggregateRenderer:
        renderer = self.env.aggregates.get(agg.id)
        if renderer is None:
            raise ValueError(f"no SQL for aggregate {agg.id}: render its plan with Program.env")
        return renderer

    def _state(self, agg: Aggregate) -> Callable[[str], str]:
        return lambda name: self.env.state_table(agg.id, name)

    def _aggregate(self, node: Aggregate) -> str:
        # Only reached when asking Spark for types: the model's own GROUP BY over bags.
        return self._renderer(node).plain_sql(self.sql(node.child))

    def _aggregateread(self, node: AggregateRead) -> str:
        return self._renderer(node.aggregate).read_sql(self._state(node.aggregate))

    def _aggregatedelta(self, node: AggregateDelta) -> str:
        staged = self.env.staged_deltas.get(node.aggregate.id)
        return f"SELECT * FROM {staged}" if staged else self.aggregate_change(node)

    def aggregate_change(self, node: AggregateDelta) -> str:
        agg_id = node.aggregate.id
        renderer = self._renderer(node.aggregate)  # (it reads the touched groups of the state only)
        return renderer.delta_sql(self.child_change(agg_id, node.child_delta),
                                  lambda name: self.env.touched_state(agg_id, name), self.env.within.get(agg_id))

    def _window(self, node: Window) -> str:
        return window_rule.rows_sql(node, self.sql(node.child))

    def _windowdelta(self, node: WindowDelta) -> str:
        state = self.env.aggregates.get(node.window.state)
        if state is None:
            raise ValueError(f"no SQL for window {node.window.state}'s state: render its plan with Program.env")
        # the state's output columns are the window's, renamed: by position
        renamed = [f"{quote(o)} AS {c}" for o, c in zip(state.agg.columns, node.window.columns)]
        read = state.pieces_sql(self._state(state.agg))  # summed by the rule, after its filter
        held = f"SELECT {', '.join(renamed + [WEIGHT])}\nFROM {subquery(read, self.alias())}"
        return window_rule.delta_sql(node.window, self.sql(node.child_delta), held)

    def _windowresult(self, node: WindowResult) -> str:
        return self.sql(node.child)

    def _windowresultdelta(self, node: WindowResultDelta) -> str:
        if self.env.result is None:
            raise ValueError("a window result's change retracts the target's rows: the Env names none")
        leaf = self.leaf

        def touched(scan: Scan) -> str:
            return window_result_rule.TOUCHED if scan.input == window_result_rule.TOUCHED else leaf(scan)

        def over_touched(plan: Node) -> str:
            self.leaf = touched
            try:
                return self.sql(plan)
            finally:
                self.leaf = leaf

        inserts_only = {s.input for s in scans(node.child_delta)} <= self.env.inserting_only
        return window_result_rule.delta_sql(node, self.sql(node.child_delta), lambda: self.sql(node.child_new),
                                            self.env.result, over_touched, inserts_only)

    def child_change(self, agg_id: str, child_delta: Node) -> str:
        staged = self.env.staged.get(agg_id)
        return f"SELECT * FROM {staged}" if staged else self.sql(child_delta)


def _split(pending: list[exp.Expression], available: set[str]):
    """The conditions computable over ``available`` columns, and the rest."""
    now = [c for c in pending if referenced_columns(c) <= available]
    return now, [c for c in pending if c not in now]


def _qualified(cond: exp.Expression, owner: Mapping[str, str]) -> str:
    def q(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and n.name in owner:
            return exp.column(n.name, table=owner[n.name])
        return n

    return expression(cond.copy().transform(q))


def _on(conditions: list[exp.Expression], owner: Mapping[str, str]) -> str:
    return " AND ".join(f"({_qualified(c, owner)})" for c in conditions) if conditions else "TRUE"


def child_change_sql(agg_id: str, child_delta: Node, env: Env) -> str:
    """An aggregate's child change: its staged relation, or the SQL computing it."""
    return _Gen(env).child_change(agg_id, child_delta)


def aggregate_change_sql(node: AggregateDelta, env: Env) -> str:
    """An aggregate's own change, computed (never its staged relation)."""
    return _Gen(env).aggregate_change(node)


def to_sql(node: Node, env: Env | LeafRenderer) -> str:
    """A SELECT producing ``node.columns`` and ``_ivm_weight``."""
    if not isinstance(env, Env):
        env = Env(leaf=env)
    return _Gen(env).sql(node)
