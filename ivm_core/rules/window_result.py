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

**Top rows over an append.** When the model keeps each partition's top rows
(``WindowResult.top``: its only filter bounds a ``ROW_NUMBER``, ``RANK`` or ``DENSE_RANK``, the
window's one call, by ``= 1``, ``<= n`` or ``< n``) and selects every column of the window's
child, the target holds whole rows ``T_p`` of each partition, and a change that only inserts
(``ΔR ≥ 0``: the run's validation finds it, ``Env.inserting_only``) needs no input::

    πσW(R'_p) = πσW(T_p + ΔR_p)             when ΔR ≥ 0

Every row of ``R_p`` outside ``T_p`` ranks after the bound (its rank exceeds n), and inserted
rows only raise ranks, so it stays out; every row ranked before a kept row is in ``T_p`` or
inserted, so the kept rows of ``T_p + ΔR_p`` have their ranks in ``R'_p`` (under a
``ROW_NUMBER`` tie, one of the valid answers, as Spark's own recompute may choose). A dedup over
an append thus reads the change and the target's rows of the touched keys, not its input. A
change that deletes takes the general form: a deleted kept row lets a row outside ``T_p`` in.
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
    conjuncts,
    replace_node,
    walk,
)
from ivm_core.rules import window as window_rule
from ivm_core.sqltext import WEIGHT, indent, quote
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
    traced = dict(renamed)  # a window column -> the column passing it through, up to ``current``
    bounds: list[tuple[exp.Expr, str | None]] = []  # each filter term, with the rank column's name there
    rank = window.calls[0][0]
    for above in reversed(chain):
        if isinstance(above, Project):
            passed: dict[str, str] = {}
            for name, e in above.exprs:
                if isinstance(e, exp.Column):
                    passed.setdefault(e.name, name)
            traced = {c: passed[t] for c, t in traced.items() if t in passed}
        else:
            assert isinstance(above, Filter)
            bounds += [(term, traced.get(rank)) for term in conjuncts(above.predicate)]
        current = above.with_children((current,))
    if not all(p in traced for p in window.partition):
        return plan
    keeps_top = (len(window.calls) == 1 and len(bounds) == 1 and _ranks(window.calls[0][1]) and _bounds(*bounds[0])
                 and all(c in traced for c in window.child.columns))
    top = tuple(traced[c] for c in window.child.columns) if keeps_top else None
    return WindowResult(current, tuple(traced[p] for p in window.partition), top)


def _ranks(call: exp.Expr) -> bool:
    """A ``ROW_NUMBER``, ``RANK`` or ``DENSE_RANK`` with an ``ORDER BY``: inserted rows only
    raise a row's value, and rows ordered after it do not count."""
    return isinstance(call.this, (exp.RowNumber, exp.Rank, exp.DenseRank)) and call.args.get("order") is not None


def _bounds(term: exp.Expr, rank: str | None) -> bool:
    """``term`` keeps the rows whose ``rank`` is at most some n ≥ 1: ``rank = 1``, ``rank <= n``,
    ``rank < n``."""
    if rank is None or not isinstance(term, (exp.EQ, exp.LTE, exp.LT)):
        return False
    column, literal = term.left, term.right
    if not (isinstance(column, exp.Column) and column.name == rank and isinstance(literal, exp.Literal)
            and literal.is_int):
        return False
    n = int(literal.this)
    return n == 1 if isinstance(term, exp.EQ) else n >= (1 if isinstance(term, exp.LTE) else 2)


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

def delta_sql(node: WindowResultDelta, child_delta_sql: str, child_new_sql: Callable[[], str], held_sql: str,
              render: Callable[[Node], str], inserts_only: bool = False) -> str:
    """``Σ_touched πσW(R'_p) − T_p``, consolidated. ``child_new_sql`` gives the SQL of the
    window's child after the change; ``held_sql``: the target's rows over the model's columns
    (a row per copy, weight 1); ``render`` gives the SQL of ``recomputed``'s plan, reading
    ``TOUCHED`` as a relation. ``inserts_only``: the change inserts rows only — a model keeping
    top rows then ranks ``T_p + ΔR_p`` and does not read the inputs."""
    result, window = node.result, node.result.window
    held = window_rule.in_touched_partitions(window, held_sql, result.keys)
    if inserts_only and result.top is not None:
        as_child = ", ".join(f"h.{quote(c)} AS {quote(x)}" for c, x in zip(result.top, window.child.columns))
        touched = f"SELECT {as_child}, h.{WEIGHT} FROM (\n{indent(held)}\n) AS h\nUNION ALL\nSELECT * FROM _ivm_d"
    else:
        touched = window_rule.in_touched_partitions(window, child_new_sql())
    ctes = window_rule.touched_partitions(window, child_delta_sql) + [(TOUCHED, touched)]
    change = zset_sum([(render(recomputed(result)), 1), (held, -1)], result.columns)
    return f"{with_ctes(ctes)}\n{consolidated(change, result.columns)}"


# -- in memory (the property tests) ---------------------------------------------------------------

def memory_delta(node: WindowResultDelta, change: ZSet, new: ZSet, held: ZSet,
                 evaluate: Callable[[Node, ZSet], ZSet]) -> ZSet:
    """``delta_sql`` on in-memory Z-sets: ``change`` and ``new`` the window's child's change and
    rows after it, ``held`` the target's rows (over the model's columns), ``evaluate`` a plan
    with ``TOUCHED`` read as the given rows. A change without deletes to a model keeping top
    rows takes the form that does not read ``new``."""
    result, window = node.result, node.result.window
    position = [window.child.columns.index(p) for p in window.partition]
    held_position = [result.columns.index(c) for c in result.keys]
    touched = {tuple(r[i] for i in position) for r in change}
    held_touched = {r: w for r, w in held.items() if tuple(r[i] for i in held_position) in touched}
    if result.top is not None and all(w > 0 for w in change.values()):
        top = [result.columns.index(c) for c in result.top]
        rows = dict(change)
        for r, w in held_touched.items():
            row = tuple(r[i] for i in top)
            rows[row] = rows.get(row, 0) + w
    else:
        rows = {r: w for r, w in new.items() if tuple(r[i] for i in position) in touched}
    if any(w < 0 for w in rows.values()):
        raise ValueError("the change deletes rows that are not there")
    out = dict(evaluate(recomputed(result), rows))
    for r, w in held_touched.items():
        out[r] = out.get(r, 0) - w
    return {r: w for r, w in out.items() if w}
