"""The DBSP delta rules, one module per operator.

``differentiate(plan, changed)`` rewrites a plan into the plan of its change: for inputs whose
keys are in ``changed`` the result reads their ``DELTA`` and, where a rule needs integrated
inputs, their ``OLD``/``NEW`` versions. A node whose change is known to be zero becomes
``Empty``, so update paths that no change reaches are dropped before any SQL is generated.
"""

from __future__ import annotations

from typing import Callable

from ivm_core.plan import Aggregate, Empty, Filter, Join, Node, Project, Scan, UnionAll, Window, WindowResult
from ivm_core.rules import aggregate as aggregate_rule
from ivm_core.rules import filter as filter_rule
from ivm_core.rules import join as join_rule
from ivm_core.rules import project as project_rule
from ivm_core.rules import scan as scan_rule
from ivm_core.rules import union_all as union_all_rule
from ivm_core.rules import window as window_rule
from ivm_core.rules import window_result as window_result_rule

Differentiator = Callable[[Node], Node]

# Each rule is called as ``rule(node, d: Differentiator, changed)`` with a node of the type it is listed under,
# so it takes that type (``join_rule.delta(node: Join, ...)``): a mapping from a type to a
# function of that type has no precise annotation, hence ``Callable[..., Node]``.
RULES: dict[type[Node], Callable[..., Node]] = {
    Scan: scan_rule.delta,
    Filter: filter_rule.delta,
    Project: project_rule.delta,
    UnionAll: union_all_rule.delta,
    Join: join_rule.delta,
    Aggregate: aggregate_rule.delta,
    Window: window_rule.delta,
    WindowResult: window_result_rule.delta,
    Empty: lambda node, d, changed: node,
}


def differentiate(plan: Node, changed: frozenset[str] | set[str]) -> Node:
    changed = frozenset(changed)

    def d(node: Node) -> Node:
        rule = RULES.get(type(node))
        if rule is None:  # pragma: no cover - the analyzer only builds nodes listed above
            raise TypeError(f"no delta rule for {type(node).__name__}")
        return rule(node, d, changed)

    return d(plan)
