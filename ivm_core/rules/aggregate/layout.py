"""The state an aggregate keeps: which calls live in the group state, which in value states.

Group state ``<id>__groups``: one row per group with at least one row::

    <key columns>, _ivm_count BIGINT, <call>_s, <call>_n   (per LINEAR call, then per DISTINCT call)

Value state ``<id>__values__<arg>``: per group, every non-NULL value of ``arg`` with its net
weight (``<key columns>, _ivm_value, _ivm_weight``), shared by the VALUES and DISTINCT calls
over ``arg``. Which state a call keeps is its function's choice (``functions``), given Spark's
types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ivm_core.plan import ROW_COUNT, AggCall, Aggregate
from ivm_core.rules.aggregate.functions import AGGREGATORS, Aggregator, CallTypes, State
from ivm_core.rules.aggregate.functions.count_distinct import COUNT_DISTINCT

COUNT = ROW_COUNT  # the group's row count, in the group state and in every output row
VALUE = "_ivm_value"  # the value column of a value state
GROUPS = "groups"  # the name of an aggregate's group state


def value_state(arg: str) -> str:
    """The name of the value state of ``arg``."""
    return "values__" + arg


@dataclass
class Layout:
    agg: Aggregate
    types: Mapping[str, CallTypes] = field(default_factory=dict)  # by call name

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
