"""A window at the top of the model, its partitions kept by the model's target: dbt's dedup
(``row_number() OVER (PARTITION BY k ORDER BY t DESC) = 1``), top-n per group, a running total
— a ``WindowResult``: filters and projections over one window whose child only scans, filters,
projects and unions inputs, passing the window's ``PARTITION BY`` columns through. Its rows are
the target's, so the target is the state of the partitions::

    ΔQ = Σ_{p touched by ΔR}  πσW(R'_p) − T_p          R' = R + ΔR,  T = πσW(R), the target

``R'_p``: the window's child over the inputs after the change, only the touched partitions
(the distinct partition keys of the child's change, a broadcast semi join); Spark evaluates the
window over them, the filters and projections above it follow, and the target's rows of the
same partitions (found by the key columns the model passes through) are retracted, whatever
order Spark gave rows tied under the window's ``ORDER BY`` when it computed them: the
retraction is what was emitted. The change is consolidated: a partition whose kept rows do not
move emits nothing.

Against the window rule's bag state (``rules.window``: every output row of the window kept
beside the target) this keeps no state — a dedup of 1.5 M orders keeps its 100 k latest in the
target and nothing else —, and a change reads the window's child after it (its inputs at their
positions, or their join indexes) instead of the window's rows: the same rows, narrower, once.
A window under anything else (a join, an aggregate, DISTINCT, another window, ``LIMIT``)
keeps the bag state: its output is not the target's rows.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from sqlglot import exp

from ivm_core.plan import (
    Aggregate,
    Empty,
    Filter,
    Node,
    Project,
    Scan,
    UnionAll,
    Version,
    Window,
    WindowResult,
    WindowResultDelta,
    at_version,
    replace_node,
    walk,
)
from ivm_core.rules import window as window_rule
from ivm_core.statements import consolidated, with_ctes, zset_sum

ZSet = dict[tuple, int]

TOUCHED = "_ivm_n"  # the window's child after the change, the touched partitions' rows


def lift(plan: Node) -> Node:
    """``plan`` as a ``WindowResult`` when it is projections and filters over a window's bag
    state (the analyzer's form) that pass every partition column through, over a child without
    aggregates, joins or windows; else ``plan`` itself. The bag state goes: its columns are the
    window's, renamed by a projection."""
    chain: list[Node] = []
    node = plan
    while isinstance(node, (Project, Filter)):
        chain.append(node)
        node = node.child
    if not (isinstance(node, Aggregate) and node.takes_pieces):  # the bag state of a window's rows
        return plan
    window = node.child
    assert isinstance(window, Window)
    if not all(isinstance(n, (Scan, Filter, Project, UnionAll)) for n in walk(window.child)):
        return plan
    renamed = dict(zip(node.keys, node.out_keys))
    current: Node = Project(window, tuple((out, exp.column(column)) for column, out in renamed.items()))
    keys = [renamed[p] for p in window.partition]
    for above in reversed(chain):
        if isinstance(above, Project):
            passed: dict[str, str] = {}
            for name, e in above.exprs:
                if isinstance(e, exp.Column):
                    passed.setdefault(e.name, name)
            if not all(k in passed for k in keys):
                return plan
            keys = [passed[k] for k in keys]
        current = above.with_children((current,))
    return WindowResult(current, tuple(keys))


def delta(node: WindowResult, d, changed: frozenset[str]) -> Node:
    child = node.window.child
    change = d(child)
    if isinstance(change, Empty):
        return Empty(node.columns)
    return WindowResultDelta(node, change, at_version(child, Version.NEW))


def recomputed(result: WindowResult) -> Node:
    """``result``'s plan over the touched partitions' rows: the window's child replaced by a
    scan of them (``TOUCHED``)."""
    window = result.window
    rows = Scan(TOUCHED, window.child.columns, window.child.columns, Version.NEW)
    return replace_node(result.child, window, dataclasses.replace(window, child=rows))


# -- SQL ----------------------------------------------------------------------------------------

def delta_sql(node: WindowResultDelta, child_delta_sql: str, child_new_sql: str, held_sql: str,
              render: Callable[[Node], str]) -> str:
    """``Σ_touched πσW(R'_p) − T_p``, consolidated. ``held_sql``: the target's rows over the
    model's columns (a row per copy, weight 1); ``render`` gives the SQL of ``recomputed``'s
    plan, reading ``TOUCHED`` as a relation."""
    result, window = node.result, node.result.window
    ctes = window_rule.touched_partitions(window, child_delta_sql) + [
        (TOUCHED, window_rule.in_touched_partitions(window, child_new_sql)),
    ]
    held = window_rule.in_touched_partitions(window, held_sql, result.keys)
    change = zset_sum([(render(recomputed(result)), 1), (held, -1)], result.columns)
    return f"{with_ctes(ctes)}\n{consolidated(change, result.columns)}"


# -- in memory (the property tests) ---------------------------------------------------------------

def memory_delta(node: WindowResultDelta, change: ZSet, new: ZSet, held: ZSet,
                 evaluate: Callable[[Node, ZSet], ZSet]) -> ZSet:
    """``delta_sql`` on in-memory Z-sets: ``change`` and ``new`` the window's child's change and
    rows after it, ``held`` the target's rows (over the model's columns), ``evaluate`` a plan
    with ``TOUCHED`` read as the given rows."""
    result, window = node.result, node.result.window
    position = [window.child.columns.index(p) for p in window.partition]
    held_position = [result.columns.index(c) for c in result.keys]
    touched = {tuple(r[i] for i in position) for r in change}
    rows = {r: w for r, w in new.items() if tuple(r[i] for i in position) in touched}
    if any(w < 0 for w in rows.values()):
        raise ValueError("the change deletes rows that are not there")
    out = dict(evaluate(recomputed(result), rows))
    for r, w in held.items():
        if tuple(r[i] for i in held_position) in touched:
            out[r] = out.get(r, 0) - w
    return {r: w for r, w in out.items() if w}
