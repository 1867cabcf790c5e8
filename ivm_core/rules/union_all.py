"""UNION ALL is linear: ``Δ(R₁ ⊎ … ⊎ Rₙ) = ΔR₁ ⊎ … ⊎ ΔRₙ`` (branches with no change dropped)."""

from __future__ import annotations

import dataclasses

from ivm_core.plan import Empty, Node, UnionAll


def delta(node: UnionAll, d, changed: frozenset[str]) -> Node:
    parts = tuple(p for p in (d(c) for c in node.inputs) if not isinstance(p, Empty))
    if not parts:
        return Empty(node.out)
    return dataclasses.replace(node, inputs=parts)
