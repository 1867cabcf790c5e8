"""Aggregation (GROUP BY, global aggregates, DISTINCT, set operations).

The output of ``γ(R)`` for a group changes only if the change touches the group::

    Δγ(R) = Σ_{g touched by ΔR}  row(S_g + ΔS_g) − row(S_g)

where ``S_g`` is the group's stored state and ``ΔS_g`` the partial state of the change's rows
in the group (``layout``): its row count and, per call, what its function keeps (``functions``:
one module per aggregate function, with its state, its fold and its read-back). Adding states is
the only fold there is, so ``S + ΔS`` is the new state, and a delete is an addition of negative
weights. Rows are emitted only for groups whose output row really changes (a change that
cancels emits nothing), and no base data is read: only the change and the touched groups' state.

An aggregate that only keeps its child's rows (``Aggregate.keeps_rows``: the rows a window or a
top-k reads back) is the identity on Z-sets: its change is its child's change, renamed (``sql``
and ``memory`` read no state for it), and only its state is updated.

DISTINCT is an aggregate without calls; ``INTERSECT``/``EXCEPT [ALL]`` count each side's copies
per row (two COUNT calls) and the aggregate's ``multiplicity`` says how many copies of the row
the result has. The SQL is in ``sql``; ``memory`` runs the same rule on in-memory Z-sets.
"""

from __future__ import annotations

from ivm_core.plan import Aggregate, AggregateDelta, Empty, Node
from ivm_core.rules.aggregate.functions import AGGREGATORS, Aggregator, CallTypes, State
from ivm_core.rules.aggregate.layout import GROUPS, SET, STATES, Layout, StoredState, value_state
from ivm_core.rules.aggregate.sql import AggregateSql

__all__ = ["AGGREGATORS", "GROUPS", "SET", "STATES", "AggregateSql", "Aggregator", "CallTypes", "Layout", "State",
           "StoredState", "delta", "value_state"]


def delta(node: Aggregate, d, changed: frozenset[str]) -> Node:
    child = d(node.child)
    if isinstance(child, Empty):
        return Empty(node.columns)
    return AggregateDelta(node, child)
