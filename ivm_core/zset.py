"""A small in-memory Z-set evaluator of plans, what the property tests run the delta rules on.

A Z-set is a ``dict`` from row tuples to non-zero integer weights. ``evaluate`` runs every node
of a plan as its rule says: the linear and join nodes directly, ``AggregateRead`` and
``AggregateDelta`` with the aggregation rule's own state, fold and read-back
(``rules.aggregate.memory``) over the states ``store`` builds, as the refresh stores them.
An ``Aggregate`` node (a plan over CURRENT, OLD or NEW inputs, ``scans_at``) is instead
computed naively from its definition (``aggregate``), independently of the rule: that is the
``Q(old)`` and ``Q(new)`` the rules are checked against.

Expressions are evaluated with SQL's three-valued logic for the subset of Spark SQL the property
tests generate (columns, literals, arithmetic, comparisons, AND/OR/NOT, IS [NOT] NULL, COALESCE,
CASE, string concatenation). The product never evaluates SQL this way: Spark does.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import defaultdict
from fractions import Fraction
from typing import Any, Callable, Mapping

from sqlglot import exp

from ivm_core.plan import (
    AggCall,
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
    Version,
    Window,
    WindowDelta,
    WindowResult,
    WindowResultDelta,
    at_version,
    transform,
)
from ivm_core.rules import window as window_rule
from ivm_core.rules import window_result as window_result_rule
from ivm_core.rules.aggregate import Layout
from ivm_core.rules.aggregate import memory
from ivm_core.sqltext import expression

ZSet = dict[tuple, int]


def zset(rows: Mapping[tuple, int] | list[tuple]) -> ZSet:
    """Consolidate rows (or a row→weight mapping) into a Z-set without zero weights."""
    out: dict[tuple, int] = defaultdict(int)
    items = rows.items() if isinstance(rows, Mapping) else ((r, 1) for r in rows)
    for row, weight in items:
        out[row] += weight
    return {r: w for r, w in out.items() if w != 0}


def add(a: ZSet, b: ZSet, sign: int = 1) -> ZSet:
    out = dict(a)
    for row, weight in b.items():
        out[row] = out.get(row, 0) + sign * weight
    return {r: w for r, w in out.items() if w != 0}


LeafData = Callable[[Scan], ZSet]  # rows over scan.input_columns


Stored = Mapping[str, memory.Stored]  # aggregate id -> its state


def evaluate(node: Node, leaf: LeafData, stored: Stored | None = None) -> ZSet:
    """The Z-set ``node`` denotes; ``stored`` holds the state of every aggregate the plan
    reads or changes (``AggregateRead``, ``AggregateDelta``)."""
    stored = stored or {}
    if isinstance(node, Scan):
        return leaf(node)
    if isinstance(node, Empty):
        return {}
    if isinstance(node, Filter):
        cols = node.child.columns
        return {
            r: w
            for r, w in evaluate(node.child, leaf, stored).items()
            if eval_expr(node.predicate, dict(zip(cols, r))) is True
        }
    if isinstance(node, Project):
        cols = node.child.columns
        out: dict[tuple, int] = defaultdict(int)
        for r, w in evaluate(node.child, leaf, stored).items():
            env = dict(zip(cols, r))
            out[tuple(eval_expr(e, env) for _, e in node.exprs)] += w
        return zset(out)
    if isinstance(node, Join):
        parts = [list(evaluate(i, leaf, stored).items()) for i in node.inputs]
        cols = node.columns
        out = defaultdict(int)
        for combo in itertools.product(*parts):
            row = tuple(itertools.chain.from_iterable(r for r, _ in combo))
            env = dict(zip(cols, row))
            if all(eval_expr(c, env) is True for c in node.conditions):
                weight = 1
                for _, w in combo:
                    weight *= w
                out[row] += weight
        return zset(out)
    if isinstance(node, UnionAll):
        out = defaultdict(int)
        for child in node.inputs:
            for r, w in evaluate(child, leaf, stored).items():
                out[r] += w
        return zset(out)
    if isinstance(node, Aggregate):
        return aggregate(node, evaluate(node.child, leaf, stored))
    if isinstance(node, AggregateRead):
        return memory.rows(stored[node.aggregate.id], eval_expr)
    if isinstance(node, AggregateDelta):
        change = evaluate(node.child_delta, leaf, stored)
        return memory.delta(stored[node.aggregate.id], change, eval_expr)
    if isinstance(node, Window):
        return window(node, evaluate(node.child, leaf, stored))
    if isinstance(node, WindowDelta):
        change = evaluate(node.child_delta, leaf, stored)
        held = memory.rows(stored[node.window.state], eval_expr)
        return window_rule.memory_delta(node.window, held, change, window)
    if isinstance(node, WindowResult):
        return evaluate(node.child, leaf, stored)
    if isinstance(node, WindowResultDelta):
        change = evaluate(node.child_delta, leaf, stored)
        new = evaluate(node.child_new, leaf, stored)
        held = evaluate(scans_at(node.result, Version.OLD), leaf)  # the target holds the model's rows

        def over(plan: Node, rows: ZSet) -> ZSet:
            return evaluate(plan, lambda s: rows if s.input == window_result_rule.TOUCHED else leaf(s), stored)

        return window_result_rule.memory_delta(node, change, new, held, over)
    raise TypeError(f"cannot evaluate {type(node).__name__}")  # pragma: no cover


def store(layouts: Mapping[str, Layout], leaf: LeafData) -> dict[str, memory.Stored]:
    """Every aggregate's state before the change, as ``Program.state_builds`` computes it:
    bottom-up (``layouts`` is in that order), each from its child at ``OLD``, which reads the
    states of the aggregates below it."""
    out: dict[str, memory.Stored] = {}
    for agg_id, layout in layouts.items():
        out[agg_id] = memory.build(layout, evaluate(at_version(layout.agg.child, Version.OLD), leaf, out))
    return out


def scans_at(node: Node, version: Version) -> Node:
    """The definition of ``node`` over inputs at ``version`` (aggregates recomputed)."""
    return transform(node, lambda n: dataclasses.replace(n, version=version) if isinstance(n, Scan) else n)


def aggregate(node: Aggregate, child: ZSet) -> ZSet:
    """GROUP BY over a Z-set whose weights are copies (the integrated value of the child), by
    the definition of each function (``_aggregate_value``), not by the aggregation rule."""
    cols = node.child.columns
    groups: dict[tuple, list[tuple[dict, int]]] = defaultdict(list)
    for row, weight in child.items():
        env = dict(zip(cols, row))
        groups[tuple(env[k] for k in node.keys)].append((env, weight))
    if node.is_global and not groups:
        groups[()] = []
    out: dict[tuple, int] = defaultdict(int)
    for key, members in groups.items():
        count = sum(w for _, w in members)
        if count <= 0 and not node.is_global:
            continue
        values = {a.name: _aggregate_value(a, members) for a in node.aggs}
        if node.multiplicity is None:
            weight = 1
        else:
            weight = eval_expr(node.multiplicity, {**values, "_ivm_count": count})
        if weight and weight > 0:
            out[key + tuple(values[a.name] for a in node.aggs)] += weight
    return zset(out)


def window(node: Window, child: ZSet) -> ZSet:
    """The window over a Z-set whose weights are copies, by the definition of each function
    (written apart from ``rules.window``): every copy is a row; a partition's rows are ordered
    by the ``ORDER BY`` (Spark's NULL placement), rows it ties by their values, so the same
    partition always gets the same numbers."""
    cols = node.child.columns
    position = {c: i for i, c in enumerate(cols)}
    partitions: dict[tuple, list[tuple]] = defaultdict(list)
    for row, weight in child.items():
        if weight < 0:
            raise ValueError("a window over negative copies")
        partitions[tuple(row[position[k]] for k in node.partition)].extend([row] * weight)
    out: dict[tuple, int] = defaultdict(int)
    for rows in partitions.values():
        rows.sort(key=_row_order)
        values = [_window_values(call, rows, cols) for _, call in node.calls]
        for i, row in enumerate(rows):
            out[row + tuple(v[i] for v in values)] += 1
    return zset(out)


def _row_order(row: tuple) -> tuple:
    return tuple((v is not None, v if v is not None else 0) for v in row)


def _window_values(call: exp.Expression, rows: list[tuple], cols: tuple[str, ...]) -> list:
    """``call``'s value for each of ``rows`` (one partition, each copy a row, in a total order
    of their values), in that order."""
    order = call.args.get("order")
    items = list(order.expressions) if order is not None else []

    def env(row: tuple) -> dict:
        return dict(zip(cols, row))

    def sort_key(row: tuple) -> tuple:
        key = []
        for item in items:
            v = eval_expr(item.this, env(row))
            nulls_first = bool(item.args.get("nulls_first"))
            rank = (0 if nulls_first else 2) if v is None else 1
            key.append((rank, _Desc(v) if item.args.get("desc") and v is not None else (v if v is not None else 0)))
        return tuple(key)

    ordered = sorted(range(len(rows)), key=lambda i: sort_key(rows[i]))  # stable: ties keep the row order
    keys = [sort_key(rows[i]) for i in ordered]
    func = call.this
    values: list = [None] * len(rows)
    for place, i in enumerate(ordered):
        peers = [j for j, k in enumerate(keys) if k == keys[place]]
        if isinstance(func, exp.RowNumber):
            values[i] = place + 1
        elif isinstance(func, exp.Rank):
            values[i] = peers[0] + 1
        elif isinstance(func, exp.DenseRank):
            values[i] = 1 + sum(1 for j in range(peers[0]) if keys[j] != keys[j + 1])
        elif isinstance(func, (exp.Lag, exp.Lead)):
            offset = int(func.args["offset"].this) if func.args.get("offset") else 1
            other = place - offset if isinstance(func, exp.Lag) else place + offset
            default = func.args.get("default")
            if 0 <= other < len(ordered):
                values[i] = eval_expr(func.this, env(rows[ordered[other]]))
            else:
                values[i] = None if default is None else eval_expr(default, env(rows[i]))
        else:
            frame = [ordered[j] for j in _frame(call, place, peers, len(ordered), bool(items))]
            star = isinstance(func.this, exp.Star)
            members = [({"_ivm_arg": None if star else eval_expr(func.this, env(rows[j]))}, 1) for j in frame]
            name = {exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg"}.get(type(func))
            if isinstance(func, exp.Count):
                name = "count_star" if isinstance(func.this, exp.Star) else "count"
            if name is None:
                raise NotImplementedError(f"zset cannot evaluate the window function {expression(func)}")
            values[i] = _aggregate_value(AggCall("_ivm_v", name, "_ivm_arg"), members)
    return [values[i] for i in range(len(rows))]


def _frame(call: exp.Expression, place: int, peers: list[int], size: int, ordered: bool) -> range:
    """The places in ``call``'s frame for the row at ``place`` (``peers``: the places it ties
    with): the whole partition without ``ORDER BY``; from the first row through the last peer
    by default with one (``RANGE … CURRENT ROW``); a ``ROWS`` frame by its bounds."""
    spec = call.args.get("spec")
    if spec is None:
        return range(size) if not ordered else range(0, peers[-1] + 1)
    if spec.args.get("kind", "").upper() != "ROWS":
        raise NotImplementedError(f"zset cannot evaluate the frame {expression(spec)}")

    def bound(value, side) -> int:
        if str(value).upper() == "CURRENT ROW":
            return place
        if str(value).upper() == "UNBOUNDED":
            return 0 if str(side).upper() == "PRECEDING" else size - 1
        n = int(value.this)
        return place - n if str(side).upper() == "PRECEDING" else place + n

    start = bound(spec.args.get("start"), spec.args.get("start_side"))
    end = bound(spec.args.get("end"), spec.args.get("end_side"))
    return range(max(start, 0), min(end, size - 1) + 1)


class _Desc:
    """A value ordered backwards (a descending sort key)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: "_Desc") -> bool:
        return bool(other.value < self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value


def _aggregate_value(call, members):
    """What SQL says ``call`` is over a bag (written apart from ``rules/aggregate/functions``)."""
    if call.func == "count_star":
        return sum(w for _, w in members)
    present = [(env[call.arg], w) for env, w in members if env[call.arg] is not None and w > 0]
    if call.func == "count":
        return sum(w for _, w in present)
    if call.func == "count_distinct":
        return len({v for v, _ in present})
    if call.func == "count_if":
        return sum(w for v, w in present if v)
    if not present:
        return None
    if call.func == "sum":
        return sum(v * w for v, w in present)
    if call.func == "sum_distinct":
        return sum({v for v, _ in present})
    if call.func == "avg_distinct":
        distinct = {v for v, _ in present}
        return sum(distinct) / len(distinct)
    if call.func == "avg":
        return sum(v * w for v, w in present) / sum(w for _, w in present)
    if call.func == "min":
        return min(v for v, _ in present)
    if call.func in ("max", "bool_or"):
        return max(v for v, _ in present)
    if call.func in ("min_by", "max_by"):  # pairs (y, x IS NULL, x): the x of the extreme y
        return (min if call.func == "min_by" else max)(v for v, _ in present)[2]
    if call.func == "bool_and":
        return min(v for v, _ in present)
    if call.func in ("var_pop", "var_samp", "stddev_pop", "stddev_samp", "stddev"):
        return _variance(call.func, present)
    raise NotImplementedError(call.func)


def _variance(func: str, present) -> float | None:
    """The exact variance (fractions), rounded once to a float: what the moments approximate."""
    n = sum(w for _, w in present)
    sample = func in ("var_samp", "stddev_samp", "stddev")
    if sample and n < 2:
        return None
    mean = sum(Fraction(v) * w for v, w in present) / n
    m2 = sum((Fraction(v) - mean) ** 2 * w for v, w in present)
    variance = m2 / (n - 1 if sample else n)
    return math.sqrt(variance) if func.startswith("stddev") else float(variance)


def versioned_leaf(
    old: Mapping[str, ZSet], delta: Mapping[str, ZSet], columns: Mapping[str, tuple[str, ...]]
) -> LeafData:
    """Leaf data for a plan over inputs given as Z-sets over their full column lists."""

    def leaf(scan: Scan) -> ZSet:
        base_old = old.get(scan.input, {})
        base_delta = delta.get(scan.input, {})
        if scan.version in (Version.OLD,):
            data = base_old
        elif scan.version is Version.DELTA:
            data = base_delta
        else:  # NEW and CURRENT read the integrated input after the change
            data = add(base_old, base_delta)
        index = [columns[scan.input].index(c) for c in scan.input_columns]
        return zset(_project(data, index))

    return leaf


def _project(data: ZSet, index: list[int]) -> ZSet:
    out: dict[tuple, int] = defaultdict(int)
    for r, w in data.items():
        out[tuple(r[i] for i in index)] += w
    return dict(out)


# -- expressions ----------------------------------------------------------------------------

class RaisedError(Exception):
    """An expression evaluated ``raise_error(message)``: Spark fails the query with the message."""


def eval_expr(e: exp.Expr, env: Mapping[str, Any]) -> Any:
    if isinstance(e, exp.Paren):
        return eval_expr(e.this, env)
    if isinstance(e, exp.Column):
        return env[e.name]
    if isinstance(e, exp.Null):
        return None
    if isinstance(e, exp.Boolean):
        return e.this
    if isinstance(e, exp.Literal):
        if e.is_string:
            return e.this
        text = e.this
        return float(text) if any(ch in text for ch in ".eE") else int(text)
    if isinstance(e, exp.Neg):
        v = eval_expr(e.this, env)
        return None if v is None else -v
    if isinstance(e, exp.Not):
        v = eval_expr(e.this, env)
        return None if v is None else not v
    if isinstance(e, exp.And):
        a, b = eval_expr(e.left, env), eval_expr(e.right, env)
        if a is False or b is False:
            return False
        return None if a is None or b is None else True
    if isinstance(e, exp.Or):
        a, b = eval_expr(e.left, env), eval_expr(e.right, env)
        if a is True or b is True:
            return True
        return None if a is None or b is None else False
    if isinstance(e, exp.Is):
        v = eval_expr(e.this, env)
        return v is None
    if isinstance(e, exp.Coalesce):
        for arg in [e.this, *e.expressions]:
            v = eval_expr(arg, env)
            if v is not None:
                return v
        return None
    if isinstance(e, exp.Case):
        for branch in e.args.get("ifs") or []:
            if eval_expr(branch.this, env) is True:
                return eval_expr(branch.args["true"], env)
        default = e.args.get("default")
        return None if default is None else eval_expr(default, env)
    if isinstance(e, exp.If):
        if eval_expr(e.this, env) is True:
            return eval_expr(e.args["true"], env)
        false = e.args.get("false")
        return None if false is None else eval_expr(false, env)
    if isinstance(e, exp.Anonymous) and e.name.lower() == "raise_error":  # Spark fails the query
        raise RaisedError(eval_expr(e.expressions[0], env))
    named = isinstance(e, exp.Anonymous) and e.name.lower() in ("greatest", "least")
    if isinstance(e, (exp.Greatest, exp.Least)) or named:
        operands = e.expressions if isinstance(e, exp.Anonymous) else [e.this, *e.expressions]
        args = [eval_expr(a, env) for a in operands]
        args = [a for a in args if a is not None]
        if not args:
            return None
        return max(args) if (isinstance(e, exp.Greatest) or e.name.lower() == "greatest") else min(args)
    if isinstance(e, exp.Cast):
        return eval_expr(e.this, env)
    if isinstance(e, exp.Struct):  # a tuple of its fields: compared field by field, as Spark does
        return tuple(eval_expr(f.expression if isinstance(f, exp.PropertyEQ) else f, env) for f in e.expressions)
    if isinstance(e, exp.NullSafeEQ):
        return eval_expr(e.left, env) == eval_expr(e.right, env)
    if isinstance(e, exp.Binary):
        a, b = eval_expr(e.left, env), eval_expr(e.right, env)
        if a is None or b is None:
            return None
        op = _BINARY.get(type(e))
        if op is None:
            raise NotImplementedError(f"zset cannot evaluate {expression(e)}")
        return op(a, b)
    raise NotImplementedError(f"zset cannot evaluate {expression(e)}")


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    exp.EQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
    exp.Add: lambda a, b: a + b,
    exp.Sub: lambda a, b: a - b,
    exp.Mul: lambda a, b: a * b,
    exp.DPipe: lambda a, b: f"{a}{b}",
    exp.BitwiseAnd: lambda a, b: a & b,
    exp.BitwiseRightShift: lambda a, b: a >> b,
}
