"""Scan: ``Δ scan(x) = Δx`` when x changed in this run, else ``0``."""

from __future__ import annotations

import dataclasses

from ivm_core.plan import Empty, Node, Scan, Version


def delta(node: Scan, d, changed: frozenset[str]) -> Node:
    if node.input in changed:
        return dataclasses.replace(node, version=Version.DELTA)
    return Empty(node.out)
