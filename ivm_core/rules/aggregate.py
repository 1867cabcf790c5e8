"""Aggregation (GROUP BY, global aggregates, DISTINCT, set operations).

The output of ``γ(R)`` for a group changes only if the change touches the group::

    Δγ(R) = Σ_{g touched by ΔR}  row(S_g + partial(ΔR_g)) − row(S_g)

where ``S_g`` is the group's stored state: its row count and, per linear aggregate (COUNT, and
SUM/AVG over non-float values), the weighted sum and non-NULL count; per value aggregate (MIN,
MAX, COUNT/SUM DISTINCT, SUM/AVG over floats) the group's values with their net weights. Rows
are emitted only for groups whose output row really changes (a change that cancels emits
nothing), and no base data is read: only the change and the touched groups' state.
"""

from __future__ import annotations

from ivm_core.plan import Aggregate, AggregateDelta, Empty, Node


def delta(node: Aggregate, d, changed: frozenset[str]) -> Node:
    child = d(node.child)
    if isinstance(child, Empty):
        return Empty(node.columns)
    return AggregateDelta(node, child)
