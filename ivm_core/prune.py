"""Column pruning: every node keeps only the columns something above it reads.

This narrows each ``Scan`` to the input columns the model uses, which is also what the state
store keeps for that input: an update that touches only unused columns consolidates away.
"""

from __future__ import annotations

import dataclasses

from sqlglot import exp

from ivm_core.plan import (
    Aggregate,
    Empty,
    Filter,
    Join,
    Node,
    Project,
    Scan,
    UnionAll,
    Window,
    referenced_columns,
)


def prune(node: Node, required: set[str] | None = None) -> Node:
    if required is None:
        required = set(node.columns)
    if isinstance(node, Scan):
        keep = [i for i, c in enumerate(node.out) if c in required]
        return dataclasses.replace(
            node,
            input_columns=tuple(node.input_columns[i] for i in keep),
            out=tuple(node.out[i] for i in keep),
        )
    if isinstance(node, Empty):
        return Empty(tuple(c for c in node.out if c in required))
    if isinstance(node, Filter):
        child = prune(node.child, required | referenced_columns(node.predicate))
        return dataclasses.replace(node, child=child)
    if isinstance(node, Project):
        exprs = tuple((n, e) for n, e in node.exprs if n in required)
        needed: set[str] = set()
        for _, e in exprs:
            needed |= referenced_columns(e)
        return dataclasses.replace(node, child=prune(node.child, needed), exprs=exprs)
    if isinstance(node, Join):
        needed = set(required)
        for cond in node.conditions:
            needed |= referenced_columns(cond)
        return dataclasses.replace(
            node, inputs=tuple(prune(i, needed & set(i.columns)) for i in node.inputs)
        )
    if isinstance(node, UnionAll):
        keep = [i for i, c in enumerate(node.out) if c in required]
        children = []
        for child in node.inputs:
            wanted = [child.columns[i] for i in keep]
            pruned = prune(child, set(wanted))
            if list(pruned.columns) != wanted:
                pruned = Project(pruned, tuple((c, exp.column(c)) for c in wanted))
            children.append(pruned)
        return UnionAll(tuple(children), tuple(node.out[i] for i in keep))
    if isinstance(node, Aggregate):
        # every aggregate stays: the multiplicity and the state layout refer to them
        needed = set(node.keys) | {a.arg for a in node.aggs if a.arg is not None}
        return dataclasses.replace(node, child=prune(node.child, needed))
    if isinstance(node, Window):
        # every call stays: the bag state above the window keeps all of its columns
        needed = (required & set(node.child.columns)) | set(node.partition)
        for _, call in node.calls:
            needed |= referenced_columns(call)
        return dataclasses.replace(node, child=prune(node.child, needed))
    raise TypeError(f"cannot prune {type(node).__name__}")  # pragma: no cover
