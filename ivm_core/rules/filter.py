"""Filter is linear: ``Δ σ_p(R) = σ_p(ΔR)``."""

from __future__ import annotations

import dataclasses

from ivm_core.plan import Empty, Filter, Node


def delta(node: Filter, d, changed: frozenset[str]) -> Node:
    child = d(node.child)
    if isinstance(child, Empty):
        return Empty(node.columns)
    return dataclasses.replace(node, child=child)
