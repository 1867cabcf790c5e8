"""The aggregation rule on in-memory Z-sets: the state, the fold of a change into it and the
read-back of output rows, computed with the same per-function objects as the SQL (``sql``).

``ivm_core.zset`` evaluates ``AggregateRead``/``AggregateDelta`` with it, so the property tests
check this rule (not a recompute) against ``Q(new) − Q(old)``. A Z-set here is a ``dict`` from
row tuples to non-zero weights over the aggregate's child columns (changes) or its output
columns (rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from sqlglot import exp

from ivm_core.rules.aggregate.functions import State
from ivm_core.rules.aggregate.layout import COUNT, Layout

ZSet = dict[tuple, int]
Evaluate = Callable[[exp.Expr, Mapping[str, Any]], Any]  # an expression over one row


@dataclass
class Stored:
    """One aggregate's state: per group key, ``[count, s₁, n₁, s₂, n₂, …]`` (the group state
    after the key columns: LINEAR calls in ``layout.linear_calls`` order, then DISTINCT calls in
    ``layout.distinct_calls`` order); per value argument, ``key + (value,)`` → net weight."""

    layout: Layout
    groups: dict[tuple, list[Any]] = field(default_factory=dict)
    values: dict[str, dict[tuple, int]] = field(default_factory=dict)


def partials(layout: Layout, change: ZSet, state: Stored | None = None) -> Stored:
    """The partial state of a change (``sql.group_partials`` and ``value_partials``) to the
    stored ``state`` (None: an empty one): a group whose rows cancel is kept, with count 0; a
    DISTINCT call adds its LINEAR function's partial of each value whose net weight crosses
    zero, weighted +1 when it rises from 0 and −1 when it falls to 0."""
    position = {c: i for i, c in enumerate(layout.agg.child.columns)}
    linear = layout.linear_calls
    out = Stored(layout, values={arg: {} for arg in layout.value_args})
    for row, weight in change.items():
        key = tuple(row[position[k]] for k in layout.keys)
        group = out.groups.setdefault(key, [0] * (1 + 2 * (len(linear) + len(layout.distinct_calls))))
        group[0] += weight
        for i, call in enumerate(linear):
            value = row[position[call.arg or ""]]
            if value is not None:
                group[1 + 2 * i] += layout.function(call).partial(value, weight)
                group[2 + 2 * i] += weight
        for arg, values in out.values.items():
            value = row[position[arg]]
            if value is not None:
                values[key + (value,)] = values.get(key + (value,), 0) + weight
    out.values = {arg: {k: w for k, w in v.items() if w != 0} for arg, v in out.values.items()}
    for i, call in enumerate(layout.distinct_calls, start=len(linear)):
        stored = state.values.get(call.arg or "", {}) if state is not None else {}
        for value_key, weight in out.values[call.arg or ""].items():
            was = stored.get(value_key, 0)
            crossing = 1 if was <= 0 < was + weight else -1 if was > 0 >= was + weight else 0
            if crossing:
                group = out.groups[value_key[:-1]]
                group[1 + 2 * i] += layout.linear_function(call).partial(value_key[-1], crossing)
                group[2 + 2 * i] += crossing
    return out


def fold(state: Stored, change: Stored) -> Stored:
    """``S + ΔS``: every column added; a group whose count becomes 0 and a value whose weight
    becomes 0 are gone. A negative count or weight is refused (the change deletes rows that are
    not there), as the MERGE and the rewrite of a state refuse it."""
    groups = {k: list(g) for k, g in state.groups.items()}
    for key, partial in change.groups.items():
        total = [a + b for a, b in zip(groups.get(key, [0] * len(partial)), partial)]
        if total[0] < 0:
            raise ValueError(f"the change deletes rows that are not there: group {key}")
        if total[0] == 0:
            groups.pop(key, None)
        else:
            groups[key] = total
    values = {}
    for arg in state.layout.value_args:
        merged = dict(state.values.get(arg, {}))
        for k, w in change.values.get(arg, {}).items():
            merged[k] = merged.get(k, 0) + w
            if merged[k] < 0:
                raise ValueError(f"the change deletes rows that are not there: value {k}")
        values[arg] = {k: w for k, w in merged.items() if w != 0}
    return Stored(state.layout, groups, values)


def build(layout: Layout, rows: ZSet) -> Stored:
    """The state of an aggregate whose child holds ``rows``."""
    return fold(Stored(layout, values={arg: {} for arg in layout.value_args}), partials(layout, rows, None))


def rows(state: Stored, evaluate: Evaluate) -> ZSet:
    """The output rows the state stands for (``sql.rows``): one per group with a positive
    count, weighted by the aggregate's multiplicity; a global aggregate always has one row."""
    layout, agg = state.layout, state.layout.agg
    if agg.is_global:
        groups = [((), state.groups.get(()))]
    else:
        groups = [(k, g) for k, g in state.groups.items() if g[0] > 0]
    linear = {call.name: i for i, call in enumerate(layout.linear_calls + layout.distinct_calls)}
    out: ZSet = {}
    for key, group in groups:
        count = group[0] if group else 0
        results = {}
        for call in agg.aggs:
            function = layout.function(call)
            kind = function.state(layout.call_types(call))
            if kind is State.ROWS:
                results[call.name] = count
            elif kind in (State.LINEAR, State.DISTINCT):
                i = linear[call.name]
                s, n = (group[1 + 2 * i], group[2 + 2 * i]) if group else (None, 0)
                results[call.name] = layout.linear_function(call).result(s, n)
            else:
                values = [
                    (k[-1], w) for k, w in state.values.get(call.arg or "", {}).items() if k[:-1] == key
                ]
                results[call.name] = function.values_result(values)
        weight = 1 if agg.multiplicity is None else evaluate(agg.multiplicity, {**results, COUNT: count})
        if weight is not None and weight > 0:
            row = key + tuple(results[call.name] for call in agg.aggs)
            out[row] = out.get(row, 0) + weight
    return out


def delta(state: Stored, change: ZSet, evaluate: Evaluate) -> ZSet:
    """``Σ_{g touched} row(S_g + ΔS_g) − row(S_g)``: only the touched groups' state is read
    (all of it for a global aggregate, as ``sql.delta_sql`` does); an aggregate that
    ``keeps_rows``: the change itself."""
    if state.layout.agg.keeps_rows:
        return {r: w for r, w in change.items() if w}
    partial = partials(state.layout, change, state)
    touched = set(partial.groups) if state.layout.keys else set(state.groups) | set(partial.groups)
    old = Stored(
        state.layout,
        {k: g for k, g in state.groups.items() if k in touched},
        {arg: {k: w for k, w in v.items() if k[:-1] in touched} for arg, v in state.values.items()},
    )
    out = dict(rows(fold(old, partial), evaluate))
    for row, weight in rows(old, evaluate).items():
        out[row] = out.get(row, 0) - weight
    return {r: w for r, w in out.items() if w != 0}
