"""Inner join is bilinear. For an N-way join ``R₁ ⋈ … ⋈ Rₙ`` the change telescopes into one
update path per input (Materialize's delta joins)::

    Δ(R₁ ⋈ … ⋈ Rₙ) = Σₖ  R₁ⁿᵉʷ ⋈ … ⋈ Rₖ₋₁ⁿᵉʷ ⋈ ΔRₖ ⋈ Rₖ₊₁ᵒˡᵈ ⋈ … ⋈ Rₙᵒˡᵈ

which is exact when several inputs change in the same run (for two inputs it is DBSP's
``Δ(a⋈b) = Δa ⋈ I(b)₋₁ + I(a) ⋈ Δb``). Path ``k`` starts from ``ΔRₖ`` and joins the other
inputs in an order that follows the join conditions, equi-conditions first, so each step looks
up only the rows that join with the change. Paths whose ``ΔRₖ`` is zero are dropped.

When several inputs change and others do not, the unchanged ones ``U`` are joined once, after
the paths of the rest ``C`` (joined by conditions among themselves) are summed::

    Δ(C ⋈ U) = Δ(C) ⋈ U        (ΔU = 0)

so each path does not read ``U`` again: a TPC-H Q3-shaped join whose orders and lineitem
change reads customer once, not once per path. ``U`` holds the unchanged inputs joined to at
most one changed input: every path but the one that starts at that input's change reaches them
through its whole new or old value, so it reads them unbounded by the change's keys anyway. An
unchanged input joined to two changed ones stays in ``C``: each of their paths may read it
within its own change's key ranges.
"""

from __future__ import annotations

from sqlglot import exp

from ivm_core.plan import (
    Empty,
    Join,
    Node,
    Project,
    UnionAll,
    Version,
    at_version,
    referenced_columns,
)


def delta(node: Join, d, changed: frozenset[str]) -> Node:
    return _delta(node, [d(child) for child in node.inputs], d)


def _delta(node: Join, changes: list[Node], d) -> Node:
    """The join's change, given each input's (``changes``, in the order of ``node.inputs``)."""
    moving = [k for k, change in enumerate(changes) if not isinstance(change, Empty)]
    if 1 < len(moving) < len(node.inputs):
        factored = _unchanged_joined_once(node, changes, moving, d)
        if factored is not None:
            return factored
    paths: list[Node] = []
    for k, change in enumerate(changes):
        if isinstance(change, Empty):
            continue
        versions = [
            change if j == k else at_version(other, Version.NEW if j < k else Version.OLD, d)
            for j, other in enumerate(node.inputs)
        ]
        order = join_order(k, node.inputs, node.conditions)
        paths.append(Join(tuple(versions[i] for i in order), node.conditions, broadcast_first=True))
    if not paths:
        return Empty(node.columns)
    if len(paths) == 1 and paths[0].columns == node.columns:
        return paths[0]
    # Each path lists the inputs in its own order; UnionAll maps columns positionally, so
    # project every path back to the join's column order.
    aligned = tuple(
        path if path.columns == node.columns
        else Project(path, tuple((c, exp.column(c)) for c in node.columns))
        for path in paths
    )
    if len(aligned) == 1:
        return aligned[0]
    return UnionAll(aligned, node.columns)


def _unchanged_joined_once(node: Join, changes: list[Node], moving: list[int], d) -> Node | None:
    """``Δ(C) ⋈ U`` for ``U`` the unchanged inputs joined to at most one of the changed ones
    (``moving``); None when there is no such input, or when the rest (``C``) are not linked
    among themselves by equi-conditions (their join alone would be a cross join)."""
    touches = _touched_inputs(node.inputs, node.conditions)
    shared = {i for i in range(len(node.inputs)) if i not in moving
              and len({m for t in touches if i in t for m in t if m in moving}) <= 1}
    if not shared:
        return None
    rest = [i for i in range(len(node.inputs)) if i not in shared]
    among_rest = [bool(t) and t <= set(rest) for t in touches]
    inner = [cond for cond, within in zip(node.conditions, among_rest) if within]
    outer = [cond for cond, within in zip(node.conditions, among_rest) if not within]
    if not _connected(rest, [t for cond, t, within in zip(node.conditions, touches, among_rest)
                             if within and _is_equi(cond)]):
        return None
    changed_part = Join(tuple(node.inputs[i] for i in rest), tuple(inner))
    sides = (_delta(changed_part, [changes[i] for i in rest], d),) + tuple(
        at_version(node.inputs[i], Version.OLD, d) for i in sorted(shared))
    order = join_order(0, sides, tuple(outer))
    joined = Join(tuple(sides[i] for i in order), tuple(outer), broadcast_first=True)
    return Project(joined, tuple((c, exp.column(c)) for c in node.columns))


def _connected(members: list[int], links: list[set[int]]) -> bool:
    """Whether ``links`` (each a set of members one condition touches) connect all ``members``."""
    reached = {members[0]}
    grew = True
    while grew:
        grew = False
        for touched in links:
            if touched & reached and not touched <= reached:
                reached |= touched
                grew = True
    return reached >= set(members)


def join_order(start: int, inputs: tuple[Node, ...], conditions: tuple[exp.Expression, ...]) -> list[int]:
    """Greedy left-deep order from ``start``: next the input linked by an equi-condition to what
    is already joined, else by any condition, else the first remaining (a cross join)."""
    links = [(_is_equi(cond), touched)  # (is_equi, set of inputs the condition touches)
             for cond, touched in zip(conditions, _touched_inputs(inputs, conditions))]
    order = [start]
    remaining = [i for i in range(len(inputs)) if i != start]
    while remaining:
        joined = set(order)
        nxt = max(remaining, key=lambda i: (_link(i, joined, links), -i))
        order.append(nxt)
        remaining.remove(nxt)
    return order


def _touched_inputs(inputs: tuple[Node, ...], conditions: tuple[exp.Expression, ...]) -> list[set[int]]:
    """Per condition, the positions of the inputs whose columns it reads."""
    owner = {c: i for i, node in enumerate(inputs) for c in node.columns}
    return [{owner[c] for c in referenced_columns(cond) if c in owner} for cond in conditions]


def _link(i: int, joined: set[int], links: list[tuple[bool, set[int]]]) -> int:
    """How input ``i`` is linked to the ``joined`` inputs: 2 by an equi-condition, 1 by another
    condition, 0 not at all (a condition links it when it touches ``i`` and joined inputs only)."""
    best = 0
    for is_equi, touched in links:
        if i in touched and touched - {i} and touched - {i} <= joined:
            best = max(best, 2 if is_equi else 1)
    return best


def _is_equi(cond: exp.Expression) -> bool:
    return isinstance(cond, (exp.EQ, exp.NullSafeEQ))
