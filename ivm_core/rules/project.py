"""Projection (any deterministic row-wise expression) is linear: ``Δ π_f(R) = π_f(ΔR)``."""

from __future__ import annotations

import dataclasses

from ivm_core.plan import Empty, Node, Project


def delta(node: Project, d, changed: frozenset[str]) -> Node:
    child = d(node.child)
    if isinstance(child, Empty):
        return Empty(node.columns)
    return dataclasses.replace(node, child=child)
