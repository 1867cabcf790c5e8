"""The state an aggregate keeps: which calls live in the group state, which in value states,
and how the states are stored.

Group state ``groups``: one row per group with at least one row::

    <key columns>, _ivm_count BIGINT, <call>_s, <call>_n   (per LINEAR call, then per DISTINCT call)

Value state ``values__<arg>``: per group, every non-NULL value of ``arg`` with its net weight
(``<key columns>, _ivm_value, _ivm_weight``), shared by the VALUES and DISTINCT calls over
``arg``. Which state a call keeps is its function's choice (``functions``), given Spark's types.

Stored (``StoredState``): an aggregate with only a group state keeps it as the table
``<id>__groups``; one with value states keeps all its states in one table ``<id>__states``,
partitioned by a set column ``_ivm_set`` (0: the group state, ``i + 1``: the value state of
``value_args[i]``), with the group state's columns, a value column ``_ivm_value__<arg>`` per
value state, and ``_ivm_weight``; a row's columns of the other states are NULL. One statement
builds it from one read of the child (a state per write would read the child once each), and a
read of one state skips the others' files by their partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ivm_core.plan import ROW_COUNT, AggCall, Aggregate
from ivm_core.rules.aggregate.functions import AGGREGATORS, Aggregator, CallTypes, State
from ivm_core.rules.aggregate.functions.count_distinct import COUNT_DISTINCT
from ivm_core.rules.aggregate.held import TARGET, HeldGroups, shape_holds, sum_type_holds
from ivm_core.sqltext import WEIGHT, indent, quote

COUNT = ROW_COUNT  # the group's row count, in the group state and in every output row
VALUE = "_ivm_value"  # the value column of a value state
GROUPS = "groups"  # the name of an aggregate's group state (and of its table, when it has no other)
STATES = "states"  # the table of an aggregate's states, when it has value states
SET = "_ivm_set"  # which state a row of ``STATES`` belongs to


def value_state(arg: str) -> str:
    """The name of the value state of ``arg``."""
    return "values__" + arg


@dataclass(frozen=True)
class StoredState:
    """Where one state of an aggregate is stored: the table ``table`` (``GROUPS`` or
    ``STATES``, as the model names it), alone (``set`` None) or as the rows of set ``set``,
    its ``columns`` stored as ``stored_as`` names them, among the table's ``table_columns``.
    Every read and write of a state goes through its ``StoredState``."""

    table: str
    columns: tuple[str, ...]
    set: int | None = None
    stored_as: Mapping[str, str] = field(default_factory=dict)
    table_columns: tuple[str, ...] = ()

    def column(self, name: str) -> str:
        """The stored name of one of the state's columns."""
        return self.stored_as.get(name, name)

    def read(self, relation: str) -> str:
        """The state's rows, in its own columns, from ``relation`` (its table, or the table at a
        snapshot)."""
        if self.set is None:
            return relation
        cols = [quote(self.column(c)) + ("" if self.column(c) == c else f" AS {quote(c)}") for c in self.columns]
        return f"(SELECT {', '.join(cols)} FROM {relation} WHERE {SET} = {self.set})"

    def match(self, columns: Sequence[str], state: str, other: str) -> str:
        """A MERGE's condition matching a state row (alias ``state``) of this state with a row
        of ``other`` on ``columns`` (NULL equal to NULL)."""
        parts = [f"{state}.{SET} = {self.set}"] if self.set is not None else []
        parts += [f"{state}.{quote(self.column(c))} <=> {other}.{quote(c)}" for c in columns]
        return " AND ".join(parts) or "TRUE"

    def inserted(self, values: Mapping[str, str]) -> tuple[list[str], list[str]]:
        """The columns (unquoted) and values of an INSERT of one row of the state, given the
        value of each of its columns: in a table of states, every column of the table (Spark's
        INSERT names them all), its set's and those of the other states NULL."""
        if self.set is None:
            return list(self.columns), [values[c] for c in self.columns]
        return self._spread(values)

    def rows(self, select_sql: str, with_set: bool = True) -> tuple[str, str]:
        """(column list, SELECT) writing the rows of ``select_sql`` (the state's ``columns``, by
        name) to the table: alone, as they are; in a table of states, every column of the table
        (the set's unless not ``with_set``), those of the other states NULL."""
        if self.set is None:
            return ", ".join(quote(c) for c in self.columns), select_sql
        cols, vals = self._spread({c: quote(c) for c in self.columns}, with_set)
        picked = ", ".join(f"{v} AS {quote(c)}" for c, v in zip(cols, vals))
        return ", ".join(quote(c) for c in cols), f"SELECT {picked}\nFROM (\n{indent(select_sql)}\n) AS _ivm_rows"

    def _spread(self, values: Mapping[str, str], with_set: bool = True) -> tuple[list[str], list[str]]:
        """(columns, values) over every column of the table of states (but the set's, unless
        ``with_set``): each of this state's columns its value in ``values`` (by the state's own
        names), the set its number, the other states' columns NULL."""
        stored = {self.column(c): values[c] for c in self.columns}
        cols = [c for c in self.table_columns if with_set or c != SET]
        return cols, [str(self.set) if c == SET else stored.get(c, "NULL") for c in cols]

    def insert_into(self, table: str, select_sql: str) -> str:
        """``INSERT INTO`` the state the rows of ``select_sql`` (see ``rows``)."""
        cols, rows = self.rows(select_sql)
        return f"INSERT INTO {table} ({cols})\n{rows}"

    def overwrite(self, table: str, select_sql: str) -> str:
        """Replace the state by the rows of ``select_sql``: its table, or its set's partition
        of the table of states (the other states stay)."""
        cols, rows = self.rows(select_sql, with_set=False)
        partition = "" if self.set is None else f" PARTITION ({SET} = {self.set})"
        return f"INSERT OVERWRITE {table}{partition} ({cols})\n{rows}"


@dataclass
class Layout:
    agg: Aggregate
    types: Mapping[str, CallTypes] = field(default_factory=dict)  # by call name
    # the target's column of each of the aggregate's columns, when the aggregate is the model's
    # result (``held.target_columns``): the target may hold its group state (``held``)
    target_columns: Mapping[str, str] | None = None
    # a group was found irregular (``held``): the group state is kept in a table of its own
    groups_apart: bool = False

    @property
    def held(self) -> HeldGroups | None:
        """The group state as the target holds it (``held``), when it does: the aggregate is
        the model's result, of a shape and types it holds, and no group was found irregular."""
        if self.target_columns is None or self.groups_apart or not shape_holds(self.agg):
            return None
        if not all(sum_type_holds(self.call_types(c).arg) for c in self.agg.aggs if c.func == "sum"):
            return None
        return HeldGroups(self.agg, self.target_columns, self.group_state_columns(),
                          {c.name: self.call_types(c).sum for c in self.agg.aggs if c.func == "sum"})

    def call_types(self, call: AggCall) -> CallTypes:
        return self.types.get(call.name, CallTypes())

    def function(self, call: AggCall) -> Aggregator:
        return AGGREGATORS[call.func]

    def linear_function(self, call: AggCall) -> Aggregator:
        """The function whose ``_s``/``_n`` a LINEAR or DISTINCT call keeps in the group state."""
        function = self.function(call)
        if self.state(call) is State.DISTINCT:
            assert function.over_distinct is not None
            return function.over_distinct
        return function

    def state(self, call: AggCall) -> State:
        return self.function(call).state(self.call_types(call))

    @property
    def keys(self) -> tuple[str, ...]:
        return self.agg.keys

    @property
    def linear_calls(self) -> list[AggCall]:
        return [c for c in self.agg.aggs if self.state(c) is State.LINEAR]

    @property
    def distinct_calls(self) -> list[AggCall]:
        return [c for c in self.agg.aggs if self.state(c) is State.DISTINCT]

    @property
    def value_args(self) -> list[str]:
        """The arguments with a value state (of VALUES or DISTINCT calls)."""
        kept = (State.VALUES, State.DISTINCT)
        return sorted({c.arg for c in self.agg.aggs if self.state(c) in kept and c.arg is not None})

    @property
    def summarized_args(self) -> list[str]:
        """The arguments whose value state a touched group's output row is read back from
        (those of VALUES calls); a DISTINCT call's row comes from the group state."""
        return [a for a in self.value_args if self.value_calls(a)]

    @property
    def read_states(self) -> list[str]:
        """The states the aggregate's integrated output is read from (``AggregateSql.read_sql``):
        the group state and the value states of ``summarized_args``."""
        return [GROUPS] + [value_state(a) for a in self.summarized_args]

    @property
    def appended_value_args(self) -> list[str]:
        """The arguments whose value state is kept as appended pieces (a value's weight is the
        sum of its pieces; compacted as a join index is): those only COUNT(DISTINCT) calls read,
        which read it at a change's values alone. (Not SUM/AVG(DISTINCT): whether they read it
        so depends on Spark's types, and a run knows its tables of pieces before it asks.)"""
        return [a for a in self.value_args
                if all(c.func == COUNT_DISTINCT.name for c in self.agg.aggs if c.arg == a)]

    @property
    def distinct_args(self) -> list[str]:
        return sorted({c.arg or "" for c in self.distinct_calls})

    def value_calls(self, arg: str) -> list[AggCall]:
        return [c for c in self.agg.aggs if c.arg == arg and self.state(c) is State.VALUES]

    # -- how the states are stored ---------------------------------------------------------------
    @property
    def shares_table(self) -> bool:
        """Whether the states are stored in one table of states (the aggregate has value states)."""
        return bool(self.value_args)

    @property
    def tables(self) -> list[str]:
        """The tables the states are stored in (``GROUPS`` or ``STATES``; none when the target
        holds the group state)."""
        if self.held is not None:
            return []
        return [STATES] if self.shares_table else [GROUPS]

    @property
    def state_names(self) -> list[str]:
        """The aggregate's states: its group state, then a value state per value argument."""
        return [GROUPS] + [value_state(a) for a in self.value_args]

    def value_column(self, arg: str) -> str:
        """The column of ``arg``'s values in the table of states."""
        return f"{VALUE}__{arg}"

    def table_columns(self) -> list[str]:
        """The columns of the table of states, in order."""
        cols = list(self.keys) + [SET] + self.group_state_columns()[len(self.keys):]
        return cols + [self.value_column(a) for a in self.value_args] + [WEIGHT]

    def stored(self, name: str) -> StoredState:
        """Where the state ``name`` is stored."""
        columns = tuple(self.group_state_columns()) if name == GROUPS else (*self.keys, VALUE, WEIGHT)
        if name == GROUPS and self.held is not None:  # (the target, renamed: ``Env.state_table``)
            return StoredState(TARGET, columns)
        if not self.shares_table:
            return StoredState(GROUPS, columns)
        if name == GROUPS:
            return StoredState(STATES, columns, 0, {}, tuple(self.table_columns()))
        arg = name[len(value_state("")):]
        return StoredState(STATES, columns, 1 + self.value_args.index(arg), {VALUE: self.value_column(arg)},
                           tuple(self.table_columns()))

    def group_state_columns(self) -> list[str]:
        cols = list(self.keys) + [COUNT]
        for c in self.linear_calls + self.distinct_calls:
            cols += [f"{c.name}_s", f"{c.name}_n"]
        return cols

    def summed_state_columns(self) -> list[tuple[str, bool]]:
        """The group state's columns after its keys, each with whether its sum is a BIGINT (the
        row count and every ``_n``; an ``_s`` sums to its own type): how two of a group's
        states, or a state and a change's partials, add up."""
        return [(c, c == COUNT or c.endswith("_n")) for c in self.group_state_columns()[len(self.keys):]]

    @property
    def reads_child_as_partials(self) -> bool:
        """Whether every statement of the aggregate's change reads its child change through its
        row partials (or row pieces, of which they are the sum) only: no value state, and a
        group state of its own (not the child's rows kept). A run that stages the child change
        then stages those partials: one aggregation for all its statements, each of which would
        aggregate the staged rows again."""
        return not self.value_args and not self.agg.keeps_rows
