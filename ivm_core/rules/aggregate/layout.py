"""The state an aggregate keeps: which calls live in the group state, which in value states.

Group state ``<id>__groups``: one row per group with at least one row::

    <key columns>, _ivm_count BIGINT, <call>_s, <call>_n   (per LINEAR call)

Value state ``<id>__values__<arg>``: per group, every non-NULL value of ``arg`` with its net
weight (``<key columns>, _ivm_value, _ivm_weight``), shared by the VALUES calls over ``arg``.
Which state a call keeps is its function's choice (``functions``), given Spark's types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ivm_core.plan import ROW_COUNT, AggCall, Aggregate
from ivm_core.rules.aggregate.functions import AGGREGATORS, Aggregator, CallTypes, State

COUNT = ROW_COUNT  # the group's row count, in the group state and in every output row
VALUE = "_ivm_value"  # the value column of a value state


@dataclass
class Layout:
    agg: Aggregate
    types: Mapping[str, CallTypes] = field(default_factory=dict)  # by call name

    def call_types(self, call: AggCall) -> CallTypes:
        return self.types.get(call.name, CallTypes())

    def function(self, call: AggCall) -> Aggregator:
        return AGGREGATORS[call.func]

    def state(self, call: AggCall) -> State:
        return self.function(call).state(self.call_types(call))

    @property
    def keys(self) -> tuple[str, ...]:
        return self.agg.keys

    @property
    def linear_calls(self) -> list[AggCall]:
        return [c for c in self.agg.aggs if self.state(c) is State.LINEAR]

    @property
    def value_args(self) -> list[str]:
        return sorted({c.arg for c in self.agg.aggs if self.state(c) is State.VALUES and c.arg is not None})

    def value_calls(self, arg: str) -> list[AggCall]:
        return [c for c in self.agg.aggs if c.arg == arg and self.state(c) is State.VALUES]

    def group_state_columns(self) -> list[str]:
        cols = list(self.keys) + [COUNT]
        for c in self.linear_calls:
            cols += [f"{c.name}_s", f"{c.name}_n"]
        return cols
