"""The compiled form of an incremental_ivm model: its plan, the state each input needs and the
SQL of its change.

``compile_model`` analyzes the SQL, prunes unused columns and decides, per input, whether any
update path reads the input's integrated value (then the input needs a join index: a state
table holding the input's rows — only the columns the model uses — with their net weights).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Callable, Collection, Mapping, Sequence

from sqlglot import exp

from ivm_core.analyzer import Analysis, InputSchema, analyze
from ivm_core.bookkeeping import all_rows
from ivm_core.errors import IvmError
from ivm_core.plan import (
    Aggregate,
    AggregateDelta,
    AggregateRead,
    Empty,
    Filter,
    Join,
    Node,
    Project,
    Scan,
    Version,
    WindowDelta,
    WindowResult,
    aggregate_below,
    at_version,
    conjuncts,
    scans,
    read_only_by_aggregates,
    replace_node,
    unique_key,
    walk,
)
from ivm_core.prune import prune
from ivm_core.rules import differentiate
from ivm_core.rules import window_result
from ivm_core.rules.aggregate import AGGREGATORS, GROUPS, SET, STATES, AggregateSql, CallTypes, Layout, value_state
from ivm_core.rules.aggregate.held import GROUPS_APART, shape_holds, target_columns
from ivm_core.sqlgen import Env, LeafRenderer, StateRenderer, aggregate_change_sql, child_change_sql, to_sql
from ivm_core.sqltext import DIALECT, WEIGHT, quote, subquery
from ivm_core.statements import KeyBound, KeyRanges, ranged, with_ctes
from ivm_core.top_k import TopK


@dataclass(frozen=True)
class InputUse:
    """How the model uses one input."""

    key: str
    columns: tuple[str, ...]  # the input's columns the model reads, in the input's order
    all_columns: tuple[tuple[str, str], ...]  # (name, type) of every input column
    stateful: bool  # some update path reads the input's integrated value
    # Spark SQL over the input's columns: the rows its join index keeps (None: all of them)
    index_filter: str | None = None
    # (column, other input): the input's columns an equality join compares with a column of
    # another input, in plan order. A change's key ranges are computed over these columns, and
    # the join index is sorted by one of them (``cluster_key``)
    join_keys: tuple[tuple[str, str], ...] = ()

    @property
    def types(self) -> dict[str, str]:
        return dict(self.all_columns)

    @property
    def key_columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c for c, _ in self.join_keys))

    def cluster_key(self, input_rows: Mapping[str, int]) -> str | None:
        """The column the join index is sorted by, so that a read bounded by a change's key
        ranges skips the files and row groups outside them: the key joined with the largest
        other input (``input_rows``: rows per input), whose changes are the likeliest to be
        large — orders is sorted by its order key (probed by lineitem's changes), not by its
        customer key."""
        best: tuple[int, str] | None = None
        for column, other in self.join_keys:
            rows = input_rows.get(other, 0)
            if best is None or rows > best[0]:
                best = (rows, column)
        return best[1] if best else None


@dataclass(frozen=True)
class StateStatement:
    """A statement that builds or updates one aggregate state table."""

    aggregate: str
    state: str  # GROUPS or value_state(arg)
    sql: str
    refused_sql: str | None = None  # counts what the statement refuses (a failed run's message)
    sort_key: str | None = None  # a build's: the state's column its rows are written sorted by
    partition: str | None = None  # a build's: the column its table is partitioned by


@dataclass
class Program:
    sql: str
    plan: Node  # the model over CURRENT inputs, pruned
    output_names: tuple[str, ...]
    inputs: dict[str, InputUse]
    layouts: dict[str, Layout]  # per aggregate id, bottom-up order
    top_k: TopK | None = None  # ORDER BY … LIMIT: the model keeps these rows of the plan's
    # Spark's types of the aggregates' arguments and results, as ``bind_types`` recorded them
    types: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def aggregates(self) -> list[Aggregate]:
        return [layout.agg for layout in self.layouts.values()]

    def env(self, leaf: LeafRenderer, state=None, staged=None, result: str | None = None,
            inserting_only: frozenset[str] = frozenset(), staged_deltas=None, within=None, touched=None) -> Env:
        staged = staged or {}
        aggregates = {agg_id: self._aggregate_sql(agg_id, staged) for agg_id in self.layouts}
        return Env(leaf=leaf, state=state, aggregates=aggregates, staged=staged,
                   staged_deltas=staged_deltas or {}, result=result, inserting_only=inserting_only,
                   within=within or {}, touched=touched or {})

    def _aggregate_sql(self, agg_id: str, staged: Mapping[str, str]) -> AggregateSql:
        """The aggregate's SQL, reading its child change as the run staged it: as its row
        partials when it reads them only (``Layout.reads_child_as_partials``)."""
        layout = self.layouts[agg_id]
        return AggregateSql(layout, child_is_partials=agg_id in staged and layout.reads_child_as_partials)

    def held_result(self, target: str, columns: Sequence[str]) -> str:
        """The model's rows as ``target`` holds them (its ``columns``, by position), over the
        plan's columns, a row per copy: ``Env.result``."""
        cols = [f"{quote(name)} AS {internal}" for internal, name in zip(self.plan.columns, columns)]
        return f"SELECT {', '.join(cols)}, CAST(1 AS BIGINT) AS {WEIGHT}\nFROM {target}"

    def delta_plan(self, changed: set[str] | frozenset[str]) -> Node:
        return differentiate(self.plan, frozenset(changed) & frozenset(self.inputs))

    def delta_sql(self, changed, leaf: LeafRenderer | Env, output_columns: list[str] | None = None) -> str | None:
        """SELECT of the model's output change (not consolidated), or None when it is zero.

        ``output_columns`` names the result columns (the target's names, by position).
        """
        plan = self.delta_plan(changed)
        if isinstance(plan, Empty):
            return None
        env = leaf if isinstance(leaf, Env) else self.env(leaf)
        return _select_outputs(plan, env, output_columns or list(self.output_names))

    def result_from_state(self) -> Aggregate | None:
        """The aggregate the model's result can be read from, when the model is projections and
        filters over one aggregate (Q1-, Q3-like): its result is then the plan with that
        aggregate read from its state, and a run that need not publish its change rewrites a
        small target from the state it has just updated, without computing the change."""
        return aggregate_below(self.plan)

    def result_states(self) -> list[tuple[str, str]]:
        """(aggregate id, state name) of the states ``result_sql`` reads: the group state of the
        aggregate the result is read from and the value states its rows are read back from
        (``Layout.summarized_args``: a MIN/MAX's — not a COUNT(DISTINCT)'s, whose count is in
        the group state); none when the result cannot be read from a state."""
        top = self.result_from_state()
        if top is None or self.held_by_target(top.id):
            return []
        return [(top.id, name) for name in self.layouts[top.id].read_states]

    def rewritten_result_sql(self, changed, env: Env, output_columns: list[str]) -> str:
        """The new result of a model whose target holds its aggregate's group state
        (``held_by_target``), as a SELECT of the rows that rewrite it: the group state as the last
        commit left it (``env`` reads it pinned) plus the change's partials, read as the result
        (``result_sql``) — a small target rewritten in one statement, with no ΔQ computed. A
        group whose row count would become negative fails the statement, and so does one left
        irregular (``HeldGroups.guarded``)."""
        top = self.result_from_state()
        held = self.layouts[top.id].held if top is not None else None
        assert top is not None and held is not None
        change = differentiate(top.child, frozenset(changed) & frozenset(self.inputs))
        new = held.guarded(self._aggregate_sql(top.id, env.staged).summed_groups(
            env.state_table(top.id, GROUPS), child_change_sql(top.id, change, env), {}))
        return self.result_sql(dataclasses.replace(env, groups={top.id: f"(\n{new}\n)"}), output_columns)

    def held_by_target(self, agg_id: str) -> bool:
        """Whether the target holds the aggregate's group state (``Layout.held``): the run's
        update of the target is the state's, and a rebuild writes the target from the groups it
        computes (``built_groups``), with no state table."""
        return self.layouts[agg_id].held is not None

    @property
    def held_aggregates(self) -> list[str]:
        """The aggregates whose group state the target holds (``held_by_target``): at most the
        one that is the model's result."""
        return [agg_id for agg_id in self.layouts if self.held_by_target(agg_id)]

    @property
    def result_held(self) -> bool:
        """Whether the model's result is read from an aggregate (``result_from_state``) whose
        group state the target holds."""
        top = self.result_from_state()
        return top is not None and self.held_by_target(top.id)

    def keep_groups_apart(self, agg_id: str) -> None:
        """A group of the aggregate was found irregular (``IRREGULAR_GROUP``): from now on its
        group state is a table of its own, recorded with the types (``GROUPS_APART``) so that the
        runs after the next commit name it too."""
        self.types[agg_id + GROUPS_APART] = "true"
        self.layouts[agg_id].groups_apart = True

    def result_sql(self, env: Env, output_columns: list[str]) -> str:
        """SELECT of the model's result from its aggregate's state as ``env.state`` names it
        (``result_from_state``): a weighted row per output row — a top-k model's rows (each of
        weight 1), read from the state of the rows it ranks."""
        top = self.result_from_state()
        if top is None:
            raise ValueError("the model is not projections and filters over one aggregate")
        plan = replace_node(self.plan, top, AggregateRead(top))
        rows = _select_outputs(plan, env, output_columns)
        return self.top_k.rows(rows, output_columns) if self.top_k is not None else rows

    # -- aggregates ------------------------------------------------------------------------------
    def type_probe_sql(self, leaf: LeafRenderer) -> str | None:
        """A query whose column types (``DESCRIBE QUERY``) are Spark's types of every aggregate
        argument and of SUM/AVG over it; None when the model has nothing to ask."""
        parts: list[str] = []
        for layout in self.layouts.values():
            cols = AggregateSql(layout).probe_columns()
            if cols:
                child = to_sql(layout.agg.child, self.env(leaf))
                select = ", ".join(f"{e} AS {quote(alias)}" for alias, e in cols)
                parts.append(f"(SELECT {select} FROM {subquery(child, '_ivm_c')}) AS _ivm_p{len(parts)}")
        if not parts:
            return None
        return "SELECT * FROM " + "\nCROSS JOIN ".join(parts)

    def bind_types(self, types: dict[str, str]) -> None:
        """Record the types a ``type_probe_sql`` reported (column alias -> Spark type)."""
        self.types = dict(types)
        for layout in self.layouts.values():
            bound = {}
            for call in layout.agg.aggs:
                prefix = f"{layout.agg.id}__{call.name}__"
                bound[call.name] = CallTypes(
                    arg=types.get(prefix + "arg", ""),
                    sum=types.get(prefix + "sum", ""),
                    avg=types.get(prefix + "avg", ""),
                    weighted=types.get(prefix + "weighted", ""),
                )
            layout.types = bound
            layout.groups_apart = types.get(layout.agg.id + GROUPS_APART) == "true"

    def tables_depend_on_types(self) -> bool:
        """Whether the tables the aggregate states are stored in depend on Spark's types of their
        arguments (``bind_types``): a SUM or AVG over floats keeps its values (a value state),
        and the target holds a group state (``Layout.held``) only over SUMs of integers and of
        narrow decimals. A run binds the types its last commit recorded before it names them."""
        return any(c.func in ("sum", "avg", "sum_distinct", "avg_distinct") for a in self.aggregates for c in a.aggs)

    def state_names(self) -> list[tuple[str, str]]:
        """(aggregate id, state name) of every aggregate state, bottom-up."""
        return [(agg_id, name) for agg_id, layout in self.layouts.items() for name in layout.state_names]

    def state_tables(self) -> list[tuple[str, str]]:
        """(aggregate id, table) of every table the aggregate states are stored in, bottom-up
        (``Layout.stored``)."""
        return [(agg_id, table) for agg_id, layout in self.layouts.items() for table in layout.tables]

    def piece_states(self) -> list[tuple[str, str]]:
        """(aggregate id, state name) of the states kept as appended pieces
        (``Aggregate.takes_pieces``, ``Layout.appended_value_args``), compacted by the run as a
        join index is."""
        out = []
        for agg_id, layout in self.layouts.items():
            if layout.agg.takes_pieces:
                out.append((agg_id, GROUPS))
            out += [(agg_id, value_state(arg)) for arg in layout.appended_value_args]
        return out

    def stored_state(self, agg_id: str, name: str, table: str) -> str:
        """The rows of a state, each distinct row once (a state of appended pieces summed per
        row), read from ``table``: the table it is stored in (``Layout.stored``), or a built
        table's SELECT as a subquery."""
        relation = self.layouts[agg_id].stored(name).read(table)
        if (agg_id, name) in self.piece_states():
            sql = AggregateSql(self.layouts[agg_id])
            return sql.summed_pieces(relation) if name == GROUPS else sql.summed_value_pieces(relation)
        return all_rows(relation)

    def state_builds(self, leaf: LeafRenderer, state) -> list[StateStatement]:
        """SELECTs computing every table of aggregate states from the inputs (``state`` names
        the tables, ``Layout.stored``), bottom-up (an aggregate's child reads the states of the
        aggregates below it, built first); a state of appended pieces is built as pieces, not
        summed per row (``stored_state`` sums them). An aggregate's table of states is one
        SELECT of all its states, over one read of its child (a common table expression): the
        value states, and the group state, whose DISTINCT calls read the value states computed
        there instead of computing the child's values again. A group state the target holds
        (``held_by_target``) has no table: the rebuild's target is built from ``built_groups``."""
        env = self.env(leaf, state)
        out = []
        for agg_id, layout in self.layouts.items():
            child = to_sql(at_version(layout.agg.child, Version.OLD), env)
            sql = AggregateSql(layout)
            if layout.held is not None:
                continue
            key = None if layout.agg.takes_pieces else self.state_sort_key(agg_id)
            if layout.agg.takes_pieces:
                out.append(StateStatement(agg_id, GROUPS, sql.pieces(child)))
                continue
            if not layout.shares_table:
                out.append(StateStatement(agg_id, GROUPS, sql.group_partials(child), sort_key=key))
                continue
            values = {arg: f"_ivm_values{i}" for i, arg in enumerate(layout.value_args)}
            ctes = [("_ivm_child", child)] + [(cte, sql.value_partials("SELECT * FROM _ivm_child", arg))
                                              for arg, cte in values.items()]
            groups = sql.group_partials("SELECT * FROM _ivm_child", built_values={
                arg: values[arg] for arg in layout.distinct_args})
            sets = [layout.stored(GROUPS).rows(groups)[1]]
            sets += [layout.stored(value_state(arg)).rows(f"SELECT * FROM {cte}")[1] for arg, cte in values.items()]
            out.append(StateStatement(agg_id, STATES, f"{with_ctes(ctes)}\n" + "\nUNION ALL\n".join(sets),
                                      sort_key=key, partition=SET))
        return out

    def built_groups(self, agg_id: str, leaf: LeafRenderer, state, guarded: bool = True) -> str:
        """The aggregate's whole group state computed from its child at the inputs' positions
        (``leaf``; ``state`` names the states of the aggregates below): what a group state the
        target holds must read as (``ivm_check``: not ``guarded``), and what a rebuild builds the
        target from — failing at an irregular group (``HeldGroups.guarded``), when the target
        holds it."""
        layout = self.layouts[agg_id]
        child = to_sql(at_version(layout.agg.child, Version.OLD), self.env(leaf, state))
        groups = AggregateSql(layout).group_partials(child)
        return groups if layout.held is None or not guarded else layout.held.guarded(groups)

    def state_sort_key(self, agg_id: str) -> str | None:
        """The group key an aggregate's state is written sorted by, so that its reads within a
        change's key ranges (``state_bounds``) skip the rest: of the keys of a type that gets
        ranges, the one ``bounded_keys`` finds for the most inputs changing alone (the first
        in GROUP BY order on a tie); None when none is."""
        found: dict[str, int] = {}
        for key_input in self.inputs:
            for key, sources in self.bounded_keys(agg_id, {key_input}):
                if all(ranged(self.inputs[i].types.get(c, "")) for i, c in sources):
                    found[key] = found.get(key, 0) + 1
        return max(found, key=lambda k: (found[k], -self.layouts[agg_id].agg.keys.index(k))) if found else None

    def _child_changes(self, changed) -> list[tuple[str, Layout, Node]]:
        """(aggregate id, layout, child change) of every aggregate the change reaches, bottom-up."""
        out = []
        for agg_id, layout in self.layouts.items():
            change = differentiate(layout.agg.child, frozenset(changed) & frozenset(self.inputs))
            if not isinstance(change, Empty):
                out.append((agg_id, layout, change))
        return out

    def stageable_aggregates(self, changed, output_read: bool = True, two_pass: Collection[str] = ()) -> list[str]:
        """The changed aggregates whose child change is worth staging (``CACHE TABLE``, one
        statement), bottom-up: one whose change joins, reads a window's state or another
        aggregate's change, and that the run's statements would otherwise compute more than once
        — its state's statements (two per state for those in ``two_pass``: see
        ``state_updates``), the output change (``output_read``: unless the target is rewritten
        from the state) and, for an aggregate below another, each statement computing that
        one's change. Not one that only filters and projects change windows (reading a window
        again costs less than a statement)."""
        children = self._child_changes(changed)
        output = [self.delta_plan(changed)] if output_read else []
        staged: set[str] = set()
        for agg_id, layout, change in reversed(children):  # top-down: who reads it is decided above
            if not any(isinstance(n, (Join, WindowDelta, AggregateDelta)) for n in walk(change)):
                continue
            # its state's statements, and each AggregateDelta of it in what the statements compute
            own = (1 + len(layout.value_args)) * (2 if agg_id in two_pass else 1)
            if own + _computed(agg_id, _relations_computed(children, output, staged), staged) > 1:
                staged.add(agg_id)
        return [agg_id for agg_id, _, _ in children if agg_id in staged]

    def stageable_deltas(self, changed, staged_children, output_read: bool = True) -> list[str]:
        """The changed aggregates whose own change (``AggregateDelta``: the touched groups' old
        and new rows, read from the state) is worth staging once the child changes in
        ``staged_children`` are, bottom-up: one the run's statements would compute more than
        once — an outer join's presence counts, read by several terms of the output change.
        Not an aggregate that keeps its rows (its change is its child's)."""
        children = self._child_changes(changed)
        relations = _relations_computed(children, [self.delta_plan(changed)] if output_read else [],
                                        staged_children)
        staged: set[str] = set()
        for agg_id, layout, _ in reversed(children):  # top-down: who reads it is decided above
            if layout.agg.keeps_rows:
                continue
            # each staged change above computes its child's change once, unless that is staged
            above = [c for a, _, c in children if a in staged and a not in staged_children]
            if _computed(agg_id, relations + above, staged | set(staged_children)) > 1:
                staged.add(agg_id)
        return [agg_id for agg_id, _, _ in children if agg_id in staged]

    def touched_states(self, changed, two_pass: Collection[str]) -> list[tuple[str, str]]:
        """(aggregate id, state name) of the states whose touched groups are worth staging
        once (``Env.touched``) when the run computes the output change: those updated in two
        passes (the aggregates in ``two_pass`` that have group keys; not a state of appended
        pieces), whose second pass and the aggregate's change (unless it ``keeps_rows``) would
        each read the large state again."""
        out = []
        for agg_id, layout, _ in self._child_changes(changed):
            agg = layout.agg
            if agg_id not in two_pass or not layout.keys or agg.takes_pieces or agg.keeps_rows:
                continue
            out.append((agg_id, GROUPS))
            out += [(agg_id, value_state(arg)) for arg in layout.value_args if arg not in layout.appended_value_args]
        return out

    def staged_changes(self, changed, env: Env) -> list[StateStatement]:
        """SELECTs of what ``env`` stages, bottom-up, for the driver to materialize once each
        (each may read the ones before it), before any state is updated: the child change of
        every aggregate in ``env.staged`` (state ``"child_change"``), so that the output change
        and every state update read it instead of recomputing it (a join, typically), then the
        aggregate's own change when it is in ``env.staged_deltas`` (state ``"change"``; it reads
        the state as the last commit left it) — between the two, the touched groups of each of
        its states in ``env.touched`` (state: the state's name), which that change then reads."""
        out = []
        for agg_id, layout, change in self._child_changes(changed):
            if agg_id in env.staged:
                child = to_sql(change, env)
                if self._aggregate_sql(agg_id, env.staged).child_is_partials:
                    child = AggregateSql(layout).row_partials(child)
                out.append(StateStatement(agg_id, "child_change", child))
            for name in [name for a, name in env.touched if a == agg_id]:
                out.append(StateStatement(agg_id, name, AggregateSql(layout).touched_rows(
                    env.state_table(agg_id, name), child_change_sql(agg_id, change, env))))
            if agg_id in env.staged_deltas:
                out.append(StateStatement(agg_id, "change",
                                          aggregate_change_sql(AggregateDelta(layout.agg, change), env)))
        return out

    def state_updates(
        self,
        changed,
        env: Env,
        target: StateRenderer | None = None,
        rewrite: Callable[[str, str], bool] | None = None,
        two_pass: Collection[str] = (),
    ) -> list[StateStatement]:
        """Statements adding this run's change to every aggregate state it touches, top-down:
        each reads the states below it before they are updated. ``target`` names the tables
        written (default: ``env.state``, which names the tables read); a state for which
        ``rewrite(aggregate id, state name)`` holds (a small one, or one of appended pieces due
        for compaction) is rewritten in one INSERT OVERWRITE, one of appended pieces
        (``piece_states``) takes the change appended, any other is updated by a MERGE
        — which reads only the state rows within the ranges ``env.within`` gives
        (``state_bounds``) — or, for the aggregates in ``two_pass``, in two passes: the MERGE
        without its insert clause, then an INSERT of the groups (values) the state did not hold,
        found in the state as ``env.state`` names it (which must then be the state as the last
        commit left it, not ``target``) or in its touched groups (``env.touched``): a large state
        the change touches all over is scanned with the change broadcast, instead of shuffled
        whole by the MERGE's outer join. A DISTINCT call's crossings read its value state's
        touched groups too, when staged. A group state the target holds (``Layout.held``) takes
        no statement: the target's update by the model's change is its update."""
        state = env.state
        target = target or state
        rewrite = rewrite or (lambda agg_id, name: False)
        out = []
        for agg_id, layout, change in reversed(self._child_changes(changed)):
            if state is None or target is None:
                raise ValueError(f"aggregate {agg_id} reads its state: the Env names no state tables")
            if layout.held is not None:  # (computing the change refuses what no state update does: sql.rows)
                continue
            child = child_change_sql(agg_id, change, env)
            gen = self._aggregate_sql(agg_id, env.staged)
            within = env.within.get(agg_id)
            table, read = target(agg_id, layout.stored(GROUPS).table), env.state_table(agg_id, GROUPS)
            # DISTINCT calls read their value states as the last commit left them (updated below):
            # their touched groups' rows, when staged
            old_values = {arg: env.touched_state(agg_id, value_state(arg)) for arg in layout.distinct_args}
            if rewrite(agg_id, GROUPS):
                sqls = [gen.rewrite_groups(table, read, child, old_values)]
            elif layout.agg.takes_pieces:
                sqls = [gen.append_groups(table, child)]
            elif agg_id in two_pass and layout.keys:  # (a global aggregate's one row: one MERGE)
                sqls = [gen.update_groups(table, child, old_values, within),
                        gen.insert_groups(table, env.touched_state(agg_id, GROUPS), child, old_values, within)]
            else:
                sqls = [gen.merge_groups(table, child, old_values, within)]
            refused = gen.negative_groups_sql(read, child)
            out += [StateStatement(agg_id, GROUPS, sql, refused) for sql in sqls]
            for arg in layout.value_args:
                name = value_state(arg)
                table, read = target(agg_id, layout.stored(name).table), env.state_table(agg_id, name)
                if rewrite(agg_id, name):
                    sqls = [gen.rewrite_values(table, read, child, arg)]
                elif arg in layout.appended_value_args:
                    sqls = [gen.append_values(table, child, arg)]
                elif agg_id in two_pass:
                    sqls = [gen.update_values(table, child, arg, within),
                            gen.insert_values(table, env.touched_state(agg_id, name), child, arg)]
                else:
                    sqls = [gen.merge_values(table, child, arg, within)]
                out += [StateStatement(agg_id, name, sql) for sql in sqls]
        return out

    def bounded_keys(self, agg_id: str, changed) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
        """(group key, its ``key_sources``) for each group key of aggregate ``agg_id`` whose
        value in every row of the child's change is one of the change values of some (input,
        column) among its sources: every group the change touches then has its key within the
        union of their ranges, so the state's update need read no group outside them."""
        agg = self.layouts[agg_id].agg
        changed = frozenset(changed) & frozenset(self.inputs)
        out = []
        for key in agg.keys:
            sources = key_sources(agg.child, key, changed)
            if sources:
                out.append((key, tuple(sorted(set(sources)))))
        return out

    def state_bounds(self, changed,
                     key_ranges: Mapping[tuple[str, str], KeyRanges]) -> dict[str, KeyBound]:
        """By aggregate id, a ``bounded_keys`` group key and the union of its sources' ranges of
        change values (``key_ranges``, per (input, input column), as a run's probe finds them;
        none when a source has none): ``Env.within``."""
        out = {}
        for agg_id in self.layouts:
            for key, sources in self.bounded_keys(agg_id, changed):
                ranges = KeyRanges.union([key_ranges.get(source) for source in sources])
                if ranges is not None:
                    out[agg_id] = (key, ranges)
                    break
        return out

    def result_bound(self, changed, key_ranges: Mapping[tuple[str, str], KeyRanges]) -> tuple[int, KeyRanges] | None:
        """The position of the column the target is sorted by (``target_key``) and the union of
        the key ranges (``key_ranges``, as a run's probe finds them) of the change values that
        column holds one of in every row of the result's change (``key_sources``): every row the
        change adds to or removes from the model's result has it within them or NULL, so the
        result before and after agree outside them. None when no such ranges are known, and for
        a top-k model (a change may move any row into or out of the rows it keeps)."""
        position = self.target_key()
        if position is None or self.top_k is not None:
            return None
        sources = key_sources(self.plan, self.plan.columns[position], frozenset(changed) & frozenset(self.inputs))
        if not sources:
            return None
        ranges = KeyRanges.union([key_ranges.get(source) for source in sources])
        return None if ranges is None else (position, ranges)

    def target_key(self) -> int | None:
        """The position of the output column the target is sorted by: the first that is an
        input's join key passed through unchanged (an order key, say). A change that touches a
        narrow slice of key space then finds the target rows it deletes in a narrow slice of each
        target file's row groups."""
        origin = column_origins(self.plan)
        for i, column in enumerate(self.plan.columns):
            if column in origin:
                key, input_column = origin[column]
                use = self.inputs.get(key)
                if use is not None and input_column in use.key_columns:
                    return i
        return None

    def result_is_set(self) -> bool:
        """Whether the model's result holds every row at most once (``plan.unique_key``: an
        aggregate whose group keys it selects, DISTINCT, ...): its change then deletes or inserts
        one copy of a row, and the target takes it in one MERGE matching whole rows."""
        return unique_key(self.plan) is not None

    def unconsolidated_inputs(self) -> frozenset[str]:
        """The inputs whose change windows are read as they are, not summed per row first
        (``plan.read_only_by_aggregates``)."""
        return read_only_by_aggregates(self.plan)

    def fingerprint(self) -> str:
        """Changes when the SQL or the schema of any input changes (or what the state keeps)."""
        # what the join indexes keep: a state built under another layout is rebuilt
        filters = {k: v.index_filter for k, v in sorted(self.inputs.items()) if v.index_filter}
        # a window's rows kept by the target, not by a bag state: a model built with one is rebuilt
        held = {"window_result": True} if isinstance(self.plan, WindowResult) else {}
        # f(DISTINCT x) kept in the group state over the distinct values (State.DISTINCT): a
        # model whose state kept only the values is rebuilt
        if any(AGGREGATORS[c.func].over_distinct is not None for a in self.aggregates for c in a.aggs):
            held["distinct_in_groups"] = True
        # an aggregate's value states stored with its group state (Layout.stored): a model whose
        # states were tables of their own is rebuilt
        if any(layout.shares_table for layout in self.layouts.values()):
            held["states_in_one_table"] = True
        # a group state the target may hold (Layout.held; its types aside, which the SQL and the
        # inputs' schemas decide): a model whose state was a table of its own is rebuilt
        if any(layout.target_columns is not None and shape_holds(layout.agg) for layout in self.layouts.values()):
            held["groups_in_target"] = True
        return fingerprint(self.sql, {k: v.all_columns for k, v in self.inputs.items()}, index_filters=filters,
                           **held)


def fingerprint(sql: str, inputs: Mapping[str, Sequence[tuple[str, str]]], **more: object) -> str:
    """A short hash of the SQL, each input's (name, type) columns and ``more``."""
    payload = {"sql": sql, "inputs": {k: [list(c) for c in cols] for k, cols in sorted(inputs.items())}, **more}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def _select_outputs(plan: Node, env: Env, names: list[str]) -> str:
    cols = [f"{internal} AS {quote(name)}" for internal, name in zip(plan.columns, names)]
    return f"SELECT {', '.join(cols + [WEIGHT])}\nFROM {subquery(to_sql(plan, env), '_ivm_out')}"


def compile_model(sql: str, inputs: list[InputSchema]) -> Program:
    analysis: Analysis = analyze(sql, inputs)
    try:
        return _compile(sql, analysis)
    except IvmError as e:
        e.over_inputs = True  # the analysis resolved every table to an input
        raise


def _compile(sql: str, analysis: Analysis) -> Program:
    plan = prune(analysis.plan)
    if analysis.top_k is None:  # a top-k model's target holds only the rows it keeps
        plan = window_result.lift(plan)
    used: dict[str, set[str]] = {}
    for scan in scans(plan):
        used.setdefault(scan.input, set()).update(scan.input_columns)
    stateful = {
        s.input
        for s in scans(differentiate(plan, frozenset(used)))
        if s.version in (Version.OLD, Version.NEW)
    }
    keys = join_keys(plan)
    uses = {}
    for key, cols in used.items():
        schema = analysis.inputs[key]
        uses[key] = InputUse(
            key=key,
            columns=tuple(c for c in schema.column_names if c in cols),
            all_columns=schema.columns,
            stateful=key in stateful,
            join_keys=keys.get(key, ()),
        )
    filters = scan_filters(plan)
    for key, use in uses.items():
        present = [f for f in filters[key] if f is not None]
        if use.stateful and len(present) == len(filters[key]):
            predicate = exp.or_(*present) if len(present) > 1 else present[0]
            uses[key] = dataclasses.replace(use, index_filter=predicate.sql(dialect=DIALECT))
    aggregates = [n for n in walk(plan) if isinstance(n, Aggregate)]
    layouts = {a.id: Layout(a) for a in reversed(aggregates)}  # walk is pre-order: reverse = bottom-up
    result = target_columns(plan, analysis.output_names) if analysis.top_k is None else None
    if result is not None:  # the model's result is this aggregate: the target may hold its group state
        top, columns = result
        layouts[top.id].target_columns = columns
    return Program(sql=sql, plan=plan, output_names=analysis.output_names, inputs=uses, layouts=layouts,
                   top_k=analysis.top_k)


def scan_filters(plan: Node) -> dict[str, list[exp.Expression | None]]:
    """Per input, the predicate each of its scans is filtered by right above it, over the input's
    own column names (None: a scan read unfiltered).

    When every scan of an input is filtered, its join index keeps only the rows some scan lets
    through: each read of the index is filtered again, so what it returns is unchanged
    (``σp(σq(x)) = σp(x)`` when ``p`` implies ``q``), and the index and its lookups shrink to
    the rows the model can use."""
    found: dict[str, list[exp.Expression | None]] = {}

    def visit(node: Node) -> None:
        predicates = []
        while isinstance(node, Filter):
            predicates.append(node.predicate)
            node = node.child
        if isinstance(node, Scan):
            found.setdefault(node.input, []).append(_over_input(predicates, node) if predicates else None)
            return
        for child in node.children:
            visit(child)

    visit(plan)
    return found


def _over_input(predicates: list[exp.Expression], scan: Scan) -> exp.Expression:
    names = dict(zip(scan.out, scan.input_columns))

    def rename(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and n.name in names:
            return exp.column(exp.to_identifier(names[n.name], quoted=True))
        return n

    combined = exp.and_(*predicates) if len(predicates) > 1 else predicates[0]
    return combined.copy().transform(rename)


def key_sources(node: Node, column: str, changed: frozenset[str]) -> list[tuple[str, str]] | None:
    """(input, input column) pairs such that, in every row of ``node``'s change (its update paths
    for the ``changed`` inputs), ``column`` holds NULL or one of the change values of one of
    them — the run's key ranges of those columns then bound the rows a change of ``node``
    touches. None when no such list is known. Through filters, bare-column projections and
    group keys (a nested aggregate's change is its touched groups, keyed as its child's change
    is); through an inner join, each update path starts at one changed input, whose rows give
    ``column``'s value directly or through the join's conjuncts ``a = b`` (NULL equals nothing);
    a window's, a union's or any other node's rows: None. Empty: ``node`` has no change."""
    if not any(isinstance(n, Scan) and n.input in changed for n in walk(node)):
        return []
    if isinstance(node, Scan):
        return [(node.input, node.input_columns[node.out.index(column)])] if column in node.out else None
    if isinstance(node, Filter):
        return key_sources(node.child, column, changed)
    if isinstance(node, Project):
        e = dict(node.exprs).get(column)
        return key_sources(node.child, e.name, changed) if isinstance(e, exp.Column) else None
    if isinstance(node, Aggregate):
        if column not in node.out_keys:
            return None
        return key_sources(node.child, node.keys[node.out_keys.index(column)], changed)
    if isinstance(node, Join):
        equal = _equal_columns(node, column)
        sources: list[tuple[str, str]] = []
        for side in node.inputs:
            if not any(isinstance(n, Scan) and n.input in changed for n in walk(side)):
                continue  # no update path starts here
            found = next((got for c in side.columns if c in equal
                          for got in [key_sources(side, c, changed)] if got is not None), None)
            if found is None:
                return None
            sources += found
        return sources
    return None


def _equal_columns(join: Join, column: str) -> set[str]:
    """``column`` and every column the join's conjuncts ``a = b`` make equal to it, transitively."""
    pairs = [(eq.left.name, eq.right.name) for condition in join.conditions for eq in conjuncts(condition)
             if isinstance(eq, exp.EQ) and isinstance(eq.left, exp.Column) and isinstance(eq.right, exp.Column)]
    equal = {column}
    grown = True
    while grown:
        grown = False
        for a, b in pairs:
            if (a in equal) != (b in equal):
                equal |= {a, b}
                grown = True
    return equal


def column_origins(plan: Node) -> dict[str, tuple[str, str]]:
    """Internal column -> (input, input column) for every column that is an input's column passed
    through unchanged (by scans, projections of a bare column and group keys)."""
    origin: dict[str, tuple[str, str]] = {}

    def trace(node: Node) -> None:
        for child in node.children:
            trace(child)
        if isinstance(node, Scan):
            origin.update({o: (node.input, c) for o, c in zip(node.out, node.input_columns)})
        elif isinstance(node, Project):
            for name, e in node.exprs:
                if isinstance(e, exp.Column) and e.name in origin:
                    origin[name] = origin[e.name]
        elif isinstance(node, Aggregate):
            for key, out in zip(node.keys, node.out_keys):
                if key in origin:
                    origin[out] = origin[key]

    trace(plan)
    return origin


def join_keys(plan: Node) -> dict[str, tuple[tuple[str, str], ...]]:
    """Per input, (column, other input) for each of its columns that an equality join condition
    (``a = b``) compares with a column of another input, in the order the plan meets them.

    A change's rows bound the keys an update path probes a join index with: when the change's
    leaf states the ranges of its join keys as a literal predicate, Spark infers the same
    predicate for the other side of ``a = b`` and pushes it into the index's scan, where
    Iceberg skips the files and row groups outside the ranges."""
    origin = column_origins(plan)
    found: dict[str, list[tuple[str, str]]] = {}
    for node in walk(plan):
        if not isinstance(node, Join):
            continue
        for condition in node.conditions:
            for eq in condition.find_all(exp.EQ):
                left, right = eq.left, eq.right
                if not all(isinstance(x, exp.Column) and x.name in origin for x in (left, right)):
                    continue
                (a, a_column), (b, b_column) = origin[left.name], origin[right.name]
                if a == b:
                    continue
                for key, pair in ((a, (a_column, b)), (b, (b_column, a))):
                    if pair not in found.setdefault(key, []):
                        found[key].append(pair)
    return {k: tuple(v) for k, v in found.items()}


def _relations_computed(children, output: list[Node], staged_children) -> list[Node]:
    """What a run's statements compute in full: ``output`` (the output change, when the run
    computes one) and each aggregate's child change — once when it is staged, else once per
    statement of the aggregate's state."""
    relations = list(output)
    for agg_id, layout, change in children:
        relations.extend([change] * (1 if agg_id in staged_children else 1 + len(layout.value_args)))
    return relations


def _computed(agg_id: str, relations: list[Node], staged) -> int:
    """How many times computing ``relations`` computes ``agg_id``'s change (``AggregateDelta``),
    which reads its child's: not inside the change of an aggregate in ``staged``, read from its
    staged relation."""
    def count(node: Node) -> int:
        if isinstance(node, AggregateDelta):
            if node.aggregate.id == agg_id:
                return 1
            if node.aggregate.id in staged:
                return 0
        return sum(count(child) for child in node.children)

    return sum(count(relation) for relation in relations)

